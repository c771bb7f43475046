"""The fault-diagnosis benchmark: windows by vehicle, features, the four baselines, macro-F1.

Tasks (per chemistry x scenario, as in the paper): *fault classification* (4 classes: normal,
self-discharge, high resistance, low capacity) on all vehicles, and *fault grading* (severity 1..3) on
the faulty vehicles. Labels are vehicle-level (as released); every window inherits its vehicle's label,
and the train/test split is by vehicle, so no vehicle has windows on both sides. Scores are given per
window and per vehicle (majority vote of its windows).

Training budget (the same rule for every model): each training fold holds out a stratified share of
its *vehicles* as a validation split. The networks train until the validation loss has not improved for
``patience`` epochs (at most ``max_epochs``) and keep their best epoch; the SVM picks its ``C`` on the
validation split and is refitted on all training vehicles; the random forest (no tuned parameter) is fitted
on all training vehicles.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..validation import check_array, check_in, check_int, check_labels
from ._gaps import GapReport, clean_segment
from ._schema import CATEGORIES, CHEMISTRIES, SCENARIOS, volt_columns_of

#: The per-time-step channels fed to the sequence models (and summarised for RF/SVM).
CHANNELS = ("v_mean", "v_max_minus_mean", "v_mean_minus_min", "current", "t_max", "t_min", "soc")
MODELS = ("RF", "SVM", "LSTM", "CNN")
TASKS = ("classification", "grading")


def segment_channels(frame: pd.DataFrame) -> np.ndarray:
    """The :data:`CHANNELS` of one release-schema segment, shape ``(T, 7)``, float32.

    The mean cell voltage is the mean of the ``VOLT_n`` columns (``SUM_VOLTAGE / N`` if they are
    absent); cell voltages enter as the spread of the highest and lowest cell around the mean.
    """
    vcols = volt_columns_of(frame.columns)
    n_cells = len(vcols)
    if n_cells > 1:
        v_mean = frame[vcols].to_numpy(dtype=np.float64).mean(axis=1)
    else:
        v_mean = frame["SUM_VOLTAGE"].to_numpy(dtype=np.float64) / max(n_cells, 1)
    x = np.stack(
        [
            v_mean,
            frame["MAX_CELL_VOLT"].to_numpy(dtype=np.float64) - v_mean,
            v_mean - frame["MIN_CELL_VOLT"].to_numpy(dtype=np.float64),
            frame["SUM_CURRENT"].to_numpy(dtype=np.float64),
            frame["MAX_TEMP"].to_numpy(dtype=np.float64),
            frame["MIN_TEMP"].to_numpy(dtype=np.float64),
            frame["SOC"].to_numpy(dtype=np.float64) / 100.0,
        ],
        axis=1,
    )
    return x.astype(np.float32)


@dataclass
class WindowSet:
    """Fixed-length windows cut from segments.

    ``X (n, window, 7)``; ``vehicle (n,)`` vehicle keys; ``category (n,)`` class index into
    :data:`CATEGORIES`; ``severity (n,)`` 0 for normal, 1..3 (-1 unknown); ``gaps``: what the gap policy
    did to the segments the windows came from (see :func:`clean_segment`).
    """

    X: np.ndarray
    vehicle: np.ndarray
    category: np.ndarray
    severity: np.ndarray
    gaps: GapReport = field(default_factory=GapReport)

    def __len__(self) -> int:
        return int(self.X.shape[0])

    def subset(self, mask: np.ndarray) -> WindowSet:
        m = mask
        return WindowSet(self.X[m], self.vehicle[m], self.category[m], self.severity[m], self.gaps)


def window_starts(length: int, window: int, stride: int) -> list[int]:
    """Start indices of the windows of a series of ``length`` (none when it is shorter than ``window``)."""
    if length < window:
        return []
    return list(range(0, length - window + 1, stride))


def make_windows(
    dataset,
    chemistry: str,
    scenario: str,
    window: int = 128,
    stride: int = 64,
    max_interp_rows: int = 3,
    max_gap_s: float = 60.0,
) -> WindowSet:
    """Cut every segment of ``chemistry`` x ``scenario`` of a :class:`BatteryDataset` into windows.

    Each segment first goes through the gap policy (:func:`clean_segment`: gaps of up to
    ``max_interp_rows`` rows interpolated, the segment split at longer gaps and at time jumps over
    ``max_gap_s``); windows never cross segments or splits, pieces shorter than ``window`` give none. The
    counts are in ``WindowSet.gaps``. ``chemistry`` must be ``"LFP"`` or ``"NCM"``.
    """
    check_in(chemistry, CHEMISTRIES, "chemistry")
    check_in(scenario, SCENARIOS, "scenario")
    window = check_int(window, "window", minimum=8)
    stride = check_int(stride, "stride", minimum=1)
    veh = dataset.vehicles.set_index(["chemistry", "vin"])
    xs, vs, cs, ss = [], [], [], []
    report = GapReport()
    for ref in dataset.select(chemistry=chemistry, scenario=scenario):
        pieces, rep = clean_segment(dataset.read(ref), max_interp_rows=max_interp_rows, max_gap_s=max_gap_s)
        report.add(rep)
        sev = int(veh.loc[(ref.chemistry, ref.vin), "severity"])
        for piece in pieces:
            ch = segment_channels(piece)
            starts = window_starts(ch.shape[0], window, stride)
            for s in starts:
                xs.append(ch[s : s + window])
            m = len(starts)
            vs += [f"{ref.chemistry}/{ref.vin}"] * m
            cs += [CATEGORIES.index(ref.category)] * m
            ss += [sev] * m
    if not xs:
        return WindowSet(
            np.zeros((0, window, len(CHANNELS)), np.float32),
            np.zeros(0, str),
            np.zeros(0, int),
            np.zeros(0, int),
            report,
        )
    return WindowSet(
        np.stack(xs), np.asarray(vs), np.asarray(cs, dtype=np.int64), np.asarray(ss, dtype=np.int64), report
    )


def _slope(y: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-row least-squares slope of ``y`` on ``x`` and the R^2 (rows are windows)."""
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    sxx = (xc * xc).sum(axis=1) + 1e-9
    sxy = (xc * yc).sum(axis=1)
    syy = (yc * yc).sum(axis=1) + 1e-12
    return sxy / sxx, sxy * sxy / (sxx * syy)


def window_features(X: np.ndarray) -> np.ndarray:
    """Hand-made features for RF/SVM from windows ``X (n, T, 7)``: shape ``(n, 45)``.

    Per channel: mean, std, min, max, last - first (35). Physics-motivated: the slope (and R^2) of the
    lowest and highest cell's spread on the pack current (the extra IR drop of a high-resistance cell),
    their time trends (the drift of a leaking cell), and their slope on SOC (a low-capacity cell swings
    faster) (10).
    """
    X = check_array(X, "X", ndim=3, dtype=np.float64)
    if X.shape[2] != len(CHANNELS):
        raise ValueError(f"X must have {len(CHANNELS)} channels {CHANNELS}, got {X.shape[2]}")
    n, t, _ = X.shape
    stats = [X.mean(1), X.std(1), X.min(1), X.max(1), X[:, -1] - X[:, 0]]
    cur, soc = X[:, :, 3], X[:, :, 6]
    time = np.broadcast_to(np.arange(t, dtype=np.float64), (n, t))
    extra = []
    for ch in (1, 2):
        s_i, r2_i = _slope(X[:, :, ch], cur)
        s_t, _ = _slope(X[:, :, ch], time)
        s_s, _ = _slope(X[:, :, ch], soc)
        extra += [s_i * 1e3, r2_i, s_t * 1e3, s_s, X[:, :, ch].max(1) - X[:, :, ch].min(1)]
    return np.concatenate([*stats, np.stack(extra, axis=1)], axis=1)


def vehicle_folds(vehicle: np.ndarray, strata: np.ndarray, n_folds: int, seed: int) -> np.ndarray:
    """A fold index per window such that all windows of one vehicle share a fold.

    Vehicles are shuffled within each stratum (their label) and dealt round-robin to the folds, so every
    fold sees every class. ``n_folds=1`` is a 70/30 hold-out: fold 0 = test, -1 = train-only.
    """
    vehicle = np.asarray(vehicle)
    strata = np.asarray(strata)
    rng = np.random.default_rng([int(seed), 424242])
    uniq, first = np.unique(vehicle, return_index=True)
    v_strat = strata[first]
    v_fold = np.empty(uniq.shape[0], dtype=np.int64)
    offset = 0
    for s in np.unique(v_strat):
        idx = np.flatnonzero(v_strat == s)
        idx = idx[rng.permutation(idx.shape[0])]
        if n_folds == 1:
            n_test = max(1, int(round(0.3 * idx.shape[0]))) if idx.shape[0] > 1 else 0
            v_fold[idx] = -1
            v_fold[idx[:n_test]] = 0
        else:
            v_fold[idx] = (np.arange(idx.shape[0]) + offset) % n_folds
            offset += idx.shape[0]
    pos = np.searchsorted(uniq, vehicle)
    return v_fold[pos]


def vehicle_holdout(vehicle: np.ndarray, strata: np.ndarray, share: float, seed: int) -> np.ndarray:
    """A mask of the windows of a stratified ``share`` of the vehicles (the validation split).

    Per stratum with at least 2 vehicles, ``max(1, round(share * n))`` of them (never all) are held out;
    a stratum with a single vehicle stays in training.
    """
    if not 0.0 < share < 1.0:
        raise ValueError(f"share must be in (0, 1), got {share!r}")
    vehicle = np.asarray(vehicle)
    strata = np.asarray(strata)
    rng = np.random.default_rng([int(seed), 171717])
    uniq, first = np.unique(vehicle, return_index=True)
    v_strat = strata[first]
    held = np.zeros(uniq.shape[0], dtype=bool)
    for st in np.unique(v_strat):
        idx = np.flatnonzero(v_strat == st)
        if idx.shape[0] < 2:
            continue
        k = min(idx.shape[0] - 1, max(1, int(round(share * idx.shape[0]))))
        held[rng.permutation(idx)[:k]] = True
    return held[np.searchsorted(uniq, vehicle)]


def confusion_counts(y_true, y_pred, n_classes: int) -> np.ndarray:
    """The ``(n_classes, n_classes)`` confusion matrix (rows: true class, columns: predicted)."""
    y_true = check_labels(y_true, name="y_true")
    y_pred = check_labels(y_pred, n=y_true.shape[0], name="y_pred")
    n_classes = check_int(n_classes, "n_classes", minimum=1)
    for name, y in (("y_true", y_true), ("y_pred", y_pred)):
        if y.size and (y.min() < 0 or y.max() >= n_classes):
            raise ValueError(f"{name} must hold class indices in [0, {n_classes}), got {y.min()}..{y.max()}")
    flat = np.bincount(y_true * n_classes + y_pred, minlength=n_classes * n_classes)
    return flat.reshape(n_classes, n_classes)


def f1_from_confusion(confusion: np.ndarray) -> float:
    """Macro-F1 of a confusion matrix: the mean over all its classes of ``2 TP / (2 TP + FP + FN)``,
    0 for a class with no true and no predicted sample."""
    c = np.asarray(confusion, dtype=np.float64)
    if c.ndim != 2 or c.shape[0] != c.shape[1] or c.shape[0] == 0:
        raise ValueError(f"confusion must be a square (n_classes, n_classes) matrix, got shape {c.shape}")
    if not np.isfinite(c).all() or (c < 0).any():  # a negative count gave a negative F1
        raise ValueError("confusion must hold finite counts >= 0")
    tp = np.diag(c)
    denom = c.sum(0) + c.sum(1)
    return float(np.mean(np.where(denom > 0, 2.0 * tp / np.where(denom > 0, denom, 1.0), 0.0)))


def macro_f1(y_true, y_pred, n_classes: int) -> float:
    """Macro-averaged F1 over all ``n_classes`` classes ``0..n_classes-1``.

    Every class counts in the mean, including one absent from both ``y_true`` and ``y_pred`` (its F1 is
    0, as scikit-learn's ``f1_score(..., labels=range(n_classes), average="macro", zero_division=0)``).
    """
    return f1_from_confusion(confusion_counts(y_true, y_pred, n_classes))


def vehicle_vote(vehicle: np.ndarray, y_true: np.ndarray, y_pred: np.ndarray, n_classes: int):
    """Vehicle-level labels: ``(vehicles, true label, majority vote of its windows)``.

    A tie goes to the lowest class index (``normal`` first in classification).
    """
    vehicle = np.asarray(vehicle)
    uniq, inv = np.unique(vehicle, return_inverse=True)
    votes = np.zeros((uniq.shape[0], n_classes), dtype=np.int64)
    np.add.at(votes, (inv, np.asarray(y_pred)), 1)
    truth = np.zeros(uniq.shape[0], dtype=np.int64)
    truth[inv] = y_true
    return uniq, truth, votes.argmax(1)


# --------------------------------------------------------------------------------------------- models
def _require_finite(X: np.ndarray, name: str = "X") -> None:
    bad = ~np.isfinite(X).reshape(X.shape[0], -1).all(axis=1)
    if bad.any():
        raise ValueError(
            f"{name} contains NaN or infinite values in {int(bad.sum())} of {X.shape[0]} windows; "
            "refusing to train on them (cut windows with make_windows, whose gap policy interpolates "
            "short gaps and splits segments at long ones)"
        )


class _FeatureModel:
    def __init__(self, kind: str, seed: int):
        self.kind, self.seed = kind, seed
        self.info: dict = {}

    def _make(self, C: float = 10.0):
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        from sklearn.svm import SVC

        if self.kind == "RF":
            return RandomForestClassifier(
                n_estimators=100, min_samples_leaf=2, class_weight="balanced", random_state=self.seed,
                n_jobs=1,
            )  # fmt: skip
        return make_pipeline(
            StandardScaler(), SVC(C=C, gamma="scale", class_weight="balanced", random_state=self.seed)
        )

    def fit(self, X, y, X_val=None, y_val=None) -> _FeatureModel:
        _require_finite(np.asarray(X))
        F, y = window_features(X), np.asarray(y)
        C = 10.0
        if self.kind == "SVM" and X_val is not None and len(X_val) and np.unique(y).shape[0] > 1:
            Fv, yv = window_features(X_val), np.asarray(y_val)
            k = int(max(y.max(), yv.max()) + 1)
            scores = {c: macro_f1(yv, self._make(c).fit(F, y).predict(Fv), k) for c in _SVM_C}
            C = max(_SVM_C, key=lambda c: (scores[c], -abs(np.log10(c) - 1)))
            self.info["C"] = C
        if X_val is not None and len(X_val):  # refit on every training vehicle
            F = np.concatenate([F, window_features(X_val)])
            y = np.concatenate([y, np.asarray(y_val)])
        self.model = self._make(C).fit(F, y)
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.model.predict(window_features(X))


_SVM_C = (1.0, 10.0, 100.0)
_MIN_EPOCHS = 10  # never stop before: a few noisy validation epochs at the start are not a plateau


def _torch_net(kind: str, n_in: int, n_classes: int):
    import torch
    from torch import nn

    class CNN(nn.Module):
        """1-D CNN: three conv blocks, global average + max pooling, a linear head."""

        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv1d(n_in, 32, 7, padding=3), nn.BatchNorm1d(32), nn.ReLU(), nn.MaxPool1d(2),
                nn.Conv1d(32, 64, 5, padding=2), nn.BatchNorm1d(64), nn.ReLU(), nn.MaxPool1d(2),
                nn.Conv1d(64, 64, 3, padding=1), nn.BatchNorm1d(64), nn.ReLU(),
            )  # fmt: skip
            self.head = nn.Linear(128, n_classes)

        def forward(self, x):  # x: (B, T, C)
            h = self.body(x.transpose(1, 2))
            return self.head(torch.cat([h.mean(2), h.amax(2)], dim=1))

    class LSTM(nn.Module):
        """One-layer LSTM over the window; last hidden state and mean of outputs, a linear head."""

        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(n_in, 48, batch_first=True)
            self.head = nn.Linear(96, n_classes)

        def forward(self, x):
            out, (h, _) = self.rnn(x)
            return self.head(torch.cat([h[-1], out.mean(1)], dim=1))

    return CNN() if kind == "CNN" else LSTM()


class _TorchModel:
    def __init__(self, kind: str, seed: int, max_epochs: int, patience: int, pool: int = 2):
        self.kind, self.seed, self.max_epochs, self.patience = kind, seed, max_epochs, patience
        self.pool = pool
        self.info: dict = {}

    def _prep(self, X: np.ndarray) -> np.ndarray:
        Z = (X - self.mu) / self.sd
        if self.pool > 1:  # average-pool the sequence in time (20 s steps): half the cost, same content
            t = (Z.shape[1] // self.pool) * self.pool
            Z = Z[:, :t].reshape(Z.shape[0], t // self.pool, self.pool, Z.shape[2]).mean(2)
        return Z.astype(np.float32)

    def fit(self, X: np.ndarray, y: np.ndarray, X_val=None, y_val=None) -> _TorchModel:
        import torch
        from torch import nn

        X = np.asarray(X)
        _require_finite(X)
        y = np.asarray(y, dtype=np.int64)
        torch.manual_seed(self.seed)
        rng = np.random.default_rng(self.seed)
        self.mu = X.mean(axis=(0, 1), keepdims=True)
        self.sd = X.std(axis=(0, 1), keepdims=True) + 1e-6
        Z = torch.from_numpy(self._prep(X))
        yt = torch.from_numpy(y)
        self.n_classes = int(max(y.max() + 1, 2))
        counts = np.bincount(y, minlength=self.n_classes).astype(np.float64)
        w = torch.tensor(np.where(counts > 0, counts.sum() / np.maximum(counts, 1) / self.n_classes, 0.0),
                         dtype=torch.float32)  # fmt: skip
        self.net = _torch_net(self.kind, Z.shape[2], self.n_classes)
        opt = torch.optim.AdamW(self.net.parameters(), lr=2e-3, weight_decay=1e-4)
        loss_fn = nn.CrossEntropyLoss(weight=w)
        has_val = X_val is not None and len(X_val) > 0
        if has_val:
            _require_finite(np.asarray(X_val), "X_val")
            Zv = torch.from_numpy(self._prep(np.asarray(X_val)))
            yv = torch.from_numpy(np.asarray(y_val, dtype=np.int64))
            keep = yv < self.n_classes  # a class absent from training cannot be scored by the loss
            Zv, yv = Zv[keep], yv[keep]
            has_val = len(yv) > 0
        best, best_state, best_epoch, bad = np.inf, None, 0, 0
        epoch = 0
        for epoch in range(1, self.max_epochs + 1):
            self.net.train()
            perm = rng.permutation(len(Z))
            for b in range(0, len(Z), 64):
                idx = torch.from_numpy(perm[b : b + 64])
                if idx.numel() < 2:
                    continue
                opt.zero_grad()
                loss = loss_fn(self.net(Z[idx]), yt[idx])
                loss.backward()
                opt.step()
            if not has_val:
                continue
            self.net.eval()
            with torch.no_grad():
                v = float(loss_fn(self.net(Zv), yv))
            if v < best - 1e-4:
                best, best_epoch, bad = v, epoch, 0
                best_state = {k: t.detach().clone() for k, t in self.net.state_dict().items()}
            else:
                bad += 1
                if bad >= self.patience and epoch >= min(_MIN_EPOCHS, self.max_epochs):
                    break
        if best_state is not None:
            self.net.load_state_dict(best_state)
        self.info = {"epochs_run": epoch, "best_epoch": best_epoch if has_val else epoch}
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        import torch

        self.net.eval()
        with torch.no_grad():
            Z = torch.from_numpy(self._prep(np.asarray(X)))
            out = [self.net(Z[b : b + 512]).argmax(1).numpy() for b in range(0, len(Z), 512)]
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def make_model(name: str, seed: int = 0, max_epochs: int = 40, patience: int = 6):
    """A baseline classifier with ``fit(X, y, X_val=None, y_val=None)`` / ``predict(X)`` on windows
    ``X (n, T, 7)``.

    ``"RF"`` / ``"SVM"``: scikit-learn on :func:`window_features` (the SVM picks ``C`` in (1, 10, 100) on
    the validation windows, then every model is refitted on training + validation); ``"LSTM"`` / ``"CNN"``:
    small torch networks on the standardised sequences average-pooled to 20 s steps (AdamW,
    class-weighted cross-entropy), trained until the validation loss has not improved for ``patience``
    epochs (but at least 10 epochs and at most ``max_epochs``; all ``max_epochs`` without validation
    windows), keeping the best epoch. The random forest has 100 trees. ``fit`` refuses windows with NaN
    or infinite values.
    """
    check_in(name, MODELS, "name")
    if name in ("RF", "SVM"):
        return _FeatureModel(name, seed)
    return _TorchModel(
        name, seed, check_int(max_epochs, "max_epochs", minimum=1), check_int(patience, "patience", minimum=1)
    )


@dataclass
class TaskResult:
    """Pooled out-of-fold predictions of one model on one task x chemistry x scenario (one seed).

    ``y_true``, ``y_pred``, ``vehicle``: one entry per test window; ``f1``: window-level macro-F1;
    ``vehicle_f1``: macro-F1 of the vehicles' majority votes; ``extra``: per-fold training details
    (epochs run, best epoch, the SVM's ``C``).
    """

    chemistry: str
    scenario: str
    task: str
    model: str
    f1: float
    y_true: np.ndarray
    y_pred: np.ndarray
    n_classes: int
    n_windows: int
    n_vehicles: int
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)
    vehicle: np.ndarray | None = None
    seed: int = 0

    def confusion(self) -> np.ndarray:
        return confusion_counts(self.y_true, self.y_pred, self.n_classes)

    def vehicle_labels(self):
        """``(vehicles, true label, voted label)`` (see :func:`vehicle_vote`)."""
        return vehicle_vote(self.vehicle, self.y_true, self.y_pred, self.n_classes)

    @property
    def vehicle_f1(self) -> float:
        _, t, p = self.vehicle_labels()
        return macro_f1(t, p, self.n_classes)

    def per_vehicle_confusion(self, vehicles: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(vehicles, confusion (V, k, k))``: each vehicle's windows' confusion matrix.

        Summing the matrices of a resample of vehicles gives that resample's window-level confusion, so a
        bootstrap over vehicles needs no re-prediction. ``vehicles`` fixes the order (default: sorted).
        """
        k = self.n_classes
        uniq = np.unique(self.vehicle) if vehicles is None else np.asarray(vehicles)
        pos = {v: i for i, v in enumerate(uniq)}
        inv = np.array([pos[v] for v in self.vehicle], dtype=np.int64)
        out = np.zeros((uniq.shape[0], k * k), dtype=np.int64)
        np.add.at(out, (inv, self.y_true * k + self.y_pred), 1)
        return uniq, out.reshape(-1, k, k)


def task_labels(ws: WindowSet, task: str) -> tuple[WindowSet, np.ndarray, int]:
    """The windows and integer targets of ``task``: 4 fault classes, or severity 1..3 -> 0..2 on faults."""
    check_in(task, TASKS, "task")
    if task == "classification":
        return ws, ws.category, len(CATEGORIES)
    keep = (ws.category > 0) & (ws.severity >= 1)
    sub = ws.subset(keep)
    return sub, sub.severity - 1, 3


def evaluate_task(
    ws: WindowSet,
    task: str,
    models=MODELS,
    n_folds: int = 3,
    seed: int = 0,
    max_epochs: int = 40,
    patience: int = 6,
    val_share: float = 0.2,
    chemistry: str = "",
    scenario: str = "",
) -> list[TaskResult]:
    """Grouped (by vehicle), stratified cross-validation of each model; macro-F1 of pooled predictions.

    ``seed`` fixes the vehicle folds, the validation split and the models' initialisation. Within each
    training fold a stratified ``val_share`` of the vehicles is the validation split (see the module
    docstring for how each model uses it). Windows with NaN raise ``ValueError``.
    """
    import time

    _require_finite(ws.X, "ws.X")
    for m in models:
        check_in(m, MODELS, "models")
    sub, y, n_classes = task_labels(ws, task)
    if len(sub) == 0:
        return []
    strata = y if task == "grading" else sub.category * 4 + np.maximum(sub.severity, 0)
    folds = vehicle_folds(sub.vehicle, strata, n_folds, seed)
    test_folds = [0] if n_folds == 1 else list(range(n_folds))
    results = []
    for name in models:
        t0 = time.perf_counter()
        yt, yp, vv, info = [], [], [], []
        for f in test_folds:
            tr, te = folds != f, folds == f
            if not te.any() or np.unique(y[tr]).shape[0] < 2:
                continue
            val = np.zeros_like(tr)
            val[tr] = vehicle_holdout(sub.vehicle[tr], strata[tr], val_share, seed + 1000 * f)
            fit = tr & ~val
            model = make_model(name, seed=seed + f, max_epochs=max_epochs, patience=patience)
            model.fit(sub.X[fit], y[fit], sub.X[val], y[val])
            yt.append(y[te])
            yp.append(model.predict(sub.X[te]))
            vv.append(sub.vehicle[te])
            info.append(model.info)
        if not yt:
            continue
        yt_a, yp_a = np.concatenate(yt), np.concatenate(yp)
        results.append(
            TaskResult(
                chemistry, scenario, task, name, macro_f1(yt_a, yp_a, n_classes), yt_a, yp_a, n_classes,
                int(yt_a.shape[0]), int(np.unique(sub.vehicle).shape[0]), time.perf_counter() - t0,
                {"folds": info}, np.concatenate(vv), seed,
            )
        )  # fmt: skip
    return results


def _cell_fingerprint(ws: WindowSet) -> str:
    """A hash of a cell's windows and labels: a cached unit is reused only on the same data."""
    h = hashlib.sha256()
    for a in (ws.X, ws.vehicle, ws.category, ws.severity):
        a = np.asarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(np.ascontiguousarray(a).tobytes() if a.dtype != object else "\0".join(map(str, a)).encode())
    return h.hexdigest()


class _UnitCache:
    """Finished units of a benchmark, one pickle each, so that an interrupted run resumes.

    A unit's file name holds its cell, task, model and seed, and a hash of the cell's windows and
    of the training settings: another data set or setting never reuses it. The files are this run's
    own results (pickle: only load a folder you wrote).
    """

    def __init__(self, folder: str | os.PathLike, fingerprints: dict, settings: dict):
        self.folder = Path(folder)
        self.fingerprints = fingerprints
        self.settings = json.dumps(settings, sort_keys=True)

    def path(self, key, task, model, seed) -> Path:
        digest = hashlib.sha256(f"{self.fingerprints[key]}|{self.settings}".encode()).hexdigest()[:16]
        return self.folder / f"{key[0]}-{key[1]}-{task}-{model}-seed{seed}-{digest}.pkl"

    def load(self, job) -> list[TaskResult] | None:
        path = self.path(*job)
        if not path.is_file():
            return None
        with open(path, "rb") as f:
            return pickle.load(f)

    def save(self, job, results: list[TaskResult]) -> None:
        from ..store import atomic_write_bytes

        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(self.path(*job), pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL))


def _run_unit(job, windows, kwargs) -> list[TaskResult]:
    """One job: a model trained and scored on one task of one cell (chemistry, scenario) with a seed."""
    (chem, scen), task, model, seed = job
    return evaluate_task(
        windows[(chem, scen)], task, (model,), seed=seed, chemistry=chem, scenario=scen, **kwargs
    )


def benchmark(
    dataset,
    chemistries=CHEMISTRIES,
    scenarios=SCENARIOS,
    tasks=TASKS,
    models=MODELS,
    seeds=(0,),
    cell_seeds: dict | None = None,
    n_folds: int = 3,
    window: int = 128,
    stride: int = 64,
    max_epochs: int = 40,
    patience: int = 6,
    val_share: float = 0.2,
    n_jobs: int = 1,
    progress: bool = False,
    unit_cache: str | os.PathLike | None = None,
) -> tuple[list[TaskResult], dict[tuple[str, str], WindowSet]]:
    """The paper's benchmark on a :class:`BatteryDataset`: every chemistry x scenario x task x model x seed.

    ``seeds`` are run on every cell; ``cell_seeds`` maps ``(chemistry, scenario)`` to the seeds of that
    cell instead (e.g. more seeds where a claim is measured). Jobs (one model, task, cell and seed each)
    run in ``n_jobs`` forked processes with one torch thread each. ``unit_cache``: a folder where each
    finished job's results are kept, so that a rerun after an interruption runs only the missing jobs
    (a job is reused only for the same windows and settings). Returns the results and the windows of
    each cell (with their gap reports); a cell or task without windows (e.g. grading without severities)
    gives no result.
    """
    import torch
    from tqdm.auto import tqdm

    from ..runtime import fork_map

    n_jobs = check_int(n_jobs, "n_jobs", minimum=1)
    for c in chemistries:
        check_in(c, CHEMISTRIES, "chemistries")
    for t in tasks:
        check_in(t, TASKS, "tasks")
    windows = {(c, s): make_windows(dataset, c, s, window, stride) for c in chemistries for s in scenarios}
    kwargs = dict(n_folds=n_folds, max_epochs=max_epochs, patience=patience, val_share=val_share)
    jobs = []
    for key, ws in windows.items():
        if len(ws) == 0:
            continue
        for seed in (cell_seeds or {}).get(key, seeds):
            for task in tasks:
                for m in models:
                    jobs.append((key, task, m, int(seed)))
    # longest first: the networks on the largest cells
    jobs.sort(key=lambda j: -len(windows[j[0]]) * (3 if j[2] in ("LSTM", "CNN") else 1))
    results: list[TaskResult] = []
    cache = None
    if unit_cache is not None:
        prints = {key: _cell_fingerprint(windows[key]) for key in {j[0] for j in jobs}}
        cache = _UnitCache(unit_cache, prints, {**kwargs, "window": window, "stride": stride})
        done = {j: cache.load(j) for j in jobs}
        for got in done.values():
            results += got or []
        jobs = [j for j in jobs if done[j] is None]

    def finished(job, unit_results: list[TaskResult]) -> None:
        results.extend(unit_results)
        if cache is not None:
            cache.save(job, unit_results)
        bar.update()

    disable = not progress or os.environ.get("ICLR26_NO_PROGRESS") == "1"
    bar = tqdm(total=len(jobs), desc="ch-batterygen: benchmark", disable=disable, leave=False)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread per process: processes, not threads, share the cores
    try:
        fork_map(
            lambda job: _run_unit(job, windows, kwargs),
            jobs,
            workers=n_jobs,
            on_result=lambda i, unit_results: finished(jobs[i], unit_results),
        )
    finally:
        torch.set_num_threads(threads)
        bar.close()
    order = {(c, s, t, m): i for i, (c, s, t, m) in enumerate(
        (c, s, t, m) for t in TASKS for c in CHEMISTRIES for s in SCENARIOS for m in MODELS)}  # fmt: skip
    results.sort(key=lambda r: (order[(r.chemistry, r.scenario, r.task, r.model)], r.seed))
    return results, windows
