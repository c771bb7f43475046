"""DP-SGD over the trainable parameters of a causal LM: per-sequence gradients with ``torch.func``.

Abadi et al. (2016), "Deep learning with differential privacy": each sequence's gradient is clipped to
L2 norm ``C``, the clipped gradients are summed, Gaussian noise N(0, (σC)²) is added per coordinate and
the sum is divided by the expected batch size ``qN`` (Poisson sampling, opacus's ``loss_reduction="mean"``).
"""

from __future__ import annotations

import torch
from torch.func import functional_call, grad, vmap


def encode(tokenizer, texts: list[str], max_length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids and attention mask, both ``(n, max_length)``, right-padded/truncated (one per text)."""
    enc = tokenizer(
        list(texts),
        max_length=max_length,
        truncation=True,
        padding="max_length",
        padding_side="right",
        return_tensors="pt",
    )
    return enc["input_ids"], enc["attention_mask"]


def sequence_loss(model, params: dict, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy of one sequence ``ids`` ``(L,)`` under ``model`` with ``params``.

    Sequences are right-padded, so causal attention alone keeps padding out of every real position; the
    padded targets are masked out of the loss (no attention mask: it would branch on data under ``vmap``).
    """
    logits = functional_call(model, params, args=(), kwargs={"input_ids": ids[None]}).logits
    logp = torch.log_softmax(logits[0, :-1].float(), dim=-1)
    tok = logp.gather(-1, ids[1:, None])[:, 0]
    m = mask[1:].to(logp.dtype)
    return -(tok * m).sum() / m.sum().clamp(min=1)


def per_sample_grads(model, params: dict, ids: torch.Tensor, mask: torch.Tensor) -> dict:
    """Per-sequence gradients ``{name: (B, *shape)}`` of :func:`sequence_loss` with respect to ``params``."""
    return vmap(grad(lambda p, i, m: sequence_loss(model, p, i, m)), in_dims=(None, 0, 0), randomness="same")(
        params, ids, mask
    )


def clip_and_sum(grads: dict, max_grad_norm: float) -> dict:
    """Σ_i g_i · min(1, C / (‖g_i‖ + 1e-6)) with ‖g_i‖ over all parameters (opacus's flat clipping)."""
    norms = torch.stack([g.flatten(1).norm(dim=1) for g in grads.values()], dim=1).norm(dim=1)
    factor = (max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
    return {k: torch.einsum("b,b...->...", factor.to(g.dtype), g) for k, g in grads.items()}


def privatise(
    summed: dict, sigma: float, max_grad_norm: float, expected_batch_size: float, generator=None
) -> dict:
    """(Σ clipped + N(0, (σC)²)) / expected batch size; noise per parameter, in order, from ``generator``."""
    std = sigma * max_grad_norm
    out = {}
    for k, g in summed.items():
        noise = torch.normal(0.0, std, g.shape, generator=generator, dtype=g.dtype) if std > 0 else 0.0
        out[k] = (g + noise) / expected_batch_size
    return out


def dp_gradient(
    model, params, ids, mask, *, max_grad_norm, sigma, expected_batch_size, generator=None, microbatch=None
) -> dict:
    """The noisy clipped mean gradient of one Poisson batch (``ids``, ``mask`` of shape ``(B, L)``, B ≥ 0).

    Per-sequence gradients are formed ``microbatch`` sequences at a time (all at once when ``None``) and
    clipped before summing, so the result does not depend on it; it bounds memory at
    ``microbatch × |params|``.
    """
    summed = {k: torch.zeros_like(p) for k, p in params.items()}
    step = ids.shape[0] if microbatch is None else microbatch
    for s in range(0, ids.shape[0], max(step, 1)):
        part = clip_and_sum(
            per_sample_grads(model, params, ids[s : s + step], mask[s : s + step]), max_grad_norm
        )
        for k, g in part.items():
            summed[k] += g
    return privatise(summed, sigma, max_grad_norm, expected_batch_size, generator)
