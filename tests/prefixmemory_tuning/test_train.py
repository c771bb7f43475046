"""The shared training loop, saving/loading, diagnostics and the JSONL loader."""

import json

import numpy as np
import pytest
import torch

from iclr26.prefixmemory_tuning import (
    PrefixMemoryConfig,
    bias_spectrum,
    get_pmt_model,
    load_jsonl,
    load_pmt,
    memory_share,
    save_pmt,
    train_peft,
)
from iclr26.prefixmemory_tuning._train import adapt, batches, completion_loss, encode

from .conftest import PROMPTS

EXAMPLES = [("Story: Mary picks", " Yes"), ("the quick brown", " No"), ("Question: Is she", " Yes")] * 2


def test_loss_masks_prompt_and_padding(tiny):
    enc = encode(tiny.tokenizer, EXAMPLES[:2])
    (batch,) = list(batches(enc, 2, 1, 0, tiny.tokenizer.pad_token_id))
    for ids, labels in enc:
        n_prompt = sum(1 for y in labels if y == -100)
        assert labels[n_prompt:] == ids[n_prompt:] and n_prompt > 0
    assert (batch["labels"][batch["attention_mask"] == 0] == -100).all()
    assert batch["input_ids"][:, 0].ne(tiny.tokenizer.pad_token_id).all()  # right padding


def test_identical_step0_loss_on_the_same_loader(tiny):
    pytest.importorskip("peft")
    enc = encode(tiny.tokenizer, EXAMPLES)
    first = next(batches(enc, 4, 1, 7, tiny.tokenizer.pad_token_id))
    with torch.no_grad():
        base = completion_loss(tiny.model, first)
        losses = {m: completion_loss(adapt(tiny.model, m, 0, None), first) for m in ("pmt", "lora", "full")}
    for m, loss in losses.items():
        assert torch.equal(loss, base), m
    runs = {
        m: train_peft(tiny, EXAMPLES, m, epochs=1, lr=1e-2, batch_size=4, seed=7) for m in ("pmt", "lora")
    }
    assert runs["pmt"].losses[0] == runs["lora"].losses[0] == pytest.approx(base.item(), abs=0)


def test_pmt_training_lowers_the_loss_and_leaves_the_base_untouched(tiny):
    before = [p.clone() for p in tiny.model.parameters()]
    res = train_peft(tiny, EXAMPLES, "pmt", epochs=4, lr=3e-2, batch_size=6, seed=0)
    assert res.losses[-1] < res.losses[0] - 0.5
    assert len(res.step_times) == len(res.step_cpu_times) == 4
    assert all(torch.equal(a, b) for a, b in zip(before, tiny.model.parameters(), strict=True))
    assert tiny.model.config._attn_implementation == "sdpa"


def test_prefix_baseline_trains(tiny):
    pytest.importorskip("peft")
    res = train_peft(tiny, EXAMPLES, "prefix", epochs=3, lr=3e-2, batch_size=6, seed=0)
    assert len(res.losses) == 3 and np.isfinite(res.losses).all()
    assert res.model.peft_config["default"].num_virtual_tokens == 20


def test_train_peft_bad_input(tiny):
    with pytest.raises(ValueError, match="method"):
        train_peft(tiny, EXAMPLES, "adapter")
    with pytest.raises(ValueError, match="examples"):
        train_peft(tiny, [])
    with pytest.raises(ValueError, match="examples"):
        train_peft(tiny, [("a", 3)])
    with pytest.raises(ValueError, match="examples"):
        train_peft(tiny, [("a", "")])
    with pytest.raises(ValueError, match="epochs"):
        train_peft(tiny, EXAMPLES, epochs=0)
    with pytest.raises(ValueError, match="batch_size"):
        train_peft(tiny, EXAMPLES, batch_size=0)
    with pytest.raises(ValueError, match="lr"):
        train_peft(tiny, EXAMPLES, lr=-1.0)


def test_save_load_round_trip(tiny, tmp_path):
    from iclr26.models import tiny_random_model

    enc = tiny.tokenizer(PROMPTS, return_tensors="pt", padding=True)
    wrapped = get_pmt_model(tiny.model, PrefixMemoryConfig(feature_map="mlp", init="normal"), seed=2)
    save_pmt(wrapped, tmp_path / "m.safetensors")
    other = tiny_random_model(0).model.eval()
    loaded = load_pmt(other, tmp_path / "m.safetensors")
    assert loaded.pmt_config == wrapped.pmt_config
    with torch.no_grad():
        assert torch.equal(loaded(**enc).logits, wrapped(**enc).logits)
    wider = tiny_random_model(0, hidden_size=96).model
    with pytest.raises(ValueError, match="d_head"):
        load_pmt(wider, tmp_path / "m.safetensors")
    with pytest.raises(ValueError, match="model"):
        save_pmt(tiny.model, tmp_path / "x.safetensors")


def test_memory_share_and_bias_spectrum(tiny):
    wrapped = get_pmt_model(tiny.model)
    share0 = memory_share(wrapped, tiny.tokenizer, PROMPTS)
    assert share0.shape == (3, 2, 4) and (share0 == 0).all()
    with torch.no_grad():
        wrapped.memory.M.normal_(0, 1.0)
    share = memory_share(wrapped, tiny.tokenizer, PROMPTS)
    assert (share > 0).all()
    eig = bias_spectrum(wrapped, tiny.tokenizer, PROMPTS, layer=1)
    assert eig.shape == (4 * 16,) and (np.diff(eig) <= 1e-12).all() and eig[0] > 0
    with pytest.raises(ValueError, match="prompts"):
        bias_spectrum(wrapped, tiny.tokenizer, ["a"], layer=0)


def test_load_jsonl(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(
        "\n".join(json.dumps({"text": t, "label": y}) for t, y in [("a", "x"), ("b", "y")]) + "\n"
    )
    assert load_jsonl(path) == [("a", "x"), ("b", "y")]
    path.write_text(json.dumps({"text": "a", "label": "x"}))
    with pytest.raises(ValueError, match="single label"):
        load_jsonl(path)
    path.write_text("")
    with pytest.raises(ValueError, match="no examples"):
        load_jsonl(path)
    path.write_text(json.dumps({"text": "a"}))
    with pytest.raises(ValueError, match="label"):
        load_jsonl(path)


@pytest.mark.parametrize("labels", [[" Yes", " No answer"], ["a", "b", "c"]])  # sequences; one token each
def test_label_logprobs_equal_a_per_item_computation(tiny, labels):
    from iclr26.prefixmemory_tuning import label_logprobs

    prompts = ["Story: Mary", "the quick brown fox", "You are a helpful assistant"]
    got = label_logprobs(tiny.model, tiny.tokenizer, prompts, labels, batch_size=3)
    for i, p in enumerate(prompts):
        for j, y in enumerate(labels):
            pi = tiny.tokenizer(p, add_special_tokens=False)["input_ids"]
            yi = tiny.tokenizer(y, add_special_tokens=False)["input_ids"]
            with torch.no_grad():
                logp = torch.log_softmax(tiny.model(input_ids=torch.tensor([pi + yi])).logits[0], -1)
            want = sum(logp[len(pi) - 1 + k, t] for k, t in enumerate(yi))
            assert got[i, j].item() == pytest.approx(want.item(), abs=1e-4)


def test_prefix_attention_mass_equals_the_eager_weights_and_falls_with_length(tiny):
    pytest.importorskip("peft")
    from iclr26.prefixmemory_tuning import prefix_attention_mass

    model = adapt(tiny.model, "prefix", 0, None).eval()
    short, long = "the quick", "the quick brown fox jumps over the lazy dog " * 6
    alpha = prefix_attention_mass(model, tiny.tokenizer, [short, long])
    assert alpha.shape == (2, 2, 4) and ((alpha > 0) & (alpha < 1)).all()
    assert alpha[1].mean() < alpha[0].mean()  # more input keys share the softmax
    assert model.get_base_model().config._attn_implementation == "sdpa"
    ids = tiny.tokenizer(short, return_tensors="pt", add_special_tokens=False)["input_ids"]
    model.get_base_model().set_attn_implementation("eager")
    with torch.no_grad():
        att = model(input_ids=ids, output_attentions=True).attentions[1][0, :, -1]
    assert np.allclose(alpha[0, 1], att[:, :20].sum(-1).numpy(), atol=1e-6)
    assert np.allclose(att.sum(-1).numpy(), 1.0, atol=1e-5)


def test_prefix_bias_is_the_prefix_part_of_the_attention_output(tiny):
    pytest.importorskip("peft")
    from iclr26.prefixmemory_tuning import bias_vectors

    model = adapt(tiny.model, "prefix", 0, None).eval()
    layer, prompt = 1, "Story: Mary picks up the bag"
    self_attn = model.get_base_model().model.layers[layer].self_attn
    seen = {}
    hooks = [
        self_attn.v_proj.register_forward_hook(lambda m, i, o: seen.__setitem__("v", o)),
        self_attn.o_proj.register_forward_hook(lambda m, i, o: seen.__setitem__("o_in", i[0])),
    ]
    model.get_base_model().set_attn_implementation("eager")
    ids = tiny.tokenizer(prompt, return_tensors="pt", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        att = model(input_ids=ids, output_attentions=True).attentions[layer][0, :, :, 20:]
    for h in hooks:
        h.remove()
    model.get_base_model().set_attn_implementation("sdpa")
    v = seen["v"][0].view(ids.shape[1], 2, 16).transpose(0, 1).repeat_interleave(2, dim=0)
    input_part = torch.einsum("hqk,hkd->qhd", att, v).flatten(1)
    bias = bias_vectors(model, tiny.tokenizer, [prompt], layer)
    assert bias.shape == (ids.shape[1], 64)
    assert torch.allclose(bias + input_part, seen["o_in"][0], atol=1e-5)
    assert bias.abs().max() > 1e-3
