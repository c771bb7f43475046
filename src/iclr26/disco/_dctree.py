"""The density-connectivity (dc) tree without an n x n matrix.

Definitions (Beer et al., KDD 2023; DISCO, ICLR 2026):

- core distance ``core(x)``: the distance from ``x`` to its ``min_points``-th nearest neighbour,
  ``x`` itself counted as the first (so ``min_points=1`` gives 0);
- mutual reachability ``mr(x, y) = max(core(x), core(y), ||x - y||)`` for ``x != y``;
- dc distance ``dc(x, y)``: the smallest possible largest ``mr`` edge on a path from ``x`` to ``y``,
  i.e. the largest edge on the path between them in a minimum spanning tree (MST) of the
  mutual-reachability graph. ``dc(x, x) = 0``.

The dc distance is an ultrametric: ``dc(x, y)`` is the height of the lowest common ancestor of ``x``
and ``y`` in the single-linkage dendrogram of the MST. This module builds that dendrogram in
O(n) memory and answers, for a set ``S`` of points, in O(n) time and memory:

- ``sums_to(S)``: ``sum_{y in S} dc(x, y)`` for every point ``x``;
- ``min_to(S)``: ``min_{y in S} dc(x, y)`` for every point ``x`` not in ``S``.

Both work on the dendrogram's leaf order, in which every node's leaves form one interval.

``sums_to``: for a node ``u`` with parent ``v`` and sibling ``w``, every leaf ``x`` under ``u`` is at
dc distance ``h(v)`` from every point under ``w``, so it collects ``g(u) = h(v) * |S ∩ w|`` there; the
sum for ``x`` is the total of ``g`` over the nodes on its path to the root, i.e. over the intervals
that hold ``x``'s position. That total is (cumulative ``g`` of intervals that start at or before the
position) minus (cumulative ``g`` of intervals that end at or before it), both accumulated in extended
precision from a node order fixed once per tree. Sums that are exactly zero (all of ``S`` within
``x``'s zero-height group) are set to exactly zero.

``min_to``: the lowest ancestor of ``x`` that holds a point of ``S`` gives the minimum (heights grow
towards the root); the "frontier" nodes (no point of ``S`` below, some below the parent) partition the
positions not in ``S``, and each one's leaves get the parent's height.
"""

from __future__ import annotations

import numpy as np
from sklearn.neighbors import KDTree

__all__ = ["MST_METHODS", "DCTree", "core_distances", "mutual_reachability_mst", "resolve_mst_method"]


def core_distances(X: np.ndarray, min_points: int) -> np.ndarray:
    """Distance of each point to its ``min_points``-th nearest neighbour, the point itself included."""
    dist, _ = KDTree(X).query(X, k=min_points)
    return dist[:, -1].copy()


def _mst_prim(X: np.ndarray, core: np.ndarray) -> np.ndarray:
    """Prim's algorithm on the implicit mutual-reachability graph: O(n^2 d) time, O(n d) memory.

    Squared distances are summed over the coordinates in order (as scikit-learn's ``KDTree`` and the
    compiled Borůvka do), so the weights are bit-identical to theirs.
    Returns an ``(n - 1, 3)`` array of edges ``(i, j, mr(i, j))``.
    """
    n, n_features = X.shape
    remaining = np.arange(1, n)
    Xr = X[1:].T.copy()  # (d, n - 1): one contiguous row per coordinate
    core_r = core[1:].copy()
    best = np.full(n - 1, np.inf)
    best_from = np.zeros(n - 1, dtype=np.int64)
    edges = np.empty((n - 1, 3))
    d = np.empty(n - 1)
    diff = np.empty(n - 1)
    u = 0
    m = n - 1
    for step in range(n - 1):
        np.subtract(Xr[0, :m], X[u, 0], out=d[:m])
        np.multiply(d[:m], d[:m], out=d[:m])
        for j in range(1, n_features):
            np.subtract(Xr[j, :m], X[u, j], out=diff[:m])
            np.multiply(diff[:m], diff[:m], out=diff[:m])
            d[:m] += diff[:m]
        np.sqrt(d[:m], out=d[:m])
        np.maximum(d[:m], core_r[:m], out=d[:m])
        np.maximum(d[:m], core[u], out=d[:m])
        upd = d[:m] < best[:m]
        best[:m][upd] = d[:m][upd]
        best_from[:m][upd] = u
        j = int(np.argmin(best[:m]))
        v = int(remaining[j])
        edges[step] = (best_from[j], v, best[j])
        u = v
        m -= 1
        # Delete position j by moving the last remaining point there.
        remaining[j] = remaining[m]
        Xr[:, j] = Xr[:, m]
        core_r[j] = core_r[m]
        best[j] = best[m]
        best_from[j] = best_from[m]
    return edges


def _mst_hdbscan(X: np.ndarray, min_points: int) -> np.ndarray:
    """Exact dual-tree Borůvka MST of the mutual-reachability graph, through ``hdbscan``'s public API.

    ``hdbscan.HDBSCAN(algorithm="boruvka_kdtree", approx_min_span_tree=False, gen_min_span_tree=True)``
    keeps the exact spanning tree it clusters from (``minimum_spanning_tree_``). ``hdbscan`` takes the
    core distance as the distance to the ``min_samples``-th neighbour *not* counting the point itself,
    so ``min_samples = min_points - 1`` gives the DISCO core distance (checked against a dense
    reference in the tests). The clustering it also computes costs O(n) on top.
    """
    import warnings

    from hdbscan import HDBSCAN

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = HDBSCAN(
            min_cluster_size=2,
            min_samples=min_points - 1,
            algorithm="boruvka_kdtree",
            approx_min_span_tree=False,
            gen_min_span_tree=True,
            core_dist_n_jobs=1,
        ).fit(X)
    return np.asarray(model.minimum_spanning_tree_.to_numpy(), dtype=np.float64)


def _importable(name: str) -> bool:
    try:
        __import__(name)
    except ImportError:
        return False
    return True


MST_METHODS = ("auto", "boruvka", "hdbscan", "prim")


def resolve_mst_method(method: str) -> str:
    """The MST method ``method`` stands for (``"auto"`` resolved); raises for unknown names or a
    method whose package is missing."""
    if method not in MST_METHODS:
        raise ValueError(f"method must be one of {MST_METHODS}, got {method!r}")
    if method == "auto":
        if _importable("numba"):
            return "boruvka"
        return "hdbscan" if _importable("hdbscan") else "prim"
    needs = {"boruvka": "numba", "hdbscan": "hdbscan"}.get(method)
    if needs is not None and not _importable(needs):
        raise ImportError(f"method={method!r} needs the {needs!r} package (pip install 'iclr26[disco]')")
    return method


def mutual_reachability_mst(
    X: np.ndarray, min_points: int, method: str = "auto", core: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """An MST of the mutual-reachability graph of ``X``, and the core distances when known.

    Every MST of the graph gives the same dc distances (the minimax path weights), so the methods
    differ only in time and in which of several equal-weight trees they return.

    Parameters
    ----------
    X : ndarray of shape (n, d), float64 (not validated)
    min_points : int
    method : {"auto", "boruvka", "hdbscan", "prim"}
        ``"boruvka"``: our exact Borůvka over a KD-tree, compiled with numba
        (:mod:`iclr26.disco._boruvka`; it computes the core distances on the way);
        ``"hdbscan"``: hdbscan's exact dual-tree Borůvka through its public ``HDBSCAN`` class;
        ``"prim"``: Prim's algorithm, O(n^2 d) time, O(n d) memory, no dependency.
        ``"auto"``: ``"boruvka"`` when numba is installed, else ``"hdbscan"`` when hdbscan is,
        else ``"prim"``. The order is that of warm whole-call timings on Gaussian blobs + 10 %
        uniform noise, n = 10,000 (``benchmarks/disco_scaling.py --methods boruvka hdbscan prim``):
        CPU seconds 0.04 / 0.16 / 0.42 at d = 2, 0.19 / 0.89 / 1.13 at d = 10 and
        0.92 / 2.83 / 2.99 at d = 30 (a loaded machine; see docs/disco.md).
    core : ndarray of shape (n,), optional
        Core distances when already computed (Prim uses them; the other methods compute their own).

    Returns
    -------
    mst : ndarray of shape (n - 1, 3)
        Edges ``(i, j, mr(i, j))``.
    core : ndarray of shape (n,) or None
        The core distances: ``core`` if given, else those computed on the way (``"boruvka"``,
        ``"prim"``), else None.
    """
    method = resolve_mst_method(method)
    if method == "boruvka":
        from ._boruvka import boruvka_mst

        mst, own_core = boruvka_mst(X, min_points)
        return mst, own_core if core is None else core
    if method == "hdbscan":
        return _mst_hdbscan(X, min_points), core
    if core is None:
        core = core_distances(X, min_points)
    return _mst_prim(X, core), core


class DCTree:
    """The dc tree: single-linkage dendrogram of a mutual-reachability MST, with O(n) aggregates.

    Build one from data with :func:`iclr26.disco.dc_tree` (validated input) or
    :meth:`DCTree.from_data`. The dc distance of two points is the height of their lowest common
    ancestor.

    Parameters
    ----------
    n : int
        Number of points (>= 2).
    mst : ndarray of shape (n - 1, 3)
        Spanning-tree edges ``(i, j, weight)`` (any order).
    core : ndarray of shape (n,), optional
        The core distances, kept as :attr:`core` when given.

    Attributes
    ----------
    n : int
    parent : ndarray of shape (2n - 1,)
        Parent node of every node (-1 for the root). Nodes ``0..n-1`` are the points, node ``n + i``
        is the ``i``-th merge by increasing weight; the root is node ``2n - 2``.
    height : ndarray of shape (2n - 1,)
        Merge height of every node (0 for the points): dc distances are these heights.
    start, end : ndarray of shape (2n - 1,)
        Every node's leaves occupy the leaf positions ``[start, end)``.
    order : ndarray of shape (n,)
        The point at each leaf position.
    core : ndarray of shape (n,) or None
        Core distances, when the tree was built from data.
    """

    def __init__(self, n: int, mst: np.ndarray, core: np.ndarray | None = None) -> None:
        if n < 2:
            raise ValueError("a dc tree needs at least 2 points")
        self.n = n
        self.core = None if core is None else np.asarray(core, dtype=np.float64)
        order = np.argsort(mst[:, 2], kind="stable")
        ii = mst[order, 0].astype(np.int64).tolist()
        jj = mst[order, 1].astype(np.int64).tolist()
        heights = mst[order, 2].astype(np.float64)
        n_nodes = 2 * n - 1

        # Kruskal with union-find: merge i joins the two current components of edge i.
        uf = list(range(n))
        uf_size = [1] * n
        top = list(range(n))  # the dendrogram node currently representing each union-find root
        parent = [-1] * n_nodes
        left = [0] * (n - 1)
        right = [0] * (n - 1)
        size = [1] * n + [0] * (n - 1)
        for k in range(n - 1):
            a = ii[k]
            while uf[a] != a:
                uf[a] = uf[uf[a]]
                a = uf[a]
            b = jj[k]
            while uf[b] != b:
                uf[b] = uf[uf[b]]
                b = uf[b]
            if a == b:
                raise ValueError("the edge list is not a spanning tree (it has a cycle)")
            node = n + k
            ta, tb = top[a], top[b]
            left[k], right[k] = ta, tb
            parent[ta] = node
            parent[tb] = node
            size[node] = size[ta] + size[tb]
            if uf_size[a] < uf_size[b]:
                a, b = b, a
            uf[b] = a
            uf_size[a] += uf_size[b]
            top[a] = node

        # Leaf order: each node's leaves are the interval [start, start + size).
        start = [0] * n_nodes
        for k in range(n - 2, -1, -1):
            s = start[n + k]
            la = left[k]
            start[la] = s
            start[right[k]] = s + size[la]

        self.parent = np.asarray(parent, dtype=np.int64)
        self.height = np.concatenate([np.zeros(n), heights])
        self.start = np.asarray(start, dtype=np.int64)
        self.end = self.start + np.asarray(size, dtype=np.int64)
        self.pos = self.start[:n].copy()  # leaf position of each point
        self.order = np.empty(n, dtype=np.int64)
        self.order[self.pos] = np.arange(n)  # point at each leaf position

        nr = n_nodes - 1  # the non-root nodes are 0 .. 2n-3
        self._par = self.parent[:nr]
        self._hpar = self.height[self._par]
        # Fixed node orders and cut points for the interval sums of sums_to.
        self._perm_s = np.argsort(self.start[:nr], kind="stable")
        self._perm_e = np.argsort(self.end[:nr], kind="stable")
        positions = np.arange(n)
        self._cut_s = np.searchsorted(self.start[:nr][self._perm_s], positions, side="right")
        self._cut_e = np.searchsorted(self.end[:nr][self._perm_e], positions, side="right")
        # Maximal zero-height groups (points at dc distance 0 from each other), per leaf position.
        h = self.height
        is_top_zero = np.zeros(n_nodes, dtype=bool)
        is_top_zero[:nr] = (h[:nr] == 0) & (self._hpar > 0)
        is_top_zero[-1] = h[-1] == 0
        zero_nodes = np.flatnonzero(is_top_zero)
        zero_nodes = zero_nodes[np.argsort(self.start[zero_nodes], kind="stable")]
        zsize = self.end[zero_nodes] - self.start[zero_nodes]
        self._zstart = np.repeat(self.start[zero_nodes], zsize)
        self._zend = np.repeat(self.end[zero_nodes], zsize)

    @classmethod
    def from_data(
        cls, X: np.ndarray, min_points: int, method: str = "auto", core: np.ndarray | None = None
    ) -> DCTree:
        """The dc tree of a float ``(n, d)`` array (not validated; see :func:`iclr26.disco.dc_tree`).

        ``method``: the MST method (see :func:`mutual_reachability_mst`). ``core``: the core distances
        if already computed. The tree keeps the core distances (computed when the MST search did not
        give them).
        """
        mst, core = mutual_reachability_mst(X, min_points, method=method, core=core)
        if core is None:
            core = core_distances(X, min_points)
        return cls(X.shape[0], mst, core=core)

    def _rescale(self, e: int) -> None:
        """Multiply every distance by ``2**e`` (exact), after building on data scaled by ``2**-e``."""
        with np.errstate(over="ignore"):
            self.height = np.ldexp(self.height, e)
            self._hpar = np.ldexp(self._hpar, e)
            if self.core is not None:
                self.core = np.ldexp(self.core, e)
        if not (np.isfinite(self.height).all() and (self.core is None or np.isfinite(self.core).all())):
            raise ValueError("dc distances of X exceed the float64 range; rescale X")

    def dc_to(self, i: int) -> np.ndarray:
        """dc distances from point ``i`` to every point, shape ``(n,)`` (O(n))."""
        mask = np.zeros(self.n, dtype=bool)
        mask[i] = True
        return self.min_to(mask)

    def _counts(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-node counts of ``mask`` points, and the prefix counts over leaf positions."""
        prefix = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(mask[self.order], out=prefix[1:])
        return prefix[self.end] - prefix[self.start], prefix

    def sums_to(self, mask: np.ndarray) -> np.ndarray:
        """``sum_{y: mask[y]} dc(x, y)`` for every point ``x`` (point order), shape ``(n,)``."""
        cnt, prefix = self._counts(mask)
        g = self._hpar * (cnt[self._par] - cnt[:-1])
        cs = np.zeros(g.size + 1, dtype=np.longdouble)
        np.cumsum(g[self._perm_s], dtype=np.longdouble, out=cs[1:])
        ce = np.zeros(g.size + 1, dtype=np.longdouble)
        np.cumsum(g[self._perm_e], dtype=np.longdouble, out=ce[1:])
        by_pos = (cs[self._cut_s] - ce[self._cut_e]).astype(np.float64)
        # Exact zeros: every masked point shares x's zero-height group.
        in_zero_group = prefix[self._zend] - prefix[self._zstart]
        by_pos[in_zero_group == prefix[-1]] = 0.0
        np.maximum(by_pos, 0.0, out=by_pos)
        return by_pos[self.pos]

    def min_to(self, mask: np.ndarray) -> np.ndarray:
        """``min_{y: mask[y]} dc(x, y)`` for every point ``x`` with ``mask[x]`` false (point order).

        Points in the set get 0; everything is ``inf`` when the set is empty.
        """
        if not mask.any():
            return np.full(self.n, np.inf)
        cnt, _ = self._counts(mask)
        nr = cnt.size - 1
        frontier = np.flatnonzero((cnt[:nr] == 0) & (cnt[self._par] > 0))
        members = np.flatnonzero(mask)
        seg_start = np.concatenate([self.start[frontier], self.pos[members]])
        seg_size = np.concatenate(
            [self.end[frontier] - self.start[frontier], np.ones(members.size, np.int64)]
        )
        seg_val = np.concatenate([self._hpar[frontier], np.zeros(members.size)])
        o = np.argsort(seg_start, kind="stable")
        by_pos = np.repeat(seg_val[o], seg_size[o])
        return by_pos[self.pos]

    def dc_matrix(self) -> np.ndarray:
        """The full ``(n, n)`` dc-distance matrix (O(n^2) memory; for small ``n`` and tests)."""
        n = self.n
        D = np.zeros((n, n))
        for x in range(n):
            D[:, x] = self.dc_to(x)
        return D
