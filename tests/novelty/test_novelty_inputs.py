"""Bad input raises ValueError naming the argument."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.novelty import (
    InfiniGramIndex,
    NgramIndex,
    SuffixArrayIndex,
    fluency_score,
    frontier_plot,
    novelty,
    novelty_report,
    originality,
)


@pytest.fixture(scope="module")
def ix():
    return NgramIndex.build(["a b c d e f"], n=(1, 2, 3))


@pytest.mark.parametrize("n", [0, -1, 1.5, True, (), (2, 0)])
def test_bad_order(n):
    with pytest.raises(ValueError, match="n"):
        NgramIndex.build(["a b"], n=n)


@pytest.mark.parametrize("texts", [[], [""], ["  ", "\n"], ["!!"] * 0])
def test_empty_corpus(texts):
    with pytest.raises(ValueError, match="texts"):
        NgramIndex.build(texts, n=1)


def test_bad_corpus_items_and_paths(tmp_path):
    with pytest.raises(ValueError, match="texts"):
        NgramIndex.build([1, 2], n=1)
    with pytest.raises(ValueError, match="texts"):
        NgramIndex.build(tmp_path / "missing", n=1)
    with pytest.raises(ValueError, match="unit"):
        NgramIndex.build(["a"], n=1, unit="byte")
    with pytest.raises(ValueError, match="path"):
        NgramIndex.load(tmp_path / "missing.npz")


def test_bad_queries(ix):
    with pytest.raises(ValueError, match="ngrams"):
        ix.count(["a b", "a"])
    with pytest.raises(ValueError, match="must hold integers"):  # float ids would count as 0
        ix.count(np.array([[1.0, 2.0]]))
    with pytest.raises(ValueError, match="must hold integers"):
        ix.count(np.array([[np.nan, 2.0]]))
    with pytest.raises(ValueError, match="units must be strings"):  # nested int lists are not ids
        ix.count([[1, 2]])
    with pytest.raises(ValueError, match="n must be an indexed order"):
        ix.count(["a b c d"])
    with pytest.raises(ValueError, match="ngrams"):
        ix.count(np.array([[99, 1]]))
    with pytest.raises(ValueError, match="ngrams"):
        ix.count(np.array([1, 2]))


def test_unsaveable_callable_unit(tmp_path):
    iy = NgramIndex.build(["a b"], n=1, unit=str.split)
    with pytest.raises(ValueError, match="unit"):
        iy.save(tmp_path / "x.npz")


def test_originality_bad_input(ix):
    with pytest.raises(ValueError, match="n"):
        originality(["a b"], ix, n=0)
    with pytest.raises(ValueError, match="n must be an order"):
        originality(["a b"], ix, n=5)
    with pytest.raises(ValueError, match="generations"):
        originality("a b c", ix, n=2)
    with pytest.raises(ValueError, match="generations"):
        originality([1], ix, n=2)
    with pytest.raises(ValueError, match="index"):
        originality(["a b"], object(), n=2)
    with pytest.raises(ValueError, match="prompts"):
        originality(["a b", "c d"], ix, n=2, prompts=["a"])
    with pytest.raises(ValueError, match="prompts"):
        originality(["a b"], ix, n=2, prompts=["zz"])


@pytest.mark.parametrize(
    "o,q,name",
    [
        ([0.5, 1.2], [0.5, 0.5], "originality"),
        ([0.5], [-0.1], "quality"),
        ([0.5], [np.inf], "quality"),
        (["x"], [0.5], "originality"),
    ],
)
def test_novelty_out_of_range(o, q, name):
    with pytest.raises(ValueError, match=name):
        novelty(o, q)


def test_mismatched_lengths():
    with pytest.raises(ValueError, match="quality"):
        novelty([0.5, 0.5], [0.5])
    with pytest.raises(ValueError, match="reference"):
        novelty_report([0.5, 0.5], [0.5, 0.5], reference=([0.5], [0.5]))
    with pytest.raises(ValueError, match="reference"):
        novelty_report([0.5], [0.5], reference=([0.5],))
    with pytest.raises(ValueError, match="quality"):
        novelty_report([0.5], [1.5])


def test_fluency_bad_input(ix):
    with pytest.raises(ValueError, match="index"):
        fluency_score(["a b c"], NgramIndex.build(["a b"], n=1))
    with pytest.raises(ValueError, match="weights"):
        fluency_score(["a b c"], ix, weights=(0.5, 0.5, 0.5))
    with pytest.raises(ValueError, match="texts"):
        fluency_score(["a b c"], ix, prompts=["a", "b"])


def test_frontier_bad_input():
    with pytest.raises(ValueError, match="points"):
        frontier_plot({})
    with pytest.raises(ValueError, match="points"):
        frontier_plot({"x": (1.5, 0.2)})


# ------------------------------------------------------------------ hostile-input review
def test_corpus_mapping_is_refused():
    # list({title: text}) is the titles: the index held the work names, not their texts
    works = {"hamlet": "to be or not to be", "tempest": "full fathom five"}
    with pytest.raises(ValueError, match=r"texts.*mapping.*values"):
        NgramIndex.build(works, n=1)
    with pytest.raises(ValueError, match=r"texts.*mapping"):
        SuffixArrayIndex.build(works)


@pytest.mark.parametrize("lowercase", ["False", "no", 0.0, None])
def test_lowercase_must_be_a_bool(lowercase, tmp_path):
    # "False" is truthy: the corpus was silently lower-cased
    with pytest.raises(ValueError, match="lowercase"):
        NgramIndex.build(["The Cat"], n=1, lowercase=lowercase)
    with pytest.raises(ValueError, match="lowercase"):
        SuffixArrayIndex.build(["The Cat"], lowercase=lowercase)
    with pytest.raises(ValueError, match="lowercase"):
        InfiniGramIndex.build(["The Cat"], tmp_path / "ig", lowercase=lowercase)
    with pytest.raises(ValueError, match="lowercase"):
        InfiniGramIndex(tmp_path / "ig", lowercase=lowercase)


def test_tokenizer_returning_a_string_is_refused():
    # a tokenizer returning "xyz" was read character by character (units x, y, z)
    with pytest.raises(ValueError, match="unit: a callable tokenizer must return a list"):
        NgramIndex.build(["ab cd"], n=1, unit=str.upper)


@pytest.mark.parametrize("query", ["abc", b"ab", {"a": 1}])
def test_single_string_query_is_refused(ix, query):
    # ix.count("abc") counted the 1-grams a, b, c instead of one n-gram
    sx = SuffixArrayIndex.build(["a b c d e f"])
    for index in (ix, sx):
        with pytest.raises(ValueError, match="ngrams must be a sequence of n-grams"):
            index.count(query)
        with pytest.raises(ValueError, match="ngrams must be a sequence of n-grams"):
            index.contains(query)


@pytest.mark.parametrize("n", [True, 1.0])
def test_distinct_order_must_be_an_int(ix, n):
    with pytest.raises(ValueError, match="n must be an integer"):
        ix.distinct(n)


@pytest.mark.parametrize("weights", [(0.5, 0.5, 0.0), (1.0, 0.0, 0.0)])
def test_fluency_needs_a_positive_unigram_weight(ix, weights):
    # without the add-one unigram an unseen bigram has p_ref = 0: log 0 = -inf and Q = 0 for the text
    with pytest.raises(ValueError, match=r"weights\[2\]"):
        fluency_score(["a b c z"], ix, weights=weights)


@pytest.mark.parametrize(
    "points", [{"x": (True, 0.5)}, {"x": ("0.5", 0.5)}, {"x": (0.5,)}, [("x", (0.5, 0.5))]]
)
def test_frontier_points_must_be_number_pairs(points):
    # (True, 0.5) was plotted at O = 1
    with pytest.raises(ValueError, match="points"):
        frontier_plot(points)
