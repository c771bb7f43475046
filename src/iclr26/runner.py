"""Running headline experiments: one system (``run_system``) or many with resume (``reproduce``)."""

from __future__ import annotations

import inspect
import multiprocessing
import platform
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
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
    result.artifacts = list(dict.fromkeys([*ctx.artifacts, *result.artifacts]))
    save_result(out_dir, result)
    return result


@dataclass
class Outcome:
    slug: str
    state: str  # "ran", "cached" or "failed"
    seconds: float | None = None
    error: str = ""


@dataclass
class ReproduceSummary:
    outcomes: list[Outcome] = field(default_factory=list)

    def by_state(self, state: str) -> list[str]:
        return [o.slug for o in self.outcomes if o.state == state]


def _run_one(entry: SystemEntry, seed: int, scale: str, out_dir: str, experiment: Callable | None) -> Outcome:
    """Run one system, turning any exception into a stored error (so the others still run)."""
    start = time.perf_counter()
    try:
        result = run_system(
            entry, seed=seed, scale=scale, out_dir=out_dir, show_progress=False, experiment=experiment
        )
        return Outcome(entry.slug, "ran", result.seconds)
    except Exception as exc:  # noqa: BLE001 - a failing system must not stop the others
        message = f"{type(exc).__name__}: {exc}"
        seconds = round(time.perf_counter() - start, 3)
        save_error(
            out_dir,
            entry.slug,
            {
                "slug": entry.slug,
                "seed": seed,
                "scale": scale,
                "error": message,
                "traceback": traceback.format_exc(),
                "seconds": seconds,
            },
        )
        return Outcome(entry.slug, "failed", seconds, message)


def reproduce(
    entries: Sequence[SystemEntry],
    *,
    seed: int = 0,
    scale: str = "small",
    out_dir: str | Path = "results",
    jobs: int = 1,
    experiments: dict[str, Callable] | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> ReproduceSummary:
    """Run every entry's experiment unless a result with the same config hash is already stored.

    A failing system is recorded (``DIR/SLUG/error.json``) and the others still run. With ``jobs > 1``
    systems run in separate processes (spawned, so torch and BLAS state are not shared).
    """
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    out_dir = str(out_dir)
    experiments = experiments or {}
    summary = ReproduceSummary()

    def record(outcome: Outcome) -> None:
        summary.outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)

    pending = []
    for entry in entries:
        stored = load_result(out_dir, entry.slug)
        if stored is not None and stored.config_hash == config_hash(entry.slug, seed, scale):
            record(Outcome(entry.slug, "cached", stored.seconds))
        else:
            pending.append(entry)

    if jobs == 1 or len(pending) <= 1:
        for entry in pending:
            record(_run_one(entry, seed, scale, out_dir, experiments.get(entry.slug)))
    else:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            futures = [
                pool.submit(_run_one, e, seed, scale, out_dir, experiments.get(e.slug)) for e in pending
            ]
            for future in as_completed(futures):
                record(future.result())
    order = {e.slug: i for i, e in enumerate(entries)}
    summary.outcomes.sort(key=lambda o: order.get(o.slug, sys.maxsize))
    return summary
