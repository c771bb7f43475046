"""How long GraphTokenizer takes to learn its BPE merges on many graphs (issue: 100,000 graphs in minutes).

Times, separately: generating the molecule-like graphs, collecting triplet statistics + serializing,
training the BPE merges (Hugging Face ``tokenizers``), and encoding. For a small subset it also runs a
plain-Python minBPE-style trainer (the reference algorithm the authors' C++ engine reproduces) and prints
the speed ratio and both compression ratios. No peer environment is needed.

Run: ``.venv/bin/python benchmarks/graph_bpe_tokenizer_merges.py [--n 100000] [--merges 2000]``
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from iclr26.graph_bpe_tokenizer import GraphSerializer, GraphTokenizer, molecule_like_graphs


def python_bpe(seqs: list[list[int]], num_merges: int, first_id: int) -> list[list[int]]:
    """Reference: recount all adjacent pairs each round, merge the most frequent (minBPE style)."""
    seqs = [list(s) for s in seqs]
    new = first_id
    for _ in range(num_merges):
        counts: Counter = Counter()
        for s in seqs:
            counts.update(zip(s, s[1:], strict=False))
        if not counts:
            break
        pair, c = counts.most_common(1)[0]
        if c < 2:
            break
        for k, s in enumerate(seqs):
            out, i = [], 0
            while i < len(s):
                if i + 1 < len(s) and (s[i], s[i + 1]) == pair:
                    out.append(new)
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            seqs[k] = out
        new += 1
    return seqs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--merges", type=int, default=2000)
    ap.add_argument("--ref-n", type=int, default=2000)
    ap.add_argument("--ref-merges", type=int, default=200)
    args = ap.parse_args()

    t0 = time.perf_counter()
    graphs, _ = molecule_like_graphs(args.n, seed=0)
    t_gen = time.perf_counter() - t0
    print(f"generated {args.n} graphs in {t_gen:.1f}s")

    tok = GraphTokenizer(args.merges)
    t0 = time.perf_counter()
    tok.serializer_.fit(graphs)
    t_stats = time.perf_counter() - t0
    t0 = time.perf_counter()
    tok.fit(graphs)  # statistics + serialization + BPE
    t_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    ids = tok.encode_batch(graphs)
    t_enc = time.perf_counter() - t0
    raw = sum(len(tok.serialize(g)) for g in graphs[:5000])
    merged = sum(len(s) for s in ids[:5000])
    print(f"statistics + alphabet: {t_stats:.1f}s")
    print(f"fit (statistics + serialization + {tok.n_merges_learned} merges): {t_fit:.1f}s")
    print(f"encode {args.n} graphs: {t_enc:.1f}s; vocab {tok.vocab_size}; compression {merged / raw:.3f}")

    sub = graphs[: args.ref_n]
    ser = GraphSerializer().fit(sub)
    seqs = [ser.serialize(g) for g in sub]
    t0 = time.perf_counter()
    ref = python_bpe(seqs, args.ref_merges, ser.n_symbols)
    t_ref = time.perf_counter() - t0
    t0 = time.perf_counter()
    small = GraphTokenizer(args.ref_merges).fit(sub)
    t_hf = time.perf_counter() - t0
    ours = small.encode_batch(sub)
    n_raw = sum(map(len, seqs))
    print(
        f"reference python BPE on {args.ref_n} graphs x {args.ref_merges} merges: {t_ref:.2f}s; "
        f"ours (fit incl. serialization): {t_hf:.2f}s; ratio {t_ref / t_hf:.1f}x"
    )
    print(
        f"compression: reference {sum(map(len, ref)) / n_raw:.4f}, ours {sum(map(len, ours)) / n_raw:.4f} "
        "(equal up to tie-breaking between equally frequent pairs)"
    )


if __name__ == "__main__":
    main()
