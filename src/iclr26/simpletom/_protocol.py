"""The SimpleToM protocol as the authors run it (Gu et al., ICLR 2026; repository
``yulinggu-cs/SimpleToM``, ``inference/utils.py`` and ``inference/prompts.py``): the multiple-choice
prompt, the optional chain-of-thought instruction, the answer extraction (ambiguous -> invalid) and
accuracy / invalid-answer fraction per question type."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

#: The system message the authors send with every question.
SYSTEM_PROMPT = "You are a helpful assistant."

#: The chain-of-thought instruction replacing "Respond with just" (the authors' ``COT_PROMPT``).
COT_PROMPT = (
    "Think step by step to arrive at an answer. Start your response by explaining your reasoning process "
    'and end your response with "Therefore, the answer is: " followed by '
)
DIRECT_PROMPT = "Respond with just"

#: Generation budget of the authors' runs: 20 new tokens, or 500 with chain-of-thought; temperature 0.
MAX_TOKENS_DIRECT = 20
MAX_TOKENS_COT = 500

#: Question types: id suffix -> name (the paper's three levels of ToM reasoning).
QUESTION_TYPES = {"aware": "mental-state", "action": "behavior", "judge": "judgment"}
TYPE_ORDER = ("mental-state", "behavior", "judgment")
_LABELS = ("A", "B", "C", "D", "E")


def question_type(sample_id: str) -> str:
    """``"mental-state"``, ``"behavior"`` or ``"judgment"`` from an id ending in ``_aware``,
    ``_action`` or ``_judge``."""
    if not isinstance(sample_id, str):
        raise ValueError(f"sample_id must be a string, got {sample_id!r}")
    for suffix, name in QUESTION_TYPES.items():
        if sample_id.endswith(suffix):
            return name
    raise ValueError(f"sample id {sample_id!r} does not end in one of {tuple(QUESTION_TYPES)}")


def check_record(record: Any, where: str = "record") -> dict[str, Any]:
    """Check one SimpleToM record: ``id``, ``story``, ``question``, ``choices`` (``{"text": [...],
    "label": [...]}``) and ``answerKey`` (one of the labels)."""
    if not isinstance(record, dict):
        raise ValueError(f"{where} must be a dict, got {type(record).__name__}")
    for k in ("id", "story", "question", "choices", "answerKey"):
        if k not in record:
            raise ValueError(f"{where} lacks the field {k!r}")
    for k in ("id", "story", "question", "answerKey"):
        if not isinstance(record[k], str):
            raise ValueError(f"{where}[{k!r}] must be a string")
    question_type(record["id"])
    choices = record["choices"]
    if not isinstance(choices, dict) or not isinstance(choices.get("text"), list) or len(choices["text"]) < 2:
        raise ValueError(f"{where}['choices'] must be a dict with a list 'text' of at least two answers")
    if len(choices["text"]) > 4:
        raise ValueError(
            f"{where}['choices'] has {len(choices['text'])} answers; the protocol labels at most 4"
        )
    labels = choices.get("label") or list(_LABELS[: len(choices["text"])])
    if record["answerKey"] not in labels:
        raise ValueError(f"{where}['answerKey'] {record['answerKey']!r} is not one of the labels {labels}")
    return record


def load_simpletom(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read the authors' JSONL records (one JSON object a line, as in ``allenai/SimpleToM``)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no SimpleToM file at {str(path)!r}")
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}:{n}: not valid JSON ({exc.msg})") from None
                out.append(check_record(rec, f"{path.name}:{n}"))
    if not out:
        raise ValueError(f"{path} holds no records")
    return out


def make_mcq(question: str, answer_choices: Sequence[str]) -> str:
    """The question followed by its labelled choices, one per line, as the authors lay them out."""
    lines = [f"({label}) {choice}" for label, choice in zip(_LABELS, answer_choices)]
    return question + " \n" + " \n".join(lines)


def question_prompt(record: dict[str, Any], *, cot: bool = False) -> str:
    """The authors' user prompt for one record (with the chain-of-thought instruction if ``cot``)."""
    check_record(record)
    choices = list(record["choices"]["text"])
    labels = " or ".join(f"({x})" for x in _LABELS[: len(choices)])
    quoted = " or ".join(f'"({x})"' for x in _LABELS[: len(choices)])
    final = COT_PROMPT if cot else DIRECT_PROMPT
    return (
        f"Given the following story, answer the question by giving the correct answer choice, {labels}.\n\n"
        f"Story:\n{record['story']}\n\n"
        f"Question: {make_mcq(record['question'], choices)}\n\n"
        f"What is the correct answer? {final} {quoted}\n"
    )


def chat_messages(record: dict[str, Any], *, cot: bool = False) -> list[dict[str, str]]:
    """System + user messages exactly as the authors send them."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": question_prompt(record, cot=cot)},
    ]


def extract_answer(text: str, *, cot: bool = False) -> str:
    """The authors' answer extraction: the predicted label, or the (cleaned) text when none or an
    ambiguous one is found (such a prediction counts as invalid).

    Steps, in the authors' order: remove every ``answer`` / ``answer:`` (case-insensitive; with
    chain-of-thought, everything up to the last "the answer is"); then take the first of
    ``(A) (B) (C) (D)`` present (checked in that order); else a unique ``(A``..``(D``; else a unique
    bare capital ``A``..``D`` anywhere in the text. Two different candidates at the 2nd or 3rd step
    make the answer ambiguous, hence invalid.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    prefix = ".*the answer is" if cot else "answer"
    text = re.sub(f"(?ims){prefix}:?", "", text).strip()
    for idx, mark in enumerate(("(A)", "(B)", "(C)", "(D)")):
        if mark in text:
            return _LABELS[idx]
    for marks in (("(A", "(B", "(C", "(D"), ("A", "B", "C", "D")):
        found = [i for i, m in enumerate(marks) if m in text]
        if len(found) == 1:
            return _LABELS[found[0]]
        if len(found) > 1:
            return text  # ambiguous
    return text


def is_valid(prediction: str, n_choices: int = 2) -> bool:
    """The authors count a prediction as valid when it is one of the answer labels (A or B)."""
    return prediction in _LABELS[:n_choices]


def simpletom_stats(predictions: Iterable[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Accuracy and invalid-answer fraction per question type (the authors' ``basic_stats``).

    ``predictions``: dicts with ``id``, ``predicted`` and ``correct`` (answer labels).
    Returns ``{type: {"n", "acc", "na_frac"}}`` for the types present, in the paper's order.
    """
    counts: dict[str, list[float]] = {t: [0, 0.0, 0.0] for t in TYPE_ORDER}
    for p in predictions:
        t = question_type(p["id"])
        counts[t][0] += 1
        counts[t][1] += float(p["predicted"] == p["correct"])
        counts[t][2] += float(not is_valid(p["predicted"]))
    return {t: {"n": int(n), "acc": a / n, "na_frac": na / n} for t, (n, a, na) in counts.items() if n}
