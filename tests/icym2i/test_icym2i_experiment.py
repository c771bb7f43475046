"""The headline experiment runs end to end on a tiny configuration and returns computed claims."""

from __future__ import annotations

import numpy as np

from iclr26.claims import Verdict
from iclr26.icym2i import experiment
from iclr26.runtime import RunContext


def test_experiment_tiny(tmp_path, monkeypatch):
    tiny = {"n_gates": 3000, "n_blobs": 3000, "n_bootstrap": 5, "blob_settings": [(0.0, 0.0)]}
    monkeypatch.setattr(experiment, "SMALL", tiny)
    ctx = RunContext(slug="icym2i", seed=0, out_dir=tmp_path, show_progress=False)
    result = experiment.run(ctx)
    assert len(result.claims) == 8
    assert all(c.verdict != Verdict.NOT_MEASURABLE for c in result.claims)
    assert result.claims[0].verdict == Verdict.HOLDS  # exact gate PID
    rows = result.tables["estimates"]
    assert {r["mechanism"] for r in rows} == {"MCAR", "MAR", "MNAR"}
    assert len([r for r in rows if r["data"] == "gates"]) == 3 * 3 * 5
    # Under MAR the naive XOR synergy is visibly biased and IPW is close to the truth.
    xor = {r["quantity"]: r for r in rows if r["setting"] == "XOR" and r["mechanism"] == "MAR"}
    assert abs(xor["synergy"]["naive"] - xor["synergy"]["truth"]) > 0.15
    assert abs(xor["synergy"]["ipw"] - xor["synergy"]["truth"]) < 0.05
    assert (tmp_path / "estimate_vs_truth.png").exists()
    assert np.isfinite(result.metrics["ipw_coverage_MAR"])
    # every measured claim carries an interval, or is exact; the coverage claim tests calibration
    for c in result.claims:
        assert c.exact or c.interval is not None, c.statement
    cov = [c for c in result.claims if "calibrated" in c.statement][0]
    assert cov.op == "within" and cov.reference == 0.95
    assert any(c.post_hoc for c in result.claims)
