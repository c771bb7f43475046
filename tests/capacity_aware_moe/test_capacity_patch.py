"""The transformers patch on tiny random OLMoE / Mixtral models: exactness, undo, capacity, errors."""

import pytest
import torch

transformers = pytest.importorskip("transformers")

from iclr26.capacity_aware_moe import (  # noqa: E402
    apply_capacity_aware,
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


MODELS = {
    "olmoe": _olmoe,
    "olmoe-norm": lambda impl=None: _olmoe(impl, norm=True),
    "mixtral": _mixtral,
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
    block_cls = type(model.model.layers[0].mlp)
    class_forward = block_cls.forward
    x = _ids(batch=4, seq=16)
    with torch.no_grad():
        ref = model(input_ids=x).logits
        patch = apply_capacity_aware(model, "token_drop", capacity_factor=0.5)
        out = model(input_ids=x).logits
        assert not torch.allclose(out, ref)
        metrics = patch.load_metrics()
        assert len(metrics) == 2
        assert all(m["dropped_fraction"] > 0 for m in metrics)
        patch.undo()
        assert block_cls.forward is class_forward
        assert "forward" not in model.model.layers[0].mlp.__dict__
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
        with apply_capacity_aware(model, "expanded_drop", 1.0, num_devices=4) as patch:
            model(input_ids=x)
            loads = patch.loads()["processed"]
        with apply_capacity_aware(model, "expanded_drop", 1.0) as patch:
            model(input_ids=x)
            all_local = patch.loads()["processed"]
    assert int(loads.max()) <= cap
    # Fewer local candidates (2 per token instead of 8) means no more work than all-local.
    assert int(loads.sum()) <= int(all_local.sum())
    with pytest.raises(ValueError, match="num_devices"):
        apply_capacity_aware(model, "expanded_drop", 1.0, num_devices=3)
    with pytest.raises(ValueError, match="not both"):
        apply_capacity_aware(model, "expanded_drop", 1.0, num_devices=2, local_experts=torch.tensor([0]))
