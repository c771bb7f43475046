import copy
import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import iclr26.dp_adaptation_privacy as dpa
from iclr26.dp_adaptation_privacy import _dpsgd

from .conftest import opacus_or_skip


class _ToyLM(torch.nn.Module):
    """Embedding → tanh → linear head: a causal LM that opacus supports layer by layer."""

    def __init__(self, vocab=11, dim=6):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, dim)
        self.head = torch.nn.Linear(dim, vocab)

    def forward(self, input_ids):
        return SimpleNamespace(logits=self.head(torch.tanh(self.emb(input_ids))))


class _KeywordToyLM(_ToyLM):
    def forward(self, input_ids):
        return SimpleNamespace(logits=self.head(input=torch.tanh(self.emb(input_ids))))


def _batch(seed=0, b=5, length=7, vocab=11):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (b, length), generator=g)
    mask = torch.ones(b, length, dtype=torch.long)
    mask[0, 4:] = 0
    return ids, mask


def test_per_sample_grads_match_a_loop(tiny, texts):
    ids, mask = _dpsgd.encode(tiny.tokenizer, texts[:3], 16)
    params = {k: p.detach() for k, p in tiny.model.named_parameters()}
    grads = _dpsgd.per_sample_grads(tiny.model, params, ids, mask)
    for i in range(3):
        p = {k: v.clone().requires_grad_() for k, v in params.items()}
        ref = torch.autograd.grad(_dpsgd.sequence_loss(tiny.model, p, ids[i], mask[i]), list(p.values()))
        for (k, _), r in zip(p.items(), ref):
            assert torch.allclose(grads[k][i], r, atol=1e-5)


def test_clipping_bounds_each_contribution():
    g = {"a": torch.randn(6, 3, 2) * 10, "b": torch.randn(6, 4)}
    one = [{k: v[i : i + 1] for k, v in g.items()} for i in range(6)]
    for single in one:
        s = _dpsgd.clip_and_sum(single, 0.5)
        assert math.sqrt(sum(float(v.pow(2).sum()) for v in s.values())) <= 0.5 + 1e-5
    small = {k: v * 1e-4 for k, v in g.items()}
    assert all(torch.allclose(_dpsgd.clip_and_sum(small, 1.0)[k], small[k].sum(0)) for k in g)


@pytest.mark.parametrize("sigma", [0.0, 0.8])
def test_noisy_clipped_update_matches_opacus(sigma):
    opacus_or_skip()
    from opacus import GradSampleModule
    from opacus.optimizers import DPOptimizer

    torch.manual_seed(0)
    model = _ToyLM()
    ids, mask = _batch()
    params = {k: p.detach().clone() for k, p in model.named_parameters()}
    ours = _dpsgd.dp_gradient(
        model,
        params,
        ids,
        mask,
        max_grad_norm=0.3,
        sigma=sigma,
        expected_batch_size=5,
        generator=torch.Generator().manual_seed(7),
    )
    gsm = GradSampleModule(model)
    opt = DPOptimizer(
        torch.optim.SGD(gsm.parameters(), lr=0.1),
        noise_multiplier=sigma,
        max_grad_norm=0.3,
        expected_batch_size=5,
    )
    opt.zero_grad()
    loss = _batched_loss(gsm, ids, mask)
    loss.backward()
    torch.manual_seed(7)
    opt.pre_step()
    for k, p in gsm._module.named_parameters():
        assert torch.allclose(ours[k], p.grad, atol=1e-6), k


def _batched_loss(model, ids, mask):
    logp = torch.log_softmax(model(input_ids=ids).logits[:, :-1], dim=-1)
    tok = logp.gather(-1, ids[:, 1:, None])[..., 0]
    m = mask[:, 1:].float()
    return (-(tok * m).sum(1) / m.sum(1)).mean()


def test_adapt_non_private_fits_and_private_is_noisy(tiny, texts):
    texts = texts[:8]
    base = dpa.validation_loss(tiny, texts, max_length=16)
    free = dpa.adapt(tiny, texts, "full", math.inf, epochs=2, batch_size=4, lr=1e-2, max_length=16)
    assert free.noise_multiplier == 0 and free.steps == 4 and free.delta == 1 / 8
    assert dpa.validation_loss(free, texts, max_length=16) < base - 1
    dp = dpa.adapt(tiny, texts, "full", 1.0, epochs=2, batch_size=4, lr=1e-2, max_length=16)
    assert dp.noise_multiplier == pytest.approx(dpa.noise_multiplier(1.0, 1 / 8, 0.5, 4))
    assert dpa.validation_loss(dp, texts, max_length=16) > dpa.validation_loss(free, texts, max_length=16)


def test_head_unties_and_trains_only_the_head(tiny, texts):
    a = dpa.adapt(tiny, texts[:8], "head", 8.0, epochs=1, batch_size=4, lr=1e-2, max_length=16)
    new, old = a.model.model, tiny.model
    assert torch.equal(new.get_input_embeddings().weight, old.get_input_embeddings().weight)
    assert not torch.equal(new.get_output_embeddings().weight, old.get_output_embeddings().weight)
    assert (
        old.get_output_embeddings().weight is old.get_input_embeddings().weight
    )  # the original is untouched
    for (k, p), (_, q) in zip(new.model.layers.named_parameters(), old.model.layers.named_parameters()):
        assert torch.equal(p, q), k


def test_adapt_is_seeded(tiny, texts):
    runs = [dpa.adapt(tiny, texts[:8], "head", 4.0, batch_size=4, max_length=16, seed=s) for s in (3, 3, 4)]
    s = [dpa.signals(r, texts[:4], max_length=16) for r in runs]
    assert np.array_equal(s[0], s[1]) and not np.array_equal(s[0], s[2])
    assert runs[0].batch_sizes == runs[1].batch_sizes


@pytest.mark.parametrize(
    "kw,name",
    [
        ({"method": "adapter"}, "method"),
        ({"method": "Full"}, "method"),
        ({"method": "prefix", "prefix_tokens": 0}, "prefix_tokens"),
        ({"epsilon": 0}, "epsilon"),
        ({"epsilon": -3}, "epsilon"),
        ({"epsilon": True}, "epsilon"),
        ({"max_grad_norm": "1.0"}, "max_grad_norm"),
        ({"delta": 0.0}, "delta"),
        ({"delta": 1.5}, "delta"),
        ({"batch_size": 0}, "batch_size"),
        ({"epochs": 0}, "epochs"),
        ({"max_grad_norm": 0}, "max_grad_norm"),
        ({"texts": []}, "texts"),
        ({"texts": "one string"}, "texts"),
        ({"texts": ["fine text here", "a"], "batch_size": 1}, "texts"),
    ],
)
def test_adapt_bad_input(tiny, texts, kw, name):
    args = {"texts": texts, **kw}
    with pytest.raises(ValueError, match=name):
        dpa.adapt(tiny, **args, max_length=24)


def test_adapt_warns_on_large_delta(tiny, texts):
    with pytest.warns(UserWarning, match="delta"):
        dpa.adapt(tiny, texts[:4], "head", 8.0, delta=0.5, batch_size=4, max_length=16)


def test_lora_trains_only_the_targets_and_is_merged(tiny, texts):
    pytest.importorskip("peft")
    texts = texts[:8]
    a = dpa.adapt(tiny, texts, "lora", math.inf, epochs=2, batch_size=4, lr=2e-2, max_length=16, lora_r=4)
    new, old = a.model.model, tiny.model
    assert type(new) is type(old)  # merged back into a plain LlamaForCausalLM
    changed = {
        k for (k, p), (_, q) in zip(new.named_parameters(), old.named_parameters()) if not torch.equal(p, q)
    }
    assert changed and all(k.endswith(("q_proj.weight", "v_proj.weight")) for k in changed)
    assert dpa.validation_loss(a, texts, max_length=16) < dpa.validation_loss(tiny, texts, max_length=16)


@pytest.mark.parametrize("kw,name", [({"lora_r": 0}, "lora_r"), ({"lora_targets": "q_proj"}, "lora_targets")])
def test_lora_bad_input(tiny, texts, kw, name):
    with pytest.raises(ValueError, match=name):
        dpa.adapt(tiny, texts[:4], "lora", batch_size=2, max_length=16, **kw)


def test_match_validation_loss(tiny, texts):
    train, val = texts[:8], texts[8:12]
    base = dpa.validation_loss(tiny, val, max_length=16)
    kw = dict(epsilon=math.inf, lrs=(1e-2,), max_epochs=2, batch_size=4, max_length=16)
    easy = dpa.match_validation_loss(tiny, train, val, base - 0.5, ("head",), **kw)["head"]
    assert easy.reached and easy.epochs == 1 and easy.validation_loss <= base - 0.5
    assert easy.validation_loss == pytest.approx(dpa.validation_loss(easy.adapted, val, max_length=16))
    hard = dpa.match_validation_loss(tiny, train, val, 0.01, ("head",), **kw)["head"]
    assert not hard.reached and hard.epochs <= 2 and hard.validation_loss > 0.01


@pytest.mark.parametrize(
    "kw,name",
    [
        ({"target_loss": 0}, "target_loss"),
        ({"lrs": ()}, "lrs"),
        ({"lrs": (-1.0,)}, "lrs"),
        ({"methods": ("adapter",)}, "methods"),
        ({"max_epochs": 0}, "max_epochs"),
        ({"validation": []}, "validation"),
    ],
)
def test_match_validation_loss_bad_input(tiny, texts, kw, name):
    args = {"validation": texts[8:10], "target_loss": 1.0, **kw}
    with pytest.raises(ValueError, match=name):
        dpa.match_validation_loss(tiny, texts[:4], batch_size=2, max_length=16, **args)


def _prefix_model(tiny, tokens=3):
    import copy

    from peft import PrefixTuningConfig, get_peft_model

    wrapped = get_peft_model(
        copy.deepcopy(tiny.model), PrefixTuningConfig(task_type="CAUSAL_LM", num_virtual_tokens=tokens)
    )
    return wrapped, {k: p.detach() for k, p in wrapped.named_parameters() if p.requires_grad}


@pytest.mark.parametrize("sigma", [0.0, 0.7])
def test_prefix_dp_step_equals_a_hand_computed_update(tiny, texts, sigma):
    """Per-sequence autograd gradients of the prefix, clipped, summed, noised and averaged by hand."""
    pytest.importorskip("peft")
    wrapped, params = _prefix_model(tiny)
    assert list(params) == ["prompt_encoder.default.embedding.weight"]
    ids, mask = _dpsgd.encode(tiny.tokenizer, texts[:4], 16)
    mask[1, 9:] = 0  # a shorter sequence: its padded targets leave the loss
    ours = _dpsgd.dp_gradient(
        wrapped,
        params,
        ids,
        mask,
        max_grad_norm=0.05,
        sigma=sigma,
        expected_batch_size=3.5,
        generator=torch.Generator().manual_seed(11),
    )["prompt_encoder.default.embedding.weight"]
    total = torch.zeros_like(params["prompt_encoder.default.embedding.weight"])
    for i in range(4):
        p = {k: v.clone().requires_grad_() for k, v in params.items()}
        logits = torch.func.functional_call(wrapped, p, args=(), kwargs={"input_ids": ids[i : i + 1]}).logits
        n = int(mask[i].sum())
        loss = torch.nn.functional.cross_entropy(logits[0, : n - 1], ids[i, 1:n])
        (g,) = torch.autograd.grad(loss, list(p.values()))
        total += g * min(1.0, 0.05 / (float(g.norm()) + 1e-6))
    noise = torch.normal(0.0, sigma * 0.05, total.shape, generator=torch.Generator().manual_seed(11))
    expected = (total + (noise if sigma else 0.0)) / 3.5
    assert torch.allclose(ours, expected, atol=1e-7)


def test_prefix_trains_only_the_prefix(tiny, texts):
    pytest.importorskip("peft")
    texts = texts[:8]
    free = dpa.adapt(tiny, texts, "prefix", math.inf, epochs=3, batch_size=4, lr=5e-2, max_length=16)
    peft_model = free.model.model
    assert free.noise_multiplier == 0
    base = dict(tiny.model.named_parameters())
    for k, p in peft_model.get_base_model().named_parameters():
        assert torch.equal(p, base[k]), k  # the base weights are frozen
    assert dpa.validation_loss(free, texts, max_length=16) < dpa.validation_loss(tiny, texts, max_length=16)
    dp = dpa.adapt(tiny, texts, "prefix", 8.0, epochs=1, batch_size=4, max_length=16, prefix_tokens=2)
    assert dp.noise_multiplier == pytest.approx(dpa.noise_multiplier(8.0, 1 / 8, 0.5, 2))
    assert dp.model.model.peft_config["default"].num_virtual_tokens == 2
    # batch independence of the signal holds with the prefix too (right padding, causal attention)
    one = np.array([dpa.signals(dp, [t], max_length=16)[0] for t in texts[:3]])
    assert np.allclose(one, dpa.signals(dp, texts[:3], max_length=16), rtol=1e-5)


def test_prefix_from_text_equals_the_base_reading_that_text_first(tiny, texts):
    """Li & Liang's initialisation: the untrained prefix holds the keys/values of real tokens, so the
    PeftModel on x computes what the base computes on those tokens + x."""
    pytest.importorskip("peft")
    start = "def helper(value):\n    return value * 2 + offset\n"
    ids = tiny.tokenizer(start, return_tensors="pt", add_special_tokens=False).input_ids[:, :4]
    wrapped, params = dpa._trainable(copy.deepcopy(tiny.model), "prefix", 8, 16.0, ("q_proj",), 4, ids)
    (embedding,) = params.values()
    assert embedding.shape[0] == 4 and embedding.requires_grad
    x = tiny.tokenizer(texts[0], return_tensors="pt", add_special_tokens=False).input_ids[:, :12]
    with torch.no_grad():
        ours = wrapped(input_ids=x, attention_mask=torch.ones_like(x)).logits
        base = tiny.model(torch.cat([ids, x], dim=1)).logits[:, 4:]
    assert torch.allclose(ours, base, atol=1e-4)
    random = dpa._trainable(copy.deepcopy(tiny.model), "prefix", 8, 16.0, ("q_proj",), 4)[0]
    with torch.no_grad():
        assert not torch.allclose(
            random(input_ids=x, attention_mask=torch.ones_like(x)).logits, base, atol=1e-2
        )
    # through adapt: a tiny learning rate leaves the model equal to the base reading the text first
    near = dpa.adapt(tiny, texts[:4], "prefix", math.inf, batch_size=4, lr=1e-9, max_length=16,
                     prefix_tokens=4, prefix_init_text=start)  # fmt: skip
    with torch.no_grad():
        assert torch.allclose(
            near.model.model(input_ids=x, attention_mask=torch.ones_like(x)).logits, base, atol=1e-3
        )


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(method="prefix", prefix_init_text="two"), "prefix_init_text: expected at least"),
        (dict(method="prefix", prefix_init_text=7), "prefix_init_text: expected a string"),
        (dict(method="lora", prefix_init_text="a text long enough for eight tokens of prefix"), "only"),
    ],
)
def test_prefix_init_text_bad_input(tiny, texts, kw, match):
    with pytest.raises(ValueError, match=match):
        dpa.adapt(tiny, texts[:4], epsilon=math.inf, batch_size=2, max_length=16, **kw)


def test_microbatching_does_not_change_the_update(tiny, texts):
    ids, mask = _dpsgd.encode(tiny.tokenizer, texts[:5], 16)
    params = {k: p.detach() for k, p in tiny.model.named_parameters() if "layers.1" in k}
    kw = dict(max_grad_norm=0.1, sigma=0.5, expected_batch_size=5.0)
    whole = _dpsgd.dp_gradient(
        tiny.model, params, ids, mask, generator=torch.Generator().manual_seed(1), **kw
    )
    parts = _dpsgd.dp_gradient(
        tiny.model, params, ids, mask, generator=torch.Generator().manual_seed(1), microbatch=2, **kw
    )
    assert all(torch.allclose(whole[k], parts[k], atol=1e-6) for k in params)


@pytest.mark.parametrize("method", ["lora", "prefix"])
def test_adapt_does_not_depend_on_the_global_generator(tiny, texts, method):
    """peft initialises from torch's global generator; adapt seeds it from ``seed`` and restores it."""
    pytest.importorskip("peft")
    runs = []
    for state in (1, 2):
        torch.manual_seed(state)
        before = torch.random.get_rng_state()
        runs.append(dpa.adapt(tiny, texts[:4], method, 8.0, batch_size=2, max_length=16, seed=5))
        assert torch.equal(torch.random.get_rng_state(), before)
    a, b = (dpa.signals(r, texts[:3], max_length=16) for r in runs)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("clip", [0.05, 1.0, math.inf])
def test_head_clipped_sum_equals_per_sample_gradients(tiny, texts, clip):
    """The Gram-identity clipped sum of the head equals clipping the head's per-sequence gradients
    (formed by vmap through the whole model); padding, microbatches and clipping on or off."""
    hf, params = dpa._trainable(tiny.model.__class__(tiny.model.config), "head", 8, 16.0, ("q_proj",), 8)
    hf.load_state_dict(tiny.model.state_dict(), strict=False)
    ((name, weight),) = ((k, p.detach()) for k, p in params.items())
    short = [" ".join(t.split()[: 2 + 2 * i]) for i, t in enumerate(texts[:6])]
    ids, mask = _dpsgd.encode(tiny.tokenizer, short, 24)
    assert mask.sum(1).unique().numel() > 1  # some rows are padded
    ref = _dpsgd.clip_and_sum(_dpsgd.per_sample_grads(hf, {name: weight}, ids, mask), clip)[name]
    hidden = _dpsgd.final_hidden(hf, ids, batch=4)
    for microbatch in (None, 4):
        ours = _dpsgd.head_clipped_sum(hidden, weight, ids, mask, clip, microbatch)
        torch.testing.assert_close(ours, ref, rtol=1e-5, atol=1e-7)
    if math.isfinite(clip) and clip < 0.1:  # every sequence clipped: each contributes norm = clip
        one = [(hidden[i : i + 1], weight, ids[i : i + 1], mask[i : i + 1]) for i in range(6)]
        norms = torch.stack([_dpsgd.head_clipped_sum(*args, clip).norm() for args in one])
        assert torch.allclose(norms, torch.full((6,), clip), rtol=1e-4)


@pytest.mark.parametrize("eps", [4.0, math.inf])
def test_head_adaptation_with_hidden_states_computed_once_equals_the_general_path(
    tiny, texts, eps, monkeypatch
):
    """adapt(method="head") computes the frozen body once; the model it returns equals the one of the
    per-step vmap path (same noise draws), and a model with dropout keeps the general path."""
    kw = dict(epochs=2, batch_size=4, lr=1e-2, max_length=16, microbatch=3, seed=5)
    fast = dpa.adapt(tiny, texts[:8], "head", eps, **kw)
    monkeypatch.setattr(dpa, "_hoistable_body", lambda hf: False)
    slow = dpa.adapt(tiny, texts[:8], "head", eps, **kw)
    a, b = fast.model.model.get_output_embeddings().weight, slow.model.model.get_output_embeddings().weight
    torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    assert fast.batch_sizes == slow.batch_sizes
    monkeypatch.undo()
    import copy

    dropped = copy.deepcopy(tiny.model)
    dropped.config.attention_dropout = 0.1
    assert dpa._hoistable_body(tiny.model) and not dpa._hoistable_body(dropped)


@pytest.mark.parametrize("microbatch", [None, 2])
def test_unclipped_gradient_is_one_batched_backward_equal_to_the_per_sequence_sum(tiny, texts, microbatch):
    """With max_grad_norm = inf (eps = inf) dp_gradient sums by a batched backward; the result equals the
    vmap per-sequence gradients summed (padding included) and leaves the caller's tensors untouched."""
    ids, mask = _dpsgd.encode(tiny.tokenizer, texts[:5], 16)
    mask[2, 6:] = 0
    params = {k: p.detach() for k, p in tiny.model.named_parameters()}
    ref = _dpsgd.clip_and_sum(_dpsgd.per_sample_grads(tiny.model, params, ids, mask), math.inf)
    ours = _dpsgd.dp_gradient(
        tiny.model, params, ids, mask, max_grad_norm=math.inf, sigma=0.0, expected_batch_size=2.5,
        microbatch=microbatch,
    )  # fmt: skip
    for k in params:
        torch.testing.assert_close(ours[k], ref[k] / 2.5, rtol=1e-5, atol=1e-6)
    assert not any(p.requires_grad for p in params.values())
    empty = _dpsgd.dp_gradient(
        tiny.model, params, ids[:0], mask[:0], max_grad_norm=math.inf, sigma=0.0, expected_batch_size=2.5
    )
    assert all(not g.any() for g in empty.values())


def test_privatise_draws_the_noise_of_torch_normal():
    """The in-place noise is the draw of (g + torch.normal(0, sigma C, shape)) / E, per parameter in order."""
    g = {"a": torch.randn(7, 3), "b": torch.randn(5)}
    ours = _dpsgd.privatise(g, 0.7, 2.0, 3.0, torch.Generator().manual_seed(4))
    gen = torch.Generator().manual_seed(4)
    for k, v in g.items():
        assert torch.equal(ours[k], (v + torch.normal(0.0, 1.4, v.shape, generator=gen)) / 3.0)
    assert all(
        torch.equal(r, v / 3.0) for r, v in zip(_dpsgd.privatise(g, 0.0, 2.0, 3.0).values(), g.values())
    )


def test_head_clipped_sum_of_an_empty_batch_is_zero(tiny):
    weight = tiny.model.get_output_embeddings().weight.detach()
    hidden = torch.zeros(0, 5, weight.shape[1])
    ids = torch.zeros(0, 5, dtype=torch.long)
    out = _dpsgd.head_clipped_sum(hidden, weight, ids, torch.ones_like(ids), 1.0)
    assert out.shape == weight.shape and not out.any()


def _untied(model):
    import copy

    untied = copy.deepcopy(model)
    untied.lm_head.weight = torch.nn.Parameter(untied.lm_head.weight.detach().clone())
    untied.config.tie_word_embeddings = False
    return untied


@pytest.mark.parametrize("clip", [1e-3, 0.5, math.inf])
@pytest.mark.parametrize("tied", [True, False])
def test_ghost_clipped_sum_equals_per_sample_gradients(tiny, texts, clip, tied):
    """Ghost norms + book-keeping equal clipping vmap's per-sequence gradients over every parameter of the
    tiny Llama (tied embeddings: the head/embedding cross term; padding; every row clipped or none)."""
    from iclr26.dp_adaptation_privacy import _ghost

    model = tiny.model if tied else _untied(tiny.model)
    params = {k: p.detach() for k, p in model.named_parameters()}
    short = [" ".join(t.split()[: 3 + i]) for i, t in enumerate(texts[:5])]
    ids, mask = _dpsgd.encode(tiny.tokenizer, short, 20)
    assert _ghost.decomposes(model, params, ids[:1])  # Llama's RMSNorm is weight * x / rms(x)
    pad = model.get_input_embeddings().padding_idx
    assert (ids == pad).any(dim=1).sum() >= 4  # right padding
    ids[0, 2] = pad  # the padding token inside a text: torch gives its embedding row no gradient
    ref = _dpsgd.clip_and_sum(_dpsgd.per_sample_grads(model, params, ids, mask), clip)
    ours = _ghost.clipped_sum(model, params, ids, mask, clip)
    assert set(ours) == set(params)
    for k in params:
        torch.testing.assert_close(
            ours[k], ref[k], rtol=1e-4, atol=1e-7 * max(1.0, float(ref[k].abs().max()))
        )
    if clip < 0.01:  # every sequence clipped: a single one contributes exactly the bound
        one = _ghost.clipped_sum(model, params, ids[:1], mask[:1], clip)
        assert math.sqrt(sum(float(v.pow(2).sum()) for v in one.values())) == pytest.approx(clip, rel=1e-4)


def test_ghost_covers_linear_biases_and_refuses_other_layers():
    """A bias has its per-sequence gradient formed (Σ_t g_t); a trainable layer the ghost path cannot
    decompose (here a LayerNorm) makes covers() false, so adapt keeps the per-sequence path."""
    from iclr26.dp_adaptation_privacy import _ghost

    model = _ToyLM()
    params = {k: p.detach() for k, p in model.named_parameters()}
    assert _ghost.covers(model, params)
    ids, mask = _batch()
    ref = _dpsgd.clip_and_sum(_dpsgd.per_sample_grads(model, params, ids, mask), 0.3)
    ours = _ghost.clipped_sum(model, params, ids, mask, 0.3)
    for k in params:
        torch.testing.assert_close(ours[k], ref[k], rtol=1e-5, atol=1e-7)
    keyword = _KeywordToyLM()  # the same layers, the head called with its input as a keyword
    keyword.load_state_dict(model.state_dict())
    by_keyword = _ghost.clipped_sum(keyword, params, ids, mask, 0.3)
    assert all(torch.allclose(by_keyword[k], ours[k]) for k in params)
    model.emb.scale_grad_by_freq = True
    assert not _ghost.covers(model, params)
    model.emb.scale_grad_by_freq = False
    model.norm = torch.nn.LayerNorm(6)
    assert not _ghost.covers(model, {k: p.detach() for k, p in model.named_parameters()})
    with pytest.raises(ValueError, match="params"):
        _ghost.clipped_sum(model, {k: p.detach() for k, p in model.named_parameters()}, ids, mask, 0.3)
    assert not _ghost.covers(model, {})


@pytest.mark.parametrize("eps", [4.0, math.inf])
def test_full_adaptation_by_ghost_norms_equals_the_per_sequence_path(tiny, texts, eps, monkeypatch):
    """adapt(method="full") clips through ghost norms (eps = inf: a batched backward); the model equals the
    one of the vmap path with the same noise draws."""
    from iclr26.dp_adaptation_privacy import _ghost

    kw = dict(epochs=2, batch_size=4, lr=1e-3, max_length=16, microbatch=3, seed=5)
    fast = dpa.adapt(tiny, texts[:8], "full", eps, **kw)
    monkeypatch.setattr(_ghost, "decomposes", lambda model, params, ids: False)
    if math.isinf(eps):  # the unclipped sum by per-sequence gradients, as before the batched path

        def per_sequence_sum(model, params, ids, mask):
            detached = {k: p.detach() for k, p in params.items()}
            return _dpsgd.clip_and_sum(_dpsgd.per_sample_grads(model, detached, ids, mask), math.inf)

        monkeypatch.setattr(_dpsgd, "summed_grads", per_sequence_sum)
    slow = dpa.adapt(tiny, texts[:8], "full", eps, **kw)
    a, b = fast.model.model.state_dict(), slow.model.model.state_dict()
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=1e-4, atol=1e-6)
    assert fast.batch_sizes == slow.batch_sizes


class _OffsetRMSNorm(torch.nn.Module):
    """An RMSNorm of Gemma's form x̂ (1 + w), with Llama's attribute name: ghost clipping must refuse it."""

    def __init__(self, dim):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(dim))
        self.variance_epsilon = 1e-6

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon) * (1 + self.weight)


class _NormedToyLM(_ToyLM):
    def __init__(self):
        super().__init__()
        self.norm = _OffsetRMSNorm(6)

    def forward(self, input_ids):
        return SimpleNamespace(logits=self.head(self.norm(torch.tanh(self.emb(input_ids)))))


def test_ghost_refuses_an_rmsnorm_it_would_decompose_wrongly():
    from iclr26.dp_adaptation_privacy import _ghost

    model = _NormedToyLM()
    params = {k: p.detach() for k, p in model.named_parameters()}
    ids, mask = _batch()
    assert _ghost.covers(model, params)  # by its name and attribute: the forward pass decides
    assert not _ghost.decomposes(model, params, ids[:1])  # so adapt keeps the per-sequence path
    with pytest.raises(ValueError, match="_OffsetRMSNorm"):
        _ghost.clipped_sum(model, params, ids, mask, 0.3)
    model.norm.weight.data.fill_(1.0)  # x̂ (1 + 1) is not 1 · x̂ either
    assert not _ghost.decomposes(model, params, ids[:1])


class _FlatToyLM(_ToyLM):
    """The head applied to the batch's tokens flattened into rows: no per-sequence rows to decompose."""

    def forward(self, input_ids):
        h = torch.tanh(self.emb(input_ids))
        return SimpleNamespace(logits=self.head(h.reshape(-1, h.shape[-1])).reshape(*h.shape[:2], -1))


def test_ghost_refuses_a_model_that_flattens_the_batch():
    from iclr26.dp_adaptation_privacy import _ghost

    ids, _ = _batch()
    for model, expected in ((_ToyLM(), True), (_FlatToyLM(), False)):
        params = {k: p.detach() for k, p in model.named_parameters()}
        assert _ghost.covers(model, params) and _ghost.decomposes(model, params, ids) is expected
