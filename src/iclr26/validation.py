"""Input validation helpers shared by the systems: raise clear ``ValueError``s at the API boundary."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np


def check_array(
    X: Any,
    name: str = "X",
    *,
    ndim: int | None = 2,
    finite: bool = True,
    min_rows: int = 1,
    dtype: type | None = np.float64,
) -> np.ndarray:
    """Return ``X`` as a NumPy array, checking it is numeric, of ``ndim`` dimensions, finite, non-empty.

    Raises ``ValueError`` naming ``name`` and what was expected. Booleans and strings are rejected
    rather than silently coerced.
    """
    arr = np.asarray(X)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number)):
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got an array of shape {arr.shape}")
    if arr.ndim == 0 or arr.shape[0] < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} row(s), got shape {arr.shape}")
    if dtype is not None:
        arr = arr.astype(dtype, copy=False)
    if finite and np.issubdtype(arr.dtype, np.floating) and not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def check_labels(labels: Any, n: int | None = None, name: str = "labels") -> np.ndarray:
    """Return integer labels as a 1-D ``int64`` array of length ``n`` (if given).

    Float arrays holding whole numbers are accepted; any other dtype raises ``ValueError``.
    """
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} must have length {n} (one per sample), got {arr.shape[0]}")
    if np.issubdtype(arr.dtype, np.integer):
        return arr.astype(np.int64, copy=False)
    if np.issubdtype(arr.dtype, np.floating) and np.isfinite(arr).all() and np.all(arr == np.round(arr)):
        return arr.astype(np.int64)
    raise ValueError(f"{name} must hold integers, got dtype {arr.dtype}")


def check_probabilities(p: Any, name: str = "p", *, open_interval: bool = False) -> np.ndarray:
    """Return ``p`` as floats in [0, 1] (or (0, 1) with ``open_interval``), finite, or raise."""
    arr = check_array(p, name, ndim=None)
    lo_bad = arr <= 0 if open_interval else arr < 0
    hi_bad = arr >= 1 if open_interval else arr > 1
    if np.any(lo_bad | hi_bad):
        interval = "(0, 1)" if open_interval else "[0, 1]"
        raise ValueError(f"{name} must lie in {interval}")
    return arr


def check_bool(value: Any, name: str) -> bool:
    """A genuine boolean (Python or NumPy): a string such as ``"False"`` would otherwise count as true."""
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def is_finite_real(value: Any) -> bool:
    """A finite real number (Python, NumPy or any ``numbers.Real``), not a bool (``True`` would silently
    be 1)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_) and math.isfinite(value)


def check_real(value: Any, name: str) -> float:
    """A finite real number, not a bool, as a float (a NaN would silently spread through a result)."""
    if not is_finite_real(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def check_in(value: Any, allowed: tuple, name: str) -> Any:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def check_int(value: Any, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer (not a bool) within [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return int(value)
