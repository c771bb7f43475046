"""A drop-in capacity-aware patch for Hugging Face ``transformers`` 5.x MoE blocks.

Supported blocks (transformers 5.x layout): OLMoE, Mixtral, Qwen2-MoE (with its gated shared expert),
Qwen3-MoE, DeepSeek-V2 and DeepSeek-V3 (with their shared experts). Each has a ``gate`` router module
returning ``(router_logits, top_k_weights, top_k_index)`` and a fused ``experts`` module called as
``experts(hidden_states, top_k_index, top_k_weights)`` that skips the sentinel expert id ``E``.

The patch wraps the *router's* ``forward`` on the instance (classes untouched): the stock router runs,
then the capacity limit is applied to its routing, and the block's own forward (shared experts, jitter,
reshapes) runs unchanged. A pre-hook on the block records the call's sequence length (decode steps of
one token are not capped, as the authors do). :meth:`CapacityAwarePatch.undo` restores everything.

Combine weights of a token whose routing changed (a slot dropped or an extra Expanded Drop expert
added) follow the authors' forward for each family; a token whose routing did not change keeps the
stock router's weights bit for bit, so with a large ``gamma`` Token Drop equals the unpatched model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import MethodType
from typing import Any

import torch

from ._routing import (
    DROP_ORDERS,
    STRATEGIES,
    apply_capacity,
    check_capacity_factor,
    check_experts_per_device,
    expert_capacity,
    expert_parallel_local_experts,
    load_metrics,
    max_mean_ratio,
)

_STATE_ATTR = "_capacity_aware_state"

# Block class name -> family (how the router scores experts and normalises the kept weights).
_SUPPORTED = {
    "OlmoeSparseMoeBlock": "olmoe",
    "MixtralSparseMoeBlock": "mixtral",
    "Qwen2MoeSparseMoeBlock": "qwen",
    "Qwen3MoeSparseMoeBlock": "qwen",
    "DeepseekV2Moe": "deepseek_v2",
    "DeepseekV3MoE": "deepseek_v3",
}


def supported_block_classes() -> tuple[str, ...]:
    """Names of the MoE block classes :func:`apply_capacity_aware` can patch."""
    return tuple(_SUPPORTED)


@dataclass
class _BlockState:
    layer: int
    family: str
    num_experts: int
    top_k: int
    norm_topk_prob: bool
    scaling: float
    strategy: str
    capacity_factor: float | None
    drop_order: str
    renormalize: bool
    local_experts: torch.Tensor | None
    experts_per_device: int | None
    generator: torch.Generator | None
    record: bool
    experts: Any = None  # the block's experts module (kept here: a module attribute would register it)
    hooks: list = field(default_factory=list)
    seq_len: int | None = None
    ep_flag: bool | None = None
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


def _scores(gate: torch.nn.Module, family: str, router_logits: torch.Tensor) -> torch.Tensor:
    """Per-(token, expert) routing scores in float32: drop priority and un-normalised weight.

    Softmax probabilities (OLMoE, Mixtral, Qwen, DeepSeek-V2; for DeepSeek-V2's group-limited greedy
    routing, zero outside the token's selected groups, as the authors' ``tmp_scores``), or DeepSeek-V3's
    sigmoid affinities (the values its combine weights are made of; the selection bias is not a weight).
    """
    logits = router_logits.float()
    if family == "deepseek_v3":
        return logits.sigmoid()
    scores = torch.softmax(logits, dim=-1)
    if family == "deepseek_v2" and getattr(gate, "topk_method", "greedy") == "group_limited_greedy":
        n_group, e = int(gate.num_group), scores.shape[1]
        group_scores = scores.view(-1, n_group, e // n_group).max(dim=-1).values
        group_idx = torch.topk(group_scores, k=int(gate.topk_group), dim=-1, sorted=False)[1]
        group_mask = torch.zeros_like(group_scores).scatter_(1, group_idx, 1).bool()
        scores = scores.masked_fill(~group_mask.repeat_interleave(e // n_group, dim=1), 0.0)
    return scores


def _finalize(state: _BlockState, raw: torch.Tensor) -> torch.Tensor:
    """Combine weights of changed tokens from the kept raw scores, per family (see the module docs)."""
    norm = state.norm_topk_prob or state.renormalize
    if state.family == "deepseek_v3":  # transformers' V3 router: normalise (+1e-20), then scale
        w = raw / (raw.sum(dim=-1, keepdim=True) + 1e-20) if norm else raw
        return w * state.scaling
    if state.family == "deepseek_v2":  # the authors' DeepSeek gate: normalise, else scale
        return raw / raw.sum(dim=-1, keepdim=True).clamp_min(1e-20) if norm else raw * state.scaling
    # OLMoE / Qwen2-MoE (authors' forward), Qwen3-MoE and Mixtral: renormalise over the kept experts.
    return raw / raw.sum(dim=-1, keepdim=True).clamp_min(1e-20) if norm else raw


def _patched_gate_forward(self: torch.nn.Module, hidden_states: torch.Tensor) -> tuple:
    state: _BlockState = getattr(self, _STATE_ATTR)
    router_logits, top_w, top_idx = type(self).forward(self, hidden_states)
    num_tokens = router_logits.shape[0]
    if bool(torch.isnan(router_logits).any()):
        raise ValueError("router logits contain NaN (diverged weights or inputs?): refusing to route")
    # As the authors do, no capacity limit on single-token decode steps.
    gamma = None if state.seq_len == 1 else state.capacity_factor
    capacity = None
    if state.strategy != "none":
        capacity = expert_capacity(num_tokens, state.num_experts, state.top_k, gamma)
    if capacity is None:
        index, weights = top_idx, top_w
        kept = torch.ones(top_idx.shape, dtype=torch.bool, device=top_idx.device)
    else:
        scores = _scores(self, state.family, router_logits)
        local = state.local_experts
        if state.experts_per_device is not None:
            local = expert_parallel_local_experts(num_tokens, state.num_experts, state.experts_per_device)
            local = local.to(scores.device)
        index, raw, kept, changed = apply_capacity(
            scores, top_idx, capacity, state.strategy, state.drop_order, local, state.generator
        )
        stock = torch.zeros(index.shape, dtype=top_w.dtype, device=top_w.device)
        stock[:, : top_w.shape[1]] = top_w
        weights = torch.where(changed.unsqueeze(1), _finalize(state, raw).to(top_w.dtype), stock)
        experts = state.experts
        if hasattr(experts, "_is_expert_parallel"):
            # transformers' fused kernels (grouped_mm, batched_mm, ...) skip the sentinel expert id only
            # when told that sentinels may be present, the flag expert parallelism sets (the eager loop
            # always skips it); the block's forward hook restores the flag after the call.
            if state.ep_flag is None:
                state.ep_flag = experts._is_expert_parallel
            experts._is_expert_parallel = True
    if state.record:
        with torch.no_grad():
            e = state.num_experts
            state.requested.append(torch.bincount(top_idx.reshape(-1), minlength=e + 1)[:e].cpu())
            state.processed.append(torch.bincount(index.reshape(-1), minlength=e + 1)[:e].cpu())
            state.kept.append(torch.tensor([int(kept.sum()), kept.numel()]))
            state.capacities.append(capacity)
    return router_logits, weights, index


def _block_pre_hook(state: _BlockState) -> Callable:
    def hook(module: torch.nn.Module, args: tuple) -> None:
        x = args[0] if args else None
        state.seq_len = int(x.shape[-2]) if isinstance(x, torch.Tensor) and x.ndim >= 2 else None

    return hook


def _block_post_hook(state: _BlockState) -> Callable:
    def hook(module: torch.nn.Module, args: tuple, output: Any) -> None:
        if state.ep_flag is not None:
            state.experts._is_expert_parallel = state.ep_flag
            state.ep_flag = None
        state.seq_len = None

    return hook


def _restore(block: torch.nn.Module) -> bool:
    """Undo the patch on one block (router forward, hooks, state); ``False`` if it was not patched."""
    gate = getattr(block, "gate", None)
    state = getattr(gate, _STATE_ATTR, None)
    if state is None:
        return False
    for h in state.hooks:
        h.remove()
    if "forward" in gate.__dict__:
        del gate.forward
    delattr(gate, _STATE_ATTR)
    return True


class CapacityAwarePatch:
    """Handle returned by :func:`apply_capacity_aware`: reconfigure, read load metrics, undo.

    Usable as a context manager (``with apply_capacity_aware(model, ...):``); leaving the block undoes
    the patch.
    """

    def __init__(self, model: torch.nn.Module, blocks: list[tuple[str, torch.nn.Module]]):
        self.model = model
        self.blocks = blocks
        self.active = True

    def _states(self) -> list[_BlockState]:
        self._check_active()
        return [getattr(block.gate, _STATE_ATTR) for _, block in self.blocks]

    # -- configuration -------------------------------------------------------------------------
    def configure(
        self,
        strategy: str | None = None,
        capacity_factor: float | None | str = "keep",
        drop_order: str | None = None,
        renormalize: bool | None = None,
    ) -> CapacityAwarePatch:
        """Change the strategy / capacity factor of every patched block (arguments left out stay)."""
        states = self._states()
        if strategy is not None:
            _check_strategy(strategy)
        if drop_order is not None and drop_order not in DROP_ORDERS:
            raise ValueError(f"drop_order must be one of {DROP_ORDERS}, got {drop_order!r}")
        keep_gamma = isinstance(capacity_factor, str) and capacity_factor == "keep"
        gamma = None if keep_gamma else check_capacity_factor(capacity_factor)
        for st in states:
            if strategy is not None:
                st.strategy = strategy
            if not keep_gamma:
                st.capacity_factor = gamma
            if drop_order is not None:
                st.drop_order = drop_order
            if renormalize is not None:
                st.renormalize = bool(renormalize)
        return self

    # -- load metrics --------------------------------------------------------------------------
    def reset_loads(self) -> None:
        """Forget the recorded per-call expert loads."""
        for st in self._states():
            st.requested.clear()
            st.processed.clear()
            st.kept.clear()
            st.capacities.clear()

    def loads(self) -> dict[str, torch.Tensor]:
        """Recorded tokens per expert, as tensors of shape (n_layers, n_calls, E).

        ``requested``: under plain top-``k``; ``processed``: after the capacity limit.
        """
        req, pro = [], []
        for st in self._states():
            if not st.requested:
                raise RuntimeError("no forward pass recorded yet (or record_loads=False)")
            req.append(torch.stack(st.requested))
            pro.append(torch.stack(st.processed))
        return {"requested": torch.stack(req), "processed": torch.stack(pro)}

    def load_metrics(self) -> list[dict]:
        """Per-layer load metrics over the recorded calls.

        Each dict holds the layer's module name, tokens per expert summed over calls (before/after),
        the mean over calls of the per-call max/mean load ratio before and after the limit (both over
        the call's mean *requested* load, :func:`max_mean_ratio`), and the dropped fraction of the
        original top-``k`` assignments.
        """
        out = []
        loads = self.loads()
        for (name, _), st, req, pro in zip(
            self.blocks, self._states(), loads["requested"], loads["processed"]
        ):
            kept = torch.stack(st.kept).sum(0)
            m = load_metrics(req.sum(0), pro.sum(0))
            m["max_mean_ratio"] = float(max_mean_ratio(req).nanmean())
            m["max_mean_ratio_after"] = float(max_mean_ratio(pro, req).nanmean())
            m["dropped_fraction"] = float(1 - kept[0] / kept[1]) if kept[1] else 0.0
            m["layer"] = st.layer
            m["module"] = name
            m["calls"] = int(req.shape[0])
            out.append(m)
        return out

    # -- undo ----------------------------------------------------------------------------------
    def undo(self) -> None:
        """Restore every patched block's original router and forward."""
        if not self.active:
            return
        for _, block in self.blocks:
            _restore(block)
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
        st = self._states()[0]
        return (
            f"CapacityAwarePatch(blocks={len(self.blocks)}, strategy={st.strategy!r}, "
            f"capacity_factor={st.capacity_factor}, drop_order={st.drop_order!r})"
        )


def _check_strategy(strategy: str) -> None:
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")


def _norm_and_scaling(block: torch.nn.Module, family: str) -> tuple[bool, float]:
    gate = block.gate
    if family == "mixtral":  # Mixtral's router always renormalises its top-k
        return True, 1.0
    if family == "deepseek_v2":  # transformers' V2 router never normalises, always scales
        return False, float(gate.routed_scaling_factor)
    if family == "deepseek_v3":
        return bool(gate.norm_topk_prob), float(gate.routed_scaling_factor)
    return bool(getattr(gate, "norm_topk_prob", False)), 1.0


def apply_capacity_aware(
    model: torch.nn.Module,
    strategy: str = "token_drop",
    capacity_factor: float | None = 1.0,
    drop_order: str = "score",
    renormalize: bool = False,
    local_experts: torch.Tensor | None = None,
    experts_per_device: int | None = None,
    record_loads: bool = True,
    seed: int | None = None,
) -> CapacityAwarePatch:
    """Patch every supported MoE block of ``model`` with capacity-aware inference.

    Parameters
    ----------
    model : torch.nn.Module
        A Hugging Face model holding OLMoE, Mixtral, Qwen2-MoE, Qwen3-MoE, DeepSeek-V2 or DeepSeek-V3
        MoE blocks (transformers 5.x layout, :func:`supported_block_classes`). Other block classes raise
        ``TypeError`` naming them.
    strategy : {"token_drop", "expanded_drop", "none"}
        Capacity-Aware Token Drop, Expanded Drop, or no limit (loads are still recorded).
    capacity_factor : float or None
        ``gamma``: expert capacity ``C = ceil(gamma * k * T / E)`` per forward call, with ``T`` the
        tokens of the call (batch times sequence). Not applied to single-token decode steps.
    drop_order : {"score", "random", "first", "last"}
        Which overflow tokens Token Drop discards (see :func:`token_drop_mask`).
    renormalize : bool
        Rescale each changed token's kept weights to sum to 1 (the authors' optional flag); models with
        ``norm_topk_prob`` (and Mixtral) do so anyway.
    local_experts : integer tensor of shape (L,), optional
        Local experts for Expanded Drop shared by all tokens (default: all experts, a single device).
    experts_per_device : int, optional
        Expert parallelism for Expanded Drop with this many experts per device (``E / epd`` devices):
        each call's tokens are split into contiguous shards, one per device, and a token's local experts
        are the ones on its device (:func:`expert_parallel_local_experts`); the same layout as
        :func:`straggler_layer_time`. Exclusive with ``local_experts``.
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
    gamma = check_capacity_factor(capacity_factor)
    blocks = _find_blocks(model)
    for name, block in blocks:
        if hasattr(block.gate, _STATE_ATTR):
            raise RuntimeError(f"block {name!r} is already capacity-aware; undo the earlier patch first")
    generator = None
    if seed is not None:
        generator = torch.Generator(device="cpu")
        generator.manual_seed(int(seed))
    local = None if local_experts is None else torch.as_tensor(local_experts).long()
    if experts_per_device is not None and local is not None:
        raise ValueError("give either local_experts or experts_per_device, not both")
    states = []
    for layer, (_, block) in enumerate(blocks):
        family = _SUPPORTED[type(block).__name__]
        num_experts = int(block.experts.num_experts)
        if local is not None and (
            local.ndim != 1 or (local.numel() and (int(local.min()) < 0 or int(local.max()) >= num_experts))
        ):
            raise ValueError(f"local_experts must be a 1-D tensor of expert ids in [0, {num_experts - 1}]")
        epd = check_experts_per_device(experts_per_device, num_experts)
        norm, scaling = _norm_and_scaling(block, family)
        states.append(
            _BlockState(
                layer=layer,
                family=family,
                num_experts=num_experts,
                top_k=int(block.gate.top_k),
                norm_topk_prob=norm,
                scaling=scaling,
                strategy=strategy,
                capacity_factor=gamma,
                drop_order=drop_order,
                renormalize=bool(renormalize),
                local_experts=local,
                experts_per_device=epd,
                generator=generator,
                record=bool(record_loads),
            )
        )
    for (_, block), state in zip(blocks, states):
        gate = block.gate
        setattr(gate, _STATE_ATTR, state)
        state.experts = block.experts
        gate.forward = MethodType(_patched_gate_forward, gate)
        state.hooks = [
            block.register_forward_pre_hook(_block_pre_hook(state)),
            block.register_forward_hook(_block_post_hook(state), always_call=True),
        ]
    return CapacityAwarePatch(model, blocks)


def remove_capacity_aware(model: torch.nn.Module) -> int:
    """Undo any capacity-aware patch on ``model``'s blocks; returns how many blocks were restored."""
    return sum(_restore(module) for _, module in model.named_modules() if type(module).__name__ in _SUPPORTED)
