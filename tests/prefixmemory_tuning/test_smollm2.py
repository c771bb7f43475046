"""Bit-exactness at M = 0 on the embedded SmolLM2-135M (skipped without it)."""

import pytest
import torch

from iclr26.prefixmemory_tuning import PrefixMemoryConfig, get_pmt_model


@pytest.fixture(scope="module")
def smollm2():
    from iclr26.models import ModelNotAvailableError, load_embedded_model
    from iclr26.runtime import set_torch_threads

    set_torch_threads()
    try:
        hf = load_embedded_model()
    except ModelNotAvailableError as err:
        pytest.skip(str(err))
    hf.model.eval()
    hf.tokenizer.padding_side = "left"
    return hf


def test_zero_memory_is_bit_exact_on_smollm2(smollm2):
    enc = smollm2.tokenizer(["The capital of France is", "Hi"], return_tensors="pt", padding=True)
    with torch.no_grad():
        base = smollm2.model(**enc).logits
        wrapped = get_pmt_model(smollm2.model, PrefixMemoryConfig(query="pre_rope"))
        assert torch.equal(wrapped(**enc).logits, base)
    assert wrapped.memory.M.shape == (30, 9, 64, 64)
