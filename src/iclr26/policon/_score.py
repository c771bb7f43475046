"""Scoring scenario rows (one judged resolution per task and goal), vectorised, and the authors'
result files.

A *scenario row* is a dict with ``goal`` (one of :data:`GOALS`), ``party_num``, ``topic``,
``scores`` (``{party: 0-9}`` in the task's party order), ``weights`` (seat weights in that order) and
``veto_party_name``. The authors' rows (``results/eubench_logs/<k>/<topic>/<goal>/<model>.json``)
carry the same content as ``eval_scores``/``weights``/``veto_party_name`` and are accepted as they are.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._data import AUTHORS_GOALS, GOALS, PARTY_NUMS, WELFARE_GOALS
from ._vote import vote_arrays, welfare

_FROM_AUTHORS = {v: k for k, v in AUTHORS_GOALS.items()}


def _row_goal(row: Mapping[str, Any], i: int) -> str:
    goal = row.get("goal")
    if goal is None:  # the authors' fields
        setting = row.get("task_setting")
        goal = _FROM_AUTHORS.get(
            setting if setting != "seat_apportionment" else row.get("voting_threshold_setting")
        )
    if goal not in GOALS:
        raise ValueError(f"rows[{i}] has goal {goal!r}; valid goals: {GOALS}")
    return goal


def oracle_rows(tasks: Sequence[Mapping[str, Any]], goals: Sequence[str] = GOALS) -> list[dict[str, Any]]:
    """Scenario rows of the adopted resolutions judged by the real vote: per task and goal, each party's
    roll-call ``choice`` as its score (what :class:`OracleJudge` gives), with the task's weights and veto."""
    return [
        {
            "goal": g,
            "party_num": t["party_num"],
            "topic": t["topic"],
            "scores": {s["party_name"]: s["choice"] for s in t["stances"]},
            "weights": t["seat_weights"],
            "veto_party_name": t["veto_party_name"],
        }
        for t in tasks
        for g in goals
    ]


def row_arrays(rows: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    """Aligned arrays of scenario rows.

    Returns
    -------
    ``goal`` ``(n,)`` str, ``party_num`` ``(n,)`` int, ``topic`` ``(n,)`` str, ``scores`` and
    ``weights`` ``(n, p)`` NaN-padded, ``veto`` ``(n,)`` the veto party's score (NaN when the row
    names none). Raises ``ValueError`` naming the row for an unknown goal or party count, weights not
    summing to 1, or a veto party that is not among the row's parties.
    """
    if not rows:
        raise ValueError("rows must not be empty")
    n = len(rows)
    p = max(len(r.get("scores") or r.get("eval_scores") or {}) for r in rows)
    scores = np.full((n, p), np.nan)
    weights = np.full((n, p), np.nan)
    veto = np.full(n, np.nan)
    goals, topics, ks = [], [], np.zeros(n, dtype=int)
    for i, r in enumerate(rows):
        goals.append(_row_goal(r, i))
        sc = r.get("scores") if r.get("scores") is not None else r.get("eval_scores")
        if not isinstance(sc, Mapping) or not sc:
            raise ValueError(f"rows[{i}] needs 'scores' (or 'eval_scores'): a non-empty {{party: score}}")
        k = int(r.get("party_num", len(sc)))
        if k not in PARTY_NUMS or k != len(sc):
            raise ValueError(
                f"rows[{i}] has party_num {r.get('party_num')!r} with {len(sc)} scores; valid: {PARTY_NUMS}"
            )
        ks[i] = k
        topics.append(str(r.get("topic", "")))
        scores[i, :k] = list(sc.values())
        w = r.get("weights", r.get("seat_weights"))
        if w is None or len(w) != k or abs(float(np.sum(w)) - 1.0) > 1e-9:
            raise ValueError(f"rows[{i}] weights must be {k} seat weights summing to 1, got {w!r}")
        weights[i, :k] = w
        v = r.get("veto_party_name")
        if v is not None:
            if v not in sc:
                raise ValueError(f"rows[{i}] veto_party_name {v!r} is not one of its parties {list(sc)}")
            veto[i] = sc[v]
        elif goals[-1] == "veto":
            raise ValueError(f"rows[{i}] has goal 'veto' but no veto_party_name")
    if np.isnan(scores).sum() != np.isnan(weights).sum():
        raise ValueError("rows must give a numeric score for every party")
    return {
        "goal": np.array(goals),
        "party_num": ks,
        "topic": np.array(topics),
        "scores": scores,
        "weights": weights,
        "veto": veto,
    }


def score_rows(rows: Sequence[Mapping[str, Any]] | dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every deterministic outcome of every row, in one vectorised pass.

    Returns
    -------
    ``(n,)`` arrays: ``voting_result`` (seat-weighted score), ``simple_majority``, ``two_thirds``,
    ``veto``, ``veto_alone`` (0/1; veto columns are -1 where a row names no veto party), ``rawlsian``
    (min score), ``utilitarian`` (mean score), and ``outcome``: the row's own goal's figure (pass 0/1
    for voting goals, welfare for welfare goals).
    """
    a = rows if isinstance(rows, dict) else row_arrays(rows)
    s, w, veto = a["scores"], a["weights"], a["veto"]
    has_veto = ~np.isnan(veto)
    simple = vote_arrays(w, s, None, "simple_majority")
    out = {
        "voting_result": simple["voting_result"],
        "simple_majority": simple["passed"],
        "two_thirds": vote_arrays(w, s, None, "two_thirds")["passed"],
    }
    v = vote_arrays(w, s, np.where(has_veto, veto, 0.0), "veto")
    out["veto"] = np.where(has_veto, v["passed"], -1)
    out["veto_alone"] = np.where(has_veto, v["veto_alone"], -1)
    for goal, alpha in WELFARE_GOALS.items():
        out[goal] = welfare(s, alpha)
    outcome = np.zeros(len(s))
    for goal in GOALS:
        m = a["goal"] == goal
        outcome[m] = out[goal][m]
    out["outcome"] = outcome
    return out


def authors_fields(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Re-score rows the authors' way: ``is_pass_simple_majority``, ``is_pass_2_3_majority``,
    ``is_pass_simple_veto``, ``is_pass_veto`` (-1 where the goal does not use them) and
    ``voting_result`` (seat-weighted score for voting goals, welfare for welfare goals), as their
    ``task_runner.run_task`` fills them."""
    a = row_arrays(rows)
    sc = score_rows(a)
    out = []
    for i, goal in enumerate(a["goal"]):
        rec = dict.fromkeys(
            ("is_pass_simple_veto", "is_pass_veto", "is_pass_simple_majority", "is_pass_2_3_majority"), -1
        )
        if goal in WELFARE_GOALS:
            rec["voting_result"] = float(sc[goal][i])
        elif goal == "veto":
            rec.update(is_pass_simple_veto=int(sc["veto_alone"][i]), is_pass_veto=int(sc["veto"][i]))
            rec["voting_result"] = float(sc["voting_result"][i])
        else:
            rec.update(
                is_pass_simple_majority=int(sc["simple_majority"][i]),
                is_pass_2_3_majority=int(sc["two_thirds"][i]),
            )
            rec["voting_result"] = float(sc["voting_result"][i])
        out.append(rec)
    return out


def from_authors_results(path: str | Path) -> list[dict[str, Any]]:
    """Read the authors' per-task result rows.

    Parameters
    ----------
    path: their ``results/`` folder, its ``eubench_logs/`` folder, or one
        ``eubench_logs/<k>/<topic>/<goal>/<model>.json`` file.

    Returns
    -------
    The rows as they are, each with ``goal`` (ours), ``party_num`` (int), ``topic`` and ``model`` added
    from the path, and ``rescored``: :func:`authors_fields` recomputed with our voting and welfare
    functions (equal to the row's own ``is_pass_*`` / ``voting_result`` when their scoring is ours).
    Unknown goal folders are refused with the valid names.
    """
    path = Path(path)
    if path.is_file():
        files = [path]
    else:
        base = path / "eubench_logs" if (path / "eubench_logs").is_dir() else path
        files = sorted(base.glob("*/*/*/*.json"))
        if not files:
            raise ValueError(f"path {str(path)!r} holds no <k>/<topic>/<goal>/<model>.json result files")
    out = []
    for f in files:
        k, topic, folder, model = f.parent.parent.parent.name, f.parent.parent.name, f.parent.name, f.stem
        if folder not in _FROM_AUTHORS:
            raise ValueError(f"{f}: goal folder {folder!r} is not one of {tuple(_FROM_AUTHORS)}")
        if not k.isdigit() or int(k) not in PARTY_NUMS:
            raise ValueError(f"{f}: party-count folder {k!r} is not one of {PARTY_NUMS}")
        with open(f, encoding="utf-8") as fh:
            rows = json.load(fh)
        for r in rows:
            out.append(
                {**r, "goal": _FROM_AUTHORS[folder], "party_num": int(k), "topic": topic, "model": model}
            )
    if out:
        for row, fields in zip(out, authors_fields(out)):
            row["rescored"] = fields
    return out
