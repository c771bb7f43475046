"""Prompts, answer parsing, set scoring, the RL reward and export, and loading released JSONL."""

from __future__ import annotations

import json
import operator
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..store import atomic_write_text
from ..validation import check_in
from ._problem import Problem

KINDS = ("counterfactual", "interventional")

ANSWER_FORMAT = (
    "Think step by step if you need to, then end with a final line of the form "
    "`Answer: {a, b, ...}` listing every possible value (a single value is written `Answer: {a}`)."
)


def _describe_prior(p: Problem) -> str:
    return ", ".join(
        f"`{k}` is drawn once with `random.randint({lo}, {hi})`" for k, (lo, hi) in p.latents.items()
    )


def _program_block(p: Problem) -> str:
    if p.text:
        return p.text
    return f"```python\n{p.code}```"


def prompt(p: Problem, kind: str = "counterfactual") -> str:
    """The question of ``kind`` on ``p`` (a user message).

    Counterfactual: the observation ``f(x_factual) = y_factual`` is given and the solver must infer the
    latents (abduction) before predicting ``f(x_cf)`` under the same latents. Interventional: the latents'
    values are revealed, so no abduction is needed.
    """
    kind = check_in(kind, KINDS, "kind")
    what = "the machine" if p.text else "the function `f`"
    prior = "Its secret value is unknown to you." if p.text else f"{_describe_prior(p)}; unknown to you."
    head = f"Here is {what}. {prior}\n\n{_program_block(p)}\n\n"
    if kind == "counterfactual":
        q = (
            f"When {what} was run on input x = {p.x_factual}, it returned {p.y_factual}. "
            f"Had it instead been run on input x = {p.x_cf}, with the same secret value(s) as in that run, "
            "what would it have returned? If several values are possible, list them all."
        )
    else:
        vals = ", ".join(f"{k} = {v}" for k, v in zip(p.latents, p.latent_true, strict=True))
        q = f"Suppose {vals}. What does {what} return on input x = {p.x_cf}?"
    return f"{head}{q}\n\n{ANSWER_FORMAT}"


_INT = re.compile(r"-?\d+")


def _ints(chunk: str) -> set[int] | None:
    found = _INT.findall(chunk)
    return {int(v) for v in found} if found else None


def parse_answer(text: str) -> set[int] | None:
    """The answer set of a reply, or ``None`` when it has none (counted as wrong, reported as invalid).

    Reads the last ``Answer:`` line (a set ``{a, b}``, a list ``[a, b]``, or bare comma-separated ints, also
    inside ``\\boxed{...}``); without one, the last ``\\boxed{...}``.
    """
    if not isinstance(text, str):
        return None
    hits = list(re.finditer(r"answer\s*[:=]\s*(.*)", text, flags=re.IGNORECASE))
    if hits:
        line = hits[-1].group(1)
        m = re.search(r"[{\[(]([^{}\[\]()]*)[}\])]", line.replace("\\boxed", ""))
        return _ints(m.group(1) if m else line)
    boxes = re.findall(r"\\boxed\{([^{}]*)\}", text)
    return _ints(boxes[-1]) if boxes else None


def _int_set(values: Any, name: str) -> set[int]:
    """``values`` as a set of ints; a str (read character by character, so "12" met {1, 2}), a bool or a
    non-integer element raises ``ValueError``."""
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise ValueError(f"{name}: expected a collection of ints, got {type(values).__name__}")
    out = set()
    for v in values:
        try:
            if isinstance(v, bool):
                raise TypeError
            out.add(operator.index(v))  # Python and NumPy integers; not floats
        except TypeError:
            raise ValueError(f"{name}: expected ints, got {v!r}") from None
    return out


def score(pred: Iterable[int] | None, truth: Iterable[int]) -> dict[str, float]:
    """Set exact match and set F1 of ``pred`` against ``truth`` (``None`` = invalid: 0, 0)."""
    truth = _int_set(truth, "truth")
    if pred is None:
        return {"em": 0.0, "f1": 0.0, "invalid": 1.0}
    pred = _int_set(pred, "pred")
    tp = len(pred & truth)
    f1 = 2 * tp / (len(pred) + len(truth)) if pred or truth else 1.0
    return {"em": float(pred == truth), "f1": f1, "invalid": 0.0}


def aggregate(preds: Sequence[Iterable[int] | None], truths: Sequence[Iterable[int]]) -> dict[str, float]:
    """EM, micro F1 (pooled true positives over pooled sizes), per-item mean F1 and the invalid rate."""
    if len(preds) != len(truths):
        raise ValueError(f"preds: {len(preds)} items, truths: {len(truths)}")
    if not preds:
        raise ValueError("preds must not be empty")
    preds = [None if p is None else _int_set(p, f"preds[{i}]") for i, p in enumerate(preds)]
    truths = [_int_set(t, f"truths[{i}]") for i, t in enumerate(truths)]
    rows = [score(p, t) for p, t in zip(preds, truths, strict=True)]
    tp = sum(len(p & t) for p, t in zip(preds, truths, strict=True) if p is not None)
    size = sum(len(p) for p in preds if p is not None) + sum(len(t) for t in truths)
    n = len(rows)
    return {
        "n": n,
        "em": sum(r["em"] for r in rows) / n,
        "f1_micro": 2 * tp / size if size else 1.0,
        "f1_mean": sum(r["f1"] for r in rows) / n,
        "invalid_rate": sum(r["invalid"] for r in rows) / n,
    }


def reward(text: str, p: Problem, kind: str = "counterfactual") -> float:
    """The paper's RL reward: 1.0 when the parsed answer set equals the truth, else 0.0."""
    kind = check_in(kind, KINDS, "kind")
    return score(parse_answer(text), p.truth(kind))["em"]


def format_answer(values: Iterable[int]) -> str:
    return "{" + ", ".join(str(v) for v in sorted(values)) + "}"


def export_rl_jsonl(
    problems: Sequence[Problem], path: str | os.PathLike, kinds: Sequence[str] = KINDS
) -> int:
    """Write one line per (problem, kind) with the fields TRL (``prompt`` as chat messages, ``answer``) and
    verl (``data_source``, ``ability``, ``reward_model.ground_truth``, ``extra_info``) read. Returns the
    number of lines."""
    kinds = [check_in(k, KINDS, "kinds") for k in kinds]
    lines = []
    for p in problems:
        for kind in kinds:
            gold = format_answer(p.truth(kind))
            rec = {
                "data_source": f"executable_counterfactuals/{p.family}",
                "prompt": [{"role": "user", "content": prompt(p, kind)}],
                "answer": gold,
                "ability": f"counterfactual-{kind}",
                "reward_model": {"style": "rule", "ground_truth": gold},
                "extra_info": {"id": p.id, "kind": kind, "family": p.family},
            }
            lines.append(json.dumps(rec) + "\n")
    atomic_write_text(path, "".join(lines))  # a reader never sees half a file
    return len(lines)


# ------------------------------------------------------------------ released files

#: Our name for each field -> the names it may have in a released file.
RELEASED_FIELDS = {
    "id": ("id", "idx", "uid", "problem_id"),
    "question": ("question", "prompt", "problem", "input", "query"),
    "code": ("code", "program", "function", "source"),
    "answer": ("answer", "answers", "gold", "ground_truth", "label", "target", "solution"),
    "prediction": ("prediction", "pred", "response", "model_answer", "output"),
    "em": ("em", "exact_match", "correct", "score", "reward"),
    "f1": ("f1", "f1_score"),
    "family": ("family", "type", "category", "config", "split", "subset"),
    "kind": ("kind", "setting", "reasoning_type", "mode"),
}


def _to_set(v: Any) -> set[int] | None:
    if v is None:
        return None
    if isinstance(v, int | float) and not isinstance(v, bool):
        return {int(v)}
    if isinstance(v, list | tuple | set):
        return {int(x) for x in v}
    s = str(v)
    parsed = parse_answer(s) if re.search(r"answer|boxed", s, re.IGNORECASE) else _ints(s)
    return parsed


def load_released(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Records of a released JSONL file, mapped to our field names (:data:`RELEASED_FIELDS`).

    Every record must have an ``answer`` field under one of its aliases; unmapped fields are kept under
    ``"extra"``; ``config`` is the file's folder (the Hub layout is ``CONFIG/test.jsonl``, e.g.
    ``code-while-counterfactual``). ``answer``/``prediction`` become sets of ints. A malformed line, or a
    record with no answer, raises ``ValueError`` naming the line and listing the fields found.
    """
    alias = {a: ours for ours, names in RELEASED_FIELDS.items() for a in names}
    out = []
    with Path(path).open() as fh:
        for ln, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"path: line {ln} is not JSON ({e.msg})") from None
            if not isinstance(raw, dict):
                raise ValueError(f"path: line {ln} is not a JSON object")
            rec: dict[str, Any] = {"extra": {}}
            for k, v in raw.items():
                ours = alias.get(k.lower())
                if ours is None or ours in rec:
                    rec["extra"][k] = v
                else:
                    rec[ours] = v
            if "answer" not in rec:
                raise ValueError(
                    f"path: line {ln} has no answer field (one of {RELEASED_FIELDS['answer']}); "
                    f"unknown fields: {sorted(rec['extra'])}"
                )
            rec.setdefault("config", Path(path).parent.name)  # the Hub layout: CONFIG/test.jsonl
            rec["answer"] = _to_set(rec["answer"])
            if "prediction" in rec:
                rec["prediction"] = _to_set(rec["prediction"])
            out.append(rec)
    return out
