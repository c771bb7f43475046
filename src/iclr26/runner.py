"""Running headline experiments: one system (``run_system``), or many (system, seed) tasks with resume
(``run_tasks``, ``reproduce``) on the local executor or on Ray."""

from __future__ import annotations

import dataclasses
import datetime as dt
import inspect
import multiprocessing
import platform
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from . import __version__
from .catalogue import SystemEntry
from .claims import Result
from .runtime import SCALES, RunContext, seed_everything
from .store import config_hash, load_result, save_error, save_result

_VERSIONED_PACKAGES = ("numpy", "scipy", "scikit-learn", "torch", "torch-geometric", "transformers", "pybamm")


def environment_versions() -> dict[str, str]:
    """Versions of Python, iclr26 and the main numeric packages that are installed."""
    versions = {"python": platform.python_version(), "iclr26": __version__, "platform": platform.platform()}
    for name in _VERSIONED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def run_system(
    entry: SystemEntry,
    *,
    seed: int = 0,
    scale: str = "small",
    out_dir: str | Path = "results",
    show_progress: bool = True,
    experiment: Callable[[RunContext], Result] | None = None,
    options: dict[str, Any] | None = None,
) -> Result:
    """Run ``entry``'s headline experiment and store ``out_dir/SLUG/result.json`` atomically.

    ``experiment`` overrides the entry's own experiment (used by tests with toy systems).
    ``options`` are model-benchmark options (``model``, ``judge``, ``limit``, ``batch_size``,
    ``api_key_env``; see :class:`~iclr26.runtime.RunContext`): a system takes those its experiment
    module lists in ``MODEL_OPTIONS``; any other raises ``ValueError`` before anything runs. The
    options set are part of the config hash and stored as ``metrics["run_options"]``.
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    run = experiment if experiment is not None else entry.experiment()
    options = {k: v for k, v in (options or {}).items() if v is not None}
    accepted = getattr(inspect.getmodule(run), "MODEL_OPTIONS", ())
    refused = [k for k in options if k not in accepted]
    if refused:
        flags = ", ".join("--" + k.replace("_", "-") for k in refused)
        takes = ", ".join("--" + k.replace("_", "-") for k in accepted) or "no model options"
        raise ValueError(f"{entry.slug} does not take {flags} (it takes {takes})")
    ctx = RunContext(
        slug=entry.slug,
        seed=seed,
        scale=scale,
        out_dir=Path(out_dir) / entry.slug,
        show_progress=show_progress,
        **options,
    )
    seed_everything(seed)
    start = time.perf_counter()
    result = run(ctx)
    seconds = time.perf_counter() - start
    if not isinstance(result, Result):
        raise TypeError(
            f"{entry.slug}: experiment returned {type(result).__name__}, expected iclr26.claims.Result"
        )
    result.slug = entry.slug
    result.seed = seed
    result.scale = scale
    result.seconds = round(seconds, 3)
    result.config_hash = config_hash(entry.slug, seed, scale, options=options)
    if options:
        result.metrics["run_options"] = dict(options)
    result.versions = environment_versions()
    result.finished = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    result.artifacts = list(dict.fromkeys([*ctx.artifacts, *result.artifacts]))
    save_result(out_dir, result)
    return result


EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class Task:
    """One run: a system's headline experiment at one seed and scale, stored under ``out_dir``.

    ``experiment`` overrides the entry's own experiment (used by tests with toy systems).
    """

    entry: SystemEntry
    seed: int
    scale: str
    out_dir: str
    experiment: Callable[[RunContext], Result] | None = None


@dataclass
class Outcome:
    slug: str
    state: str  # "ran", "cached" or "failed"
    seconds: float | None = None
    error: str = ""
    seed: int | None = None


@dataclass
class ReproduceSummary:
    outcomes: list[Outcome] = field(default_factory=list)

    def by_state(self, state: str) -> list[str]:
        return [o.slug for o in self.outcomes if o.state == state]


def record_failure(task: Task, message: str, seconds: float | None, trace: str = "") -> Outcome:
    """Store ``DIR/SLUG/error.json`` for a failed task and return its outcome."""
    save_error(
        task.out_dir,
        task.entry.slug,
        {
            "slug": task.entry.slug,
            "seed": task.seed,
            "scale": task.scale,
            "error": message,
            "traceback": trace,
            "seconds": seconds,
        },
    )
    return Outcome(task.entry.slug, "failed", seconds, message, task.seed)


def run_task(task: Task) -> Outcome:
    """Run one task, turning any exception into a stored error (so the others still run)."""
    start = time.perf_counter()
    try:
        result = run_system(
            task.entry,
            seed=task.seed,
            scale=task.scale,
            out_dir=task.out_dir,
            show_progress=False,
            experiment=task.experiment,
        )
        return Outcome(task.entry.slug, "ran", result.seconds, seed=task.seed)
    except Exception as exc:  # noqa: BLE001 - a failing system must not stop the others
        seconds = round(time.perf_counter() - start, 3)
        return record_failure(task, f"{type(exc).__name__}: {exc}", seconds, traceback.format_exc())


def run_tasks(
    tasks: Sequence[Task],
    *,
    jobs: int = 1,
    executor: str = "local",
    address: str | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> ReproduceSummary:
    """Run every task unless a result with the same config hash is already stored under its ``out_dir``.

    A failing task is recorded (``OUT_DIR/SLUG/error.json``) and the others still run. ``executor="local"``
    runs the tasks in this process (``jobs=1``) or in ``jobs`` spawned processes (so torch and BLAS state
    are not shared); ``executor="ray"`` runs each task in its own Ray worker process, on a local Ray
    instance with ``jobs`` CPUs or on the cluster at ``address`` (see :mod:`iclr26.ray_executor`).
    Outcomes are reported to ``on_outcome`` as they arrive and returned in the order of ``tasks``.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {EXECUTORS}, got {executor!r}")
    if address is not None and executor != "ray":
        raise ValueError(f"address is only used by executor='ray', got executor={executor!r}")
    for t in tasks:
        if t.scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}, got {t.scale!r}")
    # Workers (Ray's in particular) may run in another working directory: absolute paths only.
    tasks = [dataclasses.replace(t, out_dir=str(Path(t.out_dir).resolve())) for t in tasks]
    outcomes: dict[int, Outcome] = {}

    def record(index: int, outcome: Outcome) -> None:
        outcomes[index] = outcome
        if on_outcome is not None:
            on_outcome(outcome)

    pending: list[tuple[int, Task]] = []
    for i, task in enumerate(tasks):
        stored = load_result(task.out_dir, task.entry.slug)
        if stored is not None and stored.config_hash == config_hash(task.entry.slug, task.seed, task.scale):
            record(i, Outcome(task.entry.slug, "cached", stored.seconds, seed=task.seed))
        else:
            pending.append((i, task))

    if executor == "ray":
        from .ray_executor import run_on_ray

        run_on_ray(pending, jobs=jobs, address=address, record=record)
    elif jobs == 1 or len(pending) <= 1:
        for i, task in pending:
            record(i, run_task(task))
    else:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            futures = {pool.submit(run_task, task): (i, task) for i, task in pending}
            for future in as_completed(futures):
                i, task = futures[future]
                try:
                    outcome = future.result()
                except BrokenProcessPool:  # a worker died: the pool cannot run what was left in it
                    message = (
                        "BrokenProcessPool: a worker process died (running this task or one beside it) "
                        "before this task returned; run again to retry it"
                    )
                    outcome = record_failure(task, message, None)
                record(i, outcome)
    return ReproduceSummary([outcomes[i] for i in sorted(outcomes)])


def reproduce(
    entries: Sequence[SystemEntry],
    *,
    seed: int = 0,
    scale: str = "small",
    out_dir: str | Path = "results",
    jobs: int = 1,
    experiments: dict[str, Callable] | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
    executor: str = "local",
    address: str | None = None,
) -> ReproduceSummary:
    """Run every entry's experiment at ``seed`` unless a result with the same config hash is stored.

    Results go to ``out_dir/SLUG/result.json``; see :func:`run_tasks` for failures, ``jobs``,
    ``executor`` and ``address``. ``experiments`` maps slugs to experiments that override the entries'
    own (used by tests with toy systems).
    """
    experiments = experiments or {}
    tasks = [Task(e, seed, scale, str(out_dir), experiments.get(e.slug)) for e in entries]
    return run_tasks(tasks, jobs=jobs, executor=executor, address=address, on_outcome=on_outcome)
