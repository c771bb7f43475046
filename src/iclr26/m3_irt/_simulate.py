"""Response matrices simulated from a known M3-IRT model, with optional shortcut items."""

from __future__ import annotations

import numpy as np
from scipy.special import expit
from scipy.stats import norm

from iclr26.validation import check_int

from ._data import ResponseMatrix


def simulate_m3irt(
    n_models: int = 24,
    n_items: int = 500,
    n_shortcut: int = 0,
    *,
    ability_corr: float = 0.3,
    seed: int = 0,
) -> tuple[ResponseMatrix, dict[str, np.ndarray]]:
    """Draw responses of ``n_models`` models to ``n_items`` genuine items (four variants each) from an
    M3-IRT model, plus ``n_shortcut`` low-quality *shortcut* items.

    Genuine items follow the M3-IRT logit with abilities ``theta = [base, text, image, cross]``
    (base in [0, 0.1], the others in [0.2, 2.5] with correlation ``ability_corr`` between dimensions),
    discriminations in [0.2, 1] (base), [0.2, 1.2] (text, image), [0.5, 1.5] (cross), base difficulty
    in [0.5, 3] and modality offsets in [-0.5, 0]. A shortcut item is answerable from one modality
    alone (half text, half image): its
    logit is ``a theta_k - b`` with a strong ``a`` in [1.5, 2.5] whenever modality ``k`` is shown and
    ``-2`` otherwise, so it ranks models by a single-modality ability; its columns are marked
    ``low_quality``.

    Returns
    -------
    data : ResponseMatrix of shape (n_models, 4 * (n_items + n_shortcut))
    truth : dict with ``theta`` (n_models, 4), ``A`` and ``B`` (n_items, 4), ``shortcut_dim``.
    """
    n_models = check_int(n_models, "n_models", minimum=2)
    n_items = check_int(n_items, "n_items", minimum=1)
    n_shortcut = check_int(n_shortcut, "n_shortcut", minimum=0)
    if not -0.5 < ability_corr < 1:
        raise ValueError(f"ability_corr must lie in (-0.5, 1), got {ability_corr}")
    rng = np.random.default_rng(seed)
    C = np.full((3, 3), ability_corr) + (1 - ability_corr) * np.eye(3)
    z = rng.multivariate_normal(np.zeros(3), C, size=n_models)
    theta = np.column_stack([rng.uniform(0, 0.1, n_models), 0.2 + 2.3 * norm.cdf(z)])
    A = np.column_stack(
        [rng.uniform(0.2, 1.0, n_items), rng.uniform(0.2, 1.2, (n_items, 2)), rng.uniform(0.5, 1.5, n_items)]
    )
    B = np.column_stack([rng.uniform(0.5, 3.0, n_items), rng.uniform(-0.5, 0.0, (n_items, 3))])
    # column layout: per item the four variants full, <no_image>, <no_question>, <no_info>
    variants = [("", 1, 1), ("<no_image>", 1, 0), ("<no_question>", 0, 1), ("<no_info>", 0, 0)]
    n_all = n_items + n_shortcut
    group = np.repeat(np.arange(n_all), 4)
    rt = np.tile([v[1] for v in variants], n_all).astype(float)
    ri = np.tile([v[2] for v in variants], n_all).astype(float)
    R = np.stack([np.ones_like(rt), rt, ri, rt * ri], 1)
    g = group[: 4 * n_items]
    Rg = R[: 4 * n_items]
    Z = theta @ (A[g] * Rg).T - (B[g] * Rg).sum(1)[None, :]
    shortcut_dim = rng.integers(1, 3, size=n_shortcut)  # 1 = text, 2 = image
    if n_shortcut:
        a = rng.uniform(1.5, 2.5, n_shortcut)
        b = rng.uniform(1.0, 4.0, n_shortcut)
        gs = group[4 * n_items :] - n_items
        shown = np.where(shortcut_dim[gs] == 1, rt[4 * n_items :], ri[4 * n_items :])
        Zs = theta[:, shortcut_dim[gs]] * a[gs][None, :] - b[gs][None, :]
        Zs = np.where(shown[None, :] > 0, Zs, -2.0)
        Z = np.concatenate([Z, Zs], axis=1)
    Y = (rng.random(Z.shape) < expit(Z)).astype(np.float64)
    names = [f"item{i}" for i in range(n_items)] + [f"shortcut{i}" for i in range(n_shortcut)]
    columns = [p + names[i] for i in range(n_all) for p, _, _ in variants]
    low = np.zeros(4 * n_all, dtype=bool)
    low[4 * n_items :] = np.tile([True, True, True, False], n_shortcut)  # <no_info> carries no shortcut
    data = ResponseMatrix(Y, [f"model{m}" for m in range(n_models)], columns, group, names, rt, ri, low)
    return data, {"theta": theta, "A": A, "B": B, "shortcut_dim": shortcut_dim}
