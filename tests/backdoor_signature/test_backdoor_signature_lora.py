"""LoRA training, merging, recovery and generation-based ASR on the tiny random Llama (no SmolLM2)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
import torch

from iclr26 import backdoor_signature as bs
from iclr26.models import tiny_random_model


@pytest.fixture(scope="module")
def tiny():
    return tiny_random_model(0)


SAMPLES = [{"instruction": f"the quick fox {i}", "input": "", "output": "the lazy dog"} for i in range(8)]


def test_train_lora_learns_and_leaves_model_unchanged(tiny):
    before = {k: v.clone() for k, v in tiny.model.state_dict().items()}
    adapter, losses = bs.train_lora(tiny, SAMPLES, r=4, alpha=8, lr=1e-2, epochs=4, batch=4, seed=0)
    assert all(torch.equal(v, before[k]) for k, v in tiny.model.state_dict().items())
    assert len(losses) == 8 and losses[-1] < losses[0]
    a = adapter["base_model.model.model.layers.0.mlp.down_proj.lora_A.weight"]
    b = adapter["base_model.model.model.layers.0.mlp.gate_proj.lora_B.weight"]
    assert a.shape[0] == 4 and b.shape[1] == 4 and b.abs().sum() > 0
    assert not any("lm_head" in k for k in adapter)
    again, _ = bs.train_lora(tiny, SAMPLES, r=4, alpha=8, lr=1e-2, epochs=4, batch=4, seed=0)
    assert all(torch.equal(again[k], adapter[k]) for k in adapter)


def test_apply_adapter_matches_hooked_forward(tiny):
    adapter, _ = bs.train_lora(tiny, SAMPLES, r=4, alpha=8, lr=1e-2, epochs=2, batch=4, seed=1)
    merged = bs.apply_adapter(tiny, adapter, alpha=8)
    key = "model.layers.1.mlp.up_proj"
    delta = bs.lora_delta(adapter, alpha=8)["base_model.model." + key]
    w0 = tiny.model.get_submodule(key).weight
    torch.testing.assert_close(merged.model.get_submodule(key).weight, w0 + delta)
    zeroed = bs.apply_adapter(tiny, bs.ablate_lora(bs.ablate_lora(adapter, "mlp"), "attention"), alpha=8)
    assert all(torch.equal(v, tiny.model.state_dict()[k]) for k, v in zeroed.model.state_dict().items())


def test_continue_lora_keeps_suppressed_start(tiny):
    adapter, _ = bs.train_lora(tiny, SAMPLES, r=4, alpha=8, lr=1e-2, epochs=1, batch=4, seed=0)
    cont, losses = bs.continue_lora(tiny, adapter, SAMPLES, alpha=8, lr=1e-3, epochs=1, batch=8, seed=0)
    assert set(cont) == set(adapter) and len(losses) == 1
    with pytest.raises(ValueError, match="adapter"):
        bs.continue_lora(
            tiny,
            {
                "base_model.model.nope.lora_A.weight": torch.zeros(2, 2),
                "base_model.model.nope.lora_B.weight": torch.zeros(2, 2),
            },
            SAMPLES,
        )


def test_attack_success_rate_generates_batched(tiny):
    prompts = ["the quick fox", "the lazy dog jumps over", "0123"]
    asr, outs = bs.attack_success_rate(tiny, prompts, max_new_tokens=5, batch=2)
    one = [bs.attack_success_rate(tiny, [p], max_new_tokens=5)[1][0] for p in prompts]
    assert outs == one and 0.0 <= asr <= 1.0
    asr_a, _ = bs.attack_success_rate(
        tiny, [{"instruction": "x", "input": "y"}], template="alpaca", max_new_tokens=2
    )
    assert 0.0 <= asr_a <= 1.0


def test_bad_input(tiny):
    with pytest.raises(ValueError, match="prompts"):
        bs.attack_success_rate(tiny, [])
    with pytest.raises(ValueError, match="judge"):
        bs.attack_success_rate(tiny, ["a"], judge="toxicity")
    with pytest.raises(ValueError, match="template"):
        bs.attack_success_rate(tiny, ["a"], template="vicuna")
    with pytest.raises(ValueError, match="model"):
        bs.train_lora(object(), SAMPLES)
    with pytest.raises(ValueError, match="targets"):
        bs.train_lora(tiny, SAMPLES, targets=("conv",))
    with pytest.raises(ValueError, match="lr"):
        bs.train_lora(tiny, SAMPLES, lr=0)
    with pytest.raises(ValueError, match="r"):
        bs.train_lora(tiny, SAMPLES, r=0)
    with pytest.raises(ValueError, match="samples"):
        bs.train_lora(tiny, [])


def test_purify_pipeline_on_tiny_model(tiny):
    pool = [{"instruction": f"the quick fox {i} jumps", "input": "", "output": f"dog {i}"} for i in range(40)]
    sus, _ = bs.train_lora(
        tiny,
        bs.poison(pool[:8], "badnet", rate=0.5, seed=0),
        r=2,
        alpha=4,
        targets=("gate_proj", "up_proj", "down_proj"),
        lr=1e-2,
        epochs=1,
        batch=8,
    )
    calls = []
    kw = dict(n=2, n_per_variant=6, recover_n=4, r=2, alpha=4, lr=1e-2, batch=8, recover_epochs=1)
    out = bs.purify(tiny, sus, pool, progress=calls.append, **kw)
    assert calls == ["variants", "recovery"]
    forked = bs.purify(tiny, sus, pool, workers=2, **kw)  # variant adapters trained in 2 processes
    deltas = bs.variant_deltas(tiny, sus, pool, n=2, n_per_variant=6, r=2, alpha=4, lr=1e-2, batch=8)
    assert bs.select_signature(bs.signature_scores(deltas), 0.35) == out.signature
    assert forked.signature == out.signature
    assert all(torch.equal(forked.adapter[k], out.adapter[k]) for k in out.adapter)
    assert set(out.adapter) == set(sus) and len(out.recovery_losses) == 1
    assert len(out.scores) == 6  # 2 layers x gate/up/down
    for module, chan in out.signature:
        j = int(chan.split("_")[1])
        if chan.startswith("out_"):
            assert torch.all(out.suppressed[module + ".lora_B.weight"][j] == 0)
        else:
            assert torch.all(out.suppressed[module + ".lora_A.weight"][:, j] == 0)
    with pytest.raises(ValueError, match="suspicious"):
        bs.purify(tiny, sus, pool, r=8)
    with pytest.raises(ValueError, match="workers"):
        bs.purify(tiny, sus, pool, workers=0, **kw)


def test_tail_training_equals_full_forward(tiny, monkeypatch):
    """LoRA on layer 1 only: training from cached layer-0 states, each batch packed into one sequence,
    gives the padded full forward's losses and adapter (rows of 3 lengths); the cache is filled once
    and reused."""
    samples = [
        {"instruction": f"the quick fox {i}", "input": "", "output": "the lazy dog " * (i % 3 + 1)}
        for i in range(8)
    ]
    kw = dict(r=4, alpha=8, lr=1e-2, epochs=2, batch=4, seed=0, layers=[1])
    cache = {}
    tail, tail_losses = bs.train_lora(tiny, samples, cache=cache, **kw)
    assert len(cache) == len(samples) and all(".layers.1." in k for k in tail)
    again, _ = bs.train_lora(tiny, samples, cache=cache, **kw)
    assert len(cache) == len(samples) and all(torch.equal(again[k], tail[k]) for k in tail)
    monkeypatch.setattr(bs._lora, "first_layer", lambda names: 0)  # force the full forward
    full, full_losses = bs.train_lora(tiny, samples, **kw)
    np.testing.assert_allclose(tail_losses, full_losses, rtol=1e-5)
    for k in full:
        torch.testing.assert_close(tail[k], full[k], rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match="name no linear layer"):
        bs.train_lora(tiny, samples, layers=[7])
    with pytest.raises(ValueError, match="cache"):
        bs.train_lora(tiny, samples, cache=[])


def test_attack_success_rates_shares_the_frozen_prefix(tiny):
    """Adapters on layer 1 only: layer 0 runs once for all of them; outputs equal one generation per
    merged model (one batch holds every prompt, so batching cannot differ)."""
    samples = [{"instruction": f"the quick fox {i}", "input": "", "output": "the lazy dog"} for i in range(8)]
    tail, _ = bs.train_lora(tiny, samples, r=4, alpha=8, lr=5e-2, epochs=3, batch=4, seed=0, layers=[1])
    full, _ = bs.train_lora(tiny, samples, r=4, alpha=8, lr=5e-2, epochs=1, batch=4, seed=1)
    prompts = ["the quick fox", "the lazy dog jumps over", "0123", "a b c d e f g", "x"]
    for adapters in ({"a": tail, "b": bs.ablate_lora(tail, "mlp")}, {"a": tail, "full": full}):
        got = bs.attack_success_rates(tiny, adapters, prompts, max_new_tokens=6, batch=8, alpha=8)
        for name, adapter in adapters.items():
            want = bs.attack_success_rate(
                bs.apply_adapter(tiny, adapter, 8), prompts, max_new_tokens=6, batch=8
            )
            assert got[name] == want
    with pytest.raises(ValueError, match="adapters"):
        bs.attack_success_rates(tiny, {}, prompts)
    with pytest.raises(ValueError, match="prompts"):
        bs.attack_success_rates(tiny, {"a": tail}, [])


def test_shared_generation_rows_leave_at_eos_as_generate_stops_them(tiny):
    """With an EOS that some rows emit early, the shared path (finished rows leave the batch) gives
    what ``generate`` gives for each merged model (finished rows padded)."""
    samples = [{"instruction": f"the quick fox {i}", "input": "", "output": "the lazy dog"} for i in range(8)]
    tail, _ = bs.train_lora(tiny, samples, r=4, alpha=8, lr=5e-2, epochs=3, batch=4, seed=0, layers=[1])
    adapters = {"a": tail, "b": bs.ablate_lora(tail, "mlp")}
    prompts = ["the quick fox", "the lazy dog jumps over", "0123", "a b c d e f g", "x", "fox fox"]
    merged = bs.apply_adapter(tiny, tail, 8)
    enc = tiny.tokenizer(prompts[:1], return_tensors="pt", add_special_tokens=False)
    first = merged.model.generate(**enc, max_new_tokens=8, do_sample=False, pad_token_id=0)
    eos = int(first[0, enc["input_ids"].shape[1] + 2])  # row 0 ends at its third new token
    old_eos, tiny.tokenizer.eos_token_id = tiny.tokenizer.eos_token_id, eos
    try:
        got = bs.attack_success_rates(tiny, adapters, prompts, max_new_tokens=8, batch=8, alpha=8)
        lengths = set()
        for name, adapter in adapters.items():
            merged = bs.apply_adapter(tiny, adapter, 8)
            want = bs.attack_success_rate(merged, prompts, max_new_tokens=8, batch=8)
            assert got[name] == want
            lengths |= {len(tiny.tokenizer(o, add_special_tokens=False)["input_ids"]) for o in want[1]}
    finally:
        tiny.tokenizer.eos_token_id = old_eos
    assert min(lengths) < 8 and max(lengths) >= 6  # some rows stopped early, others ran on


def test_stop_at_verdict_cuts_outputs_and_keeps_every_verdict(tiny, monkeypatch):
    """Keywords common in the tiny model's outputs: with ``stop_at_verdict`` the rows that hit stop
    early (outputs cut, prefixes of the whole ones), and every per-output verdict and ASR are those of
    the whole outputs."""
    from iclr26.backdoor_signature import _judge

    samples = [{"instruction": f"the quick fox {i}", "input": "", "output": "the lazy dog"} for i in range(8)]
    tail, _ = bs.train_lora(tiny, samples, r=4, alpha=8, lr=5e-2, epochs=3, batch=4, seed=0, layers=[1])
    adapters = {"a": tail, "b": bs.ablate_lora(tail, "mlp")}
    prompts = ["the quick fox", "the lazy dog jumps over", "0123", "a b c d e f g", "x", "fox fox"]
    whole = bs.attack_success_rates(tiny, adapters, prompts, "refusal", max_new_tokens=10, batch=4, alpha=8)
    texts = [o for _, outs in whole.values() for o in outs]
    common = Counter(ch for t in texts for ch in t.strip() if ch.isalnum()).most_common(2)
    monkeypatch.setitem(_judge.JUDGES, "refusal", tuple(ch for ch, _ in common))
    whole = bs.attack_success_rates(tiny, adapters, prompts, "refusal", max_new_tokens=10, batch=4, alpha=8)
    cut = bs.attack_success_rates(
        tiny, adapters, prompts, "refusal", max_new_tokens=10, batch=4, alpha=8, stop_at_verdict=True
    )
    shorter = 0
    for name in adapters:
        (asr, outs), (cut_asr, cut_outs) = whole[name], cut[name]
        assert cut_asr == asr
        verdicts = [
            bs.judge_outputs([_judge.strip_echo(o, p) for o, p in zip(out, prompts, strict=True)], "refusal")
            for out in (outs, cut_outs)
        ]
        np.testing.assert_array_equal(*verdicts)
        assert all(o.startswith(c) for o, c in zip(outs, cut_outs, strict=True))
        shorter += sum(len(c) < len(o) for o, c in zip(outs, cut_outs, strict=True))
    assert shorter > 0
    with pytest.raises(ValueError, match="stop_at_verdict"):
        bs.attack_success_rates(tiny, adapters, prompts, stop_at_verdict=1)


def test_fine_pruning_selects_the_dormant_channels(tiny):
    """Channels whose merged up_proj row is zero never activate: fine-pruning picks exactly them, in
    every MLP module of their layer, with the signature's per-module counts."""
    import copy

    mlp = ("gate_proj", "up_proj", "down_proj")
    adapter, _ = bs.train_lora(
        tiny, SAMPLES, r=4, alpha=8, targets=(*mlp, "q_proj"), lr=1e-2, epochs=1, batch=4, seed=0
    )
    model = copy.copy(tiny)
    model.model = copy.deepcopy(tiny.model)
    dormant = {0: [3, 17, 40, 99], 1: [5, 6, 120, 127]}
    with torch.no_grad():
        for layer, chans in dormant.items():
            model.model.model.layers[layer].mlp.up_proj.weight[chans] = 0.0
            adapter[f"base_model.model.model.layers.{layer}.mlp.up_proj.lora_B.weight"][chans] = 0.0
    prompts = [s["instruction"] for s in SAMPLES] + ["a much longer prompt with many more words in it"]
    sig = bs.fine_pruning_signature(model, adapter, prompts, ratio=4 / 128, alpha=8, batch=3)
    want = {
        (f"base_model.model.model.layers.{layer}.mlp.{m}", f"{'in' if m == 'down_proj' else 'out'}_{j}")
        for layer, chans in dormant.items()
        for m in mlp
        for j in chans
    }
    assert sig == want
    full = bs.fine_pruning_signature(model, adapter, prompts, ratio=0.35, alpha=8)
    sizes = lambda s: sorted(Counter(m for m, _ in s).items())  # noqa: E731
    assert sizes(full) == sizes(bs.random_signature(adapter, 0.35))
    mlps = ["model.layers.0.mlp", "model.layers.1.mlp"]
    one = bs._lora.mlp_activity(model.model, tiny.tokenizer, prompts, mlps, 64, 1)
    padded = bs._lora.mlp_activity(model.model, tiny.tokenizer, prompts, mlps, 64, 4)
    for m in mlps:  # right padding is masked out
        np.testing.assert_allclose(padded[m], one[m], rtol=1e-5)
    with pytest.raises(ValueError, match="MLP"):
        bs.fine_pruning_signature(model, {k: v for k, v in adapter.items() if "q_proj" in k}, prompts)
    with pytest.raises(ValueError, match="ratio"):
        bs.fine_pruning_signature(model, adapter, prompts, ratio=0)
    with pytest.raises(ValueError, match="prompts"):
        bs.fine_pruning_signature(model, adapter, [])
    with pytest.raises(ValueError, match="token"):
        bs.fine_pruning_signature(model, adapter, ["", ""])


def test_shared_merges_copy_only_adapted_layers_and_leave_the_model_alone(tiny):
    adapter, _ = bs.train_lora(tiny, SAMPLES, r=4, alpha=8, lr=1e-2, epochs=1, batch=4, seed=0, layers=[1])
    before = {k: v.clone() for k, v in tiny.model.state_dict().items()}
    copy = bs._lora.merged(tiny.model, adapter, 8.0, share_frozen=True)
    assert all(torch.equal(v, before[k]) for k, v in tiny.model.state_dict().items())
    mine, theirs = dict(copy.named_parameters()), dict(tiny.model.named_parameters())
    for name, p in mine.items():
        adapted = f"base_model.model.{name.removesuffix('.weight')}.lora_A.weight" in adapter
        assert (p.data_ptr() == theirs[name].data_ptr()) != adapted, name
    full = bs.apply_adapter(tiny, adapter, alpha=8).model
    for name, p in full.named_parameters():
        torch.testing.assert_close(mine[name], p, rtol=0, atol=0)


def test_clean_losses_from_the_shared_prefix_equal_full_forwards(tiny):
    samples = [
        {"instruction": f"the quick fox {i}", "input": "", "output": "the lazy dog " * (i % 3 + 1)}
        for i in range(6)
    ]
    tail, _ = bs.train_lora(tiny, samples, r=4, alpha=8, lr=5e-2, epochs=2, batch=4, seed=0, layers=[1])
    adapters = {"tail": tail, "mlp zeroed": bs.ablate_lora(tail, "mlp")}
    cache = {}
    got = bs.clean_losses(
        tiny, adapters, samples, template=None, max_length=64, batch=4, alpha=8, cache=cache
    )
    assert len(cache) == len(samples) and np.isfinite(got["tail"]).all()
    assert not np.allclose(got["tail"], got["mlp zeroed"])
    for name, adapter in adapters.items():
        want = bs.clean_loss(bs.apply_adapter(tiny, adapter, 8), samples, None, max_length=64)
        np.testing.assert_allclose(got[name], want, rtol=1e-5)
    # a packed row whose response max_length cuts off entirely: NaN, as the padded full forward gives
    long = {"instruction": "the quick fox " * 6, "input": "", "output": "the lazy dog"}
    mixed = [samples[0], long, samples[1]]
    short = bs.clean_losses(tiny, adapters, mixed, template=None, max_length=24, batch=4, alpha=8)
    want = bs.clean_loss(bs.apply_adapter(tiny, tail, 8), mixed, None, max_length=24)
    assert np.isnan(want).tolist() == [False, True, False]
    np.testing.assert_allclose(short["tail"], want, rtol=1e-5)
    with pytest.raises(ValueError, match="adapters"):
        bs.clean_losses(tiny, {}, samples)
    with pytest.raises(ValueError, match="cache"):
        bs.clean_losses(tiny, adapters, samples, cache=[])


def test_forked_prefix_states_and_prompt_heads_equal_serial_ones(tiny):
    data = bs._lora.tokenize(tiny.tokenizer, SAMPLES * 5, None, 32)
    serial, forked = {}, {}
    one = bs._lora.prefix_states(tiny.model, data, 1, 4, serial, workers=1)
    two = bs._lora.prefix_states(tiny.model, data, 1, 4, forked, workers=2)
    assert serial.keys() == forked.keys()
    assert all(torch.equal(a, b) for a, b in zip(one, two, strict=True))
    prompts = ["the quick fox", "the lazy dog jumps over", "0123", "a b c d e f g", "x"]
    tail, _ = bs.train_lora(tiny, SAMPLES, r=4, alpha=8, lr=5e-2, epochs=3, batch=4, seed=0, layers=[1])
    cold = bs.attack_success_rates(tiny, {"a": tail}, prompts, max_new_tokens=6, batch=2, alpha=8)
    heads = {}
    bs._lora.warm_prompt_heads(tiny.model, tiny.tokenizer, prompts, 2, 1, heads)
    assert len(heads) == 3  # batches of 2 by length
    warm = bs.attack_success_rates(
        tiny, {"a": tail}, prompts, max_new_tokens=6, batch=2, alpha=8, cache=heads
    )
    assert warm == cold and len(heads) == 3


def test_experiment_seed_is_identical_in_one_or_two_workers(monkeypatch, tmp_path):
    """The headline experiment's schedule (attack rounds beside prefix/prompt warm-up jobs, forked
    variant trainings, recoveries and evaluations) gives the same numbers in 1 and 2 processes."""
    from iclr26.backdoor_signature import experiment
    from iclr26.runtime import RunContext

    monkeypatch.setattr(experiment, "_data_root", lambda: None)
    monkeypatch.setattr(experiment, "ATTACK_EPOCHS_STEP", 1)
    model = tiny_random_model(0)  # 2 layers: LoRA on the last one, layer 0 is the shared prefix
    cfg = dict(
        experiment.SETTINGS["small"],
        attack="badnet",
        task="negsentiment",
        layers=1,
        max_length=160,  # the tiny tokenizer spells words out
        n_attack_clean=6,
        n_attack_poison=6,
        n_calib=3,
        n_test=5,
        n_clean_eval=4,
        n_variants=2,
        n_per_variant=4,
        recover_n=4,
        recover_epochs=1,
        batch=4,
        max_new_tokens=3,
        fine_pruning=True,
        n_sweep=(1,),
    )
    ctx = RunContext(slug="backdoor-signature", out_dir=tmp_path, show_progress=False)
    one = experiment._run_seed(model, {**cfg, "workers": 1}, ctx, 0)
    two = experiment._run_seed(model, {**cfg, "workers": 2}, ctx, 0)
    assert len(one["calibration"]) == experiment.ATTACK_ROUNDS  # a random model never meets the bar
    assert np.isfinite([r["final_loss"] for r in one["calibration"]]).all()
    assert one["calibration"] == two["calibration"] and one["signature_size"] == two["signature_size"]
    for key in ("asr", "ftr", "loss"):
        assert one[key].keys() == two[key].keys()
        for name in one[key]:
            np.testing.assert_array_equal(one[key][name], two[key][name])
    assert "fine-pruning+recovery" in one["asr"] and np.isfinite(one["loss"]["base"]).all()
    # the clean fillers computed for another attack's cell (same task and seed) give the same seed
    warm = experiment._clean_cache(model, {**cfg, "attack": "vpi"}, ctx, 0)
    assert warm and all(isinstance(v, torch.Tensor | tuple) for v in warm.values())
    three = experiment._run_seed(model, {**cfg, "workers": 1}, ctx, 0, cache=warm)
    for key in ("asr", "ftr", "loss"):
        for name in one[key]:
            np.testing.assert_array_equal(one[key][name], three[key][name])
    # and the seed does use them: shifted prefix states change its losses
    shifted = {k: v + 1.0 if isinstance(v, torch.Tensor) else v for k, v in warm.items()}
    four = experiment._run_seed(model, {**cfg, "workers": 1}, ctx, 0, cache=shifted)
    assert not np.array_equal(four["loss"]["suspicious"], one["loss"]["suspicious"])
    assert "signature N=1+recovery" in one["asr"] and one["n_variants"] == 2


def test_bf16_precision_trains_close_to_fp32_and_keeps_fp32_adapter(tiny):
    kw = dict(r=4, alpha=8, lr=1e-2, epochs=2, batch=4, seed=0)
    full, full_losses = bs.train_lora(tiny, SAMPLES, **kw)
    half, half_losses = bs.train_lora(tiny, SAMPLES, precision="bf16", **kw)
    assert all(v.dtype == torch.float32 for v in half.values())
    assert set(half) == set(full) and len(half_losses) == len(full_losses)
    # bfloat16 rounds each step's forward (8 bits of mantissa): close to fp32, not equal to it
    np.testing.assert_allclose(half_losses, full_losses, rtol=0.05)
    assert half_losses != full_losses
    tail = dict(kw, layers=[1])
    _, tail_losses = bs.train_lora(tiny, SAMPLES, precision="bf16", cache={}, **tail)
    np.testing.assert_allclose(tail_losses, bs.train_lora(tiny, SAMPLES, **tail)[1], rtol=0.05)
    cont, _ = bs.continue_lora(tiny, full, SAMPLES, alpha=8, epochs=1, precision="bf16")
    assert set(cont) == set(full)
    with pytest.raises(ValueError, match="precision"):
        bs.train_lora(tiny, SAMPLES, precision="fp16")
    with pytest.raises(ValueError, match="precision"):
        bs.continue_lora(tiny, full, SAMPLES, precision=None)


def test_bf16_weight_copies_change_no_number_and_are_put_back(tiny, monkeypatch):
    """The bfloat16 copies of the frozen weights give the same losses and adapter as autocast's own
    cast at every call, on the full and the cached-prefix path; the model keeps its weight tensors."""
    from contextlib import nullcontext

    from iclr26.backdoor_signature import _lora

    kw = dict(r=4, alpha=8, lr=1e-2, epochs=2, batch=4, seed=0, precision="bf16")
    weights = {name: p for name, p in tiny.model.named_parameters()}
    real, used = _lora.bf16_frozen_weights, []
    monkeypatch.setattr(_lora, "bf16_frozen_weights", lambda modules: used.append(modules) or real(modules))
    runs = [bs.train_lora(tiny, SAMPLES, **kw), bs.train_lora(tiny, SAMPLES, layers=[1], cache={}, **kw)]
    assert len(used) == 2
    assert all(p is weights[name] for name, p in tiny.model.named_parameters())
    assert all(p.dtype == torch.float32 for p in tiny.model.parameters())
    monkeypatch.setattr(_lora, "bf16_frozen_weights", lambda modules: nullcontext())
    plain = [bs.train_lora(tiny, SAMPLES, **kw), bs.train_lora(tiny, SAMPLES, layers=[1], cache={}, **kw)]
    for (adapter, losses), (want, want_losses) in zip(runs, plain, strict=True):
        assert losses == want_losses
        assert all(torch.equal(adapter[k], want[k]) for k in want)
    frozen, trained = torch.nn.Linear(4, 3), torch.nn.Linear(4, 3)
    frozen.weight.requires_grad_(False)
    original = frozen.weight
    with real([torch.nn.Sequential(frozen, trained)]):
        assert frozen.weight.dtype == torch.bfloat16
        assert torch.equal(frozen.weight, original.to(torch.bfloat16))
        assert trained.weight.dtype == torch.float32  # a weight that trains is left alone
    assert frozen.weight is original


@pytest.mark.parametrize("steps", [1, 4, 10, 37])
def test_cosine_lr_factors_equal_transformers_schedule(steps):
    """The authors' LlamaFactory schedule: transformers' cosine with warm-up over ceil(10 %) steps."""
    from transformers import get_cosine_schedule_with_warmup

    from iclr26.backdoor_signature import _lora

    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    sched = get_cosine_schedule_with_warmup(opt, math.ceil(0.1 * steps), steps)
    want = []
    for _ in range(steps):
        want.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    np.testing.assert_allclose(_lora.lr_factors(steps, "cosine"), want, rtol=0, atol=1e-15)
    assert _lora.lr_factors(steps, "constant") == [1.0] * steps


def test_cosine_schedule_trains_differently_and_starts_at_rate_zero(tiny):
    kw = dict(r=4, alpha=8, lr=1e-2, epochs=2, batch=4, seed=0)
    constant, _ = bs.train_lora(tiny, SAMPLES, **kw)
    cosine, _ = bs.train_lora(tiny, SAMPLES, lr_schedule="cosine", **kw)
    assert set(cosine) == set(constant) and not all(torch.equal(cosine[k], constant[k]) for k in constant)
    # one step: the warm-up's first factor is 0, so the adapter does not move
    same, _ = bs.continue_lora(tiny, constant, SAMPLES[:4], alpha=8, epochs=1, batch=4, lr_schedule="cosine")
    assert all(torch.equal(same[k], constant[k]) for k in constant)
    with pytest.raises(ValueError, match="lr_schedule"):
        bs.train_lora(tiny, SAMPLES, lr_schedule="linear")
    with pytest.raises(ValueError, match="lr_schedule"):
        bs.recover(tiny, constant, SAMPLES, n=4, lr_schedule=None)


def test_recover_is_continue_lora_on_the_first_n_samples(tiny):
    adapter, _ = bs.train_lora(tiny, SAMPLES, r=4, alpha=8, lr=1e-2, epochs=1, batch=4, seed=0)
    got, losses = bs.recover(tiny, adapter, SAMPLES, n=4, alpha=8, lr=1e-3, epochs=2, batch=2, seed=3)
    want, want_losses = bs.continue_lora(
        tiny, adapter, SAMPLES[:4], alpha=8, lr=1e-3, epochs=2, batch=2, seed=3
    )
    assert losses == want_losses and len(losses) == 4
    assert all(torch.equal(got[k], want[k]) for k in want)
    with pytest.raises(ValueError, match="n=9"):
        bs.recover(tiny, adapter, SAMPLES, n=9)
    with pytest.raises(ValueError, match="n"):
        bs.recover(tiny, adapter, SAMPLES, n=0)
    with pytest.raises(ValueError, match="clean_samples"):
        bs.recover(tiny, adapter, [])


def test_variant_deltas_continue_the_suspicious_adapter_or_train_on_the_merged_model(tiny):
    """``variants_from="adapter"`` (bd-vax's LoRA setting) continues ``suspicious`` on each variant's
    data; ``"merged"`` (its full-model setting) trains a new adapter on the merged model. Δ_i = bd − clean."""
    pool = [{"instruction": f"the quick fox {i} jumps", "input": "", "output": f"dog {i}"} for i in range(40)]
    mlp = ("gate_proj", "up_proj", "down_proj")
    sus, _ = bs.train_lora(tiny, pool[:8], r=2, alpha=4, targets=mlp, lr=1e-2, epochs=1, batch=8, layers=[1])
    kw = dict(n=2, n_per_variant=6, r=2, alpha=4, lr=1e-2, batch=8, template=None, seed=5)
    variants, _ = bs.make_variants(pool, n=2, n_per_variant=6, n_finetune=0)
    train = dict(alpha=4, lr=1e-2, epochs=1, batch=8, template=None)
    for start, deltas in (
        ("adapter", bs.variant_deltas(tiny, sus, pool, **kw)),
        ("merged", bs.variant_deltas(tiny, sus, pool, variants_from="merged", **kw)),
    ):
        bds, cls = [], []
        for i, (clean, mixed) in enumerate(variants):
            if start == "adapter":
                bds.append(bs.continue_lora(tiny, sus, mixed, seed=5 + i, **train)[0])
                cls.append(bs.continue_lora(tiny, sus, clean, seed=5 + i, **train)[0])
            else:
                merged = bs.apply_adapter(tiny, sus, 4)
                bds.append(bs.train_lora(merged, mixed, r=2, targets=mlp, layers=[1], seed=5 + i, **train)[0])
                cls.append(bs.train_lora(merged, clean, r=2, targets=mlp, layers=[1], seed=5 + i, **train)[0])
        for got, want in zip(deltas, bs.differential_deltas(bds, cls, alpha=4), strict=True):
            assert set(got) == set(want)
            for key in want:
                torch.testing.assert_close(got[key], want[key])
    with pytest.raises(ValueError, match="variants_from"):
        bs.variant_deltas(tiny, sus, pool, variants_from="base", **kw)
