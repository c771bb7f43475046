"""AnesBench as an :class:`iclr26.evaluation.Task`, its metrics, and the authors' ``result.json``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..evaluation import Sample, Task
from ..models import GenerationConfig
from ._extract import extract
from ._records import LEVELS, check_record, letters, messages

LEVEL_NAMES = tuple(LEVELS.values())
_LEVEL_OF = {v: k for k, v in LEVELS.items()}


def options_of(record: dict[str, Any], language: str) -> list[str]:
    return [record[f"{language}_{c}"] for c in letters(record["choice_num"])]


def score_row(record: dict[str, Any], language: str, response: str, fallback: str) -> dict[str, Any]:
    """One scored row in the evaluation core's record shape (``parsed`` holds letter, source, language)."""
    pred, source = extract(response, options_of(record, language), fallback)
    return {
        "sample_id": record["id"],
        "group": LEVELS[record["level"]],
        "parsed": {"pred": pred, "source": source, "language": language},
        "scores": _scores(pred, source, record["answer"]),
        "output": response,
    }


def _scores(pred: str, source: str, answer: str) -> dict[str, float]:
    return {
        "acc": float(pred == answer),
        "acc_strict": float(pred == answer and source == "pattern"),  # as with fallback="invalid"
        "fuzzy": float(source == "fuzzy"),
        "invalid": float(source == "invalid"),
    }


def make_task(records: Sequence[dict[str, Any]], language: str, fallback: str, max_new_tokens: int) -> Task:
    """The task on validated ``records`` (see :func:`iclr26.anessuite.anesbench_task`)."""
    samples = [Sample(id=r["id"], data=dict(r), group=LEVELS[r["level"]]) for r in records]

    def parse(text: str, s: Sample) -> dict[str, str]:
        pred, source = extract(text or "", options_of(s.data, language), fallback)
        return {"pred": pred, "source": source, "language": language}

    def score(parsed: dict[str, str], s: Sample) -> dict[str, float]:
        return _scores(parsed["pred"], parsed["source"], s.data["answer"])

    return Task(
        name=f"anesbench-{language}",
        samples=samples,
        build_prompt=lambda s: messages(s.data, language),
        parse=parse,
        score=score,
        generation=GenerationConfig(max_new_tokens=max_new_tokens, temperature=0.0),
        version=f"1-{fallback}",
        error_scores={"acc": 0.0, "acc_strict": 0.0, "fuzzy": 0.0, "invalid": 1.0},
    )


def row_table(rows: Sequence[dict[str, Any]]) -> dict[str, np.ndarray]:
    """Per-row arrays: ``level`` (1-3), ``language``, ``correct``, ``fuzzy``, ``invalid`` (shape ``(n,)``)."""
    for i, r in enumerate(rows):
        if (
            not isinstance(r, dict)
            or r.get("group") not in _LEVEL_OF
            or not isinstance(r.get("scores"), dict)
        ):
            raise ValueError(
                f"rows[{i}] must be a per-sample record with a level group {LEVEL_NAMES} and scores"
            )
        # "acc" is required (a record without it counted as a wrong answer); the fallback flags default to 0
        for key, value in (
            ("acc", r["scores"].get("acc")),
            *((k, r["scores"].get(k, 0.0)) for k in ("fuzzy", "invalid")),
        ):
            if isinstance(value, bool) or not isinstance(value, int | float) or value not in (0, 1):
                raise ValueError(f"rows[{i}].scores[{key!r}]: expected 0 or 1, got {value!r}")
    parsed = [r.get("parsed") or {} for r in rows]
    return {
        "level": np.array([_LEVEL_OF[r["group"]] for r in rows], dtype=int),
        "language": np.array([p.get("language", "?") for p in parsed], dtype=object),
        "correct": np.array([float(r["scores"]["acc"]) for r in rows]),
        "fuzzy": np.array([float(r["scores"].get("fuzzy", 0.0)) for r in rows]),
        "invalid": np.array([float(r["scores"].get("invalid", 0.0)) for r in rows]),
    }


def to_result_json(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The authors' ``result.json`` dict for ``rows`` in their order."""
    score = [int(r["scores"].get("acc", 0.0) == 1.0) for r in rows]
    out: dict[str, Any] = {}
    if score:
        out["model_score"] = sum(score) / len(score)
    out["model_output"] = [(r.get("parsed") or {}).get("pred", "") for r in rows]
    out["model_response"] = [r["output"] for r in rows]
    out["correctness"] = score
    return out


def read_result_json(path: Any) -> dict[str, Any]:
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"path {str(p)!r} is not a file")
    data = json.loads(p.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("model_response"), list):
        raise ValueError(f"path {p.name!r} is not an AnesBench result.json (no model_response list)")
    return data


def check_records(records: Any, language: str) -> list[dict[str, Any]]:
    if isinstance(records, dict | str) or not isinstance(records, Sequence):
        raise ValueError(f"records must be a sequence of dicts, got {type(records).__name__}")
    out = [check_record(r, language, f"records[{i}]") for i, r in enumerate(records)]
    if not out:
        raise ValueError("records must not be empty")
    ids = [r["id"] for r in out]
    if len(set(ids)) != len(ids):
        raise ValueError("records must have unique ids")
    return out
