"""The headline experiment's plumbing on the tiny random model with a small word list."""

import json

import pytest

from iclr26.claims import Verdict
from iclr26.prefixmemory_tuning import experiment
from iclr26.prefixmemory_tuning._tasks import language_pools
from iclr26.runtime import RunContext

pytest.importorskip("peft")

WORDS = {
    "french": [("house", "maison"), ("water", "eau"), ("dog", "chien")],
    "german": [("house", "Haus"), ("water", "Wasser"), ("dog", "Hund")],
    "spanish": [("house", "casa"), ("water", "agua"), ("dog", "perro")],
}


@pytest.fixture
def word_lists(tmp_path, monkeypatch):
    folder = tmp_path / "concept-vectors"
    folder.mkdir()
    for lang, pairs in WORDS.items():
        rows = [
            {"input": a + suffix, "output": b + suffix} for a, b in pairs for suffix in ("", "s", "x", "y")
        ]
        (folder / f"english-{lang}.json").write_text(json.dumps(rows))
    monkeypatch.setenv("ICLR26_SHARED_DATA", str(tmp_path))
    return folder


def test_language_pools_drop_short_and_shared_words(word_lists):
    pools = language_pools()
    assert "eau" not in pools["French"] and "eaus" in pools["French"]  # 3 characters dropped
    assert "casa" in pools["Spanish"] and "house" in pools["English"]
    assert not set(pools["English"]) & set(pools["German"])
    with pytest.raises(FileNotFoundError, match="english-french"):
        language_pools(word_lists.parent)


def test_experiment_runs_on_the_tiny_model(word_lists, tmp_path, monkeypatch):
    monkeypatch.setattr(experiment, "STEPS", 2)
    monkeypatch.setattr(experiment, "LENGTHS", {True: (16, 24, 32), False: (16, 24, 32)})
    monkeypatch.setattr(experiment, "N_GROUPS", 2)
    monkeypatch.setattr(experiment, "N_TEST_PER_CLASS", {True: 3, False: 3})
    ctx = RunContext(
        slug="prefixmemory-tuning", out_dir=tmp_path / "out", model="tiny-random", show_progress=False
    )
    result = experiment.run(ctx)
    measured = [c for c in result.claims if c.verdict != Verdict.NOT_MEASURABLE]
    assert len(measured) == 6 and all(c.interval is not None for c in measured)
    assert {row["method"] for row in result.tables["accuracy"]} == {"base", "pmt", "prefix", "lora"}
    assert result.metrics["learning_rates"] == experiment.LEARNING_RATES
    assert set(result.metrics["prefix_attention_mass_by_length"]) == {"16", "24", "32"}
