import numpy as np
import pytest
from scipy.optimize import check_grad

from iclr26.m3_irt import M2IRT, M3IRT, TwoPL, _adam, _fit, simulate_m3irt


@pytest.fixture(scope="module")
def small():
    return simulate_m3irt(20, 40, 10, seed=3)


@pytest.mark.parametrize("kind", ["m3", "m2", "2pl"])
def test_gradient_matches_finite_differences(small, kind):
    """The objective whose projected gradient decides ``converged_`` for the Newton solver."""
    d, _ = small
    lay = _fit.Layout.build(d.group, d.r_text, d.r_image, d.n_items)
    obj = _fit.Objective(kind, d.values, ~np.isnan(d.values), lay, 1e-3)
    lo, hi = _fit.bounds(kind, d.n_models, lay, 4)
    x = np.random.default_rng(0).uniform(lo, hi)
    g = obj(x)[1]
    err = check_grad(lambda v: obj(v)[0], lambda v: obj(v)[1], x)
    assert err / np.linalg.norm(g) < 1e-4


@pytest.mark.parametrize("solver", ["authors", "newton"])
@pytest.mark.parametrize("cls", [M3IRT, M2IRT, TwoPL])
def test_fit_lowers_loss_and_respects_bounds(small, cls, solver):
    d, _ = small
    m = cls(scale=4.0, solver=solver).fit(d)
    lay = m._layout
    obj = _fit.Objective(m._kind, d.values, ~np.isnan(d.values), lay, 1e-3)
    x0 = np.clip(_adam.authors_initial(m._kind, d.n_models, lay), m._lo, m._hi)
    x = _fit.pack(m._kind, m._params)
    assert obj(x)[0] < obj(x0)[0] - 0.05
    assert np.all(x >= m._lo - 1e-9) and np.all(x <= m._hi + 1e-9)
    p = m.predict_proba()
    assert p.shape == d.shape and np.all((p > 0) & (p < 1))


def test_authors_bounds_m3():
    lay = _fit.Layout.build(np.array([0, 0]), np.array([1.0, 0]), np.array([1.0, 1]), 1)
    lo, hi = _fit.bounds("m3", 2, lay, 8)
    P_lo, P_hi = _fit.unpack("m3", lo, 2, lay), _fit.unpack("m3", hi, 2, lay)
    assert np.allclose(P_hi["theta"][:, 0], 0.1) and np.allclose(P_hi["theta"][:, 1:], 8)
    assert np.allclose(P_lo["B"][:, 0], 0) and np.allclose(P_lo["B"][:, 1:], -8)
    assert np.allclose(P_hi["B"][:, 1:], 0) and np.allclose(P_lo["A"], 1e-4)


def test_parameter_recovery_100_models_500_items():
    d, truth = simulate_m3irt(100, 500, seed=0)
    m = M3IRT().fit(d)
    for k, name in [(1, "text"), (2, "image"), (3, "cross")]:
        r = np.corrcoef(m.theta_[:, k], truth["theta"][:, k])[0, 1]
        assert r >= 0.9, (name, r)
    assert m.scale_ in (2.0, 4.0, 8.0, 16.0) and len(m.scale_search_) == 4


def test_heldout_auc_beats_chance(small):
    d, _ = small
    rng = np.random.default_rng(0)
    test = rng.random(d.shape) < 0.1
    m = M3IRT(scale=4.0).fit(d, mask=~test)
    assert m.score(d, mask=test) > 0.7


def test_errors(small):
    d, _ = small
    with pytest.raises(RuntimeError, match="not fitted"):
        M3IRT().predict_proba()
    with pytest.raises(ValueError, match="mask"):
        M3IRT(scale=2.0).fit(d, mask=np.ones((2, 2), bool))
    with pytest.raises(ValueError, match="scale"):
        M3IRT(scale_list=None).fit(d)
    with pytest.raises(ValueError, match="eps"):
        M3IRT(scale=2.0, eps=0.7).fit(d)
    with pytest.raises(ValueError, match="theta"):
        M3IRT(scale=2.0).fit(d).item_scores([0.1, 0.2])
