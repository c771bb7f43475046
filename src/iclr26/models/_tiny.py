"""A tiny randomly initialised Llama with a small byte-level BPE tokenizer: fast tests, no files needed."""

from __future__ import annotations

import os
from pathlib import Path

from ._hf import HFModel, check_dtype

CHAT_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
    "'<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

_CORPUS = [
    "Given the following story, answer the question by giving the correct answer choice, (A) or (B).",
    "Story: The bag of chips has mold in it. Mary picks up the bag and walks to the cashier.",
    "Question: Is she likely to be aware? (A) Yes (B) No. What is the correct answer? Respond with just",
    "The behavior can be best described as: (A) Reasonable (B) Not reasonable. Therefore, the answer is:",
    "the quick brown fox jumps over the lazy dog 0123456789 .,;:!?'\"()[]{}<>-_/+*=&%$#@",
    "You are a helpful assistant. system user assistant Think step by step to arrive at an answer.",
]


def build_tiny_tokenizer(vocab_size: int = 384):
    """A byte-level BPE tokenizer trained (deterministically) on a few fixed sentences."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_CORPUS * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
        unk_token=None,
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def tiny_random_model(
    seed: int = 0,
    *,
    hidden_size: int = 64,
    num_layers: int = 2,
    initializer_range: float = 0.2,
    save_to: str | os.PathLike | None = None,
    device: str | None = None,
    dtype: str | None = None,
) -> HFModel:
    """A randomly initialised tiny Llama (``LlamaForCausalLM``) wrapped as an :class:`HFModel`.

    Its outputs are meaningless but deterministic for a ``seed``; it exercises every code path of a
    real model (tokenizer, chat template, left padding, KV cache) in milliseconds. ``save_to`` writes
    it as a local model folder (loadable with :meth:`HFModel.from_pretrained`), in float32; ``dtype``
    (see :data:`DTYPES`) converts the returned model after that.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    check_dtype(dtype)
    tokenizer = build_tiny_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        initializer_range=initializer_range,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    state = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    finally:
        torch.random.set_rng_state(state)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    name = f"tiny-random-llama-h{hidden_size}-l{num_layers}-s{seed}"
    if save_to is not None:
        path = Path(save_to)
        path.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(path)
        tokenizer.save_pretrained(path)
    if dtype is not None:
        model = model.to(getattr(torch, dtype))
    return HFModel(model, tokenizer, name=name, device=device)
