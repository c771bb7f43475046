import contextlib

import numpy as np
import pandas as pd
import pytest
import torch

from iclr26.tab_mia import finetune_lora, lora_finetuned, mia_scores
from iclr26.tab_mia._lora import _lora_layer_class, lr_at

TEXTS = [f"age: {20 + i} | job: clerk | income: <=50K" for i in range(6)]


def _params(hf):
    return torch.cat([p.detach().flatten() for p in hf.model.parameters()])


def test_deterministic_and_base_untouched(tiny):
    before = _params(tiny).clone()
    a = finetune_lora(tiny, TEXTS, epochs=2, warmup=2, seed=3)
    b = finetune_lora(tiny, TEXTS, epochs=2, warmup=2, seed=3)
    c = finetune_lora(tiny, TEXTS, epochs=2, warmup=2, seed=4)
    assert torch.equal(_params(tiny), before)
    assert torch.equal(_params(a), _params(b)) and not torch.equal(_params(a), _params(c))
    assert len(a.train_losses) == 2 * 3  # 6 texts, batch 2, 2 epochs


def test_training_lowers_member_loss_and_unties_lm_head(tiny):
    tuned = finetune_lora(tiny, TEXTS, epochs=8, lr=3e-3, warmup=2, seed=0)
    before = mia_scores(tiny, TEXTS)["ppl"].to_numpy()
    after = mia_scores(tuned, TEXTS)["ppl"].to_numpy()
    assert np.all(after < before)
    assert tuned.model.lm_head.weight.data_ptr() != tuned.model.model.embed_tokens.weight.data_ptr()
    assert torch.equal(tuned.model.model.embed_tokens.weight, tiny.model.model.embed_tokens.weight)


def test_in_place_adapters_equal_merged_copy_and_are_removed(tiny):
    before = mia_scores(tiny, TEXTS)
    params = [p.detach().clone() for p in tiny.model.parameters()]
    flags = [p.requires_grad for p in tiny.model.parameters()]
    merged = finetune_lora(tiny, TEXTS, epochs=2, lr=3e-3, warmup=2, seed=1)
    with lora_finetuned(tiny, TEXTS, epochs=2, lr=3e-3, warmup=2, seed=1) as tuned:
        assert tuned.model is tiny.model  # no copy of the base weights
        assert tuned.train_losses == pytest.approx(merged.train_losses, rel=1e-6)
        inside = mia_scores(tuned, TEXTS)
    np.testing.assert_allclose(inside.to_numpy(), mia_scores(merged, TEXTS).to_numpy(), rtol=1e-4)
    assert not np.allclose(inside["ppl"], before["ppl"])
    assert all(torch.equal(p, q) for p, q in zip(tiny.model.parameters(), params))
    assert len(list(tiny.model.parameters())) == len(params)
    assert not tiny.model.training and [p.requires_grad for p in tiny.model.parameters()] == flags
    pd.testing.assert_frame_equal(mia_scores(tiny, TEXTS), before)


def test_in_place_adapters_removed_after_an_error(tiny):
    n_modules = len(list(tiny.model.modules()))
    with pytest.raises(RuntimeError, match="boom"), lora_finetuned(tiny, TEXTS, epochs=1, warmup=0):
        raise RuntimeError("boom")
    assert len(list(tiny.model.modules())) == n_modules
    with pytest.raises(ValueError, match="epochs"), lora_finetuned(tiny, TEXTS, epochs=0):
        pass


def test_merge_equals_adapter():
    torch.manual_seed(0)
    base = torch.nn.Linear(5, 4)
    layer = _lora_layer_class()(base, r=2, alpha=4, dropout=0.0)
    torch.nn.init.normal_(layer.B)
    x = torch.randn(3, 5)
    torch.testing.assert_close(layer(x), layer.merged()(x))


def test_schedule_equals_transformers():
    from transformers import get_cosine_schedule_with_warmup

    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=3e-4)
    sched = get_cosine_schedule_with_warmup(opt, 20, 50)
    for step in range(50):
        assert lr_at(step, 50, 20, 3e-4, "cosine") == pytest.approx(opt.param_groups[0]["lr"], abs=1e-15)
        opt.step()
        sched.step()


def test_bad_input(tiny):
    for kwargs, name in (
        ({"epochs": 0}, "epochs"),
        ({"batch_size": 0}, "batch_size"),
        ({"lr": -1.0}, "lr"),
        ({"r": 0}, "r"),
        ({"dropout": 1.0}, "dropout"),
        ({"schedule": "step"}, "schedule"),
        ({"targets": ("nope",)}, "targets"),
        ({"targets": "q_proj"}, "targets"),
    ):
        with pytest.raises(ValueError, match=name):
            finetune_lora(tiny, TEXTS, **kwargs)
    with pytest.raises(ValueError, match="texts"):
        finetune_lora(tiny, [])
    short = next(c for c in "abcdefgh" if len(tiny.tokenizer(c)["input_ids"]) < 2)
    with pytest.raises(ValueError, match=r"texts\[1\] has 1 token"):  # was a NaN loss
        finetune_lora(tiny, [TEXTS[0], short])


def test_head_loss_equals_the_models_loss_and_gradients(tiny, monkeypatch):
    """The chunked head loss (no batch x length x vocab logits) against ``model(..., labels=...).loss``:
    same value and adapter gradients, with a LoRA head, dropout on, padding and a chunk boundary."""
    from iclr26.tab_mia import _lora

    monkeypatch.setattr(_lora, "HEAD_CHUNK", 16)
    net, tok = tiny.model, tiny.tokenizer
    flags, was_training = [p.requires_grad for p in net.parameters()], net.training
    torch.manual_seed(0)
    layers = _lora.attach(net, _lora.AUTHORS_TARGETS, 4, 8, 0.05)
    try:
        for layer in layers.values():
            torch.nn.init.normal_(layer.B, std=0.02)
        rows = [tok(TEXTS[0] * 3)["input_ids"], tok(TEXTS[1])["input_ids"]]
        ids, labels = _lora._pad(rows, 0, "cpu")
        params = [p for layer in layers.values() for p in (layer.A, layer.B)]
        net.train()
        out = []
        for loss_fn in (
            lambda: net(input_ids=ids, labels=labels).loss,
            lambda: _lora.head_loss(net, ids, labels),
        ):
            torch.manual_seed(5)  # the same dropout draws
            loss = loss_fn()
            out.append((loss.detach(), torch.autograd.grad(loss, params)))
        (ref, ref_grads), (ours, grads) = out
        assert ids.shape[1] > 1 and _lora.HEAD_CHUNK < sum(map(len, rows))  # more than one chunk
        torch.testing.assert_close(ours, ref, rtol=1e-5, atol=0)
        for g, r in zip(grads, ref_grads, strict=True):
            torch.testing.assert_close(g, r, rtol=1e-4, atol=1e-7)
    finally:
        _lora.detach(net, layers)
        for p, flag in zip(net.parameters(), flags):
            p.requires_grad_(flag)
        net.train(was_training)


def test_training_equals_training_with_the_models_loss(tiny, monkeypatch):
    """Fine-tuning with the chunked head loss and the glibc heap setting gives the step losses and the
    merged weights of fine-tuning through the model's own loss (the code before both changes)."""
    from iclr26.tab_mia import _lora

    ours = finetune_lora(tiny, TEXTS, epochs=2, lr=3e-3, warmup=2, seed=1)
    monkeypatch.setattr(
        _lora, "head_loss", lambda model, ids, labels: model(input_ids=ids, labels=labels).loss
    )
    monkeypatch.setattr(_lora, "_heap_without_holes", contextlib.nullcontext)
    ref = finetune_lora(tiny, TEXTS, epochs=2, lr=3e-3, warmup=2, seed=1)
    assert ours.train_losses == pytest.approx(ref.train_losses, rel=1e-5)
    torch.testing.assert_close(_params(ours), _params(ref), rtol=1e-4, atol=1e-6)


def test_head_loss_leaves_other_architectures_to_their_own_loss(tiny, monkeypatch):
    """An architecture that may scale or cap its logits after the output layer (here the tiny Llama
    labelled as Cohere) gets the model's own loss, bit for bit."""
    from iclr26.tab_mia import _lora

    net, tok = tiny.model, tiny.tokenizer
    ids, labels = _lora._pad([tok(TEXTS[0])["input_ids"], tok(TEXTS[1])["input_ids"]], 0, "cpu")
    monkeypatch.setattr(net.config, "model_type", "cohere")
    with torch.no_grad():
        assert torch.equal(_lora.head_loss(net, ids, labels), net(input_ids=ids, labels=labels).loss)
    monkeypatch.setattr(_lora, "_head_loss_function", lambda: pytest.fail("the chunked loss ran"))
    with torch.no_grad():
        _lora.head_loss(net, ids, labels)
