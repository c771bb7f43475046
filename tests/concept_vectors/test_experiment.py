"""The headline experiment's plumbing on the tiny random model (the gate refuses it)."""

import pytest

from iclr26.claims import Verdict
from iclr26.concept_vectors import ICLTask, experiment
from iclr26.concept_vectors.data import dictionary_pivot, lemminflect_tasks, load_tasks, shared_data_dir
from iclr26.runtime import RunContext

pytest.importorskip("lemminflect")


def test_lemminflect_tasks_are_ours_and_filtered():
    words = {"walk", "walked", "jump", "jumped", "play", "played", "child", "children", "box", "boxes"}
    tasks = lemminflect_tasks(words.__contains__)
    assert set(tasks["present-past"].pairs) == {("jump", "jumped"), ("play", "played"), ("walk", "walked")}
    assert set(tasks["singular-plural"].pairs) == {("box", "boxes"), ("child", "children")}
    assert ("walk", "Walk") in tasks["capitalize"].pairs


def test_load_tasks_concept_from_name(tmp_path):
    (tmp_path / "antonym_eng.json").write_text(
        '[{"input": "hot", "output": "cold"}, {"input": "up", "output": "down"}]'
    )
    tasks = load_tasks(tmp_path)
    assert tasks["antonym_eng"].concept == "antonym"
    with pytest.raises(ValueError, match="names"):
        load_tasks(tmp_path, ["synonym_eng"])
    with pytest.raises(ValueError, match="folder"):
        load_tasks(tmp_path / "nope")


def test_gate_refuses_a_model_that_cannot_do_the_tasks(tmp_path):
    # Todd et al.'s concepts when the shared folder holds them, else ours
    ctx = RunContext(slug="concept-vectors", out_dir=tmp_path, model="tiny-random", show_progress=False)
    result = experiment.run(ctx)
    assert result.metrics["concepts"] == []
    assert all(a < experiment.GATE for a in result.metrics["accuracy_5shot_oe"].values())
    assert len(result.claims) == len(experiment.CLAIM_NAMES)
    assert all(c.verdict == Verdict.NOT_MEASURABLE for c in result.claims)


def test_gate_on_the_lemminflect_fallback_without_shared_data(tmp_path, monkeypatch):
    monkeypatch.setattr(experiment, "shared_data_dir", lambda: None)
    ctx = RunContext(slug="concept-vectors", out_dir=tmp_path, model="tiny-random", show_progress=False)
    result = experiment.run(ctx)
    assert result.metrics["data"] == "ours (lemminflect)"
    assert list(result.metrics["accuracy_5shot_oe"]) == list(experiment.CONCEPTS)
    assert all(c.verdict == Verdict.NOT_MEASURABLE for c in result.claims)


def test_dictionary_pivot_keeps_pairs_with_both_words_translated():
    task = ICLTask.from_pairs(
        [("walk", "walked"), ("go", "went"), ("run", "ran"), ("walk", "walked"), ("see", "saw")], "past"
    )
    fr = ICLTask.from_pairs(
        [
            ("walk", "marcher"),
            ("walked", "marché"),
            ("walk", "promener"),
            ("go", "aller"),
            ("went", "allé"),
            ("run", "courir"),
            ("see", "voir"),
            ("saw", "voir"),
        ],
        "english-french",
    )
    got = dictionary_pivot(task, fr, min_pairs=2)
    # first translation wins; "run" lacks "ran"; "see"/"saw" both give "voir"; repeats dropped
    assert got.pairs == (("marcher", "marché"), ("aller", "allé"))
    assert got.concept == "past" and got.name == "past_english-french"
    assert dictionary_pivot(task, fr, min_pairs=3) is None
    with pytest.raises(ValueError, match="min_pairs"):
        dictionary_pivot(task, fr, min_pairs=1)
    with pytest.raises(ValueError, match="dictionary"):
        dictionary_pivot(task, [("walk", "marcher")])


def test_shared_data_dir_from_environment(tmp_path, monkeypatch):
    folder = tmp_path / "concept-vectors"
    folder.mkdir()
    (folder / "present-past.json").write_text('[{"input": "walk", "output": "walked"}]')
    monkeypatch.setenv("ICLR26_SHARED_DATA", str(tmp_path))
    assert shared_data_dir() == folder


@pytest.mark.skipif(shared_data_dir() is None, reason="Todd et al.'s datasets (shared/data) absent")
def test_experiment_switches_to_todd_data_and_french_pivot():
    from iclr26.models import tiny_random_model

    source, tasks, dictionary = experiment._tasks(tiny_random_model())
    assert source.startswith("Todd et al.")
    assert list(tasks) == list(experiment.TODD_CONCEPTS)
    assert len(tasks["present-past"]) == 293 and dictionary.name == "english-french"
    past = experiment._formats("present-past", tasks["present-past"], dictionary)["second"]
    assert (past.label, past.fmt) == ("french", "open_ended")
    assert len(past.task) >= experiment.MIN_PIVOT_PAIRS and past.task.concept == "present-past"
    assert ("appliquer", "appliqué") in past.task.pairs
    # 31 French singular-plural pairs (< 40): our arrow template instead; translation keeps arrow
    for concept in ("singular-plural", "english-french"):
        second = experiment._formats(concept, tasks[concept], dictionary)["second"]
        assert (second.label, second.task) == ("arrow", tasks[concept])
