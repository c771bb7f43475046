"""Generative classification: score every label as a completion of every prompt."""

from __future__ import annotations

import torch

from ._train import collate, encode


def label_logprobs(
    model, tokenizer, prompts: list[str], labels: list[str], batch_size: int = 16
) -> torch.Tensor:
    """Summed log-probability of each label's tokens after each prompt: ``(n_prompts, n_labels)``.

    Right-padded batches with the same encoding as training (prompt and completion tokenised apart,
    then concatenated); the predicted class of a prompt is the argmax over its row. When every label
    is one token (and no prompt is empty), one forward pass per prompt scores all labels: the same
    figures as scoring each ``prompt + label`` sequence, ``n_labels`` times cheaper.
    """
    label_ids = [tokenizer(y, add_special_tokens=False)["input_ids"] for y in labels]
    prompt_ids = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
    if all(len(ids) == 1 for ids in label_ids) and all(prompt_ids):
        return _next_token_logprobs(model, tokenizer, prompt_ids, [ids[0] for ids in label_ids], batch_size)
    return _sequence_logprobs(model, tokenizer, prompts, labels, batch_size)


def _next_token_logprobs(model, tokenizer, prompt_ids, label_ids, batch_size) -> torch.Tensor:
    """Log-probability of each one-token label at the last prompt position."""
    device = next(model.parameters()).device
    targets = torch.tensor(label_ids, device=device)
    scores = []
    with torch.no_grad():
        for start in range(0, len(prompt_ids), batch_size):
            chunk = prompt_ids[start : start + batch_size]
            batch = collate([(ids, ids) for ids in chunk], tokenizer.pad_token_id)
            logits = model(
                input_ids=batch["input_ids"].to(device), attention_mask=batch["attention_mask"].to(device)
            ).logits
            last = torch.tensor([len(ids) - 1 for ids in chunk], device=device)
            logp = torch.log_softmax(logits[torch.arange(len(chunk), device=device), last].float(), -1)
            scores.append(logp[:, targets].cpu())
    return torch.cat(scores)


def _sequence_logprobs(model, tokenizer, prompts, labels, batch_size) -> torch.Tensor:
    """Summed log-probability of the label tokens, one ``prompt + label`` sequence per pair."""
    pairs = encode(tokenizer, [(p, y) for p in prompts for y in labels])
    device = next(model.parameters()).device
    scores = []
    with torch.no_grad():
        for start in range(0, len(pairs), batch_size):
            batch = collate(pairs[start : start + batch_size], tokenizer.pad_token_id)
            logits = (
                model(
                    input_ids=batch["input_ids"].to(device), attention_mask=batch["attention_mask"].to(device)
                )
                .logits[:, :-1]
                .float()
            )
            target = batch["labels"][:, 1:].to(device)
            logp = torch.log_softmax(logits, -1).gather(-1, target.clamp_min(0)[..., None])[..., 0]
            scores.append((logp * (target != -100)).sum(-1).cpu())
    return torch.cat(scores).view(len(prompts), len(labels))
