"""Training-step time and peak memory: PMT vs peft LoRA vs peft Prefix-Tuning on SmolLM2-135M.

Each method trains ``--steps`` AdamW steps (after one warm-up step) on random token batches of
``--batch`` x each ``--lengths`` value with the completion-only loss of ``train_peft`` (here: loss on
every token). Prints the median step time per method and length, the ratio to LoRA, and on a GPU the
peak allocated memory (on CPU the peak is not measured: ``-``).

    PYTHONPATH=src python benchmarks/prefixmemory_speed.py --batch 8 --lengths 128 512 2048 --steps 3
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from iclr26.models import load_embedded_model
from iclr26.prefixmemory_tuning._train import adapt, completion_loss
from iclr26.runtime import set_torch_threads

METHODS = ("pmt", "lora", "prefix")


def _batch(vocab: int, batch: int, length: int, seed: int, device) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (batch, length), generator=gen)
    return {"input_ids": ids.to(device), "attention_mask": torch.ones_like(ids).to(device), "labels": ids}


def _time_method(base, method: str, batch: dict, steps: int) -> tuple[float, float | None]:
    """Median step seconds and peak GPU bytes (None on CPU) of ``steps`` steps after a warm-up."""
    model = adapt(base, method, 0, None).train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    cuda = batch["input_ids"].is_cuda
    times = []
    for k in range(steps + 1):
        if cuda:
            torch.cuda.synchronize()
            if k == 1:
                torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        loss = completion_loss(model, batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if cuda:
            torch.cuda.synchronize()
        if k:
            times.append(time.perf_counter() - t0)
    peak = torch.cuda.max_memory_allocated() if cuda else None
    del model, opt
    return float(np.median(times)), peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--lengths", type=int, nargs="+", default=[128, 512, 2048])
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    set_torch_threads()
    hf = load_embedded_model(device="cuda" if torch.cuda.is_available() else None)
    base = hf.model
    device = next(base.parameters()).device
    print("method\tlength\tstep_s\tratio_to_lora\tpeak_MiB")
    for length in args.lengths:
        batch = _batch(base.config.vocab_size, args.batch, length, 0, device)
        res = {m: _time_method(base, m, batch, args.steps) for m in METHODS}
        for m, (sec, peak) in res.items():
            mib = f"{peak / 2**20:.0f}" if peak is not None else "-"
            print(f"{m}\t{length}\t{sec:.3f}\t{sec / res['lora'][0]:.2f}\t{mib}")


if __name__ == "__main__":
    main()
