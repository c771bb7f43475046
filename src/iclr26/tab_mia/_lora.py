"""LoRA fine-tuning of a causal LM on texts, with the authors' hyper-parameters (``finetune_LLM.py``).

LoRA (Hu et al., ICLR 2022): a frozen linear layer ``W`` gets ``W x + (alpha / r) B A dropout(x)``,
``A`` (r, d_in) Kaiming-uniform, ``B`` (d_out, r) zero, as ``peft`` initialises them. Training: AdamW
(no weight decay), linear warm-up then cosine decay to 0 (``get_cosine_schedule_with_warmup``), gradient
norm clipped at 1 (the ``transformers.Trainer`` defaults), loss = mean token cross-entropy over the
non-padding tokens of each batch, batches drawn in a seeded random order each epoch. Batches are
right-padded and the padding is masked out of the loss; under causal attention no real token attends to
the padding after it, so no attention mask is passed (it slows ``transformers`` on CPU about 20x).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from contextlib import contextmanager

import numpy as np

#: ``target_modules`` of the authors' ``LoraConfig`` (Llama-family names).
AUTHORS_TARGETS = ("k_proj", "q_proj", "v_proj", "o_proj", "gate_proj", "down_proj", "up_proj", "lm_head")


def _torch():
    import torch

    return torch


def _lora_layer_class():
    torch = _torch()

    class LoRALinear(torch.nn.Module):
        """``base(x) + scale * B(A(dropout(x)))`` around a frozen :class:`torch.nn.Linear`."""

        def __init__(self, base, r: int, alpha: float, dropout: float):
            super().__init__()
            self.base = base
            self.scale = alpha / r
            self.drop = torch.nn.Dropout(dropout)
            dev = base.weight.device
            self.A = torch.nn.Parameter(torch.empty(r, base.in_features, device=dev))
            self.B = torch.nn.Parameter(torch.zeros(base.out_features, r, device=dev))
            torch.nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))

        def forward(self, x):
            return self.base(x) + self.scale * (self.drop(x) @ self.A.T) @ self.B.T

        def merged(self):
            """A plain linear layer, weight ``W + scale * B A`` (fresh: a tied weight stays as it was)."""
            lin = torch.nn.Linear(
                self.base.in_features, self.base.out_features, bias=self.base.bias is not None
            )
            lin = lin.to(self.base.weight.device)
            with torch.no_grad():
                lin.weight.copy_(self.base.weight + self.scale * (self.B @ self.A))
                if self.base.bias is not None:
                    lin.bias.copy_(self.base.bias)
            return lin

    return LoRALinear


def _targets(model, targets: Sequence[str]) -> list[str]:
    torch = _torch()
    names = [
        n
        for n, m in model.named_modules()
        if isinstance(m, torch.nn.Linear) and n.rsplit(".", 1)[-1] in targets
    ]
    if not names:
        raise ValueError(f"targets: no linear layer of the model is named any of {tuple(targets)}")
    return names


def _swap(model, name: str, new) -> None:
    parent, _, child = name.rpartition(".")
    setattr(model.get_submodule(parent) if parent else model, child, new)


def _batches(ids: list[list[int]], batch_size: int, epochs: int, seed: int) -> list[list[list[int]]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(epochs):
        perm = rng.permutation(len(ids))
        out += [[ids[i] for i in perm[s : s + batch_size]] for s in range(0, len(ids), batch_size)]
    return out


def _pad(rows: list[list[int]], pad_id: int, device):
    torch = _torch()
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    labels = torch.full((len(rows), width), -100, dtype=torch.long)
    for j, r in enumerate(rows):
        ids[j, : len(r)] = labels[j, : len(r)] = torch.tensor(r)
    return ids.to(device), labels.to(device)


def lr_at(step: int, total: int, warmup: int, lr: float, schedule: str) -> float:
    """Learning rate at optimizer step ``step`` (0-based): linear warm-up, then cosine or linear decay."""
    if step < warmup:
        return lr * step / max(1, warmup)
    progress = (step - warmup) / max(1, total - warmup)
    if schedule == "cosine":
        return lr * max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))
    if schedule == "linear":
        return lr * max(0.0, 1.0 - progress)
    return lr


def attach(model, targets: Sequence[str], r: int, alpha: float, dropout: float) -> dict:
    """Freeze ``model`` and wrap each target linear layer in a LoRA layer, in place; return them by name.

    Adapters are initialised from torch's global generator (seed it first)."""
    for p in model.parameters():
        p.requires_grad_(False)
    LoRALinear = _lora_layer_class()
    layers = {}
    for name in _targets(model, targets):
        layers[name] = LoRALinear(model.get_submodule(name), r, alpha, dropout)
        _swap(model, name, layers[name])
    return layers


def detach(model, layers: dict) -> None:
    """Put the original linear layers back (the model computes exactly what it did before :func:`attach`)."""
    for name, layer in layers.items():
        _swap(model, name, layer.base)


def fit(
    model,
    layers: dict,
    tokenizer,
    texts: Sequence[str],
    *,
    epochs: int,
    lr: float,
    batch_size: int,
    warmup: int,
    schedule: str,
    seed: int,
    max_length: int,
    on_step=None,
) -> list[float]:
    """Train the adapters ``layers`` of ``model`` on ``texts``; return the loss of each step."""
    torch = _torch()
    params = [p for layer in layers.values() for p in (layer.A, layer.B)]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    ids = [list(tokenizer(t, truncation=True, max_length=max_length)["input_ids"]) for t in texts]
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    plan = _batches(ids, batch_size, epochs, seed)
    device = next(model.parameters()).device
    model.train()
    losses = []
    for step, rows in enumerate(plan):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, len(plan), warmup, lr, schedule)
        input_ids, labels = _pad(rows, pad, device)
        loss = model(input_ids=input_ids, labels=labels).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        losses.append(float(loss.detach()))
        if on_step is not None:
            on_step(step, len(plan), losses[-1])
    return losses


def train_lora(model, tokenizer, texts: Sequence[str], *, targets, r, alpha, dropout, seed, **train):
    """Train LoRA adapters on a deep copy of ``model``; return the merged copy and the step losses.

    ``train``: the keyword arguments of :func:`fit`."""
    torch = _torch()
    torch.manual_seed(seed)
    model = copy.deepcopy(model)
    layers = attach(model, targets, r, alpha, dropout)
    losses = fit(model, layers, tokenizer, texts, seed=seed, **train)
    for name, layer in layers.items():
        _swap(model, name, layer.merged())
    if "lm_head" in {n.rsplit(".", 1)[-1] for n in layers}:
        model.config.tie_word_embeddings = False
    return model.eval(), losses


@contextmanager
def adapted(model, tokenizer, texts: Sequence[str], *, targets, r, alpha, dropout, seed, **train):
    """Train LoRA adapters on ``model`` itself and yield the step losses while the adapted model is in
    eval mode; on exit the adapters are removed and the model (weights, ``requires_grad`` flags, mode)
    is as before. No copy of the base weights is made; the same seed gives the same adapters as
    :func:`train_lora`."""
    torch = _torch()
    flags = [p.requires_grad for p in model.parameters()]
    was_training = model.training
    torch.manual_seed(seed)
    layers = attach(model, targets, r, alpha, dropout)
    try:
        losses = fit(model, layers, tokenizer, texts, seed=seed, **train)
        model.eval()
        yield losses
    finally:
        detach(model, layers)
        for p, flag in zip(model.parameters(), flags):
            p.requires_grad_(flag)
        model.train(was_training)
