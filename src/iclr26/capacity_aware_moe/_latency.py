"""Expert-parallel latency: the Straggler Effect simulator and CPU wall-time measurements.

Under expert parallelism each device runs its experts on the tokens routed to them and the layer
finishes when the slowest device does: ``layer time = max over devices of device time``. With
``experts_per_device`` experts per device (placed contiguously, the layout Expanded Drop's local experts
assume, :func:`expert_parallel_local_experts`) and a device time ``a + b * n`` (``n`` tokens the device's
experts process), the layer time is ``a + b * max_d n_d``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import torch

from ._routing import check_experts_per_device


def straggler_layer_time(
    tokens_per_expert,
    experts_per_device: int = 1,
    time_per_token: float = 1.0,
    overhead: float = 0.0,
) -> np.ndarray:
    """Layer time under expert parallelism for tokens-per-expert counts.

    Parameters
    ----------
    tokens_per_expert : array-like of shape (..., E)
        Tokens each expert processes in one layer call (leading axes: layers, calls, ...).
    experts_per_device : int
        Experts per device (a divisor of ``E``); experts are placed contiguously and a device's load is
        the sum over its experts. Default: one expert per device.
    time_per_token, overhead : float
        Per-device time model ``overhead + time_per_token * tokens``.

    Returns
    -------
    ndarray of shape (...)
        ``overhead + time_per_token * max over devices of device tokens``.
    """
    loads = np.asarray(tokens_per_expert, dtype=np.float64)
    if loads.ndim < 1 or loads.shape[-1] < 1:
        raise ValueError(f"tokens_per_expert must have a last axis of experts, got shape {loads.shape}")
    if not np.isfinite(loads).all() or (loads < 0).any():
        raise ValueError("tokens_per_expert must be finite and non-negative")
    if time_per_token < 0 or overhead < 0:
        raise ValueError("time_per_token and overhead must be non-negative")
    num_experts = loads.shape[-1]
    epd = check_experts_per_device(experts_per_device, num_experts)
    if epd is None:
        raise ValueError("experts_per_device must be an integer (use E for a single device)")
    loads = loads.reshape(*loads.shape[:-1], num_experts // epd, epd).sum(-1)
    return overhead + time_per_token * loads.max(axis=-1)


def simulated_speedup(
    baseline_tokens_per_expert,
    capped_tokens_per_expert,
    experts_per_device: int = 1,
    time_per_token: float = 1.0,
    overhead: float = 0.0,
) -> float:
    """Speedup of the capped routing over the baseline: total straggler time ratio (baseline / capped).

    Both arguments have shape (..., E) with matching leading axes (e.g. layers x calls); their layer
    times (:func:`straggler_layer_time`) are summed before the ratio.
    """
    base = straggler_layer_time(baseline_tokens_per_expert, experts_per_device, time_per_token, overhead)
    capped = straggler_layer_time(capped_tokens_per_expert, experts_per_device, time_per_token, overhead)
    if base.shape != capped.shape:
        raise ValueError(f"load arrays disagree in shape: {base.shape} vs {capped.shape}")
    total = float(capped.sum())
    return float(base.sum()) / total if total > 0 else float("nan")


def _best_time(fn: Callable[[], object], repeats: int, warmup: int) -> float:
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


@torch.no_grad()
def time_module(module: torch.nn.Module, inputs: torch.Tensor, repeats: int = 5, warmup: int = 1) -> float:
    """Wall time in seconds of ``module(inputs)``: the best of ``repeats`` runs (robust to a busy CPU)."""
    if repeats < 1 or warmup < 0:
        raise ValueError("repeats must be >= 1 and warmup >= 0")
    return _best_time(lambda: module(inputs), repeats, warmup)


@torch.no_grad()
def fit_expert_time_model(
    block: torch.nn.Module,
    token_counts=(16, 64, 256, 1024),
    repeats: int = 5,
    expert: int = 0,
) -> tuple[float, float]:
    """Measure one expert's CPU time at several token counts; fit ``time = a + b * tokens``.

    ``block`` is a transformers 5.x MoE block (``block.experts`` fused, as every supported family).
    The expert's feed-forward (gate/up projection, activation, down projection) runs on random hidden states.
    Returns ``(a, b)`` in seconds and seconds per token; a negative fitted value (timing noise) is
    clipped at 0, since neither an overhead nor a per-token cost can be negative.
    """
    experts = block.experts
    if not hasattr(experts, "gate_up_proj") or not hasattr(experts, "down_proj"):
        raise TypeError(f"{type(block).__name__}.experts has no fused gate_up_proj/down_proj weights")
    counts = np.asarray([int(c) for c in token_counts])
    if counts.size < 2 or (counts < 1).any():
        raise ValueError("token_counts must hold at least two positive counts")
    w_in = experts.gate_up_proj[expert]
    w_out = experts.down_proj[expert]
    dtype = w_in.dtype
    gen = torch.Generator().manual_seed(0)
    times = []
    for n in counts:
        x = torch.randn(int(n), w_in.shape[-1], generator=gen, dtype=dtype)

        def run(x=x):
            gate, up = torch.nn.functional.linear(x, w_in).chunk(2, dim=-1)
            return torch.nn.functional.linear(experts.act_fn(gate) * up, w_out)

        times.append(_best_time(run, repeats, 1))
    b, a = np.polyfit(counts.astype(np.float64), np.asarray(times), 1)
    return max(float(a), 0.0), max(float(b), 0.0)
