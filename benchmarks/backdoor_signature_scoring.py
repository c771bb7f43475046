"""Eq. 2 scoring time: ``iclr26.backdoor_signature.signature_scores`` against the authors' per-channel
loop ``score_channels_scalar`` (bd-vax ``antigen/scoring.py``).

Random differential deltas for ``--layers`` layers of SmolLM2-135M's MLP (gate/up 1536 × 576, down
576 × 1536), ``--n`` variants. The authors' function is loaded from ``--authors`` (a checkout outside this
repository holding ``antigen/scoring.py``; default ``/tmp/backdoor-signature-authors``); without it only
ours is timed. Ours uses the compiled one-pass Gram kernel when numba is installed (the extra), else
torch. Reports the fastest of ``--repeats`` warm calls of each (wall-clock and process CPU time: on a
shared machine the CPU time moves less with the load), the speed-ups and the largest relative score
difference.

Run from the repository root::

    PYTHONPATH=src OMP_NUM_THREADS=1 .venv/bin/python benchmarks/backdoor_signature_scoring.py --layers 1
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

from iclr26.backdoor_signature import signature_scores

SHAPES = {"gate_proj": (1536, 576), "up_proj": (1536, 576), "down_proj": (576, 1536)}


def deltas(n: int, layers: int, seed: int) -> list[dict[str, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    return [
        {
            f"model.layers.{i}.mlp.{m}": torch.randn(*s, generator=g)
            for i in range(layers)
            for m, s in SHAPES.items()
        }
        for _ in range(n)
    ]


def fastest(fn, repeats: int) -> tuple[float, float, object]:
    """Fastest wall-clock and fastest CPU time of ``repeats`` calls after one warm-up call."""
    out = fn()
    wall = cpu = float("inf")
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        wall, cpu = min(wall, time.perf_counter() - t), min(cpu, time.process_time() - c)
    return wall, cpu, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=6)
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--authors-repeats", type=int, default=2)
    ap.add_argument("--authors", default="/tmp/backdoor-signature-authors")
    args = ap.parse_args()
    d = deltas(args.n, args.layers, 0)
    t_ours, c_ours, ours = fastest(lambda: signature_scores(d), args.repeats)
    print(f"ours: {t_ours:.4f} s wall, {c_ours:.4f} s CPU for {len(ours)} modules, N = {args.n}")
    if not (Path(args.authors) / "antigen" / "scoring.py").is_file():
        print("authors' checkout absent: timed ours only")
        return
    sys.path.insert(0, args.authors)
    from antigen.scoring import score_channels_scalar

    t_theirs, c_theirs, theirs = fastest(lambda: score_channels_scalar(d), args.authors_repeats)
    err = 0.0
    for key, ranked in theirs.items():
        want = np.empty(len(ranked))
        for chan, score in ranked:
            want[int(chan.split("_")[1])] = score
        err = max(err, float(np.max(np.abs(ours[key] - want) / np.abs(want))))
    print(
        f"authors: {t_theirs:.3f} s wall, {c_theirs:.3f} s CPU; speed-up {t_theirs / t_ours:.0f}x wall, "
        f"{c_theirs / c_ours:.0f}x CPU; max relative difference {err:.1e}"
    )


if __name__ == "__main__":
    main()
