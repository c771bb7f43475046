"""TrainRef estimator: behaviour, fitted attributes, bad and degenerate input, co-evolving backbone."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.trainref import CuratedDataset, TrainRef, selected_clean_precision


@pytest.fixture(scope="module")
def fitted(digits_task):
    t = digits_task
    return TrainRef(n_rounds=2, random_state=0).fit(t.X, t.noisy, t.ref_X, t.ref_y, t.calib_X)


def test_attributes_and_shapes(fitted, digits_task):
    t, m = digits_task, fitted
    n, K = len(t.X), t.n_classes
    assert m.soft_labels_.shape == (n, K)
    for mask in (m.clean_mask_, m.noisy_mask_, m.ood_mask_, m.far_mask_):
        assert mask.shape == (n,) and mask.dtype == bool
    np.testing.assert_array_equal(m.noisy_mask_, ~m.clean_mask_)
    assert len(m.round_stats_) == 2 and m.round_stats_[1]["n_ref"] > m.round_stats_[0]["n_ref"]
    assert m.train_targets_.shape == (len(m.train_index_), K)
    np.testing.assert_allclose(m.train_targets_.sum(axis=1), 1.0)


def test_curated_set_follows_the_rules(fitted, digits_task):
    m, t = fitted, digits_task
    idx = m.train_index_
    clean_part = idx[m.clean_mask_[idx]]
    noisy_part = idx[~m.clean_mask_[idx]]
    assert not m.ood_mask_[idx].any()
    assert not m.far_mask_[noisy_part].any()
    ds = m.curate()
    assert isinstance(ds, CuratedDataset) and len(ds) == len(idx)
    x0, t0 = ds[0]
    assert x0.shape == (t.X.shape[1],) and t0.shape == (t.n_classes,)
    np.testing.assert_array_equal(ds.labels[: len(clean_part)], t.noisy[clean_part])


def test_clean_selection_is_precise_and_predictions_work(fitted, digits_task):
    t, m = digits_task, fitted
    prec = selected_clean_precision(m.clean_mask_, t.noisy, t.true)
    base = np.mean(t.noisy == t.true)
    assert prec > 0.9 > base + 0.3
    p = m.predict_proba(t.test_X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-6)
    assert np.mean(m.predict(t.test_X) == t.test_y) > 0.6


def test_reproducible(digits_task):
    t = digits_task
    a = TrainRef(n_rounds=1, head_epochs=3, checkpoint_every=1, random_state=5).fit(
        t.X, t.noisy, t.ref_X, t.ref_y
    )
    b = TrainRef(n_rounds=1, head_epochs=3, checkpoint_every=1, random_state=5).fit(
        t.X, t.noisy, t.ref_X, t.ref_y
    )
    np.testing.assert_array_equal(a.soft_labels_, b.soft_labels_)


def _small(t, **kw):
    return TrainRef(**{"n_rounds": 1, "head_epochs": 2, "checkpoint_every": 1, **kw})


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda a: a.update(noisy=np.where(a["noisy"] == 0, 12, a["noisy"])), "noisy_labels"),
        (lambda a: a.update(noisy=a["noisy"] - 1), "noisy_labels"),
        (lambda a: a.update(noisy=a["noisy"][:-1]), "noisy_labels"),
        (lambda a: a.update(X=np.where(np.eye(*a["X"].shape) > 0, np.nan, a["X"])), "X"),
        (lambda a: a.update(ref_X=a["ref_X"][:, :5]), "ref_X"),
        (lambda a: a.update(ref_y=a["ref_y"][:-1]), "ref_labels"),
        (lambda a: a.update(ref_y=np.where(a["ref_y"] == 3, 4, a["ref_y"])), "ref_labels.*class"),
        (lambda a: a.update(calib=a["calib"][:, :3]), "calibration_X"),
    ],
)
def test_bad_input(digits_task, change, match):
    t = digits_task
    args = {"X": t.X, "noisy": t.noisy, "ref_X": t.ref_X, "ref_y": t.ref_y, "calib": t.calib_X}
    change(args)
    with pytest.raises(ValueError, match=match):
        _small(t, n_classes=10).fit(args["X"], args["noisy"], args["ref_X"], args["ref_y"], args["calib"])


@pytest.mark.parametrize(
    "param, value",
    [
        ("n_rounds", 0),
        ("head_epochs", 1.5),
        ("clean_threshold", 2.0),
        ("ood_percentile", 101),
        ("knn", 0),
        ("n_classes", 1),
        ("mixup_alpha", -1.0),
        ("random_state", None),
    ],
)
def test_bad_params(digits_task, param, value):
    t = digits_task
    with pytest.raises(ValueError, match=param):
        _small(t, **{param: value}).fit(t.X, t.noisy, t.ref_X, t.ref_y)


def test_missing_class_allowed_warns(digits_task):
    t = digits_task
    keep = t.ref_y != 3
    with pytest.warns(UserWarning, match="no reference"):
        m = _small(t, allow_missing_classes=True, n_classes=10).fit(
            t.X, t.noisy, t.ref_X[keep], t.ref_y[keep]
        )
    assert np.all(m.soft_labels_[:, 3] == 0)


def test_no_clean_sample_warns(digits_task):
    t = digits_task
    with pytest.warns(UserWarning, match="clean"):
        m = _small(t, clean_threshold=1.0).fit(t.X, t.noisy, t.ref_X, t.ref_y)
    assert not m.ood_mask_.any()


def test_not_fitted():
    with pytest.raises(ValueError, match="not fitted"):
        TrainRef().predict_proba(np.zeros((2, 3)))


def test_co_evolving_backbone(digits_task):
    """With a torch backbone, each round fine-tunes it on the curated set and re-embeds the data."""
    import torch

    t = digits_task
    torch.manual_seed(0)
    backbone = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16))
    before = [p.detach().clone() for p in backbone.parameters()]
    m = TrainRef(
        n_rounds=2,
        head_epochs=3,
        checkpoint_every=1,
        finetune_epochs=1,
        augment_per_class=5,
        backbone=backbone,
    ).fit(t.X.astype(np.float32), t.noisy, t.ref_X, t.ref_y)
    assert m.embeddings_.shape == (len(t.X), 16)
    assert any(not torch.equal(a, b) for a, b in zip(before, backbone.parameters()))
    assert m.round_stats_[1]["n_ref"] == len(t.ref_y) + len(m.ref_index_)
    assert m.predict_proba(t.test_X).shape == (len(t.test_X), 10)


def test_sklearn_clone_and_params():
    from sklearn.base import clone

    est = TrainRef(n_rounds=3, knn=5)
    assert clone(est).get_params()["knn"] == 5 and "n_rounds=3" in repr(est)
