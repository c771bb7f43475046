"""Windows, features, vehicle-level folds and the four baselines on a tiny synthetic task."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.ch_batterygen import (
    CHANNELS,
    WindowSet,
    confusion_counts,
    evaluate_task,
    f1_from_confusion,
    macro_f1,
    make_model,
    vehicle_folds,
    vehicle_holdout,
    vehicle_vote,
    window_features,
)
from iclr26.ch_batterygen._benchmark import window_starts


def _toy(n_veh=16, per=6, t=32, seed=0):
    """Class 2 windows carry a current-proportional spread (a high-resistance signature)."""
    rng = np.random.default_rng(seed)
    xs, vs, cs, ss = [], [], [], []
    for v in range(n_veh):
        cat = v % 4
        for _ in range(per):
            x = rng.normal(0, 1, (t, len(CHANNELS)))
            x[:, 3] = rng.uniform(0, 2, t)
            x[:, 2] = 0.01 * rng.normal(size=t) + (0.5 * x[:, 3] if cat == 2 else 0.0) + 0.3 * (cat == 1)
            x[:, 1] += 0.8 * (cat == 3)
            xs.append(x)
            vs.append(f"v{v}")
            cs.append(cat)
            ss.append(0 if cat == 0 else 1 + v % 3)
    return WindowSet(np.stack(xs).astype(np.float32), np.array(vs), np.array(cs), np.array(ss))


def test_window_starts_and_features_shape():
    assert window_starts(10, 4, 3) == [0, 3, 6]
    assert window_starts(3, 4, 1) == []
    ws = _toy()
    f = window_features(ws.X)
    assert f.shape == (len(ws), 45) and np.isfinite(f).all()
    with pytest.raises(ValueError):
        window_features(ws.X[:, :, :5])


def test_vehicle_folds_keep_vehicles_together_and_cover_classes():
    ws = _toy()
    folds = vehicle_folds(ws.vehicle, ws.category, 2, seed=0)
    for v in np.unique(ws.vehicle):
        assert np.unique(folds[ws.vehicle == v]).shape[0] == 1
    for f in (0, 1):
        assert set(ws.category[folds == f]) == {0, 1, 2, 3}
    hold = vehicle_folds(ws.vehicle, ws.category, 1, seed=0)
    assert set(np.unique(hold)) == {-1, 0}


@pytest.mark.parametrize("name", ["RF", "SVM", "LSTM", "CNN"])
def test_models_learn_the_toy_task(name):
    ws = _toy(n_veh=24)
    res = evaluate_task(ws, "classification", models=(name,), n_folds=2, seed=0, max_epochs=60, patience=8)
    assert len(res) == 1 and res[0].n_windows == len(ws)
    # chance is 0.25; the LSTM separates the offset classes but not the current-correlated one as well
    bar = 0.45 if name == "LSTM" else 0.6
    assert res[0].f1 > bar, res[0].f1
    assert res[0].vehicle_f1 > 0.3 and set(res[0].vehicle) == set(ws.vehicle)
    for fold in res[0].extra["folds"]:  # each fold trained with a validation split of vehicles
        if name in ("LSTM", "CNN"):
            assert 1 <= fold["best_epoch"] <= fold["epochs_run"] <= 60
        if name == "SVM":
            assert fold["C"] in (1.0, 10.0, 100.0)


def test_grading_uses_faulty_vehicles_only_and_macro_f1():
    ws = _toy()
    res = evaluate_task(ws, "grading", models=("RF",), n_folds=2, seed=0)
    assert res[0].n_classes == 3 and res[0].n_windows == int((ws.category > 0).sum())
    assert macro_f1([0, 1, 2], [0, 1, 2], 3) == 1.0
    assert macro_f1([0, 0, 1, 1], [1, 1, 0, 0], 2) == 0.0
    with pytest.raises(ValueError):
        make_model("XGB")


def test_macro_f1_matches_sklearn_and_averages_over_all_classes():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(0)
    for _ in range(20):
        k = int(rng.integers(2, 6))
        t, p = rng.integers(0, k - 1, 30), rng.integers(0, k, 30)  # class k-1 may be absent from y_true
        ref = f1_score(t, p, labels=np.arange(k), average="macro", zero_division=0)
        assert macro_f1(t, p, k) == pytest.approx(ref, abs=1e-12)
    # a class absent from both counts as 0 in the mean (the docstring says so)
    assert macro_f1([0, 1], [0, 1], 3) == pytest.approx(2 / 3)
    assert confusion_counts([0, 1, 1], [1, 1, 0], 2).tolist() == [[0, 1], [1, 1]]
    with pytest.raises(ValueError, match="counts"):  # a negative count gave a negative F1
        f1_from_confusion(np.array([[-1, 2], [3, 4]]))
    with pytest.raises(ValueError, match="square"):  # a broadcasting error before
        f1_from_confusion(np.ones((2, 3)))
    with pytest.raises(ValueError, match="y_pred"):
        macro_f1([0, 1], [0, 5], 3)


def test_vehicle_vote_and_holdout():
    veh = np.array(["a", "a", "a", "b", "b", "c"])
    uniq, truth, vote = vehicle_vote(veh, np.array([1, 1, 1, 0, 0, 2]), np.array([1, 0, 1, 2, 0, 2]), 3)
    assert uniq.tolist() == ["a", "b", "c"] and truth.tolist() == [1, 0, 2]
    assert vote.tolist() == [1, 0, 2]  # b ties 0/2: the lower class wins
    ws = _toy(n_veh=20)
    held = vehicle_holdout(ws.vehicle, ws.category, 0.2, seed=1)
    for v in np.unique(ws.vehicle):
        assert np.unique(held[ws.vehicle == v]).shape[0] == 1  # whole vehicles
    assert set(ws.category[held]) == {0, 1, 2, 3}  # one vehicle of every class (5 each)
    assert np.unique(ws.vehicle[held]).shape[0] == 4
    with pytest.raises(ValueError, match="share"):
        vehicle_holdout(ws.vehicle, ws.category, 1.0, seed=0)


@pytest.mark.parametrize("name", ["RF", "SVM", "LSTM", "CNN"])
def test_a_nan_window_is_refused_by_every_model(name):
    ws = _toy()
    ws.X[5, 3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        evaluate_task(ws, "classification", models=(name,), n_folds=2, max_epochs=2)
    with pytest.raises(ValueError, match="NaN"):
        make_model(name, max_epochs=2).fit(ws.X, ws.category)


def test_early_stopping_restores_the_best_epoch():
    ws = _toy(n_veh=16)
    held = vehicle_holdout(ws.vehicle, ws.category, 0.25, seed=0)
    m = make_model("CNN", seed=0, max_epochs=60, patience=3)
    m.fit(ws.X[~held], ws.category[~held], ws.X[held], ws.category[held])
    assert m.info["epochs_run"] < 60  # stopped early on an easy task
    assert m.info["epochs_run"] - m.info["best_epoch"] == 3
    no_val = make_model("CNN", seed=0, max_epochs=4).fit(ws.X, ws.category)
    assert no_val.info == {"epochs_run": 4, "best_epoch": 4}
