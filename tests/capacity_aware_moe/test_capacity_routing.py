"""Routing functions: capacity formula, Token Drop orders, Expanded Drop, against a loop reference."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from iclr26.capacity_aware_moe import (
    capacity_route,
    expanded_drop_mask,
    expert_capacity,
    expert_parallel_local_experts,
    load_metrics,
    max_mean_ratio,
    token_drop_mask,
)


def _reference_token_drop(probs, k, capacity):
    """Loop reference of the authors' score-order Token Drop (each expert keeps its C best tokens)."""
    t_count, e_count = probs.shape
    top = [sorted(range(e_count), key=lambda e: -probs[t, e])[:k] for t in range(t_count)]
    keep = [[True] * k for _ in range(t_count)]
    for e in range(e_count):
        users = [(probs[t, e], t, j) for t in range(t_count) for j, ee in enumerate(top[t]) if ee == e]
        users.sort(reverse=True)
        for _, t, j in users[capacity:]:
            keep[t][j] = False
    return top, keep


def _reference_expanded_drop(probs, k, capacity):
    """Loop reference of Expanded Drop with every expert local: each expert keeps its C best tokens."""
    t_count, e_count = probs.shape
    kept = np.zeros((t_count, e_count), dtype=bool)
    for e in range(e_count):
        order = np.argsort(-probs[:, e], kind="stable")[:capacity]
        kept[order, e] = True
    return kept


def test_expert_capacity_formula():
    assert expert_capacity(100, 8, 2, 1.0) == 25
    assert expert_capacity(100, 8, 2, 1.5) == math.ceil(1.5 * 2 * 100 / 8)
    assert expert_capacity(7, 64, 8, 2.0) == 2
    assert expert_capacity(10, 4, 1, None) is None
    for bad in (0.0, -1.0, float("nan"), float("inf"), True, "1.5"):
        with pytest.raises(ValueError, match="capacity_factor"):
            expert_capacity(10, 4, 1, bad)


def test_token_drop_matches_loop_reference():
    gen = torch.Generator().manual_seed(0)
    for t_count, e_count, k, gamma in [(40, 8, 2, 1.0), (33, 6, 3, 0.5), (64, 16, 4, 1.5), (5, 4, 1, 0.3)]:
        probs = torch.softmax(torch.randn(t_count, e_count, generator=gen) * 2, -1)
        top_idx = probs.topk(k, dim=-1).indices
        cap = expert_capacity(t_count, e_count, k, gamma)
        keep = token_drop_mask(probs, top_idx, cap, "score")
        ref_top, ref_keep = _reference_token_drop(probs.numpy(), k, cap)
        for t in range(t_count):
            got = {int(top_idx[t, j]) for j in range(k) if keep[t, j]}
            want = {ref_top[t][j] for j in range(k) if ref_keep[t][j]}
            assert got == want


def test_first_and_last_orders_keep_earliest_and_latest():
    # All 6 tokens pick expert 0 first; capacity 2 (gamma * k * T / E = 1 * 1 * 6 / 3).
    logits = torch.tensor([[5.0, 0.0, 0.0]] * 6)
    probs = torch.softmax(logits, -1)
    top = probs.topk(1, -1).indices
    first = token_drop_mask(probs, top, 2, "first")[:, 0]
    last = token_drop_mask(probs, top, 2, "last")[:, 0]
    assert first.tolist() == [True, True, False, False, False, False]
    assert last.tolist() == [False, False, False, False, True, True]


def test_random_order_is_seeded_and_respects_capacity():
    probs = torch.softmax(torch.randn(50, 4, generator=torch.Generator().manual_seed(1)), -1)
    top = probs.topk(2, -1).indices
    masks = [
        token_drop_mask(probs, top, 10, "random", generator=torch.Generator().manual_seed(s))
        for s in (3, 3, 4)
    ]
    assert torch.equal(masks[0], masks[1])
    assert not torch.equal(masks[0], masks[2])
    for m in masks:
        counts = torch.bincount(top[m], minlength=4)
        assert int(counts.max()) <= 10


@settings(max_examples=60, deadline=None)
@given(
    t_count=st.integers(1, 80),
    e_count=st.integers(1, 12),
    k_frac=st.floats(0.0, 1.0),
    gamma=st.floats(0.05, 3.0),
    order=st.sampled_from(["score", "random", "first", "last"]),
    seed=st.integers(0, 10_000),
    scale=st.sampled_from([0.1, 1.0, 10.0]),
)
def test_token_drop_never_exceeds_capacity(t_count, e_count, k_frac, gamma, order, seed, scale):
    k = 1 + int(k_frac * (e_count - 1))
    gen = torch.Generator().manual_seed(seed)
    logits = torch.randn(t_count, e_count, generator=gen) * scale
    r = capacity_route(logits, k, gamma, "token_drop", drop_order=order, generator=gen)
    cap = expert_capacity(t_count, e_count, k, gamma)
    per_expert = r.tokens_per_expert
    assert int(per_expert.max()) <= cap
    # Experts within capacity keep every token; over-loaded ones are filled exactly to capacity.
    expected = torch.minimum(r.requested_per_expert, torch.tensor(cap))
    assert torch.equal(per_expert, expected)
    assert r.weights[r.expert_index == e_count].abs().sum() == 0
    # Kept slots are a subset of top-k and keep the router's weights.
    plain = capacity_route(logits, k, None, "token_drop")
    kept = r.expert_index != e_count
    assert torch.equal(r.expert_index[kept], plain.expert_index[kept])
    assert torch.equal(r.weights[kept], plain.weights[kept])


@settings(max_examples=60, deadline=None)
@given(
    t_count=st.integers(1, 60),
    e_count=st.integers(2, 10),
    k=st.integers(1, 3),
    gamma=st.floats(0.05, 3.0),
    per_device=st.sampled_from([None, 1, 2]),
    seed=st.integers(0, 10_000),
)
def test_expanded_drop_never_exceeds_capacity(t_count, e_count, k, gamma, per_device, seed):
    k = min(k, e_count)
    if per_device is not None and e_count % per_device:
        per_device = 1
    gen = torch.Generator().manual_seed(seed)
    logits = torch.randn(t_count, e_count, generator=gen) * 2
    local = None if per_device is None else expert_parallel_local_experts(t_count, e_count, per_device)
    r = capacity_route(logits, k, gamma, "expanded_drop", local_experts=local)
    cap = expert_capacity(t_count, e_count, k, gamma)
    assert int(r.tokens_per_expert.max()) <= cap
    # No token is sent twice to one expert.
    for t in range(t_count):
        ids = r.expert_index[t][r.expert_index[t] != e_count].tolist()
        assert len(ids) == len(set(ids))


def test_expanded_drop_all_local_matches_reference_and_fills_experts():
    gen = torch.Generator().manual_seed(5)
    probs = torch.softmax(torch.randn(30, 6, generator=gen) * 2, -1)
    top = probs.topk(2, -1).indices
    cap = expert_capacity(30, 6, 2, 1.0)
    cand, keep = expanded_drop_mask(probs, top, cap)
    grid = torch.zeros(30, 6, dtype=torch.bool)
    grid[torch.arange(30).unsqueeze(1).expand_as(cand)[keep], cand[keep]] = True
    assert np.array_equal(grid.numpy(), _reference_expanded_drop(probs.numpy(), 2, cap))
    assert torch.equal(grid.sum(0), torch.full((6,), cap))  # every expert filled to capacity
    assert torch.equal(cand[:, :2], top)


def test_expanded_drop_without_locals_equals_token_drop():
    gen = torch.Generator().manual_seed(2)
    logits = torch.randn(40, 8, generator=gen) * 2
    empty = torch.empty(0, dtype=torch.long)
    a = capacity_route(logits, 2, 0.8, "expanded_drop", local_experts=empty)
    b = capacity_route(logits, 2, 0.8, "token_drop")
    assert torch.equal(a.expert_index, b.expert_index)
    assert torch.equal(a.weights, b.weights)


def test_expanded_drop_keeps_more_assignments_than_token_drop():
    gen = torch.Generator().manual_seed(3)
    logits = torch.randn(200, 8, generator=gen) * 3
    logits[:, 0] += 3.0  # one hot expert
    td = capacity_route(logits, 2, 1.0, "token_drop")
    ed = capacity_route(logits, 2, 1.0, "expanded_drop")
    assert td.dropped_fraction > 0
    assert int((ed.expert_index != 8).sum()) > int((td.expert_index != 8).sum())
    assert ed.load_metrics()["max_mean_ratio_after"] <= ed.load_metrics()["max_mean_ratio"]


def _reference_norm_weights(probs, top, keep_grid, norm):
    """Dense (T, E) weights as the authors' forward: p at kept slots, divided by their sum with norm."""
    t_count, e_count = probs.shape
    w = np.zeros((t_count, e_count))
    for t in range(t_count):
        for e in range(e_count):
            if keep_grid[t, e]:
                w[t, e] = probs[t, e]
        if norm and w[t].sum() > 0:
            w[t] /= w[t].sum()
    return w


def _dense(r, e_count):
    out = torch.zeros(r.expert_index.shape[0], e_count + 1, dtype=torch.float64)
    out.scatter_add_(1, r.expert_index, r.weights.double())
    return out[:, :e_count].numpy()


@pytest.mark.parametrize("strategy", ["token_drop", "expanded_drop"])
@pytest.mark.parametrize("gamma", [0.5, 1.0, 2.0])
def test_norm_topk_prob_renormalises_over_kept_experts_as_the_authors(strategy, gamma):
    gen = torch.Generator().manual_seed(11)
    t_count, e_count, k = 60, 8, 2
    logits = torch.randn(t_count, e_count, generator=gen) * 2
    probs = torch.softmax(logits, -1)
    cap = expert_capacity(t_count, e_count, k, gamma)
    if strategy == "token_drop":
        top, keep = _reference_token_drop(probs.numpy(), k, cap)
        grid = np.zeros((t_count, e_count), dtype=bool)
        for t in range(t_count):
            for j, e in enumerate(top[t]):
                grid[t, e] = keep[t][j]
    else:
        grid = _reference_expanded_drop(probs.numpy(), k, cap)
    for norm in (False, True):
        r = capacity_route(logits, k, gamma, strategy, norm_topk_prob=norm)
        ref = _reference_norm_weights(probs.numpy(), None, grid, norm)
        assert np.allclose(_dense(r, e_count), ref, atol=1e-6), (strategy, gamma, norm)
        if norm:
            alive = grid.any(1)
            assert np.allclose(r.weights.sum(-1).numpy()[alive], 1.0, atol=1e-6)


def test_renormalize_and_norm_topk():
    gen = torch.Generator().manual_seed(4)
    logits = torch.randn(50, 8, generator=gen) * 2
    r = capacity_route(logits, 2, 0.5, "token_drop", renormalize=True)
    sums = r.weights.sum(-1)
    alive = (r.expert_index != 8).any(-1)
    assert torch.allclose(sums[alive], torch.ones_like(sums[alive]))
    assert torch.all(sums[~alive] == 0)
    n = capacity_route(logits, 2, None, norm_topk_prob=True)
    assert torch.allclose(n.weights.sum(-1), torch.ones(50))
    # Expanded Drop with norm: combine weights sum to 1 (not 1.3-2.8 as with the top-k denominator).
    e = capacity_route(logits * 0.2, 2, 2.0, "expanded_drop", norm_topk_prob=True)
    assert torch.allclose(e.weights.sum(-1), torch.ones(50), atol=1e-6)


def test_local_experts_for_expert_parallelism():
    loc = expert_parallel_local_experts(10, 8, 2)  # 2 experts per device, 4 devices
    assert loc.shape == (10, 2)
    assert loc[0].tolist() == [0, 1] and loc[-1].tolist() == [6, 7]
    assert expert_parallel_local_experts(10, 8, np.int64(4)).shape == (10, 4)
    with pytest.raises(ValueError, match="divisor"):
        expert_parallel_local_experts(10, 8, 3)


def test_bad_inputs():
    logits = torch.randn(5, 4)
    with pytest.raises(ValueError, match="top_k"):
        capacity_route(logits, 5)
    with pytest.raises(ValueError, match="strategy"):
        capacity_route(logits, 2, 1.0, "drop_everything")
    with pytest.raises(ValueError, match="drop_order"):
        token_drop_mask(torch.softmax(logits, -1), logits.topk(2).indices, 2, "middle")
    with pytest.raises(ValueError, match="2-D"):
        capacity_route(torch.randn(5), 1)
    with pytest.raises(ValueError, match="expert ids"):
        token_drop_mask(torch.softmax(logits, -1), torch.full((5, 1), 9), 2)
    with pytest.raises(ValueError, match="repeat"):
        expanded_drop_mask(torch.softmax(logits, -1), logits.topk(1).indices, 2, torch.tensor([1, 1]))
    for bad_k in (True, 2.0, "2", 0):
        with pytest.raises(ValueError, match="top_k"):
            capacity_route(logits, bad_k)
    for bad_gamma in (True, "1.5", [1.0]):
        with pytest.raises(ValueError, match="capacity_factor"):
            capacity_route(logits, 2, bad_gamma)
    nan = logits.clone()
    nan[2, 1] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        capacity_route(nan, 2, 1.0)


def test_integer_types_are_accepted():
    logits = torch.randn(6, 4, generator=torch.Generator().manual_seed(0))
    a = capacity_route(logits, np.int64(2), np.float32(1.0))
    b = capacity_route(logits, 2, 1.0)
    assert torch.equal(a.expert_index, b.expert_index) and a.capacity == b.capacity


def test_load_metrics_ratio():
    # Both ratios are over the mean *requested* load N_bar = 2: after the limit, max 2 -> 1.0.
    m = load_metrics(torch.tensor([4, 2, 1, 1]), torch.tensor([2, 2, 1, 1]))
    assert m["max_mean_ratio"] == pytest.approx(2.0)
    assert m["max_mean_ratio_after"] == pytest.approx(1.0)
    assert torch.allclose(
        max_mean_ratio(torch.tensor([[2, 2, 1, 1]]), torch.tensor([[4, 2, 1, 1]])),
        torch.tensor([1.0], dtype=torch.float64),
    )
    assert math.isnan(load_metrics(torch.zeros(4))["max_mean_ratio"])
    # a reference of another shape had its mean divided in silently; a negative count gave a ratio
    with pytest.raises(ValueError, match="reference"):
        max_mean_ratio(torch.tensor([1.0, 2, 3]), torch.tensor([1.0, 1]))
    with pytest.raises(ValueError, match="counts"):
        load_metrics(torch.tensor([-1, 3, 2]))
    with pytest.raises(ValueError, match="one count per expert"):  # an IndexError before
        max_mean_ratio(torch.tensor([]))
