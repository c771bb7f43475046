"""The Crossed-barrel / Concrete / LNP3 loaders on small CSVs written in the authors' column layouts."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("scipy")

from iclr26.lgbo import (  # noqa: E402
    GridOracle,
    IDWOracle,
    load_concrete,
    load_crossed_barrel,
    load_lnp3,
    tabular_oracle,
)
from iclr26.lgbo._tabular import CONCRETE_UCI_COLUMNS, LNP3_COLUMNS, LNP3_LEVELS, LNP3_LIPIDS  # noqa: E402


def _write(path, header, rows):
    lines = ([",".join(header)] if header else []) + [",".join(str(v) for v in r) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_scattered_crossed_barrel_uses_12nn_idw_and_drops_non_numeric_rows(tmp_path):
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.choice([6, 8, 10, 12], 40), rng.uniform(0, 200, 40), rng.uniform(1.5, 2.5, 40),
                         rng.uniform(0.7, 1.4, 40)])  # fmt: skip
    y = rng.uniform(0, 3, 40)
    rows = [list(x) + [v] for x, v in zip(X, y)] + [[8, "n/a", 2.0, 1.0, 1.0]]
    bench = load_crossed_barrel(_write(tmp_path / "cb.csv", ["n", "theta", "r", "t", "toughness"], rows))
    assert isinstance(bench.oracle, IDWOracle) and bench.X.shape == (40, 4)  # the "n/a" row dropped
    np.testing.assert_array_equal(bench.bounds, np.stack([X.min(0), X.max(0)]))
    assert bench(X[3:4])[0] == y[3]  # an exact hit returns the measurement
    Q = rng.uniform(bench.bounds[0], bench.bounds[1], (5, 4))
    np.testing.assert_allclose(bench(Q), IDWOracle(X, y, k=12)(Q), rtol=0, atol=0)
    # the headerless Olympus file reads the same (the authors prepend n,theta,r,t,toughness)
    raw = load_crossed_barrel(_write(tmp_path / "raw.csv", None, rows))
    np.testing.assert_array_equal(raw(Q), bench(Q))
    assert bench.task["objective"].startswith("Maximize toughness")


def test_a_full_grid_is_interpolated_multilinearly_with_clamped_edges(tmp_path):
    levels = [
        np.array([6.0, 8.0, 12.0]),
        np.array([0.0, 100.0]),
        np.array([1.5, 2.0, 2.5]),
        np.array([0.7, 1.4]),
    ]
    grid = np.array(list(itertools.product(*levels)))
    y = grid @ np.array([0.5, 0.01, -2.0, 3.0]) + 1.0  # multilinear interpolation reproduces a linear map
    rows = [list(x) + [v] for x, v in zip(grid, y)] + [list(grid[0]) + [99.0]]  # repeated input: last wins
    bench = load_crossed_barrel(_write(tmp_path / "cb.csv", ["n", "theta", "r", "t", "toughness"], rows))
    assert isinstance(bench.oracle, GridOracle)
    q = np.array([[7.0, 30.0, 2.2, 1.0], [10.0, 50.0, 2.4, 0.8]])  # cells clear of grid[0]
    np.testing.assert_allclose(bench(q), q @ np.array([0.5, 0.01, -2.0, 3.0]) + 1.0, rtol=1e-12)
    assert bench(grid[:1])[0] == 99.0
    outside = np.array([[20.0, -50.0, 2.0, 1.0]])  # clamped to n = 12, theta = 0
    np.testing.assert_allclose(bench(outside), bench(np.array([[12.0, 0.0, 2.0, 1.0]])))
    # a grid with a hole is not a grid: IDW
    assert isinstance(tabular_oracle(grid[1:], y[1:]), IDWOracle)


def test_concrete_from_uci_keeps_age_up_to_100_drops_age_and_always_uses_idw(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 500, (30, 7))
    age = np.array([28, 365, 100, 3, 180] * 6)
    strength = rng.uniform(5, 80, 30)
    rows = [list(x) + [a, s] for x, a, s in zip(X, age, strength)]
    uci = load_concrete(_write(tmp_path / "data.csv", CONCRETE_UCI_COLUMNS, rows))
    keep = age <= 100
    np.testing.assert_array_equal(uci.X, X[keep])
    np.testing.assert_array_equal(uci.y, strength[keep])
    assert isinstance(uci.oracle, IDWOracle) and uci.inputs[1] == "Blast"
    prepared_header = ["Cement", "Blast", "Fly", "Water", "Superplas", "CoarseAg", "FineAggr", "Strength"]
    prepared = load_concrete(
        _write(
            tmp_path / "concrete.csv",
            prepared_header,
            [list(x) + [s] for x, s in zip(X[keep], strength[keep])],
        )
    )
    Q = rng.uniform(uci.bounds[0], uci.bounds[1], (4, 7))
    np.testing.assert_array_equal(prepared(Q), uci(Q))
    # a full 2^7 grid still goes through IDW for Concrete (the authors switch the grid off)
    grid = np.array(list(itertools.product([0.0, 1.0], repeat=7)))
    full = load_concrete(_write(tmp_path / "g.csv", prepared_header, [list(x) + [x.sum()] for x in grid]))
    assert isinstance(full.oracle, IDWOracle)


def _lnp3_rows(rng):
    design = list(
        itertools.product(
            LNP3_LEVELS["drug_input"],
            LNP3_LIPIDS,
            LNP3_LEVELS["solid_lipid_input"],
            LNP3_LEVELS["liquid_lipid_input"],
            LNP3_LEVELS["surfactant_input"],
        )
    )
    targets = rng.uniform([0, 20, 100], [10, 100, 900], (len(design), 3))
    return [list(d) + list(t) for d, t in zip(design, targets)], targets


def test_lnp3_scores_the_design_by_index_rounding_on_the_unit_cube(tmp_path):
    rows, targets = _lnp3_rows(np.random.default_rng(2))
    bench = load_lnp3(_write(tmp_path / "lnp3.csv", None, rows))  # headerless, as Olympus ships it
    norm = (targets - targets.min(0)) / (targets.max(0) - targets.min(0))
    expected = 0.4 * norm[:, 0] + 0.4 * norm[:, 1] + 0.2 * (1 - norm[:, 2])
    np.testing.assert_allclose(bench.y, expected, rtol=1e-12)
    np.testing.assert_allclose(bench(bench.X), expected, rtol=1e-12)  # every row at its unit coordinates
    # row 0: drug 6, stearic acid, 72, 0, 0; u = 0.5 on the drug axis is index 1.5 -> 2 (half to even)
    i_drug24 = 2 * 192  # drug_input level 24 is the third block of 3 * 4 * 4 * 4 rows
    assert bench(np.array([[0.5, 0, 0, 0, 0, 0]]))[0] == pytest.approx(expected[i_drug24])
    # bit 1 is ignored while bit 0 is 0; 10 is Compritol 888, 11 glyceryl monostearate
    assert bench(np.array([[0, 0.2, 0.9, 0, 0, 0]]))[0] == pytest.approx(expected[0])
    assert bench(np.array([[0, 0.9, 0.1, 0, 0, 0]]))[0] == pytest.approx(expected[64])
    assert bench(np.array([[0, 0.9, 0.9, 0, 0, 0]]))[0] == pytest.approx(expected[128])
    weighted = load_lnp3(tmp_path / "lnp3.csv", weights=(1, 1, 0))
    np.testing.assert_allclose(weighted.y, 0.5 * norm[:, 0] + 0.5 * norm[:, 1], rtol=1e-12)


def test_loaders_refuse_bad_input_with_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="no CSV file"):
        load_crossed_barrel(tmp_path / "missing.csv")
    with pytest.raises(ValueError, match=r"expected the columns \['n', 'theta'"):
        load_crossed_barrel(_write(tmp_path / "x.csv", ["a", "b"], [[1, 2]]))
    with pytest.raises(ValueError, match="no row with numbers"):
        load_crossed_barrel(
            _write(tmp_path / "y.csv", ["n", "theta", "r", "t", "toughness"], [[1, 2, 3, 4, "x"]])
        )
    rows, _ = _lnp3_rows(np.random.default_rng(3))
    with pytest.raises(ValueError, match="768 complete rows"):
        load_lnp3(_write(tmp_path / "short.csv", None, rows[:-1]))
    bad = [r.copy() for r in rows]
    bad[5][1] = "Beeswax"
    with pytest.raises(ValueError, match="solid_lipid must be one of"):
        load_lnp3(_write(tmp_path / "lipid.csv", None, bad))
    off = [r.copy() for r in rows]
    off[0][0] = 7.0
    with pytest.raises(ValueError, match="drug_input must take the levels"):
        load_lnp3(_write(tmp_path / "off.csv", None, off))
    with pytest.raises(ValueError, match="weights"):
        load_lnp3(_write(tmp_path / "ok.csv", None, rows), weights=(0, 0, 0))
    with pytest.raises(ValueError, match="levels"):
        GridOracle([np.array([1.0])], np.zeros(1))


def _authors_fun():
    """The authors' ``fun`` package (Xinzhe309/LGBO), from a checkout outside the repository, or skip."""
    import os
    import sys
    from pathlib import Path

    root = Path(os.environ.get("ICLR26_LGBO_REPO", "/tmp/lgbo-authors-fun"))
    if not (root / "fun" / "tabular.py").is_file():
        pytest.skip(f"the authors' LGBO checkout is not at {root} (set ICLR26_LGBO_REPO)")
    sys.path.insert(0, str(root))
    try:
        from fun.lnp3 import DiscreteBONormalizer, LNP3Evaluator
        from fun.tabular import TabularEvaluator
    finally:
        sys.path.remove(str(root))
    return TabularEvaluator, LNP3Evaluator, DiscreteBONormalizer


def test_loaders_equal_the_authors_evaluators(tmp_path):
    TabularEvaluator, LNP3Evaluator, DiscreteBONormalizer = _authors_fun()
    rng = np.random.default_rng(4)
    cb_header = ["n", "theta", "r", "t", "toughness"]
    for _ in range(3):
        X = np.column_stack(
            [
                rng.choice([6, 8, 10, 12], 60),
                rng.uniform(0, 200, 60),
                rng.uniform(1.5, 2.5, 60),
                rng.uniform(0.7, 1.4, 60),
            ]
        )
        X[5] = X[4]  # a repeated input
        rows = [list(x) + [v] for x, v in zip(X, rng.uniform(0, 3, 60))]
        theirs = TabularEvaluator(_write(tmp_path / "cb.csv", cb_header, rows), cb_header[:4], "toughness")
        ours = load_crossed_barrel(_write(tmp_path / "raw.csv", None, rows))
        Q = np.vstack([rng.uniform(ours.bounds[0], ours.bounds[1], (20, 4)), X[:6]])
        expected = [theirs.evaluate_from_list(q)["toughness"] for q in Q]
        np.testing.assert_allclose(ours(Q), expected, rtol=0, atol=1e-12)
        levels = [[6.0, 8, 10, 12], np.sort(rng.uniform(0, 200, 5)), [1.5, 2, 2.5], [0.7, 1.0, 1.4]]
        grid = np.array(list(itertools.product(*levels)))
        rows = [list(x) + [v] for x, v in zip(grid, rng.normal(size=len(grid)))] + [list(grid[7]) + [5.0]]
        theirs = TabularEvaluator(_write(tmp_path / "g.csv", cb_header, rows), cb_header[:4], "toughness")
        ours = load_crossed_barrel(tmp_path / "g.csv")
        assert theirs.use_grid and isinstance(ours.oracle, GridOracle)
        Q = rng.uniform(ours.bounds[0] - 1, ours.bounds[1] + 1, (30, 4))
        expected = [theirs.evaluate_from_list(q)["toughness"] for q in Q]
        np.testing.assert_allclose(ours(Q), expected, rtol=0, atol=1e-12)
        # Concrete: their prepared file (Age <= 100 kept, Age dropped) against ours from the UCI layout
        Xc, age, strength = (
            rng.uniform(0, 500, (80, 7)),
            rng.choice([3, 28, 100, 365], 80),
            rng.uniform(5, 80, 80),
        )
        _write(
            tmp_path / "uci.csv",
            CONCRETE_UCI_COLUMNS,
            [list(x) + [a, s] for x, a, s in zip(Xc, age, strength)],
        )
        keep = age <= 100
        prepared = ["Cement", "Blast", "Fly", "Water", "Superplas", "CoarseAg", "FineAggr", "Strength"]
        _write(tmp_path / "c.csv", prepared, [list(x) + [s] for x, s in zip(Xc[keep], strength[keep])])
        theirs = TabularEvaluator(tmp_path / "c.csv", prepared[:7], "Strength", try_regular_grid=False)
        ours = load_concrete(tmp_path / "uci.csv")
        Q = np.vstack([rng.uniform(ours.bounds[0], ours.bounds[1], (20, 7)), Xc[keep][:5]])
        expected = [theirs.evaluate_from_list(q)["Strength"] for q in Q]
        np.testing.assert_allclose(ours(Q), expected, rtol=0, atol=1e-10)
        # LNP3: their unit-cube decoding, then their look-up and score
        rows, _ = _lnp3_rows(rng)
        rows = [rows[i] for i in rng.permutation(len(rows))]
        path = _write(tmp_path / "lnp3.csv", list(LNP3_COLUMNS), rows)
        theirs, decode, ours = LNP3Evaluator(path), DiscreteBONormalizer(), load_lnp3(path)
        halves = np.array(list(itertools.product([0, 1 / 6, 0.5, 5 / 6, 1], repeat=2)))[:, [0, 1, 1, 0, 1, 0]]
        U = np.vstack([rng.uniform(0, 1, (40, 6)), halves])
        expected = [theirs.evaluate_from_list(decode.denormalize_point(u))["total_score"] for u in U]
        np.testing.assert_allclose(ours(U), expected, rtol=0, atol=1e-12)
