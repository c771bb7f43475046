"""Generator behaviour: propensities, persistent communities, property targets, exact edge sampling."""

import numpy as np
import pytest

from iclr26.graphuniverse import (
    GraphFamily,
    GraphSample,
    Universe,
    block_probability_matrix,
    sample_edges,
    sample_graph,
    scale_propensities,
)


@pytest.fixture(scope="module")
def universe():
    return Universe(
        K=8, feature_dim=6, edge_propensity_variance=0.5, center_variance=1.0, cluster_variance=0.2, seed=3
    )


def test_universe_propensities(universe):
    P = universe.P
    assert P.shape == (8, 8)
    assert np.allclose(P, P.T)
    assert P.min() >= 0 and P.max() <= 2
    flat = Universe(K=5, edge_propensity_variance=0.0, seed=1)
    assert np.all(flat.P == 1.0)
    assert universe.degree_centers.shape == (8,) and np.abs(universe.degree_centers).max() <= 1
    again = Universe(
        K=8, feature_dim=6, edge_propensity_variance=0.5, center_variance=1.0, cluster_variance=0.2, seed=3
    )
    assert np.array_equal(again.P, P) and np.array_equal(again.feature_centers, universe.feature_centers)


def test_bad_inputs(universe):
    with pytest.raises(ValueError, match="K"):
        Universe(K=0)
    with pytest.raises(ValueError, match="center_variance"):
        Universe(K=3, center_variance=-1)
    with pytest.raises(ValueError, match="P must"):
        Universe(K=2, P=np.array([[1.0, 0.2], [0.5, 1.0]]))
    with pytest.raises(ValueError, match="homophily"):
        GraphFamily(universe, n_graphs=1, homophily=(0.5, 1.5))
    with pytest.raises(ValueError, match="min <= max"):
        GraphFamily(universe, n_graphs=1, n_nodes=(100, 50))
    with pytest.raises(ValueError, match="n_communities"):
        GraphFamily(universe, n_graphs=1, n_communities=(2, 9))
    with pytest.raises(ValueError, match="universe"):
        GraphFamily("not a universe", n_graphs=1)
    with pytest.raises(ValueError, match="power_law_exponent"):
        sample_graph(universe, 50, 3, 0.5, 3.0, power_law_exponent=1.0)


def test_community_subsets_are_connected_and_distinct():
    P = np.ones((6, 6))
    P[0, 1:] = P[1:, 0] = 0.0  # community 0 cannot connect to anyone
    u = Universe(K=6, feature_dim=2, P=P, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(50):
        c = u.sample_communities(3, rng)
        assert np.unique(c).size == c.size
        if c.size > 1:
            assert 0 not in c
    # starting from community 0 nothing can be added: stops early instead of looping forever
    sizes = {u.sample_communities(3, np.random.default_rng(s)).size for s in range(60)}
    assert 1 in sizes and 3 in sizes


def test_scale_propensities_hits_mass_targets():
    P = np.array([[1.0, 0.5, 0.2], [0.5, 1.5, 1.0], [0.2, 1.0, 0.7]])
    out = scale_propensities(P, avg_degree=5.0, homophily=0.3, n_nodes=1001)
    density = 5.0 / 1000
    assert np.isclose(np.trace(out), 0.3 * density * 9)
    assert np.isclose(out.sum() - np.trace(out), 0.7 * density * 9)
    # relative propensities are kept inside each part
    assert np.isclose(out[0, 1] / out[1, 2], 0.5)


def test_sample_edges_is_exact_bernoulli():
    """Empirical pair frequencies agree with min(1, P theta_i theta_j), including clipped pairs."""
    rng = np.random.default_rng(1)
    n = 40
    labels = rng.integers(3, size=n)
    theta = rng.pareto(1.5, n) + 1.0
    theta /= theta.mean()
    P = np.array([[0.3, 0.05, 0.1], [0.05, 0.4, 0.02], [0.1, 0.02, 0.2]])
    expect = np.minimum(1.0, P[labels][:, labels] * np.outer(theta, theta))
    reps = 1500
    freq = np.zeros((n, n))
    for s in range(reps):
        e = sample_edges(labels, theta, P, np.random.default_rng(s))
        assert np.all(e[:, 0] < e[:, 1])
        assert np.unique(e, axis=0).shape[0] == e.shape[0]
        freq[e[:, 0], e[:, 1]] += 1
    iu = np.triu_indices(n, 1)
    f, p = freq[iu] / reps, expect[iu]
    z = (f - p) / np.sqrt(np.maximum(p * (1 - p), 1e-12) / reps)
    assert np.abs(z[(p > 0) & (p < 1)]).max() < 5.5
    assert np.all(f[p >= 1] == 1.0)
    assert abs(f.sum() - p.sum()) < 4 * np.sqrt((p * (1 - p)).sum() / reps) + 1e-9


def test_sample_edges_expected_count_large():
    rng = np.random.default_rng(2)
    n = 3000
    labels = rng.integers(4, size=n)
    theta = rng.pareto(2.2, n) + 1.0
    theta /= theta.mean()
    P = np.full((4, 4), 0.0005) + np.eye(4) * 0.003
    expect = np.minimum(1.0, P[labels][:, labels] * np.outer(theta, theta))
    np.fill_diagonal(expect, 0)
    mean = expect.sum() / 2
    counts = [sample_edges(labels, theta, P, np.random.default_rng(s)).shape[0] for s in range(20)]
    assert abs(np.mean(counts) - mean) < 4 * np.sqrt(mean / 20)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_homophily_and_degree_targets(universe, seed):
    fam = GraphFamily(
        universe,
        n_graphs=12,
        n_nodes=(500, 900),
        n_communities=(3, 6),
        homophily=(0.1, 0.9),
        avg_degree=(5.0, 9.0),
        power_law_exponent=(2.0, 3.0),
        degree_separation=(0.4, 0.8),
        seed=seed,
    )
    for g in fam:
        p = g.properties()
        assert p["n_nodes"] >= 500
        assert abs(p["edge_homophily"] - p["target_homophily"]) <= 0.05, p
        assert abs(p["avg_degree"] / p["target_avg_degree"] - 1) <= 0.2, p
        assert g.is_connected()


def test_authors_rescaling_option_is_size_agnostic(universe):
    g = sample_graph(universe, 600, 4, 0.6, 6.0, seed=5, calibrate=False)
    comms = g.communities
    assert np.allclose(g.P_sub, scale_propensities(universe.P[np.ix_(comms, comms)], 6.0, 0.6, 600))
    assert g.params["calibrate"] is False


def test_persistent_communities(universe):
    """The same community id carries the same propensities, degree rank and feature centre everywhere."""
    fam = GraphFamily(
        universe,
        n_graphs=20,
        n_nodes=(300, 400),
        n_communities=(3, 5),
        homophily=(0.5, 0.5),
        avg_degree=(6, 6),
        degree_separation=(0.9, 0.9),
        seed=11,
    )
    means = {c: [] for c in range(universe.K)}
    rank_corr = []
    for g in fam:
        assert set(np.unique(g.y)) <= set(g.communities.tolist())
        for c in np.unique(g.y):
            means[c].append(g.x[g.y == c].mean(axis=0))
        # relative propensities between the graph's communities follow the universe's
        ratio = g.P_sub[~np.eye(len(g.communities), dtype=bool)] / universe.P[
            np.ix_(g.communities, g.communities)
        ][~np.eye(len(g.communities), dtype=bool)].clip(1e-12)
        good = universe.P[np.ix_(g.communities, g.communities)][~np.eye(len(g.communities), dtype=bool)] > 0
        assert np.allclose(ratio[good], ratio[good][0])
        deg = g.degrees()
        avg = np.array([deg[g.local_labels == i].mean() for i in range(len(g.communities))])
        from scipy.stats import spearmanr

        rank_corr.append(spearmanr(avg, universe.degree_centers[g.communities]).statistic)
    for c, ms in means.items():
        if len(ms) >= 2:
            ms = np.array(ms)
            assert np.abs(ms - universe.feature_centers[c]).max() < 0.25  # sd of a mean ~ 0.45/sqrt(60)
    assert np.nanmean(rank_corr) > 0.3
    # with flat propensities, degrees rank communities by their universe degree centres
    flat = Universe(K=8, feature_dim=2, edge_propensity_variance=0.0, seed=4)
    fam = GraphFamily(
        flat,
        n_graphs=10,
        n_nodes=(400, 500),
        n_communities=(4, 5),
        homophily=(0.5, 0.5),
        avg_degree=(6, 6),
        degree_separation=(0.9, 0.9),
        seed=2,
    )
    from scipy.stats import spearmanr

    corr = [
        spearmanr(
            [g.degrees()[g.local_labels == i].mean() for i in range(len(g.communities))],
            flat.degree_centers[g.communities],
        ).statistic
        for g in fam
    ]
    assert np.mean(corr) > 0.8, corr


def test_determinism_and_regeneration(universe):
    a = GraphFamily(universe, n_graphs=4, n_nodes=(50, 80), seed=9)
    b = GraphFamily(universe, n_graphs=4, n_nodes=(50, 80), seed=9)
    for ga, gb in zip(a, b):
        assert np.array_equal(ga.edges, gb.edges) and np.array_equal(ga.x, gb.x)
    assert np.array_equal(a.sample(2).edges, a[2].edges)
    c = GraphFamily(universe, n_graphs=4, n_nodes=(50, 80), seed=10)
    assert not np.array_equal(a[0].edges, c[0].edges) or a[0].n_nodes != c[0].n_nodes


def test_measured_properties_on_hand_graph():
    g = GraphSample(
        edges=np.array([[0, 1], [1, 2], [0, 2], [2, 3]]),
        y=np.array([0, 0, 0, 1]),
        x=np.zeros((4, 1), np.float32),
        communities=np.array([0, 1]),
        local_labels=np.array([0, 0, 0, 1]),
        theta=np.ones(4),
        P_sub=np.eye(2),
        K=2,
    )
    assert g.edge_homophily() == 0.75
    # community 0: 3 intra / (3 + 1) ; community 1: 0 / 1
    assert np.allclose(g.community_homophily_vector(), [0.75, 0.0])
    assert g.triangle_count() == 1
    assert np.allclose(g.triangles(), [1, 1, 1, 0])
    k2 = g.khop_community_counts(2)
    assert np.allclose(k2, [[0, 1], [0, 1], [0, 0], [2, 0]])
    assert np.isclose(g.average_degree(), 2.0)
    bp = block_probability_matrix(g.edges, g.local_labels, 2)
    assert np.isclose(bp[0, 0], 1.0) and np.isclose(bp[0, 1], 1 / 3)


def test_large_graph_is_fast(universe):
    import time

    t = time.perf_counter()
    g = sample_graph(universe, 30_000, 5, 0.5, 10.0, seed=0)
    assert time.perf_counter() - t < 20
    assert 9.0 < g.average_degree() < 11.5
    assert g.is_connected()
