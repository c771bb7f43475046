"""The headline experiment's recovery part, and the claim for absent data."""

import pytest

from iclr26.claims import Verdict
from iclr26.m3_irt import experiment
from iclr26.runtime import RunContext


def test_experiment_without_shared_data(tmp_path, monkeypatch):
    monkeypatch.setattr(experiment, "shared_data_dir", lambda: None)
    ctx = RunContext(slug="m3-irt", seed=0, out_dir=tmp_path, show_progress=False)
    with pytest.warns(UserWarning):  # constant simulated columns are reported
        result = experiment.run(ctx)
    rec, missing = result.claims
    assert rec.interval is not None and rec.interval[0] <= rec.measured <= rec.interval[1]
    assert rec.verdict == Verdict.HOLDS
    assert missing.verdict == Verdict.NOT_MEASURABLE
