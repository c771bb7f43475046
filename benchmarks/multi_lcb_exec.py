"""Test executions per second: iclr26.multi_lcb's judge (sandbox, compile cache, worker pool) per
language, and for Python beside LiveCodeBench's ``check_correctness`` (a process per problem whose
``run_test`` execs the program in-process for each test, with its ``reliability_guard``).

Usage: ``python benchmarks/multi_lcb_exec.py [--lcb DIR] [--languages python,cpp,...] [--problems N]``.
``--lcb`` names a LiveCodeBench checkout (the folder holding ``lcb_runner/``); without it only ours runs.
Programs: our reference solutions to the first N of the 20 HumanEval problems; each program is compiled
once (warm-up pass, not timed), then all its tests are timed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def ours(language: str, ids, problems, workers: int) -> tuple[float, int, bool]:
    from iclr26.multi_lcb import Judge, reference_program

    progs = [(reference_program(t, language), language, problems[t].tests) for t in ids]
    with Judge(timeout=6, workers=workers) as j:
        j.run_many([(c, lang, tests[:1]) for c, lang, tests in progs])  # compile (cache warm)
        t0 = time.perf_counter()
        res = j.run_many(progs)
        dt = time.perf_counter() - t0
    n = sum(len(r) for r in res)
    return n / dt, n, all(v.ok for r in res for v in r)


def lcb(lcb_dir: str, ids, problems) -> tuple[float, int, bool]:
    sys.path.insert(0, lcb_dir)
    from lcb_runner.evaluation.compute_code_generation_metrics import check_correctness

    from iclr26.multi_lcb import reference_program

    t0 = time.perf_counter()
    n, ok = 0, True
    for t in ids:
        p = problems[t]
        sample = {
            "input_output": json.dumps(
                {"inputs": [i for i, _ in p.tests], "outputs": [o for _, o in p.tests]}
            )
        }
        res, _ = check_correctness(sample, reference_program(t, "python"), timeout=6, debug=False)
        n += len(p.tests)
        ok &= all(r is True for r in res)
    return n / (time.perf_counter() - t0), n, ok


def main() -> None:
    from iclr26.multi_lcb import ORDER, REFERENCE_TASKS, available_toolchains, humaneval_problems

    ap = argparse.ArgumentParser()
    ap.add_argument("--lcb", default=os.environ.get("ICLR26_LCB_DIR"))
    ap.add_argument("--languages", default=",".join(ORDER))
    ap.add_argument("--problems", type=int, default=len(REFERENCE_TASKS))
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    problems = {p.question_id: p for p in humaneval_problems()[0]}
    ids = list(REFERENCE_TASKS[: a.problems])
    tools = available_toolchains()
    print(f"{'runner':<28} {'tests':>6} {'tests/s':>9} all pass")
    for lang in a.languages.split(","):
        if not tools[lang]["present"]:
            print(f"{'ours ' + lang:<28} not available ({tools[lang]['debian']})")
            continue
        rate, n, ok = ours(lang, ids, problems, a.workers)
        print(f"{'ours ' + lang:<28} {n:>6} {rate:>9.1f} {ok}")
    if a.lcb:
        rate, n, ok = lcb(a.lcb, ids, problems)
        print(f"{'lcb_runner python':<28} {n:>6} {rate:>9.1f} {ok}")


if __name__ == "__main__":
    main()
