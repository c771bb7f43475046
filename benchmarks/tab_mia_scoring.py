"""Tab-MIA attack scores: ``iclr26.tab_mia.mia_scores`` against the authors' ``inference()`` loop.

The texts are the headline's (``iclr26 run tab-mia``): UCI Adult rows cut into 2-row chunks, encoded
as ``line-sep`` and ``json`` (``--n`` chunks each, 64 = the 32 + 32 of ``small``), scored by the same
model (default the embedded SmolLM2-135M-Instruct). Theirs: ``MIA/mia_detection.py::inference`` text by
text (two unbatched forwards, original and lowercase, each with the loss, plus their CPU log-softmax
passes); ours: one call of ``mia_scores`` (length-sorted batches sharing their common prefix, chunked
statistics). Both run with ``--threads`` torch threads (default 1); the ratio is of CPU seconds
(``time.process_time``), which depends less than wall time on other jobs of a shared machine; wall
seconds are printed too. The scores are checked equal: ``|ours - theirs| <= 1e-5 |theirs| + 1e-8`` (the
absolute term post hoc, see ``ATOL``), NaN where theirs are NaN.

Needs the authors' code: a clone of github.com/eyalgerman/Tab-MIA outside this repository named by
``ICLR26_TAB_MIA_AUTHORS`` (default ``/tmp/tab-mia-authors/repo``); the script exits with a message
without it. Run from the repository root::

    PYTHONPATH=src .venv/bin/python benchmarks/tab_mia_scoring.py --n 64
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from iclr26.models import load_model
from iclr26.tab_mia import ATTACKS, AUTHORS_NAMES, make_benchmark, mia_scores
from iclr26.tab_mia.data import adult_table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "tab_mia"))
import authors as authors_loader  # noqa: E402 - the stubbing loader the agreement tests use

#: Equality bar: the issue's 1e-5 relative, plus an absolute 1e-8 chosen after seeing Max-K% 10 % (a mean
#: of log-probabilities near 0, about -5e-4) differ by 7.7e-9 (1.2e-5 relative) in float32 batches.
RTOL, ATOL = 1e-5, 1e-8


def _timed(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, its CPU seconds and its wall seconds."""
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.process_time() - c0, time.perf_counter() - w0


def _differences(ours, theirs: list[dict]) -> tuple[float, float]:
    """Largest relative difference, and largest excess over ``rtol |theirs| + atol`` in units of it."""
    worst_rel, worst_excess = 0.0, 0.0
    for col in ATTACKS:
        ref = np.array([p[AUTHORS_NAMES[col]] for p in theirs], float)
        got = ours[col].to_numpy(float)
        if not np.array_equal(np.isnan(got), np.isnan(ref)):
            return float("inf"), float("inf")
        ok = ~np.isnan(ref)
        diff = np.abs(got[ok] - ref[ok])
        worst_rel = max(worst_rel, float(np.max(diff / np.abs(ref[ok]), initial=0.0)))
        worst_excess = max(worst_excess, float(np.max(diff / (RTOL * np.abs(ref[ok]) + ATOL), initial=0.0)))
    return worst_rel, worst_excess


def _authors_loop(mia_detection, net, tokenizer, texts: list[str]) -> list[dict]:
    """Their ``inference()`` on each text, as their ``main`` calls it (no entropy maps)."""
    return [mia_detection.inference(net, tokenizer, t, 1, "x", {}, {}) for t in texts]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="embedded")
    ap.add_argument("--encodings", nargs="+", default=["line-sep", "json"])
    ap.add_argument("--n", type=int, default=64, help="chunks per encoding (members + non-members)")
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    if authors_loader.authors_dir() is None:
        sys.exit("no checkout of github.com/eyalgerman/Tab-MIA: set ICLR26_TAB_MIA_AUTHORS (docstring)")
    import torch

    torch.set_num_threads(args.threads)
    theirs_mod = authors_loader.load_authors().mia
    model = load_model(args.model)
    net, tok = model.model, model.tokenizer
    table = adult_table().iloc[: 2 * args.n]
    print(f"{model.name}, {args.threads} torch thread(s), batch size {args.batch_size}, {args.n} texts each")
    total = {"ours": 0.0, "theirs": 0.0}
    worst_rel = worst_excess = 0.0
    for enc in args.encodings:
        texts = make_benchmark(table, 2, enc, seed=42).input.tolist()
        n_tok = sum(len(tok.encode(t)) + len(tok.encode(t.lower())) for t in texts)
        ours, c_ours, w_ours = _timed(mia_scores, model, texts, batch_size=args.batch_size)
        theirs, c_theirs, w_theirs = _timed(_authors_loop, theirs_mod, net, tok, texts)
        rel, excess = _differences(ours, theirs)
        worst_rel, worst_excess = max(worst_rel, rel), max(worst_excess, excess)
        total["ours"] += c_ours
        total["theirs"] += c_theirs
        print(
            f"{enc:>9}: {len(texts)} texts, {n_tok} tokens (both variants) | ours {c_ours:7.1f} CPU-s "
            f"({w_ours:.1f} wall) | theirs {c_theirs:7.1f} CPU-s ({w_theirs:.1f} wall) | "
            f"ratio {c_theirs / c_ours:.2f}x | max relative difference {rel:.2e}"
        )
    print(f"all: theirs / ours = {total['theirs'] / total['ours']:.2f}x (CPU seconds); max relative "
          f"difference {worst_rel:.2e}; largest |ours - theirs| / ({RTOL:g} |theirs| + {ATOL:g}) = "
          f"{worst_excess:.2f} (must be <= 1)")  # fmt: skip
    if worst_excess > 1:
        sys.exit(f"scores differ from the authors' beyond {RTOL:g} relative + {ATOL:g} absolute")


if __name__ == "__main__":
    main()
