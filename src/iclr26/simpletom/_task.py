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
    TYPE_ORDER,
    chat_messages,
    check_record,
    extract_answer,
    is_valid,
    question_type,
)
from ._stories import generate_stories


def _aggregate(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy and invalid-answer fraction (the authors' ``na_frac``) per question type and overall."""
    groups: dict[str, list[dict[str, Any]]] = {t: [] for t in TYPE_ORDER}
    for r in records:
        groups[r["group"]].append(r)
    out: dict[str, Any] = {}
    for name, rows in [*groups.items(), ("all", list(records))]:
        if rows:
            n = len(rows)
            out[name] = {
                "n": n,
                "acc": sum(r["scores"]["acc"] for r in rows) / n,
                "na_frac": sum(r["scores"]["invalid"] for r in rows) / n,
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
    """Evaluate ``model`` on SimpleToM (see :func:`simpletom_task`); resumable through ``log``."""
    return evaluate(
        simpletom_task(records, cot=cot), model, seed=seed, batch_size=batch_size, log=log, progress=progress
    )
