"""Graph families: many graphs sampled from one universe, and their save/load."""

from __future__ import annotations

import io
import json
import os
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
    if not 0.0 <= float(homophily) <= 1.0:
        raise ValueError(f"homophily must lie in [0, 1], got {homophily}")
    if not float(avg_degree) > 0:
        raise ValueError(f"avg_degree must be > 0, got {avg_degree}")
    if not float(power_law_exponent) > 1.0:
        raise ValueError(f"power_law_exponent must be > 1, got {power_law_exponent}")
    if not 0.0 <= float(degree_separation) <= 1.0:
        raise ValueError(f"degree_separation must lie in [0, 1], got {degree_separation}")
    if communities is None:
        n_communities = check_int(n_communities, "n_communities", minimum=1, maximum=universe.K)
        comms = universe.sample_communities(n_communities, rng)
    else:
        comms = np.asarray(communities, dtype=np.int64)
        if comms.ndim != 1 or comms.size == 0 or np.unique(comms).size != comms.size:
            raise ValueError("communities must be a non-empty list of distinct community ids")
        if comms.min() < 0 or comms.max() >= universe.K:
            raise ValueError(f"communities must lie in [0, {universe.K - 1}]")
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
        return sample_graph(self.universe, **self.sample_params(rng), seed=rng, calibrate=self.calibrate)

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
        }

    def to_pyg(self, tasks=("community_detection", "triangle_counting")) -> list:
        """List of ``torch_geometric.data.Data``, one per graph (see :meth:`GraphSample.to_pyg`)."""
        return [g.to_pyg(tasks) for g in self.graphs]

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
            )
        }
        return cls(u, **{k: tuple(v) if isinstance(v, list) else v for k, v in kwargs.items()}, graphs=graphs)
