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
        ([0.0, 0.5], [1, 0], "propensity is 0 for an observed sample"),
        ([1.5, 0.5], [1, 0], r"\[0, 1\]"),
        ([-0.1, 0.5], [1, 0], r"\[0, 1\]"),
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


def test_clip_is_the_escape_hatch_and_missing_samples_are_irrelevant():
    # a propensity of 0 on an observed sample is rescued by clip (clipped before validation)
    w = ipw_from_propensity([0.0, 0.5, 0.5], [1, 1, 0], clip=0.01, stabilized=False)
    assert w.weights[0] == pytest.approx(100.0)
    # a propensity of 0 (or 1) on a missing sample does not matter: its weight is 0
    w = ipw_from_propensity([0.5, 0.0, 1.0], [1, 0, 0], stabilized=False)
    np.testing.assert_allclose(w.weights, [2.0, 0.0, 0.0])
    # fit_missingness_model clips once: the stored propensities are the clipped ones
    rng = np.random.default_rng(0)
    x = rng.normal(size=500)
    obs = rng.random(500) < expit_np(4 * x)
    fit = fit_missingness_model(x, obs, clip=0.05)
    assert fit.propensity.min() >= 0.05 - 1e-12 and fit.propensity.max() <= 0.95 + 1e-12
    assert fit.min_propensity < 0.05  # the diagnostic looks at the unclipped estimate


def expit_np(z):
    return 1 / (1 + np.exp(-z))


def test_positivity_diagnostic_sees_what_ess_cannot():
    """Every sample with x1 = 0 is missing: the complete cases cannot represent them. The ESS over
    complete cases looks perfect; the positivity diagnostic over the full sample warns."""
    from iclr26.icym2i import PositivityWarning

    rng = np.random.default_rng(1)
    x1 = (rng.random(200) < 0.5).astype(float)
    obs = (x1 == 1) & (rng.random(200) < 0.9)
    with pytest.warns(PositivityWarning, match="positivity"):
        fit = fit_missingness_model(x1, obs)
    assert fit.effective_sample_size > 0.95 * obs.sum()  # ESS: no sign of trouble
    assert fit.min_propensity < 0.1
    assert fit.max_abs_smd > 0.5
    # a healthy MAR sample does not warn and is balanced after weighting
    x = rng.normal(size=4000)
    obs2 = rng.random(4000) < expit_np(0.8 * x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PositivityWarning)
        ok = fit_missingness_model(x, obs2)
    assert ok.max_abs_smd < 0.05 and ok.low_propensity_share == 0.0


def test_predict_weights_for_new_rows():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3000, 2))
    obs = rng.random(3000) < expit_np(x[:, 0])
    fit = fit_missingness_model(x, obs, clip=0.01)
    # on the fitted rows, predicted weights equal the fitted ones
    np.testing.assert_allclose(fit.predict_weights(x, obs), fit.weights, rtol=1e-12)
    new = rng.normal(size=(5, 2))
    p = fit.predict_propensity(new)
    np.testing.assert_allclose(fit.predict_weights(new), obs.mean() / np.clip(p, 0.01, 0.99))
    assert np.all(fit.predict_weights(new, [0, 1, 0, 1, 0])[[0, 2, 4]] == 0)
    with pytest.raises(ValueError, match="length"):
        fit.predict_weights(new, [1, 0])
    with pytest.raises(ValueError, match="given propensities"):
        ipw_from_propensity([0.5, 0.5], [1, 0]).predict_weights(new)
