"""SimpleToM as an :class:`iclr26.evaluation.Task`, and a one-call runner."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from ..evaluation import EvalResult, Sample, SampleLog, Task, evaluate
from ..models import GenerationConfig, LanguageModel
from ._protocol import (
    MAX_TOKENS_COT,
    MAX_TOKENS_DIRECT,
    chat_messages,
    check_record,
    extract_answer,
    is_valid,
    question_type,
    type_stats,
)
from ._stories import generate_stories


def _aggregate(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy and invalid-answer fraction (the authors' ``na_frac``) per question type and overall
    (:func:`type_stats`, weighted by the count of each type for ``"all"``)."""
    out: dict[str, Any] = type_stats(
        (r["group"], r["scores"]["acc"] == 1.0, r["scores"]["invalid"] == 1.0) for r in records
    )
    n = sum(v["n"] for v in out.values())
    if n:
        out["all"] = {
            "n": n,
            "acc": sum(v["acc"] * v["n"] for v in out.values()) / n,
            "na_frac": sum(v["na_frac"] * v["n"] for v in out.values()) / n,
        }
    return out


def simpletom_task(records: Sequence[dict[str, Any]] | None = None, *, cot: bool = False) -> Task:
    """The SimpleToM evaluation task on ``records`` (default: our embedded template stories).

    Prompt, chain-of-thought option, answer extraction and scoring follow the authors' code; the
    generation budget is theirs too (greedy, 20 new tokens; 500 with chain-of-thought). Samples are
    grouped by question type (``mental-state``, ``behavior``, ``judgment``), and the aggregate gives
    ``{type: {"n", "acc", "na_frac"}}`` plus ``"all"``.
    """
    if records is None:
        records = generate_stories()
    records = [check_record(r, f"records[{i}]") for i, r in enumerate(records)]
    if not records:
        raise ValueError("records must not be empty")
    samples = [Sample(id=r["id"], data=dict(r), group=question_type(r["id"])) for r in records]

    def build_prompt(s: Sample):
        return chat_messages(s.data, cot=cot)

    def parse(text: str, s: Sample) -> str:
        return extract_answer(text, cot=cot)

    def score(pred: str, s: Sample) -> dict[str, float]:
        return {"acc": float(pred == s.data["answerKey"]), "invalid": float(not is_valid(pred))}

    return Task(
        name="simpletom-cot" if cot else "simpletom",
        samples=samples,
        build_prompt=build_prompt,
        parse=parse,
        score=score,
        aggregate=_aggregate,
        generation=GenerationConfig(
            max_new_tokens=MAX_TOKENS_COT if cot else MAX_TOKENS_DIRECT, temperature=0.0
        ),
        version="1",
        error_scores={"acc": 0.0, "invalid": 1.0},  # as the authors count an unusable answer
    )


def run_simpletom(
    model: LanguageModel,
    records: Sequence[dict[str, Any]] | None = None,
    *,
    cot: bool = False,
    batch_size: int = 8,
    seed: int = 0,
    log: str | os.PathLike | SampleLog | None = None,
    progress: bool | Callable = True,
) -> EvalResult:
    """Evaluate ``model`` on SimpleToM (see :func:`simpletom_task`); resumable through ``log``.
    Greedy outputs, hence scores, do not depend on ``batch_size`` (only speed and memory do)."""
    return evaluate(
        simpletom_task(records, cot=cot), model, seed=seed, batch_size=batch_size, log=log, progress=progress
    )
