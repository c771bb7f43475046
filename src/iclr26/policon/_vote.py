"""Voting rules and social welfare over party scores, vectorised over many tasks.

Scores are the judge's 0-9 support of each party for a resolution. A task's parties are aligned in
the order of its ``stances``; a batch of tasks is a ``(n_tasks, max_parties)`` array padded with NaN.
Sums run party by party from the left (a loop over at most eight columns, vectorised over tasks), so
every float equals the authors' Python ``sum`` bit for bit (Kang et al., PoliCon, ICLR 2026,
``evals/get_voting_result.py`` and ``utils/swf.py``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..validation import check_in

#: The three voting rules: weighted score >= 5; weighted score >= 20/3; veto party's score >= 6 and
#: weighted score >= 5 (the authors' ``is_pass_veto``).
RULES = ("simple_majority", "two_thirds", "veto")
#: Thresholds on the seat-weighted score (0-9 scale), as in the authors' code.
SIMPLE_THRESHOLD = 5
TWO_THIRDS_THRESHOLD = 20 / 3
VETO_THRESHOLD = 6
#: Above this the authors' welfare function returns the minimum (Rawlsian).
ALPHA_AS_INFINITY = 100


def _left_sum(values: np.ndarray) -> np.ndarray:
    """Row sums of ``values`` ``(n, p)`` added left to right, NaN cells skipped. Shape ``(n,)``."""
    acc = np.zeros(values.shape[0])
    for j in range(values.shape[1]):
        col = values[:, j]
        acc = np.where(np.isnan(col), acc, acc + col)
    return acc


def _pow(base: np.ndarray, exponent: np.ndarray | float) -> np.ndarray:
    """Elementwise ``base ** exponent`` with the C library's ``pow`` (as Python's ``**``), NaN kept.

    NumPy's SIMD power can differ from ``pow`` in the last bit; the authors' welfare is Python floats.
    """
    b, e = np.broadcast_arrays(np.asarray(base, dtype=float), np.asarray(exponent, dtype=float))
    flat = [
        math.nan if math.isnan(x) else (math.inf if x == 0 and y < 0 else math.pow(x, y))
        for x, y in zip(b.ravel().tolist(), e.ravel().tolist())
    ]
    return np.array(flat).reshape(b.shape)


def weighted_score(weights: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Seat-weighted score ``sum_j w_j s_j`` per task, summed left to right. ``(n, p)`` -> ``(n,)``."""
    return _left_sum(weights * scores)


def vote_arrays(
    weights: np.ndarray, scores: np.ndarray, veto_scores: np.ndarray | None, rule: str
) -> dict[str, np.ndarray]:
    """The vote of each task under ``rule`` from aligned arrays.

    Parameters
    ----------
    weights, scores: ``(n, p)`` seat weights and party scores, NaN-padded alike.
    veto_scores: ``(n,)`` the veto party's score (needed for ``rule="veto"``).
    rule: one of :data:`RULES`.

    Returns
    -------
    ``{"passed": (n,) int, "voting_result": (n,) float}``, plus ``"veto_alone"`` (the veto party's
    score >= 5, the authors' ``is_pass_simple_veto``) for the veto rule.
    """
    result = weighted_score(weights, scores)
    if rule == "simple_majority":
        return {"passed": (result >= SIMPLE_THRESHOLD).astype(int), "voting_result": result}
    if rule == "two_thirds":
        return {"passed": (result >= TWO_THIRDS_THRESHOLD).astype(int), "voting_result": result}
    passed = (veto_scores >= VETO_THRESHOLD) & (result >= SIMPLE_THRESHOLD)
    return {
        "passed": passed.astype(int),
        "veto_alone": (veto_scores >= SIMPLE_THRESHOLD).astype(int),
        "voting_result": result,
    }


def welfare(scores: Any, alpha: float) -> np.ndarray:
    """Atkinson-type social welfare of each row of party scores.

    Parameters
    ----------
    scores: ``(n, p)`` (or ``(p,)`` for one task) non-negative scores; NaN pads tasks with fewer parties.
    alpha: inequality aversion >= 0: 0 is the mean (utilitarian), 1 the geometric mean (Nash),
        ``math.inf`` (or anything above 100, as in the authors' code) the minimum (Rawlsian); otherwise
        ``(mean(s ** (1 - alpha))) ** (1 / (1 - alpha))``.

    Returns
    -------
    ``(n,)`` welfare (a 0-d array for 1-D input). Equal to the authors' ``social_welfare_function``
    bit for bit (same summation and product order).
    """
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or math.isnan(alpha) or alpha < 0:
        raise ValueError(f"alpha must be a number >= 0 (math.inf for Rawlsian), got {alpha!r}")
    arr = np.asarray(scores, dtype=float)
    one = arr.ndim == 1
    arr = np.atleast_2d(arr)
    if arr.ndim != 2:
        raise ValueError(f"scores must be 1-D or 2-D, got shape {np.shape(scores)}")
    present = ~np.isnan(arr)
    if not present.any(axis=1).all() or (arr[present] < 0).any():
        raise ValueError("scores must hold at least one non-negative score per task")
    n = present.sum(axis=1)
    if alpha > ALPHA_AS_INFINITY:
        out = np.nanmin(arr, axis=1)
    elif alpha == 1:
        prod = np.ones(arr.shape[0])
        for j in range(arr.shape[1]):
            prod = np.where(present[:, j], prod * arr[:, j], prod)
        out = _pow(prod, 1 / n)
    elif alpha == 0:  # u ** 1 and m ** 1.0 are exact: skip the powers
        out = _left_sum(arr) / n
    else:
        out = _pow(_left_sum(_pow(arr, 1 - alpha)) / n, 1 / (1 - alpha))
    return out[0] if one else out


def _task_arrays(
    tasks: Sequence[Mapping[str, Any]], scores: Sequence[Mapping[str, float]] | np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Aligned ``(n, p)`` weights and scores and ``(n,)`` veto scores from task records."""
    n = len(tasks)
    p = max(len(t["stances"]) for t in tasks)
    w = np.full((n, p), np.nan)
    s = np.full((n, p), np.nan)
    veto = np.full(n, np.nan)
    given = np.asarray(scores, dtype=float) if isinstance(scores, np.ndarray) else None
    if given is not None and (given.ndim != 2 or given.shape[0] != n):
        raise ValueError(f"scores must be (n_tasks={n}, max_parties) when an array, got {given.shape}")
    for i, task in enumerate(tasks):
        names = [st["party_name"] for st in task["stances"]]
        k = len(names)
        w[i, :k] = task["seat_weights"]
        if given is not None:
            s[i, :k] = given[i, :k]
        else:
            missing = set(names) - set(scores[i])
            if missing:
                raise ValueError(f"scores[{i}] lacks parties {sorted(missing)} of task {task.get('id')!r}")
            s[i, :k] = [scores[i][nm] for nm in names]
        if task.get("veto_party_name") in names:
            veto[i] = s[i, names.index(task["veto_party_name"])]
    if np.isnan(s).sum() != np.isnan(w).sum():
        raise ValueError("scores must give a number for every party of every task")
    return w, s, veto


def vote(
    tasks: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    scores: Mapping[str, float] | Sequence[Mapping[str, float]] | np.ndarray,
    rule: str,
) -> dict[str, Any]:
    """Whether resolutions pass under a seat-weighted voting ``rule``.

    Parameters
    ----------
    tasks: one task record or a list of them (``stances``, ``seat_weights``, ``veto_party_name``);
        checked with :func:`check_task`.
    scores: per task ``{party_name: score}`` (0-9), or a ``(n_tasks, max_parties)`` array aligned with
        each task's ``stances``.
    rule: ``"simple_majority"`` (weighted score >= 5), ``"two_thirds"`` (>= 20/3) or ``"veto"`` (the veto
        party's score >= 6 and weighted score >= 5).

    Returns
    -------
    ``{"passed", "voting_result"}`` (and ``"veto_alone"`` for ``"veto"``): ``(n,)`` arrays, or scalars
    for one task.
    """
    from ._data import check_task

    check_in(rule, RULES, "rule")
    one = isinstance(tasks, Mapping)
    task_list = [tasks] if one else list(tasks)
    if not task_list:
        raise ValueError("tasks must not be empty")
    if one and isinstance(scores, Mapping):
        scores = [scores]
    if not isinstance(scores, np.ndarray) and len(scores) != len(task_list):
        raise ValueError(f"scores must have one entry per task ({len(task_list)}), got {len(scores)}")
    for i, t in enumerate(task_list):
        check_task(t, f"tasks[{i}]")
    w, s, veto = _task_arrays(task_list, scores)
    out = vote_arrays(w, s, veto, rule)
    return {k: v[0].item() for k, v in out.items()} if one else out
