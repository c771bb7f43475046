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
