"""Generation speed and memory: ``iclr26.graphuniverse`` vs the authors' ``graph-universe==0.1.2``.

Same family sizes for both (the authors' example universe: K=10, 16 features; 20 graphs of 1,500-3,000
nodes, 3-7 communities, homophily 0.1-0.9, average degree 2-8, power-law exponent 2-3, degree
separation 0.4-0.8): graphs per second (best of ``--repeats``), peak traced memory (tracemalloc, a
separate run), their ratio; then a 100,000-node graph (ours only: the authors' generator enumerates
all n(n-1)/2 pairs, about 40 GB of probabilities at that size), and a fidelity check on a shared
universe (same P, degree centres and communities in both generators: mean realised edge homophily
and average degree).

The peer runs in its own environment, outside the repository::

    python3.11 -m venv /work/peers/graphuniverse-venv
    /work/peers/graphuniverse-venv/bin/pip install torch==2.13.0 torch-geometric networkx scikit-learn \\
        matplotlib tqdm pyyaml
    /work/peers/graphuniverse-venv/bin/pip install --no-deps graph-universe==0.1.2
    /work/peers/graphuniverse-venv/bin/pip install --no-deps -e /work/main

Run (from the repository root): ``.venv/bin/python benchmarks/graphuniverse_generation.py``
(``--peer-python PATH`` to point elsewhere; ``--nodes 500 900`` for graphs below 1,000 nodes, where
the authors use the same degree model as ours: above 1,000 nodes they switch to a multiplicative one,
so the default sizes compare different algorithms). Without the peer it prints a note and measures ours only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import tracemalloc

FAMILY = dict(
    n_graphs=20,
    n_nodes=(1500, 3000),
    n_communities=(3, 7),
    homophily=(0.1, 0.9),
    avg_degree=(2.0, 8.0),
    power_law_exponent=(2.0, 3.0),
    degree_separation=(0.4, 0.8),
)
UNIVERSE = dict(K=10, edge_propensity_variance=0.5, feature_dim=16, center_variance=1.0, cluster_variance=0.3)
DEFAULT_PEER = "/work/peers/graphuniverse-venv/bin/python"


def _ours_family(n_graphs: int, seed: int) -> None:
    from iclr26.graphuniverse import GraphFamily, Universe

    u = Universe(**UNIVERSE, seed=42)
    GraphFamily(u, **{**FAMILY, "n_graphs": n_graphs}, seed=seed)


def _theirs_family(n_graphs: int, seed: int) -> None:
    from graph_universe import GraphFamilyGenerator, GraphUniverse

    u = GraphUniverse(**UNIVERSE, seed=42)
    fam = GraphFamilyGenerator(
        universe=u,
        n_nodes_range=FAMILY["n_nodes"],
        n_graphs=n_graphs,
        n_communities_range=FAMILY["n_communities"],
        homophily_range=FAMILY["homophily"],
        avg_degree_range=FAMILY["avg_degree"],
        power_law_exponent_range=FAMILY["power_law_exponent"],
        degree_separation_range=FAMILY["degree_separation"],
        seed=seed,
    )
    fam.generate_family(show_progress=False, collect_stats=False)


def _measure(which: str, repeats: int, mem_graphs: int) -> dict:
    gen = _ours_family if which == "ours" else _theirs_family
    gen(1, 0)  # warm-up: imports, caches
    times = []
    for r in range(repeats):
        t = time.perf_counter()
        gen(FAMILY["n_graphs"], 1 + r)
        times.append(time.perf_counter() - t)
    tracemalloc.start()
    gen(mem_graphs, 100)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    best = min(times)
    return {
        "seconds": best,
        "all_seconds": times,
        "graphs_per_s": FAMILY["n_graphs"] / best,
        "peak_mib": peak / 2**20,
        "mem_graphs": mem_graphs,
    }


def _fidelity(which: str, reps: int = 6) -> dict:
    """Shared universe (the authors' P and degree centres), fixed communities: mean realised targets."""
    import numpy as np
    from graph_universe import GraphUniverse

    tu = GraphUniverse(K=10, edge_propensity_variance=0.5, feature_dim=4, seed=42)
    comms = [7, 2, 5, 0, 9]
    out = {}
    for h in (0.2, 0.5, 0.8):
        hs, ds = [], []
        for s in range(reps):
            if which == "theirs":
                from graph_universe.graph_sample import GraphSample

                g = GraphSample(
                    tu,
                    num_communities=5,
                    n_nodes=800,
                    target_homophily=h,
                    target_average_degree=6.0,
                    degree_separation=0.6,
                    power_law_exponent=2.5,
                    seed=s,
                    user_defined_communities=comms,
                )
                E = np.array(list(g.graph.edges()))
                L = g.community_labels
                hs.append(float(np.mean(L[E[:, 0]] == L[E[:, 1]])))
                ds.append(2 * len(E) / 800)
            else:
                from iclr26.graphuniverse import Universe, sample_graph

                u = Universe(K=10, feature_dim=4, seed=42, P=tu.P)
                u.degree_centers = np.asarray(tu.community_degree_propensity_vector)
                g = sample_graph(
                    u,
                    800,
                    5,
                    h,
                    6.0,
                    2.5,
                    0.6,
                    seed=s,
                    communities=comms,
                    calibrate=(which == "ours_calibrated"),
                )
                hs.append(g.edge_homophily())
                ds.append(g.average_degree())
        out[str(h)] = {"edge_homophily": float(np.mean(hs)), "avg_degree": float(np.mean(ds))}
    return out


def _child(which: str, repeats: int, mem_graphs: int) -> None:
    res = _measure(which, repeats, mem_graphs)
    try:
        import graph_universe  # noqa: F401

        res["fidelity"] = _fidelity(which)
        if which == "ours":
            res["fidelity_calibrated"] = _fidelity("ours_calibrated")
    except ImportError:
        pass
    print("RESULT " + json.dumps(res))


def _run_child(python: str, which: str, repeats: int, mem_graphs: int, nodes=None) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    proc = subprocess.run(
        [
            python,
            os.path.abspath(__file__),
            "--child",
            which,
            "--repeats",
            str(repeats),
            "--mem-graphs",
            str(mem_graphs),
            *(["--nodes", str(nodes[0]), str(nodes[1])] if nodes else []),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{which} run failed:\n{proc.stderr[-3000:]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peer-python", default=DEFAULT_PEER)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--mem-graphs", type=int, default=5)
    ap.add_argument("--child", choices=["ours", "theirs"])
    ap.add_argument("--nodes", type=int, nargs=2, default=None, help="graph sizes (min max)")
    args = ap.parse_args()
    if args.nodes:
        FAMILY["n_nodes"] = tuple(args.nodes)
    if args.child:
        _child(args.child, args.repeats, args.mem_graphs)
        return
    peer_ok = (
        os.path.exists(args.peer_python)
        and subprocess.run(
            [args.peer_python, "-c", "import graph_universe, iclr26"], capture_output=True, check=False
        ).returncode
        == 0
    )
    # ours runs in the peer env too when present, so both share one interpreter and numpy
    python = args.peer_python if peer_ok else sys.executable
    ours = _run_child(python, "ours", args.repeats, args.mem_graphs, args.nodes)
    print(f"family: {FAMILY}")
    print(
        f"ours:   {ours['seconds']:.2f} s for {FAMILY['n_graphs']} graphs = "
        f"{ours['graphs_per_s']:.1f} graphs/s, "
        f"peak {ours['peak_mib']:.0f} MiB ({args.mem_graphs} graphs)"
    )
    if not peer_ok:
        print(
            f"NOTE: peer graph-universe not found at {args.peer_python}; "
            "see this file's docstring to create it."
        )
    else:
        theirs = _run_child(args.peer_python, "theirs", args.repeats, args.mem_graphs, args.nodes)
        print(
            f"theirs: {theirs['seconds']:.2f} s for {FAMILY['n_graphs']} graphs = "
            f"{theirs['graphs_per_s']:.2f} "
            f"graphs/s, peak {theirs['peak_mib']:.0f} MiB ({args.mem_graphs} graphs)"
        )
        print(
            f"ratio:  {theirs['seconds'] / ours['seconds']:.1f}x faster, "
            f"{theirs['peak_mib'] / ours['peak_mib']:.1f}x less peak memory"
        )
        print("fidelity on a shared universe (n=800, 5 communities, avg degree 6, separation 0.6, 6 seeds):")
        for h in theirs["fidelity"]:
            t, o, c = theirs["fidelity"][h], ours["fidelity"][h], ours["fidelity_calibrated"][h]
            print(
                f"  target h={h}: edge homophily theirs {t['edge_homophily']:.3f} | ours(authors' scaling) "
                f"{o['edge_homophily']:.3f} | ours(calibrated) {c['edge_homophily']:.3f};  avg degree "
                f"{t['avg_degree']:.2f} | {o['avg_degree']:.2f} | {c['avg_degree']:.2f}"
            )
    from iclr26.graphuniverse import Universe, sample_graph

    u = Universe(**UNIVERSE, seed=42)
    sample_graph(u, 1000, 5, 0.5, 10.0, seed=0)
    tracemalloc.start()
    t = time.perf_counter()
    g = sample_graph(u, 100_000, 5, 0.5, 10.0, 2.5, 0.5, seed=0)
    dt = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    t = time.perf_counter()
    sample_graph(u, 100_000, 5, 0.5, 10.0, 2.5, 0.5, seed=1)
    print(
        f"100k-node graph (avg degree 10): {time.perf_counter() - t:.2f} s ({dt:.2f} s under tracemalloc), "
        f"{g.n_edges} edges, peak {peak:.0f} MiB"
    )


if __name__ == "__main__":
    main()
