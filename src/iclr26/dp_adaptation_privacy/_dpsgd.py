"""DP-SGD over the trainable parameters of a causal LM: per-sequence gradients with ``torch.func``.

Abadi et al. (2016), "Deep learning with differential privacy": each sequence's gradient is clipped to
L2 norm ``C``, the clipped gradients are summed, Gaussian noise N(0, (σC)²) is added per coordinate and
the sum is divided by the expected batch size ``qN`` (Poisson sampling, opacus's ``loss_reduction="mean"``).
"""

from __future__ import annotations

import math

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


def batch_loss(logits: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Σ_i over a batch of sequence i's mean next-token cross-entropy over its unmasked targets, from the
    logits ``(B, L, V)`` of right-padded ``ids`` and their ``mask`` ``(B, L)``."""
    logp = torch.log_softmax(logits[:, :-1].float(), dim=-1)
    tok = logp.gather(-1, ids[:, 1:, None])[..., 0]
    m = mask[:, 1:].to(logp.dtype)
    return -((tok * m).sum(dim=1) / m.sum(dim=1).clamp(min=1)).sum()


def sequence_loss(model, params: dict, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy of one sequence ``ids`` ``(L,)`` under ``model`` with ``params``.

    Sequences are right-padded, so causal attention alone keeps padding out of every real position; the
    padded targets are masked out of the loss (no attention mask: it would branch on data under ``vmap``).
    """
    logits = functional_call(model, params, args=(), kwargs={"input_ids": ids[None]}).logits
    return batch_loss(logits, ids[None], mask[None])


def per_sample_grads(model, params: dict, ids: torch.Tensor, mask: torch.Tensor) -> dict:
    """Per-sequence gradients ``{name: (B, *shape)}`` of :func:`sequence_loss` with respect to ``params``."""
    return vmap(grad(lambda p, i, m: sequence_loss(model, p, i, m)), in_dims=(None, 0, 0), randomness="same")(
        params, ids, mask
    )


def summed_grads(model, params: dict, ids: torch.Tensor, mask: torch.Tensor) -> dict:
    """Σ_i ∇ :func:`sequence_loss` (sequence i) over the batch ``(B, L)``, by one batched backward: what
    :func:`clip_and_sum` of :func:`per_sample_grads` gives when nothing is clipped, up to float rounding."""
    logits = functional_call(model, params, args=(), kwargs={"input_ids": ids}).logits
    return dict(zip(params, torch.autograd.grad(batch_loss(logits, ids, mask), list(params.values()))))


def clip_and_sum(grads: dict, max_grad_norm: float) -> dict:
    """Σ_i g_i · min(1, C / (‖g_i‖ + 1e-6)) with ‖g_i‖ over all parameters (opacus's flat clipping)."""
    norms = torch.stack([g.flatten(1).norm(dim=1) for g in grads.values()], dim=1).norm(dim=1)
    factor = (max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
    return {k: torch.einsum("b,b...->...", factor.to(g.dtype), g) for k, g in grads.items()}


def privatise(
    summed: dict, sigma: float, max_grad_norm: float, expected_batch_size: float, generator=None
) -> dict:
    """(Σ clipped + N(0, (σC)²)) / expected batch size; noise per parameter, in order, from ``generator``.

    The noise is drawn into a fresh buffer that then takes the sum and the division in place: the same
    numbers as ``(g + torch.normal(0, σC, g.shape)) / E``, one allocation instead of three (a full
    model's worth of fresh pages each).
    """
    std = sigma * max_grad_norm
    out = {}
    for k, g in summed.items():
        if std > 0:
            out[k] = (
                torch.empty_like(g).normal_(0.0, std, generator=generator).add_(g).div_(expected_batch_size)
            )
        else:
            out[k] = g / expected_batch_size
    return out


def dp_gradient(
    model,
    params,
    ids,
    mask,
    *,
    max_grad_norm,
    sigma,
    expected_batch_size,
    generator=None,
    microbatch=None,
    ghost=False,
) -> dict:
    """The noisy clipped mean gradient of one Poisson batch (``ids``, ``mask`` of shape ``(B, L)``, B ≥ 0).

    Per-sequence gradients are formed ``microbatch`` sequences at a time (all at once when ``None``) and
    clipped before summing, so the result does not depend on it; it bounds memory at
    ``microbatch × |params|``. With ``max_grad_norm = inf`` (no clipping, the non-private ε = ∞) no
    per-sequence gradient is formed: the sum comes from one batched backward per microbatch. With
    ``ghost=True`` (the model must pass :func:`_ghost.decomposes`) the clipped sums come from ghost norms and
    book-keeping (:func:`_ghost.clipped_sum`), again without per-sequence gradients; the same result up
    to float rounding.
    """
    from . import _ghost  # here, not at the top: _ghost imports this module

    summed = {k: torch.zeros_like(p) for k, p in params.items()}
    step = ids.shape[0] if microbatch is None else microbatch
    for s in range(0, ids.shape[0], max(step, 1)):
        chunk = ids[s : s + step], mask[s : s + step]
        if math.isinf(max_grad_norm):
            part = summed_grads(model, {k: p.detach().requires_grad_() for k, p in params.items()}, *chunk)
        elif ghost:
            part = _ghost.clipped_sum(model, params, *chunk, max_grad_norm)
        else:
            part = clip_and_sum(per_sample_grads(model, params, *chunk), max_grad_norm)
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

    The gradient of :func:`sequence_loss` for sequence i is G_i = Σ_t w_t a_t h_tᵀ, with a_t =
    softmax(W h_t) − onehot(y_t) and w_t = m_t / Σ m (the mask of target t); its norm is ‖G_i‖² =
    Σ_{t,s} w_t w_s (a_t·a_s)(h_t·h_s) (the Gram-matrix identity of ghost clipping, Li et al. 2022), and
    the clipped sum is one product Aᵀ (c w ⊙ H). The weights scale the ``(L, L)`` Gram matrices and the
    ``(L, d)`` hidden states, never the ``(L, V)`` logits, so beyond a non-private step the only pass
    over the logits is the one-hot subtraction. Equal to :func:`clip_and_sum` of
    :func:`per_sample_grads` up to float rounding (tested).
    """
    summed = None
    step = hidden.shape[0] if microbatch is None else microbatch
    for s in range(0, hidden.shape[0], max(step, 1)):
        h = hidden[s : s + step, :-1]
        y = ids[s : s + step, 1:, None]
        m = mask[s : s + step, 1:].to(torch.float32)
        w = m / m.sum(dim=1, keepdim=True).clamp(min=1)
        a = (h @ weight.T).float()
        # softmax in place: the kernel reads each row before writing it, and a fresh (L, V) buffer per
        # step costs more than the softmax itself
        torch.ops.aten._softmax.out(a, -1, False, out=a)
        a.scatter_add_(-1, y, torch.full(y.shape, -1.0, dtype=a.dtype))
        a = a.to(h.dtype)
        gram = (a @ a.transpose(1, 2)) * (h @ h.transpose(1, 2)) * (w[:, :, None] * w[:, None, :]).to(h.dtype)
        norms = gram.sum(dim=(1, 2)).clamp(min=0).sqrt()
        factor = (max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
        scaled = h * (factor[:, None] * w).to(h.dtype)[..., None]
        part = a.reshape(-1, a.shape[-1]).T @ scaled.reshape(-1, h.shape[-1])
        summed = part if summed is None else summed.add_(part)
    return torch.zeros_like(weight) if summed is None else summed
