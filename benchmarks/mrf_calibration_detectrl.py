"""MRF calibration on real DetectRL (Multi-LLM test files), SmolLM2-135M as the scoring model.

Reads ``multi_llms_<LLM>_test.json(.gz)`` from ``$ICLR26_DETECTRL_DIR`` or ``shared/data/mrf-calibration``
beside the checkout (see its SOURCE.md; two of the four LLMs, ChatGPT and Llama-2-70b, are there). Each file
is split with the authors' procedure (``detectrl_split``, their ``--iter 0`` seed); from each split the first
``N_TRAIN`` / ``N_VAL`` / ``N_TEST`` pairs are scored (texts cut to ``MAX_TOKENS`` tokens, cached under
``$ICLR26_CACHE/mrf-calibration``). Each detector is trained on one LLM and tested on every LLM (the
cross-LLM matrix), raw (``filter_pos=0, steps=0``) against calibrated (``filter_pos=30, steps=10``), both
optimizers, 5 training seeds. Prints mean +- sd over seeds of the AUROC gain per cell.

    PYTHONPATH=src python benchmarks/mrf_calibration_detectrl.py
"""

from __future__ import annotations

import hashlib
import json
import time

import numpy as np

from iclr26.models import load_embedded_model
from iclr26.mrf_calibration import MRFCalibrator, detectrl_split, load_detectrl
from iclr26.mrf_calibration._corpus import _cache_dir
from iclr26.mrf_calibration._metrics import auroc
from iclr26.mrf_calibration._scores import score_kinds
from iclr26.mrf_calibration.experiment import DETECTORS, detectrl_dir

N_TRAIN, N_VAL, N_TEST, MAX_TOKENS, SEEDS = 40, 40, 60, 128, 5


def scored(model, folder, llm):
    path = sorted(folder.glob(f"multi_llms_{llm}_test.json*"))[0]
    key = f"{path.name}-{path.stat().st_size}-{model.identity}-{N_TRAIN}-{N_VAL}-{N_TEST}-{MAX_TOKENS}"
    cache = _cache_dir() / f"detectrl-{hashlib.sha256(key.encode()).hexdigest()[:16]}.npz"
    if cache.is_file():
        z = np.load(cache, allow_pickle=False)
        meta = json.loads(str(z["meta"]))
        return {
            part: ({k: [z[f"{part}|{k}|{i}"] for i in range(n)] for k in DETECTORS.values()}, np.array(y))
            for part, (n, y) in meta.items()
        }
    split = detectrl_split(load_detectrl(path), seed=0)
    out, meta, arrays = {}, {}, {}
    for part, n in (("train", N_TRAIN), ("val", N_VAL), ("test", N_TEST)):
        texts, y = split[part].texts[: 2 * n], split[part].labels[: 2 * n]
        t0 = time.perf_counter()
        s = score_kinds(model, texts, tuple(DETECTORS.values()), max_tokens=MAX_TOKENS)
        print(f"scored {llm} {part}: {len(texts)} texts in {time.perf_counter() - t0:.0f} s", flush=True)
        out[part] = (s, np.array(y))
        meta[part] = (len(texts), y)
        arrays.update({f"{part}|{k}|{i}": a for k in s for i, a in enumerate(s[k])})
    np.savez_compressed(cache, meta=json.dumps(meta), **arrays)
    return out


def main() -> None:
    folder = detectrl_dir()
    if folder is None:
        print("no DetectRL files: set ICLR26_DETECTRL_DIR")
        return
    llms = sorted({p.name.split("_")[2] for p in folder.glob("multi_llms_*_test.json*")})
    model = load_embedded_model()
    data = {llm: scored(model, folder, llm) for llm in llms}
    print(f"LLMs: {llms}; {N_TRAIN}/{N_VAL}/{N_TEST} pairs, {MAX_TOKENS} tokens, {SEEDS} seeds")
    print(
        "optimizer  detector        train -> test            raw AUROC  calibrated  gain mean+-sd  per seed"
    )
    for opt in ("authors", "lbfgs"):
        for det, kind in DETECTORS.items():
            for src in llms:
                tr, va = data[src]["train"], data[src]["val"]
                res = {tgt: [] for tgt in llms}
                for seed in range(SEEDS):
                    base = MRFCalibrator(filter_pos=0, steps=0, optimizer=opt, seed=seed)
                    base.fit(tr[0][kind], tr[1], val=(va[0][kind], va[1]))
                    cal = MRFCalibrator(filter_pos=30, steps=10, optimizer=opt, seed=seed)
                    cal.fit(tr[0][kind], tr[1], val=(va[0][kind], va[1]))
                    for tgt in llms:
                        x, y = data[tgt]["test"][0][kind], data[tgt]["test"][1]
                        a0 = auroc(y, base.predict_proba(x)[:, 1])
                        a1 = auroc(y, cal.predict_proba(x)[:, 1])
                        res[tgt].append((a0, a1))
                for tgt, v in res.items():
                    v = np.array(v)
                    g = v[:, 1] - v[:, 0]
                    print(
                        f"{opt:9s}  {det:14s}  {src:>11s} -> {tgt:11s}  {v[:, 0].mean():.3f}"
                        f"      {v[:, 1].mean():.3f}"
                        f"       {g.mean():+.3f} +- {g.std(ddof=1):.3f}  {np.round(g, 3).tolist()}"
                    )


if __name__ == "__main__":
    main()
