"""PrefixMemory-Tuning (arXiv 2506.13674): ``o = Attn(q, K, V) + φ(q)ᵀ M`` as a PEFT method.

Public API in peft's conventions: :class:`PrefixMemoryConfig`, :func:`get_pmt_model`,
:func:`save_pmt` / :func:`load_pmt`; one training loop shared with the peft baselines
(:func:`train_peft`) and label scoring for generative classification
(:func:`label_logprobs`); the paper's diagnostics (:func:`memory_share`,
:func:`prefix_attention_mass`, :func:`bias_spectrum`);
a JSONL loader for users' classification data (:func:`load_jsonl`) and three embedded word tasks built
from package data (:func:`entity_type_task`, :func:`language_id_task`, :func:`word_sentiment_task`).
"""

from __future__ import annotations

from ._data import load_jsonl
from ._diagnostics import bias_spectrum, bias_vectors, memory_share, prefix_attention_mass
from ._eval import label_logprobs
from ._memory import PrefixMemory, PrefixMemoryConfig
from ._model import PMTModel, get_pmt_model, load_pmt, save_pmt
from ._tasks import WordTask, entity_type_task, language_id_task, word_sentiment_task
from ._train import METHODS, TrainResult, train

__all__ = [
    "PMTModel",
    "PrefixMemory",
    "PrefixMemoryConfig",
    "TrainResult",
    "WordTask",
    "bias_spectrum",
    "bias_vectors",
    "entity_type_task",
    "get_pmt_model",
    "label_logprobs",
    "language_id_task",
    "load_jsonl",
    "load_pmt",
    "memory_share",
    "prefix_attention_mass",
    "save_pmt",
    "train_peft",
    "word_sentiment_task",
]


def train_peft(
    model,
    examples,
    method: str = "pmt",
    *,
    epochs: int = 1,
    lr: float = 1e-3,
    batch_size: int = 8,
    seed: int = 0,
    pmt_config: PrefixMemoryConfig | None = None,
) -> TrainResult:
    """Adapt a copy of ``model`` on ``(prompt, completion)`` pairs with one of four methods.

    Parameters
    ----------
    model:
        An ``iclr26.models.HFModel`` (its ``.model`` is copied, never changed; its ``.tokenizer`` encodes).
    examples:
        Non-empty sequence of ``(prompt, completion)`` string pairs; the loss is on the completion only.
    method:
        ``"pmt"`` (:func:`get_pmt_model` with ``pmt_config``), ``"prefix"`` (peft Prefix-Tuning,
        20 virtual tokens), ``"lora"`` (peft LoRA r=8, alpha=16, all linear layers) or ``"full"``.
    epochs, lr, batch_size, seed:
        AdamW (no weight decay) for ``epochs`` passes in a seeded order, ``batch_size`` examples a step.

    Returns
    -------
    TrainResult with the adapted model, per-step losses, per-step wall times and per-step CPU
    times of this process.
    """
    from iclr26.validation import check_in, check_int

    check_in(method, METHODS, "method")
    check_int(epochs, "epochs", minimum=1)
    check_int(batch_size, "batch_size", minimum=1)
    if not (isinstance(lr, int | float) and lr > 0):
        raise ValueError(f"lr must be a positive number, got {lr!r}")
    examples = list(examples)
    if not examples:
        raise ValueError("examples must not be empty")
    if not all(
        isinstance(e, tuple | list) and len(e) == 2 and all(isinstance(s, str) for s in e) for e in examples
    ):
        raise ValueError("examples must be (prompt, completion) string pairs")
    if not any(c for _, c in examples):
        raise ValueError("examples must have at least one non-empty completion")
    return train(model.model, model.tokenizer, examples, method, epochs, lr, batch_size, seed, pmt_config)
