"""The embedded machine-generated-text corpus: SmolLM2 continuations of prose that ships with Python.

Human passages come from ``pydoc_data.topics`` (the Python reference's topic texts, part of the standard
library). Each passage is cut into a prompt (its first ``prompt_words`` words) and a human continuation
(the next ``human_words`` words). The language model continues the prompt under each decoding setting;
the "paraphrase" attack re-samples a machine continuation: its first ``keep_tokens`` tokens are kept and
the rest is generated again at temperature 1.0. Texts scored are the continuations alone.

Generation is slow on a CPU, so the corpus and its token scores are cached under
``$ICLR26_CACHE/mrf-calibration/`` (default ``~/.cache/iclr26``), keyed by the model's identity and the
corpus settings; a cached file is read back, never trusted across a changed key.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

#: Decoding settings of the machine texts (our cross-LLM analogue) and the attack's source setting.
SETTINGS = {
    "t0.6-p0.9": {"temperature": 0.6, "top_p": 0.9},
    "t1.0": {"temperature": 1.0, "top_p": 1.0},
    "greedy": {"temperature": 0.0, "top_p": 1.0},
}
ATTACK_SOURCE = "t0.6-p0.9"
SCORE_KINDS = ("loglik", "logrank", "entropy", "fastdetect")


def human_passages(n: int, prompt_words: int = 24, human_words: int = 36) -> list[tuple[str, str]]:
    """``n`` (prompt, human continuation) pairs from ``pydoc_data.topics``, in a fixed order."""
    from pydoc_data.topics import topics

    out = []
    for key in sorted(topics):
        for para in re.split(r"\n\s*\n", topics[key]):
            words = para.split()
            if len(words) < prompt_words + human_words or not re.match(r"[A-Z]", words[0]):
                continue
            if sum(w.isalpha() for w in words) < 0.6 * len(words):  # skip code listings and grammar
                continue
            out.append(
                (
                    " ".join(words[:prompt_words]),
                    " ".join(words[prompt_words : prompt_words + human_words]),
                )
            )
            if len(out) == n:
                return out
    raise ValueError(f"n: only {len(out)} passages are available, asked for {n}")


def _cache_dir() -> Path:
    root = Path(os.environ.get("ICLR26_CACHE", Path.home() / ".cache" / "iclr26"))
    d = root / "mrf-calibration"
    d.mkdir(parents=True, exist_ok=True)
    return d


def build_corpus(
    model: Any, n: int, *, new_tokens: int = 32, keep_tokens: int = 12, batch_size: int = 20, progress=None
) -> dict[str, Any]:
    """Texts and their token scores: ``{"human": [...], "<setting>": [...], "attack": [...],
    "scores": {group: {kind: [arrays]}}, "score_seconds": float, "n_tokens": int}`` (cached)."""
    from ..models import GenerationConfig
    from ._scores import score_kinds

    key = json.dumps(
        {
            "model": model.identity,
            "n": n,
            "new": new_tokens,
            "keep": keep_tokens,
            "settings": SETTINGS,
            "v": 2,  # 2: sampled rows leave the batch at EOS (HFModel._retiring), so later draws differ
        },
        sort_keys=True,
    )
    path = _cache_dir() / f"corpus-{hashlib.sha256(key.encode()).hexdigest()[:16]}.npz"
    if path.is_file():
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            if meta["key"] == key:
                scores = {
                    g: {k: [z[f"{g}|{k}|{i}"] for i in range(len(meta["texts"][g]))] for k in SCORE_KINDS}
                    for g in meta["texts"]
                }
                return {
                    **meta["texts"],
                    "scores": scores,
                    "score_seconds": meta["score_seconds"],
                    "n_tokens": meta["n_tokens"],
                }
    passages = human_passages(n)
    texts: dict[str, list[str]] = {"human": [h for _, h in passages]}
    prompts = [p for p, _ in passages]
    for s_i, (name, dec) in enumerate(SETTINGS.items()):
        gens = []
        for start in range(0, n, batch_size):
            cfg = GenerationConfig(max_new_tokens=new_tokens, seed=1000 * s_i + start, **dec)
            gens += [g.text.strip() for g in model.generate(prompts[start : start + batch_size], cfg)]
            if progress:
                progress(f"generating {name}", start + batch_size, n)
        texts[name] = [g if len(g.split()) > 1 else "(empty) " + g for g in gens]
    kept = []
    for t in texts[ATTACK_SOURCE]:
        ids = model.tokenizer(t, add_special_tokens=False)["input_ids"][:keep_tokens]
        kept.append(model.tokenizer.decode(ids))
    attack = []
    for start in range(0, n, batch_size):
        cfg = GenerationConfig(max_new_tokens=new_tokens - keep_tokens, seed=99 + start, temperature=1.0)
        chunk = [
            p + " " + k for p, k in zip(prompts[start : start + batch_size], kept[start : start + batch_size])
        ]
        outs = model.generate(chunk, cfg)
        attack += [(k + g.text).strip() for k, g in zip(kept[start : start + batch_size], outs)]
    texts["attack"] = attack
    import time

    scores, n_tok, t0 = {}, 0, time.perf_counter()
    for g, ts in texts.items():
        scores[g] = score_kinds(model, ts, SCORE_KINDS)
        n_tok += sum(len(a) for a in scores[g]["loglik"])
    secs = time.perf_counter() - t0
    arrays = {f"{g}|{k}|{i}": a for g in scores for k in SCORE_KINDS for i, a in enumerate(scores[g][k])}
    meta = {"key": key, "texts": texts, "score_seconds": secs, "n_tokens": n_tok}
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, meta=json.dumps(meta), **arrays)
    tmp.replace(path)
    return {**texts, "scores": scores, "score_seconds": secs, "n_tokens": n_tok}
