"""The issue's bar: "a 164-problem x 12-language run of reference programs completes in < 10 min on 2
cores (compile cache warm)".

What runs (per available language, one ``Judge`` with its defaults: isolation per submission where the
sandbox offers it, its pool sized to the CPUs): our reference program of every problem that has one in
all 12 languages (``REFERENCE_TASKS``; 157 of the 164 HumanEval problems convert to STDIN/STDOUT, the
other 7 do not, docs/multi-lcb.md) on every converted test of that problem. Programs that fail a test
are listed by name with their first failing verdict.

"Compile cache warm": every program is compiled (or syntax-checked) and run on its first test before the
clock starts (for Scala this also builds the sandbox's class-data archive); that time is printed beside
the run. Prints per-language versions, programs, executions, passes, seconds and executions per second,
the total, and the load average before and after. Also the CPU seconds each language's run used (this
process and every process it or its warm workers waited for: the programs, the JVMs' threads; one
``Judge`` per language, closed before reading, so that the warm workers' children, the tests of every
language with isolation per submission, are counted; this includes the warm-up runs, one per program,
that ran in the same workers): on a shared machine the wall time depends on the load, the CPU time much
less, and CPU / cores bounds the wall time an idle machine of that many cores would need from below.

Usage: ``python benchmarks/multi_lcb_reference_run.py [--languages python,cpp,...] [--workers W]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import time


def programs(language: str, problems: dict) -> list[tuple[str, str, str, tuple]]:
    """``(task, code, language, tests)`` for every reference task of ``language``."""
    from iclr26.multi_lcb import REFERENCE_TASKS, reference_program

    return [(t, reference_program(t, language), language, problems[t].tests) for t in REFERENCE_TASKS]


def cpu_seconds() -> float:
    """User + system CPU of this process and of every process waited for so far."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    from iclr26.multi_lcb import ORDER, REFERENCE_TASKS, Judge, available_toolchains, humaneval_problems

    ap = argparse.ArgumentParser()
    ap.add_argument("--languages", default=",".join(ORDER))
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    problems = {p.question_id: p for p in humaneval_problems()[0]}
    n_tests = sum(len(problems[t].tests) for t in REFERENCE_TASKS)
    tools = available_toolchains()
    print(
        f"{len(problems)} converted HumanEval problems, {len(REFERENCE_TASKS)} with reference programs in "
        f"all 12 languages ({n_tests} tests); {a.workers} workers"
    )
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    header = ("language", "version", "compile s", "programs", "runs", "pass", "run s", "runs/s", "CPU s")
    print("{:<11} {:<34} {:>9} {:>8} {:>6} {:>6} {:>7} {:>7} {:>7}".format(*header))
    total = total_cpu = 0.0
    failing = []
    for language in a.languages.split(","):
        if not tools[language]["present"]:
            print(f"{language:<11} not available (Debian package {tools[language]['debian']})")
            continue
        run = programs(language, problems)
        with Judge(timeout=6, workers=a.workers) as judge:
            t0 = time.perf_counter()
            judge.run_many([(code, lang, tests[:1]) for _, code, lang, tests in run])  # compile: cache warm
            compile_s = time.perf_counter() - t0
            cpu0 = cpu_seconds()
            t0 = time.perf_counter()
            verdicts = judge.run_many([(code, lang, tests) for _, code, lang, tests in run])
            seconds = time.perf_counter() - t0
        cpu = cpu_seconds() - cpu0
        total += seconds
        total_cpu += cpu
        runs = sum(len(v) for v in verdicts)
        passed = sum(x.ok for v in verdicts for x in v)
        for (task, *_), v in zip(run, verdicts):
            bad = next((x for x in v if not x.ok), None)
            if bad is not None:
                failing.append(f"{language} {task}: {bad.verdict} {bad.message[:120]!r}")
        version = tools[language]["version"][:34]
        print(
            f"{language:<11} {version:<34} {compile_s:>9.1f} {len(run):>8} {runs:>6} {passed:>6} "
            f"{seconds:>7.1f} {runs / seconds:>7.1f} {cpu:>7.1f}",
            flush=True,
        )
    print(f"total run time (cache warm): {total:.1f} s = {total / 60:.2f} min")
    cores = os.cpu_count() or 1
    print(f"total CPU: {total_cpu:.1f} s; / {cores} cores = {total_cpu / cores / 60:.2f} min")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"programs failing a test: {len(failing)}")
    for line in failing:
        print(f"  {line}")


if __name__ == "__main__":
    main()
