"""Hostile inputs that used to give a silent wrong answer; each is now refused with a ``ValueError``."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.trainref import (
    TrainRef,
    detection_scores,
    influence_votes,
    js_divergence,
    reliability_curve,
    selected_clean_precision,
)


def _tiny(seed=0, n=40, d=3):
    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(n, d)), rng.integers(0, 3, n)
    return X, y, rng.normal(size=(6, d)), np.array([0, 1, 2, 0, 1, 2])


def _est(**kw):
    base = dict(n_rounds=1, head_epochs=2, checkpoint_every=1, n_checkpoints=2, knn=2, augment_per_class=2)
    return TrainRef(**{**base, **kw})


@pytest.mark.parametrize("n_bins", [0, -1, True])
def test_reliability_curve_rejects_bad_n_bins(n_bins):
    # used to return an empty curve (0, -1) or a single bin (True)
    with pytest.raises(ValueError, match="n_bins"):
        reliability_curve(np.array([[0.7, 0.3], [0.2, 0.8]]), [0, 1], n_bins=n_bins)


@pytest.mark.parametrize("flagged", [[0, 2, 1], [0.3, 0.0, 0.9], [np.nan, 0, 1], ["a", "", "b"]])
def test_detection_scores_rejects_non_boolean_masks(flagged):
    # used to cast to bool: indices, scores, NaN and strings all counted as "flagged"
    with pytest.raises(ValueError, match="flagged"):
        detection_scores(flagged, [1, 1, 0])
    assert detection_scores([1, 0, 1], [True, True, False])["precision"] == 0.5


def test_selected_clean_precision_rejects_indices_for_a_mask():
    # row indices [0, 2, 1] used to be read as the mask [False, True, True]
    with pytest.raises(ValueError, match="selected"):
        selected_clean_precision([0, 2, 1], [0, 1, 2], [0, 1, 1])


def test_js_divergence_rejects_rows_whose_sum_overflows():
    # [1e308, 1e308] used to normalise to [0, 0] and give 0.5 instead of JS([.5, .5], [1, 0]) = 0.311
    with pytest.raises(ValueError, match="overflow"):
        js_divergence([[1e308, 1e308]], [[1.0, 0.0]])


@pytest.mark.parametrize("scale, match", [(1e200, "overflow"), (1e-200, "underflow")])
def test_influence_votes_rejects_embeddings_whose_norms_over_or_underflow(scale, match):
    # used to return all-zero votes (the cosines became 0)
    rng = np.random.default_rng(0)
    emb, logits = rng.normal(size=(4, 3)), rng.normal(size=(2, 4, 2))
    ref, ref_logits = rng.normal(size=(2, 3)), rng.normal(size=(2, 2, 2))
    with pytest.raises(ValueError, match=f"train_emb.*{match}"):
        influence_votes(emb * scale, logits, ref, [0, 1], 2, ref_logits_per_ckpt=ref_logits)


def test_influence_votes_rejects_embeddings_without_features():
    # (n, 0) embeddings used to give all-zero votes
    with pytest.raises(ValueError, match="train_emb.*feature"):
        influence_votes(
            np.zeros((4, 0)),
            np.zeros((4, 2)),
            np.zeros((2, 0)),
            [0, 1],
            2,
            ref_logits_per_ckpt=np.zeros((2, 2)),
        )


@pytest.mark.parametrize("param", ["allow_missing_classes", "keep_zero_votes"])
def test_flags_must_be_booleans(param):
    # the string "no" used to be truthy: a missing class accepted, zero votes kept
    X, y, RX, ry = _tiny()
    with pytest.raises(ValueError, match=param):
        _est(**{param: "no"}).fit(X, y, RX, ry)


def test_negative_random_state_is_refused_naming_it():
    # used to fail inside numpy with "expected non-negative integer", not naming the parameter
    X, y, RX, ry = _tiny()
    with pytest.raises(ValueError, match="random_state"):
        _est(random_state=-1).fit(X, y, RX, ry)


def test_fit_rejects_rows_without_features():
    # used to fit silently: zero votes, an empty curated set, an untrained classifier
    X, y, RX, ry = _tiny()
    with pytest.raises(ValueError, match="X.*feature"):
        _est().fit(X[:, :0], y, RX[:, :0], ry)


@pytest.mark.parametrize("scale, match", [(1e39, "float32"), (1e25, "diverged")])
def test_fit_rejects_embeddings_that_make_torch_overflow(scale, match):
    # used to return NaN soft labels, no clean sample and NaN predictions
    X, y, RX, ry = _tiny()
    with pytest.raises(ValueError, match=match):
        _est().fit(X * scale, y, RX * scale, ry)


def test_fit_rejects_a_diverging_classifier():
    # classifier_lr=1e30 used to give a model whose predict_proba is all NaN
    X, y, RX, ry = _tiny()
    with pytest.raises(ValueError, match="classifier_lr"):
        _est(classifier_lr=1e30).fit(X, y, RX, ry)


def test_predict_rejects_inputs_unlike_the_training_data():
    X, y, RX, ry = _tiny()
    est = _est().fit(X, y, RX, ry)
    with pytest.raises(ValueError, match="X must have rows shaped"):  # used to be torch's RuntimeError
        est.predict(X[:, :2])
    with pytest.raises(ValueError, match="X"):  # used to return NaN probabilities
        est.predict_proba(X[:2] * 1e39)
    p = est.predict_proba(X)
    assert np.isfinite(p).all() and np.allclose(p.sum(axis=1), 1.0)
