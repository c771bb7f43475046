"""IPW-corrected evaluation: weighted metrics with bootstrap confidence intervals, training helpers,
and the information gain of adding a modality (ICYM2I, Sec. 4.1-4.2).

The authors evaluate with scikit-learn's ``roc_auc_score``, ``average_precision_score`` and ``log_loss``
given ``sample_weight=ipw`` and report the mean and standard deviation over 100 bootstrap resamples
(``experiments/utils_classification.py::get_classification_metric_dict``). Here the point estimate is the
metric on the sample itself and the interval is the percentile bootstrap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.metrics import accuracy_score, average_precision_score, log_loss, roc_auc_score
from sklearn.pipeline import Pipeline

from iclr26.validation import check_array, check_int, check_probabilities

from ._weights import check_weights

METRICS = ("auroc", "average_precision", "log_loss", "accuracy")
#: Metrics where lower is better.
LOSSES = ("log_loss",)


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a percentile bootstrap confidence interval."""

    value: float
    ci_low: float
    ci_high: float
    std: float
    n_bootstrap: int

    def covers(self, x: float) -> bool:
        """Whether ``x`` lies inside the confidence interval."""
        return bool(self.ci_low <= x <= self.ci_high)

    def as_dict(self) -> dict[str, float]:
        return {"value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high, "std": self.std}


def _check_binary(y: Any, name: str = "y_true") -> np.ndarray:
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.dtype == bool:
        arr = arr.astype(int)
    if not np.issubdtype(arr.dtype, np.number) or not np.isin(arr, (0, 1)).all():
        raise ValueError(f"{name} must hold binary labels 0/1")
    arr = arr.astype(np.int64)
    if np.unique(arr).size < 2:
        raise ValueError(f"{name} contains a single class; the metrics need both classes")
    return arr


#: Metrics that only rank the scores: any real-valued decision score is accepted.
RANKING = ("auroc", "average_precision")


def _check_score(score: Any, metrics: Sequence[str], name: str = "y_score") -> np.ndarray:
    s = check_array(score, name, ndim=1)
    if any(m not in RANKING for m in metrics):
        s = check_probabilities(s, name)
    return s


def _check_inputs(
    y_true: Any, y_score: Any, sample_weight: Any, metrics: Sequence[str] = METRICS
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y = _check_binary(y_true)
    s = _check_score(y_score, metrics)
    if s.shape[0] != y.shape[0]:
        raise ValueError(f"y_score must have length {y.shape[0]} (one per sample), got {s.shape[0]}")
    w = np.ones(y.shape[0]) if sample_weight is None else check_weights(sample_weight, y.shape[0])
    return y, s, w


def _metric(name: str, y: np.ndarray, s: np.ndarray, w: np.ndarray) -> float:
    if name == "auroc":
        return float(roc_auc_score(y, s, sample_weight=w))
    if name == "average_precision":
        return float(average_precision_score(y, s, sample_weight=w))
    if name == "log_loss":
        return float(log_loss(y, s, sample_weight=w, labels=[0, 1]))
    if name == "accuracy":
        return float(accuracy_score(y, (s >= 0.5).astype(int), sample_weight=w))
    raise ValueError(f"metric must be one of {METRICS}, got {name!r}")


def weighted_metric(y_true: Any, y_score: Any, metric: str = "auroc", sample_weight: Any = None) -> float:
    """One (IPW-)weighted metric of predicted probabilities ``y_score`` for binary ``y_true``.

    ``metric`` is one of ``"auroc"``, ``"average_precision"``, ``"log_loss"`` (nats) or ``"accuracy"``
    (threshold 0.5). ``sample_weight`` must be strictly positive (give the complete cases only).
    For ``"auroc"`` and ``"average_precision"`` ``y_score`` may be any real decision score (e.g. a
    margin or logit); the other metrics need probabilities. For ``"log_loss"`` predicted probabilities
    of exactly 0 or 1 are rejected (the loss would be infinite).
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    y, s, w = _check_inputs(y_true, y_score, sample_weight, (metric,))
    if metric == "log_loss" and ((s <= 0) | (s >= 1)).any():
        raise ValueError("y_score must lie strictly inside (0, 1) for log_loss (clip the probabilities)")
    return _metric(metric, y, s, w)


def _check_strata(strata: Any, n: int) -> tuple[np.ndarray, int]:
    """Integer codes of ``strata`` (1-D, one per row) and the number of strata (at least 2)."""
    arr = np.asarray(strata)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"strata must be 1-D with one value per row (length n={n}), got shape {arr.shape}")
    values, codes = np.unique(arr, return_inverse=True)
    if values.shape[0] < 2:
        raise ValueError(
            "strata hold a single value; bootstrap resamples would always contain a single class"
        )
    return codes.ravel(), values.shape[0]


def _bootstrap_indices(rng: np.random.Generator, codes: np.ndarray, k: int) -> np.ndarray:
    n = codes.shape[0]
    for _ in range(100):
        idx = rng.integers(0, n, n)
        if np.bincount(codes[idx], minlength=k).all():
            return idx
    raise ValueError("bootstrap resamples keep losing a stratum; too few positives or negatives")


def bootstrap(
    statistic: Callable[[np.ndarray], float | Mapping[str, float]],
    n: int,
    *,
    n_bootstrap: int = 200,
    confidence: float = 0.95,
    random_state: int | np.random.Generator | None = 0,
    strata: np.ndarray | None = None,
) -> Estimate | dict[str, Estimate]:
    """Percentile bootstrap of ``statistic(indices)`` over ``n`` rows resampled with replacement.

    ``statistic(np.arange(n))`` is the point estimate. A statistic returning a mapping of named values
    gives a dict of :class:`Estimate` (one per name). With ``strata`` (e.g. binary labels; one value per
    row), resamples in which a stratum vanishes are redrawn.
    """
    n_bootstrap = check_int(n_bootstrap, "n_bootstrap", minimum=2)
    n = check_int(n, "n", minimum=1)
    codes = None if strata is None else _check_strata(strata, n)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    rng = (
        random_state if isinstance(random_state, np.random.Generator) else np.random.default_rng(random_state)
    )
    point = statistic(np.arange(n))
    named = isinstance(point, Mapping)
    keys = list(point) if named else [None]
    point_vals = [float(point[k]) for k in keys] if named else [float(point)]
    values = np.empty((n_bootstrap, len(keys)))
    for b in range(n_bootstrap):
        idx = _bootstrap_indices(rng, *codes) if codes is not None else rng.integers(0, n, n)
        v = statistic(idx)
        values[b] = [float(v[k]) for k in keys] if named else [float(v)]
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(values, [alpha, 1 - alpha], axis=0)
    sd = values.std(axis=0, ddof=1)
    ests = [
        Estimate(point_vals[j], float(lo[j]), float(hi[j]), float(sd[j]), n_bootstrap)
        for j in range(len(keys))
    ]
    return dict(zip(keys, ests)) if named else ests[0]


def _check_metrics(metrics: Any) -> tuple[str, ...]:
    """A non-empty tuple of known metric names (a bare string would be read letter by letter)."""
    if isinstance(metrics, str):
        raise ValueError(f"metrics must be a sequence of metric names, got the string {metrics!r}")
    metrics = tuple(metrics)
    if not metrics:
        raise ValueError(f"metrics must name at least one of {METRICS}")
    for m in metrics:
        if m not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {m!r}")
    return metrics


def evaluate(
    y_true: Any,
    y_score: Any,
    sample_weight: Any = None,
    *,
    metrics: Sequence[str] = METRICS,
    n_bootstrap: int = 200,
    confidence: float = 0.95,
    random_state: int | np.random.Generator | None = 0,
) -> dict[str, Estimate]:
    """IPW-corrected evaluation of predicted probabilities, with bootstrap confidence intervals.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,), binary 0/1
    y_score : array-like of shape (n_samples,)
        Predicted P(y = 1); when ``metrics`` only holds ranking metrics (AUROC, average precision) any
        real decision score.
    sample_weight : array-like of shape (n_samples,), optional
        Inverse probability weights of the complete cases (``IPWeights.observed_weights``); ``None``
        gives the naive complete-case evaluation.
    metrics : subset of ``("auroc", "average_precision", "log_loss", "accuracy")``

    Returns
    -------
    dict mapping metric name to :class:`Estimate`.
    """
    metrics = _check_metrics(metrics)
    y, s, w = _check_inputs(y_true, y_score, sample_weight, metrics)
    if "log_loss" in metrics and ((s <= 0) | (s >= 1)).any():
        raise ValueError("y_score must lie strictly inside (0, 1) for log_loss (clip the probabilities)")
    rng = (
        random_state if isinstance(random_state, np.random.Generator) else np.random.default_rng(random_state)
    )
    out = {}
    for m in metrics:
        out[m] = bootstrap(
            lambda idx, m=m: _metric(m, y[idx], s[idx], w[idx]),
            y.shape[0],
            n_bootstrap=n_bootstrap,
            confidence=confidence,
            random_state=rng,
            strata=y,
        )
    return out


def information_gain(
    y_true: Any,
    score_base: Any,
    score_full: Any,
    sample_weight: Any = None,
    *,
    metric: str = "auroc",
    n_bootstrap: int = 200,
    confidence: float = 0.95,
    random_state: int | np.random.Generator | None = 0,
) -> Estimate:
    """Gain in (weighted) performance from adding a modality: ``metric(full) - metric(base)``.

    ``score_base`` are predictions from the always-observed modality, ``score_full`` from both; for
    ``metric="log_loss"`` the gain is ``loss(base) - loss(full)`` (positive = the modality helps). The
    interval comes from a paired bootstrap. For AUROC and average precision the scores may be raw
    decision scores.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    y, s0, w = _check_inputs(y_true, score_base, sample_weight, (metric,))
    s1 = _check_score(score_full, (metric,), "score_full")
    if s1.shape[0] != y.shape[0]:
        raise ValueError(f"score_full must have length {y.shape[0]}, got {s1.shape[0]}")
    sign = -1.0 if metric in LOSSES else 1.0
    if metric in LOSSES and (((s0 <= 0) | (s0 >= 1)).any() or ((s1 <= 0) | (s1 >= 1)).any()):
        raise ValueError("scores must lie strictly inside (0, 1) for log_loss (clip the probabilities)")

    def stat(idx: np.ndarray) -> float:
        return sign * (_metric(metric, y[idx], s1[idx], w[idx]) - _metric(metric, y[idx], s0[idx], w[idx]))

    return bootstrap(
        stat, y.shape[0], n_bootstrap=n_bootstrap, confidence=confidence, random_state=random_state, strata=y
    )


def conditional_mutual_information(
    y_true: Any,
    proba_base: Any,
    proba_full: Any,
    sample_weight: Any = None,
    *,
    n_bootstrap: int = 200,
    confidence: float = 0.95,
    random_state: int | np.random.Generator | None = 0,
) -> Estimate:
    """Model-based (IPW-weighted) estimate of I(Y; X2 | X1) in bits.

    ``I(Y; X2 | X1) = E[log p(y | x1, x2) - log p(y | x1)]``, estimated with the predicted probabilities of
    the unimodal model (``proba_base``) and the multimodal model (``proba_full``): the weighted drop in
    log-loss, in bits. Unbiased for the target environment under MAR when the models are calibrated
    there (train them with the same weights, :func:`fit_weighted`).
    """
    est = information_gain(
        y_true,
        proba_base,
        proba_full,
        sample_weight,
        metric="log_loss",
        n_bootstrap=n_bootstrap,
        confidence=confidence,
        random_state=random_state,
    )
    k = 1.0 / np.log(2.0)
    return Estimate(est.value * k, est.ci_low * k, est.ci_high * k, est.std * k, est.n_bootstrap)


def fit_weighted(estimator: Any, X: Any, y: Any, sample_weight: Any = None) -> Any:
    """Clone and fit a scikit-learn estimator with inverse probability weights (IPW training).

    For a :class:`~sklearn.pipeline.Pipeline` the weights go to its final step. Returns the fitted clone.
    """
    X = check_array(X, "X", ndim=None)
    if X.ndim == 1:
        X = X[:, None]
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must be 1-D of length {X.shape[0]}, got shape {y.shape}")
    if np.unique(y).size < 2:
        raise ValueError("y contains a single class; a classifier needs both")
    model = clone(estimator)
    if sample_weight is None:
        return model.fit(X, y)
    w = check_weights(sample_weight, X.shape[0])
    if isinstance(model, Pipeline):
        return model.fit(X, y, **{f"{model.steps[-1][0]}__sample_weight": w})
    return model.fit(X, y, sample_weight=w)


def weighted_mean_loss(per_sample_loss: Any, sample_weight: Any) -> Any:
    """``sum(w * loss) / sum(w)``: an IPW-weighted training loss.

    Works on NumPy arrays and on torch tensors (gradients flow through ``per_sample_loss``), e.g.
    ``weighted_mean_loss(F.binary_cross_entropy_with_logits(z, y, reduction="none"), w)``.
    """
    if hasattr(per_sample_loss, "detach"):  # torch tensor
        import torch

        w = torch.as_tensor(sample_weight, dtype=per_sample_loss.dtype, device=per_sample_loss.device)
        if w.shape != per_sample_loss.shape:
            raise ValueError(
                f"sample_weight must have shape {tuple(per_sample_loss.shape)}, got {tuple(w.shape)}"
            )
        if not torch.isfinite(w).all() or (w <= 0).any():
            raise ValueError("sample_weight must be finite and strictly positive")
        return (w * per_sample_loss).sum() / w.sum()
    loss = check_array(per_sample_loss, "per_sample_loss", ndim=1)
    w = check_weights(sample_weight, loss.shape[0])
    return float((w * loss).sum() / w.sum())
