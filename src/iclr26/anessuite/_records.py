"""AnesBench records: validation, loading (JSON / JSONL / parquet) and the authors' prompt.

A record is a dict ``{"id", "choice_num", "answer", "level", "<lang>_question", "<lang>_A", ...}``
(the authors' field names; Chinese fields may be spelled ``zh_`` or ``cn_`` and are read as ``zh_``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ._extract import letters

LANGUAGES = ("en", "zh")
#: Cognitive-demand levels and their names in the paper.
LEVELS = {1: "System 1", 2: "System 1.x", 3: "System 2"}
MIN_CHOICES, MAX_CHOICES = 2, 26

SYSTEM_EN = (
    "You are a medical AI assistant specializing in anesthesiology and general medicine. Your goal is to "
    "provide accurate and concise answers to medical multiple-choice questions. Always choose the most "
    "suitable answer based on medical knowledge and reasoning."
)
USER_EN = (
    "The following is a multiple-choice question related to medicine and anesthesiology. Please analyze "
    "the question carefully and select the most suitable one choice from {choices} as the final answer. "
    "Please think step by step. Carefully analyze each option, explain why it is or isn't correct, and "
    "then choose the most suitable answer. Do not generate anything after providing the answer. The "
    "question and options are as follows:\n"
)
# Our Chinese rendering of the same template (the authors' script has English text only).
SYSTEM_ZH = (
    "你是一名专注于麻醉学和普通医学的医学人工智能助手。你的目标是为医学选择题提供准确而简洁的答案。"
    "请始终基于医学知识和推理选择最合适的答案。"
)
USER_ZH = (
    "以下是一道与医学和麻醉学相关的选择题。请仔细分析题目，并从{choices}中选择最合适的一个选项作为最终答案。"
    "请逐步思考。仔细分析每个选项，说明它为什么正确或不正确，然后选择最合适的答案。给出答案后不要再生成任何内容。"
    "题目和选项如下：\n"
)


def check_language(language: Any, name: str = "language") -> str:
    if language not in LANGUAGES:
        raise ValueError(f"{name} must be one of {LANGUAGES}, got {language!r}")
    return language


def check_level(level: Any, name: str = "level") -> int:
    """A level as an int in {1, 2, 3}; the strings ``"1"``..``"3"`` are accepted."""
    if isinstance(level, str) and level.strip() in ("1", "2", "3"):
        level = int(level)
    if isinstance(level, bool) or level not in LEVELS:
        raise ValueError(f"{name} must be one of 1, 2, 3 (System 1, 1.x, 2), got {level!r}")
    return int(level)


def _normalise_keys(record: dict[str, Any]) -> dict[str, Any]:
    return {("zh_" + k[3:] if k.startswith("cn_") else k): v for k, v in record.items()}


def has_language(record: dict[str, Any], language: str) -> bool:
    q = _normalise_keys(record).get(f"{language}_question")
    return isinstance(q, str) and bool(q.strip())


def check_record(record: Any, language: str = "en", name: str = "record") -> dict[str, Any]:
    """A validated copy of one record (``cn_`` keys read as ``zh_``, ``level`` as an int).

    Raises ``ValueError`` naming ``name`` and the record's id when a field is missing or invalid."""
    check_language(language)
    if not isinstance(record, dict):
        raise ValueError(f"{name} must be a dict, got {type(record).__name__}")
    r = _normalise_keys(record)
    rid = r.get("id")
    where = f"{name} (id={rid!r})"
    for key in ("id", "choice_num", "answer", "level"):
        if key not in r:
            raise ValueError(f"{where} lacks the field {key!r}")
    n = r["choice_num"]
    if isinstance(n, bool) or not isinstance(n, int) or not MIN_CHOICES <= n <= MAX_CHOICES:
        raise ValueError(f"{where}: choice_num must be an integer in [2, 26], got {n!r}")
    if r["answer"] not in letters(n):
        raise ValueError(f"{where}: answer must be one of A..{letters(n)[-1]}, got {r['answer']!r}")
    r["level"] = check_level(r["level"], f"{where}.level")
    r["id"] = str(rid)
    for key in ["question", *letters(n)]:
        v = r.get(f"{language}_{key}")
        if not isinstance(v, str):
            raise ValueError(f"{where} lacks the text field '{language}_{key}'")
    return r


def _read_rows(path: Path) -> list[dict[str, Any]]:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        import pandas as pd

        return pd.read_parquet(path).to_dict(orient="records")
    text = path.read_text(encoding="utf-8")
    if suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    if suffix == ".json":
        data = json.loads(text)
        return data if isinstance(data, list) else data.get("data", data.get("records", []))
    raise ValueError(f"path must end in .json, .jsonl or .parquet, got {path.name!r}")


def load_records(path: Any, language: str = "en") -> list[dict[str, Any]]:
    """Validated records of ``path`` that have a question in ``language`` (others are skipped)."""
    check_language(language)
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"path {str(p)!r} is not a file")
    rows = _read_rows(p)
    out = [
        check_record(r, language, f"record {i} of {p.name}")
        for i, r in enumerate(rows)
        if not isinstance(r, dict) or has_language(r, language)
    ]
    if not out:
        raise ValueError(f"path {p.name!r} holds no record with a {language}_question")
    return out


def messages(record: dict[str, Any], language: str = "en") -> list[dict[str, str]]:
    """The authors' ``format_example``: a system message and the user instruction + question +
    ``"X. option\\n"`` lines; ``zh`` uses our Chinese rendering with 、 and 和 joining the letters."""
    ls = letters(record["choice_num"])
    body = record[f"{language}_question"] + "\n"
    body += "".join(f"{c}. {record[f'{language}_{c}']}\n" for c in ls)
    if language == "en":
        system, user, choices = SYSTEM_EN, USER_EN, ", ".join(ls[:-1]) + " and " + ls[-1]
    else:
        system, user, choices = SYSTEM_ZH, USER_ZH, "、".join(ls[:-1]) + "和" + ls[-1]
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": user.format(choices=choices) + body},
    ]
