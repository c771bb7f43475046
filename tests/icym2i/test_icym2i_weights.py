"""Missingness simulators, missingness models and inverse probability weights; IPW unbiasedness."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

from iclr26.icym2i import (
    ExtremeWeightsWarning,
    effective_sample_size,
    fit_missingness_model,
    ipw_from_propensity,
    simulate_missingness,
    weighted_metric,
)


def test_mcar_mar_mnar_match_the_authors_probabilities():
    rng = np.random.default_rng(0)
    x1 = (rng.random(4000) < 0.5).astype(int)
    x2 = (rng.random(4000) < 0.5).astype(int)
    mcar = simulate_missingness("MCAR", n_samples=4000, random_state=1)
    assert np.allclose(mcar.p_observed, 0.5)
    assert abs(mcar.observed.mean() - 0.5) < 0.03
    mar = simulate_missingness("MAR", driver=x1, random_state=1)
    # The notebook's MAR: P(observed) = 0.2 + 0.6 * x1 (exact for a balanced x1, close otherwise).
    np.testing.assert_allclose(mar.p_observed, 0.2 + 0.6 * x1, atol=0.01)
    assert mar.p_observed.mean() == pytest.approx(0.5, abs=1e-9)
    mnar = simulate_missingness("MNAR", driver=x2, random_state=1)
    np.testing.assert_allclose(mnar.p_observed, 0.2 + 0.6 * x2, atol=0.01)
    assert mnar.mechanism == "MNAR"


def test_simulator_rate_clip_and_determinism():
    z = np.random.default_rng(0).normal(size=(3000, 4))
    a = simulate_missingness("MAR", driver=z, rate=0.3, strength=3.0, random_state=5)
    b = simulate_missingness("MAR", driver=z, rate=0.3, strength=3.0, random_state=5)
    assert np.array_equal(a.observed, b.observed)
    assert a.p_observed.mean() == pytest.approx(0.7, abs=1e-6)
    assert a.p_observed.min() >= 0.05 and a.p_observed.max() <= 0.95


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"mechanism": "MAYBE", "n_samples": 10}, "mechanism"),
        ({"mechanism": "MAR"}, "driver"),
        ({"mechanism": "MCAR"}, "n_samples"),
        ({"mechanism": "MCAR", "n_samples": 10, "rate": 1.0}, "rate"),
        ({"mechanism": "MAR", "driver": [1.0, np.nan]}, "NaN"),
    ],
)
def test_simulator_bad_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        simulate_missingness(**kwargs)


def test_fit_missingness_model_recovers_propensity():
    rng = np.random.default_rng(0)
    x1 = (rng.random(20000) < 0.5).astype(float)
    miss = simulate_missingness("MAR", driver=x1, random_state=rng)
    w = fit_missingness_model(x1, miss.observed)
    np.testing.assert_allclose(w.propensity, miss.p_observed, atol=0.02)
    assert w.observed_weights.mean() == pytest.approx(1.0, abs=0.02)  # stabilised
    assert (w.weights[~miss.observed] == 0).all()
    plain = fit_missingness_model(x1, miss.observed, stabilized=False)
    assert plain.observed_weights.mean() == pytest.approx(1 / miss.observed.mean(), rel=0.02)
    # Any scikit-learn classifier is accepted.
    rf = fit_missingness_model(x1, miss.observed, RandomForestClassifier(n_estimators=10, random_state=0))
    np.testing.assert_allclose(rf.propensity, miss.p_observed, atol=0.03)


def test_extreme_weights_warn_and_clip():
    obs = np.array([True] * 50 + [False] * 50)
    prop = np.full(100, 0.5)
    prop[0] = 1e-4
    with pytest.warns(ExtremeWeightsWarning, match="effective sample size"):
        w = ipw_from_propensity(prop, obs)
    assert w.effective_sample_size < 5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clipped = ipw_from_propensity(prop, obs, clip=0.1, stabilized=False)
    assert clipped.weights.max() == pytest.approx(10.0)
    assert effective_sample_size(np.ones(7)) == pytest.approx(7.0)


@pytest.mark.parametrize(
    "prop, obs, match",
    [
        ([0.0, 0.5], [1, 0], "strictly inside"),
        ([1.0, 0.5], [1, 0], "strictly inside"),
        ([np.nan, 0.5], [1, 0], "NaN"),
        ([0.5, 0.5], [1, 1], "both observed and missing"),
        ([0.5, 0.5], [1, 2], "boolean"),
        ([0.5, 0.5, 0.5], [1, 0], "length"),
    ],
)
def test_ipw_bad_inputs(prop, obs, match):
    with pytest.raises(ValueError, match=match):
        ipw_from_propensity(prop, obs)


def test_weights_must_be_positive():
    with pytest.raises(ValueError, match="strictly positive"):
        effective_sample_size([1.0, 0.0])
    with pytest.raises(ValueError, match="strictly positive"):
        effective_sample_size([1.0, -2.0])


def _mar_population(rng: np.random.Generator, n: int):
    x1 = rng.normal(size=n)
    x2 = rng.normal(size=n)
    logit = 1.5 * x1 + 1.0 * x2
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    score = 1 / (1 + np.exp(-(1.5 * x1 + 1.0 * x2)))
    miss = simulate_missingness("MAR", driver=x1, strength=1.5, random_state=rng)
    return x1, y, score, miss.observed


def test_ipw_is_unbiased_on_simulated_mar():
    """Over seeds, the IPW estimate minus the full-data truth averages to 0 within its standard error;
    the naive complete-case estimate does not."""
    diffs = {"ipw_prev": [], "naive_prev": [], "ipw_auc": [], "naive_auc": []}
    for seed in range(40):
        rng = np.random.default_rng(seed)
        x1, y, score, obs = _mar_population(rng, 4000)
        w = fit_missingness_model(x1, obs)
        wo = w.observed_weights
        diffs["ipw_prev"].append(np.average(y[obs], weights=wo) - y.mean())
        diffs["naive_prev"].append(y[obs].mean() - y.mean())
        truth = weighted_metric(y, score)
        diffs["ipw_auc"].append(weighted_metric(y[obs], score[obs], sample_weight=wo) - truth)
        diffs["naive_auc"].append(weighted_metric(y[obs], score[obs]) - truth)
    for key in ("ipw_prev", "ipw_auc"):
        d = np.array(diffs[key])
        se = d.std(ddof=1) / np.sqrt(d.size)
        assert abs(d.mean()) <= 2 * se, (key, d.mean(), se)
    for key in ("naive_prev", "naive_auc"):
        d = np.array(diffs[key])
        se = d.std(ddof=1) / np.sqrt(d.size)
        assert abs(d.mean()) > 5 * se, (key, d.mean(), se)
