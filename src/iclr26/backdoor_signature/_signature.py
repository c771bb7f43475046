"""Backdoor-signature extraction and suppression on LoRA adapters (bd-vax, Eq. 1-2, Sec. 4.3).

An *adapter* is a PEFT-style state dict: ``<module>.lora_A.weight`` of shape ``(r, in)`` and
``<module>.lora_B.weight`` of shape ``(out, r)`` (``.default`` adapter names accepted). A *delta* maps a
module key to ``ΔW`` of shape ``(out, in)``. A *signature* is a set of ``(module_key, channel_key)`` with
channel keys ``"out_j"`` (rows; gate/up projections) or ``"in_j"`` (columns; down projection).
"""

from __future__ import annotations

import re

import numpy as np
import torch

from ._gram import channel_gram

MLP_MODULES = ("gate_proj", "up_proj", "down_proj")
ATTENTION_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj")
_SUFFIX = re.compile(r"\.lora_([AB])(?:\.default)?\.weight$")


def split_key(key: str) -> tuple[str, str] | None:
    """``("<module>", "A"|"B")`` for a LoRA parameter key, else ``None``."""
    m = _SUFFIX.search(key)
    return (key[: m.start()], m.group(1)) if m else None


def lora_pairs(adapter: dict[str, torch.Tensor]) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """``module -> (A (r, in), B (out, r))`` for every module with both factors."""
    parts: dict[str, dict[str, torch.Tensor]] = {}
    for key, t in adapter.items():
        sk = split_key(key)
        if sk is not None:
            parts.setdefault(sk[0], {})[sk[1]] = t
    return {m: (p["A"], p["B"]) for m, p in parts.items() if "A" in p and "B" in p}


def lora_delta(adapter: dict[str, torch.Tensor], alpha: float) -> dict[str, torch.Tensor]:
    """``ΔW = (α / r) · B A`` per module (shape ``(out, in)``), r read from each ``A``."""
    return {m: (alpha / a.shape[0]) * (b @ a) for m, (a, b) in lora_pairs(adapter).items()}


def module_type(key: str, modules: tuple[str, ...]) -> str | None:
    """The MLP projection a module key names (down before gate before up, as bd-vax), if scored."""
    if not any(m in key for m in modules):
        return None
    return next((t for t in MLP_MODULES if t in key), None)


def score_module(deltas: list[torch.Tensor], kind: str, lam: float, names: list[str]) -> np.ndarray:
    """Eq. 2 for one module from ``N`` deltas ``ΔW`` ``(out, in)``: ``(C,)`` float64 scores (``N = 1``:
    the channel norms alone).

    Channels are rows for gate/up (``C = out``) and columns for down (``C = in``).
    ``s_j = mean_i ‖Δ_ij‖ + λ · 2/(N(N−1)) Σ_{i<l} max(0, cos(Δ_ij, Δ_lj))`` with
    ``cos = <Δ_ij, Δ_lj> / (max(‖Δ_ij‖, 1e-8) · max(‖Δ_lj‖, 1e-8))`` (PyTorch's ``cosine_similarity``;
    a zero-norm channel has cosine 0). Everything comes from each channel's Gram matrix
    (:func:`_gram.channel_gram`: one pass over the deltas, products of float32 values). A NaN or inf
    in ``deltas[i]`` makes its squared norms non-finite: ``ValueError`` naming ``names[i]``.
    """
    gram = channel_gram(deltas, columns=kind == "down_proj")
    n = gram.shape[1]
    squares = np.einsum("cii->ci", gram)  # (C, N)
    finite = np.isfinite(squares).all(axis=0)
    if not finite.all():
        raise ValueError(
            f"{names[int(np.argmin(finite))]} holds NaN or inf (or values whose squares overflow)"
        )
    norms = np.sqrt(squares)
    if n == 1:  # one variant: no pairs, so the magnitude term alone (see magnitude_scores)
        return norms[:, 0].copy()
    safe = np.maximum(norms, 1e-8)
    cos = gram / (safe[:, :, None] * safe[:, None, :])
    upper = np.triu_indices(n, k=1)
    align = np.clip(cos[:, upper[0], upper[1]], 0.0, 1.0).sum(axis=1)
    return norms.mean(axis=1) + lam * align * (2.0 / (n * (n - 1)))


def score_deltas(
    deltas: list[dict[str, torch.Tensor]], modules: tuple[str, ...], lam: float, names: list[str]
):
    """``module_key -> (C,)`` scores over every scored module present in ≥ 2 variants (bd-vax rule;
    every module of a single variant); ``names[i]`` names ``deltas[i]`` in errors."""
    keys = sorted({k for d in deltas for k in d if module_type(k, modules) is not None})
    scores = {}
    for key in keys:
        kind = module_type(key, modules)
        present = [i for i, d in enumerate(deltas) if key in d]
        if len(present) >= min(2, len(deltas)):
            mats = [deltas[i][key] for i in present]
            where = [f"{names[i]}[{key!r}]" for i in present]
            for m, name in zip(mats, where):
                if m.shape != mats[0].shape:  # the Gram kernel would read past the smaller one
                    raise ValueError(f"{name} has shape {tuple(m.shape)}, {where[0]} {tuple(mats[0].shape)}")
            scores[key] = score_module(mats, kind, lam, where)
    if not scores:
        seen = sorted({k for d in deltas for k in d})[:3]
        raise ValueError(f"deltas: no module of {modules} in at least two variants (keys such as {seen})")
    return scores


def channel_prefix(key: str) -> str:
    return "in_" if "down_proj" in key else "out_"


def top_channels(scores: dict[str, np.ndarray], ratio: float) -> set[tuple[str, str]]:
    """Top ``max(1, int(C · ratio))`` channels per module; ties broken by ascending index."""
    sig = set()
    for key, s in scores.items():
        k = max(1, int(len(s) * ratio))
        order = np.argsort(-s, kind="stable")[:k]
        sig.update((key, f"{channel_prefix(key)}{j}") for j in order)
    return sig


def channel_counts(adapter: dict[str, torch.Tensor], modules: tuple[str, ...]) -> dict[str, int]:
    """Channels per scored module of an adapter: out-features for gate/up, in-features for down."""
    counts = {}
    for key, (a, b) in lora_pairs(adapter).items():
        kind = module_type(key, modules)
        if kind is not None:
            counts[key] = a.shape[1] if kind == "down_proj" else b.shape[0]
    return counts


def random_channels(counts: dict[str, int], ratio: float, seed: int) -> set[tuple[str, str]]:
    """Uniformly random channels, ``max(1, int(C · ratio))`` per module (same sizes as the signature)."""
    rng = np.random.default_rng(seed)
    sig = set()
    for key in sorted(counts):
        c = counts[key]
        pick = rng.choice(c, size=max(1, int(c * ratio)), replace=False)
        sig.update((key, f"{channel_prefix(key)}{j}") for j in pick)
    return sig


def group_signature(signature) -> dict[str, tuple[str, np.ndarray]]:
    """``module -> ("in"|"out", sorted channel indices)`` from a signature set."""
    groups: dict[str, list[int]] = {}
    axes: dict[str, str] = {}
    for module, chan in signature:
        axis, _, j = chan.partition("_")
        axes[module] = axis
        groups.setdefault(module, []).append(int(j))
    return {m: (axes[m], np.unique(groups[m])) for m in groups}


def zero_channels(adapter: dict[str, torch.Tensor], signature) -> dict[str, torch.Tensor]:
    """Zero ``lora_B`` rows (``out_j``) and ``lora_A`` columns (``in_j``) named by the signature.

    Returns a new state dict; the input is not modified.
    """
    groups = group_signature(signature)
    out = {}
    for key, t in adapter.items():
        sk = split_key(key)
        t = t.clone()
        if sk is not None and sk[0] in groups:
            axis, idx = groups[sk[0]]
            index = torch.as_tensor(idx, dtype=torch.long)
            if axis == "out" and sk[1] == "B":
                t[index, :] = 0.0
            elif axis == "in" and sk[1] == "A":
                t[:, index] = 0.0
        out[key] = t
    return out


def ablate(adapter: dict[str, torch.Tensor], modules: tuple[str, ...], layers) -> dict[str, torch.Tensor]:
    """Zero both LoRA factors of every module whose key names one of ``modules`` (in ``layers``)."""
    out = {}
    for key, t in adapter.items():
        sk = split_key(key)
        hit = sk is not None and any(m in sk[0] for m in modules)
        if hit and layers is not None:
            m = re.search(r"layers\.(\d+)\.", sk[0])
            hit = m is not None and int(m.group(1)) in layers
        out[key] = torch.zeros_like(t) if hit else t.clone()
    return out


def reinit_model_channels(model: torch.nn.Module, signature, generator: torch.Generator) -> int:
    """Xavier-uniform re-initialisation of the signature rows / columns of a full model's weights.

    Each selected row (``out_j``, shape ``(1, in)``) or column (``in_j``, shape ``(out, 1)``) is drawn as
    ``nn.init.xavier_uniform_`` would draw that slice: ``U(±sqrt(6 / (fan_in + fan_out)))`` with the
    slice's fans. Returns the number of re-initialised channels.
    """
    params = dict(model.named_parameters())
    done = 0
    with torch.no_grad():
        for module, (axis, idx) in group_signature(signature).items():
            name = module.replace("base_model.model.", "") + ".weight"
            w = params[name]
            index = torch.as_tensor(idx, dtype=torch.long)
            if axis == "out":
                bound = (6.0 / (1 + w.shape[1])) ** 0.5
                w[index, :] = (torch.rand(len(idx), w.shape[1], generator=generator) * 2 - 1).to(w) * bound
            else:
                bound = (6.0 / (w.shape[0] + 1)) ** 0.5
                w[:, index] = (torch.rand(w.shape[0], len(idx), generator=generator) * 2 - 1).to(w) * bound
            done += len(idx)
    return done
