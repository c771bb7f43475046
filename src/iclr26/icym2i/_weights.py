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
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from iclr26.validation import check_array


class ExtremeWeightsWarning(UserWarning):
    """Inverse probability weights are extreme: the effective sample size is small."""


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
    """

    weights: np.ndarray
    propensity: np.ndarray
    observed: np.ndarray
    effective_sample_size: float

    @property
    def observed_weights(self) -> np.ndarray:
        """The weights of the complete cases only (in their original order)."""
        return self.weights[self.observed]


def check_observed(observed: Any, n: int | None = None, name: str = "observed") -> np.ndarray:
    """A 1-D boolean mask (bool or 0/1 numbers) of length ``n``, with both values present."""
    arr = np.asarray(observed)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} must have length {n} (one per sample), got {arr.shape[0]}")
    if arr.dtype != bool:
        if not np.issubdtype(arr.dtype, np.number) or not np.isin(arr, (0, 1)).all():
            raise ValueError(f"{name} must be boolean or 0/1")
        arr = arr.astype(bool)
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


def effective_sample_size(w: Any) -> float:
    """Kish's effective sample size ``(sum w)^2 / sum w^2`` of positive weights."""
    w = check_weights(w, name="w")
    return float(w.sum() ** 2 / np.square(w).sum())


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
        P(observed | covariates), strictly inside (0, 1).
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
    if ((prop <= 0) | (prop >= 1)).any():
        raise ValueError(
            "propensity must lie strictly inside (0, 1): a probability of 0 gives an infinite weight and "
            "1 means the missingness model is degenerate (use clip=...)"
        )
    if clip is not None:
        if not 0 < clip < 0.5:
            raise ValueError(f"clip must lie in (0, 0.5), got {clip!r}")
        prop = np.clip(prop, clip, 1 - clip)
    w = np.where(obs, 1.0 / prop, 0.0)
    if stabilized:
        w = w * obs.mean()
    ess = float(w[obs].sum() ** 2 / np.square(w[obs]).sum())
    if ess < ess_warning * obs.sum():
        warnings.warn(
            f"extreme inverse probability weights: effective sample size {ess:.1f} of {int(obs.sum())} "
            f"complete cases (max weight {w.max():.3g}); consider clip=... or a better missingness model",
            ExtremeWeightsWarning,
            stacklevel=2,
        )
    return IPWeights(weights=w, propensity=prop, observed=obs, effective_sample_size=ess)


def fit_missingness_model(
    covariates: Any,
    observed: Any,
    estimator: Any = None,
    *,
    stabilized: bool = True,
    clip: float | None = 0.01,
    ess_warning: float = 0.1,
) -> IPWeights:
    """Fit P(observed | covariates) and return inverse probability weights (ICYM2I's IPW).

    Parameters
    ----------
    covariates : array-like of shape (n_samples, n_features)
        What is always observed (e.g. the first modality), for every sample.
    observed : array-like of bool, shape (n_samples,)
        Whether the other modality is observed.
    estimator : scikit-learn classifier with ``predict_proba``, default ``LogisticRegression(max_iter=10000)``
        The missingness model (cloned before fitting).
    stabilized, clip, ess_warning
        As in :func:`ipw_from_propensity`; ``clip`` defaults to 0.01 (weights at most 100).

    Returns
    -------
    IPWeights
    """
    X = check_array(covariates, "covariates", ndim=None)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"covariates must be 1-D or 2-D, got shape {X.shape}")
    obs = check_observed(observed, X.shape[0])
    model = clone(estimator) if estimator is not None else LogisticRegression(max_iter=10000)
    if not hasattr(model, "predict_proba"):
        raise ValueError("estimator must be a classifier with predict_proba")
    model.fit(X, obs.astype(int))
    classes = list(model.classes_)
    prop = model.predict_proba(X)[:, classes.index(1)]
    eps = 1e-6 if clip is None else clip
    prop = np.clip(prop, eps, 1 - eps)
    return ipw_from_propensity(prop, obs, stabilized=stabilized, clip=clip, ess_warning=ess_warning)
