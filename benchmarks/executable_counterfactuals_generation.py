"""Generation speed of executable counterfactuals with exact ground truth, and the cost of the independent
subprocess ground truth and of scoring.

Usage::

    .venv/bin/python benchmarks/executable_counterfactuals_generation.py [N_PER_FAMILY]

Generates ``N_PER_FAMILY`` (default 2,000, i.e. 10,000 in all) problems per family on one core and prints
problems/s and the answer-set sizes; re-derives every answer set in a fresh ``python -I`` subprocess and
prints the agreement and its time; scores 10,000 set predictions. No peer implementation is reachable (the
authors' repository could not be fetched), so no ratio to the authors' code.
"""

from __future__ import annotations

import sys
import time


def main() -> None:
    from iclr26.executable_counterfactuals import (
        FAMILIES,
        answer_set_sizes,
        generate,
        score,
        subprocess_truth,
    )

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    t0 = time.process_time()
    problems = [p for f in FAMILIES for p in generate(f, n, seed=0)]
    dt = time.process_time() - t0
    print(f"generated {len(problems):,} problems in {dt:.2f} CPU-s: {len(problems) / dt:,.0f} problems/s")
    print("answer-set sizes:", answer_set_sizes(problems))
    t0 = time.perf_counter()
    out = subprocess_truth(problems, timeout=600)
    dt_sub = time.perf_counter() - t0
    agree = sum(
        set(o["answers"]) == set(p.answers_counterfactual) for o, p in zip(out, problems, strict=True)
    )
    print(f"subprocess ground truth: {agree:,}/{len(problems):,} identical answer sets, {dt_sub:.2f} s wall")
    t0 = time.process_time()
    for p in problems:
        score({p.answer_interventional}, p.answers_counterfactual)
    print(f"scored {len(problems):,} predictions in {time.process_time() - t0:.3f} CPU-s")


if __name__ == "__main__":
    main()
