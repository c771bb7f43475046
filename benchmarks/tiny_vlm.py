"""The embedded tiny VLM: first-run training time, cached load time, and accuracy on held-out generated
questions against the blind control (same prompt, image removed), with a paired bootstrap interval.

    python benchmarks/tiny_vlm.py [--n 150] [--fresh]

``--fresh`` trains into a new temporary cache (first-run time); otherwise the cached front end is used.
Timings depend on the machine's load: run on an idle machine and say so.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np


def main() -> None:
    import torch

    from iclr26.models import load_embedded_model
    from iclr26.models._tiny_vlm import TinyVLMConfig, load_embedded_vlm, question_kind, scene_qa_correct
    from iclr26.perception import generate_scene
    from iclr26.uncertainty import paired_difference

    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=150, help="held-out questions")
    ap.add_argument("--fresh", action="store_true", help="train into an empty cache")
    args = ap.parse_args()
    torch.set_num_threads(1)
    lm = load_embedded_model()
    cache = tempfile.mkdtemp() if args.fresh else None
    t0 = time.perf_counter()
    vlm = load_embedded_vlm(TinyVLMConfig(), cache_dir=cache, lm=lm)
    print(
        f"front end: trained_now={vlm.stats['trained_now']} train {vlm.stats.get('train_seconds', 0):.1f} s "
        f"({vlm.stats.get('train_cpu_seconds', 0):.1f} CPU-s), "
        f"load {time.perf_counter() - t0:.2f} s, train token accuracy {vlm.stats['train_token_acc']:.3f}"
    )
    t0 = time.perf_counter()
    load_embedded_vlm(TinyVLMConfig(), cache_dir=cache, lm=lm)
    print(f"cached front-end load: {time.perf_counter() - t0:.2f} s")
    rng = np.random.default_rng(10_000)  # held out: training scenes use seed 0
    items = []
    while len(items) < args.n:
        scene = generate_scene(rng)
        q, a = scene.qa[len(items) % len(scene.qa)]
        items.append((scene.image, q, a))
    seen = np.array(scene_qa_correct(vlm, items), dtype=float)
    blind = np.array(scene_qa_correct(vlm, items, with_image=False), dtype=float)
    est = paired_difference(np.mean, seen, blind, unit="questions")
    print(
        f"accuracy with image {seen.mean():.3f}, blind {blind.mean():.3f}, "
        f"difference {est.value:+.3f} [{est.lo:+.3f}, {est.hi:+.3f}] ({est.method})"
    )
    kinds = np.array([question_kind(q) for _, q, _ in items])
    for k in ("colour", "side", "count"):
        m = kinds == k
        print(f"  {k:6s} n={m.sum():3d}  with image {seen[m].mean():.3f}  blind {blind[m].mean():.3f}")


if __name__ == "__main__":
    main()
