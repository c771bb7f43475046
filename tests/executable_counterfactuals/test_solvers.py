"""Scripted solvers, the language-model solver (direct and sandboxed code) and the evaluation task."""

from __future__ import annotations

import pytest

from iclr26.executable_counterfactuals import (
    FAMILIES,
    LLMSolver,
    exec_cf_task,
    extract_program,
    full_abduction,
    generate,
    run_program,
    score,
    skip_abduction,
)
from iclr26.models import ScriptedModel


@pytest.fixture(scope="module")
def problems():
    return [p for f in FAMILIES for p in generate(f, 30, seed=1)]


def test_full_abduction_is_exact(problems):
    for p in problems:
        for k in ("counterfactual", "interventional"):
            assert full_abduction(p, k) == p.truth(k)
    mod = generate("while", 30, seed=1, difficulty={"modulus": 4})
    assert all(full_abduction(p) == p.answers_counterfactual for p in mod)


def test_skip_abduction_solves_twin_not_counterfactual(problems):
    inter = [score(skip_abduction(p, "interventional"), p.answers_interventional)["em"] for p in problems]
    cf = [score(skip_abduction(p), p.answers_counterfactual)["em"] for p in problems]
    assert sum(inter) == len(problems)
    assert sum(cf) / len(cf) < 0.5


def test_extract_and_run_program():
    assert extract_program("x\n```python\nprint(1)\n```\ntail") == "print(1)\n"
    assert extract_program("```\nprint(2)\n") == "print(2)\n"
    assert extract_program("no code") is None
    assert run_program("print('Answer: {1, 2}')") == {1, 2}
    assert run_program("print('log')\nprint(7)\n") == {7}
    assert run_program("print('no number')") is None
    assert run_program("raise SystemExit(3)") is None
    assert run_program("while True: pass", time_limit=0.5) is None
    assert run_program(None) is None


def _oracle(kind_of, mode):
    """A scripted model that answers every prompt correctly (direct) or writes a correct solver (code)."""

    def reply(prompt):
        text = prompt[-1]["content"] if isinstance(prompt, list) else prompt
        p, kind = kind_of(text)
        ans = "{" + ", ".join(map(str, sorted(p.truth(kind)))) + "}"
        if mode == "direct":
            return f"Answer: {ans}"
        return f"```python\nprint('Answer: {ans}')\n```"

    return reply


def test_llm_solver_direct_and_code(problems, tmp_path):
    sub = problems[::10]
    from iclr26.executable_counterfactuals import prompt

    table = {}
    for p in sub:
        for k in ("counterfactual", "interventional"):
            table[prompt(p, k).rsplit("\n\n", 1)[0]] = (p, k)

    def kind_of(text):
        return table[text.rsplit("\n\n", 1)[0]]

    for mode in ("direct", "code"):
        model = ScriptedModel(_oracle(kind_of, mode))
        res = LLMSolver(model, mode).evaluate(sub, log=tmp_path / f"{mode}.sqlite")
        assert res.n_asked == 2 * len(sub)
        assert all(r["scores"]["em"] == 1.0 for r in res.records)
        again = LLMSolver(model, mode).evaluate(sub, log=tmp_path / f"{mode}.sqlite")
        assert again.n_asked == 0 and again.n_reused == 2 * len(sub)
    assert set(res.metrics) == {f"{p.family}/{k}" for p in sub for k in ("counterfactual", "interventional")}


def test_llm_solver_invalid_replies_are_counted(problems):
    sub = problems[:4]
    res = LLMSolver(ScriptedModel(lambda prompt: "I do not know"), "direct").evaluate(sub)
    for m in res.metrics.values():
        assert m["em"] == 0.0 and m["invalid_rate"] == 1.0
    res = LLMSolver(ScriptedModel(lambda prompt: "```python\nimport os\nprint(1/0)\n```"), "code").evaluate(
        sub
    )
    assert all(r["scores"]["invalid"] == 1.0 for r in res.records)


def test_task_prompts_differ_by_mode(problems):
    s_direct = exec_cf_task(problems[:1], mode="direct").samples[0]
    t_code = exec_cf_task(problems[:1], mode="code")
    assert "final line only" in exec_cf_task(problems[:1]).build_prompt(s_direct)[0]["content"]
    assert "Python 3 program" in t_code.build_prompt(t_code.samples[0])[0]["content"]
