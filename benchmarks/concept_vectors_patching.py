"""Indirect effects on SmolLM2-135M: naive full-forward patching vs our cached-KV last-token re-run.

Naive: one forward pass of the corrupted batch per (layer, head), patching the head's mean clean
activation at the last token with an ``o_proj`` hook (what the authors' nnsight loop does). Cached: one
forward pass per batch, then each layer's 9 heads as one batch of last-token re-runs from that layer on.
Prints CPU seconds of each, the ratio and the largest difference. nnsight (the authors' tracer) is timed
when it imports (install ``nnsight==0.8.1`` in a separate environment); it is not an iclr26 dependency.

    PYTHONPATH=src python benchmarks/concept_vectors_patching.py --prompts 8 --layers 30
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from iclr26.concept_vectors import ICLTask, build_prompts, indirect_effects
from iclr26.concept_vectors.data import lemminflect_tasks
from iclr26.models import load_embedded_model
from iclr26.runtime import set_torch_threads


def _timed(fn):
    t0 = time.process_time()
    out = fn()
    return out, time.process_time() - t0


def _nnsight_cie(model, clean, corrupted, targets, layers):
    """The authors' per-head nnsight loop (their ``calculate_CIE``), local execution; None if absent."""
    try:
        from nnsight import LanguageModel
    except ImportError:
        return None
    import torch

    lm = LanguageModel(model.model, tokenizer=model.tokenizer)
    cfg = model.model.config
    n_heads, d_head = cfg.num_attention_heads, cfg.hidden_size // cfg.num_attention_heads
    means = {}
    with torch.no_grad(), lm.trace(clean):
        for layer in layers:
            z = lm.model.layers[layer].self_attn.o_proj.inputs[0][0][:, -1]
            means[layer] = z.reshape(len(clean), n_heads, d_head).mean(0).save()
    tgt = torch.as_tensor(targets)
    with torch.no_grad(), lm.trace(corrupted):
        base = lm.lm_head.output[:, -1].log_softmax(-1)[torch.arange(len(corrupted)), tgt].save()
    out = np.zeros((len(layers), n_heads))
    for i, layer in enumerate(layers):
        for head in range(n_heads):
            with torch.no_grad(), lm.trace(corrupted):
                z = lm.model.layers[layer].self_attn.o_proj.inputs[0][0][:, -1]
                z.reshape(len(corrupted), n_heads, d_head)[:, head] = means[layer][head]
                lp = lm.lm_head.output[:, -1].log_softmax(-1)[torch.arange(len(corrupted)), tgt].save()
            out[i, head] = float((lp - base).mean())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--layers", type=int, default=30, help="how many layers (from 0) to score")
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()
    set_torch_threads()
    model = load_embedded_model()
    vocab = model.tokenizer.get_vocab()
    task: ICLTask = lemminflect_tasks(lambda w: "Ġ" + w in vocab)["present-past"]
    clean = build_prompts(task, args.prompts, 5, seed=0)
    bad = build_prompts(task, args.prompts, 5, seed=0, corrupted=True)
    layers = list(range(args.layers))
    call = (model, clean.prompts, bad.prompts, clean.completions)
    fast, t_fast = _timed(lambda: indirect_effects(*call, layers=layers, batch_size=args.batch_size))
    slow, t_slow = _timed(
        lambda: indirect_effects(*call, layers=layers, batch_size=args.batch_size, method="naive")
    )
    print(f"{args.prompts} prompts, {len(layers)} layers x 9 heads, torch threads 1")
    print(f"naive patching : {t_slow:8.1f} CPU-s")
    print(f"cached KV      : {t_fast:8.1f} CPU-s   ratio {t_slow / t_fast:.1f}x")
    print(f"max |cached - naive| = {np.nanmax(np.abs(fast - slow)):.2e}")
    tgt = model.tokenizer(clean.completions, add_special_tokens=False)["input_ids"]
    theirs, t_nn = _timed(
        lambda: _nnsight_cie(model, clean.prompts, bad.prompts, [t[0] for t in tgt], layers)
    )
    if theirs is None:
        print("nnsight: not installed here (pip install nnsight==0.8.1 in a separate environment)")
    else:
        print(f"nnsight tracing: {t_nn:8.1f} CPU-s   ratio to cached {t_nn / t_fast:.1f}x")
        print(f"max |cached - nnsight| = {np.nanmax(np.abs(fast[layers] - theirs)):.2e}")


if __name__ == "__main__":
    main()
