"""A small OLMoE-architecture character language model trained here, for quality-vs-capacity sweeps.

No pretrained MoE weights can be downloaded here, so the quality experiment trains a few-million-
parameter ``OlmoeForCausalLM`` on a generated, deterministic corpus that mixes several registers
(prose, play dialogue, arithmetic, code, dates) in unequal proportions. Different registers favour
different experts, so routing is non-uniform, which is the regime where capacity limits matter.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from ..store import atomic_write_bytes

_NOUNS = (
    "king queen lord lady knight fool crown sword heart night day sea storm rose ghost letter ring "
    "castle forest river field horse soldier father daughter son brother friend enemy moon star "
    "grave tongue honour blood fortune time world love death war peace heaven earth fire"
).split()
_ADJS = "old young noble gentle cruel sweet bitter dark bright false true proud poor fair wild".split()
_VERBS = (
    "loves hates sees finds keeps takes gives seeks fears follows betrays serves praises calls "
    "remembers forgets crowns kills saves"
).split()
_PREPS = "in under near beyond with against before after".split()
_NAMES = "HAMLET OPHELIA LEAR CORDELIA MACBETH BANQUO ROMEO JULIET PORTIA BRUTUS".split()
_EXCL = "alas o fie marry hark peace away come".split()
_VARS = "a b c x y z n m i j".split()


def _zipf_choice(rng: np.random.Generator, words: list[str]) -> str:
    ranks = np.arange(1, len(words) + 1, dtype=np.float64)
    p = 1.0 / ranks
    return words[rng.choice(len(words), p=p / p.sum())]


def _noun_phrase(rng: np.random.Generator) -> str:
    det = "the" if rng.random() < 0.6 else ("a" if rng.random() < 0.5 else "my")
    adj = f"{_zipf_choice(rng, _ADJS)} " if rng.random() < 0.4 else ""
    return f"{det} {adj}{_zipf_choice(rng, _NOUNS)}"


def _prose(rng: np.random.Generator) -> str:
    s = f"{_noun_phrase(rng)} {_zipf_choice(rng, _VERBS)} {_noun_phrase(rng)}"
    if rng.random() < 0.4:
        s += f" {_zipf_choice(rng, _PREPS)} {_noun_phrase(rng)}"
    return s + "."


def _dialogue(rng: np.random.Generator) -> str:
    line = f"{_zipf_choice(rng, _EXCL)}, {_prose(rng)[:-1]}"
    return f"{_zipf_choice(rng, _NAMES)}: {line[0].upper()}{line[1:]}!"


def _arithmetic(rng: np.random.Generator) -> str:
    a, b = (int(v) for v in rng.integers(0, 100, size=2))
    if rng.random() < 0.5:
        return f"{a}+{b}={a + b}."
    hi, lo = max(a, b), min(a, b)
    return f"{hi}-{lo}={hi - lo}."


def _code(rng: np.random.Generator) -> str:
    v, w = rng.choice(_VARS, size=2, replace=False)
    c = int(rng.integers(1, 10))
    op = "+-*"[int(rng.integers(0, 3))]
    if rng.random() < 0.5:
        return f"let {v} = {w} {op} {c};"
    return f"if ({v} > {c}) {{ {w} = {v} {op} 1; }}"


def _dates(rng: np.random.Generator) -> str:
    y, m, d = int(rng.integers(1564, 1617)), int(rng.integers(1, 13)), int(rng.integers(1, 29))
    return f"{y}-{m:02d}-{d:02d}"


_REGISTERS: tuple[tuple[Callable[[np.random.Generator], str], float, str], ...] = (
    (_prose, 0.42, " "),
    (_dialogue, 0.22, "\n"),
    (_arithmetic, 0.14, " "),
    (_code, 0.12, "\n"),
    (_dates, 0.10, ", "),
)


def make_corpus(n_chars: int, seed: int = 0) -> str:
    """A deterministic generated corpus of about ``n_chars`` characters.

    Paragraphs of 3-8 units from one register at a time, registers drawn with probabilities
    0.42 prose, 0.22 dialogue, 0.14 arithmetic (correct sums/differences), 0.12 code, 0.10 dates.
    """
    if n_chars < 1:
        raise ValueError(f"n_chars must be >= 1, got {n_chars}")
    rng = np.random.default_rng([seed, 7])
    probs = np.asarray([r[1] for r in _REGISTERS])
    parts: list[str] = []
    total = 0
    while total < n_chars:
        fn, _, sep = _REGISTERS[int(rng.choice(len(_REGISTERS), p=probs))]
        para = sep.join(fn(rng) for _ in range(int(rng.integers(3, 9)))) + "\n\n"
        parts.append(para)
        total += len(para)
    return "".join(parts)[:n_chars]


class CharVocab:
    """Character vocabulary: ``encode(text) -> LongTensor``, ``decode(ids) -> str``."""

    def __init__(self, text: str):
        if not text:
            raise ValueError("text must be non-empty")
        self.chars = sorted(set(text))
        self._index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> torch.Tensor:
        try:
            return torch.tensor([self._index[c] for c in text], dtype=torch.long)
        except KeyError as err:
            raise ValueError(f"character {err.args[0]!r} is not in the vocabulary") from None

    def decode(self, ids: Iterable[int]) -> str:
        return "".join(self.chars[int(i)] for i in ids)


@dataclass(frozen=True)
class TinyMoEConfig:
    """Size and training schedule of the small OLMoE-architecture LM (defaults: about 1.8 M parameters)."""

    hidden_size: int = 128
    intermediate_size: int = 128
    num_layers: int = 2
    num_heads: int = 4
    num_experts: int = 16
    top_k: int = 2
    seq_len: int = 128
    batch_size: int = 16
    steps: int = 400
    lr: float = 3e-3
    aux_loss_coef: float = 0.0
    experts_implementation: str = "eager"

    def hash(self, extra: dict | None = None) -> str:
        payload = json.dumps({**asdict(self), **(extra or {})}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


def build_olmoe(vocab_size: int, config: TinyMoEConfig, seed: int = 0) -> torch.nn.Module:
    """A randomly initialised ``OlmoeForCausalLM`` of the given size (transformers is required)."""
    from transformers import OlmoeConfig, OlmoeForCausalLM

    cfg = OlmoeConfig(
        vocab_size=vocab_size,
        hidden_size=config.hidden_size,
        intermediate_size=config.intermediate_size,
        num_hidden_layers=config.num_layers,
        num_attention_heads=config.num_heads,
        num_key_value_heads=config.num_heads,
        num_experts=config.num_experts,
        num_experts_per_tok=config.top_k,
        max_position_embeddings=max(256, config.seq_len),
        router_aux_loss_coef=config.aux_loss_coef,
        output_router_logits=config.aux_loss_coef > 0,
        tie_word_embeddings=True,
        pad_token_id=None,
        bos_token_id=None,
        eos_token_id=None,
        experts_implementation=config.experts_implementation,
    )
    torch.manual_seed(seed)
    return OlmoeForCausalLM(cfg)


def _batches(ids: torch.Tensor, seq_len: int, batch_size: int, gen: torch.Generator) -> torch.Tensor:
    starts = torch.randint(0, ids.numel() - seq_len - 1, (batch_size,), generator=gen)
    return torch.stack([ids[s : s + seq_len + 1] for s in starts.tolist()])


def train_moe_lm(
    ids: torch.Tensor,
    vocab_size: int,
    config: TinyMoEConfig = TinyMoEConfig(),  # noqa: B008 - frozen dataclass
    seed: int = 0,
    cache_dir: str | Path | None = None,
    progress: Callable[[Iterable], Iterable] | None = None,
) -> tuple[torch.nn.Module, dict]:
    """Train the small OLMoE LM on token ids (next-token cross-entropy, AdamW, cosine schedule).

    With ``cache_dir`` the trained weights are stored as ``olmoe-<hash>.pt`` keyed by the config, seed,
    vocabulary size and data, and reused on the next call. Returns ``(model, info)`` where ``info``
    holds the final training loss, steps, parameter count and whether the cache was used.
    """
    ids = torch.as_tensor(ids).long().reshape(-1)
    if ids.numel() <= config.seq_len + 1:
        raise ValueError(
            f"need more than seq_len + 1 = {config.seq_len + 1} training tokens, got {ids.numel()}"
        )
    model = build_olmoe(vocab_size, config, seed)
    n_params = sum(p.numel() for p in model.parameters())
    data_hash = hashlib.sha256(ids.numpy().tobytes()).hexdigest()[:16]
    key = config.hash({"seed": seed, "vocab": vocab_size, "data": data_hash})
    path = Path(cache_dir) / f"olmoe-{key}.pt" if cache_dir is not None else None
    if path is not None and path.exists():
        blob = torch.load(path, map_location="cpu", weights_only=True)
        model.load_state_dict(blob["state_dict"])
        model.eval()
        return model, {**blob["info"], "cached": True}
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=0.01, betas=(0.9, 0.95))
    warmup = max(1, config.steps // 20)

    def lr_at(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        frac = (step - warmup) / max(1, config.steps - warmup)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    model.train()
    steps = range(config.steps)
    losses = []
    for _ in progress(steps) if progress is not None else steps:
        batch = _batches(ids, config.seq_len, config.batch_size, gen)
        out = model(input_ids=batch[:, :-1], labels=batch[:, :-1])
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        losses.append(float(out.loss.detach()))
    model.eval()
    info = {
        "final_train_loss": float(np.mean(losses[-20:])),
        "steps": config.steps,
        "parameters": n_params,
        "cached": False,
    }
    if path is not None:
        buf = io.BytesIO()
        torch.save({"state_dict": model.state_dict(), "info": info}, buf)
        atomic_write_bytes(path, buf.getvalue())
    return model, info


@torch.no_grad()
def evaluate_lm(
    model: torch.nn.Module, ids: torch.Tensor, seq_len: int = 128, batch_size: int = 8
) -> dict[str, float]:
    """Perplexity and next-token accuracy on ``ids`` cut into non-overlapping windows.

    Each forward call sees ``batch_size * seq_len`` tokens (the ``T`` of the capacity formula). Besides
    the totals, the per-call summed negative log-likelihood, correct predictions and token counts are
    returned (``nll_per_call``, ``correct_per_call``, ``tokens_per_call``): the call is the unit a
    capacity limit acts on, and the unit to resample for an interval.
    """
    ids = torch.as_tensor(ids).long().reshape(-1)
    n_win = (ids.numel() - 1) // seq_len
    if n_win < 1:
        raise ValueError(f"need more than seq_len={seq_len} evaluation tokens")
    x = ids[: n_win * seq_len].reshape(n_win, seq_len)
    y = ids[1 : n_win * seq_len + 1].reshape(n_win, seq_len)
    nlls, corrects, counts = [], [], []
    for i in range(0, n_win, batch_size):
        logits = model(input_ids=x[i : i + batch_size]).logits.float()
        target = y[i : i + batch_size]
        nlls.append(
            float(torch.nn.functional.cross_entropy(logits.flatten(0, 1), target.flatten(), reduction="sum"))
        )
        corrects.append(int((logits.argmax(-1) == target).sum()))
        counts.append(target.numel())
    nll, count = sum(nlls), sum(counts)
    return {
        "loss": nll / count,
        "perplexity": math.exp(nll / count),
        "accuracy": sum(corrects) / count,
        "nll_per_call": nlls,
        "correct_per_call": corrects,
        "tokens_per_call": counts,
    }
