"""The graph universe: the K communities every graph of a family draws from.

A universe fixes, once and for all, what each community *is*:

- ``P`` (K x K): the relative edge propensity between communities (the "pseudo" stochastic block model
  of GraphUniverse; absolute probabilities are set per graph by its homophily and density targets),
- ``degree_centers`` (K,): where a community sits in the degree ranking of any graph it appears in,
- ``feature_centers`` (K, feature_dim): the mean of its nodes' Gaussian features.

So community ``c`` carries the same propensities, degree tendency and feature centre in every graph:
the communities are *persistent*.
"""

from __future__ import annotations

import numpy as np

from ..validation import check_int


def _check_nonneg(value: float, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return value


class Universe:
    """A GraphUniverse: K persistent communities with propensities, degree centres and feature centres.

    Parameters
    ----------
    K : int
        Number of communities in the universe.
    feature_dim : int, default=16
        Dimension of node features (0 disables features).
    edge_propensity_variance : float, default=0.5
        Spread of the between-community propensities: ``P = clip(1 + N(0, 2 * v), 0, 2)``, symmetric.
        0 gives a flat ``P`` (all ones).
    center_variance : float, default=1.0
        Scale of the community feature centres, ``N(0, center_variance)`` per coordinate (as the authors,
        used as the standard deviation).
    cluster_variance : float, default=0.1
        Variance of node features around their community centre (covariance ``cluster_variance * I``).
    seed : int, default=42
        Seed of the universe's random draws.
    P : array of shape (K, K), optional
        A user-given propensity matrix (symmetric, non-negative) instead of the random one.

    Attributes
    ----------
    P : ndarray of shape (K, K)
    degree_centers : ndarray of shape (K,), in [-1, 1]
    feature_centers : ndarray of shape (K, feature_dim)

    References
    ----------
    Van Langendonck et al., "GraphUniverse: Enabling Systematic Evaluation of Inductive Generalization",
    ICLR 2026; authors' code ``LouisVanLangendonck/GraphUniverse`` (``GraphUniverse``, ``FeatureGenerator``).
    """

    def __init__(
        self,
        K: int,
        feature_dim: int = 16,
        edge_propensity_variance: float = 0.5,
        center_variance: float = 1.0,
        cluster_variance: float = 0.1,
        seed: int = 42,
        P: np.ndarray | None = None,
    ) -> None:
        self.K = check_int(K, "K", minimum=1)
        self.feature_dim = check_int(feature_dim, "feature_dim", minimum=0)
        self.edge_propensity_variance = _check_nonneg(edge_propensity_variance, "edge_propensity_variance")
        self.center_variance = _check_nonneg(center_variance, "center_variance")
        self.cluster_variance = _check_nonneg(cluster_variance, "cluster_variance")
        self.seed = check_int(seed, "seed", minimum=0)
        rng = np.random.default_rng([self.seed, 0])
        if P is None:
            P = np.ones((self.K, self.K))
            if self.edge_propensity_variance > 0:
                P = np.clip(P + rng.normal(0.0, 2.0 * self.edge_propensity_variance, (self.K, self.K)), 0, 2)
            lower = np.tril(P, -1)
            P = lower + lower.T + np.diag(np.diag(P))
        else:
            P = np.asarray(P, dtype=np.float64)
            if P.shape != (self.K, self.K):
                raise ValueError(f"P must have shape ({self.K}, {self.K}), got {P.shape}")
            if not np.isfinite(P).all() or (P < 0).any() or not np.allclose(P, P.T):
                raise ValueError("P must be finite, non-negative and symmetric")
        self.P = P
        self.degree_centers = rng.uniform(-1.0, 1.0, self.K)
        self.feature_centers = rng.normal(0.0, self.center_variance, (self.K, self.feature_dim))

    def __repr__(self) -> str:
        return (
            f"Universe(K={self.K}, feature_dim={self.feature_dim}, "
            f"edge_propensity_variance={self.edge_propensity_variance}, "
            f"center_variance={self.center_variance}, "
            f"cluster_variance={self.cluster_variance}, seed={self.seed})"
        )

    def sample_communities(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """Sample ``size`` distinct communities, each connectable to those already chosen.

        As the authors' ``sample_connected_community_subset``: the first community is uniform; each next
        one is uniform among the not-yet-chosen communities with a non-zero propensity to the chosen set
        (the authors' rejection loop, drawn directly). Stops early if no community can be added.
        """
        size = min(check_int(size, "size", minimum=1), self.K)
        chosen = [int(rng.integers(self.K))]
        mask = np.zeros(self.K, dtype=bool)
        mask[chosen[0]] = True
        reach = self.P[chosen[0]].copy()
        while len(chosen) < size:
            candidates = np.flatnonzero(~mask & (reach > 0))
            if candidates.size == 0:
                break
            c = int(candidates[rng.integers(candidates.size)])
            chosen.append(c)
            mask[c] = True
            reach += self.P[c]
        return np.asarray(chosen, dtype=np.int64)

    def sample_features(self, labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Node features ``x_i ~ N(feature_centers[labels[i]], cluster_variance * I)``, float32."""
        noise = rng.standard_normal((labels.shape[0], self.feature_dim))
        return (self.feature_centers[labels] + np.sqrt(self.cluster_variance) * noise).astype(np.float32)

    def to_dict(self) -> dict:
        return {
            "K": self.K,
            "feature_dim": self.feature_dim,
            "edge_propensity_variance": self.edge_propensity_variance,
            "center_variance": self.center_variance,
            "cluster_variance": self.cluster_variance,
            "seed": self.seed,
        }
