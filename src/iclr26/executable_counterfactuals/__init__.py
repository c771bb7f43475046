"""Executable counterfactuals (Vashishtha et al., ICLR 2026, arXiv 2510.01539): code and math problems whose
answer needs abduction (infer the latent from an observed run), action (change the input) and prediction
(run again), with exact answer sets by exhaustive execution over the latent prior.

>>> from iclr26.executable_counterfactuals import generate, prompt, parse_answer, score, full_abduction
>>> p = generate("if_else", 1, seed=0)[0]
>>> score(full_abduction(p), p.answers_counterfactual)["em"]
1.0
"""

from __future__ import annotations

from dataclasses import replace

from ..validation import check_in, check_int
from ._problem import Problem, generate_family, normalised_ast
from ._program import DEFAULTS, FAMILIES, Difficulty
from ._protocol import (
    ANSWER_FORMAT,
    KINDS,
    RELEASED_FIELDS,
    aggregate,
    export_rl_jsonl,
    load_released,
    parse_answer,
    prompt,
    reward,
    score,
)
from ._solvers import LLMSolver, exec_cf_task, extract_program, full_abduction, run_program, skip_abduction
from ._truth import STEP_BUDGET, subprocess_truth

__all__ = [
    "ANSWER_FORMAT",
    "DEFAULTS",
    "FAMILIES",
    "KINDS",
    "RELEASED_FIELDS",
    "STEP_BUDGET",
    "Difficulty",
    "LLMSolver",
    "Problem",
    "aggregate",
    "answer_set_sizes",
    "exec_cf_task",
    "export_rl_jsonl",
    "extract_program",
    "full_abduction",
    "generate",
    "load_released",
    "normalised_ast",
    "parse_answer",
    "prompt",
    "reward",
    "run_program",
    "score",
    "skip_abduction",
    "subprocess_truth",
]


def _check_difficulty(family: str, difficulty: Difficulty | dict | None) -> Difficulty:
    base = DEFAULTS[family]
    if difficulty is None:
        return base
    if isinstance(difficulty, dict):
        unknown = set(difficulty) - set(base.tags())
        if unknown:
            raise ValueError(f"difficulty: unknown knobs {sorted(unknown)}; known: {sorted(base.tags())}")
        difficulty = replace(base, **difficulty)
    if not isinstance(difficulty, Difficulty):
        raise ValueError(f"difficulty must be a Difficulty, a dict or None, got {type(difficulty).__name__}")
    d = difficulty
    check_int(d.depth, "difficulty.depth", minimum=1, maximum=2)
    check_int(d.branches, "difficulty.branches", minimum=2, maximum=6)
    check_int(d.trips, "difficulty.trips", minimum=1, maximum=STEP_BUDGET)
    check_in(d.n_latents, (1, 3), "difficulty.n_latents")
    check_int(d.range_size, "difficulty.range_size", minimum=2, maximum=100 if d.n_latents == 1 else 12)
    if d.modulus is not None:
        check_int(d.modulus, "difficulty.modulus", minimum=2)
        if d.range_size < d.modulus:
            raise ValueError(
                f"difficulty.range_size ({d.range_size}) must be at least difficulty.modulus ({d.modulus}): "
                "a prior smaller than the modulus cannot make every residue reachable"
            )
    if family == "while" and d.depth != 1:
        raise ValueError("difficulty.depth: the while family has no nested conditionals (depth must be 1)")
    return d


def generate(
    family: str, n: int, *, seed: int = 0, difficulty: Difficulty | dict | None = None
) -> list[Problem]:
    """``n`` distinct executable counterfactuals of ``family`` (one of :data:`FAMILIES`).

    Parameters
    ----------
    family : str
        ``if_else``, ``if_else_long``, ``while``, ``multi_r`` or ``gsm`` (``if_else`` programs rendered as
        word problems).
    n : int
        Number of problems (>= 1).
    seed : int
        Problem ``i`` is a function of ``(family, seed, i)`` and the difficulty (a prefix of a longer
        list is the shorter list).
    difficulty : Difficulty or dict, optional
        Knobs overriding the family's defaults (:data:`DEFAULTS`), e.g. ``{"modulus": 5}``.

    Returns
    -------
    list of Problem
        Valid Python, loops within :data:`STEP_BUDGET` iterations (checked on every latent), de-duplicated
        by normalised AST and inputs, each with a counterfactual answer that depends on the latent.
    """
    family = check_in(family, FAMILIES, "family")
    n = check_int(n, "n", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    diff = _check_difficulty(family, difficulty)
    return generate_family(family, n, seed, diff)


def answer_set_sizes(problems: list[Problem]) -> dict[str, dict[int, int]]:
    """``{family: {answer-set size: count}}``."""
    out: dict[str, dict[int, int]] = {}
    for p in problems:
        sizes = out.setdefault(p.family, {})
        k = len(p.answers_counterfactual)
        sizes[k] = sizes.get(k, 0) + 1
    return {f: dict(sorted(s.items())) for f, s in out.items()}
