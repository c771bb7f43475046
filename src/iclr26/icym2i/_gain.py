"""Information quantities from (weighted) samples: plug-in joint tables, the PID of discrete or
discretised modalities, and conditional mutual information.

Under MAR the IPW-weighted empirical distribution of the complete cases estimates the target
environment's joint p(x1, x2, y); the authors plug the IPW weights in as the sample masses
(``p_x = ipw / n`` in ``information_decomposition/multi_pid.py``), which is what :func:`joint_table` does.

Continuous modalities: the authors estimate the optimal q with a neural network and Sinkhorn projections
over mini-batches (``q_estimator.py``). We instead discretise each modality (by default the predicted
probability p(y | x_i) of a unimodal model, in fixed bins, which keeps most of I(Y; X_i)) and solve the
exact BROJA problem on the weighted joint table (:func:`discretize`, :func:`pid_from_samples`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.cluster import KMeans

from iclr26.validation import check_array, check_in, check_int, check_labels

from ._metrics import Estimate
from ._pid import PID, _mutual_information, broja_pid
from ._weights import check_weights

PID_KEYS = ("redundancy", "unique1", "unique2", "synergy")


def _codes(x: np.ndarray) -> tuple[np.ndarray, int]:
    values, codes = np.unique(x, return_inverse=True)
    return codes.ravel(), values.shape[0]


def joint_table(x1: Any, x2: Any, y: Any, sample_weight: Any = None) -> np.ndarray:
    """(Weighted) empirical joint distribution p(x1, x2, y) of discrete samples.

    Parameters
    ----------
    x1, x2, y : array-like of int, shape (n_samples,)
        Discrete values (any integers; they are re-coded to 0..k-1 in sorted order).
    sample_weight : array-like of shape (n_samples,), optional
        Strictly positive weights (e.g. inverse probability weights of the complete cases).

    Returns
    -------
    ndarray of shape (n_x1_values, n_x2_values, n_y_values), summing to 1.
    """
    a = check_labels(x1, name="x1")
    n = a.shape[0]
    if n == 0:
        raise ValueError("x1, x2 and y must hold at least one sample, got none")
    b = check_labels(x2, n, name="x2")
    c = check_labels(y, n, name="y")
    w = np.ones(n) if sample_weight is None else check_weights(sample_weight, n)
    ca, ka = _codes(a)
    cb, kb = _codes(b)
    cc, kc = _codes(c)
    table = np.zeros((ka, kb, kc))
    np.add.at(table, (ca, cb, cc), w)
    return table / table.sum()


def pid_from_samples(x1: Any, x2: Any, y: Any, sample_weight: Any = None, *, solver: str = "auto") -> PID:
    """BROJA PID (bits) of the (IPW-weighted) plug-in joint distribution of discrete samples.

    With ``sample_weight=None`` on the complete cases this is the naive estimate; with the inverse
    probability weights of the complete cases it is ICYM2I's corrected estimate.
    """
    return broja_pid(joint_table(x1, x2, y, sample_weight), solver=solver)


def pid_bootstrap(
    x1: Any,
    x2: Any,
    y: Any,
    sample_weight: Any = None,
    *,
    n_bootstrap: int = 200,
    confidence: float = 0.95,
    random_state: int | np.random.Generator | None = 0,
    solver: str = "auto",
) -> dict[str, Estimate]:
    """:func:`pid_from_samples` with percentile bootstrap intervals for each PID term and ``mi``.

    The weights are resampled with their rows (the missingness model is held fixed; refit it inside
    your own :func:`bootstrap` to include its uncertainty).
    """
    a = check_labels(x1, name="x1")
    n = a.shape[0]
    b = check_labels(x2, n, name="x2")
    c = check_labels(y, n, name="y")
    w = np.ones(n) if sample_weight is None else check_weights(sample_weight, n)
    n_bootstrap = check_int(n_bootstrap, "n_bootstrap", minimum=2)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    point = pid_from_samples(a, b, c, w, solver=solver).as_dict()
    rng = (
        random_state if isinstance(random_state, np.random.Generator) else np.random.default_rng(random_state)
    )
    keys = (*PID_KEYS, "mi")
    draws = np.empty((n_bootstrap, len(keys)))
    for i in range(n_bootstrap):
        idx = rng.integers(0, n, n)
        d = pid_from_samples(a[idx], b[idx], c[idx], w[idx], solver=solver).as_dict()
        draws[i] = [d[k] for k in keys]
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(draws, [alpha, 1 - alpha], axis=0)
    sd = draws.std(axis=0, ddof=1)
    return {
        k: Estimate(point[k], float(lo[j]), float(hi[j]), float(sd[j]), n_bootstrap)
        for j, k in enumerate(keys)
    }


def conditional_mi_from_samples(x1: Any, x2: Any, y: Any, sample_weight: Any = None) -> float:
    """Plug-in (weighted) I(Y; X2 | X1) in bits of discrete samples: the information gain of X2."""
    p = joint_table(x1, x2, y, sample_weight)
    return float(_mutual_information(p.reshape(-1, p.shape[2])) - _mutual_information(p.sum(axis=1)))


def discretize(
    X: Any,
    n_bins: int = 8,
    *,
    method: str = "uniform",
    value_range: tuple[float, float] | None = None,
    random_state: int = 0,
) -> np.ndarray:
    """Discretise a continuous modality into ``n_bins`` integer codes for the exact PID.

    Parameters
    ----------
    X : array-like of shape (n_samples,) or (n_samples, n_features)
        A 1-D score (e.g. the predicted probability p(y | x_i) of a unimodal model, the default use) or
        a feature matrix (``method="kmeans"``).
    n_bins : int
    method : {"uniform", "quantile", "kmeans"}
        ``"uniform"``: equal-width bins over ``value_range`` (default the data's range; pass ``(0, 1)``
        for probabilities so that differently-trained models share bins; values outside it are refused);
        ``"quantile"``: equal-mass bins; ``"kmeans"``: k-means cells (any dimension).
    """
    n_bins = check_int(n_bins, "n_bins", minimum=2)
    check_in(method, ("uniform", "quantile", "kmeans"), "method")
    arr = check_array(X, "X", ndim=None)
    if method == "kmeans":
        data = arr[:, None] if arr.ndim == 1 else arr
        km = KMeans(n_clusters=n_bins, n_init=4, random_state=random_state)
        return km.fit_predict(data).astype(np.int64)
    if arr.ndim != 1:
        raise ValueError(f"method={method!r} needs a 1-D score, got shape {arr.shape} (use method='kmeans')")
    if method == "quantile":
        edges = np.quantile(arr, np.linspace(0, 1, n_bins + 1)[1:-1])
    else:
        lo, hi = value_range if value_range is not None else (float(arr.min()), float(arr.max()))
        if not hi > lo:
            raise ValueError(f"value_range must have high > low, got {(lo, hi)!r}")
        if arr.min() < lo or arr.max() > hi:
            raise ValueError(
                f"X has values in [{arr.min():g}, {arr.max():g}], outside value_range {(lo, hi)!r} "
                "(they would fall silently into the end bins; probabilities, not logits?)"
            )
        edges = np.linspace(lo, hi, n_bins + 1)[1:-1]
    return np.searchsorted(edges, arr, side="right").astype(np.int64)
