"""Capacity-Aware Inference for Mixture-of-Experts (He et al., ICLR 2026): Token Drop and Expanded Drop."""

from ._latency import fit_expert_time_model, simulated_speedup, straggler_layer_time, time_module
from ._patch import CapacityAwarePatch, apply_capacity_aware, remove_capacity_aware, supported_block_classes
from ._routing import (
    DROP_ORDERS,
    STRATEGIES,
    CapacityRouting,
    capacity_route,
    expanded_drop_mask,
    expert_capacity,
    expert_parallel_local_experts,
    load_metrics,
    token_drop_mask,
)
from ._toy_lm import CharVocab, TinyMoEConfig, build_olmoe, evaluate_lm, make_corpus, train_moe_lm

__all__ = [
    "CharVocab",
    "TinyMoEConfig",
    "build_olmoe",
    "evaluate_lm",
    "fit_expert_time_model",
    "make_corpus",
    "simulated_speedup",
    "straggler_layer_time",
    "time_module",
    "train_moe_lm",
    "DROP_ORDERS",
    "STRATEGIES",
    "CapacityAwarePatch",
    "CapacityRouting",
    "apply_capacity_aware",
    "capacity_route",
    "expanded_drop_mask",
    "expert_capacity",
    "expert_parallel_local_experts",
    "load_metrics",
    "remove_capacity_aware",
    "supported_block_classes",
    "token_drop_mask",
]
