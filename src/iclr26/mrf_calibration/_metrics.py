"""Detection metrics exactly as the authors' ``cal_metrics`` (``methods/utils.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..validation import check_array, check_labels


def auroc(y: np.ndarray, p: np.ndarray) -> float:
    """Area under the ROC curve (``sklearn.metrics.roc_auc_score``); NaN scores count as undefined."""
    from sklearn.metrics import roc_auc_score

    p = np.asarray(p, dtype=np.float64)
    if not np.isfinite(p).all():
        return float("nan")
    return float(roc_auc_score(y, p))


def detection_metrics(y: Any, p: Any) -> dict[str, float]:
    """``acc`` (threshold 0.5, Python's ``round``), ``auroc``, and the TPR at FPR 0.5 %, 1 % and 3 %.

    The TPR at a false-positive rate ``f`` is read at the last ROC point (``sklearn.metrics.roc_curve``)
    whose FPR is ``<= f``, as the authors' ``cal_metrics`` does. ``y``: 0/1 labels (1 = machine) holding
    both classes; ``p``: probabilities of "machine", one per text.
    """
    from sklearn.metrics import roc_curve

    y = check_labels(y, name="y")
    if not np.isin(y, (0, 1)).all():
        raise ValueError(f"y must hold 0 and 1 only, got values {np.unique(y)}")
    if len(np.unique(y)) < 2:
        raise ValueError("y must hold both classes (0 and 1)")
    p = check_array(p, "p", ndim=1)
    if ((p < 0) | (p > 1)).any():  # a logit (decision_function) would make round(p), hence acc, wrong
        raise ValueError(
            "p must be probabilities in [0, 1] (predict_proba(...)[:, 1], not decision_function)"
        )
    if len(p) != len(y):
        raise ValueError(f"p must have one value per label ({len(y)}), got {len(p)}")
    pred = np.array([round(v) for v in p.tolist()])
    fpr, tpr, _ = roc_curve(y, p)
    out = {"acc": float(np.mean(pred == y)), "auroc": auroc(y, p)}
    for name, f in (("tpr@0.5%", 0.005), ("tpr@1%", 0.01), ("tpr@3%", 0.03)):
        out[name] = float(tpr[np.max(np.where(fpr <= f)[0])])
    return out
