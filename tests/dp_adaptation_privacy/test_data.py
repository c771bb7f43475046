import json

import pytest

import iclr26.dp_adaptation_privacy as dpa


def test_load_jsonl_and_text(tmp_path):
    j = tmp_path / "d.jsonl"
    j.write_text(json.dumps({"text": "one two"}) + "\n\n" + json.dumps({"text": "x", "id": 2}) + "\n")
    assert dpa.load_texts(j) == ["one two", "x"]
    assert dpa.load_texts(j, min_chars=2) == ["one two"]
    t = tmp_path / "d.txt"
    t.write_text("para one\nstill one\n\npara two\n")
    assert dpa.load_texts(t) == ["para one\nstill one", "para two"]
    assert dpa.load_texts(t, split="line") == ["para one", "still one", "para two"]


def test_load_texts_bad_input(tmp_path):
    with pytest.raises(ValueError, match="path"):
        dpa.load_texts(tmp_path / "missing.txt")
    j = tmp_path / "d.jsonl"
    j.write_text(json.dumps({"body": "a"}) + "\n")
    with pytest.raises(ValueError, match="field"):
        dpa.load_texts(j)
    t = tmp_path / "e.txt"
    t.write_text("\n\n")
    with pytest.raises(ValueError, match="path"):
        dpa.load_texts(t)
    t.write_text("ok")
    with pytest.raises(ValueError, match="split"):
        dpa.load_texts(t, split="word")
    with pytest.raises(ValueError, match="min_chars"):
        dpa.load_texts(t, min_chars=0)
