"""A tiny Llama pretrained here on corpus S: the small-scale base model of the headline experiment.

A byte-level BPE tokenizer (HF ``tokenizers``) trained on S, then a 2-layer Llama trained from scratch
with AdamW (warm-up, cosine schedule, no DP) on random batches of S. Deterministic for a seed on one
thread. :func:`train_lm` is also the controlled continued pretraining of SmolLM2 at medium scale.
"""

from __future__ import annotations

import math

import torch

from . import _dpsgd


def train_tokenizer(texts: list[str], vocab_size: int):
    """A byte-level BPE ``PreTrainedTokenizerFast`` of ``vocab_size`` tokens trained on ``texts``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|endoftext|>", pad_token="<|endoftext|>", bos_token=None
    )


def pretrain(
    texts: list[str],
    *,
    vocab_size: int,
    hidden_size: int,
    layers: int,
    steps: int,
    batch_size: int,
    max_length: int,
    lr: float,
    seed: int,
):
    """(tokenizer, ``LlamaForCausalLM``, per-step losses) after ``steps`` AdamW steps on ``texts``."""
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = train_tokenizer(texts, vocab_size)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=4 * hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4 * max_length,
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
    losses = train_lm(model, tokenizer, texts, steps, batch_size, max_length, lr, seed)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return tokenizer, model, losses


def train_lm(
    model, tokenizer, texts: list[str], steps: int, batch_size: int, max_length: int, lr: float, seed: int
):
    """``steps`` AdamW steps (warm-up then cosine) of next-token loss on random batches of ``texts``.

    Used to pretrain the tiny Llama and for the controlled continued pretraining of SmolLM2 (medium).
    Returns the per-step losses; ``model`` is left in eval mode.
    """
    gen = torch.Generator().manual_seed(seed)
    ids, mask = _dpsgd.encode(tokenizer, texts, max_length)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    warmup = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * s / steps))
    )
    model.train()
    losses = []
    for _ in range(steps):
        take = torch.randint(0, len(texts), (batch_size,), generator=gen)
        b_ids, b_mask = ids[take], mask[take]
        logits = model(input_ids=b_ids).logits[:, :-1]
        m = b_mask[:, 1:].float()
        nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), b_ids[:, 1:], reduction="none")
        loss = (nll * m).sum() / m.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.eval()
    return losses
