"""Reversible graph serialization: frequency-guided Eulerian circuits (the paper's "Feuler") and baselines.

A labelled undirected (multi)graph is turned into a sequence of integer *symbols* and back.

The walk
    Every undirected edge ``{u, v}`` is replaced by its two arcs ``u -> v`` and ``v -> u`` (a self-loop
    gives two arcs ``u -> u``), so every node has equal in- and out-degree and each connected component
    has an Eulerian circuit that crosses every edge exactly twice, once in each direction. Hierholzer's
    algorithm builds it. For ``method="feuler"`` the arcs leaving a node are tried in order of decreasing
    weight ``log10(count(label(u), label(e), label(v)))``, the count being the global triplet statistic
    collected over the training graphs (both directions of every edge; unseen triplets count 1, weight 0),
    ties broken by the neighbour's node index and then by the edge's index, the walk starting at the
    component's smallest node index, exactly as in the authors' ``FeulerSerializer``. ``method="euler"``
    uses the same circuit with all weights equal (neighbour order only); ``method="random"`` shuffles the
    arcs at every node and starts at a random node (the random-order ablation); ``method="dfs"`` is the
    depth-first serialization baseline: a depth-first walk in neighbour order that writes the return along
    every tree edge and crosses every non-tree edge there and straight back (Tarry's traversal, itself a
    circuit crossing each edge once per direction, so the same decoder applies).

The sequence
    For each position of the circuit: the edge-label symbol of the arc just crossed (omitted when the
    label is the globally most frequent one, as the authors do with ``omit_most_frequent_edge``), then
    the node-label symbol. Components are written largest first and joined by a separator symbol.

What makes it reversible (our addition)
    The authors' sequence holds labels only, so different graphs can share one sequence (a triangle and a
    path of three edges with equal labels both give seven identical symbols), and their code has no
    ``deserialize``. We add *revisit references*: when the circuit returns to a node already written, the
    node-label symbol is followed by the digits, in base ``reference_base`` (most significant first), of
    ``k = (number of distinct nodes written so far) - (rank of that node in order of first appearance)``
    (``k >= 1``). A reference so takes ``ceil(log_B(k + 1))`` symbols, whatever the graphs seen at fit.
    Deleting the digit symbols gives back the authors' sequence exactly; keeping them lets
    :func:`deserialize` rebuild the graph (every consecutive pair of positions is one arc; the arcs between
    two nodes, halved, are their edges with their labels).

Unseen labels
    A node or edge label not seen at fit (nor passed to :meth:`GraphSerializer.fit`) is written as an
    explicit unknown symbol, with a warning; it decodes as :data:`UNKNOWN_LABEL`.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np

METHODS = ("feuler", "euler", "random", "dfs")
UNKNOWN_LABEL = "[UNK]"
"""What a node or edge label unseen at fit decodes as."""

# Kinds of symbols in the base alphabet.
_SEP, _NODE, _EDGE, _REF, _UNK_NODE, _UNK_EDGE = "sep", "node", "edge", "ref", "unk_node", "unk_edge"


@dataclass(frozen=True)
class LabelledGraph:
    """A compact labelled undirected multigraph: ``node_labels[i]`` and edges ``(u, v, label)``.

    Node ``i`` is the ``i``-th node of the source graph in its iteration order; that order is the
    serializer's tie-break (the authors use the DGL node index the same way).
    """

    node_labels: tuple
    edges: tuple  # of (u, v, label), u and v node indices


def to_labelled(graph: Any, node_attr: str = "label", edge_attr: str = "label") -> LabelledGraph:
    """Convert a graph to a :class:`LabelledGraph`.

    Accepted: a networkx ``Graph``/``MultiGraph`` (labels in the ``node_attr`` / ``edge_attr`` attributes;
    a missing attribute is the label ``None``; parallel edges of a ``MultiGraph`` are kept, one edge each:
    that is how a multi-label edge is represented), a PyTorch Geometric ``Data`` (see
    :func:`from_pyg`), or a :class:`LabelledGraph`.
    """
    if isinstance(graph, LabelledGraph):
        return graph
    if hasattr(graph, "edge_index") and not isinstance(graph, nx.Graph):
        return from_pyg(graph)
    if not isinstance(graph, nx.Graph):
        raise ValueError(
            "graph must be a networkx Graph/MultiGraph, a torch_geometric Data or a LabelledGraph, "
            f"got {type(graph).__name__}"
        )
    if graph.is_directed():
        raise ValueError("graph must be undirected (the serialization walks both directions of every edge)")
    index = {node: i for i, node in enumerate(graph.nodes)}
    node_labels = tuple(_check_label(graph.nodes[n].get(node_attr)) for n in graph.nodes)
    if graph.is_multigraph():
        items = graph.edges(keys=True, data=True)
        edges = tuple((index[u], index[v], _check_label(d.get(edge_attr))) for u, v, _k, d in items)
    else:
        edges = tuple(
            (index[u], index[v], _check_label(d.get(edge_attr))) for u, v, d in graph.edges(data=True)
        )
    return LabelledGraph(node_labels, edges)


def _row_labels(t: Any, n: int, name: str) -> list:
    """Labels from a PyG feature tensor: ints for 1-D / one-column / one-hot rows, tuples otherwise."""
    if t is None:
        return [None] * n
    a = np.asarray(t.detach().cpu().numpy() if hasattr(t, "detach") else t)
    if a.shape[:1] != (n,):
        raise ValueError(f"{name} must have {n} rows, got shape {a.shape}")
    if a.ndim == 1 or (a.ndim == 2 and a.shape[1] == 1):
        return [_scalar(v) for v in a.reshape(n)]
    if a.ndim == 2 and a.shape[1] and np.isin(a, (0, 1)).all() and (a.sum(1) == 1).all():
        return [int(i) for i in a.argmax(1)]  # one-hot
    if a.ndim == 2:
        return [tuple(_scalar(v) for v in row) for row in a]
    raise ValueError(f"{name} must be 1-D or 2-D, got shape {a.shape}")


def _scalar(v: Any) -> Any:
    v = v.item() if hasattr(v, "item") else v
    return int(v) if isinstance(v, float) and v.is_integer() else v


def from_pyg(data: Any) -> LabelledGraph:
    """A :class:`LabelledGraph` from a PyTorch Geometric ``Data`` (undirected, both directions stored).

    Node labels come from ``data.x`` and edge labels from ``data.edge_attr`` (absent: ``None``): an
    integer per row for 1-D or one-column features and for one-hot rows, a tuple of the row's values
    otherwise. ``edge_index`` must hold every edge in both directions with the same label (the PyG
    convention for undirected graphs, ``torch_geometric.utils.to_undirected``); a self-loop may appear
    once. Raises ``ValueError`` otherwise.
    """
    ei = getattr(data, "edge_index", None)
    if ei is None:
        raise ValueError("data must have an edge_index of shape (2, num_edges)")
    ei = np.asarray(ei.detach().cpu().numpy() if hasattr(ei, "detach") else ei)
    if ei.ndim != 2 or ei.shape[0] != 2:
        raise ValueError(f"edge_index must have shape (2, num_edges), got {ei.shape}")
    n = getattr(data, "num_nodes", None)
    n = int(n) if n is not None else (int(ei.max()) + 1 if ei.size else 0)
    if ei.size and (ei.min() < 0 or ei.max() >= n):
        raise ValueError(f"edge_index holds node ids outside [0, {n - 1}]")
    nodes = _row_labels(getattr(data, "x", None), n, "x")
    elabs = _row_labels(getattr(data, "edge_attr", None), ei.shape[1], "edge_attr")
    arcs = Counter((int(u), int(v), lab) for (u, v), lab in zip(ei.T.tolist(), elabs, strict=True))
    edges = []
    for (u, v, lab), c in sorted(arcs.items(), key=lambda kv: (kv[0][0], kv[0][1], repr(kv[0][2]))):
        if u == v:
            edges += [(u, v, lab)] * c
        elif u < v:
            if arcs.get((v, u, lab), 0) != c:
                raise ValueError(
                    f"edge_index is not undirected: edge ({u}, {v}) with label {lab!r} is stored {c} time(s) "
                    f"one way and {arcs.get((v, u, lab), 0)} the other "
                    "(use torch_geometric.utils.to_undirected)"
                )
            edges += [(u, v, lab)] * c
        elif (v, u, lab) not in arcs:
            raise ValueError(
                f"edge_index is not undirected: edge ({u}, {v}) has no reverse (use to_undirected)"
            )
    return LabelledGraph(tuple(_check_label(x) for x in nodes), tuple(edges))


def _check_label(label: Any) -> Hashable:
    if isinstance(label, list):
        label = tuple(label)
    try:
        hash(label)
    except TypeError:
        raise ValueError(f"node/edge labels must be hashable, got {type(label).__name__}") from None
    return label


def to_networkx(graph: LabelledGraph, node_attr: str = "label", edge_attr: str = "label") -> nx.Graph:
    """A :class:`LabelledGraph` as ``nx.Graph``, or ``nx.MultiGraph`` when it has parallel edges."""
    pairs = Counter((min(u, v), max(u, v)) for u, v, _ in graph.edges)
    g: nx.Graph = nx.MultiGraph() if any(c > 1 for c in pairs.values()) else nx.Graph()
    for i, lab in enumerate(graph.node_labels):
        g.add_node(i, **{node_attr: lab})
    for u, v, lab in graph.edges:
        g.add_edge(u, v, **{edge_attr: lab})
    return g


class TripletStatistics:
    """Global counts of ``(src label, edge label, dst label)`` over both directions of every edge."""

    def __init__(self) -> None:
        self.counts: Counter = Counter()
        self.edge_label_counts: Counter = Counter()

    def update(self, g: LabelledGraph) -> None:
        nl = g.node_labels
        for u, v, lab in g.edges:
            self.counts[(nl[u], lab, nl[v])] += 1
            self.counts[(nl[v], lab, nl[u])] += 1
            self.edge_label_counts[lab] += 1

    def weight(self, src: Hashable, edge: Hashable, dst: Hashable) -> float:
        """``log10(count)``, unseen triplets counting 1 (weight 0), as the authors clamp."""
        return math.log10(max(self.counts.get((src, edge, dst), 0), 1))

    def most_frequent_edge_label(self) -> Hashable | None:
        if not self.edge_label_counts:
            return None
        # Ties: the label seen first wins (Counter keeps insertion order), deterministic for a fixed corpus.
        return max(self.edge_label_counts.items(), key=lambda kv: kv[1])[0]


def _components(g: LabelledGraph) -> list[list[int]]:
    """Connected components as sorted node lists, largest first, ties by smallest node (authors' order)."""
    n = len(g.node_labels)
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for u, v, _ in g.edges:
        ru, rv = find(u), find(v)
        if ru != rv:
            parent[max(ru, rv)] = min(ru, rv)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    comps = list(groups.values())  # in order of smallest member
    comps.sort(key=len, reverse=True)  # stable: equal sizes keep smallest-member order
    return comps


def eulerian_circuit(
    g: LabelledGraph,
    component: Sequence[int],
    arcs_out: dict[int, list[tuple[float, int, int, Hashable]]],
    start: int,
) -> list[tuple[int, Hashable]]:
    """Hierholzer's circuit over the arcs of one component.

    ``arcs_out[u]`` lists ``(sort key..., v, edge index, label)`` already in traversal priority order.
    Returns the circuit as ``[(node, label of the arc used to reach it)]``, the first label ``None``.
    """
    pointer = dict.fromkeys(component, 0)
    stack: list[tuple[int, Hashable]] = [(start, None)]
    circuit: list[tuple[int, Hashable]] = []
    while stack:
        node = stack[-1][0]
        out = arcs_out.get(node, ())
        p = pointer[node]
        if p < len(out):
            pointer[node] = p + 1
            arc = out[p]
            stack.append((arc[-3], arc[-1]))
        else:
            circuit.append(stack.pop())
    circuit.reverse()
    return circuit


def _dfs_walk(
    component: Sequence[int], arcs_out: dict[int, list[tuple[float, int, int, Hashable]]], start: int
) -> list[tuple[int, Hashable]]:
    """Depth-first walk crossing every edge once in each direction (Tarry's traversal).

    From the current node the first unused edge (in ``arcs_out`` order) is taken: to an unvisited node
    it is a tree edge (descend; the return is written when the subtree is done); to a visited node it is
    crossed there and straight back. Returns ``[(node, label of the arc used to reach it)]``.
    """
    used: set[int] = set()
    visited = {start}
    walk: list[tuple[int, Hashable]] = [(start, None)]
    stack: list[tuple[int, Hashable]] = [(start, None)]  # (node, label of the tree edge into it)
    pointer = dict.fromkeys(component, 0)
    while stack:
        u = stack[-1][0]
        out = arcs_out.get(u, ())
        p = pointer[u]
        while p < len(out) and out[p][2] in used:
            p += 1
        if p < len(out):
            pointer[u] = p + 1
            _, v, e, lab = out[p]
            used.add(e)
            if v in visited:
                walk.append((v, lab))
                walk.append((u, lab))
            else:
                visited.add(v)
                walk.append((v, lab))
                stack.append((v, lab))
        else:
            pointer[u] = p
            _, lab = stack.pop()
            if stack:
                walk.append((stack[-1][0], lab))
    return walk


class GraphSerializer:
    """Reversible serialization of labelled graphs into integer symbol sequences.

    Parameters
    ----------
    method : {"feuler", "euler", "random", "dfs"}
        ``"feuler"``: the paper's frequency-guided Eulerian circuit (default). ``"euler"``: Eulerian
        circuit in neighbour-index order. ``"random"``: Eulerian circuit in a random order (ablation).
        ``"dfs"``: depth-first serialization in neighbour-index order (baseline).
    omit_most_frequent_edge : bool
        Leave out the edge symbol of the globally most frequent edge label (the authors' default).
    node_attr, edge_attr : str
        Attribute names holding the labels in networkx graphs.
    references : bool
        Write revisit references (default). ``False`` gives the authors' label-only sequence, which
        cannot be decoded (:meth:`deserialize` raises).
    seed : int
        Seed of the ``"random"`` method's generator (advanced at every call).
    reference_base : int
        Base of the revisit-reference digits (default 32: one digit for graphs of up to 32 nodes, and
        ``ceil(log_32(n))`` digits for larger ones).

    Attributes (after :meth:`fit`)
    ------------------------------
    stats_ : TripletStatistics
    symbols_ : list of tuples ``(kind, value)``; the symbol id is the list index.
    omitted_edge_label_ : the edge label whose symbol is left out (or ``None`` when nothing is omitted).
    """

    def __init__(
        self,
        method: str = "feuler",
        *,
        omit_most_frequent_edge: bool = True,
        node_attr: str = "label",
        edge_attr: str = "label",
        references: bool = True,
        seed: int = 0,
        reference_base: int = 32,
    ) -> None:
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        if isinstance(reference_base, bool) or not isinstance(reference_base, int) or reference_base < 2:
            raise ValueError(f"reference_base must be an integer >= 2, got {reference_base!r}")
        self.reference_base = reference_base
        self.method = method
        self.omit_most_frequent_edge = bool(omit_most_frequent_edge)
        self.node_attr = node_attr
        self.edge_attr = edge_attr
        self.references = bool(references)
        self.seed = int(seed)
        self._rng = np.random.default_rng(self.seed)
        self.stats_: TripletStatistics | None = None

    # ---------------------------------------------------------------- fitting
    def fit(
        self,
        graphs: Iterable[Any],
        *,
        node_labels: Iterable[Hashable] = (),
        edge_labels: Iterable[Hashable] = (),
    ) -> GraphSerializer:
        """Collect triplet statistics and the symbol alphabet from the training graphs.

        ``node_labels`` / ``edge_labels`` add labels to the alphabet that the training graphs may lack
        (e.g. a rare element only in the test split); labels never seen at fit are encoded as an unknown
        symbol (with a warning) and decode as :data:`UNKNOWN_LABEL`, the one case where the round trip
        loses information. The reference digits do not depend on the graphs' sizes.
        """
        stats = TripletStatistics()
        extra_nodes = [_check_label(x) for x in node_labels]
        extra_edges = [_check_label(x) for x in edge_labels]
        node_labels: dict[Hashable, None] = {}
        edge_labels: dict[Hashable, None] = {}
        count = 0
        for graph in graphs:
            g = to_labelled(graph, self.node_attr, self.edge_attr)
            stats.update(g)
            node_labels.update(dict.fromkeys(g.node_labels))
            edge_labels.update(dict.fromkeys(lab for _, _, lab in g.edges))
            count += 1
        if count == 0:
            raise ValueError("graphs must contain at least one graph")
        node_labels.update(dict.fromkeys(extra_nodes))
        edge_labels.update(dict.fromkeys(extra_edges))
        self.stats_ = stats
        self.omitted_edge_label_ = stats.most_frequent_edge_label() if self.omit_most_frequent_edge else None
        self.has_omitted_ = self.omit_most_frequent_edge and bool(stats.edge_label_counts)
        symbols: list[tuple[str, Any]] = [(_SEP, None), (_UNK_NODE, None), (_UNK_EDGE, None)]
        symbols += [(_NODE, lab) for lab in node_labels]
        symbols += [(_EDGE, lab) for lab in edge_labels]
        symbols += [(_REF, d) for d in range(self.reference_base)]
        self._set_symbols(symbols)
        return self

    def _set_symbols(self, symbols: list[tuple[str, Any]]) -> None:
        self.symbols_ = symbols
        self._node_id = {v: i for i, (k, v) in enumerate(symbols) if k == _NODE}
        self._edge_id = {v: i for i, (k, v) in enumerate(symbols) if k == _EDGE}
        self._ref_id = {v: i for i, (k, v) in enumerate(symbols) if k == _REF}
        self.reference_base = len(self._ref_id)
        self.sep_id_ = 0
        self._unk_node_id, self._unk_edge_id = 1, 2

    def _check_fitted(self) -> None:
        if self.stats_ is None:
            raise ValueError("this GraphSerializer is not fitted yet: call fit(graphs) first")

    @property
    def n_symbols(self) -> int:
        self._check_fitted()
        return len(self.symbols_)

    # ---------------------------------------------------------------- serialize
    def circuits(
        self, graph: Any, rng: np.random.Generator | None = None
    ) -> list[list[tuple[int, Hashable]]]:
        """The closed walk of every component, largest first: ``[(node index, in-arc label)]``.

        With ``rng`` (one *variant* of the serialization, the authors' multiple sampling): every
        component starts at a random node and arcs of equal priority are tried in a random order; the
        frequency priority of ``"feuler"`` is kept.
        """
        self._check_fitted()
        g = to_labelled(graph, self.node_attr, self.edge_attr)
        nl = g.node_labels
        arcs: dict[int, list] = {}
        stats = self.stats_
        weights: dict[tuple, float] = {}
        for e, (u, v, lab) in enumerate(g.edges):
            for a, b in ((u, v), (v, u)):
                w = 0.0
                if self.method == "feuler":
                    key = (nl[a], lab, nl[b])
                    w = weights.get(key)
                    if w is None:
                        w = weights[key] = stats.weight(*key)
                arcs.setdefault(a, []).append((-w, b, e, lab))
        if self.method == "random":
            for a, out in arcs.items():
                perm = self._rng.permutation(len(out))
                arcs[a] = [out[i] for i in perm]
        elif rng is not None:
            for a, out in arcs.items():
                order = rng.permutation(len(out))
                arcs[a] = sorted((out[i] for i in order), key=lambda t: t[0])  # stable: random ties
        else:
            for out in arcs.values():
                out.sort(key=lambda t: (t[0], t[1], t[2]))
        result = []
        for comp in _components(g):
            if self.method == "random":
                start = comp[int(self._rng.integers(len(comp)))]
            elif rng is not None:
                start = comp[int(rng.integers(len(comp)))]
            else:
                start = comp[0]
            if len(comp) == 1 and start not in arcs:
                result.append([(start, None)])
            elif self.method == "dfs":
                result.append(_dfs_walk(comp, arcs, start))
            else:
                result.append(eulerian_circuit(g, comp, arcs, start))
        return result

    def serialize(self, graph: Any, rng: np.random.Generator | None = None) -> list[int]:
        """Symbol ids of ``graph`` (see the module docstring for the layout).

        ``rng``: a random variant of the serialization (see :meth:`circuits`); it decodes to the same
        graph. Labels unseen at fit are written as the unknown symbol, with a ``UserWarning``.
        """
        g = to_labelled(graph, self.node_attr, self.edge_attr)
        out: list[int] = []
        node_id, edge_id = self._node_id, self._edge_id
        omit = self.has_omitted_
        omitted = self.omitted_edge_label_
        unk_node, unk_edge = self._unk_node_id, self._unk_edge_id
        for ci, circuit in enumerate(self.circuits(g, rng)):
            if ci:
                out.append(self.sep_id_)
            rank: dict[int, int] = {}
            for pos, (node, lab) in enumerate(circuit):
                if pos and not (omit and lab == omitted):
                    out.append(edge_id.get(lab, unk_edge))
                out.append(node_id.get(g.node_labels[node], unk_node))
                r = rank.get(node)
                if r is None:
                    rank[node] = len(rank)
                elif self.references:
                    self._emit_ref(len(rank) - r, out)
        if unk_node in out or unk_edge in out:
            unseen = {lab for lab in g.node_labels if lab not in node_id}
            unseen |= {lab for _, _, lab in g.edges if lab not in edge_id and not (omit and lab == omitted)}
            warnings.warn(
                f"labels not seen at fit are encoded as the unknown symbol and decode as {UNKNOWN_LABEL!r}: "
                f"{sorted(map(repr, unseen))[:5]} (pass node_labels=/edge_labels= to fit)",
                UserWarning,
                stacklevel=2,
            )
        return out

    def _emit_ref(self, k: int, out: list[int]) -> None:
        digits = []
        base = self.reference_base
        while k:
            k, d = divmod(k, base)
            digits.append(self._ref_id[d])
        out.extend(reversed(digits))

    def serialize_labels_only(self, graph: Any) -> list[int]:
        """The authors' (non-reversible) sequence: :meth:`serialize` without the reference symbols."""
        refs = set(self._ref_id.values())
        return (
            [s for s in self.serialize(graph) if s not in refs] if self.references else self.serialize(graph)
        )

    # ---------------------------------------------------------------- deserialize
    def deserialize_labelled(self, symbols: Sequence[int]) -> LabelledGraph:
        """Rebuild the :class:`LabelledGraph` from symbol ids (inverse of :meth:`serialize`)."""
        self._check_fitted()
        if not self.references:
            raise ValueError(
                "this serializer was built with references=False: label-only sequences are not reversible"
            )
        syms = self.symbols_
        n_sym = len(syms)
        node_labels: list = []
        arcs: Counter = Counter()  # (u, v, label) directed traversals
        comp_nodes: list[int] = []  # nodes of the current component, by first appearance
        prev: int | None = None
        pending_edge: Any = _MISSING
        i, n = 0, len(symbols)
        default_edge = self.omitted_edge_label_ if self.has_omitted_ else _MISSING
        while i < n:
            s = int(symbols[i])
            if not 0 <= s < n_sym:
                raise ValueError(f"symbol id {s} at position {i} is outside the alphabet (0..{n_sym - 1})")
            kind, value = syms[s]
            if kind == _SEP:
                if pending_edge is not _MISSING:
                    raise ValueError(f"edge symbol before a separator at position {i}")
                comp_nodes, prev = [], None
                i += 1
                continue
            if kind in (_EDGE, _UNK_EDGE):
                if prev is None or pending_edge is not _MISSING:
                    raise ValueError(f"misplaced edge symbol at position {i}")
                pending_edge = UNKNOWN_LABEL if kind == _UNK_EDGE else value
                i += 1
                continue
            if kind == _REF:
                raise ValueError(f"reference symbol at position {i} does not follow a node symbol")
            label = UNKNOWN_LABEL if kind == _UNK_NODE else value
            i += 1
            k = 0
            first_digit = True
            while i < n and 0 <= int(symbols[i]) < n_sym and syms[int(symbols[i])][0] == _REF:
                d = syms[int(symbols[i])][1]
                if first_digit and d == 0:
                    raise ValueError(f"reference at position {i} has a leading zero digit")
                k = k * self.reference_base + d
                first_digit = False
                i += 1
            if k:
                if k > len(comp_nodes):
                    raise ValueError(f"reference {k} before position {i} points before the component start")
                node = comp_nodes[len(comp_nodes) - k]
                if node_labels[node] != label:
                    raise ValueError(f"revisit before position {i} disagrees with the node's label")
            else:
                node = len(node_labels)
                node_labels.append(label)
                comp_nodes.append(node)
            if prev is not None:
                lab = pending_edge if pending_edge is not _MISSING else default_edge
                if lab is _MISSING:
                    raise ValueError(f"missing edge symbol before position {i}")
                arcs[(prev, node, lab)] += 1
            elif pending_edge is not _MISSING:
                raise ValueError(f"edge symbol at the start of a component before position {i}")
            pending_edge = _MISSING
            prev = node
        if pending_edge is not _MISSING:
            raise ValueError("sequence ends with an edge symbol")
        edges = []
        for (u, v, lab), c in arcs.items():
            if u < v:
                if arcs.get((v, u, lab), 0) != c:
                    raise ValueError("arcs are not paired in both directions: not a serialized graph")
                edges += [(u, v, lab)] * c
            elif u == v:
                if c % 2:
                    raise ValueError("a self-loop was not crossed twice: not a serialized graph")
                edges += [(u, u, lab)] * (c // 2)
            elif (v, u, lab) not in arcs:
                raise ValueError("arcs are not paired in both directions: not a serialized graph")
        return LabelledGraph(tuple(node_labels), tuple(edges))

    def deserialize(self, symbols: Sequence[int]) -> nx.Graph:
        """Rebuild a networkx graph (``MultiGraph`` when it has parallel edges) from symbol ids."""
        return to_networkx(self.deserialize_labelled(symbols), self.node_attr, self.edge_attr)

    # ---------------------------------------------------------------- state
    def get_state(self) -> dict[str, Any]:
        """JSON-serialisable state (labels must be JSON scalars or tuples of them)."""
        self._check_fitted()
        return {
            "method": self.method,
            "omit_most_frequent_edge": self.omit_most_frequent_edge,
            "node_attr": self.node_attr,
            "edge_attr": self.edge_attr,
            "references": self.references,
            "seed": self.seed,
            "reference_base": self.reference_base,
            "symbols": [[k, _label_to_json(v)] for k, v in self.symbols_],
            "triplets": [[[_label_to_json(x) for x in t], c] for t, c in self.stats_.counts.items()],
            "edge_label_counts": [
                [_label_to_json(lab), c] for lab, c in self.stats_.edge_label_counts.items()
            ],
            "omitted_edge_label": _label_to_json(self.omitted_edge_label_),
            "has_omitted": self.has_omitted_,
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> GraphSerializer:
        s = cls(
            state["method"],
            omit_most_frequent_edge=state["omit_most_frequent_edge"],
            node_attr=state["node_attr"],
            edge_attr=state["edge_attr"],
            references=state.get("references", True),
            seed=state["seed"],
            reference_base=state["reference_base"],
        )
        stats = TripletStatistics()
        for t, c in state["triplets"]:
            stats.counts[tuple(_label_from_json(x) for x in t)] = int(c)
        for lab, c in state["edge_label_counts"]:
            stats.edge_label_counts[_label_from_json(lab)] = int(c)
        s.stats_ = stats
        s.omitted_edge_label_ = _label_from_json(state["omitted_edge_label"])
        s.has_omitted_ = bool(state["has_omitted"])
        s._set_symbols([(k, _label_from_json(v)) for k, v in state["symbols"]])
        return s


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()


def _label_to_json(label: Any) -> Any:
    if isinstance(label, tuple):
        return {"t": [_label_to_json(x) for x in label]}
    if label is None or isinstance(label, bool | int | float | str):
        return label
    raise ValueError(f"label {label!r} cannot be saved to JSON (use str, int, float, bool, None or tuples)")


def _label_from_json(obj: Any) -> Any:
    if isinstance(obj, dict):
        return tuple(_label_from_json(x) for x in obj["t"])
    if isinstance(obj, list):
        return [_label_from_json(x) for x in obj]
    return obj
