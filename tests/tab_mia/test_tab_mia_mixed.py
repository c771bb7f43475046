"""Mixed-precision LoRA fine-tuning (``compute_dtype``): the fused dropout + projection, its masks, the
shared casts, the padding, and training against full precision."""

import numpy as np
import pytest
import torch

from iclr26.tab_mia import _lora, finetune_lora, lora_finetuned, mia_scores

TEXTS = [f"age: {20 + i} | job: clerk | income: <=50K" for i in range(6)]


def _params(hf):
    return torch.cat([p.detach().flatten() for p in hf.model.parameters()])


def test_drop_project_is_dropout_then_projection_with_exact_gradients():
    torch.manual_seed(0)
    x = torch.randn(2, 5, 7, dtype=torch.float64, requires_grad=True)
    a = torch.randn(3, 7, dtype=torch.float64, requires_grad=True)
    keep = (torch.rand(2, 5, 7) > 0.25).double()
    apply = _lora._drop_project_function().apply
    torch.testing.assert_close(apply(x, a, keep, 1 / 0.75), (x * keep / 0.75) @ a.T)
    torch.testing.assert_close(apply(x, a, None, 1.0), x @ a.T)
    assert torch.autograd.gradcheck(lambda x, a: apply(x, a, keep, 1 / 0.75), (x, a))
    assert torch.autograd.gradcheck(lambda x, a: apply(x, a, None, 1.0), (x, a))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_keep_mask_rate_values_and_seed(dtype):
    mask = _lora.MixedPrecision(dtype, seed=0).keep_mask((300, 1000), 0.05)
    assert mask.dtype == dtype and mask.shape == (300, 1000)
    assert set(mask.unique().tolist()) == {0.0, 1.0}
    dropped = 1 - mask.float().mean().item()
    assert abs(dropped - 0.05) < 5 * np.sqrt(0.05 * 0.95 / mask.numel())  # 5 binomial sd
    assert torch.equal(mask, _lora.MixedPrecision(dtype, seed=0).keep_mask((300, 1000), 0.05))
    assert not torch.equal(mask, _lora.MixedPrecision(dtype, seed=1).keep_mask((300, 1000), 0.05))


def test_an_input_is_cast_once_until_it_changes():
    state = _lora.MixedPrecision(torch.bfloat16, seed=0)
    x = torch.randn(4, 3)
    low = state.cast(x)
    assert low.dtype == torch.bfloat16 and state.cast(x) is low
    assert state.cast(x.clone()) is not low  # another tensor
    y = state.cast(x)
    x.add_(1.0)  # modified in place: cast again
    assert not torch.equal(state.cast(x), y)
    state.release()
    assert state._low is None


def test_padding_to_a_multiple_changes_no_loss(tiny):
    net, tok = tiny.model, tiny.tokenizer
    rows = [tok(TEXTS[0])["input_ids"], tok(TEXTS[1][:20])["input_ids"]]
    ids, labels = _lora._pad(rows, 0, "cpu")
    ids64, labels64 = _lora._pad(rows, 0, "cpu", 64)
    width = ids.shape[1]
    assert width % 64 and ids64.shape == (2, 64 * -(-width // 64)) and (labels64[:, width:] == -100).all()
    torch.testing.assert_close(ids64[:, :width], ids)
    net.eval()
    with torch.no_grad():
        torch.testing.assert_close(_lora.head_loss(net, ids64, labels64), _lora.head_loss(net, ids, labels))


def test_mixed_precision_training_is_deterministic_and_near_full_precision(tiny):
    before = _params(tiny).clone()
    full = finetune_lora(tiny, TEXTS, epochs=4, lr=3e-3, warmup=2, seed=1)
    mixed = finetune_lora(tiny, TEXTS, epochs=4, lr=3e-3, warmup=2, seed=1, compute_dtype="bfloat16")
    again = finetune_lora(tiny, TEXTS, epochs=4, lr=3e-3, warmup=2, seed=1, compute_dtype="bfloat16")
    other = finetune_lora(tiny, TEXTS, epochs=4, lr=3e-3, warmup=2, seed=2, compute_dtype="bfloat16")
    assert torch.equal(_params(tiny), before)
    assert torch.equal(_params(mixed), _params(again)) and not torch.equal(_params(mixed), _params(other))
    # step 0: B = 0, so the adapters (and their dropout) add nothing: only bfloat16 rounding differs
    assert mixed.train_losses[0] == pytest.approx(full.train_losses[0], rel=1e-2)
    assert mixed.train_losses[0] != full.train_losses[0]
    np.testing.assert_allclose(mixed.train_losses, full.train_losses, rtol=0.05)
    ppl = {k: mia_scores(m, TEXTS)["ppl"].to_numpy() for k, m in (("base", tiny), ("mixed", mixed))}
    assert np.all(ppl["mixed"] < ppl["base"])
    assert mixed.model.lm_head.weight.dtype == torch.float32  # merged in full precision


def test_in_place_mixed_adapters_equal_the_merged_copy_and_leave_nothing(tiny):
    params = [p.detach().clone() for p in tiny.model.parameters()]
    merged = finetune_lora(tiny, TEXTS, epochs=2, lr=3e-3, warmup=2, seed=1, compute_dtype="bfloat16")
    with lora_finetuned(tiny, TEXTS, epochs=2, lr=3e-3, warmup=2, seed=1, compute_dtype="bfloat16") as tuned:
        assert tuned.train_losses == merged.train_losses
        layers = [m for m in tuned.model.modules() if hasattr(m, "mixed")]
        assert layers and all(m.mixed is None and m.low is None for m in layers)  # scoring in fp32
        np.testing.assert_allclose(
            mia_scores(tuned, TEXTS).to_numpy(), mia_scores(merged, TEXTS).to_numpy(), rtol=1e-4
        )
    assert all(torch.equal(p, q) for p, q in zip(tiny.model.parameters(), params))


def test_bad_compute_dtype(tiny):
    for bad in ("float64", "fp16", torch.bfloat16):
        with pytest.raises(ValueError, match="compute_dtype"):
            finetune_lora(tiny, TEXTS, epochs=1, compute_dtype=bad)


def test_float16_training_runs_and_learns(tiny):
    tuned = finetune_lora(tiny, TEXTS, epochs=4, lr=3e-3, warmup=2, seed=0, compute_dtype="float16")
    assert np.isfinite(tuned.train_losses).all()
    after, before = mia_scores(tuned, TEXTS)["ppl"].to_numpy(), mia_scores(tiny, TEXTS)["ppl"].to_numpy()
    assert np.all(after < before)
