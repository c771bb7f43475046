"""Serialized length and time on large graphs: revisit references in base-B digits vs the former unary chunks.

Erdos-Renyi graphs G(n, m = 2n) (mean degree 4; labels C / single) for n = 10^3, 10^4, 10^5, serialized by a
``GraphSerializer`` fitted on 200 molecule-like graphs (at most 28 nodes), as a tokenizer trained on
molecules would meet a large graph. Printed per n: the label-only length (the authors' sequence), ours
(base-32 digits), the former scheme's length (unary chunks bounded by the largest fitted graph:
``ceil(k / 27)`` reference symbols for a revisit at distance ``k``, computed from the same circuit), and the
seconds to serialize and to decode (decode checked to rebuild the same edge count; a full isomorphism
check is run for n = 10^3).

Run: ``.venv/bin/python benchmarks/graph_bpe_tokenizer_large_graphs.py [--sizes 1000 10000 100000]``
"""

from __future__ import annotations

import argparse
import math
import time

import networkx as nx

from iclr26.graph_bpe_tokenizer import GraphSerializer, molecule_like_graphs


def unary_length(ser: GraphSerializer, g: nx.Graph, max_ref: int) -> int:
    """Length the former scheme gave: label-only symbols plus ceil(k / max_ref) per revisit."""
    extra = 0
    for circuit in ser.circuits(g):
        rank: dict[int, int] = {}
        for node, _ in circuit:
            r = rank.get(node)
            if r is None:
                rank[node] = len(rank)
            else:
                extra += math.ceil((len(rank) - r) / max_ref)
    return len(ser.serialize_labels_only(g)) + extra


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    args = ap.parse_args()
    mols, _ = molecule_like_graphs(200, seed=0)
    ser = GraphSerializer().fit(mols, node_labels=["C"], edge_labels=["single"])
    max_ref = max(g.number_of_nodes() for g in mols) - 1
    print(
        f"fitted on 200 molecule-like graphs (max {max_ref + 1} nodes); reference base {ser.reference_base}"
    )
    print(
        f"{'n':>7} {'m':>7} {'label-only':>10} {'ours':>9} {'ratio':>6} {'unary':>11} {'ratio':>7} "
        f"{'serialize s':>11} {'decode s':>8}"
    )
    for n in args.sizes:
        g = nx.gnm_random_graph(n, 2 * n, seed=0)
        nx.set_node_attributes(g, "C", "label")
        nx.set_edge_attributes(g, "single", "label")
        t0 = time.perf_counter()
        seq = ser.serialize(g)
        t_ser = time.perf_counter() - t0
        t0 = time.perf_counter()
        back = ser.deserialize(seq)
        t_dec = time.perf_counter() - t0
        assert back.number_of_edges() == g.number_of_edges() and back.number_of_nodes() == n
        if n <= 1000:
            assert nx.is_isomorphic(nx.Graph(back), g)
        plain = len(ser.serialize_labels_only(g))
        old = unary_length(ser, g, max_ref)
        print(
            f"{n:>7} {2 * n:>7} {plain:>10} {len(seq):>9} {len(seq) / plain:>6.2f} {old:>11} "
            f"{old / plain:>7.1f} {t_ser:>11.2f} {t_dec:>8.2f}"
        )


if __name__ == "__main__":
    main()
