"""The evaluation task: resume, re-scoring, metrics with intervals, the authors' result.json."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("regex")
pytest.importorskip("thefuzz")

from iclr26.anessuite import (  # noqa: E402
    anesbench_metrics,
    anesbench_task,
    generate_anes_questions,
    load_authors_result,
    run_anesbench,
    to_authors_result,
)
from iclr26.evaluation import rescore  # noqa: E402
from iclr26.models import ScriptedModel  # noqa: E402

RECS = generate_anes_questions(8, seed=1)
KEY = {r["en_question"]: r for r in RECS}


def _reply(prompt):
    """Right on System 1, the key's text on 1.x (substitution), wrong letter / nonsense on System 2."""
    user = prompt[-1]["content"]
    question = user.split("follows:\n", 1)[1].split("\n", 1)[0]
    r = KEY[question]
    if r["level"] == 1:
        return f"The answer is {r['answer']}."
    if r["level"] == 2:
        return f"I would give {r['en_' + r['answer']]}"
    wrong = next(c for c in "ABCD" if c != r["answer"])
    return f"Answer: {wrong}" if r["id"].endswith(("0", "2", "4", "6")) else ""


def test_run_resume_rescore(tmp_path):
    log = tmp_path / "log.sqlite"
    model = ScriptedModel(_reply, name="scripted-anes")
    res = run_anesbench(model, RECS, max_new_tokens=16, log=log, progress=False)
    assert res.n_asked == 24 and res.metrics["System 1"]["acc"] == 1.0
    assert res.metrics["System 1.x"]["acc"] == 1.0
    again = run_anesbench(model, RECS, max_new_tokens=16, log=log, progress=False)
    assert again.n_asked == 0 and again.n_reused == 24 and again.metrics == res.metrics
    same = rescore(anesbench_task(RECS, max_new_tokens=16), log, model, seed=0)
    assert same.metrics == res.metrics and same.n_asked == 0
    assert res.metrics["System 2"]["fuzzy"] == 0.5 and res.metrics["System 2"]["acc_strict"] == 0.0
    strict = run_anesbench(model, RECS, fallback="invalid", max_new_tokens=16, log=log, progress=False)
    assert strict.n_asked == 24  # a different parser is a different task version: asked again
    assert strict.metrics["System 2"]["invalid"] == 0.5 and strict.metrics["System 2"]["fuzzy"] == 0.0
    m = anesbench_metrics(res.records, n_boot=200)
    assert m["by_level"]["System 2"]["fuzzy_share"].value == 0.5
    assert m["by_level"]["System 2"]["accuracy"].value <= 0.5
    assert m["overall"]["n"] == 24 and set(m["by_language"]) == {"en"}
    d = m["differences"]["System 1 - System 2"]
    assert d.lo <= d.value <= d.hi and d.value >= 0.5


def test_authors_result_round_trip(tmp_path):
    model = ScriptedModel(_reply, name="scripted-anes")
    res = run_anesbench(model, RECS, max_new_tokens=16, progress=False)
    order = {r["id"]: i for i, r in enumerate(RECS)}
    rows = sorted(res.records, key=lambda r: order[r["sample_id"]])
    out = to_authors_result(rows, tmp_path / "eval" / "result.json")
    on_disk = json.loads((tmp_path / "eval" / "result.json").read_text())
    assert on_disk == out and set(out) == {"model_score", "model_output", "model_response", "correctness"}
    assert out["model_score"] == pytest.approx(np.mean(out["correctness"]))
    back = load_authors_result(tmp_path / "eval" / "result.json", RECS)
    assert [r["parsed"]["pred"] for r in back] == out["model_output"]
    assert [int(r["scores"]["acc"]) for r in back] == out["correctness"]


def test_metrics_language_split():
    rows = [
        {"group": "System 1", "parsed": {"pred": "A", "source": "pattern", "language": lang}, "scores": s}
        for lang, s in [("en", {"acc": 1.0}), ("zh", {"acc": 0.0}), ("zh", {"acc": 1.0})]
    ]
    m = anesbench_metrics(rows, n_boot=50)
    assert m["by_language"]["zh"]["accuracy"].value == 0.5 and m["differences"] == {}


def test_bad_inputs(tmp_path):
    with pytest.raises(ValueError, match="rows"):
        anesbench_metrics([])
    with pytest.raises(ValueError, match=r"rows\[0\]"):
        anesbench_metrics([{"group": "System 3", "scores": {}}])
    with pytest.raises(ValueError, match="n_boot"):
        anesbench_metrics([{"group": "System 1", "scores": {"acc": 1.0}}], n_boot=1)
    # a record without "acc" counted as a wrong answer; a 2 or a str was averaged in
    for scores in ({}, {"acc": 2.0}, {"acc": "1"}, {"acc": 1.0, "fuzzy": 0.5}):
        with pytest.raises(ValueError, match=r"rows\[0\]\.scores"):
            anesbench_metrics([{"group": "System 1", "scores": scores}])
    with pytest.raises(ValueError, match="records"):
        anesbench_task([])
    with pytest.raises(ValueError, match="unique"):
        anesbench_task([RECS[0], RECS[0]])
    with pytest.raises(ValueError, match="max_new_tokens"):
        anesbench_task(RECS, max_new_tokens=0)
    with pytest.raises(ValueError, match="fallback"):
        anesbench_task(RECS, fallback="drop")
    with pytest.raises(ValueError, match="records"):
        anesbench_task("not records")
    (tmp_path / "r.json").write_text(json.dumps({"model_response": ["A"] * 30}))
    with pytest.raises(ValueError, match="responses"):
        load_authors_result(tmp_path / "r.json", RECS)
    (tmp_path / "bad.json").write_text("[]")
    with pytest.raises(ValueError, match="result.json"):
        load_authors_result(tmp_path / "bad.json", RECS)
    with pytest.raises(ValueError, match="rows"):
        to_authors_result("x")
