"""Exactness: counts and originality of both backends equal a brute-force Python reference and infini-gram
2.6.0."""

from __future__ import annotations

import json
import math
import resource
import subprocess
import sys

import numpy as np
import pytest

from iclr26.novelty import NgramIndex, SuffixArrayIndex, originality

ORDERS = tuple(range(1, 9))


@pytest.fixture(scope="module", params=["sorted-keys", "suffix-array"])
def index(corpus, request):
    if request.param == "suffix-array":
        return SuffixArrayIndex.build(corpus)
    return NgramIndex.build(corpus, n=ORDERS)


def _queries(corpus, ref, n_queries: int = 10_000, seed: int = 1) -> list[tuple[str, ...]]:
    """Half seen (windows of the corpus), half random (mostly unseen, some with unknown words)."""
    rng = np.random.default_rng(seed)
    docs = [ref.units(d) for d in corpus]
    vocab = sorted({u for d in docs for u in d}) + ["zzz-unknown", "ω"]
    out = []
    for i in range(n_queries):
        n = int(rng.integers(1, 9))
        long_docs = [d for d in docs if len(d) >= n]
        if i % 2 == 0 and long_docs:
            d = long_docs[int(rng.integers(len(long_docs)))]
            s = int(rng.integers(len(d) - n + 1))
            out.append(tuple(d[s : s + n]))
        else:
            out.append(tuple(rng.choice(vocab, size=n)))
    return out


def _count_all(index, queries) -> np.ndarray:
    out = np.zeros(len(queries), dtype=np.int64)
    for n in ORDERS:
        rows = [i for i, q in enumerate(queries) if len(q) == n]
        out[rows] = index.count([queries[i] for i in rows])
    return out


def test_counts_equal_brute_force(corpus, index, ref):
    queries = _queries(corpus, ref)
    brute = {n: ref.ngram_counts(corpus, n) for n in ORDERS}
    expected = np.array([brute[len(q)][q] for q in queries])
    got = _count_all(index, queries)
    assert len(queries) >= 10_000
    assert (expected > 0).sum() > 4000 and (expected == 0).sum() > 4000  # both seen and unseen
    assert (expected > 1).sum() > 500  # repeated n-grams too
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(index.contains([queries[0]]), [expected[0] > 0])


def _edge_texts(corpus, ref) -> list[tuple[str, str]]:
    """(prompt, text) pairs: empty, shorter than n, unicode, punctuation-only, copies, mixes."""
    rng = np.random.default_rng(2)
    fixed = [
        "",
        " ",
        "a",
        "w0 w1",
        "!!! ... ??",
        "—",
        "日本語 café naïve straße école",
        "🙂 🙃 🙂",
        "W0 W1 W2 W3 W4 W5",
    ]
    out = [("", t) for t in fixed]
    docs = [ref.units(d) for d in corpus]
    words = sorted({u for d in docs for u in d}) + ["novel", "ünïcødé", "?!"]
    while len(out) < 240:
        d = docs[int(rng.integers(len(docs)))]
        k = int(rng.integers(0, 25))
        s = int(rng.integers(0, max(len(d) - k, 0) + 1))
        body = list(d[s : s + k])
        for j in np.flatnonzero(rng.random(len(body)) < rng.random() * 0.5):
            body[j] = str(rng.choice(words))
        text = " ".join(body)
        cut = int(rng.integers(0, len(text) + 1)) if rng.random() < 0.5 else 0
        out.append((text[:cut], text))
    return out


@pytest.mark.parametrize("n", [1, 3, 5, 8])
def test_originality_equals_brute_force(corpus, index, ref, n):
    pairs = _edge_texts(corpus, ref)
    counts = ref.ngram_counts(corpus, n)
    expected = np.array([ref.originality(t, counts, n, p) for p, t in pairs])
    got = originality([t for _, t in pairs], index, n=n, prompts=[p for p, _ in pairs])
    assert len(pairs) >= 200
    assert np.isnan(expected).sum() > 5 and np.isfinite(expected).sum() > 100
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    ok = ~np.isnan(expected)
    assert np.all(got[ok] == expected[ok])  # exact, not approximate
    assert 0 < np.mean(expected[ok]) < 1


# ---------------------------------------------------------------- infini-gram 2.6.0 (optional)
def _infini_gram_engine(corpus, ref, tmp_path):
    cpp = pytest.importorskip("infini_gram.cpp_engine", reason="infini-gram not installed")
    data = tmp_path / "data"
    data.mkdir()
    with open(data / "corpus.jsonl", "w", encoding="utf-8") as f:
        for d in corpus:  # boundary-delimited: " u1 u2 ... uk "
            f.write(json.dumps({"text": " " + " ".join(ref.units(d)) + " "}) + "\n")
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    ulimit = str(hard if hard != resource.RLIM_INFINITY else 1 << 20)
    cmd = [
        sys.executable,
        "-m",
        "infini_gram.indexing",
        "--data_dir",
        str(data),
        "--save_dir",
        str(tmp_path / "index"),
        "--token_dtype",
        "u8",
        "--mem",
        "1",
        "--cpus",
        "1",
        "--ulimit",
        ulimit,
    ]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    # Engine_U8(dirs, eos, vocab, version, load_to_ram, ds/sa/od prefetch, bow_ids, block, unigram, shards)
    return cpp.Engine_U8([str(tmp_path / "index")], 255, 255, 4, False, 1, 3, 3, set(), 512, False, {})


def test_counts_equal_infini_gram(corpus, index, ref, tmp_path):
    engine = _infini_gram_engine(corpus, ref, tmp_path)
    queries = _queries(corpus, ref, seed=3)
    theirs = np.array([engine.count(list((" " + " ".join(q) + " ").encode())).count for q in queries])
    np.testing.assert_array_equal(_count_all(index, queries), theirs)
    assert math.isclose((theirs > 0).mean(), 0.5, abs_tol=0.1)


def test_infini_gram_adapter_equals_ours(corpus, index, ref, tmp_path):
    pytest.importorskip("infini_gram.cpp_engine", reason="infini-gram not installed")
    from iclr26.novelty import InfiniGramIndex

    theirs = InfiniGramIndex.build(corpus, tmp_path / "ig")
    queries = _queries(corpus, ref, n_queries=2000, seed=4)
    np.testing.assert_array_equal(theirs.count(queries), _count_all(index, queries))
    np.testing.assert_array_equal(theirs.contains(["w0 w1", "zzzq w0"]), index.contains(["w0 w1", "zzzq w0"]))
    with pytest.raises(ValueError, match="ngrams"):
        theirs.count([""])
    with pytest.raises(ValueError, match="index_dir"):
        InfiniGramIndex(tmp_path / "missing")


# ---------------------------------------------------------------- suffix array: any order, persistence
def test_suffix_array_counts_long_orders(corpus, ref, tmp_path):
    sa = SuffixArrayIndex.build(corpus)
    docs = [ref.units(d) for d in corpus]
    for n in (9, 15, 40):
        brute = ref.ngram_counts(corpus, n)
        seen = list(brute)[:50]
        unseen = [g[:-1] + ("zzz-unknown",) for g in seen[:10]] + [g[1:] + (g[0],) for g in seen[:10]]
        got = sa.count(seen + unseen)
        np.testing.assert_array_equal(got, [brute[g] for g in seen + unseen])
        assert (got[: len(seen)] >= 1).all()
    longest = max(docs, key=len)
    assert sa.count([tuple(longest)])[0] >= 1  # a whole document
    assert (
        sa.count([tuple(longest) + ("w0",)])[0]
        == ref.ngram_counts(corpus, len(longest) + 1)[tuple(longest) + ("w0",)]
    )
    loaded = SuffixArrayIndex.load(sa.save(tmp_path / "sa.npz"))
    q = [tuple(d[:3]) for d in docs if len(d) >= 3]
    np.testing.assert_array_equal(loaded.count(q), sa.count(q))
    assert loaded.vocab == sa.vocab and loaded.n_tokens == sa.n_tokens == sum(map(len, docs))
    with pytest.raises(ValueError, match="not a sorted-keys one"):
        NgramIndex.load(tmp_path / "sa.npz")
    ng = NgramIndex.build(corpus, n=(1, 2)).save(tmp_path / "ng.npz")
    with pytest.raises(ValueError, match="not a suffix-array one"):
        SuffixArrayIndex.load(ng)
    with pytest.raises(ValueError, match="any n >= 1"):
        sa.count(np.zeros((1, 0), dtype=np.int64))
