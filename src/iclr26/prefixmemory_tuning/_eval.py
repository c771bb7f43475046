"""Generative classification: score every label as a completion of every prompt."""

from __future__ import annotations

import torch

from ._train import collate, encode


def label_logprobs(
    model, tokenizer, prompts: list[str], labels: list[str], batch_size: int = 16
) -> torch.Tensor:
    """Summed log-probability of each label's tokens after each prompt: ``(n_prompts, n_labels)``.

    Right-padded batches with the same encoding and masking as training (labels ``-100`` on the
    prompt); the predicted class of a prompt is the argmax over its row.
    """
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
