"""PrefixMemory-Tuning: ``o = Attn(q, K, V) + φ(q)ᵀ M`` added through transformers' ``AttentionInterface``.

Reference: Prefix-Tuning+ / PrefixMemory-Tuning, arXiv 2506.13674 v3, Eq. 2-7. The prefix term of
Prefix-Tuning, ``α(q) Attn(q, K_p, V_p)``, is replaced by a kernelised memory ``φ(q)ᵀ M`` that is
*added* to the stock attention output instead of competing with it inside one softmax.

Every attention module of the wrapped model keeps a (non-registered) reference to one shared
:class:`PrefixMemory`; our attention function (registered as ``pmt_<base>``) calls the base kernel
(``sdpa`` or ``eager``) unchanged and adds the memory read-out per head. Shapes: queries
``(batch, n_q_heads, seq, d_head)``; the kernel output ``(batch, seq, n_q_heads, d_head)``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn

from iclr26.validation import check_in, check_int

FEATURE_MAPS = ("elu", "elu1", "gelu", "mlp")
QUERY_SIDES = ("post_rope", "pre_rope")
INITS = ("zeros", "normal")
BASE_KERNELS = ("sdpa", "eager")
NORMAL_INIT_STD = 0.02


@dataclass(frozen=True)
class PrefixMemoryConfig:
    """What the memory reads and how it is initialised (peft-style config).

    Attributes
    ----------
    feature_map:
        φ applied per head to the query: ``"elu"`` (elu(q), the paper's default), ``"elu1"``
        (elu(q) + 1, positive features as in linear attention), ``"gelu"``, or ``"mlp"``
        (φ(q) = gelu(q W + b), a trainable one-hidden-layer kernel per layer and head).
    query:
        ``"post_rope"`` (the query the softmax sees) or ``"pre_rope"`` (``q_proj`` output, before the
        rotary embedding, hence independent of the position).
    init:
        M starts at ``"zeros"`` (the wrapped model equals the base model) or ``"normal"``
        (std 0.02).
    mlp_hidden:
        Width of the MLP kernel's features (default ``d_head``); only for ``feature_map="mlp"``.
    """

    feature_map: str = "elu"
    query: str = "post_rope"
    init: str = "zeros"
    mlp_hidden: int | None = None

    def __post_init__(self):
        check_in(self.feature_map, FEATURE_MAPS, "feature_map")
        check_in(self.query, QUERY_SIDES, "query")
        check_in(self.init, INITS, "init")
        if self.mlp_hidden is not None:
            if self.feature_map != "mlp":
                raise ValueError("mlp_hidden is only used with feature_map='mlp'")
            check_int(self.mlp_hidden, "mlp_hidden", minimum=1)

    def to_dict(self) -> dict:
        return asdict(self)


class PrefixMemory(nn.Module):
    """The trainable state: ``M`` of shape ``(n_layers, n_q_heads, d_feat, d_head)`` (+ ``W, b`` for MLP).

    ``d_feat = d_head`` except for the MLP kernel (``mlp_hidden``). ``W`` is
    ``(n_layers, n_q_heads, d_head, d_feat)`` and ``b`` is ``(n_layers, n_q_heads, d_feat)``.
    """

    def __init__(self, config: PrefixMemoryConfig, n_layers: int, n_heads: int, d_head: int, seed: int = 0):
        super().__init__()
        self.config = config
        d_feat = config.mlp_hidden or d_head
        gen = torch.Generator().manual_seed(seed)
        memory = torch.zeros(n_layers, n_heads, d_feat, d_head)
        if config.init == "normal":
            memory.normal_(0.0, NORMAL_INIT_STD, generator=gen)
        self.M = nn.Parameter(memory)
        if config.feature_map == "mlp":
            w = torch.randn(n_layers, n_heads, d_head, d_feat, generator=gen) / d_head**0.5
            self.W = nn.Parameter(w)
            self.b = nn.Parameter(torch.zeros(n_layers, n_heads, d_feat))

    def features(self, q: torch.Tensor, layer: int) -> torch.Tensor:
        """φ(q): ``(batch, heads, seq, d_head)`` → ``(batch, heads, seq, d_feat)``."""
        fm = self.config.feature_map
        if fm == "elu":
            return nn.functional.elu(q)
        if fm == "elu1":
            return nn.functional.elu(q) + 1.0
        if fm == "gelu":
            return nn.functional.gelu(q)
        h = torch.einsum("bhsd,hdf->bhsf", q, self.W[layer].to(q.dtype)) + self.b[layer, :, None].to(q.dtype)
        return nn.functional.gelu(h)

    def read(self, q: torch.Tensor, layer: int) -> torch.Tensor:
        """φ(q)ᵀ M per head: ``(batch, heads, seq, d_head)`` → ``(batch, seq, heads, d_head)``."""
        out = torch.einsum("bhsf,hfd->bshd", self.features(q, layer), self.M[layer].to(q.dtype))
        return out


def _pmt_attention(base: str):
    """The attention function ``pmt_<base>``: the stock kernel plus the memory read-out."""
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    def forward(module, query, key, value, attention_mask, **kwargs):
        if base == "eager":
            from transformers.models.llama.modeling_llama import eager_attention_forward as kernel
        else:
            kernel = ALL_ATTENTION_FUNCTIONS[base]
        out, weights = kernel(module, query, key, value, attention_mask, **kwargs)
        memory = getattr(module, "_pmt_memory", None)
        if memory is None:
            return out, weights
        q = query if memory.config.query == "post_rope" else module._pmt_pre_rope_q
        read = memory.read(q, module.layer_idx)
        module._pmt_last = (out.detach(), read.detach()) if getattr(module, "_pmt_record", False) else None
        return out + read, weights

    return forward


def register_kernels() -> None:
    """Register ``pmt_sdpa`` and ``pmt_eager`` with transformers' attention and mask interfaces."""
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface
    from transformers.modeling_utils import AttentionInterface

    for base in BASE_KERNELS:
        AttentionInterface.register(f"pmt_{base}", _pmt_attention(base))
        AttentionMaskInterface.register(f"pmt_{base}", ALL_MASK_ATTENTION_FUNCTIONS[base])


def attention_modules(model: nn.Module) -> list[nn.Module]:
    """The self-attention modules of ``model`` in layer order (those with a ``layer_idx``)."""
    mods = [m for name, m in model.named_modules() if name.endswith("self_attn") and hasattr(m, "layer_idx")]
    return sorted(mods, key=lambda m: m.layer_idx)


def _stash_pre_rope(module, _inputs, output):
    """Hook on ``q_proj``: keep the pre-RoPE query ``(batch, heads, seq, d_head)`` on the attention."""
    attn = module._pmt_owner
    b, s, _ = output.shape
    attn._pmt_pre_rope_q = output.view(b, s, -1, attn.head_dim).transpose(1, 2)


def check_supported(model: nn.Module) -> None:
    """ValueError (naming the class) unless ``model`` routes attention through ``AttentionInterface``."""
    name = type(model).__name__
    if not getattr(model, "_supports_attention_backend", False) or not hasattr(model, "config"):
        raise ValueError(f"model: {name} does not route attention through transformers' AttentionInterface")
    if not attention_modules(model):
        raise ValueError(f"model: {name} has no self-attention modules with a layer_idx")
    impl = model.config._attn_implementation
    if impl not in BASE_KERNELS and not str(impl).startswith("pmt_"):
        raise ValueError(f"model: {name} uses attention {impl!r}; PMT composes with {BASE_KERNELS}")


def attach(model: nn.Module, memory: PrefixMemory) -> None:
    """Point every attention module of ``model`` at ``memory`` and switch to the ``pmt_<base>`` kernel."""
    register_kernels()
    impl = model.config._attn_implementation
    if not impl.startswith("pmt_"):
        model.set_attn_implementation(f"pmt_{impl}")
    for attn in attention_modules(model):
        object.__setattr__(attn, "_pmt_memory", memory)
        if memory.config.query == "pre_rope":
            if not hasattr(attn, "q_proj"):
                raise ValueError(f"model: {type(model).__name__} has no q_proj for query='pre_rope'")
            object.__setattr__(attn.q_proj, "_pmt_owner", attn)
            attn.q_proj.register_forward_hook(_stash_pre_rope)


def model_shape(model: nn.Module) -> tuple[int, int, int]:
    """``(n_layers, n_q_heads, d_head)`` read from the attention modules."""
    mods = attention_modules(model)
    cfg = model.config
    return len(mods), cfg.num_attention_heads, mods[0].head_dim
