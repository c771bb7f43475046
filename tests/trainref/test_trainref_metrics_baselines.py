"""Metrics against hand-computed values, data/noise models, and the baselines' contracts."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.trainref import (
    accuracy,
    brier,
    classwise_ece,
    detection_scores,
    expected_calibration_error,
    js_divergence,
    nll,
    selected_clean_precision,
)
from iclr26.trainref import baselines as B
from iclr26.trainref.data import blend, noisy_labels


def test_metrics_hand_values():
    p = np.array([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]])
    y = np.array([0, 1, 1])
    assert accuracy(p, y) == pytest.approx(2 / 3)
    # bins: 0.9 -> hit 1, 0.6 -> hit 0, 0.8 -> hit 1 (all different bins)
    assert expected_calibration_error(p, y) == pytest.approx((0.1 + 0.6 + 0.2) / 3)
    assert nll(p, y) == pytest.approx(-np.mean(np.log([0.9, 0.4, 0.8])))
    assert brier(p, y) == pytest.approx(np.mean([0.02, 0.72, 0.08]))
    assert 0 <= classwise_ece(p, y) <= 1
    assert expected_calibration_error(np.eye(3), [0, 1, 2]) == 0.0


def test_detection_and_precision():
    s = detection_scores([1, 1, 0, 0], [1, 0, 1, 0])
    assert s == {"precision": 0.5, "recall": 0.5, "f1": 0.5}
    assert selected_clean_precision([True, True, False], [0, 1, 2], [0, 0, 2]) == 0.5
    assert np.isnan(selected_clean_precision([False, False], [0, 1], [0, 1]))


def test_js_divergence():
    p = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 0.0]])
    q = np.array([[0.0, 1.0], [0.5, 0.5], [0.5, 0.5]])
    js = js_divergence(p, q)
    assert js[0] == pytest.approx(1.0) and js[1] == pytest.approx(0.0) and np.isnan(js[2])


@pytest.mark.parametrize("bad", [np.array([[0.5, 0.6]]), np.array([[np.nan, 1.0]])])
def test_metrics_reject_bad_probabilities(bad):
    with pytest.raises(ValueError, match="proba"):
        accuracy(bad, [0])


def test_noise_models():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 10, 20000)
    sym = noisy_labels(y, 10, "symmetric", 0.5, rng)
    assert np.mean(sym != y) == pytest.approx(0.5, abs=0.02)
    pair = noisy_labels(y, 10, "pairflip", 0.4, rng)
    changed = pair != y
    assert np.mean(changed) == pytest.approx(0.4, abs=0.02) and np.all(pair[changed] == (y[changed] + 1) % 10)
    with pytest.raises(ValueError, match="noise"):
        noisy_labels(y, 10, "other", 0.1, rng)
    with pytest.raises(ValueError, match="rate"):
        noisy_labels(y, 10, "symmetric", 1.5, rng)


def test_blend_distributions():
    rng = np.random.default_rng(1)
    X = rng.random((50, 4))
    y = np.arange(50) % 5
    Xb, dist, given = blend(X, y, 30, rng)
    np.testing.assert_allclose(dist.sum(axis=1), 1.0)
    assert np.all((dist > 0).sum(axis=1) == 2) and np.all(dist[np.arange(30), given] > 0)


@pytest.mark.parametrize("name", B.NAMES)
def test_baselines_fit_and_predict(digits_task, name):
    if name == "cleanlab":
        pytest.importorskip("cleanlab")
    t = digits_task
    fit = B.fit_baseline(name, t.X, t.noisy, 10, ref_Z=t.ref_X, ref_labels=t.ref_y, epochs=12, seed=0)
    p = fit.predict_proba(t.test_X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-5)
    assert accuracy(p, t.test_y) > 0.5
    if name in ("cleanlab", "dividemix", "disc"):
        assert fit.selected is not None and fit.selected.shape == (len(t.X),)


def test_baseline_bad_input(digits_task):
    t = digits_task
    with pytest.raises(ValueError, match="name"):
        B.fit_baseline("nope", t.X, t.noisy, 10)
    with pytest.raises(ValueError, match="noisy_labels"):
        B.fit_baseline("ce", t.X, t.noisy + 10, 10)


def test_simclr_cnn_embeds_and_validates(tmp_path, monkeypatch):
    from iclr26.trainref.data import embed, simclr_cnn

    monkeypatch.setenv("ICLR26_CACHE", str(tmp_path))
    images = np.random.default_rng(0).random((64, 784))
    cnn = simclr_cnn(images, epochs=1, seed=0)
    Z = embed(cnn, images)
    assert Z.shape == (64, 64) and np.all(np.isfinite(Z))
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=1e-4)  # standardised on its pre-training images
    again = embed(simclr_cnn(images, epochs=1, seed=0), images)  # from the cache
    np.testing.assert_allclose(Z, again, atol=1e-6)
    with pytest.raises(ValueError, match="images"):
        simclr_cnn(np.zeros((4, 10)))
    with pytest.raises(ValueError, match="epochs"):
        simclr_cnn(images, epochs=0)
