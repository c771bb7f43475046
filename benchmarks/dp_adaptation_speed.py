"""One DP-SGD step of each adaptation method: ours against a non-private step and against opacus.

For each method (``head``, ``lora``, ``prefix``, ``full``) the same batch (``--batch`` random sequences of
``--length`` tokens) is stepped by:

- ``non-private``: one batched backward of the mean loss (no per-sequence work);
- ``ours``: the path :func:`iclr26.dp_adaptation_privacy.adapt` takes: per-sequence gradients by
  ``torch.func.vmap(grad)``, flat clipping, noise; for ``head`` the frozen body's hidden states are
  computed once (the one-off cost is printed apart) and the step clips through the Gram identity;
  ``non-private`` is then also timed on those hidden states (``non-private, body once``), so that the
  ratio compares like with like;
- ``opacus hooks`` (``GradSampleModule``) and ``opacus ghost`` (``GradSampleModuleFastGradientClipping``
  with ghost clipping), for ``head`` and ``lora``, when opacus is importable (a peer, never a
  dependency; ``ICLR26_OPACUS_PATH`` may name a folder holding it). opacus does not cover Llama's own
  RMSNorm module, so ``full`` has no opacus rows; ``prefix`` is not wired to opacus here.

Printed per variant: CPU seconds per step (this process, one torch thread; the median of ``--repeats``
after a warm-up, so a loaded machine changes them less than wall times) and the peak resident set while
the variant ran (``VmHWM``, reset through ``/proc/self/clear_refs`` before each variant; it includes the
model, about 0.5 GiB for SmolLM2). Then DP / non-private per method::

    PYTHONPATH=src python benchmarks/dp_adaptation_speed.py --model tiny --batch 8 --length 64
    PYTHONPATH=src python benchmarks/dp_adaptation_speed.py --model smollm2 --methods head lora full
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import time

import torch

from iclr26.dp_adaptation_privacy import (
    _dpsgd,
    _hoistable_body,  # whether adapt computes a head-only model's body once
    _trainable,  # the per-method parameter selection of ``adapt``
    _uses_ghost,  # whether adapt clips through ghost norms
)


def _load(name: str):
    from iclr26.models import load_embedded_model, tiny_random_model

    return tiny_random_model(0) if name == "tiny" else load_embedded_model()


def _logits_loss(logits, ids, mask):
    logp = torch.log_softmax(logits[:, :-1].float(), dim=-1)
    tok = logp.gather(-1, ids[:, 1:, None])[..., 0]
    m = mask[:, 1:].float()
    return (-(tok * m).sum(1) / m.sum(1)).mean()


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def _peak_gib() -> float:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return float("nan")


def _measure(fn, repeats: int) -> tuple[float, float]:
    """(median CPU seconds per call after a warm-up, peak RSS GiB over all the calls)."""
    _reset_peak()
    fn()
    times = []
    for _ in range(repeats):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return statistics.median(times), _peak_gib()


def _opacus_steps(hf, params: dict, ids, mask) -> dict:
    """opacus's hook-based and ghost-clipping steps of ``hf`` (σ 1, C 1), or nothing without opacus."""
    extra = os.environ.get("ICLR26_OPACUS_PATH")
    if extra and extra not in sys.path:
        sys.path.append(extra)
    try:
        from opacus import GradSampleModule
        from opacus.grad_sample import GradSampleModuleFastGradientClipping
        from opacus.optimizers import DPOptimizer, DPOptimizerFastGradientClipping
        from opacus.utils.fast_gradient_clipping_utils import DPLossFastGradientClipping
    except ImportError:
        return {}
    plist = list(params.values())
    labels = ids.masked_fill(mask == 0, -100)[:, 1:]
    hooks = GradSampleModule(copy.deepcopy(hf))
    hooks_params = [p for p in hooks.parameters() if p.requires_grad]
    hooks_opt = DPOptimizer(torch.optim.SGD(hooks_params, lr=0.0), noise_multiplier=1.0, max_grad_norm=1.0,
                            expected_batch_size=len(ids))  # fmt: skip

    def hooks_step():
        hooks_opt.zero_grad(set_to_none=True)
        _logits_loss(hooks(input_ids=ids).logits, ids, mask).backward()
        hooks_opt.pre_step()

    ghost = GradSampleModuleFastGradientClipping(hf, max_grad_norm=1.0, use_ghost_clipping=True)
    ghost_opt = DPOptimizerFastGradientClipping(torch.optim.SGD(plist, lr=0.0), noise_multiplier=1.0,
                                                max_grad_norm=1.0, expected_batch_size=len(ids))  # fmt: skip
    criterion = DPLossFastGradientClipping(ghost, ghost_opt, torch.nn.CrossEntropyLoss(ignore_index=-100))

    def ghost_step():
        ghost_opt.zero_grad(set_to_none=True)
        logits = ghost(input_ids=ids).logits[:, :-1]
        loss = criterion(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), shape=logits.shape)
        loss.backward()
        ghost_opt.pre_step()

    return {"opacus hooks": hooks_step, "opacus ghost": ghost_step}


def bench(base, method: str, ids, mask, repeats: int, microbatch: int | None) -> dict:
    """{variant: (CPU seconds per step, peak GiB)} for one method."""
    hf, params = _trainable(copy.deepcopy(base.model).train(), method, 8, 16.0, ("q_proj", "v_proj"), 8)
    for p in hf.parameters():
        p.requires_grad_(False)
    for p in params.values():
        p.requires_grad_(True)
    plist = list(params.values())
    rows = {}

    def plain():
        torch.autograd.grad(_logits_loss(hf(input_ids=ids).logits, ids, mask), plist)

    rows["non-private"] = _measure(plain, repeats)
    if method == "head" and _hoistable_body(hf):
        t = time.process_time()
        hidden = _dpsgd.final_hidden(hf, ids)
        rows["body once (one-off)"] = (time.process_time() - t, _peak_gib())
        ((name, weight),) = params.items()
        head = hf.get_output_embeddings()

        def plain_hoisted():
            torch.autograd.grad(_logits_loss(head(hidden), ids, mask), [weight])

        def ours():
            summed = _dpsgd.head_clipped_sum(hidden, weight.detach(), ids, mask, 1.0)
            _dpsgd.privatise({name: summed}, 1.0, 1.0, len(ids))

        rows["non-private, body once"] = _measure(plain_hoisted, repeats)
    else:
        ghost = _uses_ghost(hf, params, method, ids[:1])

        def ours():
            detached = {k: p.detach() for k, p in params.items()}
            _dpsgd.dp_gradient(
                hf, detached, ids, mask, max_grad_norm=1.0, sigma=1.0, expected_batch_size=len(ids),
                microbatch=microbatch, ghost=ghost,
            )  # fmt: skip

    rows["ours"] = _measure(ours, repeats)
    if method in ("head", "lora"):
        for variant, step in _opacus_steps(hf, params, ids, mask).items():
            rows[variant] = _measure(step, repeats)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=("tiny", "smollm2"), default="tiny")
    ap.add_argument("--methods", nargs="+", default=["head", "lora", "prefix", "full"])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--length", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--microbatch", type=int, default=None, help="adapt's microbatch for ours (default: all)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    base = _load(args.model)
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, len(base.tokenizer), (args.batch, args.length), generator=g)
    mask = torch.ones_like(ids)
    print(f"model={args.model} batch={args.batch}x{args.length} threads=1, CPU seconds per step, peak RSS")
    for method in args.methods:
        rows = bench(base, method, ids, mask, args.repeats, args.microbatch)
        for variant, (cpu, peak) in rows.items():
            print(f"{method:6s} {variant:24s} {cpu:8.3f} CPU-s  {peak:5.2f} GiB", flush=True)
        plain = rows.get("non-private, body once", rows["non-private"])[0]
        print(f"{method:6s} ours / non-private: {rows['ours'][0] / plain:.2f}x", flush=True)


if __name__ == "__main__":
    main()
