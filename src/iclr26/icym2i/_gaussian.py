"""Partial information decomposition of continuous data under a Gaussian model.

For a jointly Gaussian ``(X1, X2, Y)`` with a scalar target, the BROJA decomposition equals the
*minimum mutual information* (MMI) decomposition (Barrett, 2015, Phys. Rev. E 91, 052802):

    R = min(I(Y; X1), I(Y; X2)),  U1 = I(Y; X1) - R,  U2 = I(Y; X2) - R,
    S = I(Y; X1, X2) - I(Y; X1) - I(Y; X2) + R,

with every mutual information in closed form from the covariance,
``I(Y; X) = 1/2 log2( var(Y) / var(Y | X) )``, ``var(Y | X) = S_yy - S_yx S_xx^-1 S_xy``.

:func:`gaussian_pid` estimates the (optionally IPW-weighted) covariance of the samples and returns that
decomposition. It is exact for Gaussian data and needs no binning; for non-Gaussian data it is the PID
of the Gaussian with the same covariance (it sees only linear dependence). It is our documented
alternative to the authors' neural estimator of the BROJA optimum for continuous modalities.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from iclr26.validation import check_array, check_int

from ._pid import PID
from ._weights import check_weights


def _block(x: Any, name: str, n: int | None) -> np.ndarray:
    arr = check_array(x, name, ndim=None)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D, got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} must have {n} rows (one per sample), got {arr.shape[0]}")
    return arr


def _mi_bits(cov: np.ndarray, xs: list[int], y: int) -> float:
    """I(Y; X_xs) in bits of a Gaussian with covariance ``cov``."""
    sxx = cov[np.ix_(xs, xs)]
    sxy = cov[xs, y]
    cond = cov[y, y] - sxy @ np.linalg.solve(sxx, sxy)
    if cond <= 0:
        raise ValueError("Y is a deterministic linear function of the sources: the information is infinite")
    return float(0.5 * np.log2(cov[y, y] / cond))


def gaussian_pid_from_covariance(cov: Any, d1: int, d2: int) -> PID:
    """MMI (= BROJA for Gaussians) decomposition from a covariance over ``[X1 (d1), X2 (d2), Y (1)]``."""
    cov = check_array(cov, "cov")
    d1, d2 = check_int(d1, "d1", minimum=1), check_int(d2, "d2", minimum=1)
    k = d1 + d2 + 1
    if d1 < 1 or d2 < 1 or cov.shape != (k, k):
        raise ValueError(f"cov must be ({k}, {k}) for d1={d1}, d2={d2} and a scalar Y, got {cov.shape}")
    ev = np.linalg.eigvalsh((cov + cov.T) / 2)
    if not np.allclose(cov, cov.T) or ev.min() <= 1e-10 * max(ev.max(), 1e-300):
        raise ValueError("cov must be symmetric positive definite (constant or collinear variables?)")
    i1 = list(range(d1))
    i2 = list(range(d1, d1 + d2))
    y = k - 1
    mi1, mi2, mi = _mi_bits(cov, i1, y), _mi_bits(cov, i2, y), _mi_bits(cov, i1 + i2, y)
    red = min(mi1, mi2)
    return PID(
        redundancy=red,
        unique1=mi1 - red,
        unique2=mi2 - red,
        synergy=max(mi - mi1 - mi2 + red, 0.0),
        mi=mi,
        mi1=mi1,
        mi2=mi2,
        solver="gaussian",
    )


def gaussian_pid(x1: Any, x2: Any, y: Any, sample_weight: Any = None) -> PID:
    """PID of continuous modalities ``x1``, ``x2`` about a scalar ``y`` under a Gaussian model.

    Parameters
    ----------
    x1, x2 : array-like of shape (n_samples,) or (n_samples, n_features)
    y : array-like of shape (n_samples,), continuous target (a 0/1 label works too: the Gaussian
        model then sees its linear dependence on the modalities only)
    sample_weight : array-like of shape (n_samples,), optional
        Inverse probability weights of the complete cases (IPW-corrected covariance).

    Returns
    -------
    PID
        In bits; ``solver="gaussian"``.
    """
    a = _block(x1, "x1", None)
    n = a.shape[0]
    b = _block(x2, "x2", n)
    c = _block(y, "y", n)
    if c.shape[1] != 1:
        raise ValueError("y must be a scalar target (1-D)")
    if n < a.shape[1] + b.shape[1] + 3:
        raise ValueError(f"need more samples than variables to estimate a covariance, got {n}")
    w = np.ones(n) if sample_weight is None else check_weights(sample_weight, n)
    Z = np.concatenate([a, b, c], axis=1)
    cov = np.cov(Z, rowvar=False, aweights=w)
    return gaussian_pid_from_covariance(np.atleast_2d(cov), a.shape[1], b.shape[1])
