"""Causal reliability as the authors aggregate it (``get_final_results.merge_evaluation_csvs``):
normalised score = 100 x total / number of criteria per response; per main category the mean over its
responses; the aggregate is the unweighted mean of the category means; a per-difficulty table. Their
"failure rate" is a regex over responses; ours also counts code failures honestly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..sandbox import STATUSES
from ._data import CATEGORY_OF, DIFFICULTIES

FAILURE_REGEX = re.compile(r"error|exception|failed|traceback", re.IGNORECASE)
#: The code statuses of a code-assisted item: the sandbox's (``iclr26.sandbox.STATUSES``), or no code
#: block / an empty one in the reply (no run). Every status but ``"ok"`` is a failure.
CODE_STATUSES = ("no_block", "empty", *STATUSES)


def normalized_score(scores: Sequence[int | None]) -> float:
    """100 x mean of the decided scores (all of them for an LLM judge, as the authors); NaN if none.

    Each score is 1, 0 (or True/False) or None (undecided); anything else raises ``ValueError``."""
    if isinstance(scores, str) or not isinstance(scores, Sequence):
        raise ValueError(f"scores: expected a list of 0/1/None per criterion, got {type(scores).__name__}")
    for i, s in enumerate(scores):
        if s is not None and (not isinstance(s, int | float) or s not in (0, 1)):
            raise ValueError(f"scores[{i}]: expected 0, 1 or None, got {s!r}")
    decided = [int(s) for s in scores if s is not None]
    return 100.0 * sum(decided) / len(decided) if decided else float("nan")


def _frame(records: Sequence[dict[str, Any]]) -> pd.DataFrame:
    if not records:
        raise ValueError("scores: expected a non-empty list of records")
    rows = []
    for i, r in enumerate(records):
        for k in ("challenge", "protocol", "difficulty", "scores"):
            if k not in r:
                raise ValueError(f"scores[{i}]: missing field {k!r}")
        if r["challenge"] not in CATEGORY_OF:
            raise ValueError(f"scores[{i}].challenge: unknown challenge {r['challenge']!r}")
        if r["difficulty"] not in DIFFICULTIES:
            raise ValueError(f"scores[{i}].difficulty: unknown difficulty {r['difficulty']!r}")
        rows.append(
            {
                "challenge": r["challenge"],
                "category": CATEGORY_OF[r["challenge"]],
                "protocol": r["protocol"],
                "difficulty": r["difficulty"],
                "normalized_score": _record_score(r["scores"], i),
            }
        )
    df = pd.DataFrame(rows).dropna(subset=["normalized_score"])
    if df.empty:
        raise ValueError("scores: no record has a decided criterion (every score is None)")
    return df


def _record_score(scores: Any, i: int) -> float:
    try:
        return normalized_score(scores)
    except ValueError as e:
        raise ValueError(f"scores[{i}].{e}") from None


def causal_reliability(scores: Sequence[dict[str, Any]], *, round_as_authors: bool = False) -> dict[str, Any]:
    """Aggregate per-response scores.

    Parameters
    ----------
    scores : list of dict
        One record per judged response: ``challenge``, ``protocol`` (e.g. ``"direct"``/``"code"``),
        ``difficulty`` and ``scores`` (list of 1/0/None per criterion).
    round_as_authors : bool
        Round the category means to 2 decimals before averaging them and round the average, as their
        LaTeX tables do.

    Returns
    -------
    dict
        ``by_category[protocol][category]``, ``overall[protocol]`` (CR, 0-100) and
        ``by_difficulty[protocol][difficulty]``; ``per_response`` the normalised scores (DataFrame).
    """
    df = _frame(scores)
    rnd = (lambda x: np.round(x, 2)) if round_as_authors else (lambda x: x)
    by_cat = rnd(df.groupby(["protocol", "category"])["normalized_score"].mean())
    overall = rnd(by_cat.groupby(level="protocol").mean())
    by_diff = rnd(df.groupby(["protocol", "difficulty"])["normalized_score"].mean())
    return {
        "by_category": {p: {c: float(v) for (pp, c), v in by_cat.items() if pp == p} for p in overall.index},
        "overall": {p: float(v) for p, v in overall.items()},
        "by_difficulty": {
            p: {d: float(v) for (pp, d), v in by_diff.items() if pp == p} for p in overall.index
        },
        "per_response": df,
    }


def failure_rate(responses: Sequence[str | None]) -> float:
    """The authors' failure rate: the fraction of responses matching ``error|exception|failed|traceback``
    (``None``, no response, matches nothing)."""
    if isinstance(responses, str) or not isinstance(responses, Sequence) or not responses:
        raise ValueError("responses: expected a non-empty list of str")
    for i, r in enumerate(responses):
        if r is not None and not isinstance(r, str):
            raise ValueError(f"responses[{i}]: expected a str or None, got {type(r).__name__}")
    return float(np.mean([bool(FAILURE_REGEX.search(r or "")) for r in responses]))


def code_failure_rate(statuses: Sequence[str]) -> float:
    """The fraction of code-assisted items whose code failed: every status of :data:`CODE_STATUSES` but
    ``"ok"`` (no block, empty block, compile or runtime error, timeout, memory or output limit, killed;
    statuses as recorded by :func:`run_benchmark`)."""
    if isinstance(statuses, str) or not isinstance(statuses, Sequence) or not statuses:
        raise ValueError("statuses: expected a non-empty list")
    for i, s in enumerate(statuses):
        if s not in CODE_STATUSES:
            raise ValueError(f"statuses[{i}]: expected one of {CODE_STATUSES}, got {s!r}")
    return float(np.mean([s != "ok" for s in statuses]))
