"""Clipped per-sequence gradient sums without per-sequence gradients: ghost norms and book-keeping.

For a linear layer y = W x the gradient of sequence i is G_i = Σ_t g_t x_tᵀ (g_t = ∂L_i/∂y_t), so
‖G_i‖² = Σ_{t,s} (g_t·g_s)(x_t·x_s) from two (T, T) Gram matrices (ghost clipping, Li et al. 2022), and
the clipped sum Σ_i c_i G_i is one product (c ⊙ g)ᵀ x (book-keeping, Bu et al. 2023, "Differentially
private optimization on large model at small cost"). One forward pass and one backward pass to the layer
outputs (no weight gradients) give every x and g; nothing of size ``batch × |params|`` is formed.

Covered: ``nn.Linear`` (weight and bias), ``nn.Embedding`` (a linear layer on one-hot inputs; its
``padding_idx`` row gets no gradient, as in torch; not with ``max_norm`` or ``scale_grad_by_freq``) and
RMSNorm modules with a ``variance_epsilon`` (per-sequence gradients Σ_t g_t ⊙ x̂_t formed directly: d
numbers each). A weight used by several modules, such as input embeddings tied to the output layer, has the
cross terms of its uses in its norm.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.func import functional_call

from ._dpsgd import batch_loss


@dataclass
class _Use:
    """One call of a covered module: its kind, its input (ids for an embedding) and its output tensor."""

    kind: str  # "linear", "embedding" or "rmsnorm"
    module: torch.nn.Module
    inputs: torch.Tensor
    output: torch.Tensor


def _kind(module) -> str | None:
    if isinstance(module, torch.nn.Linear):
        return "linear"
    if isinstance(module, torch.nn.Embedding):
        # max_norm renormalises rows in place and scale_grad_by_freq rescales by counts in the batch:
        # neither is a sum of per-sequence terms
        return None if module.max_norm is not None or module.scale_grad_by_freq else "embedding"
    if type(module).__name__.endswith("RMSNorm") and hasattr(module, "variance_epsilon"):
        return "rmsnorm"
    return None


def _owners(model, params: dict) -> dict:
    """{id of a module: [(its attribute, trainable parameter name)]} for every module holding a parameter
    of ``params``, with the parameter named as in ``params`` (tied copies share a name)."""
    names = {id(p): n for n, p in model.named_parameters()}
    owners = {}
    for module in model.modules():
        for attr, p in module.named_parameters(recurse=False):
            if names.get(id(p)) in params:
                owners.setdefault(id(module), []).append((attr, names[id(p)]))
    return owners


def covers(model, params: dict) -> bool:
    """Whether every module holding a parameter of ``params`` is one this file covers (and an RMSNorm holds
    nothing but its weight), so :func:`clipped_sum` applies."""
    return _covered(model, _owners(model, params))


def _covered(model, owners: dict) -> bool:
    """:func:`covers` from the :func:`_owners` map."""
    for module in model.modules():
        held = owners.get(id(module))
        kind = _kind(module)
        if held and (kind is None or (kind == "rmsnorm" and [a for a, _ in held] != ["weight"])):
            return False
    return bool(owners)


def _record(model, owners: dict) -> tuple[list, list]:
    """Forward hooks that append a :class:`_Use` per call of a covered module (the embedding's output is made
    a leaf that requires grad, so that the backward pass reaches every layer with no parameter needing
    it), and the hook handles."""
    uses, handles = [], []

    def hook(module, args, kwargs, output):
        kind = _kind(module)
        if kind == "embedding":
            output = output.detach().requires_grad_()
        first = args[0] if args else next(iter(kwargs.values()))  # the layer's one input, however passed
        uses.append(_Use(kind, module, first.detach(), output))
        return output

    for module in model.modules():
        if id(module) in owners or isinstance(module, torch.nn.Embedding):
            handles.append(module.register_forward_hook(hook, with_kwargs=True))
    return uses, handles


def _normalised(module, x: torch.Tensor) -> torch.Tensor:
    """x̂ = x / rms(x) in float32 cast back to x's dtype, as Llama's RMSNorm computes it before the weight."""
    h = x.float()
    return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + module.variance_epsilon)).to(x.dtype)


def _weight_times(use: _Use, weight: torch.Tensor, normed: torch.Tensor) -> bool:
    """Whether an RMSNorm call's output is ``weight`` ⊙ x̂ (Llama's form), the only one whose per-sequence
    gradient Σ_t g_t ⊙ x̂_t this file forms; a variant such as Gemma's x̂ ⊙ (1 + weight) is not."""
    return torch.allclose(use.output.detach(), weight * normed, rtol=1e-4, atol=1e-6)


def decomposes(model, params: dict, ids: torch.Tensor) -> bool:
    """:func:`covers`, every covered layer sees ``(B, L, ...)`` inputs (a model that flattens the tokens of
    a batch, as some mixture-of-experts layers do, has no per-sequence rows) and every RMSNorm holding a
    parameter computes weight ⊙ x̂, on ``ids`` ``(B, L)`` (one forward pass without gradients): whether
    :func:`clipped_sum` applies to this model."""
    owners = _owners(model, params)
    if not _covered(model, owners):
        return False
    uses, handles = _record(model, owners)
    try:
        with torch.no_grad():
            functional_call(model, params, args=(), kwargs={"input_ids": ids})
    finally:
        for h in handles:
            h.remove()
    if any(tuple(u.inputs.shape[:2]) != tuple(ids.shape) for u in uses):
        return False
    return all(
        _weight_times(u, params[name], _normalised(u.module, u.inputs))
        for u in uses
        if u.kind == "rmsnorm"
        for _, name in owners[id(u.module)]
    )


def _gram(u: _Use, gu: torch.Tensor, v: _Use, gv: torch.Tensor) -> torch.Tensor:
    """⟨G_i(u), G_i(v)⟩ per sequence ``(B,)`` for two uses of one weight (a use by itself: its norm²)."""
    if u.kind == "linear" and v.kind == "linear":
        return ((gu @ gv.transpose(1, 2)) * (u.inputs @ v.inputs.transpose(1, 2))).sum(dim=(1, 2))
    if u.kind == "embedding" and v.kind == "embedding":
        grads = gu @ gv.transpose(1, 2)
        return (grads * (u.inputs[:, :, None] == v.inputs[:, None, :]).to(grads.dtype)).sum(dim=(1, 2))
    if u.kind == "embedding":
        u, gu, v, gv = v, gv, u, gu
    # u: a linear layer whose weight (V, d) is v's embedding table: ⟨Σ_t a_t h_tᵀ, Σ_s e(x_s) g_sᵀ⟩
    # = Σ_{t,s} a_t[x_s] (h_t·g_s)
    picked = gu.gather(-1, v.inputs[:, None, :].expand(-1, gu.shape[1], -1))  # (B, T, S)
    return (picked * (u.inputs @ gv.transpose(1, 2))).sum(dim=(1, 2))


def _weight_sum(use: _Use, g: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Σ_i over the batch of one use's weight gradient, ``g`` already scaled per sequence."""
    if use.kind == "linear":
        return g.reshape(-1, g.shape[-1]).T @ use.inputs.reshape(-1, use.inputs.shape[-1])
    return torch.zeros_like(weight).index_add_(0, use.inputs.reshape(-1), g.reshape(-1, g.shape[-1]))


def clipped_sum(model, params: dict, ids: torch.Tensor, mask: torch.Tensor, max_grad_norm: float) -> dict:
    """Σ_i clip(∇ :func:`_dpsgd.sequence_loss` of sequence i) over ``params`` for right-padded ``ids``,
    ``mask`` ``(B, L)``, B ≥ 1, clipped to flat L2 norm ``max_grad_norm``: equal to
    ``clip_and_sum(per_sample_grads(...))`` up to float rounding (tested), at about the cost of one
    non-private step. A model that :func:`covers` refuses raises ``ValueError`` (its other layers' gradients
    would silently be left out)."""
    owners = _owners(model, params)
    if not _covered(model, owners):
        raise ValueError(
            "params: a trainable parameter sits in a layer that ghost clipping does not cover (linear, "
            "embedding, RMSNorm weight); use the per-sequence path"
        )
    uses, handles = _record(model, owners)
    try:
        logits = functional_call(model, params, args=(), kwargs={"input_ids": ids}).logits
    finally:
        for h in handles:
            h.remove()
    loss = batch_loss(logits, ids, mask)
    outputs = [u.output for u in uses]
    grads = dict(zip(map(id, outputs), torch.autograd.grad(loss, outputs, allow_unused=True)))
    b = ids.shape[0]
    by_name: dict[str, list] = {}
    for use in uses:
        g = grads[id(use.output)]
        if g is None:
            g = torch.zeros_like(use.output)
        elif use.kind == "embedding" and use.module.padding_idx is not None:
            # torch's embedding backward gives the padding row no gradient (SmolLM2: <|im_end|>)
            g = g.masked_fill((use.inputs == use.module.padding_idx)[..., None], 0.0)
        for attr, name in owners.get(id(use.module), ()):
            by_name.setdefault(name, []).append((attr, use, g.detach()))
    norms2 = torch.zeros(b, dtype=torch.float32)
    direct = {}  # per-sequence gradients small enough to form: biases and RMSNorm weights, (B, d)
    for name, entries in by_name.items():
        weights = [(u, g) for attr, u, g in entries if attr == "weight" and u.kind != "rmsnorm"]
        for i, (u, gu) in enumerate(weights):
            norms2 += _gram(u, gu, u, gu).float()
            for v, gv in weights[i + 1 :]:
                norms2 += 2 * _gram(u, gu, v, gv).float()
        for attr, u, g in entries:
            if attr == "bias":
                per = g.sum(dim=1)
            elif u.kind == "rmsnorm":
                normed = _normalised(u.module, u.inputs)
                if not _weight_times(u, params[name], normed):
                    raise ValueError(
                        f"model: {type(u.module).__name__} does not compute weight * x / rms(x); ghost "
                        "clipping cannot decompose it (use the per-sequence path)"
                    )
                per = (g * normed).sum(dim=1)
            else:
                continue
            direct[name] = direct.get(name, 0) + per
    for per in direct.values():
        norms2 += per.float().pow(2).sum(dim=1)
    factor = (max_grad_norm / (norms2.clamp(min=0).sqrt() + 1e-6)).clamp(max=1.0)
    out = {}
    for name, entries in by_name.items():
        if name in direct:
            out[name] = torch.einsum("b,b...->...", factor.to(direct[name].dtype), direct[name])
            continue
        total = torch.zeros_like(params[name])
        for _, u, g in entries:
            total += _weight_sum(u, g * factor.to(g.dtype).view(-1, *([1] * (g.dim() - 1))), params[name])
        out[name] = total
    for name, p in params.items():
        out.setdefault(name, torch.zeros_like(p))  # a parameter the forward pass never used
    return out
