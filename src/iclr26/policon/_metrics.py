"""Pass rates and welfare means by goal x party count x topic, with bootstrap intervals over tasks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..validation import check_int
from ._data import GOALS, PARTY_NUMS, VOTING_GOALS
from ._score import row_arrays, score_rows


def mean_interval(
    values: np.ndarray, n_boot: int, level: float, rng: np.random.Generator
) -> tuple[float, float, float]:
    """Mean of ``values`` ``(n,)`` and its percentile bootstrap interval (resampling the n units)."""
    idx = rng.integers(0, len(values), size=(n_boot, len(values)))
    reps = values[idx].mean(axis=1)
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(reps, [tail, 100 - tail])
    return float(values.mean()), float(lo), float(hi)


def policon_metrics(
    rows: Sequence[Mapping[str, Any]],
    *,
    topic_groups: Mapping[str, str] | None = None,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Aggregate scenario rows (see :func:`row_arrays`) into the paper's table cells.

    Parameters
    ----------
    rows: scenario rows or the authors' result rows.
    topic_groups: optional ``{topic: group}`` (e.g. the paper's 5 coarse topic groups); cells are
        then also given per group. Every topic of ``rows`` must be mapped.
    n_boot, level, seed: the bootstrap over tasks (rows) within each cell.

    Returns
    -------
    One dict per cell: ``goal``, ``party_num`` (an int, or ``"all"``), ``scope`` (``"all"``,
    ``"topic"`` or ``"group"``), ``topic`` (the topic or group name, ``"all"`` for all), ``metric``
    (``"pass_rate"`` for voting goals, ``"welfare"`` for the mean of min / mean scores), ``n``,
    ``value``, ``lo``, ``hi``.
    """
    n_boot = check_int(n_boot, "n_boot", minimum=10)
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    a = row_arrays(rows)
    outcome = score_rows(a)["outcome"]
    topics = a["topic"]
    scopes: list[tuple[str, np.ndarray]] = [("all", np.full(len(topics), "all"))]
    scopes.append(("topic", topics))
    if topic_groups is not None:
        missing = sorted(set(topics) - set(topic_groups))
        if missing:
            raise ValueError(f"topic_groups lacks topics {missing}")
        scopes.append(("group", np.array([topic_groups[t] for t in topics])))
    rng = np.random.default_rng(seed)
    cells = []
    for goal in GOALS:
        g = a["goal"] == goal
        for k in (*PARTY_NUMS, "all"):
            gk = g if k == "all" else g & (a["party_num"] == k)
            for scope, labels in scopes:
                for name in np.unique(labels[gk]):
                    m = gk & (labels == name)
                    value, lo, hi = mean_interval(outcome[m], n_boot, level, rng)
                    cells.append(
                        {
                            "goal": goal,
                            "party_num": k,
                            "scope": scope,
                            "topic": str(name),
                            "metric": "pass_rate" if goal in VOTING_GOALS else "welfare",
                            "n": int(m.sum()),
                            "value": value,
                            "lo": lo,
                            "hi": hi,
                        }
                    )
    return cells
