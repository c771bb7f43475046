"""Python test executions per second: iclr26.multi_lcb's judge beside LiveCodeBench's runner.

Ours: ``Judge`` (the sandbox) with ``isolation="process"`` (its default: one confined process per
program runs its tests one after another, as LCB's runner does, each test with its own pipes, clock,
CPU limit and fresh ``__main__``), with ``isolation="submission"`` (one confined supervisor per
program, set up once, the program compiled once, each test a child forked from it with its own
pipes, limits and clock) and with ``isolation="test"`` (each test a confined run with its own uid,
cgroup, limits and folder, in a child forked from a warm Python worker). LiveCodeBench
(``lcb_runner/evaluation/compute_code_generation_metrics.py``): a process per problem
(``check_correctness``: a ``multiprocessing`` Manager and Process) whose ``run_test`` execs the
program in-process for each test under its ``reliability_guard``; measured one problem after the
other and with their own pool, ``evaluate_generations(num_process_evaluate=W)``, at the same W as ours.

Usage: ``python benchmarks/multi_lcb_exec.py --lcb DIR [--workload references|canonical] [--workers W]
[--repeats R]``. ``--lcb`` names a LiveCodeBench checkout (the folder holding ``lcb_runner/``); without
it only ours runs. Workloads: ``references`` (our first 20 Python reference programs, 203 tests) or
``canonical`` (HumanEval's canonical solutions as STDIN/STDOUT programs, the 157 problems that convert,
1,480 tests). Each runner does a warm-up pass (syntax checks cached, workers started), then R timed
passes, alternating runners; prints every pass, the median rates and the median ratio, and the CPU
seconds per test of each runner (this process, every process it waited for, and every live descendant
with the children it waited for: our warm workers and the tests they forked): on a shared machine the
rate depends on the other jobs, the CPU per test much less, and the ratio of CPU per test is the ratio
of rates that two idle cores kept busy would give.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time


def tree_cpu() -> float:
    """CPU seconds used so far by this process, the children it waited for, and every live
    descendant (user + system, with the children each waited for)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        total += r.ru_utime + r.ru_stime
    parent, ticks = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(entry)] = int(fields[1])
        ticks[int(entry)] = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    mine = {os.getpid()}
    grew = True
    while grew:
        grew = False
        for pid, ppid in parent.items():
            if ppid in mine and pid not in mine:
                mine.add(pid)
                grew = True
    mine.discard(os.getpid())
    return total + sum(ticks[p] for p in mine) / os.sysconf("SC_CLK_TCK")


# the workload measured in docs/multi-lcb.md: the 20 problems we first wrote references for
FIRST_20 = tuple(
    f"HumanEval/{n}"
    for n in (3, 13, 15, 16, 23, 24, 27, 30, 34, 35, 42, 48, 52, 53, 55, 60, 63, 66, 150, 157)
)


def workload(name: str):
    """``(source, tests)`` pairs of Python programs, with the tests of each."""
    from iclr26.multi_lcb import humaneval_problems, python_stdio_program, reference_program

    problems = humaneval_problems()[0]
    if name == "references":
        by_id = {p.question_id: p for p in problems}
        return [(reference_program(t, "python"), by_id[t].tests) for t in FIRST_20]
    return [(python_stdio_program(p), p.tests) for p in problems]


def ours(judge, progs) -> tuple[float, int, bool]:
    t0 = time.perf_counter()
    res = judge.run_many([(code, "python", tests) for code, tests in progs])
    dt = time.perf_counter() - t0
    return sum(len(r) for r in res) / dt, sum(len(r) for r in res), [all(v.ok for v in r) for r in res]


def _sample(tests) -> dict:
    return {"input_output": json.dumps({"inputs": [i for i, _ in tests], "outputs": [o for _, o in tests]})}


def lcb_serial(progs) -> tuple[float, int, list[bool]]:
    from lcb_runner.evaluation.compute_code_generation_metrics import check_correctness

    t0 = time.perf_counter()
    passed = []
    for code, tests in progs:
        res, _ = check_correctness(_sample(tests), code, timeout=6, debug=False)
        passed.append(all(r is True for r in res))
    n = sum(len(t) for _, t in progs)
    return n / (time.perf_counter() - t0), n, passed


def lcb_pool(progs, workers: int) -> tuple[float, int, list[bool]]:
    # (its tqdm bar goes to stderr: redirecting sys.stderr breaks run_test, which needs its fileno)
    from lcb_runner.evaluation.compute_code_generation_metrics import evaluate_generations

    t0 = time.perf_counter()
    results, _ = evaluate_generations(
        [_sample(t) for _, t in progs], [[c] for c, _ in progs], num_process_evaluate=workers, timeout=6
    )
    n = sum(len(t) for _, t in progs)
    passed = [all(r is True for r in results[i][0]) for i in range(len(progs))]
    return n / (time.perf_counter() - t0), n, passed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lcb", default=os.environ.get("ICLR26_LCB_DIR"))
    ap.add_argument("--workload", choices=("references", "canonical"), default="references")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()

    from iclr26.multi_lcb import Judge

    progs = workload(a.workload)
    print(
        f"workload {a.workload}: {len(progs)} programs, {sum(len(t) for _, t in progs)} tests; "
        f"{a.workers} workers; load {os.getloadavg()[0]:.2f}"
    )
    judges = [Judge(timeout=6, workers=a.workers, isolation=m) for m in ("process", "submission", "test")]
    runners = {}
    for judge in judges:  # where a mode falls back, the same mode is not timed twice
        runners.setdefault(f"ours, isolation={judge.isolation}", lambda j=judge: ours(j, progs))
    if a.lcb:
        sys.path.insert(0, a.lcb)
        runners["lcb check_correctness, serial"] = lambda: lcb_serial(progs)
        runners[f"lcb evaluate_generations, {a.workers} procs"] = lambda: lcb_pool(progs, a.workers)
    rates: dict[str, list[float]] = {k: [] for k in runners}
    cpu_per_test: dict[str, list[float]] = {k: [] for k in runners}
    passed: dict[str, list[bool]] = {}
    try:
        for k, f in runners.items():  # warm-up: syntax checks cached, workers started
            passed[k] = f()[2]
        for rep in range(a.repeats):
            for k, f in runners.items():
                cpu0 = tree_cpu()
                rate, n, ok = f()
                cpu_per_test[k].append((tree_cpu() - cpu0) / n)
                rates[k].append(rate)
                load = os.getloadavg()[0]
                print(
                    f"pass {rep + 1}  {k:<36} {n:>6} tests {rate:>8.1f} tests/s "
                    f"{cpu_per_test[k][-1] * 1000:>6.2f} CPU-ms/test  load {load:.2f}",
                    flush=True,
                )
    finally:
        for judge in judges:
            judge.close()
    first = next(iter(runners))
    print(
        f"\n{'runner':<38} {'median tests/s':>14} {'CPU-ms/test':>11} {'all pass':>9}  agrees with {first!r}"
    )
    for k in runners:
        agree = passed[k] == passed[first]
        cpu_ms = statistics.median(cpu_per_test[k]) * 1000
        print(
            f"{k:<38} {statistics.median(rates[k]):>14.1f} {cpu_ms:>11.2f} "
            f"{sum(passed[k]):>4}/{len(progs):<4}  {agree}"
        )
    for k in list(runners)[1:]:
        ratios = [x / y for x, y in zip(rates[first], rates[k])]
        print(
            f"ratio {first} / {k}: median {statistics.median(ratios):.2f} (passes: "
            + ", ".join(f"{r:.2f}" for r in ratios)
            + ")"
        )
        cpu_ratios = [y / x for x, y in zip(cpu_per_test[first], cpu_per_test[k])]
        print(
            f"CPU per test, {k} / {first}: median {statistics.median(cpu_ratios):.2f} (passes: "
            + ", ".join(f"{r:.2f}" for r in cpu_ratios)
            + ")"
        )


if __name__ == "__main__":
    main()
