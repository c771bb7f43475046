"""Headline experiment: an unmodified BERT on graph tokens vs GIN and other serializations, over splits.

Two tasks: generated molecule-like graphs with a structural target (at least two rings) and MUTAG
(188 molecules, shipped by ``grakel``). On every one of ``n_splits`` stratified splits per task (the
split seed is also the models' training seed), with tokenizers fitted on the training split only:
BERT on frequency-guided (Feuler) + BPE tokens, on un-merged Feuler symbols (BPE ablation), on
random-order Eulerian + BPE, on DFS + BPE and on canonical SMILES + BPE (the paper's baselines), BERT with
several serializations per training graph (augmentation, MUTAG), and a GIN baseline (PyG). Every
comparison is paired on the same splits and test graphs; its interval is a hierarchical bootstrap over
splits, then test graphs within a split. Also measured: exact round trips, the BPE compression ratio
(authors: about 10%), and the sequence length of a large graph (revisit references grow with log n).

Per-split predictions are cached in the results folder (``cache/``), keyed by everything they depend on.
"""

from __future__ import annotations

import hashlib
import json
import time
import warnings

import networkx as nx
import numpy as np
from networkx.algorithms.isomorphism import categorical_multiedge_match, categorical_node_match

from iclr26.claims import Claim, Result
from iclr26.graph_bpe_tokenizer import (
    MOLECULE_EDGE_LABELS,
    MOLECULE_NODE_LABELS,
    MUTAG_EDGE_LABELS,
    MUTAG_NODE_LABELS,
    BertGraphClassifier,
    GINGraphClassifier,
    GraphSerializer,
    GraphTokenizer,
    molecule_like_graphs,
    mutag_graphs,
)
from iclr26.runtime import RunContext
from iclr26.store import atomic_write_json
from iclr26.uncertainty import exact, hierarchical_bootstrap

_NODE = categorical_node_match("label", None)
_EDGE = categorical_multiedge_match("label", None)
MOL, MUTAG = "molecule-like (>=2 rings)", "MUTAG"
MAIN = "BERT + Feuler + BPE"
AUGMENTED = "BERT + Feuler + BPE, 2 serializations"
PAPER_MUTAG = "MUTAG accuracy: GT+BERT 87.5 vs GIN 80.4 (authors' README, mean of 5 runs)"
MERGES = 2000  # authors' default num_merges (min_frequency 2)


def _splits(y: np.ndarray, n_splits: int, test_frac: float, rng: np.random.Generator) -> list[tuple]:
    out = []
    for _ in range(n_splits):
        tr, te = [], []
        for c in np.unique(y):
            idx = rng.permutation(np.flatnonzero(y == c))
            k = max(1, round(test_frac * len(idx)))
            te += idx[:k].tolist()
            tr += idx[k:].tolist()
        out.append((np.array(sorted(tr)), np.array(sorted(te))))
    return out


def run(ctx: RunContext) -> Result:
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models: one thread is as fast and robust to a shared CPU
    try:
        with warnings.catch_warnings():
            # Test graphs may hold a SMILES character unseen in training: encoded as unknown, by design.
            warnings.filterwarnings("ignore", message="SMILES characters not seen at fit")
            return _run(ctx, ctx.small)
    finally:
        torch.set_num_threads(threads)


def _variants(task: str) -> list[tuple[str, dict, dict]]:
    """(name, tokenizer kwargs, classifier kwargs) of the BERT variants run on ``task``."""
    out = [
        (MAIN, {"num_merges": MERGES, "method": "feuler"}, {}),
        ("BERT + Feuler, no BPE", {"num_merges": 0, "method": "feuler"}, {}),
        ("BERT + random order + BPE", {"num_merges": MERGES, "method": "random"}, {}),
        ("BERT + DFS + BPE", {"num_merges": MERGES, "method": "dfs"}, {}),
        ("BERT + SMILES + BPE", {"num_merges": MERGES, "method": "smiles"}, {}),
    ]
    if task == MUTAG:
        out.append((AUGMENTED, {"num_merges": MERGES, "method": "feuler"}, {"augment": 2}))
    return out


def _key(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:20]


def _run(ctx: RunContext, small: bool) -> Result:
    t_start = time.perf_counter()
    if small:
        bert_kw = dict(
            hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64, batch_size=32, lr=2e-3
        )
        n_mol, n_splits, mol_epochs, mutag_epochs, gin_epochs = 240, 3, 8, 12, 15
    else:
        bert_kw = dict(
            hidden_size=128, num_layers=4, num_heads=4, intermediate_size=256, batch_size=32, lr=5e-4
        )
        n_mol, n_splits, mol_epochs, mutag_epochs, gin_epochs = 2000, 5, 30, 100, 200
    mol_g, mol_y = molecule_like_graphs(n_mol, seed=ctx.seed)
    tasks = [(MOL, mol_g, mol_y, 0.25, mol_epochs, MOLECULE_NODE_LABELS, MOLECULE_EDGE_LABELS)]
    try:
        mg, my = mutag_graphs()
        tasks.append((MUTAG, mg, my, 0.2, mutag_epochs, MUTAG_NODE_LABELS, MUTAG_EDGE_LABELS))
    except FileNotFoundError:
        mg = None
    cache_dir = ctx.out_dir / "cache"
    rng = ctx.rng(1)
    work = []
    for task in tasks:
        for s, split in enumerate(_splits(task[2], n_splits, task[3], rng)):
            work.append((task, s, split))
    correct: dict[tuple[str, str], list[np.ndarray]] = {}  # (task, model) -> per split, per test graph
    majority: dict[str, list[np.ndarray]] = {}
    rows, comp_rows = [], []
    roundtrip_ok = roundtrip_n = 0
    for (name, graphs, y, _frac, epochs, node_labels, edge_labels), s, (tr, te) in ctx.progress(
        work, desc="tasks x splits"
    ):
        g_tr, g_te = [graphs[i] for i in tr], [graphs[i] for i in te]
        seed = ctx.seed + s
        row = {"task": name, "split": s, "n_train": len(tr), "n_test": len(te)}
        maj = max(np.unique(y[tr]), key=lambda c: np.sum(y[tr] == c))
        majority.setdefault(name, []).append((y[te] == maj).astype(float))
        for vname, tok_kw, clf_kw in _variants(name):
            key = _key(name, len(graphs), tr.tolist(), seed, tok_kw, clf_kw, bert_kw, epochs)
            path = cache_dir / f"{key}.json"
            if path.exists():
                hit = json.loads(path.read_text())
            else:
                t0 = time.perf_counter()
                tok = GraphTokenizer(seed=seed, **tok_kw)
                tok.fit(g_tr, node_labels=node_labels, edge_labels=edge_labels)
                clf = BertGraphClassifier(tok, epochs=epochs, seed=seed, **bert_kw, **clf_kw).fit(g_tr, y[tr])
                hit = {
                    "correct": (clf.predict(g_te) == y[te]).astype(int).tolist(),
                    "seconds": time.perf_counter() - t0,
                }
                if vname == MAIN:
                    ids = tok.encode_batch(g_te)
                    ok = [
                        bool(
                            nx.is_isomorphic(
                                nx.MultiGraph(g),
                                nx.MultiGraph(tok.decode(x)),
                                node_match=_NODE,
                                edge_match=_EDGE,
                            )
                        )
                        for g, x in zip(g_te, ids, strict=True)
                    ]
                    authors = GraphTokenizer(MERGES, references=False).fit(
                        g_tr, node_labels=node_labels, edge_labels=edge_labels
                    )
                    hit["roundtrip"] = ok
                    hit["raw_symbols"] = [len(tok.serialize(g)) for g in g_te]
                    hit["tokens"] = [len(x) for x in ids]
                    hit["label_only_symbols"] = [len(authors.serialize(g)) for g in g_te]
                    hit["label_only_tokens"] = [len(x) for x in authors.encode_batch(g_te)]
                    hit["vocab_size"] = tok.vocab_size
                atomic_write_json(path, hit)
            correct.setdefault((name, vname), []).append(np.asarray(hit["correct"], dtype=float))
            row[vname] = float(np.mean(hit["correct"]))
            if vname == MAIN:
                roundtrip_ok += sum(hit["roundtrip"])
                roundtrip_n += len(hit["roundtrip"])
                comp_rows.append(
                    {
                        "task": name,
                        "split": s,
                        "vocab_size": hit["vocab_size"],
                        "mean_raw_symbols": float(np.mean(hit["raw_symbols"])),
                        "mean_tokens": float(np.mean(hit["tokens"])),
                        "compression_ours": sum(hit["tokens"]) / sum(hit["raw_symbols"]),
                        "compression_label_only": sum(hit["label_only_tokens"])
                        / sum(hit["label_only_symbols"]),
                        "per_graph": np.stack([hit["label_only_tokens"], hit["label_only_symbols"]], 1),
                    }
                )
        key = _key("gin", name, len(graphs), tr.tolist(), seed, gin_epochs)
        path = cache_dir / f"{key}.json"
        if path.exists():
            gin_correct = json.loads(path.read_text())["correct"]
        else:
            gin = GINGraphClassifier(hidden_size=32 if small else 64, epochs=gin_epochs, seed=seed).fit(
                g_tr, y[tr]
            )
            gin_correct = (gin.predict(g_te) == y[te]).astype(int).tolist()
            atomic_write_json(path, {"correct": gin_correct})
        correct.setdefault((name, "GIN"), []).append(np.asarray(gin_correct, dtype=float))
        row["GIN"] = float(np.mean(gin_correct))
        row["majority"] = float(np.mean(majority[name][-1]))
        rows.append(row)

    names = [t[0] for t in tasks]
    models = sorted({m for (_, m) in correct}, key=lambda m: (m != MAIN, m))
    table = []
    for name in names:
        rs = [r for r in rows if r["task"] == name]
        entry = {"task": name, "splits": len(rs)}
        for m in [*models, "majority"]:
            vals = [r[m] for r in rs if m in r]
            entry[m] = float(np.mean(vals)) if vals else None
        table.append(entry)
    large = _large_graph_lengths()
    claims = _claims(
        ctx,
        names,
        correct,
        majority,
        comp_rows,
        roundtrip_ok,
        roundtrip_n,
        large,
        n_mol,
        n_splits,
        bert_kw,
        mg is not None,
    )
    _plot(ctx, table, [*models, "majority"])
    for r in comp_rows:
        del r["per_graph"]
    return Result(
        claims=claims,
        metrics={
            "accuracy": {
                f"{e['task']} | {m}": e[m]
                for e in table
                for m in [*models, "majority"]
                if e.get(m) is not None
            },
            "roundtrip_exact": roundtrip_ok / max(roundtrip_n, 1),
            "large_graph": large,
            "seconds": time.perf_counter() - t_start,
        },
        tables={"accuracy": table, "per_split": rows, "compression": comp_rows},
        notes=(
            f"Accuracies are means over {n_splits} stratified splits per task (split s also seeds the "
            "models); a MUTAG test split has 38 graphs (one graph = 2.6 points). Intervals: hierarchical "
            "bootstrap over splits, then test graphs, of paired per-graph differences."
        ),
    )


def _large_graph_lengths(n: int = 2000, m: int = 6000) -> dict:
    """Serialized length of an Erdos-Renyi graph (n nodes, m edges) vs the label-only length."""
    g = nx.gnm_random_graph(n, m, seed=0)
    nx.set_node_attributes(g, "C", "label")
    nx.set_edge_attributes(g, "single", "label")
    small = nx.path_graph(3)
    nx.set_node_attributes(small, "C", "label")
    nx.set_edge_attributes(small, "single", "label")
    ser = GraphSerializer().fit([small])  # fitted on a 3-node graph: references must extrapolate
    t0 = time.perf_counter()
    seq = ser.serialize(g)
    seconds = time.perf_counter() - t0
    # Exact round-trip check in O(m): decoded node i is the i-th node of the walk in order of first
    # appearance, so mapping it back must give exactly the original edge set.
    order = list(dict.fromkeys(node for circuit in ser.circuits(g) for node, _ in circuit))
    back = ser.deserialize(seq)
    ok = back.number_of_nodes() == n and {frozenset((order[u], order[v])) for u, v in back.edges()} == {
        frozenset(e) for e in g.edges()
    }
    return {
        "nodes": n,
        "edges": m,
        "symbols": len(seq),
        "label_only": len(ser.serialize_labels_only(g)),
        "ratio": len(seq) / len(ser.serialize_labels_only(g)),
        "seconds": seconds,
        "roundtrip": ok,
    }


def _paired(correct, task, a, b):
    return [np.stack([x, y], 1) for x, y in zip(correct[(task, a)], correct[(task, b)], strict=True)]


def _diff(g):
    return float(g[:, 0].mean() - g[:, 1].mean())


def _claims(
    ctx, names, correct, majority, comp_rows, rt_ok, rt_n, large, n_mol, n_splits, bert_kw, has_mutag
):
    scale = (
        f"{n_splits} stratified splits per task ({n_mol} generated graphs, 75/25; MUTAG 80/20); BERT "
        f"{bert_kw['num_layers']}x{bert_kw['hidden_size']}, random init, no MLM"
    )
    hb = dict(n_boot=400, seed=ctx.seed, unit="test graphs")
    claims = [
        hierarchical_bootstrap(
            _diff,
            [np.stack([c, m], 1) for c, m in zip(correct[(MOL, MAIN)], majority[MOL], strict=True)],
            **hb,
        ).claim(
            "The tokenizer lets an unmodified Transformer (BERT) learn a structural graph task",
            ">",
            0.1,
            paper="SOTA on 12 benchmarks with BERT/GTE on graph tokens (abstract)",
            scale=scale,
            detail="accuracy of BERT + Feuler + BPE minus the majority class, molecule-like task",
        )
    ]
    comparisons = [
        ("GIN", ">=", "BERT on graph tokens matches or beats GIN", PAPER_MUTAG),
        (
            "BERT + Feuler, no BPE",
            ">",
            "BPE on frequency-guided serialization beats no merges",
            "BPE ablation: merged tokens outperform raw serialization (paper, ablations)",
        ),
        (
            "BERT + random order + BPE",
            ">",
            "Frequency-guided serialization beats random-order serialization",
            "frequency guidance puts frequent substructures next to each other for BPE (paper)",
        ),
        (
            "BERT + DFS + BPE",
            ">",
            "Frequency-guided Eulerian serialization beats DFS serialization",
            "Feuler above other serializations (paper, serialization ablation)",
        ),
        (
            "BERT + SMILES + BPE",
            ">",
            "Graph tokens beat canonical SMILES + BPE on molecules",
            "graph tokenization above sequence (SMILES) baselines (paper)",
        ),
    ]
    for name in names:
        for other, op, statement, paper in comparisons:
            claims.append(
                hierarchical_bootstrap(_diff, _paired(correct, name, MAIN, other), **hb).claim(
                    f"{statement} ({name})",
                    op,
                    0.0,
                    paper=paper,
                    scale=scale,
                    detail=f"accuracy({MAIN}) - accuracy({other}), same splits and test graphs",
                )
            )
    if has_mutag:
        claims.append(
            hierarchical_bootstrap(_diff, _paired(correct, MUTAG, AUGMENTED, MAIN), **hb).claim(
                "Several serializations per training graph (augmentation) improve accuracy (MUTAG)",
                ">",
                0.0,
                paper="multiple sampling as augmentation (authors' code option)",
                scale=scale,
                detail="canonical + 1 random serialization variant per training graph vs canonical only",
            )
        )
    else:
        claims.append(Claim.not_measurable("MUTAG accuracy", "grakel (which ships MUTAG) is not installed"))
    mol_comp = [r["per_graph"] for r in comp_rows if r["task"] == MOL]
    claims.append(
        hierarchical_bootstrap(lambda g: g[:, 0].sum() / g[:, 1].sum(), mol_comp, **hb).claim(
            "BPE compresses the serialization to about 10% of its raw length",
            "within",
            0.10,
            tolerance=0.05,
            paper="~10% of the original length (authors' README)",
            scale=f"{MERGES} merges, min_frequency 2, fitted on each training split, measured on its test "
            "graphs",
            detail="tokens / symbols on the authors' label-only Feuler sequence, molecule-like graphs",
        )
    )
    claims.append(
        exact(
            "The serialization is reversible: graphs are rebuilt exactly from their tokens",
            rt_ok / rt_n if rt_n else float("nan"),
            ">=",
            1.0,
            paper="reversible (abstract)",
            scale=f"{rt_n} test graphs over all splits, isomorphism with node and edge labels",
            detail="fraction of test graphs with decode(encode(G)) isomorphic to G (labels matched)",
        )
    )
    claims.append(
        exact(
            "Revisit references stay short on large graphs: serialized length of a 2,000-node ER graph "
            "<= 3x its label-only length",
            large["ratio"],
            "<=",
            3.0,
            paper=None,
            post_hoc=True,  # the bar 3 was set after seeing 2.5 (the property tested is "not 15x")
            scale=f"G(n={large['nodes']}, m={large['edges']}), serializer fitted on a 3-node graph",
            detail=f"{large['symbols']} vs {large['label_only']} symbols; round trip exact: "
            f"{large['roundtrip']} (the former unary references gave 15.5x at 5,000 nodes)",
        )
    )
    return claims


def _plot(ctx: RunContext, table: list[dict], keys: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3.4))
    w = 0.8 / len(keys)
    for j, k in enumerate(keys):
        ax.bar([i + j * w for i in range(len(table))], [r[k] or 0.0 for r in table], w, label=k)
    ax.set_xticks([i + 0.4 - w / 2 for i in range(len(table))], [r["task"] for r in table])
    ax.set_ylabel("test accuracy (mean over splits)")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=6, loc="lower right")
    ctx.savefig(fig, "accuracy.png")
