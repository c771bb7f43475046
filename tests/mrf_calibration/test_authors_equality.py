"""``normalize="authors"`` against the authors' own ``GCN.forward`` and training loop (run beside ours)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from iclr26.mrf_calibration import MRFCalibrator  # noqa: E402

from .authors_ref import load  # noqa: E402

PARAMS = ("w1", "w11", "w_prime1", "w_prime11", "w_final", "b_final")


def _ragged(rng, n, kind, trailing_zeros=True):
    rows = []
    for b in range(n):
        length = int(rng.choice([int(rng.integers(3, 90)), int(rng.integers(90, 400))]))
        if kind == "loglik":
            r = -rng.gamma(2.0, 1.5, length)
        elif kind == "logrank":
            r = -np.log(rng.geometric(0.3, length).astype(float))  # many exact zeros (rank 1)
        else:  # entropy: sum p log p
            r = -rng.gamma(3.0, 0.8, length)
        if trailing_zeros and b % 3 == 0:
            r[-2:] = 0.0  # true scores of exactly zero at the end: the authors mask them as padding
        rows.append(r.astype(np.float32))
    if n > 4:
        rows[4] = (-rng.gamma(2.0, 1.5, 1024)).astype(np.float32)  # a full-width text (no padding)
    return rows


def _authors_matrix(rows, width=1024):
    x = np.zeros((len(rows), width), np.float32)
    for b, r in enumerate(rows):
        x[b, : len(r)] = r
    return x


def _set_authors_params(model, p):
    for name, v in zip(PARAMS, p):
        getattr(model, name).data[:] = float(v)


def _authors_forward(ns, rows, p, filter_pos, t):
    ds = ns["my_dataset"](_authors_matrix(rows), np.zeros(len(rows)), filter_pos)
    model = ns["GCN"]("cpu", t, filter_pos)
    _set_authors_params(model, p)
    adj = torch.tensor(ds.adj_in).to_sparse()
    with torch.no_grad():
        return model(torch.tensor(ds.data), adj, torch.tensor(ds.mask)).numpy()


def _ours(rows, p, filter_pos, t):
    cal = MRFCalibrator(filter_pos=filter_pos, steps=t, normalize="authors")._load_params("scalar", p)
    return cal.predict_proba(rows)[:, 1]


CASES = [(k, fp, t) for k in ("loglik", "logrank", "entropy") for fp in (0, 30) for t in (0, 1, 10)]


@pytest.mark.parametrize(("kind", "filter_pos", "t"), CASES)
def test_forward_equals_authors(kind, filter_pos, t):
    ns = load()
    rng = np.random.default_rng(CASES.index((kind, filter_pos, t)))
    rows = _ragged(rng, 9, kind)
    p = np.concatenate([rng.uniform(0.05, 2.0, 4) * rng.choice([-1, 1], 4), [rng.uniform(3, 30)], [-1.5]])
    ref = _authors_forward(ns, rows, p, filter_pos, t)
    ours = _ours(rows, p, filter_pos, t)
    assert np.max(np.abs(ours - ref)) < 1e-6


@pytest.mark.parametrize(("filter_pos", "t"), [(0, 1), (30, 10)])
def test_fastdetect_forward_equals_authors(filter_pos, t):
    ns = load("improve_mrf_fastgpt.py")
    rng = np.random.default_rng(7 + t)
    rows = []
    for _ in range(8):
        length = int(rng.integers(5, 300))
        rows.append((-rng.gamma(2.0, 1.5, (length, 11))).astype(np.float32))
    x = np.zeros((len(rows), 11, 1023), np.float32)
    for b, r in enumerate(rows):
        x[b, :, : len(r)] = r.T
    p = [0.3, -0.7, 0.2, 1.1, 2.5, 0.4]
    ds = ns["my_dataset"](x, np.zeros(len(rows)), filter_pos)
    model = ns["GCN"]("cpu", t, filter_pos)
    _set_authors_params(model, p)
    with torch.no_grad():
        ref = model(torch.tensor(ds.data), torch.tensor(ds.adj_in), torch.tensor(ds.mask)).numpy()
    cal = MRFCalibrator(filter_pos=filter_pos, steps=t, normalize="authors")._load_params("fastdetect", p)
    ours = cal.predict_proba(rows)[:, 1]
    assert np.max(np.abs(ours - ref)) < 1e-6


def _authors_train(ns, rows, y, rows_v, y_v, rows_t, y_t, filter_pos, t, seed, batch_size, epochs):
    """The authors' training loop of ``improve_mrf.py`` (their classes, their DataLoader order)."""
    from sklearn.metrics import roc_auc_score
    from torch.utils.data import DataLoader

    torch.manual_seed(seed)
    train = ns["my_dataset"](_authors_matrix(rows), y, filter_pos)
    val = ns["my_dataset"](_authors_matrix(rows_v), y_v, filter_pos)
    loader = DataLoader(train, batch_size=batch_size, shuffle=True)
    val_loader = DataLoader(val, batch_size=256, shuffle=False)
    model = ns["GCN"]("cpu", t, filter_pos)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    crit = torch.nn.BCELoss()
    adj = torch.tensor(train.adj_in).to_sparse()
    best, state = -1, None
    for _ in range(epochs):
        for x, m, yy in loader:
            loss = crit(model(x, adj, m), yy.float())
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            preds = np.concatenate([model(x, adj, m).numpy() for x, m, _ in val_loader])
        auc = roc_auc_score(y_v, preds)
        if auc > best:
            best, state = auc, {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(state)
    test = ns["my_dataset"](_authors_matrix(rows_t), y_t, filter_pos)
    with torch.no_grad():
        p = model(torch.tensor(test.data), adj, torch.tensor(test.mask)).numpy()
    return np.array([float(getattr(model, k).detach()) for k in PARAMS]), roc_auc_score(y_t, p)


@pytest.mark.parametrize(("kind", "filter_pos", "t", "seed"), [("loglik", 30, 10, 0), ("logrank", 0, 1, 3)])
def test_training_equals_authors(kind, filter_pos, t, seed):
    """Same seed: same initial parameters and mini-batch order; trained parameters and test AUROC agree."""
    from sklearn.metrics import roc_auc_score

    ns = load()
    rng = np.random.default_rng(11)

    def split(n):
        y = np.tile([0, 1], n // 2)
        rows = _ragged(rng, n, kind)
        rows = [r + np.float32(0.4 * yy) * (r != 0) for r, yy in zip(rows, y)]
        return rows, y

    (r, y), (rv, yv), (rt, yt) = split(40), split(30), split(30)
    ref_params, ref_auc = _authors_train(ns, r, y, rv, yv, rt, yt, filter_pos, t, seed, 16, 3)
    cal = MRFCalibrator(
        filter_pos=filter_pos, steps=t, epochs=3, batch_size=16, seed=seed, normalize="authors"
    )
    cal.fit(r, y, val=(rv, yv))
    ours = np.array([cal.params_[k] for k in PARAMS])
    np.testing.assert_allclose(ours, ref_params, atol=1e-5, rtol=0)
    assert abs(roc_auc_score(yt, cal.predict_proba(rt)[:, 1]) - ref_auc) < 1e-4
