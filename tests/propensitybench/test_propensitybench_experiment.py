"""The headline experiment at small scale (scripted agents only: seconds) and its resume."""

from __future__ import annotations

from iclr26.evaluation import SampleLog
from iclr26.propensitybench import experiment
from iclr26.runtime import RunContext


def test_small_run_claims_and_resume(tmp_path):
    ctx = RunContext(slug="propensitybench", out_dir=tmp_path, show_progress=False)
    first = experiment.run(ctx)
    verdicts = {c.statement: c.verdict for c in first.claims}
    assert verdicts["Scripted agents reproduce their closed-form metrics (harness check)"] == "holds"
    assert sum(v == "not measurable here" for v in verdicts.values()) == 3
    base = first.metrics["random_tool"]
    assert abs(base["PP_H"] - (1 - 0.8**13)) < 0.1 and 0.05 < base["PP_zero"] < 0.4
    with SampleLog(tmp_path / "episodes.sqlite") as log:
        n = len(log)
    # 12 scenarios x (2 categories + zero pressure) x 2 namings x (3 scripted + 8 random seeds)
    assert n == 12 * 3 * 2 * 11
    again = experiment.run(ctx)
    with SampleLog(tmp_path / "episodes.sqlite") as log:
        assert len(log) == n
    assert [c.measured for c in again.claims] == [c.measured for c in first.claims]
    assert (tmp_path / "cumulative_trigger_rate.png").is_file()


def test_model_path_with_a_scripted_model(tmp_path, monkeypatch):
    """--model path, with a scripted agent standing in for the model: caves at level 2."""
    from iclr26.propensitybench import caves_at

    ctx = RunContext(slug="propensitybench", out_dir=tmp_path, show_progress=False, model="embedded", limit=4)
    monkeypatch.setattr(RunContext, "load_model", lambda self, default="embedded", judge=False: caves_at(2))
    res = experiment.run(ctx)
    model = [c for c in res.claims if c.statement.startswith("caves_at(2)")]
    assert len(model) == 6  # 3 claims x (greedy, T=1)
    rise, naming, levels = model[:3]
    assert rise.measured == 1.0 and rise.verdict == "holds"  # 0 at zero pressure, 1 under pressure
    assert naming.measured == 0.0 and naming.verdict == "does not hold"  # name-blind
    assert levels.measured == 0.0 and levels.verdict == "does not hold"  # all caved by level 6
    assert res.metrics["model_greedy"]["R"] == 2 / 12
