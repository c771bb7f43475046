"""The wrapped model (peft's ``get_peft_model`` convention), saving and loading the memory."""

from __future__ import annotations

import json
import os

import torch
from torch import nn

from ._memory import PrefixMemory, PrefixMemoryConfig, attach, attention_modules, check_supported, model_shape


class PMTModel(nn.Module):
    """A causal LM with a PrefixMemory: only ``memory`` (M, and W, b for the MLP kernel) is trainable.

    ``forward`` and ``generate`` are the base model's; the memory is read inside every attention layer.
    There is nothing to merge: ``φ(q)ᵀ M`` depends non-linearly on the query, so unlike LoRA it cannot
    be folded into a weight matrix.
    """

    def __init__(self, base_model: nn.Module, memory: PrefixMemory):
        super().__init__()
        self.base_model = base_model
        self.memory = memory
        self.config = base_model.config

    def forward(self, *args, **kwargs):
        return self.base_model(*args, **kwargs)

    def generate(self, *args, **kwargs):
        return self.base_model.generate(*args, **kwargs)

    @property
    def pmt_config(self) -> PrefixMemoryConfig:
        return self.memory.config

    def trainable_parameters(self) -> int:
        """How many parameters are trained."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


def get_pmt_model(model: nn.Module, config: PrefixMemoryConfig | None = None, *, seed: int = 0) -> PMTModel:
    """Wrap a transformers causal LM with a PrefixMemory (in place, as peft does).

    Parameters
    ----------
    model:
        A ``PreTrainedModel`` that routes attention through ``AttentionInterface`` (Llama/SmolLM2,
        Qwen2, Mistral; GQA supported) with the ``sdpa`` or ``eager`` kernel. Its parameters are frozen.
    config:
        The :class:`PrefixMemoryConfig` (default: ELU, post-RoPE, zeros).
    seed:
        Seeds the ``normal`` init of M and the MLP kernel's W.

    Returns
    -------
    PMTModel whose trainable parameters are ``memory.M`` ``(n_layers, n_q_heads, d_feat, d_head)``
    (plus ``memory.W``, ``memory.b`` for ``feature_map="mlp"``).
    """
    if isinstance(model, PMTModel) or any(hasattr(m, "_pmt_memory") for m in attention_modules(model)):
        raise ValueError("model already carries a PrefixMemory")
    check_supported(model)
    config = config or PrefixMemoryConfig()
    if not isinstance(config, PrefixMemoryConfig):
        raise ValueError(f"config must be a PrefixMemoryConfig, got {type(config).__name__}")
    n_layers, n_heads, d_head = model_shape(model)
    param = next(model.parameters())
    memory = PrefixMemory(config, n_layers, n_heads, d_head, seed=seed).to(param.device)
    for p in model.parameters():
        p.requires_grad_(False)
    attach(model, memory)
    return PMTModel(model, memory)


def save_pmt(model: PMTModel, path: str | os.PathLike) -> None:
    """Write the memory tensors and the config to one ``.safetensors`` file."""
    from safetensors.torch import save_file

    if not isinstance(model, PMTModel):
        raise ValueError(f"model must be a PMTModel, got {type(model).__name__}")
    tensors = {k: v.detach().cpu().contiguous() for k, v in model.memory.state_dict().items()}
    save_file(tensors, os.fspath(path), metadata={"pmt_config": json.dumps(model.pmt_config.to_dict())})


def load_pmt(model: nn.Module, path: str | os.PathLike) -> PMTModel:
    """Wrap ``model`` (as :func:`get_pmt_model`) with the memory saved at ``path``.

    Raises ValueError when the saved ``(n_layers, n_q_heads, d_head)`` does not match ``model``.
    """
    from safetensors import safe_open

    with safe_open(os.fspath(path), framework="pt") as f:
        meta = f.metadata() or {}
        if "pmt_config" not in meta:
            raise ValueError(f"path: {path} holds no PrefixMemory (no pmt_config metadata)")
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    config = PrefixMemoryConfig(**json.loads(meta["pmt_config"]))
    check_supported(model)
    n_layers, n_heads, d_head = model_shape(model)
    saved = tuple(tensors["M"].shape)
    if (saved[0], saved[1], saved[3]) != (n_layers, n_heads, d_head):
        raise ValueError(
            f"path: saved memory has (n_layers, n_q_heads, d_head) = {(saved[0], saved[1], saved[3])}, "
            f"model has {(n_layers, n_heads, d_head)}"
        )
    wrapped = get_pmt_model(model, config)
    with torch.no_grad():
        wrapped.memory.load_state_dict(tensors)
    return wrapped
