"""Behaviour of the public API: index build/save/load, originality, novelty, report, fluency, plot."""

from __future__ import annotations

import numpy as np

from iclr26.novelty import NgramIndex, fluency_score, frontier_plot, novelty, novelty_report, originality
from iclr26.novelty._index import pack


def test_pack_is_lexicographic_in_both_layouts():
    rng = np.random.default_rng(0)
    for bits, n in ((4, 3), (9, 8), (17, 4)):
        grams = rng.integers(0, 2**bits, size=(500, n))
        keys = pack(grams, bits)
        order = np.lexsort(grams.T[::-1])
        assert keys.dtype.kind == ("u" if n * bits <= 64 else "S")
        np.testing.assert_array_equal(np.argsort(keys, kind="stable"), order)


def test_build_count_contains_and_ids():
    ix = NgramIndex.build(["To be, or not to be.", "to be is to do"], n=(1, 2, 3))
    assert ix.orders == (1, 2, 3) and ix.n_docs == 2 and ix.n_tokens == 13
    np.testing.assert_array_equal(ix.count(["to be", "be ,", "do to", "nope x"]), [3, 1, 0, 0])
    np.testing.assert_array_equal(ix.contains([("to", "be", "is")]), [True])
    np.testing.assert_array_equal(ix.count(np.array([ix.ids(["to", "be"])])), [3])
    assert ix.distinct(1) == len(ix.vocab)
    assert ix.count([]).shape == (0,)


def test_ngrams_never_cross_documents():
    ix = NgramIndex.build(["a b", "c d"], n=2)
    np.testing.assert_array_equal(ix.count(["b c"]), [0])


def test_char_unit_and_callable_tokenizer():
    ix = NgramIndex.build(["abab"], n=2, unit="char")
    np.testing.assert_array_equal(ix.count(["ab", "ba", "aa"]), [2, 1, 0])
    iy = NgramIndex.build(["x-y x-y"], n=1, unit=lambda t: t.split("-"))
    np.testing.assert_array_equal(iy.count([("y x",)]), [1])


def test_case_sensitivity_is_a_parameter():
    assert NgramIndex.build(["The cat"], n=1).count(["the"])[0] == 1
    assert NgramIndex.build(["The cat"], n=1, lowercase=False).count([("the",)])[0] == 0


def test_build_from_file_and_folder(tmp_path):
    (tmp_path / "a.txt").write_text("one two three", encoding="utf-8")
    (tmp_path / "b.txt").write_text("two three four", encoding="utf-8")
    assert NgramIndex.build(tmp_path, n=2).count(["two three"])[0] == 2
    assert NgramIndex.build(tmp_path / "a.txt", n=2).count(["two three"])[0] == 1


def test_save_load_round_trip_is_atomic(tmp_path, corpus):
    ix = NgramIndex.build(corpus, n=(1, 4, 8))
    path = ix.save(tmp_path / "sub" / "ix.npz")
    assert [p.name for p in path.parent.iterdir()] == ["ix.npz"]  # no temp file left behind
    iy = NgramIndex.load(path)
    assert (iy.orders, iy.vocab, iy.n_tokens) == (ix.orders, ix.vocab, ix.n_tokens)
    words = [w for d in corpus[:3] for w in d.split()]
    for n in (1, 4, 8):
        grams = [tuple(words[i : i + n]) for i in range(0, 200, 3)]
        np.testing.assert_array_equal(iy.count(grams), ix.count(grams))


def test_originality_values_prompts_and_nan():
    ix = NgramIndex.build(["to be or not to be that is the question"], n=(2, 3))
    o = originality(["to be or", "xx yy zz", "to be or xx", "to", ""], ix, n=2)
    np.testing.assert_allclose(o[:3], [0.0, 1.0, 1 / 3])
    assert np.isnan(o[3:]).all()
    # the prompt's n-grams and the n-grams crossing the boundary are excluded
    o = originality(["question xx to be or", "to b e f"], ix, n=2, prompts=["question xx", "to b"])
    np.testing.assert_allclose(o[0], 0.0)
    np.testing.assert_allclose(o[1], 1.0)  # "b" straddles nothing; ("e", "f") is unseen
    assert np.isnan(originality(["to be"], ix, n=3, prompts=["to"]))[0]


def test_novelty_harmonic_mean():
    n = novelty([0.0, 1.0, 0.5, 0.2, np.nan, 0.0], [0.0, 1.0, 0.5, 0.8, 0.5, 1.0])
    np.testing.assert_allclose(n[:4], [0.0, 1.0, 0.5, 2 * 0.2 * 0.8 / 1.0])
    assert np.isnan(n[4]) and n[5] == 0.0


def test_novelty_report_paired_tests():
    rng = np.random.default_rng(0)
    o, q = rng.uniform(0.3, 0.9, 50), rng.uniform(0.3, 0.9, 50)
    o[0] = np.nan
    rep = novelty_report(o, q, reference=(o * 0.5, q))
    assert rep["n_samples"] == 50 and rep["n_undefined"] == 1
    np.testing.assert_allclose(rep["mean_N"], np.nanmean(novelty(o, q)))
    vs = rep["vs_reference"]
    assert vs["O"]["n"] == 49 and vs["O"]["mean_diff"] > 0 and vs["O"]["p"] < 1e-6
    assert vs["Q"]["mean_diff"] == 0.0


def test_fluency_prefers_fluent_over_shuffled(corpus):
    text = "to be or not to be that is the question whether tis nobler in the mind to suffer"
    ix = NgramIndex.build([text] * 3 + corpus, n=(1, 2, 3))
    words = text.split()
    shuffled = " ".join(np.random.default_rng(0).permutation(words))
    q = fluency_score([text, shuffled, "a b"], ix)
    assert q[0] > 0.5 > q[1] and np.isnan(q[2])


def test_frontier_plot():
    fig = frontier_plot({"model": (0.4, 0.7), "human": (0.9, 0.6)})
    assert len(fig.axes[0].collections) >= 2
