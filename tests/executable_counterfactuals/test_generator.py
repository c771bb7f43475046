"""Generator properties: observations reproduced, twins consistent, uniqueness without modulus, seeds."""

from __future__ import annotations

import ast
import json

import pytest

from iclr26.executable_counterfactuals import (
    FAMILIES,
    STEP_BUDGET,
    answer_set_sizes,
    generate,
    normalised_ast,
)
from iclr26.executable_counterfactuals._truth import Runner, StepBudgetExceeded, grid

N = 60


@pytest.fixture(scope="module", params=FAMILIES)
def problems(request):
    return generate(request.param, N, seed=3)


def test_valid_python_and_family(problems):
    for p in problems:
        ast.parse(p.code)
        assert p.code.startswith("import random\n")
        assert "_tick" not in p.code
        assert p.family in FAMILIES


def test_consistent_latents_reproduce_observation(problems):
    for p in problems:
        run = Runner(p.checked_code)
        assert p.latent_true in p.consistent_latents
        for lat in p.consistent_latents:
            assert run(p.x_factual, lat) == p.y_factual
        inconsistent = set(grid(list(p.latents.values()))) - set(p.consistent_latents)
        assert all(run(p.x_factual, lat) != p.y_factual for lat in inconsistent)
        assert p.answers_counterfactual == {run(p.x_cf, lat) for lat in p.consistent_latents}


def test_interventional_twin_runs_revealed_latent(problems):
    for p in problems:
        assert p.answer_interventional == Runner(p.checked_code)(p.x_cf, p.latent_true)
        assert p.answers_interventional == {p.answer_interventional}


def test_modulus_off_gives_single_answers(problems):
    assert all(len(p.answers_counterfactual) == 1 for p in problems)


def test_answer_depends_on_latent(problems):
    # Skipping abduction must not be enough: over the prior the counterfactual output varies.
    for p in problems:
        run = Runner(p.checked_code)
        assert len({run(p.x_cf, lat) for lat in grid(list(p.latents.values()))}) >= 2


def test_deduplicated(problems):
    keys = {(normalised_ast(p.code), p.x_factual, p.x_cf) for p in problems}
    assert len(keys) == len(problems)


@pytest.mark.parametrize("family", FAMILIES)
def test_seed_reproduces_byte_for_byte_and_prefix(family):
    a = [json.dumps(p.to_dict(), sort_keys=True) for p in generate(family, 20, seed=11)]
    b = [json.dumps(p.to_dict(), sort_keys=True) for p in generate(family, 20, seed=11)]
    short = [json.dumps(p.to_dict(), sort_keys=True) for p in generate(family, 7, seed=11)]
    other = [json.dumps(p.to_dict(), sort_keys=True) for p in generate(family, 20, seed=12)]
    assert a == b
    assert a[:7] == short
    assert a != other


def test_modulus_gives_answer_sets():
    ps = generate("if_else", 80, seed=0, difficulty={"modulus": 5})
    sizes = answer_set_sizes(ps)["if_else"]
    assert max(sizes) > 1
    assert all(1 <= k <= 5 for k in sizes)
    assert all("% 5" in p.code for p in ps)
    assert all(all(0 <= a < 5 for a in p.answers_counterfactual) for p in ps)


def test_knobs_change_programs():
    deep = generate("if_else", 30, seed=0, difficulty={"depth": 2, "branches": 4})
    assert any(p.code.count("elif") >= 2 for p in deep)
    assert all(p.difficulty["branches"] == 4 for p in deep)
    wide = generate("if_else", 5, seed=0, difficulty={"range_size": 50})
    assert all(p.latents["r"] == (1, 50) for p in wide)
    multi = generate("multi_r", 5, seed=0)
    assert all(list(p.latents) == ["r1", "r2", "r3"] for p in multi)
    assert all(len(p.latent_true) == 3 for p in multi)


def test_while_within_trip_budget():
    ps = generate("while", 40, seed=5, difficulty={"trips": 5})
    for p in ps:
        run = Runner(p.checked_code, budget=5)
        for lat in grid(list(p.latents.values())):
            run(p.x_factual, lat)
        assert "while" in p.code


def test_step_budget_guard_fires():
    src = "import random\n\n\ndef f(x):\n    r = random.randint(1, 2)\n    while True:\n        _tick()\n"
    with pytest.raises(StepBudgetExceeded):
        Runner(src, budget=STEP_BUDGET)(1, (1,))


def test_gsm_is_a_word_problem():
    p = generate("gsm", 1, seed=0)[0]
    assert p.text and "secret whole number r" in p.text
    assert "def f" not in p.text
