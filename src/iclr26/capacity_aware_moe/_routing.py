"""Capacity-aware routing on a router-logits tensor: Token Drop and Expanded Drop.

Everything here is pure, vectorised torch over the ``(T, E)`` token-by-expert grid: no Python loop over
tokens (nor over experts). Notation follows the paper: ``T`` tokens, ``E`` experts, top-``k`` routing,
capacity factor ``gamma`` and expert capacity ``C = ceil(gamma * k * T / E)`` (``gamma`` times the mean
load per expert, ``N_bar = k * T / E``).

Dropped slots are marked by the sentinel expert index ``E`` (one past the last expert) and weight 0,
the convention the Hugging Face fused-experts modules understand (they one-hot over ``E + 1`` classes
and skip the last one).
"""

from __future__ import annotations

import math
import numbers
import operator
from dataclasses import dataclass

import torch

DROP_ORDERS = ("score", "random", "first", "last")
STRATEGIES = ("none", "token_drop", "expanded_drop")


def check_capacity_factor(capacity_factor: object) -> float | None:
    """``gamma`` as a float (``None`` stays ``None``); anything but a positive finite real number raises.

    Booleans and strings are refused (``True`` would silently mean ``gamma = 1``, ``"1.5"`` a typo).
    """
    if capacity_factor is None:
        return None
    if isinstance(capacity_factor, bool) or not isinstance(capacity_factor, numbers.Real):
        raise ValueError(
            f"capacity_factor must be a positive finite number or None, got {capacity_factor!r} "
            f"({type(capacity_factor).__name__})"
        )
    gamma = float(capacity_factor)
    if not math.isfinite(gamma) or gamma <= 0:
        raise ValueError(f"capacity_factor must be a positive finite number or None, got {capacity_factor!r}")
    return gamma


def check_top_k(top_k: object, num_experts: int) -> int:
    """``top_k`` as an int in ``[1, num_experts]``; any integer type (``np.int64`` too), never a bool."""
    try:
        k = operator.index(top_k)
    except TypeError:
        k = None
    if isinstance(top_k, bool) or k is None or not 1 <= k <= num_experts:
        raise ValueError(f"top_k must be an integer in [1, {num_experts}], got {top_k!r}")
    return int(k)


def expert_capacity(
    num_tokens: int, num_experts: int, top_k: int, capacity_factor: float | None
) -> int | None:
    """Expert capacity ``C = ceil(gamma * k * T / E)``, or ``None`` when no factor is given.

    The arithmetic is ordered as in the authors' code (``gamma * k * (T / E)``) so that the integer
    capacity agrees with theirs for the same inputs.
    """
    gamma = check_capacity_factor(capacity_factor)
    if gamma is None:
        return None
    if num_tokens < 0 or num_experts < 1 or top_k < 1:
        raise ValueError(
            f"need num_tokens >= 0, num_experts >= 1, top_k >= 1; got {num_tokens}, {num_experts}, {top_k}"
        )
    return int(math.ceil(gamma * top_k * (num_tokens / num_experts)))


def _check_scores(scores: torch.Tensor, name: str = "scores") -> None:
    if not isinstance(scores, torch.Tensor) or scores.ndim != 2:
        shape = getattr(scores, "shape", None)
        raise ValueError(f"{name} must be a 2-D torch tensor (num_tokens, num_experts), got shape {shape}")
    if not torch.is_floating_point(scores):
        raise ValueError(f"{name} must be floating point, got dtype {scores.dtype}")
    if scores.shape[1] < 1:
        raise ValueError(f"{name} must have at least one expert column")
    if scores.numel() and bool(torch.isnan(scores).any()):
        # NaN scores would silently lose every comparison and drop every slot.
        raise ValueError(f"{name} contains NaN (a diverged router?): refusing to route")


def _check_index(index: torch.Tensor, num_tokens: int, num_experts: int, name: str) -> None:
    if not isinstance(index, torch.Tensor) or index.ndim != 2 or index.shape[0] != num_tokens:
        raise ValueError(
            f"{name} must be a 2-D integer tensor with {num_tokens} rows, got {getattr(index, 'shape', None)}"
        )
    if index.dtype not in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):
        raise ValueError(f"{name} must hold integer expert ids, got dtype {index.dtype}")
    if index.numel() and (int(index.min()) < 0 or int(index.max()) >= num_experts):
        raise ValueError(f"{name} must hold expert ids in [0, {num_experts - 1}]")


def _priority(scores: torch.Tensor, drop_order: str, generator: torch.Generator | None) -> torch.Tensor:
    """Per-(token, expert) priority: an over-loaded expert keeps its ``C`` highest-priority tokens."""
    num_tokens, num_experts = scores.shape
    if drop_order == "score":
        return scores.float()
    if drop_order == "random":
        return torch.rand(scores.shape, generator=generator, device=scores.device, dtype=torch.float32)
    position = torch.arange(num_tokens, device=scores.device, dtype=torch.float32)
    if drop_order == "first":  # keep the earliest tokens, drop the overflow at the end of the batch
        position = -position
    return position.unsqueeze(1).expand(num_tokens, num_experts)


def _keep_top_capacity(priority: torch.Tensor, assigned: torch.Tensor, capacity: int) -> torch.Tensor:
    """Boolean ``(T, E)``: for every expert, its ``capacity`` highest-priority *assigned* tokens.

    Experts with at most ``capacity`` assigned tokens keep all of them (assigned entries have finite
    priority and outrank the ``-inf`` of unassigned ones); the result is always a subset of ``assigned``.
    """
    num_tokens = priority.shape[0]
    c = min(int(capacity), num_tokens)
    if c >= num_tokens:
        return assigned.clone()
    over = (assigned.sum(dim=0) > c).nonzero().squeeze(1)  # only over-loaded experts need a top-C
    keep = assigned.clone()
    if over.numel() == 0:
        return keep
    sub_assigned = assigned[:, over]
    masked = priority[:, over].masked_fill(~sub_assigned, float("-inf"))
    keep_rows = masked.topk(c, dim=0, sorted=False).indices  # (C, n_over)
    sub_keep = torch.zeros_like(sub_assigned).scatter_(0, keep_rows, True) & sub_assigned
    keep[:, over] = sub_keep
    return keep


def token_drop_mask(
    scores: torch.Tensor,
    topk_index: torch.Tensor,
    capacity: int | None,
    drop_order: str = "score",
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Capacity-Aware Token Drop: which of the top-``k`` assignments each expert keeps.

    Parameters
    ----------
    scores : tensor of shape (T, E)
        Routing scores (the softmax router probabilities); used as the drop priority for
        ``drop_order="score"``.
    topk_index : integer tensor of shape (T, k)
        The experts each token chose (the router's top-``k``).
    capacity : int or None
        Expert capacity ``C``; ``None`` keeps everything.
    drop_order : {"score", "random", "first", "last"}
        Which tokens an over-loaded expert keeps: its ``C`` highest-scoring ones (the paper's default),
        ``C`` random ones, the ``C`` earliest in the flattened batch, or the ``C`` latest.
    generator : torch.Generator, optional
        Random source for ``drop_order="random"``.

    Returns
    -------
    keep : bool tensor of shape (T, k)
        ``keep[t, j]`` is whether token ``t`` is still processed by expert ``topk_index[t, j]``. Every
        expert keeps at most ``C`` tokens and drops nothing if it had at most ``C``.
    """
    _check_scores(scores)
    num_tokens, num_experts = scores.shape
    _check_index(topk_index, num_tokens, num_experts, "topk_index")
    if drop_order not in DROP_ORDERS:
        raise ValueError(f"drop_order must be one of {DROP_ORDERS}, got {drop_order!r}")
    topk_index = topk_index.long()
    if capacity is None or num_tokens == 0:
        return torch.ones(topk_index.shape, dtype=torch.bool, device=scores.device)
    if capacity < 0:
        raise ValueError(f"capacity must be >= 0, got {capacity}")
    assigned = torch.zeros((num_tokens, num_experts), dtype=torch.bool, device=scores.device)
    assigned.scatter_(1, topk_index, True)
    if capacity == 0:
        return torch.zeros(topk_index.shape, dtype=torch.bool, device=scores.device)
    keep = _keep_top_capacity(_priority(scores, drop_order, generator), assigned, capacity)
    return keep.gather(1, topk_index)


def expanded_drop_mask(
    scores: torch.Tensor,
    topk_index: torch.Tensor,
    capacity: int | None,
    local_experts: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Capacity-Aware Expanded Drop: top-``k`` candidates plus local experts, then per-expert capacity.

    Each token's candidate set is its top-``k`` experts united with its *local* experts (those on the
    token's own device under expert parallelism); each expert then keeps its ``C`` highest-scoring
    candidates. Under-loaded experts so take on extra tokens, over-loaded ones drop their overflow.

    Parameters
    ----------
    scores : tensor of shape (T, E)
        Router probabilities; the priority by which experts keep candidates.
    topk_index : integer tensor of shape (T, k)
    capacity : int or None
        ``None`` returns the plain top-``k`` (no expansion, nothing dropped).
    local_experts : integer tensor of shape (L,) or (T, L), optional
        Local experts shared by all tokens, or per token. ``None`` means every expert is local (a single
        device, the default of the authors' Hugging Face code).

    Returns
    -------
    candidate_index : long tensor of shape (T, k + L)
        The first ``k`` columns are ``topk_index``; the rest are the local experts. A local expert that
        is already among the token's top-``k`` appears only once (its later copy is never kept).
    keep : bool tensor of shape (T, k + L)
        Which candidate slots are processed; every expert keeps at most ``C`` tokens.
    """
    _check_scores(scores)
    num_tokens, num_experts = scores.shape
    _check_index(topk_index, num_tokens, num_experts, "topk_index")
    topk_index = topk_index.long()
    if capacity is None:
        return topk_index, torch.ones(topk_index.shape, dtype=torch.bool, device=scores.device)
    if capacity < 0:
        raise ValueError(f"capacity must be >= 0, got {capacity}")
    device = scores.device
    if local_experts is None:
        local = torch.arange(num_experts, device=device).unsqueeze(0).expand(num_tokens, num_experts)
    else:
        local = torch.as_tensor(local_experts, device=device)
        if local.ndim == 1:
            local = local.unsqueeze(0).expand(num_tokens, local.shape[0])
        _check_index(local, num_tokens, num_experts, "local_experts")
        local = local.long()
        if local.shape[1] > 1:
            srt = local.sort(dim=1).values
            if bool((srt[:, 1:] == srt[:, :-1]).any()):
                raise ValueError("local_experts must not repeat an expert within a token's row")
    candidate_index = torch.cat([topk_index, local], dim=1)  # (T, k + L)
    width = candidate_index.shape[1]
    # A local slot is a duplicate when its expert is already among the token's top-k.
    in_topk = (local.unsqueeze(2) == topk_index.unsqueeze(1)).any(dim=2)  # (T, L)
    first_copy = torch.cat([torch.ones_like(topk_index, dtype=torch.bool), ~in_topk], dim=1)
    candidates = torch.zeros((num_tokens, num_experts), dtype=torch.bool, device=device)
    candidates.scatter_(1, candidate_index, True)
    if capacity == 0 or num_tokens == 0:
        return candidate_index, torch.zeros((num_tokens, width), dtype=torch.bool, device=device)
    keep_grid = _keep_top_capacity(scores.float(), candidates, capacity)
    keep = keep_grid.gather(1, candidate_index) & first_copy
    return candidate_index, keep


def check_experts_per_device(experts_per_device: object, num_experts: int) -> int | None:
    """``experts_per_device`` as an int dividing ``num_experts`` (``None``: one device holds every expert)."""
    if experts_per_device is None:
        return None
    try:
        epd = operator.index(experts_per_device)
    except TypeError:
        epd = None
    if isinstance(experts_per_device, bool) or epd is None or epd < 1 or num_experts % epd:
        raise ValueError(
            f"experts_per_device must be a positive divisor of num_experts={num_experts} or None, "
            f"got {experts_per_device!r}"
        )
    return int(epd)


def expert_parallel_local_experts(num_tokens: int, num_experts: int, experts_per_device: int) -> torch.Tensor:
    """Local experts per token under expert parallelism with ``experts_per_device`` experts per device.

    ``D = num_experts / experts_per_device`` devices; experts are placed contiguously (device ``d`` holds
    experts ``d * epd ... (d + 1) * epd - 1``, the layout :func:`straggler_layer_time` assumes) and the
    tokens of a call are split into ``D`` contiguous shards, one per device (data-parallel input shards).
    A token's local experts are those on its device. Returns a long tensor of shape ``(T, epd)``.
    """
    epd = check_experts_per_device(experts_per_device, num_experts)
    if epd is None:
        raise ValueError("experts_per_device must be given (None means every expert is local)")
    if num_tokens < 0:
        raise ValueError(f"num_tokens must be >= 0, got {num_tokens}")
    num_devices = num_experts // epd
    device_of_token = (torch.arange(num_tokens) * num_devices) // max(num_tokens, 1)
    return device_of_token.unsqueeze(1) * epd + torch.arange(epd).unsqueeze(0)


@dataclass
class CapacityRouting:
    """The outcome of capacity-aware routing for one MoE layer call.

    Attributes
    ----------
    expert_index : long tensor of shape (T, S)
        Expert per slot; dropped slots hold the sentinel ``num_experts``.
    weights : float tensor of shape (T, S)
        Combine weight per slot (0 for dropped slots).
    num_experts, top_k : int
    capacity : int or None
        The expert capacity ``C`` that was enforced (``None``: none).
    requested_per_expert : long tensor of shape (E,)
        Tokens per expert under plain top-``k`` routing (before any capacity limit).
    kept_topk : bool tensor of shape (T, k)
        Which of each token's original top-``k`` assignments survived.
    """

    expert_index: torch.Tensor
    weights: torch.Tensor
    num_experts: int
    top_k: int
    capacity: int | None
    requested_per_expert: torch.Tensor
    kept_topk: torch.Tensor

    @property
    def tokens_per_expert(self) -> torch.Tensor:
        """Tokens each expert processes after the capacity limit, shape (E,)."""
        return _counts(self.expert_index, self.num_experts)

    @property
    def dropped_fraction(self) -> float:
        """Fraction of the original top-``k`` token-expert assignments that were dropped."""
        n = self.kept_topk.numel()
        return float(1.0 - self.kept_topk.float().mean()) if n else 0.0

    def load_metrics(self) -> dict[str, float | list[int] | int | None]:
        """Tokens per expert and the max/mean load ratio before and after the limit."""
        return load_metrics(self.requested_per_expert, self.tokens_per_expert) | {
            "dropped_fraction": self.dropped_fraction,
            "capacity": self.capacity,
        }


def _counts(expert_index: torch.Tensor, num_experts: int) -> torch.Tensor:
    flat = expert_index.reshape(-1).long()
    return torch.bincount(flat, minlength=num_experts + 1)[:num_experts]


def max_mean_ratio(loads: torch.Tensor, reference: torch.Tensor | None = None) -> torch.Tensor:
    """Max load over the mean *requested* load ``N_bar = k T / E``, per row of ``(..., E)`` counts.

    ``reference`` holds the plain top-``k`` counts whose mean is ``N_bar`` (default: ``loads`` itself).
    Dividing the after-limit maximum by the same ``N_bar`` makes the two ratios comparable: under Token
    Drop the after ratio is at most ``C / N_bar``, about ``gamma``. NaN where ``N_bar`` is 0.
    """
    loads = torch.as_tensor(loads).double()
    ref = loads if reference is None else torch.as_tensor(reference).double()
    if ref.shape != loads.shape:  # another shape's mean would be divided in silently
        raise ValueError(
            f"reference must have the shape of loads {tuple(loads.shape)}, got {tuple(ref.shape)}"
        )
    if loads.ndim == 0 or loads.shape[-1] == 0:
        raise ValueError(
            f"loads must hold one count per expert along its last axis, got shape {tuple(loads.shape)}"
        )
    if (
        not (torch.isfinite(loads).all() and torch.isfinite(ref).all())
        or (loads < 0).any()
        or (ref < 0).any()
    ):
        raise ValueError("loads and reference must hold finite token counts >= 0")
    mean = ref.mean(-1)
    out = loads.max(-1).values / mean
    return torch.where(mean > 0, out, torch.full_like(out, float("nan")))


def load_metrics(requested: torch.Tensor, processed: torch.Tensor | None = None) -> dict:
    """Load statistics of one layer call from tokens-per-expert counts.

    Returns the counts and the max/mean load ratio (:func:`max_mean_ratio`; 1 is perfectly balanced, the
    straggler effect is the ratio above 1) before (``requested``) and, if given, after the capacity
    limit (``processed``), both relative to the mean requested load.
    """
    req = torch.as_tensor(requested).double()
    out: dict = {
        "tokens_per_expert": req.long().tolist(),
        "max_load": int(req.max()) if req.numel() else 0,
        "max_mean_ratio": float(max_mean_ratio(req)) if req.numel() else float("nan"),
    }
    if processed is not None:
        pro = torch.as_tensor(processed).double()
        out["tokens_per_expert_after"] = pro.long().tolist()
        out["max_load_after"] = int(pro.max()) if pro.numel() else 0
        out["max_mean_ratio_after"] = float(max_mean_ratio(pro, req)) if pro.numel() else float("nan")
    return out


def capacity_route(
    router_logits: torch.Tensor,
    top_k: int,
    capacity_factor: float | None = None,
    strategy: str = "token_drop",
    drop_order: str = "score",
    norm_topk_prob: bool = False,
    renormalize: bool = False,
    local_experts: torch.Tensor | None = None,
    generator: torch.Generator | None = None,
) -> CapacityRouting:
    """Route ``T`` tokens to ``E`` experts under an expert-capacity limit.

    The router probabilities are ``p = softmax(router_logits)``; each token picks its top-``k`` experts.
    ``strategy`` then enforces the capacity ``C = ceil(gamma * k * T / E)``:

    - ``"none"`` (or ``capacity_factor=None``): plain top-``k``;
    - ``"token_drop"``: over-loaded experts drop their overflow (:func:`token_drop_mask`);
    - ``"expanded_drop"``: candidates are top-``k`` plus local experts, each expert keeps its ``C``
      best (:func:`expanded_drop_mask`).

    Every kept slot (top-``k`` or extra) has the weight ``p_e``; with ``norm_topk_prob`` (Mixtral, Qwen,
    some OLMoE variants) or ``renormalize`` each token's kept weights are divided by their sum, as the
    authors' OLMoE / Qwen2-MoE forward does after dropping (with nothing dropped this is the usual
    top-``k`` renormalisation).

    Parameters
    ----------
    router_logits : tensor of shape (T, E)
    top_k : int
    capacity_factor : float or None
        ``gamma``; ``None`` disables the limit.

    Returns
    -------
    CapacityRouting
    """
    _check_scores(router_logits, "router_logits")
    num_tokens, num_experts = router_logits.shape
    top_k = check_top_k(top_k, num_experts)
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    gamma = check_capacity_factor(capacity_factor)
    probs = torch.softmax(router_logits.float(), dim=-1)
    top_idx = probs.topk(top_k, dim=-1).indices
    requested = _counts(top_idx, num_experts)
    capacity = None if strategy == "none" else expert_capacity(num_tokens, num_experts, top_k, gamma)
    index, raw, kept, _ = apply_capacity(
        probs, top_idx, capacity, strategy, drop_order, local_experts, generator
    )
    weights = normalize_kept(raw) if (norm_topk_prob or renormalize) else raw
    return CapacityRouting(index, weights, num_experts, top_k, capacity, requested, kept)


def normalize_kept(raw: torch.Tensor, eps: float = 1e-20) -> torch.Tensor:
    """Each token's kept weights divided by their sum (the authors' ``clamp_min(1e-20)``; all-dropped: 0)."""
    return raw / raw.sum(dim=-1, keepdim=True).clamp_min(eps)


def apply_capacity(
    scores: torch.Tensor,
    top_idx: torch.Tensor,
    capacity: int | None,
    strategy: str,
    drop_order: str = "score",
    local_experts: torch.Tensor | None = None,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Apply a capacity strategy to an existing top-``k`` routing.

    ``scores`` (T, E) are the routing scores: the drop priority and the un-normalised weight of every
    kept slot. Returns ``(expert_index, raw_weights, kept_topk, changed)``: ``raw_weights`` is ``scores``
    at kept slots and 0 at dropped ones; ``changed`` (T,) marks the tokens whose expert set differs from
    their plain top-``k`` (a slot dropped or an extra expert added).
    """
    k = top_idx.shape[1]
    num_experts = scores.shape[1]
    if capacity is None or strategy == "none":
        kept = torch.ones(top_idx.shape, dtype=torch.bool, device=top_idx.device)
        return top_idx, scores.gather(1, top_idx), kept, torch.zeros_like(kept[:, 0])
    if strategy == "token_drop":
        keep = token_drop_mask(scores, top_idx, capacity, drop_order, generator)
        index = top_idx.masked_fill(~keep, num_experts)
        raw = scores.gather(1, top_idx).masked_fill(~keep, 0)
        kept_topk = keep
        changed = ~keep.all(dim=1)
    elif strategy == "expanded_drop":
        cand, keep = expanded_drop_mask(scores, top_idx, capacity, local_experts)
        raw = scores.gather(1, cand).masked_fill(~keep, 0)
        index = cand.masked_fill(~keep, num_experts)
        kept_topk = keep[:, :k]
        changed = ~kept_topk.all(dim=1) | keep[:, k:].any(dim=1)
    else:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    return index, raw, kept_topk, changed
