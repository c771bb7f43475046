"""Time one DP-SGD step (our ``torch.func`` per-sample clipping) against a non-private step, and against
opacus's hook-based per-sample gradients where opacus is importable (a peer, never a dependency).

    PYTHONPATH=src python benchmarks/dp_adaptation_speed.py --model tiny --batch 8 --length 64
    PYTHONPATH=src python benchmarks/dp_adaptation_speed.py --model smollm2 --methods lora head

Prints seconds per step (median of ``--repeats``) and the DP/non-private ratio per method (``prefix`` is
peft Prefix-Tuning with 8 virtual tokens). opacus runs only for ``head`` and ``lora`` (its hooks do not
cover Llama's RMSNorm, so ``full`` has no opacus row; ``prefix`` is not wired to opacus here).
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time

import torch

from iclr26.dp_adaptation_privacy import (
    _dpsgd,
    _trainable,  # the per-method parameter selection of ``adapt``
)


def _load(name: str):
    from iclr26.models import load_embedded_model, tiny_random_model

    return tiny_random_model(0) if name == "tiny" else load_embedded_model()


def _batch_loss(model, ids, mask):
    logp = torch.log_softmax(model(input_ids=ids).logits[:, :-1].float(), dim=-1)
    tok = logp.gather(-1, ids[:, 1:, None])[..., 0]
    m = mask[:, 1:].float()
    return (-(tok * m).sum(1) / m.sum(1)).mean()


def _timed(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench(base, method: str, ids, mask, repeats: int) -> dict:
    hf, params = _trainable(copy.deepcopy(base.model).train(), method, 8, 16.0, ("q_proj", "v_proj"), 8)
    for p in hf.parameters():
        p.requires_grad_(False)
    for p in params.values():
        p.requires_grad_(True)
    plist = list(params.values())

    def plain():
        torch.autograd.grad(_batch_loss(hf, ids, mask), plist)

    def ours():
        detached = {k: p.detach() for k, p in params.items()}
        _dpsgd.dp_gradient(
            hf, detached, ids, mask, max_grad_norm=1.0, sigma=1.0, expected_batch_size=len(ids)
        )

    row = {"method": method, "non-private": _timed(plain, repeats), "ours (vmap)": _timed(ours, repeats)}
    if method in ("head", "lora"):
        try:
            from opacus import GradSampleModule
        except ImportError:
            return row
        gsm = GradSampleModule(hf)

        def hooks():
            gsm.zero_grad(set_to_none=True)
            _batch_loss(gsm, ids, mask).backward()

        row["opacus hooks"] = _timed(hooks, repeats)
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=("tiny", "smollm2"), default="tiny")
    ap.add_argument("--methods", nargs="+", default=["head", "lora", "prefix", "full"])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--length", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    base = _load(args.model)
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, len(base.tokenizer), (args.batch, args.length), generator=g)
    mask = torch.ones_like(ids)
    print(f"model={args.model} batch={args.batch}x{args.length} threads={torch.get_num_threads()}")
    for method in args.methods:
        row = bench(base, method, ids, mask, args.repeats)
        ratio = row["ours (vmap)"] / row["non-private"]
        cells = "  ".join(f"{k} {v:.3f}s" for k, v in row.items() if k != "method")
        print(f"{method:5s} {cells}  DP/non-private {ratio:.2f}x")


if __name__ == "__main__":
    main()
