"""IPW-weighted evaluation, bootstrap intervals, information gain and training helpers."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss, roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from iclr26.icym2i import (
    bootstrap,
    conditional_mi_from_samples,
    conditional_mutual_information,
    evaluate,
    fit_weighted,
    information_gain,
    weighted_mean_loss,
    weighted_metric,
)


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2))
    y = (rng.random(n) < 1 / (1 + np.exp(-2 * x[:, 0]))).astype(int)
    s = 1 / (1 + np.exp(-2 * x[:, 0]))
    return x, y, s


def test_integer_weights_equal_duplicated_rows():
    x, y, s = _data()
    w = np.random.default_rng(1).integers(1, 4, y.size).astype(float)
    rep = np.repeat(np.arange(y.size), w.astype(int))
    for metric in ("auroc", "average_precision", "log_loss", "accuracy"):
        assert weighted_metric(y, s, metric, w) == pytest.approx(
            weighted_metric(y[rep], s[rep], metric), abs=1e-10
        )
    assert weighted_metric(y, s) == pytest.approx(roc_auc_score(y, s))
    assert weighted_metric(y, s, "log_loss") == pytest.approx(log_loss(y, s))


def test_evaluate_intervals():
    x, y, s = _data()
    out = evaluate(y, s, np.ones(y.size), n_bootstrap=50, random_state=0)
    assert set(out) == {"auroc", "average_precision", "log_loss", "accuracy"}
    for est in out.values():
        assert est.ci_low <= est.value <= est.ci_high
        assert est.std > 0
    again = evaluate(y, s, n_bootstrap=50, random_state=0)
    assert again["auroc"] == out["auroc"]  # deterministic, and weights of 1 = unweighted


@pytest.mark.parametrize(
    "y, s, w, match",
    [
        ([0, 1, 1], [0.2, 0.7, 0.9], [1.0, 0.0, 1.0], "strictly positive"),
        ([0, 1, 1], [0.2, 0.7, 0.9], [1.0, -1.0, 1.0], "strictly positive"),
        ([0, 1, 1], [0.2, np.nan, 0.9], None, "NaN"),
        ([0, 1, 1], [0.2, 0.7, 0.9], [1.0, np.nan, 1.0], "NaN"),
        ([1, 1, 1], [0.2, 0.7, 0.9], None, "single class"),
        ([0, 1, 2], [0.2, 0.7, 0.9], None, "binary"),
        ([0, 1, 1], [0.2, 1.7, 0.9], None, r"\[0, 1\]"),
        ([0, 1, 1], [0.0, 0.7, 1.0], None, "log_loss"),
        ([0, 1, 1], [0.2, 0.7], None, "length"),
    ],
)
def test_evaluate_bad_inputs(y, s, w, match):
    with pytest.raises(ValueError, match=match):
        evaluate(y, s, w, n_bootstrap=5)


def test_bootstrap_named_and_validation():
    vals = np.arange(100.0)
    est = bootstrap(lambda i: {"mean": vals[i].mean(), "max": vals[i].max()}, 100, n_bootstrap=100)
    assert est["mean"].value == pytest.approx(49.5)
    assert est["mean"].covers(49.5)
    with pytest.raises(ValueError, match="confidence"):
        bootstrap(lambda i: 0.0, 10, confidence=1.5)
    with pytest.raises(ValueError, match="n_bootstrap"):
        bootstrap(lambda i: 0.0, 10, n_bootstrap=1)


def test_information_gain_and_cmi():
    rng = np.random.default_rng(0)
    n = 4000
    x1 = (rng.random(n) < 0.5).astype(int)
    x2 = (rng.random(n) < 0.5).astype(int)
    y = x1 ^ x2
    p_base = np.full(n, 0.5)  # p(y | x1) for XOR is 1/2
    p_full = np.where(y == 1, 1 - 1e-9, 1e-9)
    gain = information_gain(y, p_base, p_full, n_bootstrap=20)
    assert gain.value == pytest.approx(0.5, abs=1e-9)  # AUROC 0.5 -> 1
    cmi = conditional_mutual_information(y, p_base, p_full, n_bootstrap=20)
    assert cmi.value == pytest.approx(1.0, abs=1e-6)  # XOR: I(Y; X2 | X1) = 1 bit
    assert conditional_mi_from_samples(x1, x2, y) == pytest.approx(1.0, abs=1e-3)
    with pytest.raises(ValueError, match="metric"):
        information_gain(y, p_base, p_full, metric="f1")


def test_fit_weighted_matches_duplication_and_pipeline():
    x, y, _ = _data(300)
    w = np.random.default_rng(2).integers(1, 3, y.size).astype(float)
    rep = np.repeat(np.arange(y.size), w.astype(int))
    lr = LogisticRegression(C=1e6, max_iter=5000)
    a = fit_weighted(lr, x, y, w)
    b = fit_weighted(lr, x[rep], y[rep])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-3, atol=1e-4)
    pipe = fit_weighted(make_pipeline(StandardScaler(), lr), x, y, w)
    assert pipe.predict_proba(x).shape == (y.size, 2)
    with pytest.raises(ValueError, match="strictly positive"):
        fit_weighted(lr, x, y, np.zeros(y.size))
    with pytest.raises(ValueError, match="single class"):
        fit_weighted(lr, x, np.ones(y.size))


def test_weighted_mean_loss_numpy_and_torch():
    assert weighted_mean_loss(np.array([1.0, 3.0]), np.array([1.0, 3.0])) == pytest.approx(2.5)
    with pytest.raises(ValueError, match="strictly positive"):
        weighted_mean_loss(np.array([1.0, 3.0]), np.array([1.0, 0.0]))
    torch = pytest.importorskip("torch")
    z = torch.tensor([0.3, -1.0, 2.0], requires_grad=True)
    target = torch.tensor([1.0, 0.0, 1.0])
    per = torch.nn.functional.binary_cross_entropy_with_logits(z, target, reduction="none")
    loss = weighted_mean_loss(per, np.array([1.0, 2.0, 3.0]))
    loss.backward()
    assert z.grad is not None
    expected = float((per.detach() * torch.tensor([1.0, 2.0, 3.0])).sum() / 6.0)
    assert loss.item() == pytest.approx(expected)
    with pytest.raises(ValueError, match="shape"):
        weighted_mean_loss(per, np.ones(2))


def test_auroc_accepts_raw_decision_scores():
    rng = np.random.default_rng(0)
    y = (rng.random(300) < 0.5).astype(int)
    margin = 3 * (y - 0.5) + rng.normal(size=300)  # any real number
    prob = 1 / (1 + np.exp(-margin))
    assert weighted_metric(y, margin, "auroc") == pytest.approx(weighted_metric(y, prob, "auroc"))
    assert weighted_metric(y, margin, "average_precision") == pytest.approx(
        weighted_metric(y, prob, "average_precision")
    )
    with pytest.raises(ValueError, match="y_score"):
        weighted_metric(y, margin, "log_loss")
    est = evaluate(y, margin, metrics=("auroc",), n_bootstrap=20)
    assert est["auroc"].value == pytest.approx(weighted_metric(y, prob, "auroc"))
