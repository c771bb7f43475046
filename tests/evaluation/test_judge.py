"""Model judges: verdict parsing, judge calls cached and logged like samples (re-scoring with another
judge calls only that judge), the --judge spec, Cohen's kappa, input caps and keys kept out of logs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from iclr26.evaluation import Sample, SampleLog, Task, evaluate, rescore
from iclr26.evaluation.agent import model_identity
from iclr26.evaluation.judge import (
    Judge,
    agreement,
    judge_result,
    load_judge_model,
    parse_judge_spec,
    parse_verdict,
)
from iclr26.models import (
    GenerationConfig,
    ModelNotAvailableError,
    OpenAICompatibleServer,
    OpenAIModel,
    ScriptedModel,
)


def test_parse_verdict():
    assert parse_verdict("The answer is right.\nVerdict: yes", "binary") == 1.0
    assert parse_verdict("Verdict: yes ... on reflection, Verdict: **No**", "binary") == 0.0  # the last one
    assert parse_verdict("No.", "binary") == 0.0 and parse_verdict("maybe", "binary") is None
    assert parse_verdict("Score: 7/10", "scale") == 7.0 and parse_verdict("score = 3.5", "scale") == 3.5
    assert parse_verdict("Score: 11", "scale") is None and parse_verdict("seven", "scale") is None
    assert parse_verdict("Score: -1", "scale") is None and parse_verdict("**Score:** 9", "scale") == 9.0
    assert parse_verdict("**Verdict:** **Incorrect**", "binary") == 0.0
    got = parse_verdict("- fluent: 1\n* Correct: no\n", "criteria", ["fluent", "correct", "safe"])
    assert got == {"fluent": 1.0, "correct": 0.0, "safe": None}
    with pytest.raises(ValueError, match="kind"):
        parse_verdict("x", "stars")


def _task(n: int = 6) -> Task:
    return Task(
        name="sums",
        samples=[Sample(id=f"s{i}", data={"q": f"{i} + 1?", "gold": str(i + 1)}) for i in range(n)],
        build_prompt=lambda s: [{"role": "user", "content": s.data["q"]}],
        parse=lambda text, s: text.strip(),
        score=lambda answer, s: {"exact": float(answer == s.data["gold"])},
        generation=GenerationConfig(max_new_tokens=8),
    )


def _answer(prompt):
    """Right for even questions, wrong for odd ones."""
    i = int(prompt[-1]["content"].split(" + ")[0])
    return str(i + 1) if i % 2 == 0 else f"about {i}"


def _inputs(record, sample):
    return {"question": sample.data["q"], "answer": record["text"], "reference": sample.data["gold"]}


def _strict(prompt):
    user = prompt[-1]["content"]
    gold = user.split("Reference answer:\n")[1].split("\n")[0]
    answer = user.split("Answer to grade:\n")[1].split("\n")[0]
    return "Verdict: yes" if answer == gold else "Verdict: no"


def _lenient(prompt):
    return "Looks fine. Verdict: yes"


def test_rescoring_with_another_judge_calls_only_the_judge(tmp_path):
    log = tmp_path / "run.sqlite"
    task, answerer = _task(), ScriptedModel(_answer, name="answerer")
    res = evaluate(task, answerer, log=log, progress=False)
    assert len(answerer.prompts) == 6 and res.judge is None
    strict_model = ScriptedModel(_strict, name="strict-judge")
    strict = Judge(strict_model, "The answer must equal the reference.", spec="hf:/judges/strict")
    a = judge_result(res, task, strict, _inputs, log=log)
    assert len(strict_model.prompts) == 6 and a.judge["n_asked"] == 6 and a.judge["n_reused"] == 0
    assert a.metrics["all"]["judge"] == 0.5 and a.metrics["all"]["exact"] == 0.5
    assert a.judge["spec"] == "hf:/judges/strict" and a.judge["identity"] == model_identity(strict_model)
    assert a.to_dict()["judge"]["kind"] == "binary" and a.records[0]["judge"]["text"] == "Verdict: yes"

    # Another judge on the finished run: the answers come from the log; only the new judge is asked.
    lenient_model = ScriptedModel(_lenient, name="lenient-judge")
    lenient = Judge(lenient_model, "The answer must equal the reference.")
    offline = rescore(task, log, "answerer")
    b = judge_result(offline, task, lenient, _inputs, log=log)
    assert len(answerer.prompts) == 6 and len(strict_model.prompts) == 6
    assert len(lenient_model.prompts) == 6 and b.metrics["all"]["judge"] == 1.0
    assert b.judge["identity"] == model_identity(lenient_model)
    # The same judge again: every verdict comes from the log, nothing is asked.
    again_model = ScriptedModel(_strict, name="strict-judge")
    c = judge_result(
        evaluate(task, answerer, log=log, progress=False),
        task,
        Judge(again_model, strict.rubric),
        _inputs,
        log=log,
    )
    assert again_model.prompts == [] and c.judge["n_reused"] == 6 and c.metrics == a.metrics
    assert len(answerer.prompts) == 6
    # A changed rubric is a different prompt: a new key, asked again.
    d = judge_result(res, task, Judge(again_model, "Stricter rubric."), _inputs, log=log)
    assert d.judge["n_asked"] == 6 and len(again_model.prompts) == 6
    # Judge calls are rows of the same append-only log (answers + 3 distinct judge prompts).
    with SampleLog(log) as slog:
        assert len(slog) == 6 + 3 * 6
        judges = {r["model"] for r in slog.records(task="judge:binary")}
        assert judges == {model_identity(strict_model), model_identity(lenient_model)}
    # Agreement between the two judges on the same answers.
    agree = agreement([r["judge"]["verdict"] for r in a.records], [r["judge"]["verdict"] for r in b.records])
    assert agree["raw"] == 0.5 and agree["n"] == 6


def test_scale_and_criteria_judges_and_unparsed_verdicts():
    scale = Judge(ScriptedModel(["Score: 8", "I cannot tell."]), "Grade helpfulness.", kind="scale")
    got = scale.grade([{"question": "q", "answer": "a"}, {"question": "q", "answer": "b"}])
    assert [g["verdict"] for g in got] == [8.0, None] and [g["parsed"] for g in got] == [True, False]
    twice = Judge(ScriptedModel(lambda p: "Score: 5"), "Grade helpfulness.", kind="scale")
    assert [g["verdict"] for g in twice.grade([{"answer": "a"}] * 3)] == [5.0] * 3
    assert len(twice.model.prompts) == 1  # identical prompts are asked once
    assert scale.scores(None) == {"judge": 0.0, "judge_parsed": 0.0}
    crit = Judge(
        ScriptedModel(["fluent: 1\ncorrect: 0"]), "Grade it.", kind="criteria", criteria=("fluent", "correct")
    )
    assert "- fluent\n- correct" in crit.prompt("q", "a")[-1]["content"]
    g = crit.grade([{"question": "q", "answer": "a"}])[0]
    assert g["verdict"] == {"fluent": 1.0, "correct": 0.0} and g["parsed"]
    assert crit.scores(g["verdict"]) == {
        "judge.fluent": 1.0,
        "judge.correct": 0.0,
        "judge": 0.5,
        "judge_parsed": 1.0,
    }
    with pytest.raises(ValueError, match="criterion names"):
        Judge(ScriptedModel(["x"]), "r", kind="criteria")
    with pytest.raises(ValueError, match="kind"):
        Judge(ScriptedModel(["x"]), "r", kind="stars")
    with pytest.raises(ValueError, match="rubric"):
        Judge(ScriptedModel(["x"]), " ")
    with pytest.raises(ValueError, match="answer"):
        scale.grade([{"question": "q"}])


def test_judge_inputs_are_capped_with_a_marker():
    judge = Judge(ScriptedModel(lambda p: "Verdict: no"), "r", max_input_chars=100)
    msgs = judge.prompt("q", "y" * 10_000, reference="z")
    assert "9900 characters cut by iclr26" in msgs[-1]["content"] and len(msgs[-1]["content"]) < 500


def test_agreement_matches_sklearn_and_handles_edge_cases():
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, 200)
    b = np.where(rng.random(200) < 0.7, a, rng.integers(0, 3, 200))
    got = agreement(list(a), list(b), n_boot=200)
    assert got["kappa"] == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    assert got["raw"] == pytest.approx(np.mean(a == b))
    lo, hi = got["kappa_interval"]
    assert lo < got["kappa"] < hi and got["level"] == 0.95
    labels = agreement(["yes", "no", None, "yes"], ["yes", "yes", "no", "yes"], n_boot=0)
    assert labels["n"] == 3 and labels["n_dropped"] == 1 and labels["raw"] == pytest.approx(2 / 3)
    assert np.isnan(agreement([1, 1, 1], [1, 1, 1], n_boot=0)["kappa"])  # chance agreement is 1
    with pytest.raises(ValueError, match="same items"):
        agreement([1, 0], [1])
    none = agreement([None, 1], [1, None])
    assert (
        none["n"] == 0
        and none["n_dropped"] == 2
        and np.isnan(none["kappa"])
        and np.isnan(none["kappa_interval"][0])
    )


def test_judge_spec(tmp_path):
    s = parse_judge_spec("openai:gpt-4o-mini@http://127.0.0.1:8000/v1")
    assert (s.backend, s.model, s.url) == ("openai", "gpt-4o-mini", "http://127.0.0.1:8000/v1")
    assert parse_judge_spec("openai:org/model@name@https://host/v1").model == "org/model@name"
    assert parse_judge_spec("openai:gpt-4o").url == "https://api.openai.com/v1"
    assert parse_judge_spec("hf:/models/judge").path == "/models/judge"
    assert parse_judge_spec(" embedded ").backend == "embedded"
    for bad in ("", "gpt-4", "openai:", "hf:", "openai:@http://x/v1", "vllm:m@http://x"):
        with pytest.raises(ValueError, match="judge spec|names no model"):
            parse_judge_spec(bad)
    with pytest.raises(ValueError, match="credentials"):
        parse_judge_spec("openai:m@http://user:pw@host/v1")
    remote = load_judge_model("openai:m@http://127.0.0.1:9/v1", api_key_env="X_KEY")
    assert isinstance(remote, OpenAIModel) and remote.base_url == "http://127.0.0.1:9/v1"
    with pytest.raises(ModelNotAvailableError):
        load_judge_model(f"hf:{tmp_path}/missing")


def test_http_judge_keeps_the_key_out_of_logs_and_results(tmp_path, monkeypatch):
    key = "sk-judge-secret-321"
    monkeypatch.setenv("ICLR26_JUDGE_KEY", key)
    log = tmp_path / "run.sqlite"
    task = _task(4)
    res = evaluate(task, ScriptedModel(_answer, name="answerer"), log=log, progress=False)
    served = ScriptedModel(_strict, name="strict-judge")
    with OpenAICompatibleServer(served, api_key=key) as srv:
        spec = f"openai:strict-judge@{srv.url}"
        judge = Judge(
            load_judge_model(spec, api_key_env="ICLR26_JUDGE_KEY"), "Must equal the reference.", spec=spec
        )
        out = judge_result(res, task, judge, _inputs, log=log)
    assert out.metrics["all"]["judge"] == 0.5 and len(served.prompts) == 4
    assert out.judge["model"]["api_key_env"] == "ICLR26_JUDGE_KEY"
    assert key.encode() not in log.read_bytes()
    for suffix in ("-wal", "-shm"):
        extra = log.with_name(log.name + suffix)
        assert not extra.exists() or key.encode() not in extra.read_bytes()
    assert key not in json.dumps(out.to_dict(with_records=True))
