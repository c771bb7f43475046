"""One training loop for PMT, peft Prefix-Tuning, peft LoRA and full fine-tuning.

Every method sees the same batches (same order for a seed) and the same loss: cross-entropy on the
completion tokens only (prompt and padding tokens are labelled ``-100``), right-padded batches.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

import torch
from torch import nn

from ._memory import PrefixMemoryConfig
from ._model import get_pmt_model

METHODS = ("pmt", "prefix", "lora", "full")
PREFIX_VIRTUAL_TOKENS = 20
LORA_R, LORA_ALPHA = 8, 16


@dataclass
class TrainResult:
    """The adapted model, the loss of every step, and the wall time and the CPU time of this process
    (all its threads) of every step, in seconds."""

    model: nn.Module
    losses: list[float] = field(default_factory=list)
    step_times: list[float] = field(default_factory=list)
    step_cpu_times: list[float] = field(default_factory=list)


def encode(tokenizer, examples: list[tuple[str, str]]) -> list[tuple[list[int], list[int]]]:
    """``(prompt, completion)`` → ``(input_ids, labels)`` with ``-100`` on the prompt tokens."""
    out = []
    for prompt, completion in examples:
        p = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        c = tokenizer(completion, add_special_tokens=False)["input_ids"]
        out.append((p + c, [-100] * len(p) + c))
    return out


def collate(encoded: list[tuple[list[int], list[int]]], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-pad a batch: ``input_ids``, ``attention_mask``, ``labels``, each ``(batch, max_len)``."""
    width = max(len(ids) for ids, _ in encoded)
    ids = torch.full((len(encoded), width), pad_id, dtype=torch.long)
    labels = torch.full((len(encoded), width), -100, dtype=torch.long)
    mask = torch.zeros((len(encoded), width), dtype=torch.long)
    for i, (x, y) in enumerate(encoded):
        ids[i, : len(x)] = torch.tensor(x)
        labels[i, : len(y)] = torch.tensor(y)
        mask[i, : len(x)] = 1
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def batches(encoded, batch_size: int, epochs: int, seed: int, pad_id: int):
    """The training batches in order: a fresh permutation (seeded) per epoch."""
    gen = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        order = torch.randperm(len(encoded), generator=gen).tolist()
        for start in range(0, len(order), batch_size):
            yield collate([encoded[i] for i in order[start : start + batch_size]], pad_id)


def completion_loss(model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Mean next-token cross-entropy over the completion tokens of ``batch``."""
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    labels = batch["labels"].to(logits.device)
    return nn.functional.cross_entropy(
        logits[:, :-1].flatten(0, 1).float(), labels[:, 1:].flatten(), ignore_index=-100
    )


def adapt(model: nn.Module, method: str, seed: int, pmt_config: PrefixMemoryConfig | None) -> nn.Module:
    """A copy of ``model`` with the method's trainable parameters (the others frozen)."""
    model = copy.deepcopy(model)
    torch.manual_seed(seed)
    if method == "pmt":
        return get_pmt_model(model, pmt_config, seed=seed)
    if method == "full":
        for p in model.parameters():
            p.requires_grad_(True)
        return model
    from peft import LoraConfig, PrefixTuningConfig, TaskType, get_peft_model

    if method == "lora":
        cfg = LoraConfig(
            task_type=TaskType.CAUSAL_LM, r=LORA_R, lora_alpha=LORA_ALPHA, target_modules="all-linear"
        )
    else:
        cfg = PrefixTuningConfig(task_type=TaskType.CAUSAL_LM, num_virtual_tokens=PREFIX_VIRTUAL_TOKENS)
    return get_peft_model(model, cfg)


def train(model, tokenizer, examples, method, epochs, lr, batch_size, seed, pmt_config) -> TrainResult:
    """AdamW on the method's trainable parameters; see :func:`iclr26.prefixmemory_tuning.train_peft`."""
    adapted = adapt(model, method, seed, pmt_config)
    adapted.train()
    params = [p for p in adapted.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    result = TrainResult(adapted)
    for batch in batches(encode(tokenizer, examples), batch_size, epochs, seed, tokenizer.pad_token_id):
        t0, c0 = time.perf_counter(), time.process_time()
        loss = completion_loss(adapted, batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        result.step_times.append(time.perf_counter() - t0)
        result.step_cpu_times.append(time.process_time() - c0)
        result.losses.append(loss.item())
    adapted.eval()
    return result
