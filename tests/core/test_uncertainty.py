import numpy as np
import pytest
from scipy import stats

from iclr26.claims import Verdict
from iclr26.uncertainty import (
    bootstrap,
    crossed_resamples,
    exact,
    hierarchical_bootstrap,
    over_seeds,
    paired_difference,
)


def test_bootstrap_mean_interval_covers_truth_at_nominal_rate():
    rng = np.random.default_rng(0)
    covered = 0
    for rep in range(200):
        x = rng.normal(1.0, 1.0, size=40)
        est = bootstrap(np.mean, x, n_boot=300, seed=rep)
        covered += est.lo <= 1.0 <= est.hi
    # Percentile bootstrap of a mean at n=40 is close to nominal; 200 reps -> sd ~ 0.015.
    assert 0.88 <= covered / 200 <= 0.99


def test_bca_close_to_t_interval_for_a_mean():
    x = np.random.default_rng(1).normal(size=200)
    est = bootstrap(np.mean, x, n_boot=2000, method="bca")
    half = stats.t.ppf(0.975, 199) * x.std(ddof=1) / np.sqrt(200)
    assert est.lo == pytest.approx(x.mean() - half, abs=0.03)
    assert est.hi == pytest.approx(x.mean() + half, abs=0.03)


def test_bootstrap_resamples_arrays_with_the_same_indices():
    x = np.arange(50.0)
    est = bootstrap(lambda a, b: float(np.max(np.abs(a - b))), x, x.copy(), n_boot=50)
    assert est.lo == est.hi == 0.0  # pairs never separate


def test_paired_difference_uses_common_units():
    rng = np.random.default_rng(2)
    truth = rng.normal(size=60)
    a = truth + rng.normal(scale=0.1, size=60)
    b = truth + rng.normal(scale=2.0, size=60)
    a[3] = np.nan  # undefined for a: must be dropped from b too
    corr = lambda v, t: stats.spearmanr(v, t)[0]
    est = paired_difference(corr, a, b, truth, n_boot=300)
    keep = np.isfinite(a)
    assert est.value == pytest.approx(corr(a[keep], truth[keep]) - corr(b[keep], truth[keep]))
    assert est.n == 59 and "removed from both" in est.method
    assert est.lo > 0


def test_over_seeds_is_a_t_interval():
    v = [0.1, 0.3, 0.2, 0.25, 0.15]
    est = over_seeds(v)
    half = stats.t.ppf(0.975, 4) * np.std(v, ddof=1) / np.sqrt(5)
    assert est.value == pytest.approx(0.2) and est.hi - est.value == pytest.approx(half)
    single = over_seeds([0.4])
    assert np.isnan(single.lo)
    claim = single.claim("s", ">", 0.0)
    assert claim.verdict == Verdict.NOT_MEASURABLE and "no interval" in claim.detail


def test_hierarchical_bootstrap_is_wider_than_units_alone_when_seeds_vary():
    rng = np.random.default_rng(3)
    groups = [rng.normal(loc=rng.normal(scale=1.0), size=100) for _ in range(5)]
    hier = hierarchical_bootstrap(np.mean, groups, n_boot=500)
    flat = bootstrap(np.mean, np.concatenate(groups), n_boot=500)
    assert hier.hi - hier.lo > 2 * (flat.hi - flat.lo)


def _crossed_coverage(crossed: bool) -> float:
    """Coverage of the population mean (0) when 40 units, each with its own effect, are measured under
    3 seeds: the units' effects are shared by the seeds (a crossed design)."""
    rng = np.random.default_rng(7)
    covered = 0
    for rep in range(120):
        unit_effect = rng.normal(size=40)
        groups = [unit_effect + rng.normal(scale=0.05) + rng.normal(scale=0.3, size=40) for _ in range(3)]
        est = hierarchical_bootstrap(np.mean, groups, n_boot=200, seed=rep, crossed=crossed)
        covered += est.lo <= 0.0 <= est.hi
    return covered / 120


def test_crossed_bootstrap_covers_where_the_nested_one_is_too_narrow():
    # The nested scheme treats the 3 seeds' units as 120 independent units (interval about 1/sqrt(3) as
    # wide); the two-way scheme keeps the shared unit effects. 120 replications: sd of a rate about 0.02.
    assert 0.88 <= _crossed_coverage(crossed=True) <= 0.99
    assert _crossed_coverage(crossed=False) < 0.85  # 0.79 measured; 2 Phi(1.96 / sqrt(3)) - 1 = 0.74


def test_crossed_bootstrap_draws_one_unit_sample_for_all_seeds():
    rng = np.random.default_rng(0)
    groups = [rng.normal(size=(30, 2)) for _ in range(4)]
    seen = []

    def stat(g):
        seen.append(g)
        return float(g[:, 0].mean())

    est = hierarchical_bootstrap(stat, groups, n_boot=10, crossed=True, unit="items")
    assert "two-way" in est.method and "4 seeds x 30 items" in est.method
    draws = list(crossed_resamples(4, 30, n_boot=10, seed=0))
    assert len(draws) == 10 and draws[0][0].shape == (4,) and draws[0][1].shape == (30,)
    # After the 4 calls on the full data, each resample calls stat once per chosen seed, on the rows
    # picked by that resample's single draw of the units.
    chosen, units = draws[0]
    for k, s in enumerate(chosen):
        np.testing.assert_array_equal(seen[4 + k], groups[s][units])
    with pytest.raises(ValueError, match="crossed=True needs the same units"):
        hierarchical_bootstrap(np.mean, [np.arange(5.0), np.arange(6.0)], crossed=True)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_seeds": 0, "n_units": 5}, "n_seeds"),
        ({"n_seeds": 2, "n_units": 2.5}, "n_units"),
        ({"n_seeds": 2, "n_units": 5, "n_boot": 3}, "n_boot"),
    ],
)
def test_crossed_resamples_bad_arguments_are_named_at_the_call(kwargs, match):
    with pytest.raises(ValueError, match=match):
        crossed_resamples(**kwargs)  # before any draw is asked for


def test_estimate_to_claim_and_straddling_interval_is_inconclusive():
    x = np.random.default_rng(4).normal(loc=0.05, scale=1.0, size=30)
    claim = bootstrap(np.mean, x, n_boot=500).claim("mean is positive", ">", 0.0)
    assert claim.interval is not None and claim.verdict == Verdict.INCONCLUSIVE
    assert exact("round trip", 1.0, ">=", 1.0).verdict == Verdict.HOLDS


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"n_boot": 5}, "n_boot"), ({"level": 1.5}, "level"), ({"method": "basic"}, "method")],
)
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bootstrap(np.mean, np.arange(10.0), **kwargs)


def test_bad_shapes_are_named():
    with pytest.raises(ValueError, match="arrays\\[1\\]"):
        bootstrap(lambda a, b: 0.0, np.arange(5), np.arange(4))
    with pytest.raises(ValueError, match="at least 2 units"):
        bootstrap(np.mean, np.arange(1))
    with pytest.raises(ValueError, match="per_seed"):
        hierarchical_bootstrap(np.mean, [np.arange(5)])
