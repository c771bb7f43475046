"""Judges: the authors' LLM judge (their prompt, binary scores per criterion) on any of our language
models, and our deterministic :class:`RubricJudge`.

``LLMJudge`` parses the reply as JSON, else its first ``{...}`` block; a reply that gives no list of
0/1 of the criteria's length scores all zeros and is marked ``invalid`` (the authors' run raises).
``RubricJudge`` decides the criterion types that carry checkable content and returns ``None`` for
the others (free-text justification, limitation, alternative explanations, ...).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..models import GenerationConfig, LanguageModel
from ..validation import check_int
from ._prompts import judge_messages

_BLOCK = re.compile(r"\{[^{}]*\}", re.DOTALL)
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?%?")
#: Criterion types RubricJudge decides; every other type is reported undecidable (``None``).
DECIDABLE = ("keyword", "numeric", "numeric_any", "direction", "value_match")


@dataclass
class Verdict:
    """Per-criterion scores (1, 0, or ``None`` = not decided), whether the judge's reply was invalid,
    and the reply itself (``""`` for RubricJudge)."""

    scores: list[int | None]
    invalid: bool = False
    raw: str = ""


def parse_scores(reply: str, n: int) -> list[int] | None:
    """The ``scores`` list of a judge reply (whole reply as JSON, else its first ``{...}`` block);
    ``None`` unless it holds ``n`` values that are each 0 or 1."""
    candidates = [reply]
    m = _BLOCK.search(reply)
    if m:
        candidates.append(m.group(0))
    for text in candidates:
        try:
            obj = json.loads(text)
        except (json.JSONDecodeError, TypeError):
            continue
        scores = obj.get("scores") if isinstance(obj, dict) else None
        if isinstance(scores, list) and len(scores) == n and all(s in (0, 1) for s in scores):
            return [int(s) for s in scores]
    return None


class LLMJudge:
    """The authors' judge prompt on ``model`` (greedy, ``max_new_tokens`` new tokens)."""

    def __init__(self, model: LanguageModel, *, max_new_tokens: int = 48, batch_size: int = 8):
        if not isinstance(model, LanguageModel):
            raise ValueError(f"model: expected an iclr26.models.LanguageModel, got {type(model).__name__}")
        self.model = model
        self.config = GenerationConfig(
            max_new_tokens=check_int(max_new_tokens, "max_new_tokens", minimum=1), temperature=0.0
        )
        self.batch_size = check_int(batch_size, "batch_size", minimum=1)
        self.name = f"llm:{model.name}"

    def prompts(self, pairs: list[tuple[dict[str, Any], str]]) -> list[list[dict[str, str]]]:
        """The judge chat for each (filled rubric, response text)."""
        return [judge_messages(r["criteria"], t) for r, t in pairs]

    def verdicts(self, pairs: list[tuple[dict[str, Any], str]], replies: list[str]) -> list[Verdict]:
        """Parse ``replies`` (one per pair) into verdicts."""
        out = []
        for (rubric, _), reply in zip(pairs, replies):
            n = len(rubric["criteria"])
            scores = parse_scores(reply, n)
            out.append(Verdict(scores or [0] * n, scores is None, reply))
        return out

    def judge(self, pairs: list[tuple[dict[str, Any], str]]) -> list[Verdict]:
        """Score each (filled rubric, response text)."""
        prompts = self.prompts(pairs)
        replies = []
        for i in range(0, len(prompts), self.batch_size):
            replies += [g.text for g in self.model.generate(prompts[i : i + self.batch_size], self.config)]
        return self.verdicts(pairs, replies)


def _numbers(text: str) -> list[float]:
    out = []
    for tok in _NUMBER.findall(text):
        out.append(float(tok[:-1]) / 100 if tok.endswith("%") else float(tok))
    return out


def _as_float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _has(text: str, phrase: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(phrase.strip()) + r"(?!\w)", text, re.IGNORECASE) is not None


def _numeric(c: dict[str, Any], text: str, need_all: bool) -> int | None:
    targets = [_as_float(t) for t in c.get("targets", [])]
    tol = _as_float(c.get("tolerance"))
    # a malformed criterion (no target, a non-number, a NaN or negative tolerance) is undecided, not failed
    if not targets or tol is None or not tol >= 0 or any(t is None or not np.isfinite(t) for t in targets):
        return None
    nums = _numbers(text)
    hit = [any(abs(x - t) <= tol + 1e-12 for x in nums) for t in targets]
    return int(all(hit) if need_all else any(hit))


def rubric_score(c: dict[str, Any], text: str) -> int | None:
    """Our deterministic decision on one filled criterion; ``None`` for a type we cannot decide.

    keyword: any keyword as a whole word (case-insensitive); numeric / numeric_any: every / any target
    matched by a number in the text within the tolerance (``61.3%`` reads as 0.613); direction: every
    comma-separated phrase of the target present; value_match: every expected value present.
    """
    kind = c.get("type")
    if kind == "keyword":
        kws = c.get("keywords") or []
        return int(any(_has(text, k) for k in kws)) if kws else None
    if kind in ("numeric", "numeric_any"):
        return _numeric(c, text, kind == "numeric")
    if kind == "direction":
        phrases = [p for p in str(c.get("target", "")).split(",") if p.strip()]
        return int(all(_has(text, p) for p in phrases)) if phrases else None
    if kind == "value_match":
        vals = [str(v) for v in c.get("expected_values", []) if str(v).strip()]
        return int(all(v.lower() in text.lower() for v in vals)) if vals else None
    return None


class RubricJudge:
    """Our deterministic judge: :func:`rubric_score` per criterion."""

    name = "rubric"

    def judge(self, pairs: list[tuple[dict[str, Any], str]]) -> list[Verdict]:
        """Score each (filled rubric, response text)."""
        return [Verdict([rubric_score(c, t) for c in r["criteria"]]) for r, t in pairs]
