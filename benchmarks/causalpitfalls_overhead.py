"""CausalPitfalls: what prompts, sandboxed code and scoring add to model time (issue target: <= 10%),
and how long the sandbox takes to start a child (target: <= 0.5 s).

1. ``run_benchmark`` on the first ``--items`` small-scale items (both protocols, RubricJudge and the
   SmolLM2 judge, the small run's token budgets) with SmolLM2-135M on one torch thread and one worker,
   its model wrapped in a timer: overhead = wall time of the run minus time inside ``generate``.
   SmolLM2 writes no runnable code at these budgets, so this run executes nothing in the sandbox;
2. therefore also one sandboxed analysis per item (the authors' preamble, which imports pandas,
   statsmodels, matplotlib and seaborn, then reads the dataset), as a fraction of one item's model time:
   what a code-writing subject would add per item;
3. the sandbox's child start: wall time of ``Sandbox.run("pass", "python")`` (median of ``--starts``).

Prints each ratio and the load average; timings are wall-clock, so run it on an idle machine::

    PYTHONPATH=src .venv/bin/python benchmarks/causalpitfalls_overhead.py
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch

from iclr26.causalpitfalls import (
    LLMJudge,
    RubricJudge,
    execute_analysis,
    generate_challenges,
    run_benchmark,
)
from iclr26.models import LanguageModel, load_model
from iclr26.sandbox import Sandbox


class Timed(LanguageModel):
    """``model`` with the wall time spent in its ``generate`` summed in ``seconds``."""

    def __init__(self, model: LanguageModel):
        self.model, self.name, self.backend, self.seconds = model, model.name, model.backend, 0.0

    @property
    def identity(self) -> str:
        return self.model.identity

    def generate(self, prompts, config=None):
        t0 = time.perf_counter()
        try:
            return self.model.generate(prompts, config)
        finally:
            self.seconds += time.perf_counter() - t0

    def loglikelihood(self, contexts, continuations):
        return self.model.loglikelihood(contexts, continuations)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=2)
    ap.add_argument("--starts", type=int, default=10)
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"load average before: {os.getloadavg()}")
    items = generate_challenges(0, 1, difficulties=["very_easy", "very_hard"])[: args.items]
    model = Timed(load_model("embedded"))
    judges = [RubricJudge(), LLMJudge(model, max_new_tokens=24, batch_size=4)]  # the small run's settings
    t0 = time.perf_counter()
    res = run_benchmark(
        model, items, judges=judges, max_new_tokens=48, code_max_new_tokens=128, batch_size=2, workers=1
    )
    total = time.perf_counter() - t0
    statuses = [r["code_status"] for r in res.records if r["protocol"] == "code"]
    overhead = total - model.seconds
    print(
        f"1. {len(items)} items: run {total:.2f} s, model {model.seconds:.2f} s, everything else "
        f"{overhead:.2f} s = {overhead / model.seconds:.1%} of model time (target <= 10%); code: {statuses}"
    )
    with Sandbox(time_limit=60, memory_limit=2048 << 20, output_limit=16 << 20) as sb:
        runs = []
        for it in items:
            t0 = time.perf_counter()
            a = execute_analysis(f"df = pd.read_csv('{it.data_path}')\nprint(df.shape)", it, sandbox=sb)
            runs.append(time.perf_counter() - t0)
            assert a.status == "ok", a.output
        per_item = model.seconds / len(items)
        print(
            f"2. one sandboxed analysis per item: median {np.median(runs):.2f} s = "
            f"{np.median(runs) / per_item:.1%} of one item's model time ({per_item:.1f} s)"
        )
        starts = []
        for _ in range(args.starts):
            t0 = time.perf_counter()
            e = sb.run("pass", "python")
            starts.append(time.perf_counter() - t0)
            assert e.status == "ok", e.stderr
        print(
            f"3. sandbox child start (python 'pass'): median {np.median(starts):.3f} s, max "
            f"{max(starts):.3f} s over {args.starts} (target <= 0.5 s); isolation: {e.isolation}"
        )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
