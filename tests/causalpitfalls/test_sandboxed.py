import dataclasses
import importlib.util
import json
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

from iclr26.causalpitfalls import (
    LLMJudge,
    RubricJudge,
    analysis_script,
    analyst_code,
    execute_analysis,
    generate_challenges,
    load_challenges,
    run_benchmark,
)
from iclr26.causalpitfalls._execute import _output
from iclr26.models import Generation, LanguageModel
from iclr26.sandbox import SandboxUnavailable

SHARED = Path("/work/shared/data/causalpitfalls")
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("statsmodels") is None or importlib.util.find_spec("seaborn") is None,
    reason="pip install iclr26[causalpitfalls]",
)


@pytest.fixture(scope="module")
def item():
    return generate_challenges(0, 1, difficulties=["very_easy"], challenges="simpson_paradox")[0]


def _run(code, item, **kw):
    try:
        return execute_analysis(code, item, **kw)
    except SandboxUnavailable as e:  # pragma: no cover - machine without namespaces or bubblewrap
        pytest.skip(str(e))


def test_preamble_and_path_rewrite_as_authors():
    s = analysis_script("d = pd.read_csv('challenges/x/y.csv')\nprint(d)")
    assert s.startswith("\n# Standard imports\nimport pandas as pd\n") and "import os  \n" in s
    assert "pd.read_csv(get_safe_path('challenges', 'x', 'y.csv'))" in s
    assert "has_causalnex = check_import('causalnex')\n\nd = " in s


@pytest.mark.skipif(not (SHARED / "challenges").is_dir(), reason="authors' datasets absent")
def test_statsmodels_analysis_of_a_shared_dataset():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        it = load_challenges(SHARED, challenges=["casual_effect"], difficulties=["hard"])[0]
    code = (
        f"df = pd.read_csv('{it.data_path}')\n"
        "m = smf.ols('failure ~ patch_v2 + usage_hours', data=df).fit()\n"
        "print('coef', round(m.params['patch_v2'], 4))\n"
    )
    a = _run(code, it)
    assert a.status == "ok", a.output
    assert "coef " in a.output and "Warning: Package econml is not installed" in a.output
    assert a.record()["network_isolated"] is True


def test_pip_and_network_are_contained(item):
    code = (
        "import subprocess, sys, socket\n"
        "cmd = [sys.executable, '-m', 'pip', 'install', 'six']\n"
        "r = subprocess.run(cmd, capture_output=True, text=True)\n"
        "print('pip exit', r.returncode)\n"
        "socket.create_connection(('93.184.216.34', 80), timeout=3)\n"
    )
    a = _run(code, item)
    assert a.status == "runtime_error" and a.output.startswith("ERROR: ")
    assert "OSError" in a.output or "unreachable" in a.output


def test_no_output_timeout_and_bad_input(item):
    # the import checks print a warning per causal package missing here (the authors pip-install them)
    assert _run("x = 1", item).output.startswith("Warning: Package econml is not installed.")
    ok = SimpleNamespace(status="ok", stdout=" \n", stderr="", detail="")
    assert _output(ok) == "NOTE: Code executed successfully but produced no output"
    assert _output(SimpleNamespace(status="runtime_error", stdout="", stderr="", detail="")).startswith(
        "ERROR: No error details"
    )
    t = _run("while True: pass", item, time_limit=2.0)
    assert t.status == "timeout" and t.failed and t.output.startswith("ERROR: ")
    with pytest.raises(ValueError, match="code"):
        execute_analysis("  ", item)
    with pytest.raises(ValueError, match="item"):
        execute_analysis("print(1)", "item")
    with pytest.raises(ValueError, match="time_limit"):
        execute_analysis("print(1)", item, time_limit=0)


def test_reference_analyst_scores_full_marks_on_numbers(item):
    for kind, expect in (("reference", [1, 1, 1]), ("naive", [0, 1, 0])):
        a = _run(analyst_code(item, kind), item)
        v = RubricJudge().judge([(item.rubric, a.output)])[0].scores
        assert v[2:] == expect, (kind, a.output)
    with pytest.raises(ValueError, match="kind"):
        analyst_code(item, "expert")


def _reply(prompt):
    text = prompt[-1]["content"]
    if "careful grader" in text:
        n = text.split("CRITERIA:")[1].count('"id"')
        return "not json" if "no code" in text else json.dumps({"scores": [1] * n})
    if "Provide Python code only" in text:
        # only the very_easy question carries the hint "... confounds the comparison"
        return "```python\nprint('Simpson reversal; rates 0.5')\n```" if "confounds" in text else "no code"
    return "Simpson's paradox: stratified, no code"


def test_pipeline_with_a_scripted_model(tmp_path):
    from iclr26.models import ScriptedModel

    model = ScriptedModel(_reply)
    items = generate_challenges(1, 1, difficulties=["very_easy", "very_hard"], challenges="simpson_paradox")
    judges = [RubricJudge(), LLMJudge(model)]
    res = run_benchmark(model, items, judges=judges, max_new_tokens=8, log_dir=tmp_path, workers=1)
    assert len(res.records) == 4 and (tmp_path / "samples.sqlite").exists()
    code = {r["difficulty"]: r for r in res.records if r["protocol"] == "code"}
    assert (
        code["very_easy"]["code_status"] == "ok"
        and "Simpson reversal" in code["very_easy"]["execution_output"]
    )
    assert code["very_hard"]["code_status"] == "no_block" and code["very_hard"]["response"] is None
    assert len(res.scores("rubric")) == 3 and len(res.scores("rubric", drop_missing_code=False)) == 4
    direct = [r for r in res.records if r["protocol"] == "direct"]
    v = direct[0]["verdicts"]
    assert v["rubric"]["scores"][:2] == [1, 1]
    assert v["llm:" + model.name]["invalid"] and v["llm:" + model.name]["scores"] == [0] * 5
    n_asked = len(model.prompts)
    again = run_benchmark(model, items, judges=judges, max_new_tokens=8, log_dir=tmp_path, workers=1)
    assert len(model.prompts) == n_asked  # resumed from the log: nothing asked again
    assert [r["verdicts"] for r in again.records] == [r["verdicts"] for r in res.records]
    with pytest.raises(ValueError, match="protocols"):
        run_benchmark(model, items, protocols=["oral"])
    with pytest.raises(ValueError, match="items"):
        run_benchmark(model, [])
    with pytest.raises(ValueError, match="workers"):
        run_benchmark(model, items, workers=0)
    with pytest.raises(ValueError, match="model"):
        LLMJudge("gpt")
    with pytest.raises(ValueError, match="batch_size"):
        LLMJudge(model, batch_size=0)


class _CodeWriter(LanguageModel):
    """A tiny random model that answers every code prompt with a fixed analysis (so that the code is
    run and the results prompt asked); every other prompt goes to the tiny model."""

    name = "tiny-code-writer"

    def __init__(self, tiny):
        self.tiny = tiny

    @property
    def identity(self):
        return "code-writer:" + self.tiny.identity

    def generate(self, prompts, config=None):
        tiny = self.tiny.generate(prompts, config)  # also for code prompts: the batch stays as asked
        code = "```python\nprint(pd.read_csv('{}').shape)\n```"
        return [
            Generation(text=code.format(p[0]["content"].split("available at: ")[1].split(",")[0]))
            if "Provide Python code only" in p[0]["content"]
            else g
            for p, g in zip(prompts, tiny)
        ]

    def loglikelihood(self, contexts, continuations):  # pragma: no cover
        raise NotImplementedError


def _logged(folder):
    from iclr26.evaluation import SampleLog

    with SampleLog(folder / "samples.sqlite") as log:
        rows = sorted(log.records(), key=lambda r: r["key"])
    return [{k: v for k, v in r.items() if k not in ("created", "time")} for r in rows]


def _timeless(records):
    """Records without the sandbox's wall times (the only field that varies between runs)."""
    return [
        {**r, "execution": {k: v for k, v in r["execution"].items() if k != "wall_time"}}
        if r.get("execution")
        else r
        for r in records
    ]


def test_forked_workers_log_and_score_exactly_as_one_process(tmp_path):
    """Every record (prompts, replies, code, execution output, verdicts) and every logged sample is the
    same with the model calls in two forked workers as in this process; a rerun resumes from the log."""
    torch = pytest.importorskip("torch")
    from iclr26.models import tiny_random_model

    items = generate_challenges(3, 1, difficulties=["very_easy", "very_hard"], challenges="berkson_paradox")
    items = [dataclasses.replace(it, data=it.data.head(16)) for it in items]  # within the tiny context
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the forked workers run one thread: so does the in-process run
    try:
        model = _CodeWriter(tiny_random_model(seed=0))
        runs = {}
        for workers in (1, 2):
            judges = [RubricJudge(), LLMJudge(model.tiny, max_new_tokens=6, batch_size=2)]
            try:
                runs[workers] = run_benchmark(
                    model,
                    items,
                    judges=judges,
                    max_new_tokens=6,
                    batch_size=2,
                    log_dir=tmp_path / str(workers),
                    workers=workers,
                )
            except SandboxUnavailable as e:  # pragma: no cover
                pytest.skip(str(e))
    finally:
        torch.set_num_threads(threads)
    one, two = runs[1], runs[2]
    assert {r["code_status"] for r in one.records if r["protocol"] == "code"} == {"ok"}
    assert _timeless(two.records) == _timeless(one.records)
    for folder, run in (("1", one), ("2", two)):  # what was written is what was returned
        written = json.loads((tmp_path / folder / "records.json").read_text())
        assert _timeless(written) == _timeless(json.loads(json.dumps(run.records, default=str)))
    logged = _logged(tmp_path / "1")
    assert len(logged) == 2 + 2 + 2 + 4 and _logged(tmp_path / "2") == logged  # direct, code, results, judge
    again = run_benchmark(
        model, items, judges=judges, max_new_tokens=6, batch_size=1, log_dir=tmp_path / "2", workers=2
    )
    assert _timeless(again.records) == _timeless(two.records) and _logged(tmp_path / "2") == logged


@pytest.mark.slow
def test_reference_analyst_in_the_sandbox_on_five_challenges():
    """Sandboxed runs of the analyst program (every challenge is checked in-process in test_generator)."""
    from iclr26.sandbox import Sandbox

    decided = ("numeric", "numeric_any", "direction", "value_match")
    chosen = ["berkson_paradox", "necessity_sufficiency", "causal_direction_iv", "dag_structure_markequi"]
    items = generate_challenges(5, 1, difficulties=["very_easy"], challenges=chosen + ["domain_shift"])
    try:
        with Sandbox(time_limit=60, memory_limit=2048 << 20) as sb:
            runs = [execute_analysis(analyst_code(it, "reference"), it, sandbox=sb) for it in items]
    except SandboxUnavailable as e:  # pragma: no cover
        pytest.skip(str(e))
    for it, a in zip(items, runs):
        assert a.status == "ok", (it.key, a.output)
        v = RubricJudge().judge([(it.rubric, a.output)])[0].scores
        got = [s for s, c in zip(v, it.rubric["criteria"]) if c["type"] in decided]
        assert got and all(got), (it.key, a.output)
