import importlib.util
import itertools
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import iclr26.dp_adaptation_privacy as dpa
from iclr26.dp_adaptation_privacy import _attacks


def _reference_rmia():
    """ml_privacy_meter's rmia.py from a checkout named by ICLR26_ML_PRIVACY_METER (skips without it)."""
    root = os.environ.get("ICLR26_ML_PRIVACY_METER")
    path = Path(root or "/nonexistent") / "modules" / "mia" / "attacks" / "rmia.py"
    if not path.is_file():
        pytest.skip("set ICLR26_ML_PRIVACY_METER to a checkout of privacytrustlab/ml_privacy_meter")
    pytest.importorskip("sklearn")
    spec = importlib.util.spec_from_file_location("_mlpm_rmia", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _signal_set(seed, n_refs):
    r = np.random.default_rng(seed)
    n, m = int(r.integers(5, 60)), int(r.integers(5, 60))
    return (
        r.random(n),
        r.random((n, n_refs)),
        r.random((n, n_refs)) < 0.5,
        r.random(m),
        r.random((m, n_refs)),
    )


@pytest.mark.filterwarnings("ignore:ref_x. the one-model offline fill-in")  # the path is compared on purpose
@pytest.mark.parametrize("seed,n_refs,a", list(itertools.product(range(4), (1, 2, 4), (0.0, 0.3, 1.0))))
def test_rmia_equals_reference_run_rmia(seed, n_refs, a):
    ref = _reference_rmia()
    tx, rx, rm, tz, rz = _signal_set(seed, n_refs)
    with np.errstate(divide="ignore"):
        assert (
            np.max(np.abs(dpa.rmia_from_signals(tx, rx, rm, tz, rz, a) - ref.run_rmia(tx, rx, rm, tz, rz, a)))
            < 1e-12
        )


@pytest.mark.parametrize("seed", range(10))
def test_tune_a_equals_reference_tune_offline_a(seed):
    import logging

    ref = _reference_rmia()
    r = np.random.default_rng(100 + seed)
    n, m, models = 30, 20, 3
    all_x = r.random((n, models))
    all_mem = r.random((n, models)) < 0.5
    all_x[all_mem] += 0.3 * r.random(all_mem.sum())  # members score higher: a non-trivial AUC curve
    z = r.random((m, models))
    # Model 0 is the target; the reference pairs it with model 1 and attacks 1 with reference model 2.
    theirs, _, _ = ref.tune_offline_a(
        0, all_x, all_mem, all_x[:, 2:], all_mem[:, 2:], z[:, 1], z[:, 2:], logging.getLogger("t")
    )
    ours = _attacks.tune_a(all_x[:, 1], all_mem[:, 1], all_x[:, 2:], all_mem[:, 2:], z[:, 1], z[:, 2:])
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_rmia_matches_a_direct_loop():
    # Independent of the reference: the paper's pairwise definition with one OUT reference per sample.
    tx, rx, rm, tz, rz = _signal_set(9, 1)
    rm[:] = False
    a = 0.4
    px = (1 + a) / 2 * rx[:, 0] + (1 - a) / 2
    pz = (1 + a) / 2 * rz[:, 0] + (1 - a) / 2
    loop = [np.mean([(tx[i] / px[i]) / (tz[j] / pz[j]) > 1 for j in range(len(tz))]) for i in range(len(tx))]
    assert np.allclose(dpa.rmia_from_signals(tx, rx, rm, tz, rz, a), loop)


def test_roc_auc_and_tpr_against_sklearn():
    sk = pytest.importorskip("sklearn.metrics")
    r = np.random.default_rng(0)
    y = r.random(200) < 0.4
    s = np.round(r.normal(size=200) + y, 1)  # ties
    assert dpa.roc_auc(y, s) == pytest.approx(sk.roc_auc_score(y, s), abs=1e-12)
    fpr, tpr, _ = sk.roc_curve(y, s)
    for f in (0.0, 0.01, 0.1, 0.5):
        assert dpa.tpr_at_fpr(y, s, f) == pytest.approx(tpr[fpr <= f].max())


def test_min_k_percent():
    lps = [np.array([-1.0, -5.0, -2.0, -0.5]), np.array([-3.0])]
    assert np.allclose(_attacks.min_k_percent(lps, 0.5), [-3.5, -3.0])


def test_text_level_attacks_on_tiny_models(tiny, texts):
    members, population = texts[:8], texts[8:]
    target = dpa.adapt(tiny, members, "full", float("inf"), epochs=3, batch_size=4, lr=1e-2, max_length=24)
    cand = members[:4] + population[:4]
    labels = np.r_[np.ones(4), np.zeros(4)]
    s_ref = dpa.reference_attack(target, tiny, cand, max_length=24)
    assert dpa.roc_auc(labels, s_ref) > 0.9  # non-private, memorised members
    s = dpa.rmia_scores(target, [tiny], np.zeros((8, 1), bool), cand, population[4:], max_length=24)
    assert s.shape == (8,) and ((s >= 0) & (s <= 1)).all()
    mk = dpa.min_k_percent(target, cand, 0.2, max_length=24)
    assert mk.shape == (8,)
    sig = dpa.signals(target, cand, max_length=24)
    assert np.allclose(np.log(sig), [lp.mean() for lp in dpa.token_logprobs(target, cand, max_length=24)])
    one_by_one = np.array([dpa.signals(target, [c], max_length=24)[0] for c in cand])
    assert np.allclose(sig, one_by_one, rtol=1e-5)  # batch-size independent


def test_rmia_scores_bad_input(tiny, texts):
    with pytest.raises(ValueError, match="population"):
        dpa.rmia_scores(tiny, [tiny], np.zeros((2, 1), bool), texts[:2], texts[1:4])
    with pytest.raises(ValueError, match="ref_memberships"):
        dpa.rmia_scores(tiny, [tiny], np.zeros((3, 1), bool), texts[:2], texts[4:6])
    with pytest.raises(ValueError, match="references"):
        dpa.rmia_scores(tiny, [], np.zeros((2, 0), bool), texts[:2], texts[4:6])
    with pytest.raises(ValueError, match="references"):
        dpa.rmia_scores(tiny, [tiny], np.zeros((2, 1), bool), texts[:2], texts[4:6], a="tune")
    with pytest.raises(ValueError, match="a"):
        dpa.rmia_scores(tiny, [tiny, tiny], np.zeros((2, 2), bool), texts[:2], texts[4:6], a="best")


def test_different_tokenizer_is_refused(tiny, texts):
    from iclr26.models import HFModel
    from iclr26.models._tiny import build_tiny_tokenizer

    tok = build_tiny_tokenizer(vocab_size=300)
    other = HFModel(tiny.model, tok, name="other-tokenizer")
    with pytest.raises(ValueError, match="tokenizer"):
        dpa.reference_attack(tiny, other, texts[:2])
    with pytest.raises(ValueError, match="tokenizer"):
        dpa.rmia_scores(tiny, [other], np.zeros((2, 1), bool), texts[:2], texts[4:6])


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: dpa.rmia_from_signals([0.1, 0.2], [[0.1]], [[True]], [0.3], [[0.2]]), "ref_x"),
        (lambda: dpa.rmia_from_signals([0.1], [[0.1]], [[1]], [0.3], [[0.2]]), "ref_memberships"),
        (lambda: dpa.rmia_from_signals([0.1], [[0.1]], [[True]], [0.3], [[0.2]], a=2), "a"),
        (lambda: dpa.rmia_from_signals([0.1], [[0.1]], [[True]], [0.3], [[0.2]], gamma=0), "gamma"),
        (lambda: dpa.rmia_from_signals([0.1], [[0.1]], [[True]], [0.3], [[0.2]], a=True), "a"),
        # a zero likelihood made every ratio 0/0 and every score 0; a negative one flips the order
        (lambda: dpa.rmia_from_signals([0.1], [[0.1]], [[True]], [0.3], [[0.0]]), "ref_z"),
        (lambda: dpa.rmia_from_signals([-0.1], [[0.1]], [[True]], [0.3], [[0.2]]), "target_x"),
        (lambda: dpa.rmia_from_signals([0.1], [[0.1]], [[True]], [0.0], [[0.2]]), "target_z"),
        (lambda: dpa.roc_auc([1, 1], [0.1, 0.2]), "labels"),
        (lambda: dpa.roc_auc([1, 0, 1], [0.1, 0.2]), "labels"),
        (lambda: dpa.roc_auc([1, 0], [0.1, float("nan")]), "scores"),
        (lambda: dpa.tpr_at_fpr([1, 0], [0.1, 0.2], fpr=1.5), "fpr"),
    ],
)
def test_signal_level_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_one_model_fill_in_below_one_minus_a_warns():
    """The one-model offline fill-in maps IN signals p < 1 - a to negative OUT estimates: a warning,
    not silently chance-level scores; none where the fill-in stays positive or is not used."""
    x, z = [0.05, 0.08], [0.06, 0.07]
    with pytest.warns(UserWarning, match="ref_x: .*2 of 2 IN"):
        dpa.rmia_from_signals(x, [[0.10], [0.12]], [[True], [True]], z, [[0.06], [0.07]], a=0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dpa.rmia_from_signals(x, [[0.10], [0.12]], [[True], [True]], z, [[0.06], [0.07]], a=1.0)
        dpa.rmia_from_signals(x, [[0.10], [0.12]], [[False], [False]], z, [[0.06], [0.07]], a=0.3)
        four = [[0.1, 0.2, 0.1, 0.2]] * 2
        dpa.rmia_from_signals(x, four, [[True, False, True, False]] * 2, z, four, a=0.3)  # 2 OUT models each


def test_min_k_bad_k(tiny, texts):
    with pytest.raises(ValueError, match="k"):
        dpa.min_k_percent(tiny, texts[:2], 1.5)
