import base64
import json
import pickle
import zlib
from datetime import datetime

import numpy as np
import pytest

from iclr26.multi_lcb import (
    LANGUAGES,
    ORDER,
    Problem,
    extract_code,
    grade_stdio,
    load_lcb,
    messages,
    multi_lcb_metrics,
    pass_at_k,
    prompt,
    system_message,
)


def _problem(**kw):
    base = dict(
        question_id="p1",
        question_title="t",
        question_content="Print the sum of two integers.",
        platform="atcoder",
        difficulty="easy",
        contest_date=datetime(2024, 1, 1),
        tests=(("1 2\n", "3\n"),),
    )
    base.update(kw)
    return Problem(**base)


def test_twelve_languages():
    assert len(LANGUAGES) == 12 == len(ORDER)
    assert "c" not in LANGUAGES
    assert LANGUAGES["cpp"].source_file == "main.cpp"


def test_prompt_substitutes_language():
    p = prompt(_problem(), "c++")
    assert p.startswith(
        "### Question:\nPrint the sum of two integers.\n\n### Format: Read the inputs from stdin"
    )
    assert "when the C++ program runs" in p
    assert "```cpp\n// YOUR CODE HERE\n```" in p
    assert p.endswith("### Answer: (use the provided format with backticks)\n\n")
    assert "Python" not in p
    py = prompt(_problem(), "python")
    assert "```python\n# YOUR CODE HERE\n```" in py and "when the Python program runs" in py
    assert system_message("ruby").startswith("You are an expert Ruby programmer.")
    msgs = messages(_problem(), "kotlin")
    assert [m["role"] for m in msgs] == ["system", "user"] and "Kotlin" in msgs[1]["content"]


def test_unknown_language_lists_the_twelve():
    with pytest.raises(ValueError, match="kotlin") as e:
        prompt(_problem(), "cobol")
    assert all(lang in str(e.value) for lang in ORDER)
    with pytest.raises(ValueError, match="language"):
        prompt(_problem(), "c")  # a sandbox language, not a Multi-LCB one


def test_extract_code_lcb_rule_and_language_fence():
    text = "Here:\n```cpp\nint main(){}\n```\nExample:\n```\n1 2\n```\n"
    assert extract_code(text) == "1 2"  # LCB: the last two fence lines
    assert extract_code(text, "cpp") == "int main(){}"  # the block tagged with the language
    assert extract_code(text.replace("```cpp", "```c++"), "cpp") == "int main(){}"
    assert extract_code(text, "java") == "1 2"  # no java block: LCB's rule
    assert extract_code("no fences at all") == ""
    assert extract_code("```python\nprint(1)") == ""  # unclosed
    with pytest.raises(ValueError, match="text"):
        extract_code(None)


def test_grade_stdio_rules():
    assert grade_stdio("3\n", "3") == (True, "")
    assert grade_stdio("  3  \n\n", "3\n")[0]
    assert grade_stdio("1.0 2", "1 2.00")[0]  # Decimal equality
    assert not grade_stdio("50000000000000000", "50000000000000001")[0]
    assert grade_stdio("1\n2", "1")[1] == "Wrong answer: mismatched output length"
    ok, msg = grade_stdio("yes", "no")
    assert not ok and msg.startswith("Wrong answer at output_line_idx=0")
    assert not grade_stdio("1 2", "1 2 3")[0]
    assert not grade_stdio("sNaN", "1")[0]  # LCB's Decimal comparison raises here
    with pytest.raises(ValueError, match="prediction"):
        grade_stdio(3, "3")


def test_pass_at_k_values_and_input():
    assert pass_at_k(10, 0, 1) == 0.0
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(10, 10, 5) == 1.0
    assert pass_at_k(5, 1, 2) == pytest.approx(1 - (4 * 3) / (5 * 4))
    np.testing.assert_allclose(pass_at_k([10, 4], [5, 1], 1), [0.5, 0.25])
    for bad in [(3, 4, 1), (0, 0, 1), (3, -1, 1), (3, 1, 0), (2, 1, 5)]:
        with pytest.raises(ValueError):
            pass_at_k(*bad)
    with pytest.raises(ValueError, match="same length"):
        pass_at_k([1, 2], [1], 1)


def test_metrics_groups_and_not_available():
    recs = [
        dict(
            question_id="a",
            language="python",
            passed=[True, False],
            difficulty="easy",
            platform="atcoder",
            contest_date="2024-01-05",
        ),
        dict(
            question_id="b",
            language="python",
            passed=[True, True],
            difficulty="hard",
            platform="leetcode",
            contest_date="2024-06-01",
        ),
        dict(
            question_id="a",
            language="scala",
            passed=[],
            difficulty="easy",
            platform="atcoder",
            contest_date="2024-01-05",
            available=False,
        ),
    ]
    rows = multi_lcb_metrics(recs, windows={"early": ("2024-01-01", "2024-03-01"), "all": (None, None)})
    get = {(r["language"], r["difficulty"], r["platform"], r["window"]): r["pass@1"] for r in rows}
    assert get[("python", "all", "all", "all")] == pytest.approx(0.75)
    assert get[("python", "all", "all", "early")] == pytest.approx(0.5)
    assert get[("python", "hard", "leetcode", "all")] == 1.0
    assert ("python", "hard", "all", "early") not in get
    assert get[("scala", "all", "all", "all")] == "not available"
    with pytest.raises(ValueError, match="lacks"):
        multi_lcb_metrics([{"question_id": "a"}])


def test_multi_lcb_metrics_refuses_what_it_read_wrongly():
    """Each of these gave a number (or a TypeError) before: a str of passes read per character,
    bool('False') counted as a pass, a problem counted twice, an inverted window matching nothing."""
    rec = dict(question_id="a", language="python", passed=[True, False], difficulty="easy")
    rec.update(platform="atcoder", contest_date="2024-01-05")
    for bad, match in (
        ({"passed": "TF"}, r"results\[0\]\.passed"),
        ({"passed": ["False", "False"]}, r"results\[0\]\.passed"),
        ({"passed": []}, "no sample"),
        ({"contest_date": "last week"}, "contest_date"),
        ({"contest_date": 20240105}, "contest_date"),
    ):
        with pytest.raises(ValueError, match=match):
            multi_lcb_metrics([{**rec, **bad}])
    with pytest.raises(ValueError, match="appears twice"):
        multi_lcb_metrics([rec, {**rec, "passed": [True, True]}])
    with pytest.raises(ValueError, match="start is after the end"):
        multi_lcb_metrics([rec], windows={"w": ("2025-01-01", "2024-01-01")})
    with pytest.raises(ValueError, match="at least one record"):
        multi_lcb_metrics([])
    # an aware date is compared in UTC with the naive windows (a TypeError before)
    late = {**rec, "contest_date": "2024-01-01T01:00:00+02:00"}  # 2023-12-31 23:00 UTC
    rows = multi_lcb_metrics([late], windows={"2024": ("2024-01-01", None), "2023": (None, "2024-01-01")})
    assert {r["window"] for r in rows} == {"2023"}
    assert multi_lcb_metrics([{**rec, "passed": [1, 0, np.True_]}])[0]["pass@1"] == pytest.approx(2 / 3)


def _record(qid, date, public, private, testtype="stdin", meta="{}"):
    return {
        "question_title": qid,
        "question_content": "c",
        "platform": "leetcode",
        "question_id": qid,
        "contest_id": "x",
        "contest_date": date,
        "starter_code": "",
        "difficulty": "medium",
        "public_test_cases": json.dumps([dict(input=i, output=o, testtype=testtype) for i, o in public]),
        "private_test_cases": private,
        "metadata": meta,
    }


def test_load_lcb_formats_and_window(tmp_path):
    private = [dict(input="5\n", output="6\n", testtype="stdin")]
    packed = base64.b64encode(zlib.compress(pickle.dumps(json.dumps(private)))).decode()
    recs = [
        _record("q1", "2023-05-01T00:00:00", [("1\n", "2\n")], json.dumps(private)),
        _record("q2", "2024-02-01T00:00:00", [("1\n", "2\n")], packed),
    ]
    path = tmp_path / "lite.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    probs = load_lcb(path)
    assert [p.question_id for p in probs] == ["q1", "q2"]
    assert probs[1].tests == (("1\n", "2\n"), ("5\n", "6\n")) and probs[1].n_public == 1
    assert [p.question_id for p in load_lcb(path, start_date="2024-01-01")] == ["q2"]
    assert [p.question_id for p in load_lcb(path, end_date="2023-12-31")] == ["q1"]
    with pytest.raises(ValueError, match="start_date"):
        load_lcb(path, start_date="01/01/2024")
    with pytest.raises(ValueError, match="path"):
        load_lcb(tmp_path / "missing.jsonl")
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    with pytest.raises(ValueError, match="line 1"):
        load_lcb(tmp_path / "bad.jsonl")
