"""Behaviour of the Bradley-Terry fits: optimality, bootstrap, leaderboard, invariances, bad input."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from iclr26.search_arena import (
    ConvergenceWarning,
    _bt,
    _solver,
    bootstrap_bt,
    bradley_terry,
    controlled_bt,
    leaderboard,
    transform_features,
    unidentified_models,
)

from .gen import battle_set

ALPHA = math.log(10.0)


def _tight_optimum(df, feats=None, reg=0.0):
    """An independent tight-tolerance optimum: SciPy BFGS on the exact objective, per battle."""
    m, o, models = _bt.encode(df)
    F = transform_features(feats, len(df))[0] if feats is not None else np.zeros((len(df), 0))
    P = len(models) + F.shape[1]

    def f(theta):
        eta = ALPHA * (theta[m[:, 0]] - theta[m[:, 1]]) + F @ theta[len(models) :]
        loss = np.sum(np.logaddexp(0, -eta) * o + np.logaddexp(0, eta) * (1 - o)) + reg / 2 * theta @ theta
        r = 1 / (1 + np.exp(-eta)) - o
        g = reg * theta
        np.add.at(g, m[:, 0], ALPHA * r)
        np.add.at(g, m[:, 1], -ALPHA * r)
        g[len(models) :] += F.T @ r
        return loss, g

    res = minimize(f, np.zeros(P), jac=True, method="BFGS", options={"gtol": 1e-9, "maxiter": 10_000})
    theta = res.x
    if reg == 0:
        theta[: len(models)] -= theta[: len(models)].mean()
    return pd.Series(theta[: len(models)] * 400 + 1000, index=models), theta[len(models) :]


@pytest.mark.parametrize("seed", [0, 1, 21, 41])
def test_default_equals_a_tight_optimum(seed):
    df, feats = battle_set(seed, turns=seed > 40)
    ref, _ = _tight_optimum(df)
    ours = bradley_terry(df)
    assert np.abs(ours - ref.reindex(ours.index)).max() <= 1e-6
    ref_r, ref_c = _tight_optimum(df, feats, reg=0.5)
    res = controlled_bt(df, feats, n_rounds=2)
    assert np.abs(res.ratings - ref_r.reindex(res.ratings.index)).max() <= 1e-6
    np.testing.assert_allclose(res.coefficients.to_numpy(), ref_c, atol=1e-8)


def test_chord_replicates_equal_newton_replicates():
    df, feats = battle_set(5, n_models=8, n=1500)
    m, o, models = _bt.encode(df)
    F, _ = transform_features(feats, len(df))
    X = _solver.design(m, F, len(models), ALPHA)
    n = len(df)
    point, _ = _solver.newton_fit(X, np.ones((1, n)), o[None], len(models), 0.5)
    W = np.random.default_rng(0).multinomial(n, np.full(n, 1 / n), size=7).astype(float)
    D = _solver._Design(X)
    H_inv = _solver.chord_inverse(D, W.mean(0), len(models), 0.5, point[0])
    chord, ok = _solver.chord_fit(D, W, W * o, len(models), 0.5, point[0], H_inv, tol=1e-11)
    newton, ok2 = _solver.newton_fit(X, W, W * o, len(models), 0.5)
    assert ok.all() and ok2.all()
    np.testing.assert_allclose(chord, newton, atol=1e-9)


def test_pair_resampling_has_the_battle_bootstrap_distribution():
    """Hierarchical per-pair draws: means and variances of battles and wins per pair as a multinomial."""
    df, _ = battle_set(2, n_models=4, n=400)
    m, o, models = _bt.encode(df)
    pairs, table = _bt.pair_table(m, o, len(models))
    W, S = _bt._draw_pairs(table, 40_000, np.random.default_rng(1))
    n = table.sum()
    p = table.sum(1) / n
    np.testing.assert_allclose(W.mean(0), n * p, rtol=0.01)
    np.testing.assert_allclose(W.var(0), n * p * (1 - p), rtol=0.05)
    # wins (ties half) of a pair: the sum of n draws of a variable worth 1 / 0.5 / 0 on its cells
    cell = table / n
    mean1 = cell[:, 0] + 0.5 * cell[:, 1]
    mean2 = cell[:, 0] + 0.25 * cell[:, 1]
    np.testing.assert_allclose(S.mean(0), n * mean1, rtol=0.01)
    np.testing.assert_allclose(S.var(0), n * (mean2 - mean1**2), rtol=0.05)


def test_bootstrap_spread_matches_the_authors_scheme():
    df, _ = battle_set(0, n_models=13, n=3000)
    ours = bootstrap_bt(df, n_rounds=400)
    theirs = bootstrap_bt(df, n_rounds=400, authors_compat=True)
    np.testing.assert_allclose(ours.std(), theirs.std()[ours.columns], rtol=0.2)
    np.testing.assert_allclose(ours.mean(), theirs.mean()[ours.columns], atol=3.0)


def test_invariances():
    df, _ = battle_set(3)
    base = bradley_terry(df)
    flipped = df.rename(columns={"model_a": "model_b", "model_b": "model_a"})
    flipped["winner"] = df["winner"].replace({"model_a": "model_b", "model_b": "model_a"})
    pd.testing.assert_series_equal(bradley_terry(flipped)[base.index], base, atol=1e-8)
    doubled = pd.concat([df, df], ignore_index=True)
    pd.testing.assert_series_equal(bradley_terry(doubled)[base.index], base, atol=1e-8)
    anchored = bradley_terry(df, anchor="m2", anchor_rating=1200.0)
    assert anchored["m2"] == pytest.approx(1200.0)
    np.testing.assert_allclose((anchored - base)[base.index].to_numpy(), 1200.0 - base["m2"])


def test_two_models_closed_form():
    df = pd.DataFrame(
        {"model_a": ["x"] * 10, "model_b": ["y"] * 10, "winner": ["model_a"] * 6 + ["model_b"] * 3 + ["tie"]}
    )
    r = bradley_terry(df)
    expected = 400 * math.log10(6.5 / 3.5)
    assert r["x"] - r["y"] == pytest.approx(expected, abs=1e-9)


def test_leaderboard_rank_rule_and_intervals():
    df, _ = battle_set(0, n_models=13, n=6000)
    boot = leaderboard(df, n_rounds=200)
    sand = leaderboard(df, ci="sandwich")
    for table in (boot, sand):
        assert list(table.columns) == ["rating", "variance", "lower", "upper", "num_battles", "rank"]
        for model, row in table.iterrows():
            assert row["rank"] == 1 + int((table["lower"] > row["upper"]).sum()), model
        assert (table["lower"] <= table["rating"]).all() and (table["rating"] <= table["upper"]).all()
    assert boot["num_battles"].sum() == 2 * len(df)
    ratio = sand["variance"] / boot["variance"].reindex(sand.index)
    assert ratio.between(0.6, 1.6).all()
    authors = leaderboard(df, authors_compat=True)
    assert authors["rating"].sub(bootstrap_bt(df, 100, authors_compat=True).mean()).abs().max() < 1e-9


def test_identification():
    df = pd.DataFrame({"model_a": ["x", "y", "z"], "model_b": ["y", "z", "x"], "winner": ["model_a"] * 3})
    assert unidentified_models(*_bt.encode(df)[:2], 3) == []
    dominant = pd.DataFrame(
        {"model_a": ["x", "x", "y"], "model_b": ["y", "z", "z"], "winner": ["model_a", "model_a", "tie"]}
    )
    m, o, models = _bt.encode(dominant)
    assert [models[i] for i in unidentified_models(m, o, 3)] == ["x"]
    with pytest.raises(ValueError, match="no finite maximum-likelihood"):
        bradley_terry(dominant)
    assert np.isfinite(bradley_terry(dominant, authors_compat=True)).all()
    res = controlled_bt(dominant, {"len": np.array([[1.0, 2.0], [3.0, 1.0], [2.0, 2.0]])}, n_rounds=5)
    assert np.isfinite(res.ratings).all()  # the L2 penalty makes every rating finite


def test_replicates_without_an_optimum_are_reported():
    df = pd.DataFrame(
        {"model_a": ["x"] * 40, "model_b": ["y"] * 40, "winner": ["model_a"] * 39 + ["model_b"]}
    )
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        bootstrap_bt(df, n_rounds=200)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda d: d.drop(columns="winner"), "column 'winner'"),
        (lambda d: d.assign(winner=d["winner"].where(d.index != 3, "draw")), r"row 3 has 'draw'"),
        (
            lambda d: d.assign(model_a=d["model_a"].where(d.index != 2, None)),
            r"battles\['model_a'\] has a missing",
        ),
        (lambda d: d.assign(model_b=d["model_a"]), "the same model"),
        (lambda d: d.iloc[:0], "empty"),
        (lambda d: d.to_dict(), "must be a pandas DataFrame"),
    ],
)
def test_bad_battles(change, match):
    df, _ = battle_set(0)
    with pytest.raises(ValueError, match=match):
        bradley_terry(change(df))


def test_bad_arguments():
    df, feats = battle_set(0)
    with pytest.raises(ValueError, match="base"):
        bradley_terry(df, base=1.0)
    with pytest.raises(ValueError, match="scale"):
        bradley_terry(df, scale=-400)
    with pytest.raises(ValueError, match="anchor"):
        bradley_terry(df, anchor="nope")
    with pytest.raises(ValueError, match="n_rounds"):
        bootstrap_bt(df, n_rounds=1)
    with pytest.raises(ValueError, match="ci must be"):
        leaderboard(df, ci="bayes")
    with pytest.raises(ValueError, match="level"):
        leaderboard(df, level=95)
    with pytest.raises(ValueError, match="reg"):
        controlled_bt(df, feats, reg=0)
    n = len(df)
    with pytest.raises(ValueError, match=r"features\['x'\] must have shape"):
        controlled_bt(df, {"x": np.ones((n, 3))})
    with pytest.raises(ValueError, match=r"features\['x'\] has a non-finite"):
        controlled_bt(df, {"x": np.full((n, 2), np.nan)})
    with pytest.raises(ValueError, match=r"features\['x'\] must be non-negative"):
        controlled_bt(df, {"x": -np.ones((n, 2))})
    with pytest.raises(ValueError, match=r"features\['x'\] is constant"):
        controlled_bt(df, {"x": np.ones((n, 2))})
    with pytest.raises(ValueError, match="non-empty mapping"):
        controlled_bt(df, {})


def test_authors_compat_truncates_float_features():
    df, feats = battle_set(41, turns=True)
    F_default, _ = transform_features(feats, len(df))
    F_compat, _ = transform_features(feats, len(df), authors_compat=True)
    assert not np.allclose(F_default[:, 1], F_compat[:, 1])  # citations per turn: 2.7 -> 2
    truncated = {k: np.trunc(v) for k, v in feats.items()}
    np.testing.assert_allclose(F_compat, transform_features(truncated, len(df))[0])


def test_row_draw_counts_are_resamples_of_all_rows():
    """Each round draws n rows with replacement: counts sum to n, have the multinomial's mean 1 and
    variance 1 - 1/n, follow the seed, and do not depend on the chunking."""
    from iclr26.search_arena import _bt

    counts = _bt._row_draw_counts(500, 400, np.random.default_rng(3))
    assert counts.shape == (400, 500) and (counts.sum(axis=1) == 500).all()
    assert abs(counts.mean() - 1.0) < 1e-12 and abs(counts.var() - (1 - 1 / 500)) < 0.02
    np.testing.assert_array_equal(counts, _bt._row_draw_counts(500, 400, np.random.default_rng(3)))
    assert not np.array_equal(counts, _bt._row_draw_counts(500, 400, np.random.default_rng(4)))


def test_controlled_bootstrap_in_streams_equals_one_stream(monkeypatch):
    """The replicates are split over threads; the fits do not depend on that split."""
    from iclr26.search_arena import _bt

    df, feats = battle_set(2, n_models=5, n=400)
    two = controlled_bt(df, feats, n_rounds=30, seed=1)
    monkeypatch.setattr(_bt, "_STREAMS", 1)
    one = controlled_bt(df, feats, n_rounds=30, seed=1)
    for a, b in ((two.ratings_bootstrap, one.ratings_bootstrap), (two.coef_bootstrap, one.coef_bootstrap)):
        np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), rtol=0, atol=1e-6)
