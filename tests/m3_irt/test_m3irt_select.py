import numpy as np
import pytest

from iclr26.m3_irt import (
    M3IRT,
    TwoPL,
    adaptive_subset,
    compact_subset,
    merge_responses,
    ranking_fidelity,
    read_responses,
    shared_data_dir,
    simulate_m3irt,
)

SHARED = shared_data_dir()


@pytest.fixture(scope="module")
def pool():
    return simulate_m3irt(24, 80, 80, seed=5)[0]


def test_adaptive_subset_unique_items(pool):
    m = M3IRT(scale=4.0).fit(pool.take_models(np.arange(1, 24)))
    order, thetas = adaptive_subset(m, pool.values[0], 20, batch=4)
    assert order.shape == (20,) and np.unique(order).size == 20
    assert thetas.shape == (5, 4)
    lo, hi = m._theta_bounds()
    assert np.all(thetas >= lo - 1e-12) and np.all(thetas <= hi + 1e-12)


def test_d_optimal_avoids_shortcut_items(pool):
    """Shortcut items lack image/cross discrimination, so their 4x4 information is near-singular."""
    m3 = M3IRT(scale=4.0).fit(pool)
    two = TwoPL(scale=4.0).fit(pool)
    k = 16
    lq = pool.item_low_quality
    top_m3 = np.argsort(-m3.item_scores(m3.initial_theta()))[:k]
    top_2pl = np.argsort(-two.item_scores(two.initial_theta()))[:k]
    assert lq[top_m3].mean() < 0.25
    assert lq[top_m3].mean() < lq[top_2pl].mean()


def test_ranking_fidelity_shapes_and_random(pool):
    ref = pool.accuracy(np.flatnonzero(~pool.item_low_quality))
    r = ranking_fidelity(pool, ref, "random", (0.1, 1.0), seed=0)
    assert r["spearman"].shape == (24, 2)
    # the whole pool ranks models as the pool does, for every target
    full = np.corrcoef(np.argsort(np.argsort(pool.accuracy())), np.argsort(np.argsort(ref)))[0, 1]
    assert np.allclose(r["spearman"][:, 1], full, atol=0.02)
    r3 = ranking_fidelity(pool, ref, "m3irt", (0.1, 0.3), targets=[0, 1], scale=4.0, batch_fraction=0.05)
    assert r3["spearman"].shape == (2, 2) and np.all(r3["low_quality_ratio"] <= 1)
    with pytest.raises(ValueError, match="method"):
        ranking_fidelity(pool, ref, "irt")
    with pytest.raises(ValueError, match="reference"):
        ranking_fidelity(pool, ref[:3])
    with pytest.raises(ValueError, match="fractions"):
        ranking_fidelity(pool, ref, "random", (0.0,))
    with pytest.raises(ValueError, match="targets"):
        ranking_fidelity(pool, ref, "random", targets=[99])
    with pytest.raises(ValueError, match="targets"):
        ranking_fidelity(pool, ref, "random", targets=[0.5])


def test_compact_subset_population_level(pool):
    """One fixed subset for the whole population: distinct items, D-optimal for M3-IRT so it avoids
    the shortcut items."""
    m = M3IRT(scale=4.0, solver="newton").fit(pool)
    sub = compact_subset(m, 16)
    assert sub.shape == (16,) and np.unique(sub).size == 16
    assert pool.item_low_quality[sub].mean() < 0.25
    assert np.array_equal(compact_subset(m, 16, theta=m.theta_), sub)
    with pytest.raises(ValueError, match="theta"):
        compact_subset(m, 4, theta=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="n_select"):
        compact_subset(m, 10_000)


@pytest.mark.skipif(SHARED is None, reason="shared M3-IRT data absent")
def test_real_mmmu_fit():
    normal = read_responses(SHARED / "normal_mmmu.csv")
    assert normal.shape == (24, 3388) and normal.n_items == 847 and not normal.low_quality.any()
    pool = merge_responses(normal, read_responses(SHARED / "shuffled_mmmu.csv"))
    assert pool.n_items == 1747 and pool.item_low_quality.sum() == 900
    m = M3IRT().fit(normal)
    assert max(r["val_auc"] for r in m.scale_search_) > 0.78
    assert m.theta_.shape == (24, 4)
