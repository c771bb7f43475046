"""Bad input raises ValueError naming the argument."""

from __future__ import annotations

import pytest

from iclr26.executable_counterfactuals import Difficulty, LLMSolver, exec_cf_task, generate
from iclr26.models import ScriptedModel


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"family": "switch"}, "family"),
        ({"n": 0}, "n"),
        ({"n": 2.5}, "n"),
        ({"seed": -1}, "seed"),
        ({"difficulty": {"modulus": 11}}, "difficulty.range_size"),
        ({"difficulty": {"modulus": 1}}, "difficulty.modulus"),
        ({"difficulty": {"depth": 3}}, "difficulty.depth"),
        ({"difficulty": {"branches": 1}}, "difficulty.branches"),
        ({"difficulty": {"n_latents": 2}}, "difficulty.n_latents"),
        ({"difficulty": {"range_size": 1}}, "difficulty.range_size"),
        ({"difficulty": {"colour": 1}}, "difficulty: unknown knobs"),
        ({"difficulty": "hard"}, "difficulty must be"),
        ({"difficulty": Difficulty(trips=0)}, "difficulty.trips"),
        ({"family": "while", "difficulty": {"depth": 2}}, "difficulty.depth"),
        ({"family": "multi_r", "difficulty": {"range_size": 40}}, "difficulty.range_size"),
    ],
)
def test_generate_rejects(kwargs, match):
    args = {"family": "if_else", "n": 2, "seed": 0} | kwargs
    with pytest.raises(ValueError, match=match):
        generate(args.pop("family"), args.pop("n"), **args)


def test_llm_solver_mode():
    with pytest.raises(ValueError, match="mode"):
        LLMSolver(ScriptedModel(["x"]), "chain")


def test_task_duplicate_ids():
    p = generate("if_else", 1, seed=0)[0]
    with pytest.raises(ValueError, match="problems"):
        exec_cf_task([p, p])


def test_kind_is_checked():
    from iclr26.executable_counterfactuals import (
        export_rl_jsonl,
        full_abduction,
        prompt,
        reward,
        skip_abduction,
    )

    p = generate("if_else", 1, seed=0)[0]
    for f in (prompt, skip_abduction, full_abduction):
        with pytest.raises(ValueError, match="kind"):
            f(p, "observational")
    with pytest.raises(ValueError, match="kind"):
        reward("Answer: {1}", p, "abductive")
    with pytest.raises(ValueError, match="kinds"):
        export_rl_jsonl([p], "/nonexistent/x.jsonl", kinds=("twin",))
    with pytest.raises(ValueError, match="kinds"):
        exec_cf_task([p], kinds=("twin",))
    with pytest.raises(ValueError, match="mode"):
        exec_cf_task([p], mode="cot")
