"""Agreement with the authors' code (github.com/dudududuu/CausalPitfalls, llm_evaluation/*.py).

Set CAUSALPITFALLS_AUTHORS to a checkout of their repository (with its challenges/ folder); skipped
without it. Their API clients (openai, anthropic, google.generativeai, dotenv) are replaced by stubs
that record the prompts instead of calling a service.
"""

import importlib
import json
import os
import re
import shutil
import sys
import types
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iclr26.causalpitfalls import (
    causal_reliability,
    code_prompt,
    direct_prompt,
    fill_rubric,
    judge_messages,
    load_challenges,
    normalized_score,
    results_prompt,
)

AUTHORS = os.environ.get("CAUSALPITFALLS_AUTHORS")
pytestmark = pytest.mark.skipif(
    not AUTHORS or not (Path(AUTHORS) / "llm_evaluation" / "get_responses.py").is_file(),
    reason="set CAUSALPITFALLS_AUTHORS to a checkout of dudududuu/CausalPitfalls",
)


class _Completions:
    calls: list = []
    reply = '{"scores": []}'

    def create(self, **kw):
        _Completions.calls.append(kw)
        msg = types.SimpleNamespace(content=_Completions.reply)
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=msg)])


def _stub_modules(monkeypatch):
    client = types.SimpleNamespace(chat=types.SimpleNamespace(completions=_Completions()))
    openai = types.ModuleType("openai")
    openai.OpenAI = lambda **kw: client
    anthropic = types.ModuleType("anthropic")
    anthropic.Anthropic = object
    google = types.ModuleType("google")
    genai = types.ModuleType("google.generativeai")
    google.generativeai = genai
    dotenv = types.ModuleType("dotenv")
    dotenv.load_dotenv = lambda *a, **k: None
    for name, mod in [
        ("openai", openai),
        ("anthropic", anthropic),
        ("google", google),
        ("google.generativeai", genai),
        ("dotenv", dotenv),
    ]:
        monkeypatch.setitem(sys.modules, name, mod)


@pytest.fixture
def authors(monkeypatch, tmp_path):
    """Their modules, imported from a copy of the checkout in tmp_path (their runner writes results
    into challenges/)."""
    repo = tmp_path / "repo"
    shutil.copytree(Path(AUTHORS) / "llm_evaluation", repo / "llm_evaluation")
    shutil.copytree(Path(AUTHORS) / "challenges", repo / "challenges")
    _stub_modules(monkeypatch)
    monkeypatch.syspath_prepend(str(repo / "llm_evaluation"))
    monkeypatch.syspath_prepend(str(repo))
    monkeypatch.chdir(repo)
    for m in [
        "config",
        "get_responses",
        "scoring_responses",
        "get_final_results",
        "llm_evaluation",
        "llm_evaluation.code_execution_utils",
    ]:
        monkeypatch.delitem(sys.modules, m, raising=False)
    mods = types.SimpleNamespace(
        responses=importlib.import_module("get_responses"),
        scoring=importlib.import_module("scoring_responses"),
        final=importlib.import_module("get_final_results"),
        repo=repo,
    )
    return mods


def _items(repo):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_challenges(repo / "challenges")


def test_rubric_filling_equals_theirs_on_all_datasets(authors):
    seen = 0
    for it in _items(authors.repo)[::5]:
        rubric = authors.scoring.load_rubric(it.challenge)
        key = authors.scoring.load_answer_key(it.challenge)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert fill_rubric(rubric, key, it.dataset) == authors.scoring.fill_rubric_template(
                rubric, key, it.dataset
            )
        assert it.rubric == authors.scoring.fill_rubric_template(rubric, key, it.dataset)
        seen += 1
    assert seen == 75


def test_prompts_equal_theirs_on_all_items(authors):
    ev = authors.responses.LLMEvaluator.__new__(authors.responses.LLMEvaluator)
    asked = []
    ev.call_openai = lambda prompt, model: asked.append(prompt) or "```python\nprint('hi')\n```"
    n = 0
    for i, it in enumerate(_items(authors.repo)):
        asked.clear()
        np.random.seed(i)  # noqa: NPY002 (their shuffle draws from the global state)
        ev.evaluate_model(it.challenge, it.dataset, "openai", "m", it.difficulty)
        theirs_direct, theirs_code, theirs_results = asked
        assert direct_prompt(it, np.random.RandomState(i)) == theirs_direct
        assert code_prompt(it, np.random.RandomState(i)) == theirs_code
        # their executor finds no venv in the copy and returns "NULL" without running anything
        assert results_prompt(it, "print('hi')", "NULL") == theirs_results
        n += 1
    assert n == 375


def test_judge_prompts_equal_theirs(authors):
    n = 0
    for it in _items(authors.repo):
        for text in (f"answer for {it.key}", "ERROR: x\n{ } 0.5"):
            _Completions.calls.clear()
            _Completions.reply = json.dumps({"scores": [1] * len(it.rubric["criteria"])})
            scores = authors.scoring.evaluate_with_gpt4o(it.rubric, text)
            assert _Completions.calls[0]["messages"] == judge_messages(it.rubric["criteria"], text)
            assert scores == [1] * len(it.rubric["criteria"])
            n += 1
    assert n == 750


def test_normalised_scores_and_tables_equal_merge_evaluation_csvs(authors, tmp_path):
    rng = np.random.default_rng(0)
    records = []
    for it in _items(authors.repo)[::3]:
        n = len(it.rubric["criteria"])
        rows = []
        # display names: their difficulty table does not map API names (it would come out empty)
        for llm in ("GPT-4o", "Deepseek-chat"):
            for proto in ("direct", "results"):
                s = rng.integers(0, 2, n)
                rows.append(
                    {
                        "challenge": it.challenge,
                        "dataset": it.dataset,
                        "llm": llm,
                        "protocol_type": proto,
                        "difficulty": it.difficulty,
                        "total_score": int(s.sum()),
                        "response": "r",
                        **{c["id"]: int(v) for c, v in zip(it.rubric["criteria"], s)},
                    }
                )
                records.append(
                    {
                        "llm": llm,
                        "challenge": it.challenge,
                        "protocol": proto,
                        "difficulty": it.difficulty,
                        "scores": s.tolist(),
                    }
                )
        out = authors.repo / "challenges" / it.challenge / "results" / f"{it.dataset}_{it.difficulty}"
        out.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_csv(out / "evaluations_summary.csv", index=False)
    authors.final.merge_evaluation_csvs()
    res = authors.repo / "results"
    merged = pd.read_csv(res / "overall_evaluations.csv")
    ours = sorted(normalized_score(r["scores"]) for r in records)
    np.testing.assert_allclose(sorted(merged["normalized_score"]), ours, atol=1e-9)
    perf = (res / "performance_table.tex").read_text()
    diff = (res / "difficulty_performance_table.tex").read_text()
    for proto, section in (("direct", 0), ("results", 1)):
        for llm in ("GPT-4o", "Deepseek-chat"):
            mine = causal_reliability([r for r in records if r["llm"] == llm], round_as_authors=True)
            cats = [mine["by_category"][proto][c] for c in authors.final.PITFALL_MAPPING]
            row = _row(perf, llm, section)
            np.testing.assert_allclose(row, cats + [mine["overall"][proto]], atol=1e-9)
            order = ["very_easy", "easy", "medium", "hard", "very_hard"]
            np.testing.assert_allclose(
                _row(diff, llm, section),
                [round(mine["by_difficulty"][proto][d], 2) for d in order],
                atol=1e-9,
            )


def _row(tex: str, label: str, section: int) -> list[float]:
    lines = [ln for ln in tex.splitlines() if ln.startswith(label + " &")]
    return [float(v) for v in re.findall(r"\d+\.\d+", lines[section])]
