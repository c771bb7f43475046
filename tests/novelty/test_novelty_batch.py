"""The batch path (all texts split and looked up in numpy passes) equals the per-text Python one:
``re.findall`` on each text, ``str.lower`` per unit, a dict lookup per unit."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest

from iclr26.novelty import NgramIndex, originality
from iclr26.novelty._batch import _SHORT, code_points, packed_keys, unit_spans

EDGE_TEXTS = [
    "",
    " ",
    "\n\n",
    "a",
    "A",
    "!!! ... ??",
    "—",
    "🙂 🙃🙂",
    "日本語 café naïve straße ÉCOLE",
    "İstanbul İ",  # str.lower lengthens İ: the unit is lowered whole, not per code point
    "ΟΔΟΣ ΟΔΟΣ.",  # final sigma: str.lower depends on the position in the unit
    "x\x00y \x00",
    "lone \ud800 surrogate",
    "under_score x1_2 ___ 0123456789",
    "abcdefghi abcdefghij abcdefghijk Abcdefghij ABCDEFGHIJK",  # around the packed-key length
    "To be, or not to be: that is the question.",
    "tab\tsep\rcarriage\x0bvt\x1cfs\u2028ls\u00a0nbsp",
    "e\u0301 combining",
    "a-b a—b a'b",
]


def _reference_ids(index, texts, skip):
    """Per text: the units starting at or after ``skip`` (``re.finditer``), lower-cased unit by unit,
    looked up in the vocabulary dict."""
    pattern = r"\w+|[^\w\s]" if index.unit == "word" else r"\S"
    ids, lengths = [], []
    for text, k in zip(texts, skip, strict=True):
        units = [m.group() for m in re.finditer(pattern, text) if m.start() >= k]
        units = [u.lower() for u in units] if index.lowercase else units
        ids += [index._ids.get(u, 0) for u in units]
        lengths.append(len(units))
    return np.array(ids, dtype=np.int64), np.array(lengths, dtype=np.int64)


@pytest.fixture(scope="module", params=[("word", True), ("word", False), ("char", True)])
def edge_index(request):
    unit, lowercase = request.param
    # half the edge texts, so that the other half holds units the corpus lacks
    corpus = EDGE_TEXTS[::2] + ["ordinary words and Some Capitals", "abcdefghij istanbul οδος οδοσ"]
    return NgramIndex.build(corpus, n=(1, 2), unit=unit, lowercase=lowercase)


def test_batch_ids_equal_per_text_lookup(edge_index):
    rng = np.random.default_rng(0)
    texts = EDGE_TEXTS + [" ".join(rng.choice(EDGE_TEXTS, size=3)) for _ in range(60)]
    skip = [int(rng.integers(0, len(t) + 1)) if i % 2 else 0 for i, t in enumerate(texts)]
    for k in (None, skip):
        got_ids, got_lengths = edge_index.unit_ids(texts, skip=k)
        want_ids, want_lengths = _reference_ids(edge_index, texts, k or [0] * len(texts))
        np.testing.assert_array_equal(got_lengths, want_lengths)
        np.testing.assert_array_equal(got_ids, want_ids)
    assert (got_ids > 0).mean() > 0.5 and (got_ids == 0).any()  # known and unknown units both occur


@pytest.mark.slow
def test_unit_spans_match_the_regex_on_every_code_point():
    # every code point (surrogates included) between two letters: classes come from the same regex
    chars = "".join(chr(c) + "a" for c in range(sys.maxunicode + 1))
    starts, ends = unit_spans(code_points(chars), "word")
    want = [(m.start(), m.end()) for m in re.finditer(r"\w+|[^\w\s]", chars)]
    np.testing.assert_array_equal(np.stack([starts, ends], axis=1), np.array(want))
    starts, ends = unit_spans(code_points(chars), "char")
    np.testing.assert_array_equal(starts, [m.start() for m in re.finditer(r"\S", chars)])
    np.testing.assert_array_equal(ends, starts + 1)


def test_packed_keys_are_one_to_one():
    rng = np.random.default_rng(1)
    alphabet = list("abcXYZ019_") + [",", "é", "\x00"]
    units = sorted(
        {"".join(rng.choice(alphabet, size=int(rng.integers(1, _SHORT + 3)))) for _ in range(5000)}
    )
    units += ["a" * k for k in range(1, _SHORT + 3)] + ["_", "0", "a0", "0a"]
    text = "\n".join(units)
    lengths = np.array([len(u) for u in units])
    starts = np.cumsum(lengths + 1) - (lengths + 1)
    for lower in (False, True):
        keys, has_key = packed_keys(code_points(text), starts, lengths, lower)
        written = [u.lower() if lower else u for u in units]
        # units with a key: ASCII, a single code point or 2.._SHORT word characters
        expected = [
            u.isascii() and (len(u) == 1 or (len(u) <= _SHORT and re.fullmatch(r"\w+", u) is not None))
            for u in units
        ]
        np.testing.assert_array_equal(has_key, expected)
        pairs = {(k, u) for k, u, ok in zip(keys.tolist(), written, has_key, strict=True) if ok}
        # one key per (lower-cased) unit and one unit per key
        assert len({k for k, _ in pairs}) == len({u for _, u in pairs}) == len(pairs)


def test_originality_with_prompts_cut_inside_units():
    ix = NgramIndex.build(["the quick brown fox jumps over the lazy dog"], n=(2,))
    text = "the quickbrown fox jumps"
    # the prompt ends inside "quickbrown": that unit is the prompt's; scored: fox, jumps
    np.testing.assert_array_equal(originality([text], ix, n=2, prompts=["the quick"]), [0.0])
    assert np.isnan(originality([text], ix, n=2, prompts=["the quickbrown fox"]))[0]
    np.testing.assert_array_equal(originality(["a\nb", "fox jumps"], ix, n=2), [1.0, 0.0])
