import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iclr26.causalpitfalls import (
    CHALLENGES,
    DIFFICULTIES,
    RubricJudge,
    causal_reliability,
    check_answer_keys,
    code_failure_rate,
    code_prompt,
    direct_prompt,
    extract_code,
    failure_rate,
    fill_rubric,
    generate_challenges,
    ipw_effect,
    judge_messages,
    load_challenges,
    parse_scores,
    results_prompt,
    rubric_score,
)

SHARED = Path(__file__).resolve().parents[2].parent.parent / "shared" / "data" / "causalpitfalls"
if not SHARED.is_dir():
    SHARED = Path("/work/shared/data/causalpitfalls")
needs_shared = pytest.mark.skipif(not (SHARED / "challenges").is_dir(), reason="authors' datasets absent")


def test_fill_rubric_placeholders_lists_and_angle_brackets():
    rubric = {"criteria": [{"id": "A", "desc": "{X} and <Y>", "targets": ["{Z}"], "n": 3}], "max_score": 1}
    key = [{"dataset": "d1.csv", "X": 1.5, "Y": ["a", "b"], "Z": 2}, {"dataset": "d2.csv", "X": 9}]
    out = fill_rubric(rubric, key, "d1")
    assert out["criteria"][0] == {"id": "A", "desc": "1.5 and (a, b)", "targets": ["2"], "n": 3}
    assert rubric["criteria"][0]["desc"] == "{X} and <Y>"  # input untouched
    assert fill_rubric(rubric, key, "d2.csv")["criteria"][0]["desc"] == "9 and <Y>"


def test_fill_rubric_substring_then_first_key_with_warning():
    rubric = {"criteria": [{"id": "A", "desc": "{X}"}]}
    key = [{"dataset": "first.csv", "X": 1}, {"dataset": "long_name_data.csv", "X": 2}]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fill_rubric(rubric, key, "name")["criteria"][0]["desc"] == "2"
    with pytest.warns(UserWarning, match="first entry"):
        assert fill_rubric(rubric, key, "zzz")["criteria"][0]["desc"] == "1"


def test_fill_rubric_bad_input():
    with pytest.raises(ValueError, match="rubric"):
        fill_rubric([1], {}, "d")
    with pytest.raises(ValueError, match="answer_key"):
        fill_rubric({"criteria": []}, "nope", "d")
    with pytest.raises(ValueError, match="answer_key"):
        fill_rubric({"criteria": []}, [], "d")


def test_extract_code():
    assert extract_code("text\n```python\nprint(1)\n```\nmore ```x```") == "print(1)"
    assert extract_code("```\n  a = 1\n```") == "a = 1"
    assert extract_code("no code") is None
    assert extract_code("```python\n```") == ""
    with pytest.raises(ValueError, match="reply"):
        extract_code(None)


def test_parse_scores_json_block_and_invalid():
    assert parse_scores('{"scores": [1, 0, 1]}', 3) == [1, 0, 1]
    assert parse_scores('Sure! {"scores": [0,1]} done', 2) == [0, 1]
    assert parse_scores('{"scores": [1, 2]}', 2) is None
    assert parse_scores('{"scores": [1]}', 2) is None
    assert parse_scores("nothing", 1) is None


def test_rubric_score_types():
    kw = {"type": "keyword", "keywords": ["SE", "Simpson"]}
    assert rubric_score(kw, "This is Simpson's paradox") == 1
    assert rubric_score(kw, "these results") == 0  # whole words only
    num = {"type": "numeric", "targets": ["0.613", "0.515"], "tolerance": "0.02"}
    assert rubric_score(num, "rates 61.0% and 0.52") == 1
    assert rubric_score(num, "rate 0.613 only") == 0
    assert rubric_score({**num, "type": "numeric_any"}, "rate 0.613 only") == 1
    assert rubric_score({**num, "targets": ["{X}"]}, "0.613") is None  # unfilled: undecidable
    d = {"type": "direction", "target": "beneficial, harmful, harmful"}
    assert rubric_score(d, "overall beneficial; in strata harmful") == 1
    assert rubric_score(d, "beneficial") == 0
    assert rubric_score({"type": "justification", "expected": "x"}, "x") is None


def _records():
    return [
        {"challenge": "simpson_paradox", "protocol": "direct", "difficulty": "easy", "scores": [1, 0, 1, 1]},
        {"challenge": "berkson_paradox", "protocol": "direct", "difficulty": "hard", "scores": [0, 0]},
        {"challenge": "casual_effect", "protocol": "direct", "difficulty": "easy", "scores": [1, 1, None]},
        {"challenge": "casual_effect", "protocol": "results", "difficulty": "easy", "scores": [0, 1]},
    ]


def test_causal_reliability_by_category_and_difficulty():
    cr = causal_reliability(_records())
    conf = "Confounding biases and spurious associations"
    interv = "Interventions and experimental reasoning"
    assert cr["by_category"]["direct"][conf] == pytest.approx((75 + 0) / 2)
    assert cr["by_category"]["direct"][interv] == pytest.approx(100)  # None criteria not counted
    assert cr["overall"]["direct"] == pytest.approx((37.5 + 100) / 2)
    assert cr["by_difficulty"]["direct"] == pytest.approx({"easy": 87.5, "hard": 0.0})
    assert cr["overall"]["results"] == pytest.approx(50)
    assert causal_reliability(_records(), round_as_authors=True)["overall"]["direct"] == 68.75


def test_causal_reliability_bad_input():
    with pytest.raises(ValueError, match="scores"):
        causal_reliability([])
    with pytest.raises(ValueError, match="challenge"):
        causal_reliability([{"challenge": "x", "protocol": "d", "difficulty": "easy", "scores": [1]}])
    with pytest.raises(ValueError, match="difficulty"):
        causal_reliability(
            [{"challenge": "simpson_paradox", "protocol": "d", "difficulty": "x", "scores": [1]}]
        )
    with pytest.raises(ValueError, match="scores"):
        causal_reliability([{"challenge": "simpson_paradox"}])
    record = {"challenge": "simpson_paradox", "protocol": "d", "difficulty": "easy"}
    # a score other than 0/1/None gave a CR above 100 (or a TypeError for a string)
    for bad in ([2, 1], ["1"], [0.5], [float("nan")], 1):
        with pytest.raises(ValueError, match=r"scores\[0\]\.scores"):
            causal_reliability([{**record, "scores": bad}])
    with pytest.raises(ValueError, match="no record has a decided"):  # an empty result before
        causal_reliability([{**record, "scores": [None, None]}])
    assert causal_reliability([{**record, "scores": [True, False]}])["overall"]["d"] == 50


def test_failure_rates():
    assert failure_rate(["All fine", "ERROR: boom", "Traceback (most", "it failed"]) == 0.75
    assert code_failure_rate(["ok", "no_block", "timeout", "ok"]) == 0.5
    with pytest.raises(ValueError, match="responses"):
        failure_rate([])
    assert failure_rate([None, "failed"]) == 0.5
    with pytest.raises(ValueError, match="responses"):  # a str was read as a list of characters
        failure_rate("an error")
    with pytest.raises(ValueError, match=r"responses\[0\]"):
        failure_rate([3])
    assert code_failure_rate(["compile_error", "ok"]) == 0.5  # every status but ok fails
    with pytest.raises(ValueError, match=r"statuses\[1\]"):  # an unknown status counted as success
        code_failure_rate(["ok", "fine"])


def test_ipw_effect_and_its_bad_input():
    """IPW with a saturated propensity (one binary confounder) equals the standardised difference; the
    inputs that gave NaN (or a pandas error) now raise, naming the argument."""
    rng = np.random.default_rng(0)
    z = rng.random(2000) < 0.4
    t = (rng.random(2000) < np.where(z, 0.7, 0.2)).astype(int)
    y = 1.5 * t + 2.0 * z + rng.normal(size=2000)
    df = pd.DataFrame({"t": t, "y": y, "z": z.astype(int)})
    strata = [df[df.z == v] for v in (0, 1)]
    standardised = sum(len(s) / len(df) * (s[s.t == 1].y.mean() - s[s.t == 0].y.mean()) for s in strata)
    assert ipw_effect(df, "t", "y", ["z"]) == pytest.approx(standardised, abs=1e-8)
    assert ipw_effect(df, "t", "y", []) == pytest.approx(df[df.t == 1].y.mean() - df[df.t == 0].y.mean())
    for data, name in (
        (df.assign(t=2 * df.t), "treatment"),
        (df.assign(t=1), "treatment"),
        (df.assign(y=df.y.where(df.index != 3)), "outcome"),
        (df.assign(z=df.z.where(df.index != 3)), "covariates"),
        (df.assign(t=df.z), "positivity"),  # the confounder decides the treatment: separation
    ):
        with pytest.raises(ValueError, match=name):
            ipw_effect(data, "t", "y", ["z"])
    with pytest.raises(ValueError, match="no column 'w'"):
        ipw_effect(df, "t", "y", ["w"])


def test_prompts_share_one_shuffle_and_fill_placeholders():
    it = generate_challenges(0, 1, challenges="simpson_paradox")[0]
    d = direct_prompt(it, np.random.RandomState(5))
    c = code_prompt(it, np.random.RandomState(5))
    shuffled = it.data.sample(frac=1, random_state=np.random.RandomState(5)).reset_index(drop=True)
    assert shuffled.head(100).to_string() in d and shuffled.head(10).to_string() in c
    assert "{TREATMENT}" in d and "{TREATMENT}" not in direct_prompt(it, 5, fill_placeholders=True)
    assert f"challenges/simpson_paradox/{it.dataset}.csv" in c
    assert results_prompt(it, "x=1", "out").endswith("Code:\nx=1\n\nResults:\nout\n")
    with pytest.raises(ValueError, match="rng"):
        direct_prompt(it, "seed")
    msgs = judge_messages(it.rubric["criteria"], "answer")
    assert [m["role"] for m in msgs] == ["system", "user"] and "answer" in msgs[1]["content"]
    with pytest.raises(ValueError, match="criteria"):
        judge_messages([], "x")


def test_rubric_judge_reports_undecidable():
    it = generate_challenges(0, 1, challenges="simpson_paradox")[0]
    v = RubricJudge().judge([(it.rubric, "Simpson's paradox: stratified rates")])[0]
    assert v.scores[:2] == [1, 1] and len(v.scores) == len(it.rubric["criteria"])


def _write_challenge(root: Path, rubric=None, csv=True, questions=None):
    ch = root / "simpson_paradox"
    ch.mkdir(parents=True)
    qs = questions or [{"difficulty": d, "prompt": f"Q {d} {{X}}"} for d in DIFFICULTIES]
    (ch / "questions.json").write_text(json.dumps(qs))
    (ch / "rubric.json").write_text(json.dumps(rubric or {"criteria": [{"id": "A", "desc": "{X}"}]}))
    (ch / "answer_key.json").write_text(json.dumps([{"dataset": "d.csv", "X": 4}]))
    if csv:
        (ch / "d.csv").write_text("a,b\n1,2\n")
    return root


def test_load_challenges_layout(tmp_path):
    items = load_challenges(_write_challenge(tmp_path / "challenges").parent)
    assert len(items) == 5 and items[0].rubric["criteria"][0]["desc"] == "4"
    assert items[0].question == "Q very_easy {X}" and items[0].data.shape == (1, 2)
    assert items[0].key == "simpson_paradox/d/very_easy"


def test_load_challenges_bad_input(tmp_path):
    root = _write_challenge(tmp_path / "a")
    with pytest.raises(ValueError, match="challenges"):
        load_challenges(root, challenges=["nope"])
    with pytest.raises(ValueError, match="difficulties"):
        load_challenges(root, difficulties=["trivial"])
    with pytest.raises(ValueError, match="rubric.json"):
        load_challenges(_write_challenge(tmp_path / "b", rubric={"criteria": [{"desc": "no id"}]}))
    with pytest.raises(ValueError, match="no CSV"):
        load_challenges(_write_challenge(tmp_path / "c", csv=False))
    with pytest.raises(ValueError, match="questions.json"):
        load_challenges(_write_challenge(tmp_path / "d", questions=[{"difficulty": "x"}]))
    with pytest.raises(ValueError, match="path"):
        load_challenges(tmp_path / "missing")
    with pytest.raises(ValueError, match="datasets_per_challenge"):
        load_challenges(root, datasets_per_challenge=0)
    (tmp_path / "a" / "simpson_paradox" / "rubric.json").write_text("{bad json")
    with pytest.raises(ValueError, match="rubric.json"):
        load_challenges(root)


@needs_shared
def test_authors_items_load_and_data_checks():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        items = load_challenges(SHARED)
    assert len(items) == 375 and {i.challenge for i in items} == set(CHALLENGES)
    assert any("dag_structure_markequi_sem" in str(x.message) for x in w)  # dataset without a key
    rows = check_answer_keys(items)
    by = {(r["dataset"], r["quantity"], r["method"]): r for r in rows}
    simpson = [r for r in rows if r["challenge"] == "simpson_paradox"]
    assert len(simpson) == 5 * 9 and all(r["match"] for r in simpson)
    r = by[("patient_treatment_data", "TRUE_CAUSAL_EFFECT", "unadjusted")]
    assert r["key"] == 0.518 and abs(r["recomputed"] - 0.518) < 1e-3
    assert all(r["match"] for r in rows if r["method"] == "unadjusted")
    assert not by[("patient_treatment_data", "TRUE_CAUSAL_EFFECT", "IPW")]["match"]  # IPW gives 0.441
