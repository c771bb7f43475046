"""Capacity-Aware Inference for Mixture-of-Experts (He et al., ICLR 2026): Token Drop and Expanded Drop.

Routing functions on router logits, a drop-in patch for transformers 5.x OLMoE, Mixtral, Qwen2-MoE,
Qwen3-MoE, DeepSeek-V2 and DeepSeek-V3 blocks, load metrics and an expert-parallel latency simulator.
"""

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
    max_mean_ratio,
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
    "max_mean_ratio",
    "remove_capacity_aware",
    "supported_block_classes",
    "token_drop_mask",
]
