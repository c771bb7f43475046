"""The choices the paper leaves open (init of M, RoPE side of the query, φ), each with its rate chosen on
validation, on the small headline setup of ``iclr26 run prefixmemory-tuning``.

Same task (language identification), test words, selection draw, grid, selection rule, seeds, training
draws and steps as the small run (``experiment.PLANS["small"]``, run seed ``--seed``), so the default
variant reproduces the small run's PMT row. Prints per variant the chosen rate, the accuracy with a
hierarchical-bootstrap 95 % interval (seeds, then test words) and its difference from the default
(paired on seeds and test words), in points.

    PYTHONPATH=src python benchmarks/prefixmemory_open_choices.py
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time

import numpy as np

from iclr26.prefixmemory_tuning import experiment as E
from iclr26.runtime import RunContext, set_torch_threads
from iclr26.uncertainty import hierarchical_bootstrap

#: variant -> PrefixMemoryConfig arguments; the first is the default (ELU, post-RoPE, zeros).
VARIANTS = {
    "pmt": {"feature_map": "elu"},
    "pmt_pre_rope": {"feature_map": "elu", "query": "pre_rope"},
    "pmt_normal_init": {"feature_map": "elu", "init": "normal"},
    "pmt_elu1": {"feature_map": "elu1"},
    "pmt_gelu": {"feature_map": "gelu"},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    t0 = time.perf_counter()
    set_torch_threads()
    for name, config in VARIANTS.items():
        E.METHODS[name] = ("pmt", config)
        E.LR_GRIDS[name] = E.LR_GRIDS["pmt"]
    plan = dataclasses.replace(E.PLANS["small"], methods=tuple(VARIANTS))
    ctx = RunContext(slug="prefixmemory-tuning", seed=args.seed, out_dir="/tmp", show_progress=False)
    hf = ctx.load_model(default="embedded")
    hf.model.eval()
    name = plan.tasks[0]
    split = E.split_task(E.TASKS[name](), plan.n_test, ctx.rng(0))  # as the small run draws them
    workers = E._workers()
    chosen, figures = E.choose_learning_rates(
        hf, split.task, split.train_pools, plan, ctx.rng(100), ctx.seed, workers
    )
    draws = [  # the small run's training draws; no length probes (they are for claim 3)
        dataclasses.replace(
            E.draw_seed(hf.tokenizer, split, plan, ctx.rng(1000 + k), ctx.seed + k, None), rows=None
        )
        for k in range(plan.n_seeds)
    ]
    runs = E._run_task(hf, split, chosen, plan, draws, None, workers)
    print(
        f"# {hf.name}; {name}; {plan.n_seeds} seeds x {len(split.test)} test words; {plan.steps} steps; "
        f"rates chosen on validation ({plan.select_steps} steps); load {os.getloadavg()[0]:.1f}"
    )
    print(
        "| variant | config | lr chosen | val acc | accuracy [95 %] | per seed | - default (points) [95 %] |"
    )
    print("|---|---|---|---|---|---|---|")
    default = list(VARIANTS)[0]
    for v, config in VARIANTS.items():
        acc = hierarchical_bootstrap(np.mean, [r[v][0] for r in runs], n_boot=E.N_BOOT, unit="test words")
        diff = hierarchical_bootstrap(
            np.mean, [100 * (r[v][0] - r[default][0]) for r in runs], n_boot=E.N_BOOT, unit="test words"
        )
        per_seed = ", ".join(f"{r[v][0].mean():.3f}" for r in runs)
        cfg = ", ".join(f"{k}={x}" for k, x in config.items())
        val = figures[v][chosen[v]]["val_accuracy"]
        print(
            f"| {v} | {cfg} | {chosen[v]:g} | {val:.3f} | {acc.value:.3f} [{acc.lo:.3f}, {acc.hi:.3f}] "
            f"| {per_seed} | {diff.value:+.1f} [{diff.lo:+.1f}, {diff.hi:+.1f}] |"
        )
    base = np.mean([r["base"][0].mean() for r in runs])
    wall = time.perf_counter() - t0
    print(f"# untrained {base:.3f}; {wall:.0f} s wall; load {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
