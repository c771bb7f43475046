"""Diagnostics of the paper: how much the memory adds to attention, and the spectrum of the added bias."""

from __future__ import annotations

import numpy as np
import torch

from ._memory import attention_modules


def _recorded_pass(pmt_model, tokenizer, prompt: str) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Per layer ``(attn_out, memory_read)``, each ``(seq, heads, d_head)``, for one prompt."""
    mods = attention_modules(pmt_model.base_model)
    enc = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
    device = next(pmt_model.parameters()).device
    for m in mods:
        m._pmt_record = True
    try:
        with torch.no_grad():
            pmt_model(input_ids=enc["input_ids"].to(device))
        return [(m._pmt_last[0][0].float(), m._pmt_last[1][0].float()) for m in mods]
    finally:
        for m in mods:
            m._pmt_record = False
            m._pmt_last = None


def memory_share(pmt_model, tokenizer, prompts: list[str]) -> np.ndarray:
    """‖φ(q)ᵀM‖ / ‖Attn(q,K,V)‖ per prompt, layer and head: ``(n_prompts, n_layers, n_heads)``.

    Norms are Frobenius norms over the prompt's tokens and the head dimension.
    """
    out = []
    for prompt in prompts:
        layers = _recorded_pass(pmt_model, tokenizer, prompt)
        out.append([(r.norm(dim=(0, 2)) / a.norm(dim=(0, 2)).clamp_min(1e-12)).numpy() for a, r in layers])
    return np.asarray(out)


def _pmt_bias(pmt_model, tokenizer, prompt: str, layer: int) -> torch.Tensor:
    """PMT's added bias φ(q)ᵀM of every token at ``layer``: ``(seq, n_heads * d_head)``."""
    return _recorded_pass(pmt_model, tokenizer, prompt)[layer][1].flatten(1)


def _prefix_bias(prefix_model, tokenizer, prompt: str, layer: int) -> torch.Tensor:
    """Prefix-Tuning's added α Attn(q, K_p, V_p) per token at ``layer``: ``(seq, n_heads * d_head)``.

    The eager attention weights on the virtual tokens times the prefix values (GQA groups repeated).
    """
    n_virtual = prefix_model.peft_config[prefix_model.active_adapter].num_virtual_tokens
    base = prefix_model.get_base_model()
    impl = base.config._attn_implementation
    base.set_attn_implementation("eager")
    device = next(prefix_model.parameters()).device
    ids = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)["input_ids"].to(device)
    try:
        with torch.no_grad():
            att = prefix_model(input_ids=ids, output_attentions=True).attentions[layer][0, :, :, :n_virtual]
            values = prefix_model.get_prompt(batch_size=1).layers[layer].values[0]
    finally:
        base.set_attn_implementation(impl)
    values = values.repeat_interleave(att.shape[0] // values.shape[0], dim=0)
    return torch.einsum("hqp,hpd->qhd", att.float(), values.float()).flatten(1).cpu()


def bias_vectors(model, tokenizer, prompts: list[str], layer: int) -> torch.Tensor:
    """The vectors each method adds to the attention output (before ``o_proj``) at ``layer``.

    ``model`` is a :class:`PMTModel` (φ(q)ᵀM) or a peft Prefix-Tuning model (α Attn(q, K_p, V_p),
    Eq. 3). Returns ``(n_tokens, n_heads * d_head)``, one row per token of every prompt.
    """
    from ._model import PMTModel

    one = _pmt_bias if isinstance(model, PMTModel) else _prefix_bias
    return torch.cat([one(model, tokenizer, p, layer).float() for p in prompts])


def bias_spectrum(model, tokenizer, prompts: list[str], layer: int) -> np.ndarray:
    """Eigenvalues (descending) of the covariance of :func:`bias_vectors` (paper Fig. 3).

    The covariance is over every token of every prompt; works for PMT and Prefix-Tuning models.
    """
    bias = bias_vectors(model, tokenizer, prompts, layer).double()
    if bias.shape[0] < 2:
        raise ValueError("prompts must hold at least two tokens in all")
    return spectrum(bias.numpy())


def spectrum(rows: np.ndarray) -> np.ndarray:
    """Descending eigenvalues of the covariance of ``rows`` ``(n, d)`` (negatives from rounding → 0)."""
    cov = np.cov(np.asarray(rows, dtype=float), rowvar=False)
    return np.clip(np.linalg.eigvalsh(np.atleast_2d(cov))[::-1], 0.0, None)


def prefix_attention_mass(prefix_model, tokenizer, prompts: list[str]) -> np.ndarray:
    """α of Eq. 3 for a peft Prefix-Tuning model: ``(n_prompts, n_layers, n_heads)``.

    The attention probability the last token of each prompt puts on the ``num_virtual_tokens``
    prefix positions (softmax over prefix + input keys), read from the eager kernel's weights.
    """
    n_virtual = prefix_model.peft_config[prefix_model.active_adapter].num_virtual_tokens
    base = prefix_model.get_base_model()
    impl = base.config._attn_implementation
    base.set_attn_implementation("eager")
    device = next(prefix_model.parameters()).device
    out = []
    try:
        for prompt in prompts:
            ids = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)["input_ids"].to(device)
            with torch.no_grad():
                att = prefix_model(input_ids=ids, output_attentions=True).attentions
            out.append([a[0, :, -1, :n_virtual].sum(-1).float().cpu().numpy() for a in att])
    finally:
        base.set_attn_implementation(impl)
    return np.asarray(out)
