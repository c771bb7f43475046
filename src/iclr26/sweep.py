"""Sweeps: one system's headline experiment over many seeds, and the aggregate of its claims.

Layout under a results folder ``DIR``:

- ``DIR/sweeps/seed-N/SLUG/result.json``: the run at seed ``N`` (each ``DIR/sweeps/seed-N`` is an ordinary
  results folder, so ``iclr26 report DIR/sweeps/seed-N`` works on it);
- ``DIR/sweeps/SLUG.json``: the aggregate over the seeds of the last sweep of ``SLUG``: for every claim,
  the mean, standard deviation and 95% t interval over seeds of its measured figure, and how often each
  verdict came out.

Runs follow the resume rule of :func:`iclr26.runner.run_tasks` (same config hash → not run again).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .catalogue import SystemEntry
from .claims import Result, Verdict
from .runner import Outcome, ReproduceSummary, Task, run_tasks
from .store import atomic_write_json, load_result
from .uncertainty import over_seeds

SWEEPS_DIR = "sweeps"
MAX_SEEDS = 1000
LEVEL = 0.95
VERDICTS = tuple(str(v) for v in Verdict)

_RANGE = re.compile(r"^(\d+)\s*-\s*(\d+)$")


def parse_seeds(text: str) -> list[int]:
    """Seeds from text: ``"0-9"``, ``"3"``, ``"0,2,5"`` or a mix (``"0-4,10-12"``), in the given order.

    Raises ``ValueError`` naming the bad part for anything else: an empty list, a negative seed, a
    reversed range, a seed listed twice, or more than ``MAX_SEEDS`` seeds.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"seeds must be like '0-9', '3' or '0,2,5', got {text!r}")
    seeds: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            raise ValueError(f"seeds {text!r} has an empty item (two commas in a row, or a trailing comma)")
        match = _RANGE.match(part)
        if match:
            lo, hi = int(match[1]), int(match[2])
            if lo > hi:
                raise ValueError(f"seed range {part!r} is reversed: write {hi}-{lo}")
            if hi - lo + 1 > MAX_SEEDS:
                raise ValueError(f"seed range {part!r} has {hi - lo + 1} seeds; at most {MAX_SEEDS}")
            seeds.extend(range(lo, hi + 1))
        elif part.isdigit():
            seeds.append(int(part))
        else:
            raise ValueError(f"seed {part!r} in {text!r} is not a non-negative integer or a range like 0-9")
    duplicates = sorted({s for s in seeds if seeds.count(s) > 1})
    if duplicates:
        raise ValueError(f"seeds {text!r} list {', '.join(map(str, duplicates))} more than once")
    if len(seeds) > MAX_SEEDS:
        raise ValueError(f"seeds {text!r} give {len(seeds)} seeds; at most {MAX_SEEDS}")
    return seeds


def seed_dir(out_dir: str | Path, seed: int) -> Path:
    """The results folder of the sweep runs at ``seed``: ``out_dir/sweeps/seed-N``."""
    return Path(out_dir) / SWEEPS_DIR / f"seed-{seed}"


def aggregate_path(out_dir: str | Path, slug: str) -> Path:
    return Path(out_dir) / SWEEPS_DIR / f"{slug}.json"


def _finite_or_none(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def aggregate(
    slug: str, scale: str, results: Sequence[Result], failed: dict[int, str] | None = None
) -> dict[str, Any]:
    """Aggregate the claims of ``results`` (one per seed) by statement, in order of first appearance.

    For every claim: the seeds it was measured at, the mean, the standard deviation (``ddof=1``) and the
    95% Student-t interval over seeds of its measured figure (``None`` where fewer than two seeds
    measured it), and the count of each verdict over the runs. ``failed`` maps seeds whose run failed to
    their error.
    """
    claims: dict[str, dict[str, Any]] = {}
    for r in results:
        for c in r.claims:
            row = claims.setdefault(
                c.statement,
                {
                    "statement": c.statement,
                    "paper": c.paper,
                    "criterion": c.criterion,
                    "post_hoc": c.post_hoc,
                    "values": [],
                    "verdicts": dict.fromkeys(VERDICTS, 0),
                    "runs": 0,
                },
            )
            row["runs"] += 1
            row["verdicts"][str(c.verdict)] += 1
            row["post_hoc"] = row["post_hoc"] or c.post_hoc
            if c.measured is not None and math.isfinite(c.measured):
                row["values"].append(float(c.measured))
    rows = []
    for row in claims.values():
        values = row.pop("values")
        estimate = over_seeds(values, level=LEVEL)
        std = float(np.std(values, ddof=1)) if len(values) >= 2 else math.nan
        bounded = math.isfinite(estimate.lo) and math.isfinite(estimate.hi)
        row.update(
            measured_runs=len(values),
            mean=_finite_or_none(estimate.value),
            std=_finite_or_none(std),
            interval=[estimate.lo, estimate.hi] if bounded else None,
            level=LEVEL,
            method=estimate.method,
        )
        rows.append(row)
    return {
        "slug": slug,
        "scale": scale,
        "seeds": [r.seed for r in results],
        "failed": {str(k): v for k, v in sorted((failed or {}).items())},
        "claims": rows,
    }


def sweep(
    entry: SystemEntry,
    seeds: Sequence[int],
    *,
    scale: str = "small",
    out_dir: str | Path = "results",
    jobs: int = 1,
    executor: str = "local",
    address: str | None = None,
    experiment: Callable | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> tuple[ReproduceSummary, dict[str, Any]]:
    """Run ``entry``'s headline experiment at every seed, store each run and the aggregate.

    Returns the runs' summary and the aggregate (also written to ``out_dir/sweeps/SLUG.json``).
    ``jobs``, ``executor`` and ``address`` are as in :func:`iclr26.runner.run_tasks`; ``experiment``
    overrides the entry's own (used by tests with toy systems).
    """
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must list at least one seed")
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, int | np.integer) or s < 0:
            raise ValueError(f"seeds must be non-negative integers, got {s!r}")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct, got {seeds}")
    tasks = [Task(entry, int(s), scale, str(seed_dir(out_dir, s)), experiment) for s in seeds]
    summary = run_tasks(tasks, jobs=jobs, executor=executor, address=address, on_outcome=on_outcome)
    results, failed = [], {}
    for outcome in summary.outcomes:
        stored = load_result(seed_dir(out_dir, outcome.seed), entry.slug)
        if outcome.state == "failed" or stored is None:
            failed[outcome.seed] = outcome.error or "no readable result.json"
        else:
            results.append(stored)
    agg = aggregate(entry.slug, scale, results, failed)
    atomic_write_json(aggregate_path(out_dir, entry.slug), agg)
    return summary, agg


def load_sweeps(out_dir: str | Path) -> list[dict[str, Any]]:
    """Every readable aggregate under ``out_dir/sweeps/``, sorted by slug."""
    folder = Path(out_dir) / SWEEPS_DIR
    out = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            agg = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(agg, dict) and isinstance(agg.get("claims"), list):
            out.append(agg)
    return out
