"""One sampled graph: arrays, measured properties, graph-level targets and exports (PyG, networkx)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse

from ..validation import check_int

TASKS = (
    "community_detection",
    "triangle_counting",
    "k_hop_community_counts_k1",
    "k_hop_community_counts_k2",
    "k_hop_community_counts_k3",
    "community_homophily_vector",
)


@dataclass
class GraphSample:
    """A graph sampled from a :class:`Universe` by the DCCC-SBM.

    Attributes
    ----------
    edges : ndarray of shape (E, 2), int64
        Undirected edges, each once, ``i < j``, sorted.
    y : ndarray of shape (n,), int64
        Universe-level community of every node (the same id means the same community in every graph).
    x : ndarray of shape (n, feature_dim), float32
        Node features.
    communities : ndarray of shape (k,)
        The universe communities of this graph, in local order (``local_labels`` index into it).
    local_labels : ndarray of shape (n,)
        Local community index of every node.
    theta : ndarray of shape (n,)
        Degree factors (mean 1).
    P_sub : ndarray of shape (k, k)
        Edge probabilities between the local communities after rescaling.
    params : dict
        The sampled targets: n_nodes, n_communities, homophily, avg_degree, power_law_exponent,
        degree_separation.
    """

    edges: np.ndarray
    y: np.ndarray
    x: np.ndarray
    communities: np.ndarray
    local_labels: np.ndarray
    theta: np.ndarray
    P_sub: np.ndarray
    params: dict[str, Any] = field(default_factory=dict)
    K: int = 0

    # ------------------------------------------------------------------ basics
    @property
    def n_nodes(self) -> int:
        return int(self.y.shape[0])

    @property
    def n_edges(self) -> int:
        return int(self.edges.shape[0])

    def adjacency(self) -> sparse.csr_matrix:
        """Symmetric (n, n) CSR adjacency matrix."""
        n = self.n_nodes
        e = self.edges
        rows = np.concatenate([e[:, 0], e[:, 1]])
        cols = np.concatenate([e[:, 1], e[:, 0]])
        return sparse.csr_matrix((np.ones(rows.size, dtype=np.float64), (rows, cols)), shape=(n, n))

    def degrees(self) -> np.ndarray:
        return np.bincount(self.edges.ravel(), minlength=self.n_nodes)

    def edge_index(self) -> np.ndarray:
        """(2, 2E) int64 array with both directions, as PyG expects."""
        e = self.edges
        return np.concatenate([e.T, e[:, ::-1].T], axis=1)

    # ------------------------------------------------------------------ measured properties
    def edge_homophily(self) -> float:
        """Fraction of edges joining two nodes of the same community (what the homophily target sets)."""
        if self.n_edges == 0:
            return float("nan")
        return float(np.mean(self.y[self.edges[:, 0]] == self.y[self.edges[:, 1]]))

    def community_homophily_vector(self) -> np.ndarray:
        """Authors' per-community homophily, shape (K,): e_cc / (e_cc + sum_{d != c} e_cd), 0 if absent.

        As ``GraphSample.calculate_per_community_homophily``: an intra-community edge counts once for
        its community, an inter-community edge once for each of its two communities.
        """
        out = np.zeros(self.K)
        if self.n_edges == 0:
            return out
        a, b = self.y[self.edges[:, 0]], self.y[self.edges[:, 1]]
        same = a == b
        intra = np.bincount(a[same], minlength=self.K).astype(float)
        touch = intra + np.bincount(a[~same], minlength=self.K) + np.bincount(b[~same], minlength=self.K)
        np.divide(intra, touch, out=out, where=touch > 0)
        return out

    def community_homophily(self) -> float:
        """Authors' realised homophily: mean per-community homophily over the graph's communities."""
        return float(self.community_homophily_vector()[self.communities].mean())

    def average_degree(self) -> float:
        return 2.0 * self.n_edges / max(self.n_nodes, 1)

    def is_connected(self) -> bool:
        from scipy.sparse.csgraph import connected_components

        return connected_components(self.adjacency(), directed=False)[0] == 1

    def triangles(self) -> np.ndarray:
        """Number of triangles through each node, shape (n,)."""
        A = self.adjacency()
        return np.asarray((A @ A).multiply(A).sum(axis=1)).ravel() / 2.0

    def triangle_count(self) -> int:
        return int(round(self.triangles().sum() / 3.0))

    def khop_community_counts(self, k: int) -> np.ndarray:
        """(n, K) counts of nodes at shortest-path distance exactly ``k``, per universe community.

        Breadth-first search from blocks of source nodes at once: each hop multiplies the block's
        sparse frontier by the adjacency and keeps the nodes not yet reached (a dense visited mask
        per block), so time is the total size of the explored ``k``-hop neighbourhoods and memory is
        one block's mask (at most about 32 MB) plus its frontier.
        """
        k = check_int(k, "k", minimum=0)
        n, K = self.n_nodes, self.K
        out = np.zeros((n, K))
        if k == 0:
            out[np.arange(n), self.y] = 1.0
            return out
        A = self.adjacency().astype(np.int32)
        block = int(max(1, min(n, 32_000_000 // max(n, 1))))
        for lo in range(0, n, block):
            hi = min(n, lo + block)
            b = hi - lo
            rows = np.arange(b)
            cols = np.arange(lo, hi)
            visited = np.zeros((b, n), dtype=bool)
            visited[rows, cols] = True
            for _ in range(k):
                frontier = sparse.csr_matrix((np.ones(rows.size, dtype=np.int32), (rows, cols)), shape=(b, n))
                nxt = (frontier @ A).tocoo()
                rows, cols = nxt.row, nxt.col
                new = ~visited[rows, cols]
                rows, cols = rows[new], cols[new]
                visited[rows, cols] = True
            counts = np.bincount(rows * K + self.y[cols], minlength=b * K)
            out[lo:hi] = counts.reshape(b, K)
        return out

    def power_law_fit(self) -> float:
        """Discrete power-law exponent of the degree distribution (MLE, x_min = 1, as the authors)."""
        from scipy.optimize import minimize_scalar

        d = self.degrees()
        d = d[d > 0].astype(float)
        if d.size < 2:
            return float("nan")
        kmin = d.min()
        ks = np.arange(kmin, max(100.0, 2 * d.max()) + 1)
        logs = np.log(d).sum()
        nll = lambda a: a * logs + d.size * np.log(np.sum(ks ** (-a)))
        return float(minimize_scalar(nll, bounds=(1.01, 10.0), method="bounded").x)

    def community_signal(self, seed: int = 0) -> dict[str, float]:
        """Learnable community signals (macro F1 of a random forest, 70/30 split), as the authors'
        ``calculate_community_signals``: ``feature`` (node features), ``structure`` (counts of
        communities among the 1-, 2-, 3-hop neighbours) and ``degree`` (node degree)."""
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.metrics import f1_score
        from sklearn.model_selection import train_test_split

        y = self.y
        counts = np.bincount(y)
        strat = y if counts[counts > 0].min() >= 2 else None
        inputs = {
            "feature": self.x,
            "structure": np.hstack([self.khop_community_counts(k) for k in (1, 2, 3)]),
            "degree": self.degrees()[:, None].astype(float),
        }
        out = {}
        for name, X in inputs.items():
            Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=strat, random_state=seed)
            clf = RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=1).fit(Xtr, ytr)
            out[name] = float(f1_score(yte, clf.predict(Xte), average="macro"))
        return out

    def properties(self) -> dict[str, float]:
        """Realised properties next to their targets."""
        return {
            "n_nodes": self.n_nodes,
            "n_edges": self.n_edges,
            "n_communities": int(np.unique(self.y).size),
            "target_homophily": float(self.params.get("homophily", np.nan)),
            "edge_homophily": self.edge_homophily(),
            "community_homophily": self.community_homophily(),
            "target_avg_degree": float(self.params.get("avg_degree", np.nan)),
            "avg_degree": self.average_degree(),
            "power_law_exponent": float(self.params.get("power_law_exponent", np.nan)),
            "degree_power_law_fit": self.power_law_fit(),
        }

    # ------------------------------------------------------------------ exports
    def to_pyg(self, tasks: str | tuple[str, ...] | list[str] = ("community_detection", "triangle_counting")):
        """A ``torch_geometric.data.Data`` with ``x``, ``edge_index``, ``y`` and one attribute per task.

        ``tasks``: a sequence of task names (``y`` = universe community, one attribute per task), or a
        single task name as a string, the authors' ``to_pyg_graph(task)`` form, where ``y`` is that
        task's target (community ids for ``community_detection``, the triangle count for
        ``triangle_counting``). Tasks (authors' names): ``community_detection``, ``triangle_counting``
        (graph level, shape (1,)), ``k_hop_community_counts_k{N}`` (n, K), ``community_homophily_vector``
        (1, K).
        """
        import torch
        from torch_geometric.data import Data

        single = isinstance(tasks, str)
        task_list = [tasks] if single else list(tasks)
        for task in task_list:
            if not isinstance(task, str):
                raise ValueError(f"tasks must be task names (strings), got {task!r}")
            known = task in TASKS or (
                task.startswith("k_hop_community_counts_k") and task.rsplit("k", 1)[-1].isdigit()
            )
            if not known:
                raise ValueError(f"unknown task {task!r}; expected one of {TASKS} (any k for k-hop)")
        data = Data(
            x=torch.from_numpy(np.ascontiguousarray(self.x)),
            edge_index=torch.from_numpy(np.ascontiguousarray(self.edge_index())),
            y=torch.from_numpy(self.y.copy()),
        )
        for task in task_list:
            if task == "community_detection":
                data.community_detection = data.y
            elif task == "triangle_counting":
                data.triangle_counting = torch.tensor([float(self.triangle_count())])
            elif task.startswith("k_hop_community_counts_k"):
                k = int(task.rsplit("k", 1)[-1])
                data[task] = torch.from_numpy(self.khop_community_counts(k)).float()
            else:
                data.community_homophily_vector = torch.from_numpy(self.community_homophily_vector()).float()[
                    None
                ]
        if single:
            data.y = data[task_list[0]]
        return data

    def to_networkx(self):
        """A ``networkx.Graph`` with node attributes ``community`` and ``x``."""
        import networkx as nx

        G = nx.Graph()
        G.add_nodes_from((i, {"community": int(self.y[i]), "x": self.x[i]}) for i in range(self.n_nodes))
        G.add_edges_from(map(tuple, self.edges.tolist()))
        G.graph.update(self.params)
        return G
