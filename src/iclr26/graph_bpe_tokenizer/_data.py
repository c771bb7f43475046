"""Embedded data: generated molecule-like graphs with a structural target, and MUTAG (shipped by grakel)."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np

from iclr26.validation import check_int

_ATOMS = ("C", "N", "O", "S", "F", "Cl")
MOLECULE_NODE_LABELS = _ATOMS
MOLECULE_EDGE_LABELS = ("single", "double", "aromatic")
_ATOM_P = np.array([0.72, 0.12, 0.1, 0.03, 0.02, 0.01])
MUTAG_NODE_LABELS = ("C", "N", "O", "F", "I", "Cl", "Br")
MUTAG_EDGE_LABELS = ("aromatic", "single", "double", "triple")


def _atom(rng: np.random.Generator) -> str:
    return _ATOMS[int(rng.choice(len(_ATOMS), p=_ATOM_P))]


def _molecule(rng: np.random.Generator, n_rings: int, n_atoms: int) -> nx.Graph:
    g = nx.Graph()

    def add(label: str) -> int:
        i = g.number_of_nodes()
        g.add_node(i, label=label)
        return i

    def attach_point() -> int | None:
        # Atoms with a free valence-like slot (degree < 3), carbons preferred.
        cands = [v for v in g.nodes if g.degree(v) < 3]
        if not cands:
            return None
        w = np.array([3.0 if g.nodes[v]["label"] == "C" else 1.0 for v in cands])
        return cands[int(rng.choice(len(cands), p=w / w.sum()))]

    for _ in range(n_rings):
        size = int(rng.choice([5, 6, 6, 6]))
        aromatic = size == 6 and rng.random() < 0.6
        ring = []
        for j in range(size):
            ring.append(add("C" if aromatic or j or rng.random() < 0.6 else _atom(rng)))
        for j in range(size):
            if aromatic:
                bond = "aromatic"
            else:
                bond = "double" if (j == 0 and rng.random() < 0.3) else "single"
            g.add_edge(ring[j], ring[(j + 1) % size], label=bond)
        if g.number_of_nodes() > size:
            anchor = attach_point()
            others = [v for v in ring if g.degree(v) < 3 and v != anchor]  # never a self-loop
            if anchor is not None and others:
                g.add_edge(anchor, others[int(rng.integers(len(others)))], label="single")
    while g.number_of_nodes() < n_atoms:
        length = int(rng.integers(1, 5))
        prev = attach_point() if g.number_of_nodes() else None
        for j in range(length):
            if g.number_of_nodes() >= n_atoms:
                break
            terminal = j == length - 1
            lab = _atom(rng) if terminal else ("C" if rng.random() < 0.85 else "N")
            v = add(lab)
            if prev is not None:
                bond = "double" if (terminal and lab == "O" and rng.random() < 0.5) else "single"
                g.add_edge(prev, v, label=bond)
            prev = v
    # Relabel nodes in random order so that generation order leaks nothing into the tie-breaks.
    perm = rng.permutation(g.number_of_nodes())
    h = nx.Graph()
    inv = np.argsort(perm)
    for new in range(g.number_of_nodes()):
        h.add_node(new, label=g.nodes[int(inv[new])]["label"])
    edges = list(g.edges(data=True))
    for k in rng.permutation(len(edges)):
        u, v, d = edges[int(k)]
        h.add_edge(int(perm[u]), int(perm[v]), label=d["label"])
    return h


def molecule_like_graphs(
    n_graphs: int, seed: int = 0, *, min_atoms: int = 12, max_atoms: int = 28
) -> tuple[list[nx.Graph], np.ndarray]:
    """Generated molecule-like labelled graphs and a structural binary target.

    Atoms C/N/O/S/F/Cl, bonds single/double/aromatic; each graph has 0-3 rings (5- or 6-membered,
    6-rings aromatic with probability 0.6) grown with branched chains to a size drawn uniformly from
    ``[min_atoms, max_atoms]`` independently of the ring count. Target ``y = 1`` iff the graph has at least
    two rings (cycle rank ``|E| - |V| + #components >= 2``), balanced by construction.

    Returns ``(graphs, y)`` with ``y`` of shape (n_graphs,).
    """
    n_graphs = check_int(n_graphs, "n_graphs", minimum=1)
    rng = np.random.default_rng(seed)
    graphs, ys = [], []
    for _ in range(n_graphs):
        n_rings = int(rng.integers(0, 4))
        g = _molecule(rng, n_rings, int(rng.integers(min_atoms, max_atoms + 1)))
        rank = g.number_of_edges() - g.number_of_nodes() + nx.number_connected_components(g)
        graphs.append(g)
        ys.append(int(rank >= 2))
    return graphs, np.asarray(ys, dtype=np.int64)


def mutag_raw_dir() -> Path | None:
    """The folder of MUTAG's raw TU files shipped inside the ``grakel`` package, or ``None``."""
    try:
        import grakel
    except ImportError:
        return None
    d = Path(grakel.__file__).resolve().parent / "tests" / "data" / "MUTAG"
    return d if (d / "MUTAG_A.txt").exists() else None


def mutag_graphs() -> tuple[list[nx.Graph], np.ndarray]:
    """MUTAG (188 nitro compounds; Debnath et al. 1991) read from grakel's raw TU files.

    Node labels are element symbols, edge labels bond types; ``y`` is 1 for mutagenic, 0 otherwise.
    Raises ``FileNotFoundError`` when grakel (or its test data) is not installed.
    """
    d = mutag_raw_dir()
    if d is None:
        raise FileNotFoundError(
            "MUTAG needs the 'grakel' package (pip install grakel), which ships its raw files"
        )
    A = np.loadtxt(d / "MUTAG_A.txt", delimiter=",", dtype=np.int64) - 1
    gi = np.loadtxt(d / "MUTAG_graph_indicator.txt", dtype=np.int64) - 1
    y = np.loadtxt(d / "MUTAG_graph_labels.txt", dtype=np.int64)
    nl = np.loadtxt(d / "MUTAG_node_labels.txt", dtype=np.int64)
    el = np.loadtxt(d / "MUTAG_edge_labels.txt", dtype=np.int64)
    n_graphs = int(gi.max()) + 1
    starts = np.searchsorted(gi, np.arange(n_graphs))
    graphs = [nx.Graph() for _ in range(n_graphs)]
    for v in range(len(gi)):
        graphs[gi[v]].add_node(int(v - starts[gi[v]]), label=MUTAG_NODE_LABELS[nl[v]])
    for (u, v), lab in zip(A, el, strict=True):
        if u < v:
            g = gi[u]
            graphs[g].add_edge(int(u - starts[g]), int(v - starts[g]), label=MUTAG_EDGE_LABELS[lab])
    return graphs, (y > 0).astype(np.int64)
