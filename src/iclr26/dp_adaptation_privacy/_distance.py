"""Exact 1-Wasserstein distance between two equal-size point clouds (an optimal assignment)."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist


def wasserstein_equal(a: np.ndarray, b: np.ndarray) -> float:
    """W1 between uniform empirical measures on ``a`` ``(n, d)`` and ``b`` ``(n, d)`` (Euclidean cost)."""
    cost = cdist(a, b)
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].mean())
