"""Hostile input: each case used to return a number silently (or fail obscurely); now it raises by name."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from iclr26.icym2i import (
    bootstrap,
    discretize,
    effective_sample_size,
    evaluate,
    fit_missingness_model,
    gaussian_pid_from_covariance,
    ipw_from_propensity,
    joint_table,
    min_synergy_distribution,
    mutual_information,
    simulate_missingness,
)

RNG = np.random.default_rng(0)
OBS = np.tile([True, False], 50)
PROP = np.full(100, 0.5)


@pytest.mark.parametrize("mechanism", ["MAR", "MNAR"])
def test_mar_and_mnar_refuse_a_constant_driver(mechanism):
    # used to return MCAR probabilities (all 0.5) under the name MAR / MNAR
    with pytest.raises(ValueError, match="driver is constant"):
        simulate_missingness(mechanism, driver=np.ones(50), random_state=0)
    with pytest.raises(ValueError, match="driver is constant"):
        simulate_missingness(mechanism, driver=np.c_[np.arange(50.0), -np.arange(50.0)], random_state=0)


@pytest.mark.parametrize("mechanism", ["MCAR", "MAR"])
def test_n_samples_must_match_the_driver(mechanism):
    # used to ignore n_samples and return the driver's length
    with pytest.raises(ValueError, match="n_samples"):
        simulate_missingness(mechanism, n_samples=10, driver=np.arange(50.0), random_state=0)
    assert simulate_missingness(mechanism, n_samples=50, driver=np.arange(50.0)).observed.shape == (50,)


@pytest.mark.parametrize("strength", [float("nan"), float("inf"), "1"])
def test_simulator_strength_must_be_finite(strength):
    with pytest.raises(ValueError, match="strength"):
        simulate_missingness("MAR", driver=np.arange(50.0), strength=strength)


def test_stabilized_must_be_a_bool():
    # "False" is truthy: it used to give stabilised weights
    with pytest.raises(ValueError, match="stabilized"):
        ipw_from_propensity(PROP, OBS, stabilized="False")
    with pytest.raises(ValueError, match="stabilized"):
        fit_missingness_model(RNG.random(100), OBS, stabilized="no")


def test_a_weight_that_overflows_is_refused():
    # propensity 1e-320 gave an infinite weight, a NaN effective sample size and no warning
    with pytest.raises(ValueError, match="overflows"):
        ipw_from_propensity(np.r_[1e-320, PROP[1:]], OBS)


def test_effective_sample_size_of_huge_weights_is_finite():
    # (sum w)^2 and sum w^2 both overflowed: inf / inf = NaN
    assert effective_sample_size([1e200, 1e200]) == pytest.approx(2.0)
    assert effective_sample_size([1e-200, 1e-200, 1e-200]) == pytest.approx(3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ipw = ipw_from_propensity(np.r_[1e-200, PROP[1:]], OBS)
    assert ipw.effective_sample_size == pytest.approx(1.0)


def test_warning_thresholds_must_be_numbers():
    # NaN thresholds silently switched the extreme-weight / balance warnings off
    with pytest.raises(ValueError, match="ess_warning"):
        ipw_from_propensity(PROP, OBS, ess_warning=float("nan"))
    with pytest.raises(ValueError, match="smd_warning"):
        fit_missingness_model(RNG.random(100), OBS, smd_warning=float("nan"))


def test_bootstrap_strata_must_have_one_value_per_row():
    # strata of another length used to set the resample size (10 rows bootstrapped as 200)
    with pytest.raises(ValueError, match="strata"):
        bootstrap(lambda i: float(len(i)), 10, strata=np.tile([0, 1], 100), n_bootstrap=3)
    with pytest.raises(ValueError, match="single value"):
        bootstrap(lambda i: 1.0, 4, strata=np.zeros(4), n_bootstrap=3)
    assert bootstrap(lambda i: float(len(i)), 4, strata=[0, 1, 0, 1], n_bootstrap=3).value == 4.0


def test_bootstrap_redraws_when_any_of_three_strata_vanishes():
    # only "at least two values" was checked, so a third stratum could vanish from a resample
    strata = np.r_[np.zeros(8, int), 1, 2]
    est = bootstrap(lambda i: float(np.unique(strata[i]).size), 10, strata=strata, n_bootstrap=50)
    assert est.ci_low == 3.0


def test_evaluate_needs_named_metrics():
    y, p = np.tile([0, 1], 20), np.linspace(0.1, 0.9, 40)
    with pytest.raises(ValueError, match="at least one"):
        evaluate(y, p, metrics=())  # used to return {}
    with pytest.raises(ValueError, match="the string"):
        evaluate(y, p, metrics="auroc")
    gen = evaluate(y, p, metrics=(m for m in ["auroc"]), n_bootstrap=5)  # a generator was used up: {}
    assert list(gen) == ["auroc"]


def test_joint_table_needs_a_sample():
    # used to return an empty (0, 0, 0) "distribution" that sums to 0
    with pytest.raises(ValueError, match="at least one sample"):
        joint_table([], [], [])


def test_discretize_refuses_values_outside_value_range():
    # logits passed with value_range=(0, 1) all fell into the two end bins
    with pytest.raises(ValueError, match="outside value_range"):
        discretize(RNG.normal(0, 3, 100), 4, value_range=(0, 1))
    assert discretize([0.0, 0.5, 1.0], 2, value_range=(0, 1)).tolist() == [0, 1, 1]


@pytest.mark.parametrize(
    ("table", "match"),
    [
        ([[10, 0], [0, 10]], "sum to 1"),  # a count table gave -66 bits
        ([[0.6, -0.1], [0.0, 0.5]], "non-negative"),
        ([[np.nan, 0.5], [0.0, 0.5]], "NaN"),
        ([0.5, 0.5], "2-D"),
        (np.full((2, 2, 2), 1 / 8), "2-D"),  # was read as a 2-D table and gave 1 bit
        ([["0.5", "0"], ["0", "0.5"]], "numeric"),
    ],
)
def test_mutual_information_refuses_bad_tables(table, match):
    with pytest.raises(ValueError, match=match):
        mutual_information(table)


@pytest.mark.parametrize(
    ("table", "match"),
    [
        (np.full((2, 2, 2), 3.0), "sum to 1"),
        (np.full((1, 2, 2), 5.0), "sum to 1"),  # returned the counts themselves
        (np.r_[-0.1, 0.2, 0.1, 0.1, 0.2, 0.2, 0.2, 0.1].reshape(2, 2, 2), "non-negative"),
        (np.full((2, 2, 2), np.nan), "NaN"),  # returned a table of zeros
        (np.full((2, 2), 0.25), "3-D"),
    ],
)
def test_min_synergy_distribution_refuses_bad_tables(table, match):
    with pytest.raises(ValueError, match=match):
        min_synergy_distribution(table)


def test_gaussian_pid_dimensions_are_integers():
    # d1=True was read as 1
    with pytest.raises(ValueError, match="d1"):
        gaussian_pid_from_covariance(np.eye(3) + 0.1, True, 1)
