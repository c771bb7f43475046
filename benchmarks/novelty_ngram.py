"""N-gram index speed and memory: our ``NgramIndex`` against infini-gram 2.6.0 (byte index, per query).

Corpora: the Shakespeare training part (see ``iclr26.novelty._shakespeare``) and a synthetic corpus of
Zipf-distributed words of ``--synthetic-mb`` megabytes. For each: build time and peak resident memory
of the build (measured in a child process), then ``--queries`` word n-grams (n drawn from 1..6, half
taken from the corpus, half random) counted by our batched ``count`` (from strings, and from
pre-encoded ids) and by infini-gram's ``count`` called once per query (the boundary-delimited byte
string ``" w1 ... wn "`` on an index of the corpus written as ``" u1 u2 ... "`` per document); the
two sets of counts must be equal. ``--repeat`` rounds time both sides back to back and report the
median and range of the speed-ups (load average beside each round). Each speed-up is given twice: of
wall seconds, and of CPU seconds (``_cpu``: our process time against infini-gram's user + system time
during its calls). The CPU ratio depends much less on other jobs of a shared machine: under load,
infini-gram's wall time also counts the waits for the thread each of its calls starts.

infini-gram is optional (``pip install infini-gram==2.6.0``, in the benchmark's environment); without
it only our numbers are printed. ``rusty-dawg`` is not run (not installed here).

    PYTHONPATH=src python benchmarks/novelty_ngram.py --queries 1000000 --synthetic-mb 100 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from iclr26.novelty import NgramIndex, originality
from iclr26.novelty._tokenize import tokenize

ORDERS = tuple(range(1, 7))


def synthetic_corpus(megabytes: float, seed: int = 0) -> list[str]:
    """Documents of ~1,000 Zipf-distributed words from a 50,000-word vocabulary, ``megabytes`` in all."""
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(50_000)])
    n_words = int(megabytes * 1e6 / 6.5)
    ids = np.minimum(rng.zipf(1.2, size=n_words) - 1, len(words) - 1)
    flat = words[ids]
    return [" ".join(flat[i : i + 1000]) for i in range(0, n_words, 1000)]


def _build_child(docs, out):
    t0 = time.perf_counter()
    index = NgramIndex.build(docs, n=ORDERS)
    seconds = time.perf_counter() - t0
    index.save(out)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    Path(str(out) + ".json").write_text(json.dumps({"seconds": seconds, "peak_mib": peak_kib / 1024}))


def build_measured(docs: list[str], out: Path) -> dict:
    """Build in a fresh process (so its peak RSS is the build's), save it to ``out``."""
    proc = mp.get_context("fork").Process(target=_build_child, args=(docs, out))
    proc.start()
    proc.join()
    return json.loads(Path(str(out) + ".json").read_text())


def queries(docs_units: list[list[str]], vocab: list[str], m: int, seed: int = 1) -> list[tuple[str, ...]]:
    rng = np.random.default_rng(seed)
    out = []
    ns = rng.integers(1, 7, size=m)
    for i, n in enumerate(ns):
        if i % 2 == 0:
            d = docs_units[int(rng.integers(len(docs_units)))]
            s = int(rng.integers(len(d) - n + 1))
            out.append(tuple(d[s : s + n]))
        else:
            out.append(tuple(vocab[j] for j in rng.integers(len(vocab), size=n)))
    return out


def ours(index: NgramIndex, qs: list[tuple[str, ...]]) -> tuple[np.ndarray, float, float, float]:
    """Counts of string n-grams (strings in: id conversion included), their wall and CPU seconds, and
    the wall time of the same batch given as pre-encoded id arrays (as infini-gram is given
    pre-encoded byte lists)."""
    lens = np.array([len(q) for q in qs])
    groups = {n: np.flatnonzero(lens == n) for n in ORDERS}
    t0, c0 = time.perf_counter(), time.process_time()
    out = np.zeros(len(qs), dtype=np.int64)
    for rows in groups.values():
        out[rows] = index.count([qs[i] for i in rows])
    strings_s, strings_cpu = time.perf_counter() - t0, time.process_time() - c0
    encoded = {
        n: index.ids([u for i in rows for u in qs[i]]).reshape(len(rows), n) for n, rows in groups.items()
    }
    t0 = time.perf_counter()
    again = np.zeros(len(qs), dtype=np.int64)
    for n, rows in groups.items():
        again[rows] = index.count(encoded[n])
    ids_s = time.perf_counter() - t0
    assert np.array_equal(out, again)
    return out, strings_s, strings_cpu, ids_s


def infini_gram_engine(docs_units: list[list[str]], tmp: Path):
    """A ``cpp_engine.Engine_U8`` over the corpus (or ``None`` without infini-gram) and its build time."""
    try:
        from infini_gram import cpp_engine
    except ImportError:
        return None, None
    data = tmp / "ig-data"
    data.mkdir()
    with open(data / "c.jsonl", "w", encoding="utf-8") as f:
        for d in docs_units:
            f.write(json.dumps({"text": " " + " ".join(d) + " "}) + "\n")
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    ulimit = str(hard if hard != resource.RLIM_INFINITY else 1 << 20)
    cmd = [
        sys.executable,
        "-m",
        "infini_gram.indexing",
        "--data_dir",
        str(data),
        "--save_dir",
        str(tmp / "ig"),
        "--token_dtype",
        "u8",
        "--mem",
        "4",
        "--cpus",
        "2",
        "--ulimit",
        ulimit,
    ]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    build = time.perf_counter() - t0
    engine = cpp_engine.Engine_U8([str(tmp / "ig")], 255, 255, 4, False, 1, 3, 3, set(), 512, False, {})
    return engine, build


def infini_counts(engine, grams) -> tuple[np.ndarray, float, dict]:
    """infini-gram counts of word n-grams, one ``count`` call per query (given pre-encoded bytes), the
    wall time, and the process's user and system CPU seconds during the calls.

    The split matters: each ``count`` starts a thread and asks the kernel to prefetch the index pages
    of every binary-search step (``madvise(MADV_WILLNEED)``, about 300 calls per query under
    ``strace``), so most of its time is system time, which varies with the kernel's state.
    """
    byte_qs = [list((" " + " ".join(q) + " ").encode()) for q in grams]
    before = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    counts = np.array([engine.count(b).count for b in byte_qs])
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = {"user_s": after.ru_utime - before.ru_utime, "sys_s": after.ru_stime - before.ru_stime}
    return counts, wall, cpu


def generations(
    docs_units: list[list[str]], vocab: list[str], windows: int, n: int, seed: int = 2
) -> list[str]:
    """Texts of 104 words holding ``windows`` order-``n`` windows in all: corpus passages with a fifth
    of their words replaced by random corpus words (so some n-grams are seen, some unseen)."""
    rng = np.random.default_rng(seed)
    length = 100 + n - 1
    out = []
    for _ in range(windows // 100):
        d = docs_units[int(rng.integers(len(docs_units)))]
        s = int(rng.integers(len(d) - length + 1))
        words = list(d[s : s + length])
        for j in np.flatnonzero(rng.random(length) < 0.2):
            words[j] = vocab[int(rng.integers(len(vocab)))]
        out.append(" ".join(words))
    return out


def originality_batch(index: NgramIndex, engine, texts: list[str], n: int = 5) -> dict:
    """Batch originality of ``texts`` (strings in, tokenisation included) against infini-gram counting
    every window of every text per query; the per-text originalities must be equal."""
    t0, c0 = time.perf_counter(), time.process_time()
    ours_o = originality(texts, index, n=n)
    row = {"ours_s": time.perf_counter() - t0, "ours_cpu_s": time.process_time() - c0}
    row["windows"] = int(sum(max(len(tokenize(t, "word")) - n + 1, 0) for t in texts))
    if engine is not None:
        grams = [
            tuple(u[i : i + n]) for u in (tokenize(t, "word") for t in texts) for i in range(len(u) - n + 1)
        ]
        counts, row["ig_s"], cpu = infini_counts(engine, grams)
        row.update({f"ig_{k}": v for k, v in cpu.items()})
        theirs_o = (counts.reshape(len(texts), -1) == 0).mean(axis=1)
        row["equal"] = bool(np.array_equal(ours_o, theirs_o))
        row["speedup"] = row["ig_s"] / row["ours_s"]
        row["speedup_cpu"] = (cpu["user_s"] + cpu["sys_s"]) / row["ours_cpu_s"]
    return row


def bench(name: str, docs: list[str], m: int, repeat: int) -> dict:
    """Build once; then ``repeat`` rounds, each timing our side and infini-gram back to back (so both
    see the same machine load). Speed-ups are given per round and as their median and range."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        built = build_measured(docs, tmp / "ix.npz")
        index = NgramIndex.load(tmp / "ix.npz")
        units = [tokenize(d, "word") for d in docs]
        qs = queries(units, index.vocab, m)
        texts = generations(units, index.vocab, m, 5)
        row = {
            "corpus": name,
            "tokens": index.n_tokens,
            "queries": m,
            "ours_build_s": built["seconds"],
            "ours_build_peak_mib": built["peak_mib"],
        }
        engine, row["ig_build_s"] = infini_gram_engine(units, tmp)
        rounds = []
        for _ in range(repeat):
            counts, q_s, q_cpu, ids_s = ours(index, qs)
            r = {"load": os.getloadavg()[0], "ours_query_s": q_s, "ours_query_cpu_s": q_cpu}
            r["ours_query_ids_s"] = ids_s
            if engine is not None:
                peer_counts, peer_s, cpu = infini_counts(engine, qs)
                r.update({"ig_query_s": peer_s, "counts_equal": bool(np.array_equal(peer_counts, counts))})
                r.update({f"ig_query_{k}": v for k, v in cpu.items()})
                r.update({"speedup": peer_s / q_s, "speedup_ids": peer_s / ids_s})
                r["speedup_cpu"] = (cpu["user_s"] + cpu["sys_s"]) / q_cpu
            batch = originality_batch(index, engine, texts)
            r.update({f"originality_{k}": v for k, v in batch.items()})
            rounds.append(r)
            print(json.dumps(_rounded({"corpus": name, **r})), flush=True)
        row["rounds"] = rounds
        keys = ("speedup", "speedup_cpu", "speedup_ids", "originality_speedup", "originality_speedup_cpu")
        for key in (*keys, "ours_query_s", "originality_ours_s"):
            values = [r[key] for r in rounds if key in r]
            if values:
                row[key] = {"median": float(np.median(values)), "min": min(values), "max": max(values)}
    return row


def _rounded(obj):
    if isinstance(obj, float):
        return round(obj, 3)
    if isinstance(obj, dict):
        return {k: _rounded(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_rounded(v) for v in obj]
    return obj


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--synthetic-mb", type=float, default=10.0, help="0: skip the synthetic corpus")
    ap.add_argument("--repeat", type=int, default=1, help="timing rounds per corpus (median and range)")
    args = ap.parse_args()
    from iclr26.novelty._shakespeare import load_corpus

    rows = [bench("shakespeare", list(load_corpus().train.values()), args.queries, args.repeat)]
    if args.synthetic_mb > 0:
        docs = synthetic_corpus(args.synthetic_mb)
        rows.append(bench(f"synthetic {args.synthetic_mb:g} MB", docs, args.queries, args.repeat))
    for r in rows:
        print(json.dumps(_rounded({k: v for k, v in r.items() if k != "rounds"})))


if __name__ == "__main__":
    main()
