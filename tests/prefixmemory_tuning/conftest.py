import pytest


@pytest.fixture
def tiny():
    from iclr26.models import tiny_random_model

    hf = tiny_random_model(0)
    hf.model.eval()
    hf.tokenizer.padding_side = "left"
    return hf


PROMPTS = ["the quick brown fox jumps", "Story: Mary", "You are a helpful assistant. Think step by step"]
