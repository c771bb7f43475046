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


class _Cells:
    """Per-cell constants and scratch buffers of one fit (the cell-level work allocates nothing)."""

    def __init__(self, Y: np.ndarray, mask: np.ndarray, dtype: type):
        self.n_obs = max(float(mask.sum()), 1.0)
        sign = np.where(mask, np.where(np.nan_to_num(Y) > 0.5, 1.0, -1.0), 0.0)
        self.nsign = (-sign).astype(dtype)  # -1 correct, +1 wrong, 0 outside training
        self.gscale = (-sign / self.n_obs).astype(dtype)
        self.train = None if mask.all() else mask.astype(dtype)
        self.buf = np.empty(Y.shape, dtype)
        self.buf2 = np.empty(Y.shape, dtype)
        self.dead = np.empty(Y.shape, bool)


def _loss_grad(
    kind: str, x: np.ndarray, cells: _Cells, layout: Layout, S, eps: float
) -> tuple[float, np.ndarray]:
    """The authors' clamped Bernoulli NLL (mean over training cells) and its (sub)gradient.

    With ``sign`` +1 for a correct and -1 for a wrong answer (0 outside training) and
    ``u = sign * logit``, the probability of the observed answer is ``sigmoid(u)``; the authors' clamp of
    ``p`` into ``[eps, 1 - eps]`` is a clamp of ``u`` into ``[-L, L]``, ``L = logit(1 - eps)``, and passes
    no gradient outside. (Their logit clamp at +-15 never
    binds on its own.) Where it passes, d loss / d logit ``= p - y = sign * (sigmoid(u) - 1)``.
    """
    n = cells.nsign.shape[0]
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
    Z *= cells.nsign  # Z = -u
    np.greater(np.abs(Z, out=cells.buf), L, out=cells.dead)
    np.clip(Z, -L, L, out=Z)
    # q = sigmoid(u) = 1 / (1 + e), e = exp(-u): the probability of the observed answer, clamped
    e = np.exp(Z, out=Z)
    one_e = np.add(e, 1.0, out=cells.buf)
    logs = np.log(one_e, out=cells.buf2)
    total = logs.sum(dtype=np.float64) if cells.train is None else np.vdot(logs, cells.train)
    loss = float(total) / cells.n_obs
    # d loss / d logit = sign * (q - 1) = -sign * e / (1 + e), divided by n_obs
    e /= one_e
    e *= cells.gscale
    np.copyto(e, 0.0, where=cells.dead)
    D = e
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
    reach: np.ndarray | None = None,
) -> tuple[np.ndarray, float, int, list[float], float, float]:
    """Full-batch Adam with gradient-norm clipping and clamping, as the authors train.

    Returns ``(x, final_loss, n_epochs, loss_history, projected_gradient, peak)``; ``loss_history[k]`` is
    the loss evaluated before the k-th step, as the authors record it; ``final_loss`` is the loss at the
    returned ``x`` and ``projected_gradient`` the largest component of its gradient that the box does
    not block (of the mean loss; 0 at a constrained stationary point). With ``reach`` (see
    :func:`scale_reach`), ``peak`` is the largest ``reach * x`` over every step before clamping: a run with
    any scale above ``peak`` follows exactly the same trajectory (no scale-dependent clamp ever acts).
    """
    n = Y.shape[0]
    mask = mask & ~np.isnan(Y)
    cells = _Cells(Y, mask, dtype)
    S = layout.summer() if kind != "2pl" else None
    # parameters and Adam moments in float64 (float32 moments underflow into slow subnormals);
    # the cell-level work runs in ``dtype``
    x = authors_initial(kind, n, layout) if x0 is None else np.array(x0, dtype=np.float64)
    m = np.zeros_like(x)
    v = np.zeros_like(x)
    b1, b2 = ADAM_BETAS
    peak = -np.inf
    history: list[float] = []
    best, best_epoch = np.inf, 0
    epoch, t = 0, 0
    for epoch in range(max_epochs):  # noqa: B007 (the count is returned)
        loss, g = _loss_grad(kind, x.astype(dtype), cells, layout, S, eps)
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
        x = x - step * m / denom
        if reach is not None:
            peak = max(peak, float((reach * x).max()))
        x = np.clip(x, lo, hi, out=x)
        history.append(loss)
        if loss < best:
            best, best_epoch = loss, epoch
        if epoch - best_epoch >= patience:
            break
    final, g = _loss_grad(kind, x.astype(dtype), cells, layout, S, eps)
    g = g.astype(np.float64)
    g[((x <= lo) & (g > 0)) | ((x >= hi) & (g < 0))] = 0.0
    return x, float(final), epoch + 1, history, float(np.abs(g).max()), peak


def scale_reach(kind: str, n_models: int, layout: Layout) -> np.ndarray | None:
    """Signs marking the bounds that move with the scale (M3/M2-IRT): +1 where the upper bound is the
    scale (text/image/cross abilities, discriminations, base difficulty), -1 where the lower bound is
    minus the scale (the other difficulty offsets), 0 elsewhere (base ability). None for 2PL."""
    if kind == "2pl":
        return None
    g = layout.n_items
    th = np.ones((n_models, 4))
    th[:, 0] = 0.0
    B = -np.ones((g, 4))
    B[:, 0] = 1.0
    return np.concatenate([th.ravel(), np.ones(4 * g), B.ravel()])
