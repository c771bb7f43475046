"""The embedded word tasks: built from package data (babel, vaderSentiment), Todd et al.'s lists if given."""

import json
from pathlib import Path

import pytest

from iclr26.prefixmemory_tuning import WordTask, entity_type_task, language_id_task, word_sentiment_task

pytest.importorskip("babel")
TODD = Path(__file__).resolve().parents[2].parent / "shared/data/concept-vectors"
TODD = next(
    (p for p in (TODD, Path("/work/shared/data/concept-vectors")) if (p / "country-capital.json").exists()),
    None,
)


def _disjoint(task):
    words = [w for ws in task.pools.values() for w in ws]
    return len(words) == len(set(words))


def test_entity_type_from_babel_alone():
    task = entity_type_task(todd_dir=None)
    assert task.labels == ("country", "city", "language", "currency")
    assert "Germany" in task.pools["country"] and "Amsterdam" in task.pools["city"]
    assert "Swahili" in task.pools["language"] and "Euro" in task.pools["currency"]
    assert all(len(ws) > 100 for ws in task.pools.values()) and _disjoint(task)
    assert task.prompt("Euro") == "Word: Euro\nType:" and task.completion("city") == " city"


def test_entity_type_adds_a_todd_list_and_refuses_a_folder_without_it(tmp_path):
    (tmp_path / "country-capital.json").write_text(
        json.dumps([{"input": "Freedonia", "output": "Fredville"}])
    )
    task = entity_type_task(todd_dir=tmp_path)
    assert "Freedonia" in task.pools["country"] and "Fredville" in task.pools["city"]
    assert "Todd" in task.source and "Todd" not in entity_type_task(todd_dir=None).source
    with pytest.raises(FileNotFoundError, match="country-capital"):
        entity_type_task(todd_dir=tmp_path / "absent")


@pytest.mark.skipif(TODD is None, reason="Todd et al.'s lists (shared/data/concept-vectors) absent")
def test_entity_type_with_the_shared_todd_lists():
    task = entity_type_task(todd_dir=TODD)
    rows = json.loads((TODD / "country-capital.json").read_text(encoding="utf-8"))
    babel_only = entity_type_task(todd_dir=None)
    assert len(task.pools["city"]) > len(babel_only.pools["city"]) and _disjoint(task)
    assert sum(r["output"] in task.pools["city"] for r in rows) > len(rows) / 2


def test_language_identification_from_cldr_names():
    task = language_id_task()
    assert task.labels == ("English", "French", "German", "Spanish")
    assert "Allemagne" in task.pools["French"] and "Deutschland" in task.pools["German"]
    assert "Alemania" in task.pools["Spanish"] and "Germany" in task.pools["English"]
    assert "Canada" not in {w for ws in task.pools.values() for w in ws}  # the same in several languages
    assert all(w.isalpha() and len(w) >= 4 for ws in task.pools.values() for w in ws) and _disjoint(task)


def test_word_sentiment_from_the_vader_lexicon():
    pytest.importorskip("vaderSentiment")
    task = word_sentiment_task()
    assert task.labels == ("positive", "negative")
    assert "good" in task.pools["positive"] and "terrible" in task.pools["negative"]
    loose = word_sentiment_task(margin=0.5)
    assert len(loose.pools["positive"]) > len(task.pools["positive"]) and _disjoint(loose)
    for margin in (0, 4, "1"):
        with pytest.raises(ValueError, match="margin"):
            word_sentiment_task(margin=margin)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"pools": {"a": ["x"]}}, "at least two labels"),
        ({"pools": {}}, "at least two labels"),
        ({"pools": ["x", "y"]}, "at least two labels"),
        ({"pools": {"a": ["x"], "b": []}}, r"pools\['b'\] must be a non-empty"),
        ({"pools": {"a": ["x"], "b": "y"}}, r"pools\['b'\] must be a non-empty"),
        ({"pools": {"a": ["x"], "b": [""]}}, "non-empty strings"),
        ({"pools": {"a": ["x"], "": ["y"]}}, "labels must be non-empty"),
        ({"pools": {"a": ["x"], "b": ["x"]}}, "listed under 'a' and 'b'"),
        ({"field": " "}, "field must be"),
        ({"name": ""}, "name must be"),
    ],
)
def test_word_task_refuses_bad_input(kwargs, match):
    args = {"name": "t", "field": "Label", "pools": {"a": ["x"], "b": ["y"]}, **kwargs}
    with pytest.raises(ValueError, match=match):
        WordTask(**args)


def test_word_task_sorts_and_dedupes():
    task = WordTask("t", "Label", {"b": ["z", "y", "z"], "a": ["x"]})
    assert task.labels == ("b", "a") and task.pools["b"] == ("y", "z")
