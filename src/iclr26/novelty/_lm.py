"""Tiny word-level causal Transformers trained from scratch on the training part of the corpus.

Each size is trained for the same number of steps and batch (fixed compute per size: larger models
spend more FLOPs on the same tokens). Trained weights are cached by the hash of their configuration and
data (``$ICLR26_CACHE/models/novelty-lm-<hash>.pt``), written atomically, so only the first run trains.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..models._identity import cache_base

_FORMAT = 1
UNK, SEP = "<unk>", "<sep>"


@dataclass(frozen=True)
class LMConfig:
    """Architecture and training recipe (every field is part of the cache key)."""

    d_model: int
    n_layers: int
    n_heads: int = 2
    context: int = 32
    vocab_size: int = 4000
    steps: int = 300
    batch: int = 32
    lr: float = 3e-3
    seed: int = 0

    def key(self, data_digest: str) -> str:
        blob = json.dumps({**asdict(self), "data": data_digest, "format": _FORMAT}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


def build_vocab(docs: list[list[str]], size: int) -> list[str]:
    """The ``size - 2`` most frequent units (ties broken alphabetically), then ``<unk>``, ``<sep>``."""
    counts = Counter(u for d in docs for u in d)
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[: size - 2]
    return [u for u, _ in top] + [UNK, SEP]


def encode(units: list[str], vocab: list[str]) -> np.ndarray:
    ids = {u: i for i, u in enumerate(vocab)}
    unk = ids[UNK]
    return np.fromiter((ids.get(u, unk) for u in units), np.int64, len(units))


def stream(docs: list[list[str]], vocab: list[str]) -> np.ndarray:
    """All documents as one id stream, ``<sep>`` between them, shape ``(total,)``."""
    sep = np.array([vocab.index(SEP)])
    return np.concatenate([np.concatenate([encode(d, vocab), sep]) for d in docs])


def _model(cfg: LMConfig):
    import torch
    from torch import nn

    class TinyLM(nn.Module):
        """Token + position embeddings, pre-norm causal Transformer blocks, tied output layer."""

        def __init__(self) -> None:
            super().__init__()
            self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model)
            self.pos = nn.Embedding(cfg.context, cfg.d_model)
            layer = nn.TransformerEncoderLayer(
                cfg.d_model, cfg.n_heads, 4 * cfg.d_model, dropout=0.0, batch_first=True, norm_first=True
            )
            self.blocks = nn.TransformerEncoder(layer, cfg.n_layers, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(cfg.d_model)

        def forward(self, x):  # x: (B, T) ids -> (B, T, V) logits
            t = x.shape[1]
            h = self.tok(x) + self.pos(torch.arange(t, device=x.device))
            mask = nn.Transformer.generate_square_subsequent_mask(t, device=x.device)
            h = self.blocks(h, mask=mask, is_causal=True)
            return self.norm(h) @ self.tok.weight.T

    return TinyLM()


def train(cfg: LMConfig, data: np.ndarray, progress=None):
    """Train a :class:`LMConfig` model on id stream ``data`` (shape ``(total,)``); returns (model, loss)."""
    import torch

    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    model = _model(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, cfg.lr, total_steps=cfg.steps, pct_start=0.1)
    data_t = torch.as_tensor(data)
    offsets = torch.arange(cfg.context + 1)
    losses = []
    for _ in range(cfg.steps):
        start = torch.as_tensor(rng.integers(0, len(data) - cfg.context - 1, size=cfg.batch))
        chunk = data_t[start[:, None] + offsets]
        logits = model(chunk[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, cfg.vocab_size), chunk[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        if progress is not None:
            progress()
    return model.eval(), float(np.mean(losses[-20:]))


def load_or_train(cfg: LMConfig, data: np.ndarray, progress=None):
    """The trained model for ``cfg`` on ``data``: from the cache, else trained and cached atomically.

    Returns ``(model, info)`` with the final training loss and whether it was trained now.
    """
    import torch

    digest = hashlib.sha256(np.ascontiguousarray(data).tobytes()).hexdigest()[:16]
    path = Path(cache_base()) / "models" / f"novelty-lm-{cfg.key(digest)}.pt"
    if path.is_file():
        blob = torch.load(path, map_location="cpu", weights_only=True)
        model = _model(cfg)
        model.load_state_dict(blob["state"])
        return model.eval(), {"loss": float(blob["loss"]), "trained_now": False}
    model, loss = train(cfg, data, progress)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(fd)
    torch.save({"state": model.state_dict(), "loss": loss}, tmp)
    os.replace(tmp, path)
    return model, {"loss": loss, "trained_now": True}


def sample(
    model, cfg: LMConfig, prompts: list[np.ndarray], length: int, temperature: float, seed: int, banned
):
    """Sample ``length`` ids after each prompt (left-padded with ``<sep>``), shape ``(B, length)``.

    ``banned``: ids never sampled (``<unk>``, ``<sep>``), so every generated unit is a corpus word.
    """
    import torch

    gen = torch.Generator().manual_seed(seed)
    sep = cfg.vocab_size - 1
    width = max(len(p) for p in prompts)
    ctx = torch.full((len(prompts), width), sep, dtype=torch.long)
    for i, p in enumerate(prompts):
        ctx[i, width - len(p) :] = torch.as_tensor(p)
    out = []
    with torch.no_grad():
        for _ in range(length):
            logits = model(ctx[:, -cfg.context :])[:, -1] / temperature
            logits[:, list(banned)] = -torch.inf
            nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=gen)
            out.append(nxt)
            ctx = torch.cat([ctx, nxt], dim=1)
    return torch.cat(out, dim=1).numpy()
