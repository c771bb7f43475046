"""Missingness models and inverse probability weights (ICYM2I, Sec. 4).

The source environment observes the second modality only for some samples (``observed == 1``); the
target environment observes it for all. Under MAR, ``P(observed | covariates)`` depends only on what is
always observed, and weighting each complete case by ``1 / P(observed | covariates)`` makes averages over
complete cases unbiased for averages over the target environment (Horvitz & Thompson, 1952).

The authors use stabilised weights ``mean(observed) / P(observed | x1)`` (``run_logic.ipynb``) or
``0.5 / (1 - p_missing)`` (``run_simulation.ipynb``), with a logistic regression for the missingness model.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from iclr26.validation import check_array, check_bool


class ExtremeWeightsWarning(UserWarning):
    """Inverse probability weights are extreme: the effective sample size is small."""


class PositivityWarning(UserWarning):
    """Part of the full sample has (almost) no chance of being observed: IPW cannot represent it."""


@dataclass(frozen=True)
class IPWeights:
    """Inverse probability weights for the complete cases.

    Attributes
    ----------
    weights : ndarray of shape (n_samples,)
        The weight of every sample; 0 for samples whose modality is missing.
    propensity : ndarray of shape (n_samples,)
        Estimated (and clipped) P(observed | covariates) for every sample.
    observed : ndarray of bool, shape (n_samples,)
    effective_sample_size : float
        Kish's ``(sum w)^2 / sum w^2`` over the complete cases.
    min_propensity : float
        The smallest estimated propensity over the *full* sample (before clipping); NaN when unknown.
    low_propensity_share : float
        Share of the full sample whose estimated propensity (before clipping) is below the positivity
        threshold; NaN when unknown.
    max_abs_smd : float
        Covariate balance: the largest absolute standardised mean difference between the weighted
        complete cases and the full sample (0 when the weights reproduce the full sample's means);
        NaN when no covariates were given.
    model : fitted classifier or None
        The missingness model (:func:`fit_missingness_model`), used by :meth:`predict_weights`.
    """

    weights: np.ndarray
    propensity: np.ndarray
    observed: np.ndarray
    effective_sample_size: float
    min_propensity: float = float("nan")
    low_propensity_share: float = float("nan")
    max_abs_smd: float = float("nan")
    model: Any = None
    stabilizer: float = 1.0
    clip: float | None = None

    def predict_propensity(self, covariates: Any) -> np.ndarray:
        """P(observed | covariates) of new rows from the fitted missingness model (unclipped)."""
        if self.model is None:
            raise ValueError("these weights come from given propensities, not a fitted missingness model")
        X = _covariates(covariates)
        classes = list(self.model.classes_)
        return self.model.predict_proba(X)[:, classes.index(1)]

    def predict_weights(self, covariates: Any, observed: Any = None) -> np.ndarray:
        """Inverse probability weights of new rows, on the scale of the fitted ones.

        ``observed`` (default: every row observed) marks the rows whose modality is present; the others
        get weight 0. The propensities are clipped as in the fit and the weights stabilised by the
        fitted sample's observation rate.
        """
        prop = self.predict_propensity(covariates)
        obs = np.ones(prop.shape[0], bool) if observed is None else _as_bool(observed, prop.shape[0])
        if self.clip is not None:
            prop = np.clip(prop, self.clip, 1 - self.clip)
        if (prop[obs] <= 0).any():
            raise ValueError("a new observed row has propensity 0 (infinite weight); fit with clip=...")
        return np.where(obs, self.stabilizer / np.where(obs, prop, 1.0), 0.0)

    @property
    def observed_weights(self) -> np.ndarray:
        """The weights of the complete cases only (in their original order)."""
        return self.weights[self.observed]


def _covariates(covariates: Any) -> np.ndarray:
    X = check_array(covariates, "covariates", ndim=None)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"covariates must be 1-D or 2-D, got shape {X.shape}")
    return X


def _as_bool(observed: Any, n: int | None, name: str = "observed") -> np.ndarray:
    arr = np.asarray(observed)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} must have length {n} (one per sample), got {arr.shape[0]}")
    if arr.dtype != bool:
        if not np.issubdtype(arr.dtype, np.number) or not np.isin(arr, (0, 1)).all():
            raise ValueError(f"{name} must be boolean or 0/1")
        arr = arr.astype(bool)
    return arr


def check_observed(observed: Any, n: int | None = None, name: str = "observed") -> np.ndarray:
    """A 1-D boolean mask (bool or 0/1 numbers) of length ``n``, with both values present."""
    arr = _as_bool(observed, n, name)
    if arr.all() or not arr.any():
        raise ValueError(f"{name} must contain both observed and missing samples")
    return arr


def check_weights(w: Any, n: int | None = None, name: str = "sample_weight") -> np.ndarray:
    """Strictly positive finite 1-D weights of length ``n``."""
    arr = check_array(w, name, ndim=1)
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} must have length {n} (one per sample), got {arr.shape[0]}")
    if (arr <= 0).any():
        raise ValueError(f"{name} must be strictly positive (drop samples instead of giving them weight 0)")
    return arr


def _kish(w: np.ndarray) -> float:
    """``(sum w)^2 / sum w^2``; weights so large (or small) that the squares overflow (or underflow) are
    first divided by their maximum, which leaves the ratio unchanged."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        ess = w.sum() ** 2 / np.square(w).sum()
        if not np.isfinite(ess):
            v = w / w.max()
            ess = v.sum() ** 2 / np.square(v).sum()
    return float(ess)


def _check_threshold(value: Any, name: str, high: float) -> float:
    """A real number in [0, high] (``high`` may be inf); NaN would silently disable a warning."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not 0 <= value <= high:
        raise ValueError(f"{name} must lie in [0, {high:g}], got {value!r}")
    return float(value)


def effective_sample_size(w: Any) -> float:
    """Kish's effective sample size ``(sum w)^2 / sum w^2`` of positive weights."""
    w = check_weights(w, name="w")
    return _kish(w)


def ipw_from_propensity(
    propensity: Any,
    observed: Any,
    *,
    stabilized: bool = True,
    clip: float | None = None,
    ess_warning: float = 0.1,
) -> IPWeights:
    """Inverse probability weights from known or estimated observation probabilities.

    Parameters
    ----------
    propensity : array-like of shape (n_samples,)
        P(observed | covariates), in [0, 1]. After clipping, the complete cases need a propensity
        above 0 (a 0 would give an infinite weight); the propensity of a missing sample is irrelevant
        to the weights (it gets weight 0).
    observed : array-like of bool, shape (n_samples,)
        Whether the modality is observed (the complete cases).
    stabilized : bool, default=True
        Multiply by the marginal observation rate (``mean(observed) / propensity``), so that the
        weights of the complete cases average about 1 (the authors' choice).
    clip : float or None
        Clip propensities to ``[clip, 1 - clip]`` before inverting (bounds the weights by ``1 / clip``).
    ess_warning : float, default=0.1
        Warn (:class:`ExtremeWeightsWarning`) when the effective sample size falls below this fraction
        of the number of complete cases.
    """
    prop = check_array(propensity, "propensity", ndim=1)
    obs = check_observed(observed, prop.shape[0])
    stabilized = check_bool(stabilized, "stabilized")
    ess_warning = _check_threshold(ess_warning, "ess_warning", 1.0)
    if ((prop < 0) | (prop > 1)).any():
        raise ValueError("propensity must hold probabilities in [0, 1]")
    if clip is not None:
        if not 0 < clip < 0.5:
            raise ValueError(f"clip must lie in (0, 0.5), got {clip!r}")
        prop = np.clip(prop, clip, 1 - clip)
    if (prop[obs] <= 0).any():
        raise ValueError(
            "propensity is 0 for an observed sample: its weight would be infinite (use clip=...)"
        )
    rate = float(obs.mean()) if stabilized else 1.0
    w = np.zeros(prop.shape[0])
    with np.errstate(over="ignore"):
        w[obs] = rate / prop[obs]
    if not np.isfinite(w).all():
        raise ValueError(
            "propensity is so small for an observed sample that its weight overflows to infinity "
            "(use clip=...)"
        )
    ess = _kish(w[obs])
    if ess < ess_warning * obs.sum():
        warnings.warn(
            f"extreme inverse probability weights: effective sample size {ess:.1f} of {int(obs.sum())} "
            f"complete cases (max weight {w.max():.3g}); consider clip=... or a better missingness model",
            ExtremeWeightsWarning,
            stacklevel=2,
        )
    return IPWeights(
        weights=w, propensity=prop, observed=obs, effective_sample_size=ess, stabilizer=rate, clip=clip
    )


def fit_missingness_model(
    covariates: Any,
    observed: Any,
    estimator: Any = None,
    *,
    stabilized: bool = True,
    clip: float | None = 0.01,
    ess_warning: float = 0.1,
    positivity_threshold: float = 0.02,
    smd_warning: float = 0.1,
) -> IPWeights:
    """Fit P(observed | covariates) and return inverse probability weights (ICYM2I's IPW).

    Parameters
    ----------
    covariates : array-like of shape (n_samples, n_features)
        What is always observed (e.g. the first modality), for every sample.
    observed : array-like of bool, shape (n_samples,)
        Whether the other modality is observed.
    estimator : scikit-learn classifier with ``predict_proba``, default ``LogisticRegression(max_iter=10000)``
        The missingness model (cloned before fitting; the fitted clone is kept in ``IPWeights.model``).
    stabilized, clip, ess_warning
        As in :func:`ipw_from_propensity`; ``clip`` defaults to 0.01 (weights at most 100).
    positivity_threshold : float, default=0.02
        Positivity diagnostic over the *full* sample: samples whose estimated propensity lies below this
        have almost no chance of being observed, so no complete case represents them.
    smd_warning : float, default=0.1
        Warn when, after weighting, a covariate's mean over the complete cases still differs from its
        full-sample mean by more than this many standard deviations.

    Returns
    -------
    IPWeights

    Warns
    -----
    PositivityWarning
        Some of the full sample has propensity below ``positivity_threshold``, or the weighted complete
        cases do not reproduce the full sample's covariate means (``max_abs_smd > smd_warning``). The
        effective sample size cannot show this: it only looks at the complete cases.
    """
    X = _covariates(covariates)
    obs = check_observed(observed, X.shape[0])
    if not 0 <= positivity_threshold < 1:
        raise ValueError(f"positivity_threshold must lie in [0, 1), got {positivity_threshold!r}")
    smd_warning = _check_threshold(smd_warning, "smd_warning", np.inf)
    check_bool(stabilized, "stabilized")
    model = clone(estimator) if estimator is not None else LogisticRegression(max_iter=10000)
    if not hasattr(model, "predict_proba"):
        raise ValueError("estimator must be a classifier with predict_proba")
    model.fit(X, obs.astype(int))
    classes = list(model.classes_)
    raw = model.predict_proba(X)[:, classes.index(1)]
    ipw = ipw_from_propensity(raw, obs, stabilized=stabilized, clip=clip, ess_warning=ess_warning)
    w = ipw.weights[obs]
    sd = X.std(axis=0)
    sd[sd == 0] = 1.0
    smd = np.abs((w @ X[obs]) / w.sum() - X.mean(axis=0)) / sd
    low = float((raw < positivity_threshold).mean())
    max_smd = float(smd.max())
    if low > 0 or max_smd > smd_warning:
        warnings.warn(
            f"positivity: {100 * low:.1f}% of the full sample has estimated propensity below "
            f"{positivity_threshold:g} (min {raw.min():.3g}) and the weighted complete cases miss the full "
            f"sample's covariate means by up to {max_smd:.2f} standard deviations; IPW cannot represent "
            "samples that are (almost) never observed",
            PositivityWarning,
            stacklevel=2,
        )
    return replace(
        ipw, min_propensity=float(raw.min()), low_propensity_share=low, max_abs_smd=max_smd, model=model
    )
