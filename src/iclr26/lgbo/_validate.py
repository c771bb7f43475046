"""Input checks shared by the public API (``ValueError`` naming the argument)."""

from __future__ import annotations

from typing import Any

import numpy as np

from iclr26.validation import check_array


def bounds(value: Any, name: str = "bounds") -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)`` from a ``(2, d)`` array with ``lo < hi`` in every dimension."""
    arr = check_array(value, name)
    if arr.shape[0] != 2:
        raise ValueError(f"{name} must have shape (2, d), got {arr.shape}")
    lo, hi = arr[0], arr[1]
    if np.any(lo >= hi):
        raise ValueError(f"{name} must have lo < hi in every dimension, got lo={lo}, hi={hi}")
    with np.errstate(over="ignore"):
        if not np.isfinite(hi - lo).all():
            raise ValueError(f"{name} must have a finite width hi - lo (it overflows), got lo={lo}, hi={hi}")
    return lo, hi


def observations(X: Any, y: Any, d: int) -> tuple[np.ndarray, np.ndarray]:
    """``X`` of shape ``(n, d)`` and ``y`` of shape ``(n,)``, both finite."""
    X = check_array(X, "X")
    if X.shape[1] != d:
        raise ValueError(f"X must have {d} columns, got shape {X.shape}")
    y = check_array(y, "y", ndim=None)
    if not (y.ndim == 1 or (y.ndim == 2 and 1 in y.shape)):
        raise ValueError(f"y must be 1-D (one value per row of X), got shape {y.shape}")
    y = y.reshape(-1)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"y must have one value per row of X ({X.shape[0]}), got {y.shape[0]}")
    return X, y
