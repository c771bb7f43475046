"""Running programs on STDIN/STDOUT tests through :mod:`iclr26.sandbox`, with LCB-style verdicts."""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..sandbox import Job, MiB, Sandbox
from ._lcb import grade_stdio
from ._toolchains import get_multi_language

VERDICTS = ("OK", "WA", "TLE", "MLE", "RE", "CE")
_STATUS = {
    "timeout": "TLE",
    "memory": "MLE",
    "runtime_error": "RE",
    "output_limit": "RE",
    "killed": "RE",
    "compile_error": "CE",
}


@dataclass(frozen=True)
class TestVerdict:
    """One test's outcome: ``verdict`` in :data:`VERDICTS`, a ``message`` (why), ``wall_time`` in s."""

    verdict: str
    message: str = ""
    wall_time: float = 0.0

    @property
    def ok(self) -> bool:
        return self.verdict == "OK"


def _verdict(execution, expected: str) -> TestVerdict:
    if execution.compile is not None and execution.compile.status != "ok":
        return TestVerdict("CE", (execution.compile.stderr or execution.compile.detail or "")[-2000:])
    if execution.status == "ok":
        passed, msg = grade_stdio(execution.stdout, expected)
        return TestVerdict("OK" if passed else "WA", msg, execution.wall_time)
    v = _STATUS.get(execution.status, "RE")
    msg = f"{execution.status}: {execution.detail}; {execution.stderr[-1000:]}".strip()
    return TestVerdict(v, msg, execution.wall_time)


class Judge:
    """A sandbox held open for many programs: each distinct program is compiled once (cached by a hash
    of its source), tests run on a worker pool sized to the CPUs, a Python program's tests one after
    another in one confined process where the sandbox offers it (``isolation="process"``, as
    LiveCodeBench's runner runs them).

    Parameters
    ----------
    timeout : float
        Wall-clock seconds per test (LCB: 6).
    memory_limit : int
        Bytes per run.
    workers : int or None
        Threads of the pool; None for the number of CPUs.
    warm_workers : bool
        Python programs run in children forked from warm interpreters, one per thread
        (``Sandbox(warm_workers=True)``: same limits and verdicts, no interpreter start-up per test);
        False starts ``python3`` for every test (with ``isolation="test"``).
    isolation : str
        ``"process"``: a Python program's tests run one after another in one confined process (LCB's
        sharing: imported modules carry over; each test has its own pipes, clock, CPU limit, fresh
        ``__main__`` and builtins; what a test leaves running is killed with the process and the
        next test gets a new one); other languages as ``"submission"``; needs a cgroup, else
        ``"submission"``. ``"submission"``: the tests of one program share one confined supervisor,
        set up once, and each runs in a child forked from it (its own process, pipes, limits and
        clock; the program's tests share its uid, folder and cgroup). Both are used where the
        sandbox offers them (as root with namespaces), else ``"test"``: every test is a confined run
        of its own. docs/sandbox.md says what each shares; verdicts are the same unless a program
        depends on state an earlier test left in the interpreter.
    """

    def __init__(
        self,
        *,
        timeout: float = 6.0,
        memory_limit: int = 1024 * MiB,
        workers: int | None = None,
        warm_workers: bool = True,
        isolation: str = "process",
    ):
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            raise ValueError(f"timeout must be a number > 0, got {timeout!r}")
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise ValueError(f"workers must be None or an int >= 1, got {workers!r}")
        self.workers = workers or os.cpu_count() or 1
        self._sb = Sandbox(
            time_limit=float(timeout),
            memory_limit=memory_limit,
            output_limit=16 * MiB,
            warm_workers=warm_workers,
            isolation=isolation,
        )

    @property
    def isolation(self) -> str:
        """The isolation in effect (``"process"`` falls back to ``"submission"``, and that to
        ``"test"``, where not offered)."""
        return self._sb.isolation

    def run_many(self, programs) -> list[list[TestVerdict]]:
        """``programs``: ``(code, language, tests)`` triples (``tests``: ``(input, output)`` pairs).

        Returns one list of verdicts per program, one verdict per test. Empty code gets ``CE`` "no code"
        for every test without running anything.
        """
        jobs, where, out = [], [], []
        for p, (code, language, tests) in enumerate(programs):
            lang = get_multi_language(language)
            if not isinstance(code, str):
                raise ValueError(f"code must be a str, got {type(code).__name__}")
            tests = list(tests)
            out.append([None] * len(tests))
            if not code.strip():
                out[p] = [TestVerdict("CE", "no code")] * len(tests)
                continue
            for t, (inp, _) in enumerate(tests):
                jobs.append(Job(code, lang, inp))
                where.append((p, t, tests[t][1]))
        for (p, t, expected), ex in zip(where, self._sb.run_many(jobs, workers=self.workers)):
            out[p][t] = _verdict(ex, expected)
        return out

    def close(self) -> None:
        self._sb.close()

    def __enter__(self) -> Judge:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def run_tests(code: str, language: str, tests, timeout: float = 6, *, judge: Judge | None = None):
    """Run ``code`` in ``language`` on each ``(input, expected_output)`` test, confined by the sandbox.

    Returns one :class:`TestVerdict` per test (``OK``/``WA``/``TLE``/``MLE``/``RE``/``CE`` with a
    message). Pass a :class:`Judge` to reuse its compile cache and pool across calls.
    """
    if judge is not None:
        return judge.run_many([(code, language, tests)])[0]
    with Judge(timeout=timeout) as j:
        return j.run_many([(code, language, tests)])[0]
