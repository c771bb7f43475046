"""Training loops (PyTorch): the voting head of ``train_script.py`` and the soft-label head of
``finetune_script.py``, shared by TrainRef and the baselines so that every method has the same budget."""

from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np


def _torch():
    import torch

    return torch


@contextmanager
def few_threads(n: int = 1):
    """Run small torch loops on ``n`` thread(s) (much faster than many for tiny matrices), then restore."""
    torch = _torch()
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def voting_head_checkpoints(
    Z: np.ndarray,
    labels: np.ndarray,
    n_classes: int,
    *,
    epochs: int,
    checkpoint_every: int,
    n_checkpoints: int,
    seed: int,
    lr: float = 1e-3,
    momentum: float = 0.9,
    batch_size: int = 32,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Train a linear head with SGD (lr 1e-3, momentum 0.9, batch 32, constant lr) and cross-entropy
    on the noisy labels, saving ``(W, b)`` after every ``checkpoint_every`` epochs and after the last;
    the first ``n_checkpoints`` (sorted by epoch) are returned, as the authors take ``[:3]``."""
    torch = _torch()
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    head = torch.nn.Linear(Z.shape[1], n_classes, dtype=torch.float32)
    opt = torch.optim.SGD(head.parameters(), lr=lr, momentum=momentum)
    x = torch.as_tensor(Z, dtype=torch.float32)
    y = torch.as_tensor(labels, dtype=torch.long)
    ckpts = []
    with few_threads():
        for epoch in range(1, epochs + 1):
            for idx in torch.randperm(len(x), generator=gen).split(batch_size):
                opt.zero_grad()
                torch.nn.functional.cross_entropy(head(x[idx]), y[idx]).backward()
                opt.step()
            if epoch % checkpoint_every == 0 or epoch == epochs:
                ckpts.append(
                    (head.weight.detach().double().numpy().copy(), head.bias.detach().double().numpy())
                )
    return ckpts[:n_checkpoints]


def logits(Z: np.ndarray, head: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    W, b = head
    return Z @ W.T + b


def warmup_cosine(step: int, total: int, warmup: int) -> float:
    """The multiplier of ``transformers.get_scheduler("cosine")``: linear warm-up, then half a cosine."""
    if step < warmup:
        return step / max(1, warmup)
    progress = (step - warmup) / max(1, total - warmup)
    return max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))


def soft_cross_entropy(out, target):
    torch = _torch()
    return -(torch.log_softmax(out, dim=1) * target).sum(dim=1).mean()


def train_soft(
    model,
    inputs: np.ndarray,
    targets: np.ndarray,
    *,
    epochs: int,
    seed: int,
    lr: float = 1e-3,
    weight_decay: float = 1e-4,
    backbone=None,
    backbone_lr_scale: float = 0.6,
    warmup_steps: int = 100,
    batch_size: int = 32,
    mixup_alpha: float | None = 5.0,
    threads: int = 1,
    mixup_only: bool = False,
) -> None:
    """``finetune_script.py``'s loop: AdamW (weight decay 1e-4; the backbone at ``0.6 x lr``), cosine
    schedule with linear warm-up, loss = soft cross-entropy + soft-label mixup with ``lam ~
    Beta(alpha, alpha)`` (no mixup term when ``mixup_alpha`` is ``None``). ``model`` maps inputs to
    logits; ``backbone`` (a sub-module of it, or ``None``) gets the smaller learning rate; ``threads``:
    torch threads for the loop; ``mixup_only``: the loss is the mixup term alone (Zhang et al. 2018)."""
    torch = _torch()
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    backbone_ids = {id(p) for p in backbone.parameters()} if backbone is not None else set()
    groups = [{"params": [p for p in model.parameters() if id(p) not in backbone_ids], "lr": lr}]
    if backbone is not None:
        groups.append({"params": list(backbone.parameters()), "lr": lr * backbone_lr_scale})
    opt = torch.optim.AdamW(groups, weight_decay=weight_decay)
    base = [g["lr"] for g in opt.param_groups]
    x = torch.as_tensor(inputs, dtype=torch.float32)
    t = torch.as_tensor(targets, dtype=torch.float32)
    total = epochs * math.ceil(len(x) / batch_size)
    beta = torch.distributions.Beta(mixup_alpha, mixup_alpha) if mixup_alpha else None
    step = 0
    model.train()
    with few_threads(threads):
        for _ in range(epochs):
            for idx in torch.randperm(len(x), generator=gen).split(batch_size):
                xb, tb = x[idx], t[idx]
                loss = 0.0 if mixup_only else soft_cross_entropy(model(xb), tb)
                if beta is not None:
                    lam = beta.sample()
                    perm = torch.randperm(len(xb), generator=gen)
                    mixed = soft_cross_entropy(
                        model(lam * xb + (1 - lam) * xb[perm]), lam * tb + (1 - lam) * tb[perm]
                    )
                    loss = loss + mixed
                opt.zero_grad()
                loss.backward()
                opt.step()
                step += 1
                for g, b0 in zip(opt.param_groups, base):
                    g["lr"] = b0 * warmup_cosine(step, total, warmup_steps)
    model.eval()


def predict_logits(model, inputs: np.ndarray, batch_size: int = 2048) -> np.ndarray:
    torch = _torch()
    model.eval()
    x = torch.as_tensor(inputs, dtype=torch.float32)
    with torch.no_grad():
        return np.concatenate(
            [model(x[i : i + batch_size]).double().numpy() for i in range(0, len(x), batch_size)]
        )
