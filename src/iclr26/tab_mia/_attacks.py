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


def token_stats(model, tokenizer, texts: Sequence[str], batch_size: int) -> list[dict[str, np.ndarray]]:
    """Per text: ``logprob`` (n-1,) of each token after the first, ``kpp`` (n-1,) its Min-K%++ z-score,
    ``loss`` (the mean negative log-probability). Texts are tokenised as ``tokenizer.encode(text)``, run
    in right-padded batches sorted by length. Causal attention never lets a token see the padding after
    it, so no attention mask is needed (``transformers`` runs about 20x slower with one on CPU)."""
    torch = _torch()
    ids = [list(tokenizer.encode(t)) for t in texts]
    order = np.argsort([-len(r) for r in ids], kind="stable")
    device = next(model.parameters()).device
    out: list[dict[str, np.ndarray]] = [{} for _ in texts]
    for start in range(0, len(order), batch_size):
        rows = [ids[i] for i in order[start : start + batch_size]]
        width = max(len(r) for r in rows)
        batch = torch.zeros((len(rows), width), dtype=torch.long)
        for j, r in enumerate(rows):
            batch[j, : len(r)] = torch.tensor(r)
        with torch.inference_mode():
            logits = model(input_ids=batch.to(device)).logits.float()
        for j, r in enumerate(rows):
            lp = torch.log_softmax(logits[j, : len(r) - 1], dim=-1)
            target = torch.tensor(r[1:], device=lp.device)[:, None]
            tok = lp.gather(-1, target).squeeze(-1)
            p = lp.exp()
            mu = (p * lp).sum(-1)
            sigma = (p * lp.square()).sum(-1) - mu.square()
            kpp = (tok - mu) / sigma.sqrt()
            out[order[start + j]] = {
                "logprob": tok.double().cpu().numpy(),
                "kpp": kpp.cpu().numpy(),
                "loss": float(-tok.double().mean()) if len(r) > 1 else float("nan"),
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
