"""MCAR, MAR and MNAR missingness simulators for the second modality.

Missingness is *MCAR* when P(observed) is a constant, *MAR* when it depends only on what is always
observed (the first modality), and *MNAR* when it depends on the missing modality itself (or the label).
The authors' logic-gate notebook uses ``P(observed) = 0.5`` (MCAR), ``0.2 + 0.6 * x1`` (MAR) and
``0.2 + 0.6 * x2`` (MNAR); the same probabilities come out of :func:`simulate_missingness` with a
balanced binary driver and ``strength = log(4)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit

from iclr26.validation import check_array, check_in, check_int

MECHANISMS = ("MCAR", "MAR", "MNAR")


@dataclass(frozen=True)
class Missingness:
    """A simulated missingness pattern.

    Attributes
    ----------
    observed : ndarray of bool, shape (n_samples,)
        Whether the second modality is observed.
    p_observed : ndarray of shape (n_samples,)
        The true observation probabilities it was drawn from.
    mechanism : str
    """

    observed: np.ndarray
    p_observed: np.ndarray
    mechanism: str


def _standardised_driver(driver: Any) -> np.ndarray:
    d = check_array(driver, "driver", ndim=None)
    if d.ndim == 1:
        d = d[:, None]
    if d.ndim != 2:
        raise ValueError(f"driver must be 1-D or 2-D, got shape {d.shape}")
    sd = d.std(axis=0)
    sd[sd == 0] = 1.0
    z = ((d - d.mean(axis=0)) / sd).mean(axis=1)
    s = z.std()
    if not s > 0:
        raise ValueError(
            "driver is constant: MAR/MNAR missingness needs a driver that varies "
            "(use 'MCAR' for a constant rate)"
        )
    return z / s


def _sample_count(n_samples: Any, driver: Any) -> int | None:
    """The number of samples from ``n_samples`` and/or ``driver``, which must agree when both are given."""
    n = None if n_samples is None else check_int(n_samples, "n_samples", minimum=1)
    if driver is None:
        return n
    m = check_array(driver, "driver", ndim=None).shape[0]
    if n is not None and n != m:
        raise ValueError(f"n_samples ({n}) must equal the number of rows of driver ({m}), or be left out")
    return m


def simulate_missingness(
    mechanism: str,
    *,
    n_samples: int | None = None,
    driver: Any = None,
    rate: float = 0.5,
    strength: float = float(np.log(4.0)),
    clip: tuple[float, float] = (0.05, 0.95),
    random_state: int | np.random.Generator | None = None,
) -> Missingness:
    """Draw which samples observe the second modality.

    Parameters
    ----------
    mechanism : {"MCAR", "MAR", "MNAR"}
        ``"MCAR"`` ignores ``driver``. For ``"MAR"`` pass as ``driver`` the always-observed covariates
        (e.g. the first modality or a score of it); for ``"MNAR"`` the missing modality (or the label).
    n_samples : int, optional
        Needed for MCAR when no driver is given; when both are given it must equal the driver's length.
    driver : array-like of shape (n_samples,) or (n_samples, n_features)
        Columns are standardised and averaged into a score z (standardised again); a constant driver is
        refused for MAR / MNAR (it would give MCAR under another name).
    rate : float in (0, 1)
        The marginal missingness rate, matched exactly (in expectation) by an intercept.
    strength : float
        ``P(observed) = clip(expit(b0 + strength * z))``; larger means stronger shift.
    clip : (low, high)
        Bounds on P(observed) (positivity: every sample keeps a chance to be observed).
    random_state : int or Generator

    Returns
    -------
    Missingness
    """
    check_in(mechanism, MECHANISMS, "mechanism")
    if not 0 < rate < 1:
        raise ValueError(f"rate must lie in (0, 1), got {rate!r}")
    if isinstance(strength, bool) or not (isinstance(strength, int | float) and np.isfinite(strength)):
        raise ValueError(f"strength must be a finite number, got {strength!r}")
    lo, hi = clip
    if not 0 < lo < hi < 1:
        raise ValueError(f"clip must be (low, high) with 0 < low < high < 1, got {clip!r}")
    if not lo <= 1 - rate <= hi:
        raise ValueError(f"the observation rate 1 - rate = {1 - rate:g} must lie inside clip {clip!r}")
    rng = (
        random_state if isinstance(random_state, np.random.Generator) else np.random.default_rng(random_state)
    )
    n = _sample_count(n_samples, driver)
    if mechanism == "MCAR":
        if n is None:
            raise ValueError("MCAR needs n_samples or a driver (for its length)")
        p = np.full(n, 1.0 - rate)
    else:
        if driver is None:
            raise ValueError(f"{mechanism} needs a driver: what the missingness depends on")
        z = _standardised_driver(driver)

        def prob(b0: float) -> np.ndarray:
            return np.clip(expit(b0 + strength * z), lo, hi)

        b0 = brentq(lambda b: prob(b).mean() - (1.0 - rate), -60.0, 60.0)
        p = prob(b0)
    observed = rng.random(p.shape[0]) < p
    return Missingness(observed=observed, p_observed=p, mechanism=mechanism)
