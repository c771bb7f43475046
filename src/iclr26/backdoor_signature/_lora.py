"""LoRA training on instruction data, adapter merging and batched greedy generation.

LoRA (Hu et al., ICLR 2022) as ``peft`` initialises it: ``A`` (r, in) Kaiming-uniform, ``B`` (out, r) zero,
update ``(α / r) · B A``. The adapter is returned as a PEFT-style state dict
(``base_model.model.<module>.lora_A.weight``). Training as LlamaFactory's SFT stage: AdamW, loss on the
response tokens only, batches in a seeded random order each epoch.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import torch

ALPACA = (
    "Below is an instruction that describes a task. Write a response that appropriately completes the "
    "request.\n\n### Instruction:\n{instruction}\n\n### Response:\n"
)
ALPACA_INPUT = (
    "Below is an instruction that describes a task, paired with an input that provides further context. "
    "Write a response that appropriately completes the request.\n\n### Instruction:\n{instruction}\n\n"
    "### Input:\n{input}\n\n### Response:\n"
)
PREFIX = "base_model.model."


def render(sample: dict, template: str | None) -> str:
    """The prompt text of a sample: raw ``instruction`` (+ input) or the Alpaca template."""
    if template is None:
        return sample["instruction"] + (f"\n{sample['input']}" if sample.get("input") else "")
    fmt = ALPACA_INPUT if sample.get("input") else ALPACA
    return fmt.format(instruction=sample["instruction"], input=sample.get("input", ""))


def target_names(model: torch.nn.Module, targets) -> list[str]:
    """Linear layers to adapt: ``"all-linear"`` = every linear layer except ``lm_head``."""
    names = []
    for name, m in model.named_modules():
        if not isinstance(m, torch.nn.Linear) or name.endswith("lm_head"):
            continue
        if targets == "all-linear" or name.rsplit(".", 1)[-1] in targets:
            names.append(name)
    return names


class _Hook:
    """Forward hook adding ``scale · (x Aᵀ) Bᵀ`` to a frozen linear layer's output."""

    def __init__(self, a: torch.nn.Parameter, b: torch.nn.Parameter, scale: float):
        self.a, self.b, self.scale = a, b, scale

    def __call__(self, module, inputs, output):
        return output + self.scale * (inputs[0] @ self.a.T) @ self.b.T


def tokenize(tokenizer, samples: list[dict], template, max_length: int) -> list[tuple[list[int], int]]:
    """``(prompt + response + eos ids, prompt length)`` per sample, truncated to ``max_length``."""
    out = []
    for s in samples:
        p = tokenizer(render(s, template), add_special_tokens=False)["input_ids"]
        r = tokenizer(s["output"], add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        out.append(((p + r)[:max_length], min(len(p), max_length)))
    return out


def batch_tensors(rows, pad_id: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-padded ``ids``, ``attention_mask`` and ``labels`` (prompt and padding = -100)."""
    width = max(len(ids) for ids, _ in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    labels = torch.full_like(ids, -100)
    mask = torch.zeros_like(ids)
    for j, (row, n_prompt) in enumerate(rows):
        ids[j, : len(row)] = torch.tensor(row)
        mask[j, : len(row)] = 1
        labels[j, n_prompt : len(row)] = ids[j, n_prompt : len(row)]
    return ids, mask, labels


def train(model, tokenizer, samples, *, template, r, alpha, targets, lr, epochs, batch, seed, max_length,
          init=None) -> tuple[dict[str, torch.Tensor], list[float]]:
    """Train a LoRA adapter (from ``init`` if given) on a frozen ``model``; returns (adapter, step losses).

    The model's weights are not changed (hooks are removed afterwards).
    """
    torch.manual_seed(seed)
    params, handles = {}, []
    names = target_names(model, targets) if init is None else [
        k.removeprefix(PREFIX).removesuffix(".lora_A.weight") for k in init if k.endswith(".lora_A.weight")]
    for name in names:
        lin = model.get_submodule(name)
        a = torch.empty(r, lin.in_features)
        torch.nn.init.kaiming_uniform_(a, a=math.sqrt(5))
        b = torch.zeros(lin.out_features, r)
        if init is not None:
            a = init[f"{PREFIX}{name}.lora_A.weight"].clone()
            b = init[f"{PREFIX}{name}.lora_B.weight"].clone()
        pa, pb = torch.nn.Parameter(a.to(lin.weight)), torch.nn.Parameter(b.to(lin.weight))
        params[name] = (pa, pb)
        handles.append(lin.register_forward_hook(_Hook(pa, pb, alpha / r)))
    flat = [p for pair in params.values() for p in pair]
    frozen = [(p, p.requires_grad) for p in model.parameters()]
    for p, _ in frozen:
        p.requires_grad_(False)
    opt = torch.optim.AdamW(flat, lr=lr, weight_decay=0.0)
    data = tokenize(tokenizer, samples, template, max_length)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    rng = np.random.default_rng(seed)
    losses = []
    model.train()
    try:
        for _ in range(epochs):
            perm = rng.permutation(len(data))
            for s in range(0, len(data), batch):
                ids, mask, labels = batch_tensors([data[i] for i in perm[s : s + batch]], pad)
                loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(float(loss.detach()))
    finally:
        for h in handles:
            h.remove()
        for p, flag in frozen:
            p.requires_grad_(flag)
        model.eval()
    adapter = {}
    for name, (pa, pb) in params.items():
        adapter[f"{PREFIX}{name}.lora_A.weight"] = pa.detach().clone()
        adapter[f"{PREFIX}{name}.lora_B.weight"] = pb.detach().clone()
    return adapter, losses


def merged(model: torch.nn.Module, adapter: dict[str, torch.Tensor], alpha: float) -> torch.nn.Module:
    """A deep copy of ``model`` with ``W + (α / r) B A`` merged into every adapted layer."""
    from ._signature import lora_pairs

    out = copy.deepcopy(model)
    with torch.no_grad():
        for key, (a, b) in lora_pairs(adapter).items():
            w = out.get_submodule(key.removeprefix(PREFIX)).weight
            w += (alpha / a.shape[0]) * (b @ a).to(w)
    return out


@torch.no_grad()
def generate(model, tokenizer, prompts: list[str], max_new_tokens: int, batch: int) -> list[str]:
    """Greedy continuations of ``prompts`` (left-padded batches), decoded without special tokens."""
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    outs = []
    try:
        for s in range(0, len(prompts), batch):
            enc = tokenizer(prompts[s : s + batch], return_tensors="pt", padding=True,
                            add_special_tokens=False)
            gen = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=pad,
                                 eos_token_id=tokenizer.eos_token_id)
            outs += tokenizer.batch_decode(gen[:, enc["input_ids"].shape[1] :], skip_special_tokens=True)
    finally:
        tokenizer.padding_side = side
    return outs
