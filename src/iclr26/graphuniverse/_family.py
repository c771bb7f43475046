"""Graph families: many graphs sampled from one universe, and their save/load."""

from __future__ import annotations

import io
import json
import os
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from ..store import atomic_write_bytes
from ..validation import check_int
from ._dcsbm import calibrate_propensities, degree_factors, join_components, sample_edges, scale_propensities
from ._graph import GraphSample
from ._universe import Universe


def _range(value, name: str, lo: float, hi: float, integer: bool = False) -> tuple:
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = (value, value)
    try:
        a, b = value
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a (min, max) pair, got {value!r}") from None
    for v in (a, b):
        if (
            isinstance(v, bool)
            or not isinstance(v, int | float | np.integer | np.floating)
            or not np.isfinite(v)
        ):
            raise ValueError(f"{name} must hold numbers, got {value!r}")
        if integer and int(v) != v:
            raise ValueError(f"{name} must hold integers, got {value!r}")
    if a > b:
        raise ValueError(f"{name} must have min <= max, got {value!r}")
    if a < lo or b > hi:
        raise ValueError(f"{name} must lie within [{lo}, {hi}], got {value!r}")
    return (int(a), int(b)) if integer else (float(a), float(b))


def _real(value, name: str) -> float:
    """A real number (not a bool, not a string), finite."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def _check_communities(communities, K: int) -> np.ndarray:
    arr = np.asarray(communities)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"communities must be a non-empty 1-D list of community ids, got {communities!r}")
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind != "f" or not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise ValueError(f"communities must hold integer community ids, got {communities!r}")
    arr = arr.astype(np.int64)
    if np.unique(arr).size != arr.size:
        raise ValueError(f"communities must be distinct, got {communities!r}")
    if arr.min() < 0 or arr.max() >= K:
        raise ValueError(f"communities must lie in [0, {K - 1}], got {communities!r}")
    return arr


def sample_graph(
    universe: Universe,
    n_nodes: int,
    n_communities: int,
    homophily: float,
    avg_degree: float,
    power_law_exponent: float = 2.5,
    degree_separation: float = 0.5,
    seed: int | np.random.Generator | None = None,
    communities: Sequence[int] | None = None,
    calibrate: bool = True,
) -> GraphSample:
    """Sample one graph from ``universe`` with the DCCC-SBM (authors' ``GraphSample``).

    Parameters
    ----------
    n_nodes, n_communities : int
        Graph size and number of communities (a connected subset of the universe's, unless
        ``communities`` gives them).
    homophily : float in [0, 1]
        Target edge homophily (share of the propensity mass on the diagonal).
    avg_degree : float > 0
        Target average degree.
    power_law_exponent : float > 1
        Exponent of the Pareto degree factors.
    degree_separation : float in [0, 1]
        How strongly communities separate in the degree ranking (1 = tightest).
    seed : int or Generator
    communities : sequence of int, optional
        Use these universe communities instead of sampling them.
    calibrate : bool, default=True
        Rescale the propensities using the sampled community sizes and degree factors so the expected
        edge homophily and average degree equal the targets (our departure); ``False`` keeps the authors'
        size-agnostic rescaling (``scale_propensities``), whose realised homophily and degree drift
        upwards when degrees are coupled to communities.
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    n_nodes = check_int(n_nodes, "n_nodes", minimum=1)
    homophily = _real(homophily, "homophily")
    avg_degree = _real(avg_degree, "avg_degree")
    power_law_exponent = _real(power_law_exponent, "power_law_exponent")
    degree_separation = _real(degree_separation, "degree_separation")
    if not 0.0 <= homophily <= 1.0:
        raise ValueError(f"homophily must lie in [0, 1], got {homophily}")
    if not avg_degree > 0:
        raise ValueError(f"avg_degree must be > 0, got {avg_degree}")
    if n_nodes > 1 and avg_degree > n_nodes - 1:
        raise ValueError(
            f"avg_degree={avg_degree} cannot be reached by a simple graph of {n_nodes} nodes "
            f"(at most n_nodes - 1 = {n_nodes - 1})"
        )
    if not power_law_exponent > 1.0:
        raise ValueError(f"power_law_exponent must be > 1, got {power_law_exponent}")
    if not 0.0 <= degree_separation <= 1.0:
        raise ValueError(f"degree_separation must lie in [0, 1], got {degree_separation}")
    if communities is None:
        n_communities = check_int(n_communities, "n_communities", minimum=1, maximum=universe.K)
        comms = universe.sample_communities(n_communities, rng)
    else:
        comms = _check_communities(communities, universe.K)
    k = comms.size
    block = universe.P[np.ix_(comms, comms)]
    P_sub = scale_propensities(block, float(avg_degree), float(homophily), n_nodes)
    local = rng.integers(k, size=n_nodes)
    theta = degree_factors(
        local, universe.degree_centers[comms], float(power_law_exponent), float(degree_separation), rng
    )
    if calibrate:
        P_sub = calibrate_propensities(block, local, theta, float(avg_degree), float(homophily))
    edges = sample_edges(local, theta, P_sub, rng)
    edges = join_components(edges, local, theta, P_sub, rng)
    _warn_unmet_targets(edges, local, n_nodes, avg_degree, homophily if calibrate else None, k)
    y = comms[local]
    x = universe.sample_features(y, rng)
    params = {
        "n_nodes": n_nodes,
        "n_communities": int(k),
        "homophily": float(homophily),
        "avg_degree": float(avg_degree),
        "power_law_exponent": float(power_law_exponent),
        "degree_separation": float(degree_separation),
        "calibrate": bool(calibrate),
    }
    return GraphSample(
        edges=edges,
        y=y,
        x=x,
        communities=comms,
        local_labels=local,
        theta=theta,
        P_sub=P_sub,
        params=params,
        K=universe.K,
    )


def _warn_unmet_targets(
    edges: np.ndarray, local: np.ndarray, n_nodes: int, avg_degree: float, homophily: float | None, k: int
) -> None:
    """Warn, with the realised value, when edge probabilities clipped at 1 keep a target out of reach.

    ``homophily=None`` skips the homophily check (the authors' size-agnostic rescaling,
    ``calibrate=False``, does not aim at the realised homophily).

    Sampling noise alone stays far inside these bands for any graph big enough to matter (the
    realised degree is a sum of many Bernoulli draws); only saturation (target density too high for
    the degree factors and community sizes) moves it this far.
    """
    if n_nodes < 2:
        return
    realised = 2.0 * edges.shape[0] / n_nodes
    n_pairs = n_nodes * (n_nodes - 1) / 2.0
    expected_edges = avg_degree * n_nodes / 2.0
    sd = np.sqrt(max(expected_edges * (1.0 - expected_edges / n_pairs), 1.0))
    if realised < avg_degree and (expected_edges - edges.shape[0]) > max(6.0 * sd, 0.1 * expected_edges):
        warnings.warn(
            f"avg_degree={avg_degree:g} could not be reached on {n_nodes} nodes: realised average degree "
            f"{realised:.3g} (edge probabilities saturate at 1)",
            RuntimeWarning,
            stacklevel=3,
        )
    if homophily is not None and k > 1 and edges.shape[0] >= 50:
        realised_h = float(np.mean(local[edges[:, 0]] == local[edges[:, 1]]))
        h_sd = np.sqrt(homophily * (1 - homophily) / edges.shape[0])
        if abs(realised_h - homophily) > max(6.0 * h_sd, 0.1):
            warnings.warn(
                f"homophily={homophily:g} could not be reached on {n_nodes} nodes: realised edge homophily "
                f"{realised_h:.3g} (edge probabilities saturating at 1, few nodes per community, or the "
                "edges that join components)",
                RuntimeWarning,
                stacklevel=3,
            )


class GraphFamily(Sequence):
    """A family of graphs from one :class:`Universe`, with per-graph targets drawn from ranges.

    Parameters
    ----------
    universe : Universe
    n_graphs : int
    n_nodes : (min, max) ints, inclusive
    n_communities : (min, max) ints, inclusive; ``max`` defaults to ``universe.K``
    homophily, avg_degree, power_law_exponent, degree_separation : (min, max) floats, uniform
    calibrate : bool, default=True
        See :func:`sample_graph` (``False`` = the authors' exact rescaling).
    seed : int
        Graph ``i`` is sampled from ``default_rng([seed, i])``, so any graph can be regenerated alone.
    allowed_community_combinations : list of lists of int, optional
        As the authors' ``generate_family``: every graph uses one of these community sets (drawn
        uniformly) instead of a sampled connected subset; ``n_communities`` is then ignored.
    show_progress : bool

    The family is a sequence of :class:`GraphSample`; ``to_pyg()`` gives a list of PyG ``Data``
    (collatable by ``InMemoryDataset.collate``), ``save(path)`` / ``GraphFamily.load(path)`` store it.
    """

    def __init__(
        self,
        universe: Universe,
        n_graphs: int = 100,
        n_nodes: tuple[int, int] = (25, 200),
        n_communities: tuple[int, int] | None = None,
        homophily: tuple[float, float] = (0.0, 0.4),
        avg_degree: tuple[float, float] = (1.0, 3.0),
        power_law_exponent: tuple[float, float] = (2.0, 3.5),
        degree_separation: tuple[float, float] = (0.5, 0.5),
        seed: int = 42,
        calibrate: bool = True,
        show_progress: bool = False,
        graphs: list[GraphSample] | None = None,
        allowed_community_combinations: Sequence[Sequence[int]] | None = None,
    ) -> None:
        if not isinstance(universe, Universe):
            raise ValueError(f"universe must be a Universe, got {type(universe).__name__}")
        self.universe = universe
        self.n_graphs = check_int(n_graphs, "n_graphs", minimum=0)
        self.n_nodes = _range(n_nodes, "n_nodes", 1, np.inf, integer=True)
        self.n_communities = _range(
            n_communities if n_communities is not None else (min(2, universe.K), universe.K),
            "n_communities",
            1,
            universe.K,
            integer=True,
        )
        self.homophily = _range(homophily, "homophily", 0.0, 1.0)
        self.avg_degree = _range(avg_degree, "avg_degree", 1e-9, np.inf)
        self.power_law_exponent = _range(power_law_exponent, "power_law_exponent", 1.0 + 1e-9, np.inf)
        self.degree_separation = _range(degree_separation, "degree_separation", 0.0, 1.0)
        self.seed = check_int(seed, "seed", minimum=0)
        self.calibrate = bool(calibrate)
        if allowed_community_combinations is None:
            self.allowed_community_combinations = None
        else:
            combos = list(allowed_community_combinations)
            if not combos:
                raise ValueError("allowed_community_combinations must hold at least one community list")
            self.allowed_community_combinations = [_check_communities(c, universe.K).tolist() for c in combos]
        if graphs is not None:
            self.graphs = list(graphs)
            return
        it = range(self.n_graphs)
        if show_progress:
            from tqdm.auto import tqdm

            it = tqdm(it, desc="graphuniverse: sampling family", leave=False)
        self.graphs = [self.sample(i) for i in it]

    def sample_params(self, rng: np.random.Generator) -> dict:
        """Per-graph targets, drawn uniformly from the family's ranges (authors' order)."""
        return {
            "n_nodes": int(rng.integers(self.n_nodes[0], self.n_nodes[1] + 1)),
            "n_communities": int(rng.integers(self.n_communities[0], self.n_communities[1] + 1)),
            "homophily": float(rng.uniform(*self.homophily)),
            "avg_degree": float(rng.uniform(*self.avg_degree)),
            "degree_separation": float(rng.uniform(*self.degree_separation)),
            "power_law_exponent": float(rng.uniform(*self.power_law_exponent)),
        }

    def sample(self, index: int) -> GraphSample:
        """(Re)generate graph ``index`` of the family."""
        rng = np.random.default_rng([self.seed, int(index)])
        params = self.sample_params(rng)
        communities = None
        if self.allowed_community_combinations is not None:
            combos = self.allowed_community_combinations
            communities = combos[int(rng.integers(len(combos)))]
            params["n_communities"] = len(communities)
        return sample_graph(
            self.universe, **params, seed=rng, calibrate=self.calibrate, communities=communities
        )

    @property
    def num_classes(self) -> int:
        """Number of community classes: the universe's K (labels are universe community ids)."""
        return self.universe.K

    # Sequence protocol
    def __len__(self) -> int:
        return len(self.graphs)

    def __getitem__(self, i):
        return self.graphs[i]

    def __iter__(self) -> Iterator[GraphSample]:
        return iter(self.graphs)

    def config(self) -> dict:
        return {
            "universe": self.universe.to_dict(),
            "n_graphs": self.n_graphs,
            "n_nodes": list(self.n_nodes),
            "n_communities": list(self.n_communities),
            "homophily": list(self.homophily),
            "avg_degree": list(self.avg_degree),
            "power_law_exponent": list(self.power_law_exponent),
            "degree_separation": list(self.degree_separation),
            "seed": self.seed,
            "calibrate": self.calibrate,
            "allowed_community_combinations": self.allowed_community_combinations,
        }

    def to_pyg(self, tasks=("community_detection", "triangle_counting")) -> list:
        """List of ``torch_geometric.data.Data``, one per graph (see :meth:`GraphSample.to_pyg`).

        ``tasks`` is a sequence of task names, or one task name as a string (the authors'
        ``to_pyg_graphs(task)`` form: that task's target becomes ``y``).
        """
        return [g.to_pyg(tasks) for g in self.graphs]

    def to_dataset(self, root: str | os.PathLike, task: str | Sequence[str] = "community_detection"):
        """This family as a :class:`GraphUniverseDataset` (a PyG ``InMemoryDataset``) under ``root``."""
        from ._dataset import GraphUniverseDataset

        return GraphUniverseDataset(root, family=self, task=task)

    def to_networkx(self) -> list:
        return [g.to_networkx() for g in self.graphs]

    def properties(self) -> list[dict]:
        return [g.properties() for g in self.graphs]

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | os.PathLike) -> Path:
        """Write the family (universe arrays, every graph, the config) to one ``.npz``, atomically."""
        u = self.universe
        arrays: dict[str, np.ndarray] = {
            "P": u.P,
            "degree_centers": u.degree_centers,
            "feature_centers": u.feature_centers,
        }
        metas = []
        for i, g in enumerate(self.graphs):
            for name in ("edges", "y", "x", "communities", "local_labels", "theta", "P_sub"):
                arrays[f"g{i}_{name}"] = getattr(g, name)
            metas.append(g.params)
        meta = {"config": self.config(), "graphs": metas, "format": "iclr26.graphuniverse/1"}
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        buf = io.BytesIO()
        np.savez_compressed(buf, **arrays)
        return atomic_write_bytes(path, buf.getvalue())

    @classmethod
    def load(cls, path: str | os.PathLike) -> GraphFamily:
        """Read a family written by :meth:`save` (arrays restored exactly)."""
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(bytes(z["meta"]).decode())
            if meta.get("format") != "iclr26.graphuniverse/1":
                raise ValueError(f"{path} is not a saved GraphFamily")
            cfg = meta["config"]
            u = Universe(**cfg["universe"], P=z["P"])
            u.degree_centers = z["degree_centers"]
            u.feature_centers = z["feature_centers"]
            graphs = []
            for i, params in enumerate(meta["graphs"]):
                fields = {
                    name: z[f"g{i}_{name}"]
                    for name in ("edges", "y", "x", "communities", "local_labels", "theta", "P_sub")
                }
                graphs.append(GraphSample(**fields, params=params, K=u.K))
        kwargs = {
            k: cfg[k]
            for k in (
                "n_graphs",
                "n_nodes",
                "n_communities",
                "homophily",
                "avg_degree",
                "power_law_exponent",
                "degree_separation",
                "seed",
                "calibrate",
                "allowed_community_combinations",
            )
            if k in cfg
        }
        return cls(u, **{k: tuple(v) if isinstance(v, list) else v for k, v in kwargs.items()}, graphs=graphs)
