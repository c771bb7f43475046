"""The authors' solver, convergence, standard errors and the scikit-learn-style API."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone

from iclr26.m3_irt import (
    M2IRT,
    M3IRT,
    TwoPL,
    WeakIdentificationWarning,
    _adam,
    _fit,
    as_response_matrix,
    simulate_m3irt,
)


@pytest.fixture(scope="module")
def small():
    return simulate_m3irt(20, 40, 10, seed=3)


def _torch_reference(kind, d, scale, epochs):
    """The authors' training loop re-stated in PyTorch (autograd, clamps, clip_grad_norm_, Adam)."""
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    lay = _fit.Layout.build(d.group, d.r_text, d.r_image, d.n_items)
    Y = torch.tensor(np.nan_to_num(d.values), dtype=torch.float64)
    obs = torch.tensor(~np.isnan(d.values))
    R = torch.tensor(lay.R)
    grp = torch.tensor(lay.group)
    n, g = d.n_models, d.n_items
    th = torch.full((n, 4), 0.5, dtype=torch.float64, requires_grad=True)
    A = torch.full((g, 4), 0.2, dtype=torch.float64, requires_grad=True)
    B = torch.zeros((g, 4), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([th, A, B], lr=0.01)
    eps = 1e-3
    for _ in range(epochs):
        opt.zero_grad()
        W = A[grp] * R
        b = (B[grp] * R).sum(1)
        if kind == "m3":
            z = th @ W.T - b
        else:
            z = (th @ R.T) * W.sum(1) - b
        p = torch.clamp(torch.sigmoid(torch.clamp(z, -15, 15)), eps, 1 - eps)
        loss = -(Y * torch.log(p) + (1 - Y) * torch.log(1 - p))[obs].mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_([th, A, B], 1.0)
        opt.step()
        with torch.no_grad():
            th.clamp_(1e-4 if kind == "m3" else 0.0, scale)
            th[:, 0].clamp_(1e-4 if kind == "m3" else 0.0, 0.1)
            A.clamp_(1e-4, scale)
            B[:, 0].clamp_(0, scale)
            B[:, 1:].clamp_(-scale, 0)
    return np.concatenate([t.detach().numpy().ravel() for t in (th, A, B)])


@pytest.mark.parametrize("kind", ["m3", "m2"])
def test_authors_solver_matches_their_training_loop(small, kind):
    d, _ = small
    lay = _fit.Layout.build(d.group, d.r_text, d.r_image, d.n_items)
    lo, hi = _fit.bounds(kind, d.n_models, lay, 4.0)
    ref = _torch_reference(kind, d, 4.0, 60)
    x = _adam.adam(kind, d.values, ~np.isnan(d.values), lay, lo, hi, 1e-3, max_epochs=60, dtype=np.float64)[0]
    np.testing.assert_allclose(x, ref, atol=1e-6)


@pytest.mark.parametrize("kind", ["m3", "m2"])
def test_authors_solver_on_an_irregular_layout(kind):
    """Items missing variants, an item with two columns of one variant, shuffled columns, missing
    cells: the block layout of the fast path must still give the authors' loop."""
    rng = np.random.default_rng(5)
    group = np.array([0, 0, 0, 0, 1, 1, 2, 2, 2, 3, 4, 4, 4, 4, 4])
    r_text = np.array([1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1])
    r_image = np.array([1, 0, 1, 0, 1, 1, 1, 1, 0, 0, 1, 0, 1, 0, 1])
    perm = rng.permutation(group.size)
    Y = (rng.random((9, group.size)) < 0.6).astype(float)
    Y[rng.random(Y.shape) < 0.1] = np.nan
    d = as_response_matrix(Y, group[perm], r_text[perm], r_image[perm])
    lay = _fit.Layout.build(d.group, d.r_text, d.r_image, d.n_items)
    lo, hi = _fit.bounds(kind, d.n_models, lay, 4.0)
    ref = _torch_reference(kind, d, 4.0, 60)
    x = _adam.adam(kind, d.values, ~np.isnan(d.values), lay, lo, hi, 1e-3, max_epochs=60, dtype=np.float64)[0]
    np.testing.assert_allclose(x, ref, atol=1e-6)


def test_authors_solver_is_deterministic_and_seed_free(small):
    d, _ = small
    a = M3IRT(scale=4.0, random_state=0).fit(d)
    b = M3IRT(scale=4.0, random_state=7).fit(d)
    np.testing.assert_array_equal(a.theta_, b.theta_)
    assert a.solver == "authors" and a.n_iter_ == 500


def test_converged_means_a_vanishing_projected_gradient(small):
    d, _ = small
    short = M3IRT(scale=4.0, solver="newton", max_iter=1).fit(d)
    assert not short.converged_ and short.projected_gradient_ > 1e-4
    full = M3IRT(scale=4.0, solver="newton").fit(d)
    assert full.converged_ and full.projected_gradient_ < 1e-4


def test_m2irt_newton_fits_at_least_as_well_as_the_authors_optimiser(small):
    """The M2-IRT fit used to stop early (loss above the authors'); ML Newton now goes below it."""
    d, _ = small
    ml = M2IRT(scale=4.0, solver="newton", prior_precision=0.0).fit(d)
    adam = M2IRT(scale=4.0, solver="authors").fit(d)
    assert ml.loss_ <= adam.loss_ + 1e-6
    assert ml.theta_[:, 3].std() > 0.01  # the cross-modal ability does not collapse to a constant


def test_standard_errors_and_weak_identification(small):
    d, _ = small
    m = M3IRT(scale=4.0).fit(d)
    assert m.theta_se_.shape == (20, 4) and np.all(np.isfinite(m.theta_se_)) and np.all(m.theta_se_ > 0)
    # the more items, the smaller the standard errors
    big, _ = simulate_m3irt(20, 200, seed=3)
    assert np.median(M3IRT(scale=4.0).fit(big).theta_se_[:, 1:]) < np.median(m.theta_se_[:, 1:])
    # three items cannot pin down four abilities per model
    tiny = d.take_items(np.arange(3))
    with pytest.warns(WeakIdentificationWarning, match="weakly identified"):
        M3IRT(scale=4.0).fit(tiny)


def test_sklearn_conventions_and_new_rows(small, tmp_path):
    d, _ = small
    est = M3IRT(scale=2.0, solver="newton", prior_precision=0.5)
    c = clone(est)
    assert c.get_params() == est.get_params()
    c.set_params(solver="authors")
    assert c.solver == "authors" and est.solver == "newton"
    train = d.take_models(np.arange(16))
    m = M3IRT(scale=4.0).fit(train)
    new = d.values[16:]
    proba = m.predict_proba(new)
    assert proba.shape == (4, d.shape[1])
    from sklearn.metrics import roc_auc_score

    ok = ~np.isnan(new)
    assert roc_auc_score(new[ok], proba[ok]) > 0.7
    assert m.transform(new).shape == (4, 4)
    # predict_proba of the fitted rows' own responses is close to the fitted probabilities
    assert np.corrcoef(m.predict_proba(train.values).ravel(), m.predict_proba().ravel())[0, 1] > 0.95
    ab, it = m.abilities_frame(), m.items_frame()
    assert list(ab.index) == train.models and list(it.index) == train.items
    assert {"cross", "se_cross"} <= set(ab.columns) and {"a_cross", "b_base"} <= set(it.columns)
    path = m.save(tmp_path / "m.npz")
    back = M3IRT.load(path)
    np.testing.assert_array_equal(back.predict_proba(), m.predict_proba())
    assert back.get_params() == m.get_params() and back.models_ == m.models_
    with pytest.raises(ValueError, match="holds a M3IRT"):
        TwoPL.load(path)
    with pytest.raises(ValueError, match="columns"):
        m.predict_proba(new[:, :5])


def test_boolean_matrix_and_degenerate_inputs(small):
    d, _ = small
    Y = np.nan_to_num(d.values).astype(bool)
    a = M3IRT(scale=4.0).fit(Y, group=d.group, r_text=d.r_text, r_image=d.r_image)
    b = M3IRT(scale=4.0).fit(Y.astype(float), group=d.group, r_text=d.r_text, r_image=d.r_image)
    np.testing.assert_array_equal(a.theta_, b.theta_)
    with pytest.raises(ValueError, match="only wrong"):
        M3IRT(scale=4.0).fit(np.zeros((5, 8)))
    with pytest.raises(ValueError, match="at least 2 models"):
        M3IRT(scale=4.0).fit(np.ones((1, 8)))
    with pytest.raises(ValueError, match="scale search"):
        M3IRT(val_fraction=0.6).fit(np.array([[1.0, 0, 1], [0, 1, 1]]))
    Yc = np.nan_to_num(d.values)
    Yc[:, 0] = 1
    with pytest.warns(UserWarning, match="all observed responses equal"):
        M3IRT(scale=4.0).fit(Yc, group=d.group, r_text=d.r_text, r_image=d.r_image)


def test_argument_validation(small):
    d, _ = small
    m = M3IRT(scale=4.0).fit(d)
    with pytest.raises(ValueError, match="mask"):
        m.score(d, mask=np.ones((2, 2), bool))
    with pytest.raises(ValueError, match="items"):
        m.fit_theta(d.values[0], items=[999])
    with pytest.raises(ValueError, match="solver"):
        M3IRT(scale=4.0, solver="lbfgs").fit(d)
    with pytest.raises(ValueError, match="prior_precision"):
        M3IRT(scale=4.0, solver="newton", prior_precision=-1).fit(d)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert 0.5 < m.score(d) <= 1.0


def test_cli_fit_writes_tables_and_model(small, tmp_path, capsys):
    import pandas as pd

    from iclr26.cli import main

    d, _ = small
    csv = tmp_path / "responses.csv"
    d.to_frame().to_csv(csv)
    out = tmp_path / "fit"
    assert main(["m3-irt", "fit", str(csv), "--out", str(out), "--scale", "4"]) == 0
    ab = pd.read_csv(out / "abilities.csv", index_col=0)
    assert list(ab.index) == d.models and {"cross", "se_cross"} <= set(ab.columns)
    assert len(pd.read_csv(out / "items.csv", index_col=0)) == d.n_items
    assert M3IRT.load(out / "model.npz").n_models_ == d.n_models
    assert main(["m3-irt", "fit", str(tmp_path / "absent.csv")]) == 2
    assert "absent.csv" in capsys.readouterr().err


def test_scale_search_reuse_is_exact(small, monkeypatch):
    """Scales above the largest value Adam ever tried get the largest scale's fit: same result as
    fitting every scale."""
    d, _ = small
    fast = M3IRT().fit(d)
    monkeypatch.setattr(M3IRT, "_search_fits", lambda self, *a: {})
    slow = M3IRT().fit(d)
    assert fast.scale_search_ == slow.scale_search_
    np.testing.assert_array_equal(fast.theta_, slow.theta_)
