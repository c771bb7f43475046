"""What one ``iclr26 run lgbo`` method costs per round, per problem (the ``small`` budget question).

For each problem (ackley-6D, levy-6D, HPLC) and each small-scale method, one seed runs ``--rounds``
rounds with the experiment's settings; every ``suggest`` call (GP fit + lift + qLogEI batch) is timed.
Then ``--prompts`` SmolLM2 replies (the authors' ackley-6D prompt, greedy, 160 tokens) are timed, one
batch call. One CPU thread. Prints seconds per round (rounds 1-10 and 11-15 separately, since the GP
grows) and the projected small run for 10 and 15 rounds over 5 seeds.

Run from the repository root::

    PYTHONPATH=src .venv/bin/python benchmarks/lgbo_small_cost.py --rounds 15 --prompts 3
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch

from iclr26.lgbo import LGBO
from iclr26.lgbo.experiment import N_INIT, Q, _methods, _optimizer, _problem


def _round_times(spec: dict, guidance: str, kind: str | None, c: float, warm: str, rounds: int) -> list:
    opt = _optimizer(spec, 0, guidance, kind, c, warm)
    X = opt.initial_design()
    y = np.asarray(spec["f"](X), dtype=float)
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        Xn = opt.suggest(X, y)
        times.append(time.perf_counter() - t0)
        X, y = np.vstack([X, Xn]), np.concatenate([y, np.asarray(spec["f"](Xn), dtype=float)])
    return times


def _smollm2_seconds(n_prompts: int) -> float:
    from iclr26.lgbo import build_prompts, toy_function, toy_task
    from iclr26.models import GenerationConfig, load_model

    model = load_model("embedded")
    bounds = np.array([[-5.0] * 6, [5.0] * 6])
    chats = []
    for k in range(n_prompts):
        X = LGBO(bounds, n_init=N_INIT, seed=k).initial_design()
        hist = [
            {"x": {f"x{i + 1}": round(float(v), 4) for i, v in enumerate(r)}, "f": round(float(f), 4)}
            for r, f in zip(X, toy_function("ackley", X))
        ]
        s, u = build_prompts(toy_task("ackley", bounds.T), hist, Q)
        chats.append([{"role": "system", "content": s}, {"role": "user", "content": u}])
    t0 = time.perf_counter()
    model.generate(chats, GenerationConfig(max_new_tokens=160, temperature=0.0, seed=0))
    return (time.perf_counter() - t0) / n_prompts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--prompts", type=int, default=3)
    ap.add_argument("--problems", nargs="+", default=["ackley", "levy", "hplc"])
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"load average at start: {os.getloadavg()}")
    for problem in args.problems:
        spec = _problem(problem)
        total10 = total15 = 0.0
        for name, guidance, kind, c, warm in _methods((0.8,)):
            t = np.array(_round_times(spec, guidance, kind, c, warm, args.rounds))
            total10, total15 = total10 + t[:10].sum(), total15 + t.sum()
            print(
                f"{problem:7s} {name:16s} s/round rounds 1-10 {t[:10].mean():.3f}  "
                f"rounds 11-{args.rounds} {t[10:].mean():.3f}"
            )
        print(
            f"{problem:7s} all methods, 5 seeds: 10 rounds {5 * total10:.1f} s, {args.rounds} rounds "
            f"{5 * total15:.1f} s"
        )
    if args.prompts:
        per_reply = _smollm2_seconds(args.prompts)
        print(f"SmolLM2 seconds per reply ({args.prompts} prompts, one batch): {per_reply:.2f}")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
