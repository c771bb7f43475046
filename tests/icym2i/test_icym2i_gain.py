"""Plug-in joint tables, PID from (weighted) samples, bootstrap PID and discretisation."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.icym2i import discretize, fit_missingness_model, joint_table, pid_bootstrap, pid_from_samples


def test_joint_table_weighted():
    x1 = np.array([0, 0, 1, 1])
    x2 = np.array([0, 1, 0, 1])
    y = np.array([0, 1, 1, 0])
    p = joint_table(x1, x2, y, [1.0, 1.0, 1.0, 5.0])
    assert p.shape == (2, 2, 2)
    assert p[1, 1, 0] == pytest.approx(5 / 8)
    assert p.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="integers"):
        joint_table([0.5, 1.0], [0, 1], [0, 1])
    with pytest.raises(ValueError, match="length"):
        joint_table([0, 1], [0, 1, 1], [0, 1])


def test_ipw_pid_recovers_xor_synergy_under_mar():
    rng = np.random.default_rng(0)
    n = 20000
    x1 = (rng.random(n) < 0.5).astype(int)
    x2 = (rng.random(n) < 0.5).astype(int)
    y = x1 ^ x2
    from iclr26.icym2i import simulate_missingness

    obs = simulate_missingness("MAR", driver=x1, random_state=rng).observed
    naive = pid_from_samples(x1[obs], x2[obs], y[obs])
    w = fit_missingness_model(x1, obs)
    ipw = pid_from_samples(x1[obs], x2[obs], y[obs], w.observed_weights)
    # With P(x1 = 1 | observed) = 0.8 the naive PID sees 1 - h(0.8) = 0.278 bits unique to X2.
    assert naive.unique2 == pytest.approx(1 - 0.7219, abs=0.03)
    assert naive.synergy < 0.8
    assert ipw.synergy == pytest.approx(1.0, abs=0.01)
    assert ipw.unique2 < 0.01


def test_pid_bootstrap_interval():
    rng = np.random.default_rng(1)
    n = 3000
    x1 = (rng.random(n) < 0.5).astype(int)
    x2 = (rng.random(n) < 0.5).astype(int)
    y = x1 & x2
    out = pid_bootstrap(x1, x2, y, n_bootstrap=30, random_state=0)
    assert set(out) == {"redundancy", "unique1", "unique2", "synergy", "mi"}
    assert out["synergy"].covers(0.5)
    assert out["redundancy"].ci_low <= out["redundancy"].value <= out["redundancy"].ci_high


def test_discretize_methods():
    p = np.linspace(0, 1, 101)
    codes = discretize(p, 4, value_range=(0.0, 1.0))
    assert codes.min() == 0 and codes.max() == 3
    q = discretize(np.random.default_rng(0).normal(size=1000), 5, method="quantile")
    assert np.bincount(q).min() >= 190
    km = discretize(np.random.default_rng(0).normal(size=(300, 3)), 3, method="kmeans")
    assert set(np.unique(km)) == {0, 1, 2}
    with pytest.raises(ValueError, match="1-D"):
        discretize(np.zeros((5, 2)), 2)
    with pytest.raises(ValueError, match="method"):
        discretize(p, 2, method="bogus")
    with pytest.raises(ValueError, match="n_bins"):
        discretize(p, 1)
