"""The learning-rate schedules of transformers' ``Trainer``, step by step, for training loops of our own."""

from __future__ import annotations

import math


def lr_at(step: int, total: int, warmup: int, lr: float, schedule: str) -> float:
    """Learning rate at optimizer step ``step`` (0-based) of ``total``: linear warm-up over ``warmup`` steps,
    then cosine (``get_cosine_schedule_with_warmup``) or linear (``get_linear_schedule_with_warmup``)
    decay to 0; any other ``schedule`` keeps ``lr`` after the warm-up."""
    if step < warmup:
        return lr * step / max(1, warmup)
    progress = (step - warmup) / max(1, total - warmup)
    if schedule == "cosine":
        return lr * max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))
    if schedule == "linear":
        return lr * max(0.0, 1.0 - progress)
    return lr
