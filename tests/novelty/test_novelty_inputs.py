"""Bad input raises ValueError naming the argument."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.novelty import NgramIndex, fluency_score, frontier_plot, novelty, novelty_report, originality


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
