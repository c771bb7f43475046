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


def bias_spectrum(pmt_model, tokenizer, prompts: list[str], layer: int) -> np.ndarray:
    """Eigenvalues (descending) of the covariance of the added bias vectors φ(q)ᵀM at ``layer``.

    The bias vector of a token is the memory read-out of all heads, concatenated
    (``n_heads * d_head``); the covariance is over every token of every prompt (paper Fig. 3).
    """
    rows = [_recorded_pass(pmt_model, tokenizer, p)[layer][1].flatten(1) for p in prompts]
    bias = torch.cat(rows).double()
    if bias.shape[0] < 2:
        raise ValueError("prompts must hold at least two tokens in all")
    cov = torch.cov(bias.T)
    return torch.linalg.eigvalsh(cov).flip(0).clamp_min(0.0).numpy()


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
