"""Straggler simulator, CPU timing helpers and the small OLMoE LM utilities."""

import numpy as np
import pytest
import torch

from iclr26.capacity_aware_moe import (
    CharVocab,
    TinyMoEConfig,
    apply_capacity_aware,
    build_olmoe,
    evaluate_lm,
    fit_expert_time_model,
    make_corpus,
    simulated_speedup,
    straggler_layer_time,
    time_module,
    train_moe_lm,
)


def test_straggler_time_is_max_over_experts():
    loads = np.array([[10, 2, 3, 1], [4, 4, 4, 4]])
    assert straggler_layer_time(loads).tolist() == [10, 4]
    assert straggler_layer_time(loads, experts_per_device=2).tolist() == [12, 8]
    assert straggler_layer_time(loads, experts_per_device=4).tolist() == [16, 16]
    assert straggler_layer_time(loads, time_per_token=2.0, overhead=1.0).tolist() == [21, 9]
    assert simulated_speedup(loads, np.array([[5, 2, 3, 1], [4, 4, 4, 4]])) == pytest.approx(14 / 9)
    with pytest.raises(ValueError, match="non-negative"):
        straggler_layer_time([[-1, 2]])
    with pytest.raises(ValueError, match="experts_per_device"):
        straggler_layer_time(loads, experts_per_device=3)
    with pytest.raises(ValueError, match="shape"):
        simulated_speedup(loads, loads[:1])


def test_capacity_bounds_simulated_speedup():
    gen = torch.Generator().manual_seed(0)
    from iclr26.capacity_aware_moe import capacity_route

    logits = torch.randn(512, 8, generator=gen) * 2
    logits[:, 0] += 2.0
    base = capacity_route(logits, 2, None)
    td = capacity_route(logits, 2, 1.0, "token_drop")
    sp = simulated_speedup(base.tokens_per_expert.numpy(), td.tokens_per_expert.numpy())
    assert sp == pytest.approx(int(base.tokens_per_expert.max()) / td.capacity)
    assert sp > 1


def _tiny_cfg(**kw):
    return TinyMoEConfig(
        hidden_size=32,
        intermediate_size=16,
        num_layers=1,
        num_heads=2,
        num_experts=4,
        top_k=2,
        seq_len=16,
        batch_size=4,
        steps=3,
        **kw,
    )


def test_expert_time_model_and_module_timing():
    model = build_olmoe(20, _tiny_cfg())
    block = model.model.layers[0].mlp
    a, b = fit_expert_time_model(block, token_counts=(4, 4096), repeats=3)
    # A thousand-fold more tokens costs measurably more: the per-token slope is positive.
    assert b > 0
    assert time_module(block, torch.randn(1, 8, 32), repeats=2) > 0
    with pytest.raises(ValueError, match="two"):
        fit_expert_time_model(block, token_counts=(4,))


def test_corpus_vocab_and_training_cache(tmp_path):
    text = make_corpus(3000, seed=1)
    assert len(text) == 3000 and text == make_corpus(3000, seed=1) and text != make_corpus(3000, seed=2)
    vocab = CharVocab(text)
    ids = vocab.encode(text)
    assert vocab.decode(ids[:50]) == text[:50]
    with pytest.raises(ValueError, match="vocabulary"):
        vocab.encode("\u2603")
    model, info = train_moe_lm(ids, len(vocab), _tiny_cfg(), seed=0, cache_dir=tmp_path)
    assert not info["cached"] and info["parameters"] > 0
    again, info2 = train_moe_lm(ids, len(vocab), _tiny_cfg(), seed=0, cache_dir=tmp_path)
    assert info2["cached"]
    for p, q in zip(model.parameters(), again.parameters()):
        assert torch.equal(p, q)
    r = evaluate_lm(model, ids[:200], seq_len=16, batch_size=4)
    assert 0 <= r["accuracy"] <= 1 and r["perplexity"] > 1
    with apply_capacity_aware(model, "token_drop", 1e6):
        assert evaluate_lm(model, ids[:200], seq_len=16, batch_size=4) == r
    with pytest.raises(ValueError, match="seq_len"):
        evaluate_lm(model, ids[:10], seq_len=16)
