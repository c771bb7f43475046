"""The headline experiment end to end on a tiny random model (3 questions per level)."""

from __future__ import annotations

import json

import pytest


def test_headline_runs_on_tiny_model(tmp_path, monkeypatch):
    pytest.importorskip("transformers")
    pytest.importorskip("thefuzz")
    from iclr26.claims import Result
    from iclr26.cli import main
    from iclr26.models import tiny_random_model

    monkeypatch.setenv("ICLR26_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("ICLR26_NO_PROGRESS", "1")
    monkeypatch.setenv("ICLR26_FORCE", "1")  # the entry is partial
    tiny_random_model(seed=4, save_to=tmp_path / "tiny")
    out = tmp_path / "results"
    argv = ["run", "anessuite", "--model", f"hf:{tmp_path / 'tiny'}", "--limit", "3", "--batch-size", "9"]
    assert main([*argv, "--out", str(out)]) == 0
    stored = Result.from_dict(json.loads((out / "anessuite" / "result.json").read_text()))
    rows = stored.tables["anessuite_by_level"]
    assert [r["level"] for r in rows] == ["System 1", "System 1.x", "System 2"]
    assert all(r["n"] == 3 for r in rows)
    assert all(c.interval is not None for c in stored.claims) and len(stored.claims) == 3
    authors = json.loads((out / "anessuite" / "authors_result.json").read_text())
    assert len(authors["model_response"]) == 9 and set(authors["model_output"]) <= set("ABCD")
    assert stored.metrics["model"]["identity"] in stored.claims[0].scale
