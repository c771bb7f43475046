import math

import numpy as np
import pytest

import iclr26.dp_adaptation_privacy as dpa
from iclr26.dp_adaptation_privacy import _pretrain, experiment


def test_pretraining_lowers_the_loss():
    texts = [f"def f_{i}(x):\n    return x * {i} + {i % 7}\n" for i in range(40)]
    tok, model, losses = _pretrain.pretrain(
        texts,
        vocab_size=300,
        hidden_size=32,
        layers=1,
        steps=15,
        batch_size=8,
        max_length=24,
        lr=2e-2,
        seed=0,
    )
    assert len(tok) <= 300 and losses[-1] < losses[0] - 1
    assert not model.training


def test_jobs_split_candidates_population_and_canaries(tmp_path):
    pytest.importorskip("faker")
    cfg = dict(experiment.CONFIGS["small"], n_members=8, n_population=6)
    data = dpa.default_data(100, 22, seed=0)
    jobs, splits = experiment._jobs(data, cfg, tmp_path, seed=0)
    assert len(jobs) == 3 * (1 + len(dpa.METHODS))
    secrets = []
    for job in jobs:
        split = splits[job["key"]["dist"]]
        assert not set(job["candidates"]) & set(job["population"])
        if job["kind"] == "adapt":
            members = [c for c, m in zip(job["candidates"], split["members"]) if m]
            assert job["target_texts"][: len(members)] == members or set(members) <= set(job["target_texts"])
            assert len(job["target_texts"]) == 8 + cfg["canaries"]
            assert [len(s) for s in job["shadow_texts"]] == [8] * cfg["shadows"]
            secrets += [c.secret for c in job["canaries"]]
    assert len(set(secrets)) == len(secrets)  # fresh canaries per cell


def test_bootstrap_within_groups_brackets_the_value():
    rng = np.random.default_rng(0)
    values = {"a": rng.normal(1, 1, 50), "b": rng.normal(0, 1, 60)}
    est = experiment._bootstrap(
        lambda idx: float(values["a"][idx["a"]].mean() - values["b"][idx["b"]].mean()),
        {"a": 50, "b": 60},
        0,
        "u",
    )
    assert est.lo < est.value < est.hi and est.lo > 0.3 and est.n == 110
    assert math.isclose(est.value, values["a"].mean() - values["b"].mean())
