"""The authors' optimiser, vectorised: full-batch Adam with clamping (``solver="authors"``).

The authors (``irt_core/_multimodal_irt_base.py``, configs ``config/*/*.yaml``) fit every model with
Adam (lr 0.01, 500 epochs, batch 512 models, so one full batch per epoch on these benchmarks), clip the
gradient to total norm 1, clamp the parameters into their boxes after every step, and stop early when
the epoch loss has not improved for 100 epochs. Their sigmoid clamps the logit into ``[-15, 15]`` and the
probability into ``[eps, 1 - eps]``; both clamps pass no gradient, so a cell whose logit has left
``[logit(eps), logit(1 - eps)]`` stops pulling on its parameters. Together with the short budget this is
an implicit regularisation: the fit stops well short of the bound-hitting maximum likelihood.

This module repeats exactly that computation in NumPy (float64), with analytic gradients on the whole
matrix: no autograd, no data loader, so it is deterministic and several times faster than the
authors' PyTorch loop.
"""

from __future__ import annotations

import numpy as np

from ._fit import Layout

ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8


def authors_initial(kind: str, n_models: int, layout: Layout) -> np.ndarray:
    """The authors' initial values, *not* clipped (their first step starts from them; the clamp comes
    after the step)."""
    if kind == "2pl":
        j = layout.n_columns
        return np.concatenate([np.zeros(n_models), np.full(j, 0.2), np.zeros(j)])
    g = layout.n_items
    return np.concatenate([np.full(4 * n_models, 0.5), np.full(4 * g, 0.2), np.zeros(4 * g)])


def _loss_grad(
    kind: str, x: np.ndarray, sign: np.ndarray, train: np.ndarray, n_obs: float, layout: Layout, S, eps: float
) -> tuple[float, np.ndarray]:
    """The authors' clamped Bernoulli NLL (mean over training cells) and its (sub)gradient.

    ``sign`` is +1 for a correct and -1 for a wrong answer (0 outside training), ``train`` the training
    cells as 0/1 numbers. With ``u = sign * logit`` the probability of the observed answer is
    ``sigmoid(u)``; the authors' clamp of ``p`` into ``[eps, 1 - eps]`` is a clamp of ``u`` into
    ``[-L, L]``, ``L = logit(1 - eps)``, and passes no gradient outside. (Their logit clamp at +-15 never
    binds on its own.) Where it passes, d loss / d logit ``= p - y = sign * (sigmoid(u) - 1)``.
    """
    n = sign.shape[0]
    dt = x.dtype
    if kind == "2pl":
        j = layout.n_columns
        th, a, d = x[:n], x[n : n + j], x[n + j :]
        Z = np.multiply.outer(th, a)
        Z -= d[None, :]
    else:
        g = layout.n_items
        o = 4 * n
        th = x[:o].reshape(n, 4)
        A = x[o : o + 4 * g].reshape(g, 4)
        B = x[o + 4 * g :].reshape(g, 4)
        R, grp = layout.R.astype(dt, copy=False), layout.group
        b = (B[grp] * R).sum(1)
        if kind == "m3":
            W = A[grp] * R
            Z = th @ W.T
        else:
            a_full = (A[grp] * R).sum(1)
            TF = th @ R.T
            Z = TF * a_full[None, :]
        Z -= b[None, :]
    L = float(np.log((1.0 - eps) / eps))
    Z *= sign
    dead = np.abs(Z) > L
    np.clip(Z, -L, L, out=Z)
    # q = sigmoid(u) = 1 / (1 + e), e = exp(-u): the probability of the observed answer, clamped
    np.negative(Z, out=Z)
    e = np.exp(Z, out=Z)
    one_e = e + 1.0
    loss = float(np.vdot(np.log(one_e), train)) / n_obs
    # d loss / d logit = sign * (q - 1) = -sign * e / (1 + e)
    e /= one_e
    e *= sign
    e[dead] = 0.0
    D = e
    D *= -1.0 / n_obs
    if kind == "2pl":
        return loss, np.concatenate([D @ a, th @ D, -D.sum(0)])
    colsum = D.sum(0)
    gB = S @ (-colsum[:, None] * R)
    if kind == "m3":
        g_th = D @ W
        gA = S @ ((D.T @ th) * R)
    else:
        g_th = (D * a_full[None, :]) @ R
        gA = S @ ((D * TF).sum(0)[:, None] * R)
    return loss, np.concatenate([g_th.ravel(), np.asarray(gA).ravel(), np.asarray(gB).ravel()])


def adam(
    kind: str,
    Y: np.ndarray,
    mask: np.ndarray,
    layout: Layout,
    lo: np.ndarray,
    hi: np.ndarray,
    eps: float,
    *,
    x0: np.ndarray | None = None,
    lr: float = 0.01,
    max_epochs: int = 500,
    patience: int = 100,
    clip_norm: float = 1.0,
    dtype: type = np.float32,
) -> tuple[np.ndarray, float, int, list[float], float]:
    """Full-batch Adam with gradient-norm clipping and clamping, as the authors train.

    Returns ``(x, final_loss, n_epochs, loss_history, projected_gradient)``; ``loss_history[k]`` is the
    loss evaluated before the k-th step, as the authors record it; ``final_loss`` is the loss at the
    returned ``x`` and ``projected_gradient`` the largest component of its gradient that the box does
    not block (of the mean loss; 0 at a constrained stationary point).
    """
    n = Y.shape[0]
    mask = mask & ~np.isnan(Y)
    train = mask.astype(dtype)
    sign = np.where(mask, np.where(np.nan_to_num(Y) > 0.5, 1.0, -1.0), 0.0).astype(dtype)
    n_obs = max(float(mask.sum()), 1.0)
    S = layout.summer() if kind != "2pl" else None
    # parameters and Adam moments in float64 (float32 moments underflow into slow subnormals);
    # the cell-level work runs in ``dtype``
    x = authors_initial(kind, n, layout) if x0 is None else np.array(x0, dtype=np.float64)
    m = np.zeros_like(x)
    v = np.zeros_like(x)
    b1, b2 = ADAM_BETAS
    history: list[float] = []
    best, best_epoch = np.inf, 0
    epoch, t = 0, 0
    for epoch in range(max_epochs):  # noqa: B007 (the count is returned)
        loss, g = _loss_grad(kind, x.astype(dtype), sign, train, n_obs, layout, S, eps)
        g = g.astype(np.float64)
        if loss <= 0:  # the authors skip such a batch (never happens with eps > 0)
            continue
        norm = float(np.sqrt(g @ g))
        if norm > clip_norm:
            g = g * (clip_norm / (norm + 1e-6))
        t += 1
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        step = lr / (1 - b1**t)
        denom = np.sqrt(v) / np.sqrt(1 - b2**t) + ADAM_EPS
        x = np.clip(x - step * m / denom, lo, hi)
        history.append(loss)
        if loss < best:
            best, best_epoch = loss, epoch
        if epoch - best_epoch >= patience:
            break
    final, g = _loss_grad(kind, x.astype(dtype), sign, train, n_obs, layout, S, eps)
    g = g.astype(np.float64)
    g[((x <= lo) & (g > 0)) | ((x >= hi) & (g < 0))] = 0.0
    return x, float(final), epoch + 1, history, float(np.abs(g).max())
