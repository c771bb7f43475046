"""Token-level detection scores from one causal language model (the authors' ``methods/metric_based.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..validation import check_in, check_int

KINDS = ("loglik", "logrank", "entropy", "fastdetect", "fastdetect-analytic")


def _token_rows(model: Any, texts: Sequence[str], max_tokens: int) -> list[list[int]]:
    rows = []
    context = getattr(model, "context_length", None)
    for i, t in enumerate(texts):
        if not isinstance(t, str) or not t.strip():
            raise ValueError(f"texts[{i}] must be a non-empty string")
        ids = list(model.tokenizer(t, add_special_tokens=True)["input_ids"])[:max_tokens]
        if len(ids) < 2:
            raise ValueError(f"texts[{i}] has {len(ids)} token(s); at least 2 are needed to score one")
        if context is not None and len(ids) > context:  # positions past the context are extrapolated
            raise ValueError(
                f"texts[{i}] has {len(ids)} tokens, more than the model's context of {context}; "
                f"lower max_tokens to at most {context}"
            )
        rows.append(ids)
    return rows


def _per_text(lp, ids, kind: str, n_samples: int, gen) -> np.ndarray:
    """Scores of tokens 2..L of one text from its next-token log-probabilities ``lp`` ``(L, V)``."""
    import torch

    pred = lp[:-1]
    target = torch.tensor(ids[1:], device=pred.device)[:, None]
    chosen = pred.gather(-1, target).squeeze(-1)
    if kind == "loglik":
        out = chosen
    elif kind == "logrank":
        rank = 1 + (pred > chosen[:, None]).sum(-1)
        out = -torch.log(rank.float())
    elif kind == "entropy":
        out = (pred.exp() * pred).sum(-1)
    elif kind == "fastdetect-analytic":
        out = chosen - (pred.exp() * pred).sum(-1)
    else:
        samples = torch.multinomial(pred.exp().cpu(), n_samples, replacement=True, generator=gen)
        out = torch.cat([chosen[:, None], pred.gather(-1, samples.to(pred.device))], dim=1)
    return out.float().cpu().numpy()


def token_scores(
    model: Any,
    texts: Sequence[str],
    kind: str = "loglik",
    max_tokens: int = 1024,
    *,
    batch_size: int = 8,
    n_samples: int = 10,
    seed: int = 0,
) -> list[np.ndarray]:
    """Per-token detection scores of each text, from batched forward passes of ``model``.

    ``model`` is an :class:`iclr26.models.HFModel` (``load_embedded_model()``, ``HFModel.from_pretrained``,
    ``tiny_random_model()``). Each text is tokenised (the tokenizer's special tokens, cut to ``max_tokens``)
    and token ``i >= 2`` is scored from the model's next-token distribution ``p`` after tokens ``< i``:

    - ``"loglik"``: ``log p(x_i)`` (Log-Likelihood);
    - ``"logrank"``: ``-log rank(x_i)``, rank 1 = the most likely token (Log-Rank);
    - ``"entropy"``: ``sum_v p(v) log p(v)``, the negative entropy (Entropy);
    - ``"fastdetect"``: ``(L - 1, 1 + n_samples)``: ``log p(x_i)`` then the log-probabilities of
      ``n_samples`` tokens drawn from ``p`` (Fast-DetectGPT's sampled variant, reference = scoring model),
      drawn with a generator seeded by ``seed`` and the text's index;
    - ``"fastdetect-analytic"``: ``log p(x_i) - E_p[log p]``, the per-token term of the analytic
      Fast-DetectGPT discrepancy.

    Rows are left-padded and position ids counted from each row's first token (as in ``iclr26.models``),
    so the scores do not depend on ``batch_size`` beyond float rounding. Returns one float32 array per
    text: 1-D of length ``L - 1``, or ``(L - 1, 1 + n_samples)`` for ``"fastdetect"``.
    """
    check_in(kind, KINDS, "kind")
    check_int(max_tokens, "max_tokens", minimum=2)
    check_int(batch_size, "batch_size", minimum=1)
    check_int(n_samples, "n_samples", minimum=2)
    check_int(seed, "seed", minimum=0)
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise ValueError("texts must be a sequence of strings")
    if not hasattr(model, "_forward_logprobs") or not hasattr(model, "tokenizer"):
        raise ValueError("model must be a local iclr26.models.HFModel (token distributions are needed)")
    return score_kinds(model, texts, (kind,), max_tokens, batch_size, n_samples, seed)[kind]


def score_kinds(
    model: Any,
    texts: Sequence[str],
    kinds: Sequence[str],
    max_tokens: int = 1024,
    batch_size: int = 8,
    n_samples: int = 10,
    seed: int = 0,
) -> dict[str, list[np.ndarray]]:
    """Several score kinds of :func:`token_scores` from the same forward passes."""
    import torch

    rows = _token_rows(model, texts, max_tokens)
    order = sorted(range(len(rows)), key=lambda i: len(rows[i]))
    out: dict[str, list] = {k: [None] * len(rows) for k in kinds}
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        lps = model._forward_logprobs([rows[i] for i in chunk])
        for i, lp in zip(chunk, lps):
            for k in kinds:
                gen = torch.Generator().manual_seed(seed * 1_000_003 + i)
                out[k][i] = _per_text(lp, rows[i], k, n_samples, gen)
    return out
