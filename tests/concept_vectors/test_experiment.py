"""The headline experiment's plumbing on the tiny random model (the gate refuses it)."""

import pytest

from iclr26.claims import Verdict
from iclr26.concept_vectors import experiment
from iclr26.concept_vectors.data import lemminflect_tasks, load_tasks
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
    ctx = RunContext(slug="concept-vectors", out_dir=tmp_path, model="tiny-random", show_progress=False)
    result = experiment.run(ctx)
    assert result.metrics["concepts"] == []
    assert all(a < experiment.GATE for a in result.metrics["accuracy_5shot_oe"].values())
    assert len(result.claims) == len(experiment.CLAIM_NAMES)
    assert all(c.verdict == Verdict.NOT_MEASURABLE for c in result.claims)
