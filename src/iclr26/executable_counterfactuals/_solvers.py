"""Solvers: the two scripted references and a language model (direct answer, or a solver program run in
:mod:`iclr26.sandbox`), with the evaluation :class:`~iclr26.evaluation.Task`."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from typing import Any

from ..evaluation import EvalResult, Sample, SampleLog, Task, evaluate
from ..models import GenerationConfig, LanguageModel
from ..validation import check_in
from ._problem import Problem
from ._protocol import KINDS, aggregate, parse_answer, prompt, score
from ._truth import Runner, solve


def _prior_guess(p: Problem) -> tuple[int, ...]:
    """The prior's midpoint of each latent (the guess a solver that skips abduction uses)."""
    return tuple((lo + hi) // 2 for lo, hi in p.latents.values())


def skip_abduction(p: Problem, kind: str = "counterfactual") -> set[int]:
    """The "rung-2" baseline: intervene and predict with a latent that ignores the observation (the
    revealed value in the interventional twin, the prior midpoint in the counterfactual one)."""
    kind = check_in(kind, KINDS, "kind")
    run = Runner(p.checked_code)
    latents = p.latent_true if kind == "interventional" else _prior_guess(p)
    return {run(p.x_cf, latents)}


def full_abduction(p: Problem, kind: str = "counterfactual") -> set[int]:
    """Abduction by enumeration of the prior, then action and prediction (re-run from the code, not read
    from the stored answers)."""
    kind = check_in(kind, KINDS, "kind")
    run = Runner(p.checked_code)
    if kind == "interventional":
        return {run(p.x_cf, p.latent_true)}
    return solve(run, list(p.latents.values()), p.x_factual, p.y_factual, p.x_cf)[1]


CODE_INSTRUCTION = (
    "Do not answer directly. Write one complete Python 3 program, in a ```python code block, that "
    "computes the answer by itself (for example by trying every possible secret value) and prints one "
    "final line `Answer: {a, b, ...}`."
)

DIRECT_INSTRUCTION = "Reply with that final line only."

_BLOCK = re.compile(r"```(?:python|py)?\s*\n(.*?)(?:```|\Z)", re.DOTALL)


def extract_program(text: str) -> str | None:
    """The first fenced code block of a reply (an unclosed final block counts), else ``None``."""
    m = _BLOCK.search(text or "")
    return m.group(1) if m and m.group(1).strip() else None


def run_program(source: str | None, *, time_limit: float = 5.0) -> set[int] | None:
    """Run a model-written solver in the sandbox; its answer set from stdout (the ``Answer:`` line, else the
    integers of the last non-empty line), ``None`` if it fails or prints none."""
    if source is None:
        return None
    from ..sandbox import run

    r = run(source, "python", "", time_limit=time_limit, memory_limit=256 << 20, output_limit=1 << 20)
    if r.status != "ok":
        return None
    got = parse_answer(r.stdout)
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    if got is None and lines:
        got = parse_answer(f"Answer: {lines[-1]}")
    return got


def _agg(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[str, list] = {}
    for r in records:
        groups.setdefault(r["group"], []).append(r)
    out = {}
    for g, rs in sorted(groups.items()):
        preds = [None if r["parsed"] is None else set(r["parsed"]) for r in rs]
        out[g] = aggregate(preds, [r["truth"] for r in rs])
    return out


def exec_cf_task(problems: Sequence[Problem], kinds: Sequence[str] = KINDS, mode: str = "direct") -> Task:
    """The evaluation task: one sample per (problem, kind), grouped ``"family/kind"``; scores ``em``,
    ``f1``, ``invalid``. ``mode="code"`` asks for a solver program and runs it in :mod:`iclr26.sandbox`."""
    mode = check_in(mode, ("direct", "code"), "mode")
    kinds = [check_in(k, KINDS, "kinds") for k in kinds]
    by_id = {p.id: p for p in problems}
    if len(by_id) != len(problems):
        raise ValueError("problems: ids must be unique")
    samples = [
        Sample(id=f"{p.id}/{k}", data={"problem": p.to_dict(), "kind": k}, group=f"{p.family}/{k}")
        for p in problems
        for k in kinds
    ]

    def truth(s: Sample) -> frozenset[int]:
        return by_id[s.data["problem"]["id"]].truth(s.data["kind"])

    def build_prompt(s: Sample):
        text = prompt(by_id[s.data["problem"]["id"]], s.data["kind"])
        if mode == "code":
            text = text.rsplit("\n\n", 1)[0] + "\n\n" + CODE_INSTRUCTION
        else:
            text += " " + DIRECT_INSTRUCTION
        return [{"role": "user", "content": text}]

    def parse(text: str, s: Sample):
        got = run_program(extract_program(text)) if mode == "code" else parse_answer(text)
        return None if got is None else sorted(got)

    def score_one(pred, s: Sample) -> dict[str, float]:
        return score(pred, truth(s))

    def aggregate_records(records):
        gold = {s.id: truth(s) for s in samples}
        return _agg([{**r, "truth": gold[r["sample_id"]]} for r in records])

    return Task(
        name=f"executable-counterfactuals-{mode}",
        samples=samples,
        build_prompt=build_prompt,
        parse=parse,
        score=score_one,
        aggregate=aggregate_records,
        generation=GenerationConfig(max_new_tokens=160 if mode == "code" else 24, temperature=0.0),
        version="1",
        error_scores={"em": 0.0, "f1": 0.0, "invalid": 1.0},
    )


class LLMSolver:
    """A language model as a solver: ``mode="direct"`` (answer in the reply) or ``"code"`` (a Python solver,
    run in the sandbox). :meth:`evaluate` runs the :func:`exec_cf_task` (resumable through ``log``)."""

    def __init__(self, model: LanguageModel, mode: str = "direct") -> None:
        self.model = model
        self.mode = check_in(mode, ("direct", "code"), "mode")

    def evaluate(
        self,
        problems: Sequence[Problem],
        kinds: Sequence[str] = KINDS,
        *,
        batch_size: int = 8,
        seed: int = 0,
        log: str | os.PathLike | SampleLog | None = None,
        progress: bool | Callable = False,
    ) -> EvalResult:
        task = exec_cf_task(problems, kinds, self.mode)
        return evaluate(task, self.model, seed=seed, batch_size=batch_size, log=log, progress=progress)
