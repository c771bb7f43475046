"""Loading, validation and the authors' prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iclr26.anessuite import anesbench_messages, load_anesbench
from iclr26.anessuite._records import SYSTEM_EN

HERE = Path(__file__).parent
PROMPTS = json.loads((HERE / "data" / "authors_prompts.json").read_text(encoding="utf-8"))


def _rec(**kw):
    r = {
        "id": 7,
        "choice_num": 3,
        "answer": "B",
        "level": 2,
        "en_question": "Q?",
        "en_A": "a",
        "en_B": "b",
        "en_C": "c",
    }
    r.update(kw)
    return r


@pytest.mark.parametrize("item", PROMPTS, ids=lambda it: f"n{it['record']['choice_num']}")
def test_prompt_equals_authors(item):
    assert anesbench_messages(item["record"]) == item["messages"]


def test_prompt_choice_list_and_zh():
    zh = {**_rec(), "cn_question": "问题？", "cn_A": "甲", "cn_B": "乙", "cn_C": "丙"}
    m = anesbench_messages(zh, "zh")
    assert "A、B和C" in m[1]["content"] and m[1]["content"].endswith("问题？\nA. 甲\nB. 乙\nC. 丙\n")
    assert anesbench_messages(_rec())[0]["content"] == SYSTEM_EN
    assert "from A, B and C as the final" in anesbench_messages(_rec())[1]["content"]


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".parquet"])
def test_load_formats(tmp_path, suffix):
    rows = [_rec(id=i) for i in range(3)] + [
        {"id": 9, "choice_num": 2, "answer": "A", "level": "3", "zh_question": "x"}
    ]
    p = tmp_path / f"b{suffix}"
    if suffix == ".json":
        p.write_text(json.dumps(rows))
    elif suffix == ".jsonl":
        p.write_text("\n".join(json.dumps(r) for r in rows))
    else:
        pd = pytest.importorskip("pandas")
        pytest.importorskip("pyarrow")
        pd.DataFrame(rows[:3]).to_parquet(p)
    recs = load_anesbench(p)
    assert [r["id"] for r in recs] == ["0", "1", "2"] and recs[0]["level"] == 2


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"choice_num": 1}, "choice_num"),
        ({"choice_num": 27}, "choice_num"),
        ({"answer": "D"}, "answer"),
        ({"level": 4}, "level"),
        ({"level": "System 3"}, "level"),
        ({"en_C": None}, "en_C"),
    ],
)
def test_bad_records_name_the_record(tmp_path, bad, match):
    p = tmp_path / "b.jsonl"
    p.write_text(json.dumps(_rec()) + "\n" + json.dumps(_rec(id="x9", **bad)))
    with pytest.raises(ValueError, match=match) as e:
        load_anesbench(p)
    assert "x9" in str(e.value) and "record 1" in str(e.value)


def test_bad_paths_and_language(tmp_path):
    with pytest.raises(ValueError, match="path"):
        load_anesbench(tmp_path / "missing.json")
    (tmp_path / "b.csv").write_text("x")
    with pytest.raises(ValueError, match="path"):
        load_anesbench(tmp_path / "b.csv")
    (tmp_path / "b.json").write_text(json.dumps([_rec()]))
    with pytest.raises(ValueError, match="language"):
        load_anesbench(tmp_path / "b.json", language="fr")
    with pytest.raises(ValueError, match="zh_question"):
        load_anesbench(tmp_path / "b.json", language="zh")
    with pytest.raises(ValueError, match="language"):
        anesbench_messages(_rec(), "de")
