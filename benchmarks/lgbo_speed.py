"""LGBO suggest-step time: ``iclr26.lgbo.LGBO.suggest`` against the authors' ``propose_lgbo_batch``.

One step = GP fit + region lift + batch proposal (q = 3, grid 512) on ``n`` observations of the ackley
function in ``d`` dimensions, with the same aligned box preference (side 0.4 of the range, c = 0.8), one
CPU thread. Ours: qLogEI optimised with ``optimize_acqf`` (``--restarts``/``--raw`` and 64 qMC samples).
Theirs (Xinzhe309/SAIBO-framework, ``saibo/methods/lgbo/lgbo_core.py``): greedy qLogEI over
``--cand-size`` Sobol candidates with ``--paths`` qMC samples (their defaults: 8192 and 1024); their code is
loaded from ``--authors`` (a checkout outside this repository; default ``/tmp/lgbo-authors``), and the
script measures ours alone when it is absent. Each timing is the fastest of ``--repeats`` warm calls.

Run from the repository root::

    PYTHONPATH=src .venv/bin/python benchmarks/lgbo_speed.py --n 100 --d 14
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch


def _fastest(fn, repeats: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--d", type=int, default=14)
    ap.add_argument("--q", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--restarts", type=int, default=2)
    ap.add_argument("--raw", type=int, default=64)
    ap.add_argument("--cand-size", type=int, default=8192)
    ap.add_argument("--paths", type=int, default=1024)
    ap.add_argument("--authors", default="/tmp/lgbo-authors")
    args = ap.parse_args()
    torch.set_num_threads(1)

    from iclr26.lgbo import LGBO, PreferenceOracle, toy_function, toy_task

    d, n = args.d, args.n
    bounds = np.array([[-5.0] * d, [5.0] * d])
    rng = np.random.default_rng(0)
    X = rng.uniform(-5, 5, (n, d))
    y = toy_function("ackley", X)
    oracle = PreferenceOracle("aligned", 0.8, 0.4, np.zeros(d), bounds, seed=0)
    reply = oracle.reply("", "")
    opt = LGBO(
        bounds,
        llm=oracle,
        goal="min",
        batch_size=args.q,
        task=toy_task("ackley", bounds.T),
        num_restarts=args.restarts,
        raw_samples=args.raw,
    )
    ours = _fastest(lambda: opt.suggest(X, y), args.repeats)
    print(f"n={n} d={d} q={args.q} grid=512: ours {ours:.3f} s per step")

    if not (Path(args.authors) / "saibo" / "methods" / "lgbo" / "lgbo_core.py").exists():
        print(f"authors' checkout not found at {args.authors}: their time not measured")
        return
    sys.path.insert(0, args.authors)
    from saibo.methods.lgbo.lgbo_core import ContinuousSpace, propose_lgbo_batch
    from saibo.methods.lgbo.prompt import parse_assistant_response

    space = ContinuousSpace([f"x{i + 1}" for i in range(d)], [(-5.0, 5.0)] * d)
    parsed = parse_assistant_response(reply)
    Xn = torch.tensor((X + 5) / 10, dtype=torch.double)
    yt = torch.tensor(y, dtype=torch.double)

    def theirs_step():
        propose_lgbo_batch(
            X_norm=Xn,
            y=yt,
            parsed_preference=parsed,
            space=space,
            goal="min",
            batch_q=args.q,
            grid_size=512,
            cand_size=args.cand_size,
            num_paths_batch=args.paths,
        )

    theirs = _fastest(theirs_step, args.repeats)
    print(f"authors' propose_lgbo_batch (cand {args.cand_size}, {args.paths} paths): {theirs:.3f} s per step")
    print(f"ratio authors / ours: {theirs / ours:.1f}x")


if __name__ == "__main__":
    main()
