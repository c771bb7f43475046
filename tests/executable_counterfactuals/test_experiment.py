"""The headline experiment runs end to end (tiny random model in place of SmolLM2)."""

from __future__ import annotations

from iclr26.executable_counterfactuals import experiment
from iclr26.runtime import RunContext


def test_experiment_runs_with_tiny_model(tmp_path):
    ctx = RunContext(
        "executable-counterfactuals", out_dir=tmp_path, show_progress=False, model="tiny-random", limit=1
    )
    res = experiment.run(ctx)
    verdicts = {c.statement: c.verdict.value for c in res.claims}
    assert verdicts["Skipping abduction still solves the interventional twin"] == "holds"
    assert (
        verdicts["Full abduction by enumeration scores EM 1.0 on every family (ground truth is exact)"]
        == "holds"
    )
    assert {r["subject"] for r in res.tables["accuracy"]} >= {"skip-abduction", "full-abduction"}
    assert (tmp_path / "accuracy_by_family.png").exists()
