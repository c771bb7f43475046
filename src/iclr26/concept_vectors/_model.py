"""Access to a decoder-only ``transformers`` model's heads, and a last-token re-run from any layer.

Module layout: Llama / Qwen2 / SmolLM2 (``model.model.layers[i].self_attn.{q,k,v,o}_proj``,
``input_layernorm``, ``post_attention_layernorm``, ``mlp``, ``model.model.norm``, ``lm_head``).

:class:`LastTokenRun` runs a batch of prompts once, keeps every layer's keys/values of the prompt's
earlier tokens and the last token's residual stream, and then recomputes *only the last token* from a
chosen layer upward. Patching a head's output at the last token (activation patching) or adding a
vector to the residual stream there (steering) leaves every earlier position unchanged (causal
attention), so this equals a full forward pass with the same intervention (tested to 1e-5).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


def _torch():
    import torch

    return torch


@dataclass(frozen=True)
class Geometry:
    """``n_layers``, ``n_heads`` (query heads), ``n_kv_heads``, ``d_head``, ``d_model``."""

    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    d_model: int


def decoder_layers(model):
    """The decoder layers of an ``HFModel``; ``ValueError`` unless each has ``self_attn.o_proj``."""
    inner = getattr(getattr(model, "model", None), "model", None)
    layers = getattr(inner, "layers", None)
    if layers is None or not all(hasattr(getattr(lyr, "self_attn", None), "o_proj") for lyr in layers):
        raise ValueError(
            "model must be an HFModel whose decoder layers have self_attn.o_proj (Llama/Qwen layout)"
        )
    return layers


def geometry(model) -> Geometry:
    """Shapes of the heads of ``model`` (an ``HFModel``)."""
    layers = decoder_layers(model)
    cfg = model.model.config
    n_heads = int(cfg.num_attention_heads)
    d_head = int(getattr(cfg, "head_dim", None) or cfg.hidden_size // n_heads)
    n_kv = int(getattr(cfg, "num_key_value_heads", None) or n_heads)
    return Geometry(len(layers), n_heads, n_kv, d_head, int(cfg.hidden_size))


def encode_batch(model, prompts: Sequence[str]):
    """Left-padded ``(ids, mask, position_ids)``, each ``(B, T)``; positions from the first real token."""
    torch = _torch()
    rows = [model.encode(p) for p in prompts]
    if any(len(r) < 2 for r in rows):
        raise ValueError("prompts must each be at least two tokens long")
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), model.pad_token_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, width - len(r) :] = torch.tensor(r, dtype=torch.long)
        mask[i, width - len(r) :] = 1
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    return ids.to(model.device), mask.to(model.device), pos.to(model.device)


def first_token_ids(model, completions: Sequence[str]) -> np.ndarray:
    """First token id of each completion tokenised alone (the authors' ``get_first_token_ids``)."""
    out = []
    for c in completions:
        ids = model.tokenizer(c, add_special_tokens=False)["input_ids"]
        if not ids:
            raise ValueError(f"targets must be non-empty strings, got {c!r}")
        out.append(ids[0])
    return np.asarray(out, dtype=np.int64)


def _cache_kv(cache, layer: int):
    """``(keys, values)`` of one layer of a transformers cache, ``(B, n_kv, T, d_head)``."""
    if hasattr(cache, "layers"):
        return cache.layers[layer].keys, cache.layers[layer].values
    return cache.key_cache[layer], cache.value_cache[layer]


def _rotate_half(x):
    half = x.shape[-1] // 2
    return _torch().cat((-x[..., half:], x[..., :half]), dim=-1)


def o_proj_hook(model, layer: int, fn: Callable):
    """Register ``fn(z) -> z`` on the input of layer ``layer``'s ``o_proj``; returns the handle."""
    mod = decoder_layers(model)[layer].self_attn.o_proj

    def pre(_module, args):
        return (fn(args[0]),) + tuple(args[1:])

    return mod.register_forward_pre_hook(pre)


class LastTokenRun:
    """One full forward pass of a batch, then cheap re-runs of its last token from any layer.

    Attributes:
        logits: ``(B, V)`` unmodified next-token logits.
        resid: list over layers (and the final norm, index ``n_layers``) of the last token's residual
            stream entering it, ``(B, d_model)``.
    """

    def __init__(self, model, prompts: Sequence[str]):
        torch = _torch()
        self.model = model
        self.geo = geometry(model)
        layers = decoder_layers(model)
        ids, mask, pos = encode_batch(model, prompts)
        self.batch = ids.shape[0]
        resid: list = [None] * (self.geo.n_layers + 1)
        modules = [*layers, model.model.model.norm]
        hooks = [
            m.register_forward_pre_hook(self._grab(resid, i), with_kwargs=True) for i, m in enumerate(modules)
        ]
        try:
            with torch.inference_mode():
                out = model.model(
                    input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True, logits_to_keep=1
                )
        finally:
            for h in hooks:
                h.remove()
        cache = getattr(out, "cache", None) or getattr(out, "past_key_values", None)
        self.logits = out.logits[:, -1].float()
        self.resid = resid
        self.kv = [tuple(t[:, :, :-1] for t in _cache_kv(cache, i)) for i in range(self.geo.n_layers)]
        neg = torch.finfo(self.logits.dtype).min
        self.key_bias = torch.where(mask[:, :-1].bool(), 0.0, neg).to(self.logits.dtype)
        with torch.inference_mode():
            self.cos, self.sin = model.model.model.rotary_emb(resid[0][:, None], pos[:, -1:])

    @staticmethod
    def _grab(store: list, i: int):
        def hook(_module, args, kwargs):
            h = args[0] if args else kwargs["hidden_states"]
            store[i] = h[:, -1].detach().clone()

        return hook

    def _attend(self, attn, x, rep: int, layer: int):
        """Attention of the last token (``R = B * rep`` rows) over the prompt: ``(R, n_heads * d_head)``."""
        torch = _torch()
        g = self.geo
        b = self.batch
        groups = g.n_heads // g.n_kv_heads
        q = attn.q_proj(x).view(b * rep, g.n_heads, g.d_head)
        k = attn.k_proj(x).view(b * rep, g.n_kv_heads, g.d_head)
        v = attn.v_proj(x).view(b * rep, g.n_kv_heads, g.d_head)
        if hasattr(attn, "q_norm"):
            q, k = attn.q_norm(q), attn.k_norm(k)
        cos = self.cos.repeat_interleave(rep, dim=0)
        sin = self.sin.repeat_interleave(rep, dim=0)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        scale = getattr(attn, "scaling", g.d_head**-0.5)
        keys, values = self.kv[layer]
        qg = q.view(b, rep, g.n_kv_heads, groups, g.d_head)
        s_prev = torch.einsum("brkgd,bktd->brkgt", qg, keys) * scale + self.key_bias[:, None, None, None, :]
        s_self = (qg * k.view(b, rep, g.n_kv_heads, 1, g.d_head)).sum(-1, keepdim=True) * scale
        w = torch.cat([s_prev, s_self], dim=-1).softmax(dim=-1)
        o = torch.einsum("brkgt,bktd->brkgd", w[..., :-1], values)
        o = o + w[..., -1:] * v.view(b, rep, g.n_kv_heads, 1, g.d_head)
        return o.reshape(b * rep, g.n_heads * g.d_head)

    def run_from(self, layer: int, h, rep: int = 1, patch: Callable | None = None):
        """Log-probabilities ``(B * rep, V)`` after running the last token through layers ``layer..L-1``.

        Args:
            layer: first layer to run (``n_layers`` runs only the final norm and unembedding).
            h: ``(B * rep, d_model)`` residual stream entering ``layer`` (rows ``b * rep + r``).
            rep: copies of each prompt in the batch.
            patch: ``fn(z) -> z`` applied to the first run layer's ``o_proj`` input ``(B * rep, H * d_head)``.
        """
        torch = _torch()
        layers = decoder_layers(self.model)
        with torch.inference_mode():
            for i in range(layer, self.geo.n_layers):
                lyr = layers[i]
                z = self._attend(lyr.self_attn, lyr.input_layernorm(h), rep, i)
                if patch is not None and i == layer:
                    z = patch(z)
                h = h + lyr.self_attn.o_proj(z)
                h = h + lyr.mlp(lyr.post_attention_layernorm(h))
            logits = self.model.model.lm_head(self.model.model.model.norm(h))
        return torch.log_softmax(logits.float(), dim=-1)
