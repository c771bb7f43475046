"""PMT's attention path: exact at M = 0, equal to a per-head reference for random M, cache-consistent."""

import pytest
import torch
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

from iclr26.prefixmemory_tuning import PrefixMemoryConfig, get_pmt_model

from .conftest import PROMPTS


def _tiny_config_model(kind: str):
    from transformers import (
        LlamaConfig,
        LlamaForCausalLM,
        MistralConfig,
        MistralForCausalLM,
        Qwen2Config,
        Qwen2ForCausalLM,
    )

    common = dict(
        vocab_size=97,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
    )
    cls = {
        "llama": (LlamaConfig, LlamaForCausalLM),
        "qwen2": (Qwen2Config, Qwen2ForCausalLM),
        "mistral": (MistralConfig, MistralForCausalLM),
    }[kind]
    torch.manual_seed(0)
    return cls[1](cls[0](**common)).eval()


def _logits(model, enc):
    with torch.no_grad():
        return model(**enc).logits


@pytest.mark.parametrize("kernel", ["sdpa", "eager"])
@pytest.mark.parametrize("query", ["post_rope", "pre_rope"])
def test_zero_memory_is_bit_exact_on_tiny_llama(tiny, kernel, query):
    tiny.model.set_attn_implementation(kernel)
    enc = tiny.tokenizer(PROMPTS, return_tensors="pt", padding=True)
    base = _logits(tiny.model, enc)
    wrapped = get_pmt_model(tiny.model, PrefixMemoryConfig(query=query))
    assert torch.equal(_logits(wrapped, enc), base)


@pytest.mark.parametrize("kind", ["llama", "qwen2", "mistral"])
def test_zero_memory_is_bit_exact_on_gqa_configs(kind):
    model = _tiny_config_model(kind)
    ids = torch.randint(0, 97, (2, 9), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    mask[1, :3] = 0
    base = _logits(model, {"input_ids": ids, "attention_mask": mask})
    wrapped = get_pmt_model(model, PrefixMemoryConfig(feature_map="mlp"))
    assert torch.equal(_logits(wrapped, {"input_ids": ids, "attention_mask": mask}), base)
    assert wrapped.trainable_parameters() == sum(p.numel() for p in wrapped.memory.parameters())


def _reference_attention(attn, hidden, cos, sin, pad_mask, memory, layer, query):
    """Explicit per-head loop: softmax attention + φ(q_h) M_h, then o_proj. hidden (b, s, D)."""
    b, s, _ = hidden.shape
    d = attn.head_dim
    q_pre = attn.q_proj(hidden).view(b, s, -1, d).transpose(1, 2)
    k = attn.k_proj(hidden).view(b, s, -1, d).transpose(1, 2)
    v = attn.v_proj(hidden).view(b, s, -1, d).transpose(1, 2)
    q, k = apply_rotary_pos_emb(q_pre, k, cos, sin)
    allowed = torch.tril(torch.ones(s, s, dtype=torch.bool))[None] & pad_mask[:, None, :].bool()
    heads = []
    for h in range(q.shape[1]):
        kv = h // (q.shape[1] // k.shape[1])
        scores = q[:, h] @ k[:, kv].transpose(-1, -2) * d**-0.5
        probs = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        feat = (q if query == "post_rope" else q_pre)[:, h]
        heads.append(probs @ v[:, kv] + torch.nn.functional.elu(feat) @ memory[layer, h])
    return attn.o_proj(torch.cat(heads, dim=-1))


@pytest.mark.parametrize("query", ["post_rope", "pre_rope"])
def test_random_memory_equals_per_head_reference(tiny, query):
    enc = tiny.tokenizer(PROMPTS, return_tensors="pt", padding=True)
    wrapped = get_pmt_model(tiny.model, PrefixMemoryConfig(query=query, init="normal"), seed=3)
    with torch.no_grad():
        wrapped.memory.M.mul_(20.0)
    seen = []

    def hook(module, args, kwargs, output):
        seen.append((module, kwargs["hidden_states"], kwargs["position_embeddings"], output[0]))

    hooks = [m.self_attn.register_forward_hook(hook, with_kwargs=True) for m in tiny.model.model.layers]
    _logits(wrapped, enc)
    for h in hooks:
        h.remove()
    real = enc["attention_mask"].bool()
    with torch.no_grad():
        for layer, (attn, hidden, (cos, sin), out) in enumerate(seen):
            ref = _reference_attention(
                attn, hidden, cos, sin, enc["attention_mask"], wrapped.memory.M, layer, query
            )
            assert torch.allclose(out[real], ref[real], atol=1e-5)
            no_memory = _reference_attention(
                attn,
                hidden,
                cos,
                sin,
                enc["attention_mask"],
                torch.zeros_like(wrapped.memory.M),
                layer,
                query,
            )
            assert (out[real] - no_memory[real]).abs().max() > 1e-2  # the memory term is not negligible
    assert len(seen) == tiny.model.config.num_hidden_layers


@pytest.mark.parametrize("query", ["post_rope", "pre_rope"])
def test_kv_cache_matches_full_recompute(tiny, query):
    enc = tiny.tokenizer(PROMPTS, return_tensors="pt", padding=True)
    wrapped = get_pmt_model(tiny.model, PrefixMemoryConfig(query=query, init="normal"), seed=1)
    with torch.no_grad():
        wrapped.memory.M.mul_(20.0)
    cached = wrapped.generate(**enc, max_new_tokens=6, do_sample=False, use_cache=True)
    plain = wrapped.generate(**enc, max_new_tokens=6, do_sample=False, use_cache=False)
    assert torch.equal(cached, plain)
    full_mask = torch.cat([enc["attention_mask"], torch.ones_like(cached[:, enc["input_ids"].shape[1] :])], 1)
    full = _logits(wrapped, {"input_ids": cached, "attention_mask": full_mask})
    with torch.no_grad():
        out = wrapped(**enc, use_cache=True)
        step = wrapped(
            input_ids=cached[:, -6:-5],
            attention_mask=full_mask[:, : enc["input_ids"].shape[1] + 1],
            past_key_values=out.past_key_values,
        ).logits
    assert torch.allclose(step[:, -1], full[:, enc["input_ids"].shape[1]], atol=1e-5)


def test_memory_changes_outputs_and_is_the_only_trainable_parameter(tiny):
    enc = tiny.tokenizer(PROMPTS, return_tensors="pt", padding=True)
    base = _logits(tiny.model, enc)
    wrapped = get_pmt_model(tiny.model, PrefixMemoryConfig(init="normal"))
    assert not torch.allclose(_logits(wrapped, enc), base)
    trainable = [n for n, p in wrapped.named_parameters() if p.requires_grad]
    assert trainable == ["memory.M"]
    assert wrapped.memory.M.shape == (2, 4, 16, 16)


@pytest.mark.parametrize("fm", ["elu", "elu1", "gelu", "mlp"])
def test_feature_maps(fm):
    from iclr26.prefixmemory_tuning import PrefixMemory

    mem = PrefixMemory(PrefixMemoryConfig(feature_map=fm, mlp_hidden=8 if fm == "mlp" else None), 2, 3, 4)
    q = torch.randn(1, 3, 5, 4)
    feats = mem.features(q, 1)
    assert feats.shape == (1, 3, 5, 8 if fm == "mlp" else 4)
    expected = {
        "elu": torch.nn.functional.elu(q),
        "elu1": torch.nn.functional.elu(q) + 1,
        "gelu": torch.nn.functional.gelu(q),
    }
    if fm in expected:
        assert torch.equal(feats, expected[fm])
    assert mem.read(q, 1).shape == (1, 5, 3, 4)


def test_bad_config_and_models(tiny):
    with pytest.raises(ValueError, match="feature_map"):
        PrefixMemoryConfig(feature_map="relu")
    with pytest.raises(ValueError, match="query"):
        PrefixMemoryConfig(query="mid")
    with pytest.raises(ValueError, match="init"):
        PrefixMemoryConfig(init="ones")
    with pytest.raises(ValueError, match="mlp_hidden"):
        PrefixMemoryConfig(mlp_hidden=4)
    with pytest.raises(ValueError, match="mlp_hidden"):
        PrefixMemoryConfig(feature_map="mlp", mlp_hidden=0)

    class NoBackend(type(tiny.model)):
        _supports_attention_backend = False

    odd = NoBackend(tiny.model.config)
    with pytest.raises(ValueError, match="NoBackend"):
        get_pmt_model(odd)
    with pytest.raises(ValueError, match="model"):
        get_pmt_model(torch.nn.Linear(2, 2))
    wrapped = get_pmt_model(tiny.model)
    with pytest.raises(ValueError, match="already"):
        get_pmt_model(tiny.model)
    with pytest.raises(ValueError, match="already"):
        get_pmt_model(wrapped)
    with pytest.raises(ValueError, match="config"):
        get_pmt_model(type(tiny.model)(tiny.model.config), config={"feature_map": "elu"})
