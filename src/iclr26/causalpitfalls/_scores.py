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

from ._data import CATEGORY_OF, DIFFICULTIES

FAILURE_REGEX = re.compile(r"error|exception|failed|traceback", re.IGNORECASE)
CODE_FAILURES = ("no_block", "empty", "runtime_error", "timeout", "memory", "output_limit", "killed")


def normalized_score(scores: Sequence[int | None]) -> float:
    """100 x mean of the decided scores (all of them for an LLM judge, as the authors); NaN if none."""
    decided = [s for s in scores if s is not None]
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
                "normalized_score": normalized_score(r["scores"]),
            }
        )
    return pd.DataFrame(rows).dropna(subset=["normalized_score"])


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


def failure_rate(responses: Sequence[str]) -> float:
    """The authors' failure rate: the fraction of responses matching ``error|exception|failed|traceback``."""
    if not responses:
        raise ValueError("responses: expected a non-empty list")
    return float(np.mean([bool(FAILURE_REGEX.search(r or "")) for r in responses]))


def code_failure_rate(statuses: Sequence[str]) -> float:
    """The fraction of code-assisted items whose code failed: no block, empty block, non-zero exit,
    timeout, memory or output limit (statuses as recorded by :func:`run_benchmark`)."""
    if not statuses:
        raise ValueError("statuses: expected a non-empty list")
    return float(np.mean([s in CODE_FAILURES for s in statuses]))
