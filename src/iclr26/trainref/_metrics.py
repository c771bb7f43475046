"""Accuracy and calibration metrics, detection scores, JS divergence."""

from __future__ import annotations

import numpy as np

from ..validation import check_array, check_int, check_labels


def _probs_labels(proba, y):
    proba = check_array(proba, "proba")
    if np.any(proba < -1e-9) or not np.allclose(proba.sum(axis=1), 1.0, atol=1e-6):
        raise ValueError("proba must hold probability rows (non-negative, summing to 1)")
    y = check_labels(y, len(proba), "y")
    if y.min() < 0 or y.max() >= proba.shape[1]:
        raise ValueError(f"y must lie in [0, {proba.shape[1]})")
    return proba, y


def accuracy(proba, y) -> float:
    proba, y = _probs_labels(proba, y)
    return float(np.mean(proba.argmax(axis=1) == y))


def _ece(conf: np.ndarray, hit: np.ndarray, n_bins: int) -> float:
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    idx = np.clip(np.searchsorted(edges, conf, side="left") - 1, 0, n_bins - 1)  # bins (lo, hi]
    total = 0.0
    for b in range(n_bins):
        m = idx == b
        if m.any():
            total += m.sum() * abs(conf[m].mean() - hit[m].mean())
    return float(total / len(conf))


def expected_calibration_error(proba, y, n_bins: int = 15) -> float:
    """Top-label ECE with ``n_bins`` equal-width bins (Guo et al., 2017)."""
    proba, y = _probs_labels(proba, y)
    n_bins = check_int(n_bins, "n_bins", minimum=1)
    return _ece(proba.max(axis=1), (proba.argmax(axis=1) == y).astype(float), n_bins)


def classwise_ece(proba, y, n_bins: int = 15) -> float:
    """Class-wise ECE (Kull et al., 2019): the mean over classes of the ECE of ``p_k`` against ``y == k``."""
    proba, y = _probs_labels(proba, y)
    n_bins = check_int(n_bins, "n_bins", minimum=1)
    return float(np.mean([_ece(proba[:, k], (y == k).astype(float), n_bins) for k in range(proba.shape[1])]))


def nll(proba, y) -> float:
    proba, y = _probs_labels(proba, y)
    return float(-np.mean(np.log(np.clip(proba[np.arange(len(y)), y], 1e-12, None))))


def brier(proba, y) -> float:
    """Multi-class Brier score: mean squared distance between ``proba`` and the one-hot label."""
    proba, y = _probs_labels(proba, y)
    onehot = np.eye(proba.shape[1])[y]
    return float(np.mean(np.sum((proba - onehot) ** 2, axis=1)))


def _mask(values, name: str) -> np.ndarray:
    """A boolean mask from bools or 0/1 numbers; anything else (indices, scores, NaN, strings) is refused
    rather than cast to bool."""
    arr = np.asarray(values)
    if arr.dtype == bool:
        return arr
    if arr.size == 0 or (
        arr.dtype != object
        and (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating))
        and np.all((arr == 0) | (arr == 1))
    ):
        return arr.astype(bool)
    raise ValueError(f"{name} must be a boolean mask (bools or 0/1 values), got {arr.dtype} values")


def detection_scores(flagged, is_noisy) -> dict[str, float]:
    """Precision, recall and F1 of ``flagged`` (predicted noisy) against ``is_noisy`` (truth)."""
    f = _mask(flagged, "flagged")
    t = _mask(is_noisy, "is_noisy")
    if f.shape != t.shape or f.ndim != 1:
        raise ValueError(f"flagged and is_noisy must be 1-D of the same length, got {f.shape} and {t.shape}")
    tp = float(np.sum(f & t))
    precision = tp / f.sum() if f.sum() else float("nan")
    recall = tp / t.sum() if t.sum() else float("nan")
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else float("nan")
    return {"precision": precision, "recall": recall, "f1": f1}


def selected_clean_precision(selected, noisy_labels, true_labels) -> float:
    """Fraction of the selected samples whose given label is the true one (NaN if none selected)."""
    s = _mask(selected, "selected")
    if s.ndim != 1:
        raise ValueError(f"selected must be 1-D, got shape {s.shape}")
    noisy = check_labels(noisy_labels, len(s), "noisy_labels")
    true = check_labels(true_labels, len(s), "true_labels")
    return float(np.mean(noisy[s] == true[s])) if s.any() else float("nan")


def js_divergence(p, q) -> np.ndarray:
    """Row-wise Jensen-Shannon divergence (base 2, in [0, 1]) between distributions ``p`` and ``q``.

    Rows are renormalised; an all-zero row has no distribution and gives NaN."""
    p = check_array(p, "p")
    q = check_array(q, "q")
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same shape, got {p.shape} and {q.shape}")
    if np.any(p < 0) or np.any(q < 0):
        raise ValueError("p and q must be non-negative")
    with np.errstate(over="ignore"):
        overflow = not (np.isfinite(p.sum(axis=1)).all() and np.isfinite(q.sum(axis=1)).all())
    if overflow:
        raise ValueError(
            "p and q rows must have a finite sum: their values are too large (the sum overflows)"
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        p = p / p.sum(axis=1, keepdims=True)
        q = q / q.sum(axis=1, keepdims=True)
        m = 0.5 * (p + q)

        def kl(a, b):
            return np.where(a > 0, a * np.log2(np.where(a > 0, a, 1) / np.where(b > 0, b, 1)), 0.0).sum(
                axis=1
            )

        out = 0.5 * kl(p, m) + 0.5 * kl(q, m)
    out[~(np.isfinite(p).all(axis=1) & np.isfinite(q).all(axis=1))] = np.nan
    return out


def reliability_curve(proba, y, n_bins: int = 15):
    """Per bin of top-label confidence: (mean confidence, accuracy, count), for reliability diagrams."""
    proba, y = _probs_labels(proba, y)
    n_bins = check_int(n_bins, "n_bins", minimum=1)
    conf, hit = proba.max(axis=1), (proba.argmax(axis=1) == y).astype(float)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    idx = np.clip(np.searchsorted(edges, conf, side="left") - 1, 0, n_bins - 1)
    out = []
    for b in range(n_bins):
        m = idx == b
        out.append(
            (
                float(conf[m].mean()) if m.any() else np.nan,
                float(hit[m].mean()) if m.any() else np.nan,
                int(m.sum()),
            )
        )
    return np.array(out)
