"""TrainRef votes: speed and memory of the closed form, and the ratio to the authors' hook-based path.

    PYTHONPATH=src python benchmarks/trainref_votes.py [--authors /path/to/TrainRef-checkout] [--skip-large]

1. ``influence_votes`` at n = 100,000 training rows, |D_ref| = 500, d = 768, K = 50, 3 checkpoints:
   wall time and peak resident memory of the process (inputs included), in a fresh subprocess.
2. At n = 5,000 (same m, d, K, checkpoints): ours against the authors' ``utils.get_influence_scores`` +
   ``get_voting_results_optimized`` (run from their checkout, outside this repository; nothing of theirs is
   committed), with the largest absolute difference of the votes.

Timings are wall-clock on whatever machine runs this (here: 2 shared cores under load from other jobs).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _case(n, m, d, K, C, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32).astype(np.float64)
    V = rng.normal(size=(m, d)).astype(np.float32).astype(np.float64)
    yv = np.arange(m) % K
    heads = [
        ((rng.normal(size=(K, d)) * 0.05).astype(np.float32), (rng.normal(size=K) * 0.05).astype(np.float32))
        for _ in range(C)
    ]
    return X, V, yv, heads


def _ours(X, V, yv, heads, K):
    from iclr26.trainref import influence_votes

    tl = np.stack([X @ W.T.astype(float) + b for W, b in heads])
    rl = np.stack([V @ W.T.astype(float) + b for W, b in heads])
    t = time.perf_counter()
    q = influence_votes(X, tl, V, yv, K, ref_logits_per_ckpt=rl)
    return q, time.perf_counter() - t


def large() -> dict:
    import resource

    n, m, d, K, C = 100_000, 500, 768, 50, 3
    X, V, yv, heads = _case(n, m, d, K, C)
    _, seconds = _ours(X, V, yv, heads, K)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2  # KiB -> GiB
    return {"n": n, "m": m, "d": d, "K": K, "checkpoints": C, "seconds": seconds, "peak_rss_gib": peak}


def versus_authors(root: Path) -> dict:
    import os
    import tempfile

    import torch
    from torch.utils.data import DataLoader, TensorDataset

    sys.path.insert(0, str(HERE.parent / "tests" / "trainref"))
    os.environ["ICLR26_TRAINREF_AUTHORS"] = str(root)
    from authors import load_authors

    a = load_authors()
    n, m, d, K, C = 5_000, 500, 768, 50, 3
    X, V, yv, heads = _case(n, m, d, K, C, seed=1)
    y = np.random.default_rng(2).integers(0, K, n)
    q, ours_s = _ours(X, V, yv, heads, K)
    clf = a.MLPClassifier(d, K, num_layers=1)
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, (W, b) in enumerate(heads):
            path = f"{tmp}/checkpoint_{10 * (i + 1)}.pt"
            torch.save(
                {"model": {"classifier.0.weight": torch.tensor(W), "classifier.0.bias": torch.tensor(b)}},
                path,
            )
            paths.append(path)
        tl = DataLoader(TensorDataset(torch.tensor(X, dtype=torch.float32), torch.tensor(y)), batch_size=1000)
        vl = DataLoader(
            TensorDataset(torch.tensor(V, dtype=torch.float32), torch.tensor(yv)), batch_size=1000
        )
        t = time.perf_counter()
        out = a.utils.get_influence_scores(clf, tl, vl, torch.nn.CrossEntropyLoss(), paths, num_classes=K)
        _, theirs = a.get_voting_results_optimized(
            np.arange(n), out[4], out[1], [(None, int(c)) for c in yv], np.arange(m), K
        )
        authors_s = time.perf_counter() - t
    return {
        "n": n,
        "m": m,
        "d": d,
        "K": K,
        "checkpoints": C,
        "ours_s": ours_s,
        "authors_s": authors_s,
        "speedup": authors_s / ours_s,
        "max_abs_diff_float32_authors": float(np.abs(q - theirs).max()),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--authors", type=Path, default=None)
    ap.add_argument("--skip-large", action="store_true")
    ap.add_argument("--large-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.large_only:
        print(json.dumps(large()))
        return
    report = {}
    if not args.skip_large:  # a fresh process, so that the peak memory is this computation's
        proc = subprocess.run(
            [sys.executable, __file__, "--large-only"], capture_output=True, text=True, check=True
        )
        report["large"] = json.loads(proc.stdout.strip().splitlines()[-1])
    if args.authors is not None:
        report["versus_authors"] = versus_authors(args.authors)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
