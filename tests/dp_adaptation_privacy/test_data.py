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


@pytest.fixture(scope="module")
def default():
    pytest.importorskip("faker")
    return dpa.default_data(300, 40, seed=3)


def test_default_data_construction(default):
    from iclr26.dp_adaptation_privacy import _corpora

    assert len(default.pretrain) == 300 and len(set(default.pretrain)) == 300
    for name in ("overlap", "iid", "ood", "ood_german"):
        assert len(default.split(name)) == 40
    assert set(default.overlap) <= set(default.pretrain)  # overlap: seen in pretraining
    assert set(default.iid) <= set(_corpora.stdlib_chunks(240, True))  # IID: held-out files ...
    assert not set(default.iid) & set(_corpora.stdlib_chunks(240, False))  # ... never seen verbatim
    assert all(t.startswith("Name: ") and "\nEmail: " in t for t in default.ood)
    assert all(len(t) >= 240 for t in default.pretrain + default.iid)
    again = dpa.default_data(300, 40, seed=3)
    assert again.iid == default.iid and again.ood_german == default.ood_german  # seeded
    assert dpa.default_data(300, 40, seed=4).ood != default.ood


def test_chunks_are_whole_lines():
    from iclr26.dp_adaptation_privacy._corpora import chunk_lines

    text = "\n".join(f"line {i}" for i in range(10)) + "\n" + "x" * 100 + "\nend"
    chunks = chunk_lines(text, 20)
    assert chunks[0] == "line 0\nline 1\nline 2"  # 21 characters with newlines
    assert all("x" * 100 not in c for c in chunks)  # an over-long line is dropped


@pytest.mark.parametrize(
    "kw,name",
    [
        ({"n_pretrain": 1}, "n_pretrain"),
        ({"n_split": 500, "n_pretrain": 300}, "n_split"),
        ({"chars": 3}, "chars"),
    ],
)
def test_default_data_bad_input(kw, name):
    with pytest.raises(ValueError, match=name):
        dpa.default_data(**kw)


def test_default_data_split_name(default):
    with pytest.raises(ValueError, match="name"):
        default.split("pile")
