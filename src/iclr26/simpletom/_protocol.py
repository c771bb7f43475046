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


#: The authors' three question configurations on the Hugging Face Hub (``allenai/SimpleToM``), in the
#: paper's order, with the id suffix of their records.
CONFIGS = {"mental-state-qa": "aware", "behavior-qa": "action", "judgment-qa": "judge"}
_DATA_SUFFIXES = (".jsonl", ".parquet", ".arrow")


def _read_jsonl(path: Path) -> list[Any]:
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}:{n}: not valid JSON ({exc.msg})") from None
    return out


def _read_table(path: Path) -> list[Any]:
    """Rows of a parquet file or of an Arrow file as ``datasets`` writes it (IPC stream or file)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow is in the llm extra
        raise ValueError(f"reading {path.name} needs pyarrow: pip install 'iclr26[llm]'") from None
    try:
        if path.suffix == ".parquet":
            table = pq.read_table(path)
        else:
            try:
                with pa.memory_map(str(path)) as src:
                    table = pa.ipc.open_stream(src).read_all()
            except pa.ArrowInvalid:
                with pa.memory_map(str(path)) as src:
                    table = pa.ipc.open_file(src).read_all()
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{path}: not a readable {path.suffix[1:]} table ({exc})") from None
    return table.to_pylist()


def _read_file(path: Path) -> list[Any]:
    return _read_jsonl(path) if path.suffix in (".jsonl", ".json") else _read_table(path)


def _config_files(folder: Path) -> list[Path]:
    """The data files of one configuration folder, of one format (JSONL, else parquet, else Arrow):
    the Hub repository keeps ``test.jsonl``, its parquet branch ``test/0000.parquet``, and the
    ``datasets`` cache or ``save_to_disk`` Arrow files further down."""
    for suffix in _DATA_SUFFIXES:
        files = sorted(p for p in folder.rglob(f"*{suffix}") if p.is_file() and not p.name.startswith("."))
        if files:
            return files
    return []


def load_simpletom(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read the authors' SimpleToM records (``allenai/SimpleToM``) from a folder or one file.

    Parameters
    ----------
    path:
        A folder holding the three configurations as the Hub and ``datasets`` store them,
        ``mental-state-qa/``, ``behavior-qa/`` and ``judgment-qa/``, each with JSONL, parquet or
        Arrow files anywhere below it (``test.jsonl``; ``test/0000.parquet``;
        ``0.0.0/<hash>/simple_to_m-test.arrow``; a ``save_to_disk`` folder); or a single ``.jsonl``,
        ``.parquet`` or ``.arrow`` file.

    Returns
    -------
    list of dict
        Checked records (``id``, ``story``, ``question``, ``choices``, ``answerKey``, and any other
        fields), the mental-state configuration first, then behaviour, then judgment, each in file
        order.

    Raises
    ------
    ValueError
        For a missing path or configuration, an unreadable file, an invalid record, a record whose id
        suffix does not match its configuration, or a duplicate id.
    """
    path = Path(path)
    if path.is_file():
        if path.suffix not in (*_DATA_SUFFIXES, ".json"):
            raise ValueError(f"{path.name}: expected a .jsonl, .parquet or .arrow file")
        sources = [(None, path)]
    elif path.is_dir():
        missing = [c for c in CONFIGS if not (path / c).is_dir()]
        if missing:
            raise ValueError(
                f"{str(path)!r} lacks the configuration folder(s) {', '.join(missing)} "
                f"(expected {', '.join(CONFIGS)}, as allenai/SimpleToM stores them)"
            )
        sources = []
        for config in CONFIGS:
            files = _config_files(path / config)
            if not files:
                raise ValueError(f"{path / config} holds no .jsonl, .parquet or .arrow file")
            sources += [(config, f) for f in files]
    else:
        raise ValueError(f"no SimpleToM file or folder at {str(path)!r}")
    out: list[dict[str, Any]] = []
    seen: dict[str, Path] = {}
    for config, file in sources:
        for n, rec in enumerate(_read_file(file), 1):
            rec = check_record(rec, f"{file.name}:{n}")
            if config is not None and not rec["id"].endswith(CONFIGS[config]):
                raise ValueError(
                    f"{file}:{n}: id {rec['id']!r} is in {config} but does not end in {CONFIGS[config]!r}"
                )
            if rec["id"] in seen:
                raise ValueError(f"{file}:{n}: duplicate id {rec['id']!r} (also in {seen[rec['id']]})")
            seen[rec["id"]] = file
            out.append(rec)
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


def type_stats(rows: Iterable[tuple[str, bool, bool]]) -> dict[str, dict[str, float]]:
    """Accuracy and invalid-answer fraction per question type, from ``(type, correct, invalid)``
    triples: ``{type: {"n", "acc", "na_frac"}}`` for the types present, in the paper's order (the one
    implementation behind :func:`simpletom_stats` and the evaluation task's aggregate)."""
    counts: dict[str, list[float]] = {t: [0, 0.0, 0.0] for t in TYPE_ORDER}
    for t, correct, invalid in rows:
        if t not in counts:
            raise ValueError(f"unknown question type {t!r}; expected one of {TYPE_ORDER}")
        counts[t][0] += 1
        counts[t][1] += float(correct)
        counts[t][2] += float(invalid)
    return {t: {"n": int(n), "acc": a / n, "na_frac": na / n} for t, (n, a, na) in counts.items() if n}


def simpletom_stats(predictions: Iterable[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Accuracy and invalid-answer fraction per question type (the authors' ``basic_stats``).

    ``predictions``: dicts with ``id``, ``predicted`` and ``correct`` (answer labels).
    Returns ``{type: {"n", "acc", "na_frac"}}`` for the types present, in the paper's order.
    """
    return type_stats(
        (question_type(p["id"]), p["predicted"] == p["correct"], not is_valid(p["predicted"]))
        for p in predictions
    )
