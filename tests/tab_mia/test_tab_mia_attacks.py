import zlib

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from iclr26.tab_mia import (
    ATTACKS,
    AUTHORS_NAMES,
    MEMBER_SIGN,
    make_benchmark,
    make_benchmark_from_tables,
    mia_metrics,
    mia_scores,
)
from iclr26.tab_mia.data import short_tables


@pytest.fixture(scope="module")
def texts():
    bench = pd.concat(
        [
            make_benchmark_from_tables(short_tables(40, seed=s), enc)
            for s, enc in ((0, "markdown"), (1, "json"))
        ]
    )
    return bench.input.tolist()[:60] + ["A", "Ab", "Mixed CASE Text 12"]  # 1-2 token texts give NaNs


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert np.array_equal(np.isnan(a), np.isnan(b))
    ok = ~np.isnan(a)
    return np.max(np.abs(a[ok] - b[ok]) / np.maximum(np.abs(b[ok]), 1e-12))


def test_scores_match_authors_inference(authors, tiny, texts):
    ours = mia_scores(tiny, texts, batch_size=5)
    theirs = [authors.mia.inference(tiny.model, tiny.tokenizer, t, 1, "x", {}, {}) for t in texts]
    for col in ATTACKS:
        assert _rel(ours[col], [p[AUTHORS_NAMES[col]] for p in theirs]) < 1e-5, col


def test_scores_batch_independent(tiny, texts):
    a = mia_scores(tiny, texts[:12], batch_size=1)
    b = mia_scores(tiny, texts[:12], batch_size=7)
    np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), rtol=1e-5, equal_nan=True)


@pytest.fixture(scope="module")
def shared_prefix_texts():
    """Line-sep chunks (all start with the same CSV header), a duplicate, and a text that is a prefix of
    another: the cases where :func:`token_stats` runs a common prefix once."""
    from iclr26.tab_mia.data import adult_table

    chunks = make_benchmark(adult_table().iloc[:20], 2, "line-sep").input.tolist()
    return chunks + [chunks[0], chunks[1][:60], "age,workclass"]


def test_shared_prefix_scores_match_authors(authors, tiny, shared_prefix_texts):
    from iclr26.tab_mia._attacks import _shared_prefix

    ids = sorted(tiny.tokenizer.encode(t) for t in shared_prefix_texts)
    assert min(_shared_prefix(ids[i : i + 4]) for i in range(1, len(ids) - 3)) > 20  # the header, once
    assert _shared_prefix([ids[0]]) == 0
    assert _shared_prefix([[5, 6, 7], [5, 6, 7]]) == 2  # each row keeps one token for its suffix
    theirs = [
        authors.mia.inference(tiny.model, tiny.tokenizer, t, 1, "x", {}, {}) for t in shared_prefix_texts
    ]
    for bs in (3, 8):
        ours = mia_scores(tiny, shared_prefix_texts, batch_size=bs)
        for col in ATTACKS:
            assert _rel(ours[col], [p[AUTHORS_NAMES[col]] for p in theirs]) < 1e-5, (bs, col)


def test_chunked_statistics_equal(tiny, shared_prefix_texts):
    from iclr26.tab_mia._attacks import token_stats

    a = token_stats(tiny.model, tiny.tokenizer, shared_prefix_texts[:6], 3, chunk=5)
    b = token_stats(tiny.model, tiny.tokenizer, shared_prefix_texts[:6], 3, chunk=1000)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x["logprob"], y["logprob"], rtol=1e-6)
        np.testing.assert_allclose(x["kpp"], y["kpp"], rtol=1e-5, atol=1e-5)  # z-scores near 0: float32


def test_scores_definitions(tiny):
    text = "Age: 39 | Workclass: State-gov"
    s = mia_scores(tiny, [text]).iloc[0]
    ids = tiny.tokenizer.encode(text)
    _, lp, _ = tiny.text_logprobs(text)
    lp = np.array(lp[1:], float)
    assert len(lp) == len(ids) - 1
    assert s["ppl"] == pytest.approx(np.exp(-lp.mean()), rel=1e-5)
    assert s["zlib"] == pytest.approx(-lp.mean() / len(zlib.compress(text.encode())), rel=1e-5)
    k = int(len(lp) * 0.2)
    assert s["min_k_20"] == pytest.approx(-np.sort(lp)[:k].mean(), rel=1e-5)
    assert s["max_k_20"] == pytest.approx(-np.sort(lp)[-k:].mean(), rel=1e-5)


def test_max_chars_truncates(tiny):
    a = mia_scores(tiny, ["x" * 30 + "tail"], max_chars=30)
    b = mia_scores(tiny, ["x" * 30])
    pd.testing.assert_frame_equal(a, b)


def test_metrics_match_get_metrics(authors):
    rng = np.random.default_rng(0)
    for trial in range(20):
        n = int(rng.integers(6, 80))
        y = rng.integers(0, 2, n)
        y[:2] = [0, 1]
        raw = rng.normal(size=n) + (0.8 if trial % 2 else -0.8) * y
        raw[rng.random(n) < 0.1] = np.nan
        m = mia_metrics(pd.DataFrame({"min_k_20": raw}), y).loc["min_k_20"]
        keep = np.isfinite(raw)
        theirs = authors.eval.get_metrics(list(raw[keep]), list(y[keep]))
        ours = [m["auroc_authors"], m["fpr95_authors"], m["tpr05_authors"], m["acc_authors"]]
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
        fixed = roc_auc_score(y[keep], -raw[keep])  # min_k: a higher raw score means non-member
        assert m["auroc"] == pytest.approx(fixed, abs=1e-12)
        assert m["auroc_authors"] == pytest.approx(max(fixed, 1 - fixed), abs=1e-12)
        assert m["n_dropped"] == int((~keep).sum())


def test_a_priori_direction_is_not_flipped():
    y = np.r_[np.ones(10), np.zeros(10)]
    loss = np.r_[np.full(10, 5.0), np.full(10, 1.0)]  # members have the *higher* loss: the attack fails
    m = mia_metrics(pd.DataFrame({"ppl": loss, "min_k_pp_10": -loss}), y)
    assert m.loc["ppl", "auroc"] == 0.0 and m.loc["ppl", "auroc_authors"] == 1.0
    assert m.loc["min_k_pp_10", "auroc"] == 0.0
    assert MEMBER_SIGN["ppl"] == -1 and MEMBER_SIGN["min_k_pp_30"] == 1


def test_metrics_all_nan_column():
    m = mia_metrics(pd.DataFrame({"ppl": [np.nan] * 4}), [0, 1, 0, 1])
    assert np.isnan(m.loc["ppl", "auroc"]) and m.loc["ppl", "n_dropped"] == 4


def test_bad_input(tiny):
    with pytest.raises(ValueError, match="texts"):
        mia_scores(tiny, [])
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        mia_scores(tiny, ["a", ""])
    with pytest.raises(ValueError, match="texts"):
        mia_scores(tiny, "abc")
    with pytest.raises(ValueError, match="batch_size"):
        mia_scores(tiny, ["abc"], batch_size=0)
    with pytest.raises(ValueError, match="model"):
        mia_scores(object(), ["abc"])
    frame = pd.DataFrame({"ppl": [1.0, 2.0]})
    with pytest.raises(ValueError, match="labels"):
        mia_metrics(frame, [1, 1])
    with pytest.raises(ValueError, match="labels"):
        mia_metrics(frame, [0, 2])
    with pytest.raises(ValueError, match="labels"):
        mia_metrics(frame, [0, 1, 1])
    with pytest.raises(ValueError, match="scores"):
        mia_metrics(np.zeros((2, 1)), [0, 1])
