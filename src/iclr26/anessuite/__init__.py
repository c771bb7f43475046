"""AnesSuite (Feng et al., ICLR 2026): the AnesBench evaluation protocol with the authors' answer
extraction, and a verifiable template bank of anaesthesiology questions in AnesBench's format.

- :func:`load_anesbench` reads a user's copy of AnesBench (JSON / JSONL / parquet; nothing of it ships);
- :func:`anesbench_messages` is the authors' prompt; :func:`extract_answer` their extractor;
- :func:`anesbench_task` / :func:`run_anesbench` evaluate any :class:`iclr26.models.LanguageModel`
  through :mod:`iclr26.evaluation` (per-sample log, resume, re-scoring);
- :func:`anesbench_metrics`: accuracy overall, per level (System 1, 1.x, 2) and per language with
  bootstrap intervals over questions, and the share of answers that came from the fuzzy fallback;
- :func:`generate_anes_questions` / :func:`generate_anes_training`: our template bank;
- :func:`to_authors_result` / :func:`load_authors_result`: the authors' ``result.json``.

Reference: X. Feng et al., "AnesSuite: A Comprehensive Benchmark and Dataset Suite for Anesthesiology
Reasoning in LLMs", ICLR 2026, arXiv:2504.02404; code github.com/MiliLab/AnesSuite (``eval/evaluate.py``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..validation import check_in, check_int
from . import _bank
from ._bank_zh import add_chinese
from ._extract import SOURCES, extract
from ._records import LANGUAGES, LEVELS, check_language, check_record, load_records, messages
from ._task import (
    LEVEL_NAMES,
    check_records,
    make_task,
    options_of,
    read_result_json,
    row_table,
    score_row,
    to_result_json,
)

FALLBACKS = ("fuzzy", "invalid")

__all__ = [
    "FALLBACKS",
    "LANGUAGES",
    "LEVELS",
    "LEVEL_NAMES",
    "SOURCES",
    "anesbench_messages",
    "anesbench_metrics",
    "anesbench_task",
    "extract_answer",
    "generate_anes_questions",
    "generate_anes_training",
    "load_anesbench",
    "load_authors_result",
    "run_anesbench",
    "to_authors_result",
]


def load_anesbench(path: str | os.PathLike, language: str = "en") -> list[dict[str, Any]]:
    """Read AnesBench records from ``path`` (``.json`` list, ``.jsonl`` or ``.parquet``).

    Records without a question in ``language`` are skipped (``cn_`` fields are read as ``zh_``); every
    other record is validated: ``choice_num`` in [2, 26], ``answer`` a letter within it, ``level`` in
    {1, 2, 3}, all option texts present. Raises ``ValueError`` naming the offending record."""
    return load_records(path, language)


def anesbench_messages(record: dict[str, Any], language: str = "en") -> list[dict[str, str]]:
    """The chat messages of one record: for ``"en"`` the authors' system and user text character for
    character (``format_example``); for ``"zh"`` our Chinese rendering of the same template."""
    check_language(language)
    return messages(check_record(record, language), language)


def extract_answer(
    response: str,
    record: dict[str, Any],
    *,
    language: str = "en",
    fallback: str = "fuzzy",
    return_source: bool = False,
) -> str | tuple[str, str]:
    """The authors' answer extraction (option-text substitution, 8 patterns, fuzzy fallback).

    Parameters
    ----------
    response: the model's text (an empty string goes through the same path).
    record: the question (its ``<language>_A..`` option texts are substituted and fuzzy-matched; the
        authors' script always uses the English options).
    fallback: ``"fuzzy"`` (the authors': nearest option by ``thefuzz``) or ``"invalid"`` (``""``).
    return_source: also return where the letter came from (``"pattern"``, ``"fuzzy"``, ``"invalid"``).
    """
    if not isinstance(response, str):
        raise ValueError(f"response must be a string, got {type(response).__name__}")
    check_language(language)
    check_in(fallback, FALLBACKS, "fallback")
    rec = check_record(record, language)
    pred, source = extract(response, options_of(rec, language), fallback)
    return (pred, source) if return_source else pred


def anesbench_task(
    records: Sequence[dict[str, Any]] | None = None,
    *,
    language: str = "en",
    fallback: str = "fuzzy",
    max_new_tokens: int = 2048,
):
    """AnesBench as an :class:`iclr26.evaluation.Task` (default records: our bank, 60 per level).

    Greedy decoding, ``max_new_tokens`` (authors: 2048), the authors' prompt and extractor; samples
    are grouped by level name; scores ``acc``, ``fuzzy`` and ``invalid`` per sample."""
    check_language(language)
    check_in(fallback, FALLBACKS, "fallback")
    check_int(max_new_tokens, "max_new_tokens", minimum=1)
    if records is None:
        records = generate_anes_questions(60, seed=0, language=language)
    return make_task(check_records(records, language), language, fallback, max_new_tokens)


def run_anesbench(
    model,
    records: Sequence[dict[str, Any]] | None = None,
    *,
    language: str = "en",
    fallback: str = "fuzzy",
    max_new_tokens: int = 2048,
    batch_size: int = 8,
    seed: int = 0,
    log: str | os.PathLike | None = None,
    progress: bool | Callable = True,
):
    """Evaluate ``model`` with :func:`anesbench_task`; resumable through ``log`` (see
    :func:`iclr26.evaluation.evaluate`); re-score a log with :func:`iclr26.evaluation.rescore`."""
    from ..evaluation import evaluate

    task = anesbench_task(records, language=language, fallback=fallback, max_new_tokens=max_new_tokens)
    return evaluate(task, model, seed=seed, batch_size=batch_size, log=log, progress=progress)


def anesbench_metrics(rows: Sequence[dict[str, Any]], *, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Accuracy and fallback shares with 95% bootstrap intervals over questions.

    ``rows``: per-sample records of :func:`run_anesbench` (``EvalResult.records``) or of
    :func:`load_authors_result`. Returns ``{"overall": S, "by_level": {name: S}, "by_language":
    {lang: S}, "differences": {"System 1 - System 1.x": E, "System 1.x - System 2": E,
    "System 1 - System 2": E}}`` where ``S = {"n", "accuracy": E, "fuzzy_share": E, "invalid_share"}``
    and each ``E`` an :class:`iclr26.uncertainty.Estimate` (differences resample all questions
    together, so the levels' counts vary as in an unstratified bootstrap)."""
    from ..uncertainty import Estimate, bootstrap

    if isinstance(rows, dict | str) or not isinstance(rows, Sequence) or not rows:
        raise ValueError("rows must be a non-empty sequence of per-sample records")
    check_int(n_boot, "n_boot", minimum=10)
    t = row_table(rows)
    boot = dict(n_boot=n_boot, seed=seed, unit="questions")

    def mean(x: np.ndarray) -> Estimate:
        if len(x) < 2:  # no interval from a single question
            return Estimate(float(np.mean(x)), np.nan, np.nan, 0.95, "bootstrap needs 2 questions", len(x))
        return bootstrap(np.mean, x, **boot)

    def summary(mask: np.ndarray) -> dict[str, Any]:
        return {
            "n": int(mask.sum()),
            "accuracy": mean(t["correct"][mask]),
            "fuzzy_share": mean(t["fuzzy"][mask]),
            "invalid_share": float(t["invalid"][mask].mean()),
        }

    def diff(a: int, b: int):
        def stat(correct: np.ndarray, level: np.ndarray) -> float:
            ma, mb = level == a, level == b
            return float(correct[ma].mean() - correct[mb].mean()) if ma.any() and mb.any() else float("nan")

        return bootstrap(stat, t["correct"], t["level"], **boot)

    present = [k for k in LEVELS if (t["level"] == k).any()]
    return {
        "overall": summary(np.ones(len(rows), bool)),
        "by_level": {LEVELS[k]: summary(t["level"] == k) for k in present},
        "by_language": {str(g): summary(t["language"] == g) for g in sorted(set(t["language"]))},
        "differences": {
            f"{LEVELS[a]} - {LEVELS[b]}": diff(a, b)
            for a, b in ((1, 2), (2, 3), (1, 3))
            if a in present and b in present
        },
    }


def generate_anes_questions(
    n_per_level: int = 60, seed: int = 0, language: str = "en"
) -> list[dict[str, Any]]:
    """Our template bank: ``3 * n_per_level`` AnesBench-format records (System 1, 1.x, 2 in order).

    4 options, deterministic keys, answer positions balanced per level (a shuffled round robin),
    families drawn in equal shares; each record also has ``family``, ``params`` (to recompute the key)
    and ``en_reasoning``. ``language="zh"`` adds our Chinese rendering of the same items
    (``zh_question``, ``zh_A``..; the English fields stay) for evaluation in Chinese."""
    check_int(n_per_level, "n_per_level", minimum=1)
    check_int(seed, "seed", minimum=0)
    check_language(language)
    records = _bank.generate(n_per_level, seed, prefix="bank")
    return [add_chinese(r) for r in records] if language == "zh" else records


def generate_anes_training(n_per_level: int = 60, seed: int = 0) -> list[dict[str, Any]]:
    """An AnesR1-style training split from the same families but a separate random stream (ids
    ``train-...``): question, options, ``answer`` and a worked ``en_reasoning`` ending in the letter."""
    check_int(n_per_level, "n_per_level", minimum=1)
    check_int(seed, "seed", minimum=0)
    return _bank.generate(n_per_level, seed, prefix="train")


def to_authors_result(
    rows: Sequence[dict[str, Any]], path: str | os.PathLike | None = None
) -> dict[str, Any]:
    """The authors' ``result.json`` (``model_score``, ``model_output``, ``model_response``,
    ``correctness``) for ``rows`` in their order; written to ``path`` (indent 4, UTF-8) when given."""
    if isinstance(rows, dict | str) or not isinstance(rows, Sequence):
        raise ValueError("rows must be a sequence of per-sample records")
    out = to_result_json(rows)
    if path is not None:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(out, indent=4, ensure_ascii=False), encoding="utf-8")
    return out


def load_authors_result(
    path: str | os.PathLike,
    records: Sequence[dict[str, Any]],
    *,
    language: str = "en",
    fallback: str = "fuzzy",
) -> list[dict[str, Any]]:
    """Re-score a ``result.json`` offline: its ``model_response`` list, aligned in order with
    ``records``, is re-extracted with :func:`extract_answer`; returns per-sample rows for
    :func:`anesbench_metrics`. Raises ``ValueError`` if there are more responses than records."""
    check_language(language)
    check_in(fallback, FALLBACKS, "fallback")
    recs = check_records(records, language)
    responses = read_result_json(path)["model_response"]
    if len(responses) > len(recs):
        raise ValueError(f"path holds {len(responses)} responses but records has only {len(recs)}")
    return [score_row(r, language, str(resp or ""), fallback) for r, resp in zip(recs, responses)]
