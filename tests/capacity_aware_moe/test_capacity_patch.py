"""The transformers patch on tiny random MoE models of every supported family: exactness, undo, errors."""

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from iclr26.capacity_aware_moe import (  # noqa: E402
    apply_capacity_aware,
    capacity_route,
    expert_capacity,
    remove_capacity_aware,
    supported_block_classes,
)

_KW = dict(
    vocab_size=61,
    hidden_size=32,
    intermediate_size=24,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
    pad_token_id=None,
    bos_token_id=None,
    eos_token_id=None,
)


def _olmoe(impl=None, norm=False):
    cfg = transformers.OlmoeConfig(num_experts=8, num_experts_per_tok=2, norm_topk_prob=norm, **_KW)
    if impl is not None:
        cfg._experts_implementation = impl
    torch.manual_seed(0)
    return transformers.OlmoeForCausalLM(cfg).eval()


def _mixtral(impl=None):
    cfg = transformers.MixtralConfig(num_local_experts=8, num_experts_per_tok=2, **_KW)
    if impl is not None:
        cfg._experts_implementation = impl
    torch.manual_seed(0)
    return transformers.MixtralForCausalLM(cfg).eval()


def _random_router(model):
    # transformers initialises some routers to zeros (all experts tie): give them random weights.
    gen = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for _, block in _blocks(model):
            block.gate.weight.copy_(torch.randn(block.gate.weight.shape, generator=gen))
    return model


def _blocks(model):
    names = supported_block_classes()
    return [(n, m) for n, m in model.named_modules() if type(m).__name__ in names]


def _qwen2(impl=None, norm=True):
    cfg = transformers.Qwen2MoeConfig(
        num_experts=8,
        num_experts_per_tok=2,
        moe_intermediate_size=16,
        shared_expert_intermediate_size=24,
        norm_topk_prob=norm,
        decoder_sparse_step=1,
        mlp_only_layers=[],
        **_KW,
    )
    if impl is not None:
        cfg._experts_implementation = impl
    torch.manual_seed(0)
    return _random_router(transformers.Qwen2MoeForCausalLM(cfg).eval())


def _qwen3(impl=None, norm=True):
    cfg = transformers.Qwen3MoeConfig(
        num_experts=8,
        num_experts_per_tok=2,
        moe_intermediate_size=16,
        norm_topk_prob=norm,
        decoder_sparse_step=1,
        mlp_only_layers=[],
        head_dim=8,
        **_KW,
    )
    if impl is not None:
        cfg._experts_implementation = impl
    torch.manual_seed(0)
    return _random_router(transformers.Qwen3MoeForCausalLM(cfg).eval())


_MLA = dict(kv_lora_rank=16, q_lora_rank=None, qk_rope_head_dim=4, qk_nope_head_dim=4, v_head_dim=8)


def _deepseek_v2(impl=None, method="group_limited_greedy"):
    cfg = transformers.DeepseekV2Config(
        n_routed_experts=8,
        num_experts_per_tok=2,
        moe_intermediate_size=16,
        n_shared_experts=1,
        first_k_dense_replace=0,
        topk_method=method,
        n_group=4,
        topk_group=2,
        routed_scaling_factor=1.5,
        **_MLA,
        **_KW,
    )
    if impl is not None:
        cfg._experts_implementation = impl
    torch.manual_seed(0)
    return _random_router(transformers.DeepseekV2ForCausalLM(cfg).eval())


def _deepseek_v3(impl=None, norm=True):
    cfg = transformers.DeepseekV3Config(
        n_routed_experts=8,
        num_experts_per_tok=2,
        moe_intermediate_size=16,
        n_shared_experts=1,
        first_k_dense_replace=0,
        n_group=4,
        topk_group=2,
        norm_topk_prob=norm,
        routed_scaling_factor=2.5,
        **_MLA,
        **_KW,
    )
    if impl is not None:
        cfg._experts_implementation = impl
    torch.manual_seed(0)
    return _random_router(transformers.DeepseekV3ForCausalLM(cfg).eval())


MODELS = {
    "olmoe": _olmoe,
    "olmoe-norm": lambda impl=None: _olmoe(impl, norm=True),
    "mixtral": _mixtral,
    "qwen2-moe": _qwen2,
    "qwen3-moe": _qwen3,
    "qwen3-moe-no-norm": lambda impl=None: _qwen3(impl, norm=False),
    "deepseek-v2": _deepseek_v2,
    "deepseek-v2-greedy": lambda impl=None: _deepseek_v2(impl, "greedy"),
    "deepseek-v3": _deepseek_v3,
}
_EMPTY = torch.empty(0, dtype=torch.long)


def _ids(seed=1, batch=3, seq=13):
    return torch.randint(0, 61, (batch, seq), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("impl", ["eager", "grouped_mm"])
def test_large_gamma_equals_unpatched_exactly(name, impl):
    model = MODELS[name](impl)
    x = _ids()
    with torch.no_grad():
        ref = model(input_ids=x).logits
        configs = [("token_drop", order, None) for order in ("score", "random", "first", "last")]
        configs.append(("expanded_drop", "score", _EMPTY))
        for strategy, order, local in configs:
            with apply_capacity_aware(
                model, strategy, capacity_factor=1e6, drop_order=order, local_experts=local, seed=0
            ) as patch:
                out = model(input_ids=x).logits
                assert torch.equal(out, ref), (strategy, order)
                assert all(m["dropped_fraction"] == 0 for m in patch.load_metrics())
        assert torch.equal(model(input_ids=x).logits, ref)


@pytest.mark.parametrize("name", list(MODELS))
def test_small_gamma_changes_outputs_and_undo_restores(name):
    model = MODELS[name]()
    block = _blocks(model)[0][1]
    n_params = len(dict(model.named_parameters()))
    x = _ids(batch=4, seq=16)
    with torch.no_grad():
        ref = model(input_ids=x).logits
        patch = apply_capacity_aware(model, "token_drop", capacity_factor=0.5)
        assert len(dict(model.named_parameters())) == n_params  # nothing registered as a submodule
        out = model(input_ids=x).logits
        assert not torch.allclose(out, ref)
        metrics = patch.load_metrics()
        assert len(metrics) == 2
        assert all(m["dropped_fraction"] > 0 for m in metrics)
        patch.undo()
        assert "forward" not in block.gate.__dict__ and "forward" not in block.__dict__
        assert not block._forward_hooks and not block._forward_pre_hooks
        assert torch.equal(model(input_ids=x).logits, ref)
        with pytest.raises(RuntimeError, match="undone"):
            patch.configure(capacity_factor=1.0)


@pytest.mark.parametrize("strategy", ["token_drop", "expanded_drop"])
def test_processed_tokens_never_exceed_capacity_in_model(strategy):
    model = _olmoe()
    x = _ids(batch=5, seq=20)
    cap = expert_capacity(100, 8, 2, 0.7)
    with torch.no_grad(), apply_capacity_aware(model, strategy, capacity_factor=0.7) as patch:
        model(input_ids=x)
        loads = patch.loads()
    assert loads["processed"].shape == (2, 1, 8)
    assert int(loads["processed"].max()) <= cap
    assert int(loads["requested"].sum()) == 2 * 100 * 2


def test_expanded_drop_all_local_large_gamma_is_dense_mixture():
    """With every expert local and C >= T, each token goes to every expert with weight p_e."""
    model = _olmoe("eager")
    block = model.model.layers[0].mlp
    h = torch.randn(2, 7, 32, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        logits = torch.nn.functional.linear(h.reshape(-1, 32), block.gate.weight)
        probs = torch.softmax(logits.float(), -1)
        flat = h.reshape(-1, 32)
        dense = torch.zeros_like(flat)
        for e in range(8):
            gate, up = torch.nn.functional.linear(flat, block.experts.gate_up_proj[e]).chunk(2, -1)
            y = torch.nn.functional.linear(block.experts.act_fn(gate) * up, block.experts.down_proj[e])
            dense += y * probs[:, e : e + 1]
        with apply_capacity_aware(model, "expanded_drop", capacity_factor=1e6):
            out = block(h)
    assert torch.allclose(out.reshape(-1, 32), dense, atol=1e-6)


def test_decode_steps_are_not_capped():
    model = _olmoe()
    x = _ids(batch=6, seq=1)
    with torch.no_grad():
        ref = model(input_ids=x).logits
        with apply_capacity_aware(model, "token_drop", capacity_factor=0.01) as patch:
            assert torch.equal(model(input_ids=x).logits, ref)
            assert patch.load_metrics()[0]["dropped_fraction"] == 0


def test_generate_runs_with_patch():
    model = _olmoe()
    x = _ids(batch=1, seq=6)
    with torch.no_grad(), apply_capacity_aware(model, "expanded_drop", capacity_factor=1.0):
        out = model.generate(input_ids=x, max_new_tokens=3, do_sample=False)
    assert out.shape == (1, 9)


def test_configure_sweeps_and_reset():
    model = _olmoe()
    x = _ids(batch=4, seq=16)
    with torch.no_grad(), apply_capacity_aware(model, "none", capacity_factor=None) as patch:
        model(input_ids=x)
        assert all(m["dropped_fraction"] == 0 for m in patch.load_metrics())
        patch.reset_loads()
        patch.configure(strategy="token_drop", capacity_factor=0.25)
        model(input_ids=x)
        assert all(m["dropped_fraction"] > 0 for m in patch.load_metrics())
        assert "token_drop" in repr(patch)


def test_double_patch_and_remove():
    model = _olmoe()
    apply_capacity_aware(model, "token_drop", 1.0)
    with pytest.raises(RuntimeError, match="already"):
        apply_capacity_aware(model, "token_drop", 1.0)
    assert remove_capacity_aware(model) == 2
    apply_capacity_aware(model, "token_drop", 1.0).undo()


def test_unsupported_models_are_named():
    assert "OlmoeSparseMoeBlock" in supported_block_classes()
    with pytest.raises(TypeError, match="no supported MoE block"):
        apply_capacity_aware(torch.nn.Sequential(torch.nn.Linear(2, 2)), "token_drop", 1.0)

    class FakeSparseMoeBlock(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.experts = torch.nn.ModuleList([torch.nn.Linear(2, 2)])

    with pytest.raises(TypeError, match="FakeSparseMoeBlock"):
        apply_capacity_aware(torch.nn.Sequential(FakeSparseMoeBlock()), "token_drop", 1.0)

    class OlmoeSparseMoeBlock(torch.nn.Module):  # a transformers 4.x-style block
        def __init__(self):
            super().__init__()
            self.gate = torch.nn.Linear(4, 2, bias=False)
            self.experts = torch.nn.ModuleList([torch.nn.Linear(4, 4), torch.nn.Linear(4, 4)])

    with pytest.raises(TypeError, match="4.x"):
        apply_capacity_aware(torch.nn.Sequential(OlmoeSparseMoeBlock()), "token_drop", 1.0)


def test_bad_arguments():
    model = _olmoe()
    with pytest.raises(ValueError, match="strategy"):
        apply_capacity_aware(model, "drop_all", 1.0)
    with pytest.raises(ValueError, match="capacity_factor"):
        apply_capacity_aware(model, "token_drop", -1.0)
    with pytest.raises(ValueError, match="drop_order"):
        apply_capacity_aware(model, "token_drop", 1.0, drop_order="middle")
    with pytest.raises(ValueError, match="local_experts"):
        apply_capacity_aware(model, "expanded_drop", 1.0, local_experts=torch.tensor([9]))


def test_expert_parallel_devices_for_expanded_drop():
    model = _olmoe()
    x = _ids(batch=4, seq=16)
    cap = expert_capacity(64, 8, 2, 1.0)
    with torch.no_grad():
        with apply_capacity_aware(model, "expanded_drop", 1.0, experts_per_device=2) as patch:
            model(input_ids=x)
            loads = patch.loads()["processed"]
        with apply_capacity_aware(model, "expanded_drop", 1.0) as patch:
            model(input_ids=x)
            all_local = patch.loads()["processed"]
    assert int(loads.max()) <= cap
    # Fewer local candidates (2 per token instead of 8) means no more work than all-local.
    assert int(loads.sum()) <= int(all_local.sum())
    with pytest.raises(ValueError, match="experts_per_device"):
        apply_capacity_aware(model, "expanded_drop", 1.0, experts_per_device=3)
    with pytest.raises(ValueError, match="not both"):
        apply_capacity_aware(
            model, "expanded_drop", 1.0, experts_per_device=2, local_experts=torch.tensor([0])
        )


@pytest.mark.parametrize("name", ["olmoe", "olmoe-norm", "mixtral", "qwen2-moe", "qwen3-moe-no-norm"])
@pytest.mark.parametrize("strategy", ["token_drop", "expanded_drop"])
def test_router_weights_follow_the_authors_forward(name, strategy):
    """Patched router == capacity_route with the family's normalisation (the authors' OLMoE/Qwen2 rule:
    kept weights divided by their sum when norm_topk_prob), on the tokens whose routing changed."""
    model = MODELS[name]()
    gate = _blocks(model)[0][1].gate
    h = torch.randn(40, 32, generator=torch.Generator().manual_seed(5))
    norm = name in ("olmoe-norm", "mixtral", "qwen2-moe")
    with torch.no_grad(), apply_capacity_aware(model, strategy, capacity_factor=1.0):
        logits, w, idx = gate(h)
    r = capacity_route(logits, 2, 1.0, strategy, norm_topk_prob=norm)
    assert torch.equal(idx, r.expert_index)
    assert torch.allclose(w.float(), r.weights, atol=1e-6)
    if norm:
        alive = (idx != 8).any(1)
        assert torch.allclose(w.sum(1)[alive], torch.ones(int(alive.sum())), atol=1e-5)


@pytest.mark.parametrize("name", ["qwen2-moe", "deepseek-v2", "deepseek-v3"])
def test_fused_kernels_agree_with_eager_when_slots_are_dropped(name):
    x = _ids(batch=4, seq=16)
    outs = []
    for impl in ("eager", "grouped_mm"):
        model = MODELS[name](impl)
        with torch.no_grad(), apply_capacity_aware(model, "token_drop", capacity_factor=0.5) as patch:
            outs.append(model(input_ids=x).logits)
            assert patch.load_metrics()[0]["dropped_fraction"] > 0
        assert not any(getattr(b.experts, "_is_expert_parallel", False) for _, b in _blocks(model))
    assert torch.allclose(outs[0], outs[1], atol=1e-5)


def test_deepseek_combine_weights_keep_the_scaling_factor():
    model = _deepseek_v3()
    gate = _blocks(model)[0][1].gate
    h = torch.randn(40, 32, generator=torch.Generator().manual_seed(5))
    with torch.no_grad(), apply_capacity_aware(model, "token_drop", capacity_factor=0.5):
        _, w, idx = gate(h)
    alive = (idx != 8).any(1)
    # V3 normalises over the kept experts, then multiplies by routed_scaling_factor = 2.5.
    assert torch.allclose(w.sum(1)[alive], torch.full((int(alive.sum()),), 2.5), atol=1e-5)


def test_nan_router_logits_raise():
    model = _olmoe()
    gate = _blocks(model)[0][1].gate
    h = torch.randn(10, 32)
    h[3, 0] = float("nan")
    with apply_capacity_aware(model, "token_drop", 1.0), pytest.raises(ValueError, match="NaN"):
        gate(h)


def test_capacity_factor_types():
    model = _olmoe()
    for bad in (True, "1.5"):
        with pytest.raises(ValueError, match="capacity_factor"):
            apply_capacity_aware(model, "token_drop", bad)
    with apply_capacity_aware(model, "token_drop", np.float64(1.5)) as patch:
        with pytest.raises(ValueError, match="capacity_factor"):
            patch.configure(capacity_factor="1.5")
        patch.configure(capacity_factor=None)
        assert "capacity_factor=None" in repr(patch)


def test_deepseek_v2_group_limited_follows_the_authors_gate():
    """The authors' DeepSeek gate: priority = softmax scores zeroed outside the token's top groups
    (their tmp_scores); kept weights = score * routed_scaling_factor (no normalisation)."""
    model = _deepseek_v2()
    gate = _blocks(model)[0][1].gate
    h = torch.randn(48, 32, generator=torch.Generator().manual_seed(8))
    with torch.no_grad():
        scores = torch.softmax(torch.nn.functional.linear(h, gate.weight.float()), -1)
        groups = scores.view(48, 4, 2).max(-1).values
        keep_groups = torch.zeros_like(groups).scatter_(1, groups.topk(2, dim=-1).indices, 1).bool()
        tmp = scores.masked_fill(~keep_groups.repeat_interleave(2, dim=1), 0.0)
        top = tmp.topk(2, dim=-1).indices
        cap = expert_capacity(48, 8, 2, 0.5)
        ref = torch.zeros(48, 8)
        for e in range(8):
            users = [t for t in range(48) if e in top[t].tolist()]
            users.sort(key=lambda t: -float(tmp[t, e]))
            for t in users[:cap]:
                ref[t, e] = tmp[t, e] * 1.5
        with apply_capacity_aware(model, "token_drop", capacity_factor=0.5):
            _, w, idx = gate(h)
    dense = torch.zeros(48, 9).scatter_add_(1, idx, w.float())[:, :8]
    assert torch.allclose(dense, ref, atol=1e-6)
