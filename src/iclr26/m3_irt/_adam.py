"""The authors' optimiser, vectorised: full-batch Adam with clamping (``solver="authors"``).

The authors (``irt_core/_multimodal_irt_base.py``, configs ``config/*/*.yaml``) fit every model with
Adam (lr 0.01, 500 epochs, batch 512 models, so one full batch per epoch on these benchmarks), clip the
gradient to total norm 1, clamp the parameters into their boxes after every step, and stop early when
the epoch loss has not improved for 100 epochs. Their sigmoid clamps the logit into ``[-15, 15]`` and the
probability into ``[eps, 1 - eps]``; both clamps pass no gradient, so a cell whose logit has left
``[logit(eps), logit(1 - eps)]`` stops pulling on its parameters. Together with the short budget this is
an implicit regularisation: the fit stops well short of the bound-hitting maximum likelihood.

This module repeats exactly that computation in NumPy, with analytic gradients on the whole matrix
(cells in float32 as theirs, parameters and Adam moments in float64): no autograd, no data loader, and
for M3/M2-IRT the cells regrouped by variant into dense blocks (:class:`_Blocks`), so it is
deterministic and more than 10x faster than the authors' PyTorch loop (``benchmarks/m3irt_authors_speed.py``).
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
    """Per-cell constants and scratch buffers of one fit (the cell-level work allocates nothing).

    ``sign`` has the shape of the cell grid, (n_models, n_columns) for 2PL and (n_blocks, n_models,
    n_items) for M3/M2-IRT (see :class:`_Blocks`): +1 for a correct answer, -1 for a wrong one and 0 for
    a cell outside training (or a padding cell of the block grid).
    """

    def __init__(self, sign: np.ndarray, n_obs: float, eps: float, dtype: type):
        self.n_obs = max(n_obs, 1.0)
        self.L = float(np.log((1.0 - eps) / eps))  # the authors' probability clamp, on the logit scale
        self.nsign = (-sign).astype(dtype)
        self.gscale = (-sign / self.n_obs).astype(dtype)
        # a cell outside training has u = 0, so it adds log 2 to the summed loss: subtracted once
        self.outside_loss = float((sign == 0).sum() * np.log(2.0))
        self.Z = np.empty(sign.shape, dtype)
        self.clipped = np.empty(sign.shape, dtype)
        self.buf = np.empty(sign.shape, dtype)
        self.alive = np.empty(sign.shape, bool)


def _signs(Y: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return np.where(mask, np.where(np.nan_to_num(Y) > 0.5, 1.0, -1.0), 0.0)


class _Blocks:
    """The cells of M3/M2-IRT regrouped as a dense (n_blocks, n_models, n_items) grid.

    Every column of item ``g`` has one of a few indicator rows ``R_j`` (four on the authors' data: full,
    no image, no question, no info). A block holds, for one indicator row ``P[b]``, one column per item
    (a second column of the same item and row goes to a further block; items lacking that variant get a
    padding cell outside training). Within a block the logits are a plain matrix product,
    ``(theta * P[b]) @ A.T - B @ P[b]`` for M3-IRT, so no gather by item and no sparse sum is needed.
    """

    def __init__(self, Y: np.ndarray, mask: np.ndarray, layout: Layout, eps: float, dtype: type):
        patterns, pattern = np.unique(layout.R, axis=0, return_inverse=True)
        pattern = pattern.ravel()
        g = layout.n_items
        # rank of each column among the earlier columns with the same (indicator row, item)
        key = pattern * g + layout.group
        order = np.argsort(key, kind="stable")
        first = np.searchsorted(key[order], key[order])
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size) - first
        pairs, block = np.unique(np.stack([pattern, rank], 1), axis=0, return_inverse=True)
        self.P = patterns[pairs[:, 0]].astype(dtype)  # (n_blocks, 4)
        sign = np.zeros((len(pairs), Y.shape[0], g))
        sign[block.ravel(), :, layout.group] = _signs(Y, mask).T
        self.cells = _Cells(sign, float(mask.sum()), eps, dtype)


def _clamped_nll(cells: _Cells) -> tuple[float, np.ndarray]:
    """The authors' clamped Bernoulli NLL (mean over training cells) of the logits in ``cells.Z``, and
    d loss / d logit per cell (a view of one of ``cells``' buffers, overwritten by the next call).

    With ``sign`` +1 for a correct and -1 for a wrong answer (0 outside training) and
    ``u = sign * logit``, the probability of the observed answer is ``sigmoid(u)``; the authors' clamp of
    ``p`` into ``[eps, 1 - eps]`` is a clamp of ``u`` into ``[-L, L]``, ``L = logit(1 - eps)``, and passes
    no gradient outside. (Their logit clamp at +-15 never binds on its own.) Where it passes,
    d loss / d logit ``= p - y = sign * (sigmoid(u) - 1)``.
    """
    Z, L = cells.Z, cells.L
    Z *= cells.nsign  # Z = -u
    e = np.clip(Z, -L, L, out=cells.clipped)
    np.equal(e, Z, out=cells.alive)  # the clamp passes no gradient where it acts
    # e = exp(-u); the probability of the observed answer (clamped) is q = sigmoid(u) = 1 / (1 + e)
    np.exp(e, out=e)
    one_e = np.add(e, 1.0, out=Z)
    logs = np.log(one_e, out=cells.buf)
    loss = (float(logs.sum()) - cells.outside_loss) / cells.n_obs
    # d loss / d logit = sign * (q - 1) = -sign * e / (1 + e), divided by n_obs; 0 where clamped
    e /= one_e
    e *= cells.gscale
    e *= cells.alive
    return loss, e


def _loss_grad_2pl(x: np.ndarray, cells: _Cells, n_columns: int) -> tuple[float, np.ndarray]:
    """Loss and gradient of 2PL, ``logit = a_j theta_m - d_j``, on the (n_models, n_columns) grid."""
    n = cells.Z.shape[0]
    th, a, d = x[:n], x[n : n + n_columns], x[n + n_columns :]
    np.multiply.outer(th, a, out=cells.Z)
    cells.Z -= d[None, :]
    loss, D = _clamped_nll(cells)
    return loss, np.concatenate([D @ a, th @ D, -D.sum(0)])


def _loss_grad_blocks(kind: str, x: np.ndarray, blocks: _Blocks) -> tuple[float, np.ndarray]:
    """Loss and gradient of M3-IRT / M2-IRT on the block grid (see :class:`_Blocks`).

    M3-IRT: ``logit = (theta * P) @ A.T - B @ P``; M2-IRT: ``logit = (theta @ P) (A @ P) - B @ P``,
    per block with indicator row ``P``.
    """
    cells, P = blocks.cells, blocks.P
    n, g = cells.Z.shape[1:]
    th = x[: 4 * n].reshape(n, 4)
    A = x[4 * n : 4 * (n + g)].reshape(g, 4)
    B = x[4 * (n + g) :].reshape(g, 4)
    if kind == "m3":
        thP = th[None, :, :] * P[:, None, :]  # (n_blocks, n, 4)
        np.matmul(thP, A.T, out=cells.Z)
    else:
        TF = P @ th.T  # (n_blocks, n): the ability on each block's row
        AF = P @ A.T  # (n_blocks, g): the discrimination on each block's row
        np.multiply(TF[:, :, None], AF[:, None, :], out=cells.Z)
    cells.Z -= (P @ B.T)[:, None, :]
    loss, D = _clamped_nll(cells)
    gB = -(D.sum(1).T @ P)
    if kind == "m3":
        g_th = (np.matmul(D, A) * P[:, None, :]).sum(0)
        gA = (np.matmul(D.transpose(0, 2, 1), th) * P[:, None, :]).sum(0)
    else:
        g_th = np.matmul(D, AF[:, :, None])[:, :, 0].T @ P
        gA = np.matmul(TF[:, None, :], D)[:, 0, :].T @ P
    return loss, np.concatenate([g_th.ravel(), gA.ravel(), gB.ravel()])


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
    if kind == "2pl":
        cells = _Cells(_signs(Y, mask), float(mask.sum()), eps, dtype)

        def loss_grad(z):
            return _loss_grad_2pl(z, cells, layout.n_columns)
    else:
        blocks = _Blocks(Y, mask, layout, eps, dtype)

        def loss_grad(z):
            return _loss_grad_blocks(kind, z, blocks)

    # parameters and Adam moments in float64 (float32 moments underflow into slow subnormals);
    # the cell-level work runs in ``dtype``
    x = authors_initial(kind, n, layout) if x0 is None else np.array(x0, dtype=np.float64)
    m = np.zeros_like(x)
    v = np.zeros_like(x)
    buf = np.empty_like(x)
    b1, b2 = ADAM_BETAS
    peak = -np.inf
    history: list[float] = []
    best, best_epoch = np.inf, 0
    epoch, t = 0, 0
    for epoch in range(max_epochs):  # noqa: B007 (the count is returned)
        loss, g = loss_grad(x.astype(dtype))
        g = g.astype(np.float64)
        if loss <= 0:  # the authors skip such a batch (never happens with eps > 0)
            continue
        norm = float(np.sqrt(g @ g))
        if norm > clip_norm:
            g *= clip_norm / (norm + 1e-6)
        t += 1
        # torch.optim.Adam's update, in place: m, v moments; bias-corrected step
        m *= b1
        m += (1 - b1) * g
        g *= g
        v *= b2
        v += (1 - b2) * g
        denom = np.sqrt(v, out=buf)
        denom /= np.sqrt(1 - b2**t)
        denom += ADAM_EPS
        np.divide(m, denom, out=buf)
        buf *= lr / (1 - b1**t)
        x -= buf
        if reach is not None:
            peak = max(peak, float(np.multiply(reach, x, out=buf).max()))
        np.maximum(x, lo, out=x)
        np.minimum(x, hi, out=x)
        history.append(loss)
        if loss < best:
            best, best_epoch = loss, epoch
        if epoch - best_epoch >= patience:
            break
    final, g = loss_grad(x.astype(dtype))
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
