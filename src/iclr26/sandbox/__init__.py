"""A sandbox for model-written code, in many languages.

``run(source, language, stdin)`` compiles (once) and runs a program confined: fresh working directory,
clean environment, no network (new network namespace, else bubblewrap), read-only file system, an
unprivileged user, resource limits (CPU, memory via cgroup or rlimits/runtime flags, processes, file
size, open files, no core dumps), a wall-clock limit that kills every process the program started, and
capped output. :class:`Sandbox` keeps compiled programs for many runs; :meth:`Sandbox.run_many` runs
(program, input) pairs on a worker pool. ``outputs_match`` compares outputs as LiveCodeBench does.
See docs/sandbox.md for what it does not protect against.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ._compare import outputs_match
from ._exec import STATUSES, Execution
from ._languages import LANGUAGES, Language, get_language
from ._sandbox import Job, MiB, Program, Sandbox, SandboxUnavailable, isolation_report
from ._toolchains import Toolchain, toolchains

__all__ = [
    "LANGUAGES",
    "STATUSES",
    "Execution",
    "Job",
    "Language",
    "MiB",
    "Program",
    "Sandbox",
    "SandboxUnavailable",
    "Toolchain",
    "get_language",
    "isolation_report",
    "outputs_match",
    "run",
    "run_batch",
    "toolchains",
]


def run(
    source: str | bytes,
    language: str,
    stdin: str | bytes = "",
    *,
    time_limit: float = 2.0,
    memory_limit: int = 512 * MiB,
    output_limit: int = 16 * MiB,
    files: Mapping[str, str | bytes] | None = None,
    **options,
) -> Execution:
    """Compile and run one program on one input, confined; see :class:`Sandbox` for ``options``.

    Parameters
    ----------
    source : str or bytes
        The program.
    language : str
        One of :data:`LANGUAGES` (or an alias: ``"c++"``, ``"py"``, ``"js"``, ...).
    stdin : str or bytes
        Fed to the program's standard input.
    time_limit : float
        Wall-clock seconds for the run (compilation has its own limit).
    memory_limit : int
        Bytes.
    output_limit : int
        Bytes of stdout+stderr.
    files : mapping of str to str/bytes, optional
        Files placed in the run's working directory.

    Returns
    -------
    Execution
        ``status`` is one of :data:`STATUSES`.

    Examples
    --------
    >>> from iclr26.sandbox import run
    >>> run("print(int(input()) * 2)", "python", "21\\n").stdout
    '42\\n'
    """
    with Sandbox(
        time_limit=time_limit, memory_limit=memory_limit, output_limit=output_limit, **options
    ) as sb:
        return sb.run(source, language, stdin, files=files)


def run_batch(
    jobs: Iterable[Job | tuple],
    *,
    workers: int | None = None,
    time_limit: float = 2.0,
    memory_limit: int = 512 * MiB,
    output_limit: int = 16 * MiB,
    **options,
) -> list[Execution]:
    """Run many (program, input) pairs on a worker pool, compiling each distinct program once.

    ``jobs`` holds :class:`Job` objects or ``(source, language[, stdin])`` tuples; results come back in
    the same order. ``workers`` defaults to the number of CPUs. Other arguments as :func:`run`.
    """
    with Sandbox(
        time_limit=time_limit, memory_limit=memory_limit, output_limit=output_limit, **options
    ) as sb:
        return sb.run_many(jobs, workers=workers)
