"""Membership signals and attacks: RMIA, reference-model LiRA-style ratio, Min-K%, ROC metrics.

RMIA: Zarifzadeh et al. (2024), "Low-cost high-power membership inference attacks", ICML. The
computation follows the reference implementation's ``get_out_ref_signals`` / ``run_rmia`` /
``tune_offline_a`` (privacytrustlab/ml_privacy_meter, ``modules/mia/attacks/rmia.py``, MIT): the
offline approximation p(x) = ((1+a)·P_out(x) + (1-a))/2, a pairwise likelihood ratio against the
population z, and the score = fraction of z with ratio(x)/ratio(z) > γ. Min-K%: Shi et al. (2024).
"""

from __future__ import annotations

import numpy as np


def out_reference_signals(
    ref_signals: np.ndarray, ref_memberships: np.ndarray, n_models: int, a: float
) -> np.ndarray:
    """OUT-model signals per sample, shape ``(n, n_models)`` or ``(n, R)`` with the one-model offline fill-in.

    ``ref_signals``/``ref_memberships`` are ``(n, R)``. With ``n_models > 1`` the IN entries are zeroed and
    the
    ``n_models`` largest values per row are kept; with one model the IN entries are mapped back to an OUT
    estimate by inverting ((1+a)P_out + (1-a))/2 = (P_out + P_in)/2 (a = 0 uses 0.3 as the reference does).
    """
    out = ref_signals * ~ref_memberships
    if n_models > 1:
        return -np.sort(-out, axis=1)[:, :n_models]
    a_eff = a if a != 0 else 0.3
    return out + ((ref_signals + a_eff - 1) / a_eff) * ref_memberships


def default_n_models(n_references: int) -> int:
    """How many OUT models ``run_rmia`` averages when not told: half the references, at least one."""
    return max(n_references // 2, 1)


def _likelihood_ratio(target: np.ndarray, out_signals: np.ndarray, a: float) -> np.ndarray:
    mean_x = (1 + a) / 2 * out_signals.mean(axis=1) + (1 - a) / 2
    return target.ravel() / mean_x


def rmia(
    target_x, ref_x, ref_memberships, target_z, ref_z, a: float, gamma: float = 1.0, n_models=None
) -> np.ndarray:
    """RMIA scores ``(n,)``: the fraction of population z with LR(x)/LR(z) > ``gamma``.

    ``target_x`` ``(n,)``, ``ref_x`` ``(n, R)``, ``ref_memberships`` ``(n, R)`` bool, ``target_z`` ``(m,)``,
    ``ref_z`` ``(m, R)``; ``n_models`` defaults to max(R // 2, 1) as in the reference.
    """
    n_models = default_n_models(ref_x.shape[1]) if n_models is None else n_models
    lr_x = _likelihood_ratio(target_x, out_reference_signals(ref_x, ref_memberships, n_models, a), a)
    z_out = out_reference_signals(ref_z, np.zeros_like(ref_z, dtype=bool), n_models, a)
    lr_z = _likelihood_ratio(target_z, z_out, a)
    return np.mean(lr_x[:, None] / lr_z[None, :] > gamma, axis=1)


def tune_a(
    paired_x, paired_memberships, ref_x, ref_memberships, paired_z, ref_z, gamma: float = 1.0
) -> float:
    """The a ∈ {0, 0.1, …, 1.0} maximising AUC of one-model RMIA on a paired model whose membership is known.

    First maximiser kept (strict improvement over AUC 0), as in the reference ``tune_offline_a``.
    """
    best_a, best_auc = 0.0, 0.0
    for a in np.arange(0, 1.1, 0.1):
        auc = roc_auc(
            paired_memberships, rmia(paired_x, ref_x, ref_memberships, paired_z, ref_z, a, gamma, 1)
        )
        if auc > best_auc:
            best_a, best_auc = float(a), auc
    return best_a


def roc_auc(labels: np.ndarray, scores: np.ndarray) -> float:
    """Area under the ROC curve = P(score_member > score_non-member) + ½ P(tie) (Mann–Whitney)."""
    labels = np.asarray(labels, dtype=bool)
    order = np.argsort(scores, kind="mergesort")
    s = np.asarray(scores)[order]
    ranks = np.empty(len(s))
    uniq, start, counts = np.unique(s, return_index=True, return_counts=True)
    avg = start + (counts + 1) / 2.0
    ranks[order] = np.repeat(avg, counts)
    n_pos, n_neg = labels.sum(), (~labels).sum()
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def tpr_at_fpr(labels: np.ndarray, scores: np.ndarray, fpr: float) -> float:
    """The highest TPR over thresholds whose FPR ≤ ``fpr`` (thresholds at the observed scores, score ≥ t)."""
    labels = np.asarray(labels, dtype=bool)
    scores = np.asarray(scores, dtype=float)
    thresholds = np.unique(scores)
    pos = (scores[None, labels] >= thresholds[:, None]).mean(axis=1)
    neg = (scores[None, ~labels] >= thresholds[:, None]).mean(axis=1)
    ok = neg <= fpr + 1e-12
    return float(pos[ok].max()) if ok.any() else 0.0


def min_k_percent(token_logprobs: list[np.ndarray], k: float) -> np.ndarray:
    """Min-K% scores ``(n,)``: mean of the lowest ⌈k·T⌉ token log-probs of each sequence (higher → member)."""
    out = np.empty(len(token_logprobs))
    for i, lp in enumerate(token_logprobs):
        m = max(1, int(np.ceil(k * len(lp))))
        out[i] = np.sort(lp)[:m].mean()
    return out
