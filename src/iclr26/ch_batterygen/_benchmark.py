"""The fault-diagnosis benchmark: windows by vehicle, features, the four baselines, macro-F1.

Tasks (per chemistry x scenario, as in the paper): *fault classification* (4 classes: normal,
self-discharge, high resistance, low capacity) on all vehicles, and *fault grading* (severity 1..3) on
the faulty vehicles. Labels are vehicle-level (as released); every window inherits its vehicle's label,
and the train/test split is by vehicle, so no vehicle has windows on both sides.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..validation import check_array, check_in, check_int, check_labels
from ._schema import CATEGORIES, SCENARIOS, volt_columns_of

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
    :data:`CATEGORIES`; ``severity (n,)`` 0 for normal, 1..3 (-1 unknown).
    """

    X: np.ndarray
    vehicle: np.ndarray
    category: np.ndarray
    severity: np.ndarray

    def __len__(self) -> int:
        return int(self.X.shape[0])

    def subset(self, mask: np.ndarray) -> WindowSet:
        return WindowSet(self.X[mask], self.vehicle[mask], self.category[mask], self.severity[mask])


def window_starts(length: int, window: int, stride: int) -> list[int]:
    """Start indices of the windows of a series of ``length`` (none when it is shorter than ``window``)."""
    if length < window:
        return []
    return list(range(0, length - window + 1, stride))


def make_windows(dataset, chemistry: str, scenario: str, window: int = 128, stride: int = 64) -> WindowSet:
    """Cut every segment of ``chemistry`` x ``scenario`` of a :class:`BatteryDataset` into windows.

    Windows never cross segments; segments shorter than ``window`` are skipped.
    """
    check_in(scenario, SCENARIOS, "scenario")
    window = check_int(window, "window", minimum=8)
    stride = check_int(stride, "stride", minimum=1)
    veh = dataset.vehicles.set_index(["chemistry", "vin"])
    xs, vs, cs, ss = [], [], [], []
    for ref in dataset.select(chemistry=chemistry, scenario=scenario):
        ch = segment_channels(dataset.read(ref))
        starts = window_starts(ch.shape[0], window, stride)
        if not starts:
            continue
        sev = int(veh.loc[(ref.chemistry, ref.vin), "severity"])
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
        )
    return WindowSet(
        np.stack(xs), np.asarray(vs), np.asarray(cs, dtype=np.int64), np.asarray(ss, dtype=np.int64)
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


def macro_f1(y_true, y_pred, n_classes: int) -> float:
    """Macro-averaged F1 over the classes present in ``y_true`` or ``y_pred``."""
    from sklearn.metrics import f1_score

    y_true = check_labels(y_true, name="y_true")
    y_pred = check_labels(y_pred, n=y_true.shape[0], name="y_pred")
    return float(f1_score(y_true, y_pred, labels=np.arange(n_classes), average="macro", zero_division=0))


# --------------------------------------------------------------------------------------------- models
class _FeatureModel:
    def __init__(self, kind: str, seed: int):
        self.kind, self.seed = kind, seed

    def fit(self, X: np.ndarray, y: np.ndarray) -> _FeatureModel:
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        from sklearn.svm import SVC

        F = window_features(X)
        if self.kind == "RF":
            self.model = RandomForestClassifier(
                n_estimators=200,
                min_samples_leaf=2,
                class_weight="balanced",
                random_state=self.seed,
                n_jobs=1,
            )
        else:
            self.model = make_pipeline(
                StandardScaler(), SVC(C=10.0, gamma="scale", class_weight="balanced", random_state=self.seed)
            )
        self.model.fit(F, y)
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.model.predict(window_features(X))


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
    def __init__(self, kind: str, seed: int, epochs: int, pool: int = 2):
        self.kind, self.seed, self.epochs = kind, seed, epochs
        self.pool = pool

    def _prep(self, X: np.ndarray) -> np.ndarray:
        Z = (X - self.mu) / self.sd
        if self.pool > 1:  # average-pool the sequence in time (20 s steps): half the cost, same content
            t = (Z.shape[1] // self.pool) * self.pool
            Z = Z[:, :t].reshape(Z.shape[0], t // self.pool, self.pool, Z.shape[2]).mean(2)
        return Z.astype(np.float32)

    def fit(self, X: np.ndarray, y: np.ndarray) -> _TorchModel:
        import torch
        from torch import nn

        torch.manual_seed(self.seed)
        rng = np.random.default_rng(self.seed)
        self.mu = X.mean(axis=(0, 1), keepdims=True)
        self.sd = X.std(axis=(0, 1), keepdims=True) + 1e-6
        Z = torch.from_numpy(self._prep(X))
        yt = torch.from_numpy(np.asarray(y, dtype=np.int64))
        self.n_classes = int(max(y.max() + 1, 2))
        counts = np.bincount(y, minlength=self.n_classes).astype(np.float64)
        w = torch.tensor(np.where(counts > 0, counts.sum() / np.maximum(counts, 1) / self.n_classes, 0.0),
                         dtype=torch.float32)  # fmt: skip
        self.net = _torch_net(self.kind, Z.shape[2], self.n_classes)
        opt = torch.optim.AdamW(self.net.parameters(), lr=3e-3, weight_decay=1e-4)
        steps = self.epochs * int(np.ceil(len(Z) / 64))
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=max(steps, 1))
        loss_fn = nn.CrossEntropyLoss(weight=w)
        self.net.train()
        for _ in range(self.epochs):
            perm = rng.permutation(len(Z))
            for b in range(0, len(Z), 64):
                idx = torch.from_numpy(perm[b : b + 64])
                if idx.numel() < 2:
                    continue
                opt.zero_grad()
                loss = loss_fn(self.net(Z[idx]), yt[idx])
                loss.backward()
                opt.step()
                sched.step()
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        import torch

        self.net.eval()
        with torch.no_grad():
            Z = torch.from_numpy(self._prep(X))
            out = [self.net(Z[b : b + 512]).argmax(1).numpy() for b in range(0, len(Z), 512)]
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def make_model(name: str, seed: int = 0, epochs: int = 20):
    """A baseline classifier with ``fit(X, y)`` / ``predict(X)`` on windows ``X (n, T, 7)``.

    ``"RF"`` / ``"SVM"``: scikit-learn on :func:`window_features`; ``"LSTM"`` / ``"CNN"``: small torch
    networks on the standardised sequences average-pooled to 20 s steps (``epochs`` of AdamW,
    class-weighted cross-entropy).
    """
    check_in(name, MODELS, "name")
    if name in ("RF", "SVM"):
        return _FeatureModel(name, seed)
    return _TorchModel(name, seed, check_int(epochs, "epochs", minimum=1))


@dataclass
class TaskResult:
    """Pooled out-of-fold predictions of one model on one task x chemistry x scenario."""

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

    def confusion(self) -> np.ndarray:
        from sklearn.metrics import confusion_matrix

        return confusion_matrix(self.y_true, self.y_pred, labels=np.arange(self.n_classes))


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
    epochs: int = 20,
    chemistry: str = "",
    scenario: str = "",
) -> list[TaskResult]:
    """Grouped (by vehicle), stratified cross-validation of each model; macro-F1 of pooled predictions."""
    import time

    sub, y, n_classes = task_labels(ws, task)
    if len(sub) == 0:
        return []
    strata = y if task == "grading" else sub.category * 4 + np.maximum(sub.severity, 0)
    folds = vehicle_folds(sub.vehicle, strata, n_folds, seed)
    test_folds = [0] if n_folds == 1 else list(range(n_folds))
    results = []
    for name in models:
        t0 = time.perf_counter()
        yt, yp = [], []
        for f in test_folds:
            tr, te = folds != f, folds == f
            if not te.any() or np.unique(y[tr]).shape[0] < 2:
                continue
            model = make_model(name, seed=seed + f, epochs=epochs).fit(sub.X[tr], y[tr])
            yt.append(y[te])
            yp.append(model.predict(sub.X[te]))
        if not yt:
            continue
        yt_a, yp_a = np.concatenate(yt), np.concatenate(yp)
        results.append(
            TaskResult(
                chemistry, scenario, task, name, macro_f1(yt_a, yp_a, n_classes), yt_a, yp_a, n_classes,
                int(yt_a.shape[0]), int(np.unique(sub.vehicle).shape[0]), time.perf_counter() - t0,
            )
        )  # fmt: skip
    return results
