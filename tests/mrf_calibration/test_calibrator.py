"""MRFCalibrator behaviour, the banded chain against a dense reference, validation, metrics, loaders."""

from __future__ import annotations

import gzip
import json
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from iclr26.mrf_calibration import (  # noqa: E402
    DetectRLRecord,
    MRFCalibrator,
    _mrf,  # noqa: E402
    check_scores,
    detection_metrics,
    detectrl_split,
    load_detectrl,
    process_spaces,
)


def _data(rng, n, shift=0.6):
    y = np.tile([0, 1], n // 2)
    rows = [(rng.normal(-3.0 + shift * v, 1.0, int(rng.integers(10, 80)))).astype(np.float32) for v in y]
    return rows, y


def test_banded_chain_equals_dense_matrix_product():
    rng = np.random.default_rng(0)
    d = torch.tensor(rng.uniform(size=(3, 50)), dtype=torch.float32)
    lo_c, hi_c, _ = _mrf.neighbour_weights(50, 7)
    lo = torch.from_numpy(np.tile(lo_c, (3, 1)))
    hi = torch.from_numpy(np.tile(hi_c, (3, 1)))
    w = _mrf.interaction(torch.tensor([0.4, -0.9, 0.3, 1.2, 1.0, 0.0]))
    ours = _mrf.chain(d, lo, hi, w, 4, "authors")
    a = np.eye(50) + np.diag(lo_c[1:], -1) + np.diag(hi_c[:-1], 1)
    x = np.stack([1 - d.numpy(), d.numpy()], -1).astype(np.float64)
    for _ in range(4):
        z = np.log(x + 1e-10) - np.einsum("ij,bjc->bic", a, x) @ w.numpy()
        x = np.exp(z - z.max(-1, keepdims=True))
        x /= x.sum(-1, keepdims=True)
    np.testing.assert_allclose(ours.numpy(), x[..., 1], atol=2e-6)
    # Neighbour weights are sigma(j - p) of the neighbour j, as in the authors' adjacency.
    assert lo_c[10] == pytest.approx(1 / (1 + np.exp(-(9 - 7))), rel=1e-6)
    assert hi_c[10] == pytest.approx(1 / (1 + np.exp(-(11 - 7))), rel=1e-6)


@pytest.mark.parametrize("update", ["authors", "meanfield"])
@pytest.mark.parametrize("steps", [0, 1, 4])
def test_chain_gradient_is_the_autograd_gradient_of_the_softmax_chain(update, steps):
    """The hand-written adjoint against autograd through the plain (B, W, 2) softmax chain, in float64."""
    rng = np.random.default_rng(steps)
    d = torch.tensor(rng.uniform(0.01, 0.99, size=(3, 40)))
    lo_c, hi_c, _ = _mrf.neighbour_weights(40, 5)
    lo = torch.from_numpy(np.tile(lo_c, (3, 1))).double()
    hi = torch.from_numpy(np.tile(hi_c, (3, 1))).double()
    hi[1, 25:] = 0.0  # a text that ends early, as normalize="train" masks it
    lo[1, 26:] = 0.0
    weight = torch.tensor(rng.uniform(0.1, 1.0, 40))

    def reference(params):
        w = _mrf.interaction(params)
        x = torch.stack([1.0 - d, d], dim=-1)
        log0 = torch.log(x + 1e-10)
        for _ in range(steps):
            prev = torch.nn.functional.pad(x[:, :-1], (0, 0, 1, 0))
            nxt = torch.nn.functional.pad(x[:, 1:], (0, 0, 0, 1))
            ax = lo[..., None] * prev + x + hi[..., None] * nxt
            base = torch.log(x + 1e-10) if update == "authors" else log0
            x = torch.softmax(base - ax @ w, dim=-1)
        return (x[..., 1] * weight).sum()

    def ours(params):
        return (_mrf.chain(d, lo, hi, _mrf.interaction(params), steps, update) * weight).sum()

    params = torch.tensor([0.4, -0.9, 0.3, 1.2, 1.0, 0.0], dtype=torch.float64)
    grads = []
    for fn in (reference, ours):
        p = params.clone().requires_grad_(True)
        value = fn(p)
        g = torch.autograd.grad(value, p, allow_unused=True)[0] if value.requires_grad else None
        grads.append((float(value.detach()), np.zeros(6) if g is None else g.numpy()))
    assert grads[1][0] == pytest.approx(grads[0][0], rel=1e-12)
    np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=1e-9, atol=1e-12)


def test_meanfield_differs_from_compounding_update_only_after_two_steps():
    d = torch.tensor(np.linspace(0.1, 0.9, 12)[None], dtype=torch.float32)
    lo, hi = torch.ones(1, 12), torch.ones(1, 12)
    lo[:, 0] = 0
    hi[:, -1] = 0
    w = _mrf.interaction(torch.tensor([0.5, 0.5, 0.8, 0.8, 1.0, 0.0]))
    one = [_mrf.chain(d, lo, hi, w, 1, u) for u in ("authors", "meanfield")]
    two = [_mrf.chain(d, lo, hi, w, 2, u) for u in ("authors", "meanfield")]
    assert torch.allclose(one[0], one[1])
    assert not torch.allclose(two[0], two[1])
    assert torch.equal(_mrf.chain(d, lo, hi, w, 0, "authors"), d)


def test_trailing_zero_mask_rule():
    x = np.array([[1, 0, 2, 0, 0], [0, 0, 0, 0, 0], [1, 2, 3, 4, 5], [0, 1, 0, 1, 0]], np.float32)[..., None]
    assert _mrf.trailing_zero_lengths(x)[:, 0].tolist() == [3, 0, 5, 4]


def test_train_normalisation_keeps_padding_out_and_is_batch_independent():
    rng = np.random.default_rng(1)
    rows, y = _data(rng, 40)
    cal = MRFCalibrator(filter_pos=3, steps=5, epochs=3).fit(rows, y, val=_data(rng, 20))
    full = cal.predict_proba(rows)[:, 1]
    alone = np.array([cal.predict_proba([r])[0, 1] for r in rows[:6]])
    np.testing.assert_allclose(alone, full[:6], atol=1e-6)
    q = cal.calibrated_token_scores(rows[:3])
    assert [len(v) for v in q] == [len(r) for r in rows[:3]]
    assert all(((v >= 0) & (v <= 1)).all() for v in q)
    # authors mode: a text's score depends on the rest of the split (its min-max includes the others)
    auth = MRFCalibrator(filter_pos=3, steps=5, normalize="authors")._load_params(
        "scalar", list(cal.params_.values())
    )
    other = auth.predict_proba([rows[0], rows[1] - 50])[0, 1]
    assert abs(other - auth.predict_proba(rows[:2])[0, 1]) > 1e-4


def test_decision_function_is_the_logit_of_predict_proba():
    rng = np.random.default_rng(2)
    rows, y = _data(rng, 30)
    cal = MRFCalibrator(steps=2, filter_pos=2, optimizer="lbfgs", n_inits=2).fit(rows, y, val=_data(rng, 20))
    p = cal.predict_proba(rows)[:, 1]
    z = cal.decision_function(rows)
    np.testing.assert_allclose(1 / (1 + np.exp(-z)), p, atol=1e-6)
    assert (cal.predict(rows) == (p > 0.5)).all()
    assert cal.params_["w_final"] > 0


def test_calibration_learns_a_separable_signal_and_baseline_is_the_mean_score():
    rng = np.random.default_rng(3)
    tr, va, te = _data(rng, 80, 1.0), _data(rng, 40, 1.0), _data(rng, 80, 1.0)
    base = MRFCalibrator(filter_pos=0, steps=0, optimizer="lbfgs").fit(*tr, val=va)
    means = np.array([r.mean() for r in te[0]])
    from sklearn.metrics import roc_auc_score

    assert roc_auc_score(te[1], base.predict_proba(te[0])[:, 1]) == pytest.approx(roc_auc_score(te[1], means))
    cal = MRFCalibrator(filter_pos=2, steps=10).fit(*tr, val=va)
    assert detection_metrics(te[1], cal.predict_proba(te[0])[:, 1])["auroc"] > 0.8
    assert len(cal.history_) == 10 and 0 <= cal.best_index_ < 10


def test_fastdetect_scores_standardised_by_samples():
    rng = np.random.default_rng(4)
    rows = [rng.normal(-2, 1, (int(rng.integers(8, 40)), 11)).astype(np.float32) for _ in range(20)]
    y = np.tile([0, 1], 10)
    for r, v in zip(rows, y):
        r[:, 0] += 1.5 * v
    cal = MRFCalibrator(filter_pos=0, steps=3, epochs=5).fit(rows, y, val=(rows, y))
    assert cal.kind_ == "fastdetect"
    assert detection_metrics(y, cal.predict_proba(rows)[:, 1])["auroc"] > 0.8
    with pytest.raises(ValueError, match="scores"):
        cal.predict_proba([r[:, 0] for r in rows])


# ------------------------------------------------------------------ validation
def test_bad_input_names_the_argument():
    rng = np.random.default_rng(5)
    rows, y = _data(rng, 10)
    bad = list(rows)
    bad[2] = bad[2].copy()
    bad[2][1] = np.nan
    with pytest.raises(ValueError, match=r"scores\[2\]"):
        MRFCalibrator().fit(bad, y, val=(rows, y))
    with pytest.raises(ValueError, match="y must hold 0"):
        MRFCalibrator().fit(rows, y * 2, val=(rows, y))
    with pytest.raises(ValueError, match="both classes"):
        MRFCalibrator().fit(rows, np.ones(10, int), val=(rows, y))
    with pytest.raises(ValueError, match=r"val\[1\]"):
        MRFCalibrator().fit(rows, y, val=(rows, np.zeros(10, int)))
    with pytest.raises(ValueError, match="steps"):
        MRFCalibrator(steps=-1).fit(rows, y, val=(rows, y))
    with pytest.raises(ValueError, match="filter_pos"):
        MRFCalibrator(filter_pos=-3).fit(rows, y, val=(rows, y))
    with pytest.raises(ValueError, match="update"):
        MRFCalibrator(update="gibbs").fit(rows, y, val=(rows, y))
    with pytest.raises(ValueError, match="normalize"):
        MRFCalibrator(normalize="zscore").fit(rows, y, val=(rows, y))
    with pytest.raises(ValueError, match="optimizer"):
        MRFCalibrator(optimizer="sgd").fit(rows, y, val=(rows, y))
    with pytest.raises(ValueError, match="lr"):
        MRFCalibrator(lr=0).fit(rows, y, val=(rows, y))
    with pytest.raises(ValueError, match=r"scores\[0\]"):
        MRFCalibrator().fit([np.array([])] + rows[1:], y, val=(rows, y))
    huge = list(rows)
    huge[3] = huge[3].copy()
    huge[3][0] = 3e38  # finite in float32, but the scores' range is not
    with pytest.raises(ValueError, match=r"scores\[3\].*overflows float32"):
        MRFCalibrator().fit(huge, y, val=(rows, y))
    with pytest.raises(ValueError, match="y must have length"):
        MRFCalibrator().fit(rows, y[:-1], val=(rows, y))
    with pytest.raises(ValueError, match="mixes"):
        MRFCalibrator().fit([rows[0], np.ones((5, 3))] + rows[2:], y, val=(rows, y))
    with pytest.raises(RuntimeError, match="not fitted"):
        MRFCalibrator().predict_proba(rows)


def test_degenerate_inputs_warn():
    rows = [np.full(5, -1.0, np.float32) for _ in range(6)]
    y = np.tile([0, 1], 3)
    with pytest.warns(UserWarning, match="every training score is equal"):
        MRFCalibrator(steps=1, epochs=1).fit(rows, y, val=(rows, y))
    with pytest.warns(UserWarning, match="no val split"):
        MRFCalibrator(steps=1, epochs=1).fit([r + i for i, r in enumerate(rows)], y)


def test_complex_scores_are_refused():
    # the float32 cast dropped the imaginary parts (a ComplexWarning at most)
    with pytest.raises(ValueError, match=r"scores\[0\] must be real"):
        check_scores([np.array([1 + 2j, 3.0])])


# ------------------------------------------------------------------ metrics
def test_detection_metrics_match_cal_metrics_definition():
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    p = np.array([0.1, 0.4, 0.5, 0.8, 0.35, 0.6, 0.9, 0.95])
    m = detection_metrics(y, p)
    assert m["acc"] == pytest.approx(6 / 8)  # round(0.5) == 0 (Python rounds half to even)
    assert m["auroc"] == pytest.approx(12 / 16)
    assert m["tpr@0.5%"] == pytest.approx(0.5)  # at FPR 0: the scores above 0.8
    with pytest.raises(ValueError, match="both classes"):
        detection_metrics(np.ones(4, int), np.ones(4) / 2)
    with pytest.raises(ValueError, match="p"):
        detection_metrics(y, p[:-1])
    with pytest.raises(ValueError, match="p contains NaN"):
        detection_metrics(y, np.where(y, np.nan, 0.1))


def test_detection_metrics_refuses_scores_outside_0_1():
    # logits (decision_function) gave acc 0.0 for a perfect ranking: round(3.0) == 3 is never a label
    y = np.array([0, 0, 1, 1])
    with pytest.raises(ValueError, match=r"p must be probabilities in \[0, 1\]"):
        detection_metrics(y, np.array([-2.0, -1.0, 1.5, 3.0]))
    with pytest.raises(ValueError, match="p must be probabilities"):
        detection_metrics(y, np.array([0.1, 0.2, 0.7, 1.2]))
    assert detection_metrics(y, np.array([0.0, 0.2, 0.7, 1.0]))["acc"] == 1.0


# ------------------------------------------------------------------ DetectRL loader and split
def _records(tmp_path, n=30):
    data = []
    for i in range(n):
        data.append(
            {
                "text": f"human text number {i} ,with  spacing .",
                "label": "human",
                "data_type": "story",
                "llm_type": "human",
            }
        )
        data.append(
            {
                "text": f"machine text number {i} here",
                "label": "llm",
                "data_type": "direct_prompt",
                "llm_type": "ChatGPT",
            }
        )
    data.append({"text": "oneword", "label": "llm", "data_type": "x", "llm_type": "ChatGPT"})
    path = tmp_path / "f.json.gz"
    with gzip.open(path, "wt") as fh:
        json.dump(data, fh)
    return path


def test_detectrl_split_is_the_authors_procedure(tmp_path):
    recs = load_detectrl(_records(tmp_path))
    assert len(recs) == 61 and recs[1].label == 1 and recs[0].data_type == "story"
    s = detectrl_split(recs, seed=0)
    sizes = {k: len(v.texts) for k, v in s.items()}
    # 30 pairs, minus the pair whose machine text has one word when it is drawn (seed 0: it is)
    assert sum(sizes.values()) == 58 and sizes == {"train": 6, "val": 26, "test": 26}
    for part in s.values():
        assert part.labels[::2] == [0] * (len(part.labels) // 2) and part.labels[1::2] == [1] * (
            len(part.labels) // 2
        )
    assert s["train"].texts == detectrl_split(recs, seed=0)["train"].texts
    assert s["train"].texts != detectrl_split(recs, seed=1)["train"].texts
    assert process_spaces(" a ,b . ") == "a,b."
    with pytest.raises(ValueError, match="path"):
        load_detectrl(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="seed"):
        detectrl_split(recs, seed=100)


def _recs(n_human, n_llm, text="some text here"):
    return [DetectRLRecord(f"{text} {i}", 0, "x", "human") for i in range(n_human)] + [
        DetectRLRecord(f"{text} {i}", 1, "x", "llm") for i in range(n_llm)
    ]


@pytest.mark.parametrize("seed", [True, 2.5, "3"])
def test_detectrl_split_seed_must_be_an_int(seed):
    # seed=True ran as iter 1; 2.5 failed with a TypeError deep inside
    with pytest.raises(ValueError, match="seed"):
        detectrl_split(_recs(5, 5), seed=seed)


@pytest.mark.parametrize(
    "records",
    [_recs(10, 0), _recs(0, 10), [], [DetectRLRecord("a", 0, "", ""), DetectRLRecord("b", 1, "", "")]],
)
def test_detectrl_split_refuses_records_without_pairs(records):
    # one class (or only one-word texts) gave three empty splits without a word
    with pytest.raises(ValueError, match="records must pair human and LLM texts"):
        detectrl_split(records, seed=0)


@pytest.mark.parametrize(
    "bad", [DetectRLRecord("a b", 2, "", ""), DetectRLRecord("a b", True, "", ""), {"text": "a b"}]
)
def test_detectrl_split_refuses_bad_records(bad):
    # label 2 was dropped from both classes unseen; label True leaked into Split.labels
    with pytest.raises(ValueError, match=r"records\[0\]"):
        detectrl_split([bad] + _recs(5, 5), seed=0)
    with pytest.raises(ValueError, match="records must be a list"):
        detectrl_split("records", seed=0)


def test_detectrl_shared_files_load_when_present():
    from iclr26.mrf_calibration.experiment import detectrl_dir

    folder = detectrl_dir()
    if folder is None:
        pytest.skip("DetectRL files not available")
    recs = load_detectrl(sorted(folder.glob("*.json*"))[0])
    assert len(recs) == 2008 and sum(r.label for r in recs) > 900
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = detectrl_split(recs, seed=0)
    assert len(s["test"].texts) > len(s["train"].texts)
