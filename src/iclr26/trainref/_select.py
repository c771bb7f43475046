"""TrainRef's selection steps after the vote (``train_script.py``): the 0.5 split, the Mahalanobis OOD
filter and the kNN "far" filter."""

from __future__ import annotations

import numpy as np

from ._votes import _unit_rows


def precision_matrix(clean: np.ndarray) -> np.ndarray:
    """Inverse covariance of ``clean`` (rows = samples, ``np.cov`` with ddof 1); the pseudo-inverse when
    the covariance is singular or ill-conditioned (the authors' ``scipy.linalg.inv`` fails or returns
    noise there)."""
    cov = np.atleast_2d(np.cov(clean, rowvar=False))
    if np.linalg.cond(cov) < 1e12:
        return np.linalg.inv(cov)
    return np.linalg.pinv(cov, hermitian=True)


def mahalanobis(Z: np.ndarray, mean: np.ndarray, prec: np.ndarray, chunk_size: int = 8192) -> np.ndarray:
    """Mahalanobis distance of each row of ``Z`` to ``mean`` under precision ``prec``."""
    out = np.empty(len(Z))
    for start in range(0, len(Z), chunk_size):
        diff = Z[start : start + chunk_size] - mean
        out[start : start + chunk_size] = np.sqrt(np.maximum(np.einsum("ij,ij->i", diff @ prec, diff), 0.0))
    return out


def knn_cosine_distance(Z: np.ndarray, ref: np.ndarray, k: int, chunk_size: int = 8192) -> np.ndarray:
    """Mean cosine distance (1 - cos) from each row of ``Z`` to its ``k`` nearest rows of ``ref``."""
    k = min(k, len(ref))
    ref_unit = _unit_rows(ref)
    zero = np.linalg.norm(ref, axis=1) == 0
    ref_unit[zero] = 0.0  # sklearn's cosine_similarity gives 0 for a zero vector
    out = np.empty(len(Z))
    for start in range(0, len(Z), chunk_size):
        z = Z[start : start + chunk_size]
        z_unit = _unit_rows(z)
        z_unit[np.linalg.norm(z, axis=1) == 0] = 0.0
        dist = 1.0 - z_unit @ ref_unit.T
        out[start : start + chunk_size] = np.partition(dist, k - 1, axis=1)[:, :k].mean(axis=1)
    return out
