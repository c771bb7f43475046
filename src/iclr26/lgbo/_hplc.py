"""The HPLC benchmark: Olympus' 1,385 measured HPLC runs, queried through the authors' 12-NN IDW oracle.

The data ship in the ``olymp==0.0.1b0`` wheel (``olympus/datasets/dataset_hplc/data.csv``: six process
parameters, then the peak area, to be maximised). The package is located with ``find_spec`` and never
imported. As in the authors' tabular evaluator (their data are not on a full grid), inputs are min-max
scaled with the data's own bounds and a query returns the inverse-squared-distance weighted mean of its
12 nearest measurements (the measurement itself on an exact hit).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

from iclr26.validation import check_array, check_int, is_finite_real

from . import _validate

HPLC_PARAMETERS = (
    "sample_loop",
    "additional_volume",
    "tubing_volume",
    "sample_flow",
    "push_speed",
    "wait_time",
)
HPLC_UNITS = ("ml", "ml", "ml", "ml/min", "Hz", "s")


def hplc_data() -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)``: the ``(1385, 6)`` HPLC settings and their ``(1385,)`` peak areas (``olymp`` wheel)."""
    spec = importlib.util.find_spec("olympus")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the HPLC data need the olymp wheel: pip install 'iclr26[bo]' (olymp==0.0.1b0)")
    path = Path(next(iter(spec.submodule_search_locations))) / "datasets" / "dataset_hplc" / "data.csv"
    data = np.loadtxt(path, delimiter=",")
    return data[:, :6], data[:, 6]


class IDWOracle:
    """k-nearest-neighbour inverse-distance-weighted interpolation of tabular measurements.

    Parameters
    ----------
    X, y:
        Measured inputs ``(n, d)`` and outputs ``(n,)``.
    k, power, eps:
        Neighbours, distance exponent, and the distance under which a query returns the measurement.
    """

    def __init__(self, X: Any, y: Any, k: int = 12, power: float = 2.0, eps: float = 1e-12):
        self.X = check_array(X, "X")
        self.y = check_array(y, "y", ndim=1)
        if len(self.y) != len(self.X):
            raise ValueError(f"y must have one value per row of X ({len(self.X)}), got {len(self.y)}")
        self.k = check_int(k, "k", minimum=1)
        if not (is_finite_real(power) and power >= 0):
            raise ValueError(f"power must be a finite number >= 0, got {power!r}")
        if not (is_finite_real(eps) and eps > 0):
            raise ValueError(f"eps must be a finite number > 0, got {eps!r}")
        self.power, self.eps = float(power), float(eps)
        self.lo, hi = self.X.min(0), self.X.max(0)
        self.span = np.maximum(hi - self.lo, eps)
        self.bounds = np.stack([self.lo, hi])
        self._scaled = (self.X - self.lo) / self.span

    def __call__(self, Q: Any) -> np.ndarray:
        """Interpolated outputs ``(m,)`` at the queries ``Q`` ``(m, d)``."""
        Q = check_array(np.atleast_2d(Q), "Q")
        if Q.shape[1] != self.X.shape[1]:
            raise ValueError(f"Q must have {self.X.shape[1]} columns, got {Q.shape[1]}")
        dist = np.linalg.norm((Q - self.lo)[:, None, :] / self.span - self._scaled[None], axis=-1)
        k = min(self.k, len(self.y))
        idx = np.argpartition(dist, k - 1, axis=1)[:, :k]
        dk = np.take_along_axis(dist, idx, 1)
        w = 1.0 / (dk + self.eps) ** self.power
        out = (w * self.y[idx]).sum(1) / w.sum(1)
        nearest = dist.argmin(1)
        exact = dist[np.arange(len(Q)), nearest] <= self.eps
        return np.where(exact, self.y[nearest], out)


def hplc_task(bounds: np.ndarray) -> dict[str, Any]:
    """Prompt fields for the HPLC task (maximise the peak area); ``bounds`` ``(2, 6)``."""
    lo, hi = _validate.bounds(bounds)
    if lo.size != len(HPLC_PARAMETERS):
        raise ValueError(f"bounds must have shape (2, {len(HPLC_PARAMETERS)}), got {np.shape(bounds)}")
    params = [
        {"name": n, "bounds": [float(lo), float(hi)], "unit": u}
        for n, u, lo, hi in zip(HPLC_PARAMETERS, HPLC_UNITS, bounds[0], bounds[1])
    ]
    return {
        "background": "Automated HPLC sampling: tune the sample-injection settings of an HPLC system.",
        "parameters": params,
        "objective": "Maximize the chromatographic peak area. Larger is better.",
        "y_key": "peak_area",
    }
