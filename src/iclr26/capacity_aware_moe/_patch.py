"""A drop-in capacity-aware patch for Hugging Face ``transformers`` MoE blocks (OLMoE, Mixtral).

Written against the transformers 5.x block layout: a block has a ``gate`` router module returning
``(router_logits, top_k_weights, top_k_index)`` and a fused ``experts`` module called as
``experts(hidden_states, top_k_index, top_k_weights)`` that skips the sentinel expert id ``E``.
The patch replaces each supported block's ``forward`` on the *instance* (the class is untouched), so
:meth:`CapacityAwarePatch.undo` restores the original behaviour exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MethodType
from typing import Any

import torch

from ._routing import (
    DROP_ORDERS,
    STRATEGIES,
    apply_capacity,
    expert_capacity,
    expert_parallel_local_experts,
    load_metrics,
)

_STATE_ATTR = "_capacity_aware_state"

# Block class name -> how its router normalises the top-k weights.
_SUPPORTED = {
    "OlmoeSparseMoeBlock": "olmoe",
    "MixtralSparseMoeBlock": "mixtral",
}


def supported_block_classes() -> tuple[str, ...]:
    """Names of the MoE block classes :func:`apply_capacity_aware` can patch."""
    return tuple(_SUPPORTED)


@dataclass
class _BlockState:
    layer: int
    kind: str
    num_experts: int
    top_k: int
    norm_topk_prob: bool
    strategy: str
    capacity_factor: float | None
    drop_order: str
    renormalize: bool
    local_experts: torch.Tensor | None
    num_devices: int | None
    generator: torch.Generator | None
    record: bool
    requested: list[torch.Tensor] = field(default_factory=list)
    processed: list[torch.Tensor] = field(default_factory=list)
    kept: list[torch.Tensor] = field(default_factory=list)
    capacities: list[int | None] = field(default_factory=list)


def _structure_problem(block: Any) -> str | None:
    """Why a block of a supported class name still cannot be patched (``None``: it can)."""
    gate = getattr(block, "gate", None)
    experts = getattr(block, "experts", None)
    if gate is None or not isinstance(getattr(gate, "weight", None), torch.Tensor):
        return "it has no `gate` router module with a `weight` (transformers 4.x layout?)"
    if getattr(gate, "top_k", None) is None:
        return "its gate has no `top_k` (a transformers 4.x `nn.Linear` gate?)"
    if experts is None or isinstance(experts, torch.nn.ModuleList):
        return "its `experts` is a ModuleList (transformers 4.x layout), not a fused experts module"
    if getattr(experts, "num_experts", None) is None:
        return "its experts module has no `num_experts`"
    return None


def _find_blocks(model: torch.nn.Module) -> list[tuple[str, torch.nn.Module]]:
    found, unsupported = [], []
    for name, module in model.named_modules():
        cls = type(module).__name__
        if cls in _SUPPORTED:
            problem = _structure_problem(module)
            if problem is not None:
                raise TypeError(f"cannot patch {cls} at {name!r}: {problem}")
            found.append((name, module))
        elif cls.endswith(("MoeBlock", "MoEBlock", "SparseMoeBlock", "MoE", "Moe")) and hasattr(
            module, "experts"
        ):
            unsupported.append(cls)
    if not found:
        extra = f" Found unsupported MoE-like blocks: {sorted(set(unsupported))}." if unsupported else ""
        raise TypeError(
            f"no supported MoE block in {type(model).__name__}; "
            f"supported classes: {supported_block_classes()}." + extra
        )
    return found


def _patched_forward(self: torch.nn.Module, hidden_states: torch.Tensor) -> torch.Tensor:
    state: _BlockState = getattr(self, _STATE_ATTR)
    batch_size, sequence_length, hidden_dim = hidden_states.shape
    jitter = getattr(self, "jitter_noise", 0.0) or 0.0
    if state.kind == "mixtral" and self.training and jitter > 0:
        hidden_states = hidden_states * torch.empty_like(hidden_states).uniform_(1.0 - jitter, 1.0 + jitter)
    flat = hidden_states.reshape(-1, hidden_dim)
    router_logits, top_w, top_idx = self.gate(flat)
    num_tokens = flat.shape[0]
    # As the authors do, no capacity limit on single-token decode steps.
    gamma = None if sequence_length == 1 else state.capacity_factor
    capacity = None
    if state.strategy != "none":
        capacity = expert_capacity(num_tokens, state.num_experts, state.top_k, gamma)
    if capacity is None:
        index, weights = top_idx, top_w
        kept = torch.ones(top_idx.shape, dtype=torch.bool, device=top_idx.device)
    else:
        probs = torch.softmax(router_logits.float(), dim=-1)
        if state.norm_topk_prob:
            denom = probs.gather(1, top_idx).sum(dim=-1, keepdim=True)
        else:
            denom = torch.ones((num_tokens, 1), dtype=probs.dtype, device=probs.device)
        local = state.local_experts
        if state.num_devices is not None:
            local = expert_parallel_local_experts(num_tokens, state.num_experts, state.num_devices)
            local = local.to(probs.device)
        index, weights, kept = apply_capacity(
            probs,
            top_idx,
            top_w,
            denom,
            capacity,
            state.strategy,
            state.drop_order,
            state.renormalize,
            local,
            state.generator,
        )
        weights = weights.to(top_w.dtype)
    if state.record:
        with torch.no_grad():
            e = state.num_experts
            state.requested.append(torch.bincount(top_idx.reshape(-1), minlength=e + 1)[:e].cpu())
            state.processed.append(torch.bincount(index.reshape(-1), minlength=e + 1)[:e].cpu())
            state.kept.append(torch.tensor([int(kept.sum()), kept.numel()]))
            state.capacities.append(capacity)
    experts = self.experts
    if capacity is None or not hasattr(experts, "_is_expert_parallel"):
        out = experts(flat, index, weights)
    else:
        # transformers' fused kernels (grouped_mm, batched_mm, ...) skip the sentinel expert id only
        # when told that sentinels may be present, the flag expert parallelism sets; the eager loop
        # always skips it.
        previous = experts._is_expert_parallel
        experts._is_expert_parallel = True
        try:
            out = experts(flat, index, weights)
        finally:
            experts._is_expert_parallel = previous
    return out.reshape(batch_size, sequence_length, hidden_dim)


class CapacityAwarePatch:
    """Handle returned by :func:`apply_capacity_aware`: reconfigure, read load metrics, undo.

    Usable as a context manager (``with apply_capacity_aware(model, ...):``); leaving the block undoes
    the patch.
    """

    def __init__(self, model: torch.nn.Module, blocks: list[tuple[str, torch.nn.Module]]):
        self.model = model
        self.blocks = blocks
        self.active = True

    # -- configuration -------------------------------------------------------------------------
    def configure(
        self,
        strategy: str | None = None,
        capacity_factor: float | None | str = "keep",
        drop_order: str | None = None,
        renormalize: bool | None = None,
    ) -> CapacityAwarePatch:
        """Change the strategy / capacity factor of every patched block (arguments left out stay)."""
        self._check_active()
        if strategy is not None:
            _check_strategy(strategy)
        if drop_order is not None and drop_order not in DROP_ORDERS:
            raise ValueError(f"drop_order must be one of {DROP_ORDERS}, got {drop_order!r}")
        if capacity_factor != "keep":
            expert_capacity(1, 1, 1, capacity_factor)  # validates
        for _, block in self.blocks:
            st: _BlockState = getattr(block, _STATE_ATTR)
            if strategy is not None:
                st.strategy = strategy
            if capacity_factor != "keep":
                st.capacity_factor = None if capacity_factor is None else float(capacity_factor)
            if drop_order is not None:
                st.drop_order = drop_order
            if renormalize is not None:
                st.renormalize = bool(renormalize)
        return self

    # -- load metrics --------------------------------------------------------------------------
    def reset_loads(self) -> None:
        """Forget the recorded per-call expert loads."""
        for _, block in self.blocks:
            st: _BlockState = getattr(block, _STATE_ATTR)
            st.requested.clear()
            st.processed.clear()
            st.kept.clear()
            st.capacities.clear()

    def loads(self) -> dict[str, torch.Tensor]:
        """Recorded tokens per expert, as tensors of shape (n_layers, n_calls, E).

        ``requested``: under plain top-``k``; ``processed``: after the capacity limit.
        """
        req, pro = [], []
        for _, block in self.blocks:
            st: _BlockState = getattr(block, _STATE_ATTR)
            if not st.requested:
                raise RuntimeError("no forward pass recorded yet (or record_loads=False)")
            req.append(torch.stack(st.requested))
            pro.append(torch.stack(st.processed))
        return {"requested": torch.stack(req), "processed": torch.stack(pro)}

    def load_metrics(self) -> list[dict]:
        """Per-layer load metrics over the recorded calls.

        Each dict holds the layer's module name, tokens per expert summed over calls (before/after),
        the mean over calls of the max/mean load ratio (before/after), and the dropped fraction of the
        original top-``k`` assignments.
        """
        out = []
        for (name, block), req, pro in zip(self.blocks, *self.loads().values()):
            st: _BlockState = getattr(block, _STATE_ATTR)
            kept = torch.stack(st.kept).sum(0)
            m = load_metrics(req.sum(0), pro.sum(0))
            reqd, prod = req.double(), pro.double()
            m["max_mean_ratio"] = float((reqd.max(-1).values / reqd.mean(-1).clamp_min(1e-12)).mean())
            m["max_mean_ratio_after"] = float((prod.max(-1).values / reqd.mean(-1).clamp_min(1e-12)).mean())
            m["dropped_fraction"] = float(1 - kept[0] / kept[1]) if kept[1] else 0.0
            m["layer"] = st.layer
            m["module"] = name
            m["calls"] = int(req.shape[0])
            out.append(m)
        return out

    # -- undo ----------------------------------------------------------------------------------
    def undo(self) -> None:
        """Restore every patched block's original forward."""
        if not self.active:
            return
        for _, block in self.blocks:
            if "forward" in block.__dict__:
                del block.forward
            if hasattr(block, _STATE_ATTR):
                delattr(block, _STATE_ATTR)
        self.active = False

    def _check_active(self) -> None:
        if not self.active:
            raise RuntimeError("this capacity-aware patch has been undone")

    def __enter__(self) -> CapacityAwarePatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.undo()

    def __repr__(self) -> str:
        if not self.active:
            return "CapacityAwarePatch(undone)"
        st: _BlockState = getattr(self.blocks[0][1], _STATE_ATTR)
        return (
            f"CapacityAwarePatch(blocks={len(self.blocks)}, strategy={st.strategy!r}, "
            f"capacity_factor={st.capacity_factor}, drop_order={st.drop_order!r})"
        )


def _check_strategy(strategy: str) -> None:
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")


def apply_capacity_aware(
    model: torch.nn.Module,
    strategy: str = "token_drop",
    capacity_factor: float | None = 1.0,
    drop_order: str = "score",
    renormalize: bool = False,
    local_experts: torch.Tensor | None = None,
    num_devices: int | None = None,
    record_loads: bool = True,
    seed: int | None = None,
) -> CapacityAwarePatch:
    """Patch every supported MoE block of ``model`` with capacity-aware inference.

    Parameters
    ----------
    model : torch.nn.Module
        A Hugging Face model holding ``OlmoeSparseMoeBlock`` or ``MixtralSparseMoeBlock`` modules
        (transformers 5.x layout). Other block classes raise ``TypeError`` naming them.
    strategy : {"token_drop", "expanded_drop", "none"}
        Capacity-Aware Token Drop, Expanded Drop, or no limit (loads are still recorded).
    capacity_factor : float or None
        ``gamma``: expert capacity ``C = ceil(gamma * k * T / E)`` per forward call, with ``T`` the
        tokens of the call (batch times sequence). Not applied to single-token decode steps.
    drop_order : {"score", "random", "first", "last"}
        Which overflow tokens Token Drop discards (see :func:`token_drop_mask`).
    renormalize : bool
        Rescale each token's kept weights to sum to 1 after dropping.
    local_experts : integer tensor of shape (L,), optional
        Local experts for Expanded Drop shared by all tokens (default: all experts, a single device).
    num_devices : int, optional
        Expert parallelism over ``num_devices`` devices for Expanded Drop: each call's tokens are split
        into contiguous shards, one per device, and a token's local experts are the ``E / num_devices``
        experts on its device (:func:`expert_parallel_local_experts`). Exclusive with ``local_experts``.
    record_loads : bool
        Record tokens per expert per call for :meth:`CapacityAwarePatch.load_metrics`.
    seed : int, optional
        Seed of the generator used by ``drop_order="random"``.

    Returns
    -------
    CapacityAwarePatch
        Call ``.undo()`` (or use it as a context manager) to restore the model.
    """
    _check_strategy(strategy)
    if drop_order not in DROP_ORDERS:
        raise ValueError(f"drop_order must be one of {DROP_ORDERS}, got {drop_order!r}")
    expert_capacity(1, 1, 1, capacity_factor)  # validates gamma
    blocks = _find_blocks(model)
    for name, block in blocks:
        if hasattr(block, _STATE_ATTR):
            raise RuntimeError(f"block {name!r} is already capacity-aware; undo the earlier patch first")
    generator = None
    if seed is not None:
        generator = torch.Generator(device="cpu")
        generator.manual_seed(int(seed))
    local = None if local_experts is None else torch.as_tensor(local_experts).long()
    if num_devices is not None and local is not None:
        raise ValueError("give either local_experts or num_devices, not both")
    for layer, (_, block) in enumerate(blocks):
        kind = _SUPPORTED[type(block).__name__]
        norm = True if kind == "mixtral" else bool(getattr(block.gate, "norm_topk_prob", False))
        num_experts = int(block.experts.num_experts)
        if local is not None and (
            local.ndim != 1 or (local.numel() and (int(local.min()) < 0 or int(local.max()) >= num_experts))
        ):
            raise ValueError(f"local_experts must be a 1-D tensor of expert ids in [0, {num_experts - 1}]")
        if num_devices is not None and (
            isinstance(num_devices, bool)
            or not isinstance(num_devices, int)
            or num_devices < 1
            or num_experts % num_devices
        ):
            raise ValueError(
                f"num_devices must be a positive divisor of num_experts={num_experts}, got {num_devices}"
            )
        state = _BlockState(
            layer=layer,
            kind=kind,
            num_experts=num_experts,
            top_k=int(block.gate.top_k),
            norm_topk_prob=norm,
            strategy=strategy,
            capacity_factor=None if capacity_factor is None else float(capacity_factor),
            drop_order=drop_order,
            renormalize=bool(renormalize),
            local_experts=local,
            num_devices=num_devices,
            generator=generator,
            record=bool(record_loads),
        )
        setattr(block, _STATE_ATTR, state)
        block.forward = MethodType(_patched_forward, block)
    return CapacityAwarePatch(model, blocks)


def remove_capacity_aware(model: torch.nn.Module) -> int:
    """Undo any capacity-aware patch on ``model``'s blocks; returns how many blocks were restored."""
    n = 0
    for _, module in model.named_modules():
        if hasattr(module, _STATE_ATTR):
            if "forward" in module.__dict__:
                del module.forward
            delattr(module, _STATE_ATTR)
            n += 1
    return n
