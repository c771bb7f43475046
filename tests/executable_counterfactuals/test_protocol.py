"""Prompts, answer parsing, set scoring, the reward, RL export and released files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from iclr26.executable_counterfactuals import (
    aggregate,
    export_rl_jsonl,
    generate,
    load_released,
    parse_answer,
    prompt,
    reward,
    score,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("work...\nAnswer: {3, 5}", {3, 5}),
        ("Answer: [1, -2]", {1, -2}),
        ("Answer: 7", {7}),
        ("answer = 4, 9", {4, 9}),
        ("Answer: \\boxed{12}", {12}),
        ("so the result is \\boxed{3, 4}", {3, 4}),
        ("Answer: {1}\nlater\nAnswer: {2}", {2}),
        ("I think it is eleven", None),
        ("Answer: {}", None),
        ("", None),
    ],
)
def test_parse_answer(text, expected):
    assert parse_answer(text) == expected


def test_parse_answer_non_string():
    assert parse_answer(None) is None


def test_score_em_f1_invalid():
    assert score({1, 2}, {1, 2}) == {"em": 1.0, "f1": 1.0, "invalid": 0.0}
    s = score({1}, {1, 2})
    assert s["em"] == 0.0 and s["f1"] == pytest.approx(2 / 3)
    assert score({5}, {1}) == {"em": 0.0, "f1": 0.0, "invalid": 0.0}
    assert score(None, {1}) == {"em": 0.0, "f1": 0.0, "invalid": 1.0}
    assert score(np.array([1, 2]), [2, 1])["em"] == 1.0
    # a str was a set of characters ("12" matched "21"), a bool an int, a float an answer
    for pred, truth, name in (("12", "21", "truth"), ([True], {1}, "pred"), ([1.0], {1}, "pred")):
        with pytest.raises(ValueError, match=name):
            score(pred, truth)
    with pytest.raises(ValueError, match=r"preds\[1\]"):
        aggregate([{1}, "1"], [{1}, {1}])


def test_aggregate_micro_and_mean():
    preds = [{1}, {1, 2, 3}, None]
    truths = [{1}, {1, 2}, {4}]
    a = aggregate(preds, truths)
    assert a["n"] == 3
    assert a["em"] == pytest.approx(1 / 3)
    assert a["f1_mean"] == pytest.approx((1 + 0.8 + 0) / 3)
    # micro: tp = 1 + 2, sizes = (1 + 3) + (1 + 2 + 1)
    assert a["f1_micro"] == pytest.approx(2 * 3 / 8)
    assert a["invalid_rate"] == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="preds"):
        aggregate([{1}], [])
    with pytest.raises(ValueError, match="preds"):
        aggregate([], [])


def test_prompts_state_prior_observation_and_twin():
    p = generate("if_else", 1, seed=0)[0]
    cf = prompt(p, "counterfactual")
    it = prompt(p, "interventional")
    assert p.code in cf and "random.randint(1, 10)" in cf
    assert f"x = {p.x_factual}" in cf and str(p.y_factual) in cf and f"x = {p.x_cf}" in cf
    assert f"r = {p.latent_true[0]}" in it and f"returned {p.y_factual}" not in it
    assert "Answer: {a, b, ...}" in cf
    g = generate("gsm", 1, seed=0)[0]
    assert g.text in prompt(g) and "def f" not in prompt(g)


def test_reward_is_set_exact_match():
    p = generate("while", 1, seed=0)[0]
    gold = "{" + ", ".join(map(str, sorted(p.answers_counterfactual))) + "}"
    assert reward(f"...\nAnswer: {gold}", p) == 1.0
    assert reward("Answer: {123456}", p) == 0.0
    assert reward("no answer", p) == 0.0
    assert reward(f"Answer: {{{p.answer_interventional}}}", p, "interventional") == 1.0


def test_export_rl_jsonl(tmp_path):
    ps = generate("multi_r", 3, seed=0)
    n = export_rl_jsonl(ps, tmp_path / "rl.jsonl")
    lines = [json.loads(x) for x in (tmp_path / "rl.jsonl").read_text().splitlines()]
    assert n == len(lines) == 6
    first = lines[0]
    assert first["prompt"][0]["role"] == "user" and first["prompt"][0]["content"] == prompt(ps[0])
    assert first["reward_model"]["ground_truth"] == first["answer"]
    assert parse_answer("Answer: " + first["answer"]) == set(ps[0].answers_counterfactual)
    assert {x["extra_info"]["kind"] for x in lines} == {"counterfactual", "interventional"}


def test_load_released_maps_fields(tmp_path):
    (tmp_path / "code-while-counterfactual").mkdir()
    f = tmp_path / "code-while-counterfactual" / "test.jsonl"
    rows = [
        {"idx": 0, "prompt": "q", "answer": [3, 4], "response": "Answer: {3}", "exact_match": 0, "new": 1},
        {"idx": 1, "prompt": "q", "answer": "{5}", "response": "Answer: {5}", "exact_match": 1},
    ]
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    recs = load_released(f)
    assert [r["answer"] for r in recs] == [{3, 4}, {5}]
    assert recs[0]["prediction"] == {3}
    assert recs[0]["extra"] == {"new": 1}
    assert recs[0]["config"] == "code-while-counterfactual"
    assert [score(r["prediction"], r["answer"])["em"] for r in recs] == [r["em"] for r in recs]


def test_load_released_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"answer": 1}\n{not json\n')
    with pytest.raises(ValueError, match="path: line 2"):
        load_released(bad)
    noans = tmp_path / "noans.jsonl"
    noans.write_text('{"question": "q", "weird": 1}\n')
    with pytest.raises(ValueError, match=r"no answer field.*weird"):
        load_released(noans)
    arr = tmp_path / "arr.jsonl"
    arr.write_text("[1, 2]\n")
    with pytest.raises(ValueError, match="not a JSON object"):
        load_released(arr)


RELEASED = os.environ.get("ICLR26_EXEC_CF_RELEASED")


@pytest.mark.skipif(
    not RELEASED, reason="set ICLR26_EXEC_CF_RELEASED to a folder of the authors' JSONL files"
)
def test_released_files_score_identically():
    files = sorted(Path(RELEASED).glob("**/*.jsonl"))
    assert files
    checked = 0
    for f in files:
        for r in load_released(f):
            if "prediction" in r and "em" in r:
                assert score(r["prediction"], r["answer"])["em"] == float(r["em"]), (f, r.get("id"))
                checked += 1
            if "prediction" in r and "f1" in r:
                assert score(r["prediction"], r["answer"])["f1"] == pytest.approx(float(r["f1"]))
    assert checked or all(load_released(f) for f in files)
