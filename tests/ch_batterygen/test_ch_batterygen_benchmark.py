"""Windows, features, vehicle-level folds and the four baselines on a tiny synthetic task."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.ch_batterygen import (
    CHANNELS,
    WindowSet,
    evaluate_task,
    macro_f1,
    make_model,
    vehicle_folds,
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
    ws = _toy()
    res = evaluate_task(ws, "classification", models=(name,), n_folds=2, seed=0, epochs=15)
    assert len(res) == 1 and res[0].n_windows == len(ws)
    assert res[0].f1 > 0.6, res[0].f1  # chance is 0.25


def test_grading_uses_faulty_vehicles_only_and_macro_f1():
    ws = _toy()
    res = evaluate_task(ws, "grading", models=("RF",), n_folds=2, seed=0)
    assert res[0].n_classes == 3 and res[0].n_windows == int((ws.category > 0).sum())
    assert macro_f1([0, 1, 2], [0, 1, 2], 3) == 1.0
    assert macro_f1([0, 0, 1, 1], [1, 1, 0, 0], 2) == 0.0
    with pytest.raises(ValueError):
        make_model("XGB")
