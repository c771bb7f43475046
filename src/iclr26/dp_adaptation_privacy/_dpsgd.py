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


def final_hidden(model, ids: torch.Tensor, batch: int = 16) -> torch.Tensor:
    """The decoder's last hidden states ``(n, L, d)`` of right-padded ``ids`` ``(n, L)``, n ≥ 1 (no attention
    mask, as :func:`sequence_loss`), ``batch`` sequences per forward pass, without gradients."""
    decoder = model.get_decoder()
    with torch.no_grad():
        return torch.cat(
            [
                decoder(input_ids=ids[s : s + batch], use_cache=False).last_hidden_state
                for s in range(0, ids.shape[0], batch)
            ]
        )


def head_clipped_sum(
    hidden: torch.Tensor,
    weight: torch.Tensor,
    ids: torch.Tensor,
    mask: torch.Tensor,
    max_grad_norm: float,
    microbatch: int | None = None,
) -> torch.Tensor:
    """Σ_i clip(g_i) for the output layer ``weight`` ``(V, d)`` alone, from the hidden states ``(B, L, d)``,
    without forming any per-sequence gradient.

    The gradient of :func:`sequence_loss` for sequence i is G_i = Σ_t a_t h_tᵀ, with a_t = (softmax(W h_t)
    − onehot(y_t)) · m_t / Σ m (the mask of target t); its norm is ‖G_i‖² = Σ_{t,s} (a_t·a_s)(h_t·h_s)
    (the Gram-matrix identity of ghost clipping, Li et al. 2022), and the clipped sum is one product
    (c ⊙ A)ᵀ H. Equal to :func:`clip_and_sum` of :func:`per_sample_grads` up to float rounding (tested).
    """
    summed = torch.zeros_like(weight)
    step = hidden.shape[0] if microbatch is None else microbatch
    for s in range(0, hidden.shape[0], max(step, 1)):
        h = hidden[s : s + step, :-1]
        y = ids[s : s + step, 1:, None]
        m = mask[s : s + step, 1:].to(h.dtype)
        a = torch.softmax((h @ weight.T).float(), dim=-1)
        a.scatter_add_(-1, y, torch.full(y.shape, -1.0, dtype=a.dtype))
        a *= (m / m.sum(dim=1, keepdim=True).clamp(min=1))[..., None]
        a = a.to(h.dtype)
        norms = ((a @ a.transpose(1, 2)) * (h @ h.transpose(1, 2))).sum(dim=(1, 2)).clamp(min=0).sqrt()
        factor = (max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
        a *= factor[:, None, None]
        summed += a.reshape(-1, a.shape[-1]).T @ h.reshape(-1, h.shape[-1])
    return summed
