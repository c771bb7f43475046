"""Reference-free membership-inference scores and their metrics, as in the authors' ``MIA/``.

Per text ``x`` with tokens ``t_1..t_n`` and ``l_i = log p(t_i | t_<i)`` (``i >= 2``; the first token is
never scored), following ``inference()`` in ``MIA/mia_detection.py``:

- ``ppl``: ``exp(-mean l)`` (Carlini et al. 2021);
- ``lowercase``: ``-(log ppl(lower(x)) / log ppl(x))``;
- ``zlib``: ``log ppl(x) / len(zlib.compress(x))``;
- ``min_k_{10,20,30}``: ``-mean`` of the ``floor(k (n-1))`` smallest ``l_i`` (Shi et al. 2024);
- ``max_k_{10,20,30}``: ``-mean`` of the largest ones (``k = 0`` keeps all of them, as ``a[-0:]`` does);
- ``min_k_pp_{10,20,30}``: mean of the smallest ``(l_i - mu_i) / sigma_i``, with ``mu_i, sigma_i^2`` the
  mean and variance of ``log p(. | t_<i)`` under ``p(. | t_<i)`` (Zhang et al. 2025, Min-K%++).

An empty selection gives ``NaN`` (numpy's mean of nothing), as theirs.

Metrics follow ``get_metrics`` in ``MIA/eval_2.py`` (AUROC, FPR at the first ROC point with
TPR >= 95 %, TPR at the last point with FPR <= 5 %, best balanced accuracy), after dropping non-finite
scores. The authors flip a score whose AUROC is below 0.5, choosing its direction on the evaluation
data; we report that value *and* the value with the direction fixed a priori (:data:`MEMBER_SIGN`).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

RATIOS = (10, 20, 30)
ATTACKS = (
    "ppl",
    "lowercase",
    "zlib",
    *(f"min_k_{r}" for r in RATIOS),
    *(f"max_k_{r}" for r in RATIOS),
    *(f"min_k_pp_{r}" for r in RATIOS),
)
#: Sign that makes each score "higher = member": every raw score is a loss except Min-K%++.
MEMBER_SIGN = {a: (1.0 if a.startswith("min_k_pp") else -1.0) for a in ATTACKS}
#: The authors' column names in their ``preds_*.csv`` (their f-string prints 0.3 * 100 as 30.000000000000004).
AUTHORS_NAMES = {
    "ppl": "ppl",
    "lowercase": "ppl_lowercase_ppl",
    "zlib": "ppl_zlib",
    **{f"min_k_{r}": f"Min_{r / 100 * 100}% Prob" for r in RATIOS},
    **{f"max_k_{r}": f"Max_{r / 100 * 100}% Prob" for r in RATIOS},
    **{f"min_k_pp_{r}": f"MinK++_{r / 100 * 100}% Prob" for r in RATIOS},
}


def _torch():
    import torch

    return torch


#: Positions whose full-vocabulary log-softmax is held at once (bounds memory: 64 x 49,152 floats).
CHUNK_POSITIONS = 64


def _position_stats(head, softcap, hidden, targets, chunk: int):
    """``log p(target_i)`` and its Min-K%++ z-score at each of ``hidden``'s (N, d) positions, (N,) each.

    The output layer ``head`` is applied ``chunk`` positions at a time, so the (N, vocab) log-softmax is
    never held whole; ``mu`` and ``sigma^2`` are the mean and variance of ``log p`` under ``p``.
    """
    torch = _torch()
    logprob, kpp = [], []
    for s in range(0, hidden.shape[0], chunk):
        logits = head(hidden[s : s + chunk]).float()
        if softcap:
            logits = torch.tanh(logits / softcap) * softcap
        lp = torch.log_softmax(logits, dim=-1)
        del logits
        tok = lp.gather(-1, targets[s : s + chunk, None]).squeeze(-1)
        p = lp.exp()
        mu = (p * lp).sum(-1)
        sigma = (p * lp.square()).sum(-1) - mu.square()
        logprob.append(tok)
        kpp.append((tok - mu) / sigma.sqrt())
    return torch.cat(logprob), torch.cat(kpp)


def _shared_prefix(rows: list[list[int]]) -> int:
    """Tokens the (lexicographically sorted) ``rows`` share and run once; each row keeps one token after."""
    if len(rows) < 2:
        return 0
    first, last = rows[0], rows[-1]
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return min(n, min(len(r) for r in rows) - 1)


def _group_stats(decoder, head, softcap, rows: list[list[int]], device, chunk: int):
    """``(logprob, kpp)`` tensors (n_j - 1,) of each row of a lexicographically sorted group.

    Their common prefix of ``P`` tokens is run once (batch 1) and its key/value cache repeated for the
    suffixes, which run right-padded in one batch. Prefix positions ``0..P-2`` predict the same tokens for
    every row; position ``P-1`` predicts each row's own token ``P``.
    """
    torch = _torch()
    from transformers import DynamicCache

    n_pre = _shared_prefix(rows)
    cache = DynamicCache() if n_pre else None
    hidden, targets = [], []
    if n_pre:
        prefix = torch.tensor([rows[0][:n_pre]], device=device)
        # positional: the cache argument is ``past_key_values`` in transformers 4.x, ``cache`` in 5.x
        h_pre = decoder(prefix, None, None, cache, use_cache=True).last_hidden_state[0]
        cache.batch_repeat_interleave(len(rows))
        hidden += [h_pre[: n_pre - 1], h_pre[n_pre - 1 :].expand(len(rows), -1)]
        targets += [rows[0][1:n_pre], [r[n_pre] for r in rows]]
    width = max(len(r) for r in rows) - n_pre
    suffix = torch.zeros((len(rows), width), dtype=torch.long)
    for j, r in enumerate(rows):
        suffix[j, : len(r) - n_pre] = torch.tensor(r[n_pre:])
    h_suf = decoder(suffix.to(device), None, None, cache, use_cache=bool(n_pre)).last_hidden_state
    for j, r in enumerate(rows):
        hidden.append(h_suf[j, : len(r) - n_pre - 1])
        targets.append(r[n_pre + 1 :])
    lp, kpp = _position_stats(
        head, softcap, torch.cat(hidden), torch.tensor(sum(targets, []), device=device), chunk
    )
    shared = max(n_pre - 1, 0)
    out = []
    offset = shared + (len(rows) if n_pre else 0)
    for j, r in enumerate(rows):
        n_suf = len(r) - n_pre - 1
        pick = [torch.arange(shared), torch.tensor([shared + j])] if n_pre else []
        idx = torch.cat([*pick, torch.arange(offset, offset + n_suf)]).to(device)
        out.append((lp[idx], kpp[idx]))
        offset += n_suf
    return out


def token_stats(
    model, tokenizer, texts: Sequence[str], batch_size: int, chunk: int = CHUNK_POSITIONS
) -> list[dict[str, np.ndarray]]:
    """Per text: ``logprob`` (n-1,) of each token after the first, ``kpp`` (n-1,) its Min-K%++ z-score,
    ``loss`` (the mean negative log-probability).

    Texts are tokenised as ``tokenizer.encode(text)`` and sorted lexicographically by token ids, so that
    neighbours share the longest prefixes; each run of ``batch_size`` of them computes its common prefix
    once (:func:`_group_stats`). The suffixes are right-padded: causal attention never lets a token see
    the padding after it, so no attention mask is needed (``transformers`` runs about 20x slower with
    one on CPU). Logits are computed from the decoder's last hidden states ``chunk`` positions at a time
    (the model's output layer, with its final logit soft-capping if it has one).
    """
    torch = _torch()
    ids = [list(tokenizer.encode(t)) for t in texts]
    order = sorted(range(len(ids)), key=ids.__getitem__)
    device = next(model.parameters()).device
    decoder, head = model.get_decoder(), model.get_output_embeddings()
    softcap = getattr(model.config, "final_logit_softcapping", None)
    out: list[dict[str, np.ndarray]] = [{} for _ in texts]
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            group = order[start : start + batch_size]
            stats = _group_stats(decoder, head, softcap, [ids[i] for i in group], device, chunk)
            for i, (tok, kpp) in zip(group, stats):
                out[i] = {
                    "logprob": tok.double().cpu().numpy(),
                    "kpp": kpp.cpu().numpy(),
                    "loss": float(-tok.double().mean()) if len(tok) else float("nan"),
                }
    return out


def _mean_or_nan(a: np.ndarray) -> float:
    return float(np.mean(a)) if len(a) else float("nan")


def text_scores(
    stats: dict[str, np.ndarray], stats_lower: dict[str, np.ndarray], text: str
) -> dict[str, float]:
    """All attack scores of one text from its :func:`token_stats` (and those of its lowercase)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ppl = np.log(np.exp(stats["loss"]))
        row = {
            "ppl": float(np.exp(stats["loss"])),
            "lowercase": float(-(np.log(np.exp(stats_lower["loss"])) / log_ppl)),
            "zlib": float(log_ppl / len(zlib.compress(text.encode("utf-8")))),
        }
    lp = np.sort(stats["logprob"])
    kpp = np.sort(stats["kpp"])
    for r in RATIOS:
        k = int(len(lp) * (r / 100))
        row[f"min_k_{r}"] = -_mean_or_nan(lp[:k])
        row[f"max_k_{r}"] = -_mean_or_nan(lp[-k:])
        row[f"min_k_pp_{r}"] = _mean_or_nan(kpp[:k])
    return row


def roc_metrics(scores: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """AUROC, FPR@95 %TPR, TPR@5 %FPR and best balanced accuracy of ``scores`` (higher = member)."""
    from sklearn.metrics import auc, roc_curve

    fpr, tpr, _ = roc_curve(labels, scores)
    hit = np.flatnonzero(tpr >= 0.95)
    low = np.flatnonzero(fpr <= 0.05)
    return {
        "auroc": float(auc(fpr, tpr)),
        "fpr95": float(fpr[hit[0]]) if len(hit) else float("nan"),
        "tpr05": float(tpr[low[-1]]) if len(low) else float("nan"),
        "acc": float(np.max(1 - (fpr + (1 - tpr)) / 2)),
    }


def attack_metrics(raw: np.ndarray, labels: np.ndarray, sign: float) -> dict[str, float]:
    """Metrics of one raw score column: a priori direction, the authors' flip-if-below-0.5, drop count."""
    keep = np.isfinite(raw)
    x, y = raw[keep], labels[keep]
    fixed = roc_metrics(sign * x, y)
    theirs = roc_metrics(x, y)
    if theirs["auroc"] < 0.5:
        theirs = roc_metrics(-x, y)
    return {**fixed, **{f"{k}_authors": v for k, v in theirs.items()}, "n_dropped": int((~keep).sum())}


def scores_frame(rows: list[dict[str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(ATTACKS))
