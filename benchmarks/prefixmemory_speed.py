"""Training-step time and peak memory: PMT vs peft LoRA vs peft Prefix-Tuning on SmolLM2-135M.

Each method trains ``--steps`` AdamW steps (after one warm-up step) on a random token batch of
``batch x length`` for each ``--lengths`` value, with ``train_peft``'s loss function (here every token
is a completion token), on the copy of the model that ``train_peft`` adapts. Prints, per length and
method, the median wall and CPU seconds of a step, their ratios to LoRA, and the step's peak memory:
the most memory held during the timed steps minus what was held before them (activations, the
logits and their gradients, temporaries; the weights, the optimizer state and the trainable
parameters' gradients are held before). On a GPU: ``torch.cuda.max_memory_allocated``. On CPU each
(length, method) runs in its own forked process whose peak resident set (``VmHWM``, reset through
``/proc/self/clear_refs`` once the weights are copied) is read; there the CPU time is the process's.

CPU batch sizes (``--batch``, one per length, or one for all): 8 x 128, 4 x 512 and 1 x 2048 tokens
by default, so that a step holds at most 2,048 tokens and fits in a few GiB (8 x 2048 would need the
8 x 2048 x 49,152 float32 logits three times over, ~10 GiB, before the activations). On a GPU the
default is 8 at every length. ``--random-init`` builds SmolLM2-135M's architecture with random
weights (step time and memory do not depend on the weights' values), for machines without the
embedded model.

    PYTHONPATH=src python benchmarks/prefixmemory_speed.py                 # CPU: 8x128, 4x512, 1x2048
    PYTHONPATH=src python benchmarks/prefixmemory_speed.py --random-init   # e.g. on a GPU machine
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import torch

from iclr26.prefixmemory_tuning._train import adapt, completion_loss
from iclr26.runtime import set_torch_threads

METHODS = ("pmt", "lora", "prefix")
CPU_BATCHES = {128: 8, 512: 4, 2048: 1}
#: SmolLM2-135M's architecture (the embedded model's config).
SMOLLM2_135M = dict(
    hidden_size=576,
    intermediate_size=1536,
    num_hidden_layers=30,
    num_attention_heads=9,
    num_key_value_heads=3,
    head_dim=64,
    vocab_size=49152,
    max_position_embeddings=8192,
    rope_theta=100000.0,
    rms_norm_eps=1e-5,
    tie_word_embeddings=True,
)


def _base_model(random_init: bool, device: str | None):
    if not random_init:
        from iclr26.models import load_embedded_model

        return load_embedded_model(device=device).model
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(**SMOLLM2_135M, attn_implementation="sdpa")
    return LlamaForCausalLM(config).to(device or "cpu").eval()


def _batch(vocab: int, batch: int, length: int, device) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(0, vocab, (batch, length), generator=gen)
    return {"input_ids": ids.to(device), "attention_mask": torch.ones_like(ids).to(device), "labels": ids}


def _rss_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


def _time_method(base, method: str, batch: dict, steps: int) -> dict:
    """Median wall and CPU seconds of ``steps`` steps after a warm-up, and the steps' peak memory."""
    model = adapt(base, method, 0, None).train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    cuda = batch["input_ids"].is_cuda
    wall, cpu = [], []
    for k in range(steps + 1):
        if k == 1:  # after the warm-up: the optimizer state exists; measure from here
            if cuda:
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
                held = torch.cuda.memory_allocated()
            else:
                with open("/proc/self/clear_refs", "w") as f:
                    f.write("5")  # resets VmHWM to the current resident set
                held = _rss_kib("VmRSS") * 1024
        t0, c0 = time.perf_counter(), time.process_time()
        loss = completion_loss(model, batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if cuda:
            torch.cuda.synchronize()
        if k:
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    peak = torch.cuda.max_memory_allocated() if cuda else _rss_kib("VmHWM") * 1024
    return {"wall": float(np.median(wall)), "cpu": float(np.median(cpu)), "peak": peak - held}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[128, 512, 2048])
    parser.add_argument("--batch", type=int, nargs="+", help="one per length, or one for all")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--random-init", action="store_true")
    args = parser.parse_args()
    cuda = torch.cuda.is_available()
    batches = args.batch or [8 if cuda else CPU_BATCHES.get(n, 1) for n in args.lengths]
    if len(batches) == 1:
        batches = batches * len(args.lengths)
    if len(batches) != len(args.lengths):
        parser.error("--batch takes one value, or one per length")
    threads = set_torch_threads()
    base = _base_model(args.random_init, "cuda" if cuda else None)
    vocab = base.config.vocab_size
    device = next(base.parameters()).device
    where = torch.cuda.get_device_name() if cuda else f"CPU, {threads} torch thread(s)"
    print(f"# {where}; load average {os.getloadavg()[0]:.2f} at start; {args.steps} timed steps")
    print("method\tbatch\tlength\twall_s\tcpu_s\twall/lora\tcpu/lora\tpeak_step_MiB")
    for length, bsz in zip(args.lengths, batches, strict=True):
        batch = _batch(vocab, bsz, length, device)
        if cuda:
            res = {m: _time_method(base, m, batch, args.steps) for m in METHODS}
        else:  # one fresh process per method, so that one method's peak does not hide another's
            fork = multiprocessing.get_context("fork")
            res = {}
            for m in METHODS:
                with ProcessPoolExecutor(
                    1, mp_context=fork, initializer=torch.set_num_threads, initargs=(threads,)
                ) as pool:
                    res[m] = pool.submit(_time_method, base, m, batch, args.steps).result()
        for m, r in res.items():
            lora = res["lora"]
            print(
                f"{m}\t{bsz}\t{length}\t{r['wall']:.3f}\t{r['cpu']:.3f}\t{r['wall'] / lora['wall']:.2f}\t"
                f"{r['cpu'] / lora['cpu']:.2f}\t{r['peak'] / 2**20:.0f}",
                flush=True,
            )
    print(f"# load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
