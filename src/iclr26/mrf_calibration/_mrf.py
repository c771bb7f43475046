"""The Markov-random-field calibration layer: data preparation and the banded mean-field chain (torch).

Notation follows the paper's §2 and the authors' ``GCN`` class (``improve_mrf.py``). A text's token
scores ``s_1..s_L`` are min-max normalised to ``d_i`` in [0, 1] and read as a two-state belief
``x_i = (1 - d_i, d_i)`` (human, machine). One update step is

    x_i <- softmax(log(x_i + 1e-10) - (x_i + a_i^- x_{i-1} + a_i^+ x_{i+1}) W)

with the 2 x 2 interaction ``W = [[-|w1|, |w'1|], [|w'11|, -|w11|]]`` and the neighbour weights
``a_i^- = sigma(i - 1 - p)``, ``a_i^+ = sigma(i + 1 - p)`` (``p = filter_pos``; all ones when ``p = 0``):
the tridiagonal adjacency of the authors' 1024 x 1024 matrix, applied here as two shifted products. After
``t`` steps the machine beliefs ``q_i`` are pooled with weights ``sigma(i - p)`` (plain mean when
``p = 0``) and mapped to a probability by ``sigmoid(w_f * pooled + b_f)``.

``update="authors"`` feeds the previous step's log-belief back (the update compounds);
``update="meanfield"`` keeps the unary term at the initial beliefs, ``log(x_i^0)``, as in textbook mean
field. For Fast-DetectGPT inputs (one observed channel and ``k`` sampled channels) only the observed
channel runs through the chain; the pooled sampled channels give a mean and an (unbiased) standard
deviation and the pooled score is standardised with them, as ``improve_mrf_fastgpt.py`` does.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

#: Width of the authors' score matrices (``max_length=1024`` tokens; Fast-DetectGPT drops the first).
AUTHORS_WIDTH = {"scalar": 1024, "fastdetect": 1023}
EPS = 1e-10


def _torch():
    import torch

    return torch


def sigmoid_np(z: np.ndarray) -> np.ndarray:
    """Logistic function in float64, as the authors compute their weights with ``np.exp``."""
    return 1.0 / (1.0 + np.exp(-z))


@dataclass
class Prepared:
    """Score matrices ready for the chain.

    ``d``: ``(B, W, C)`` float32 normalised scores (channel 0 observed, channels 1.. sampled);
    ``pool_mask``: ``(B, W, C)`` float32, which positions enter the pooled mean of each channel;
    ``lo``/``hi``: ``(B, W)`` float32 neighbour coefficients (``lo[:, i]`` multiplies ``x_{i-1}``).
    """

    d: np.ndarray
    pool_mask: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


def as_padded(rows: list[np.ndarray], width: int) -> tuple[np.ndarray, np.ndarray]:
    """Right-pad ragged ``(L_b, C)`` rows with zeros to ``(B, width, C)`` float32; also return lengths."""
    channels = rows[0].shape[1]
    out = np.zeros((len(rows), width, channels), dtype=np.float32)
    lengths = np.array([min(len(r), width) for r in rows], dtype=np.int64)
    for b, r in enumerate(rows):
        out[b, : lengths[b]] = r[:width]
    return out, lengths


def trailing_zero_lengths(padded: np.ndarray) -> np.ndarray:
    """The authors' ``get_mask``: per row and channel, the positions before the trailing run of zeros.

    A row whose last value is non-zero keeps every position; a true score of exactly 0 at the end of a
    text (a rank-1 token's log-rank, say) is dropped with the padding. Returns ``(B, C)`` lengths.
    """
    nz = padded != 0
    width = padded.shape[1]
    last = width - 1 - np.argmax(nz[:, ::-1, :], axis=1)
    return np.where(nz.any(axis=1), last + 1, 0)


def neighbour_weights(width: int, filter_pos: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(lo, hi, pool)`` of length ``width``: the adjacency's sub/super diagonals and pooling weights."""
    i = np.arange(width, dtype=np.float64)
    if filter_pos > 0:
        lo = sigmoid_np(i - 1 - filter_pos)
        hi = sigmoid_np(i + 1 - filter_pos)
        pool = sigmoid_np(i - filter_pos)
    else:
        lo = np.ones(width)
        hi = np.ones(width)
        pool = np.ones(width)
    lo[0] = 0.0
    hi[-1] = 0.0
    return lo.astype(np.float32), hi.astype(np.float32), pool.astype(np.float32)


def authors_range(rows: list[np.ndarray], full_width: int) -> tuple[np.float32, np.float32]:
    """Per-split min and max as the authors take them: over the zero-padded ``full_width`` matrix."""
    lo = min(float(r.min()) for r in rows)
    hi = max(float(r.max()) for r in rows)
    if any(len(r) < full_width for r in rows):
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    return np.float32(lo), np.float32(hi)


def prepare(
    rows: list[np.ndarray],
    *,
    kind: str,
    normalize: str,
    value_range: tuple[float, float],
    filter_pos: int,
    steps: int,
) -> Prepared:
    """Pad, normalise and mask ``rows`` (each ``(L_b, C)``) for the chain.

    ``normalize="authors"``: ``value_range`` is the split's own range including the zero padding, the
    padding (normalised zeros) runs through the chain, pooling uses :func:`trailing_zero_lengths`; the
    matrix is cut to ``max length + steps + 1`` columns, beyond which the authors' 1024-wide chain cannot
    reach a pooled position (so the result is exactly theirs). ``normalize="train"``: ``value_range`` is
    the training split's, values are clipped to [0, 1], the chain stops at each text's last token and
    pooling uses the true lengths.
    """
    full = AUTHORS_WIDTH[kind]
    maxlen = max(min(len(r), full) for r in rows)
    lo_v, hi_v = np.float32(value_range[0]), np.float32(value_range[1])
    if normalize == "authors":
        width = min(full, maxlen + steps + 1)
        raw, _ = as_padded(rows, width)
        if width < full:
            # Columns beyond ``width`` are padding in the authors' matrix; the mask rule sees them as zeros.
            raw_for_mask = np.concatenate([raw, np.zeros((len(rows), 1, raw.shape[2]), np.float32)], axis=1)
        else:
            raw_for_mask = raw
        lengths = trailing_zero_lengths(raw_for_mask)
        eps = np.float32(EPS) if kind == "scalar" else np.float32(0.0)
        d = (raw - lo_v) / (hi_v - lo_v + eps)
        lo_c, hi_c, _ = neighbour_weights(full, filter_pos)
        lo_c, hi_c = lo_c[:width].copy(), hi_c[:width].copy()
        if width < full:
            hi_c[-1] = 0.0  # only padding lies beyond; it never reaches a pooled position
        lo_b = np.broadcast_to(lo_c, (len(rows), width)).copy()
        hi_b = np.broadcast_to(hi_c, (len(rows), width)).copy()
    else:
        width = maxlen
        raw, true_len = as_padded(rows, width)
        lengths = np.repeat(true_len[:, None], raw.shape[2], axis=1)
        d = np.clip((raw - lo_v) / (hi_v - lo_v + np.float32(EPS)), 0.0, 1.0).astype(np.float32)
        lo_c, hi_c, _ = neighbour_weights(full, filter_pos)
        pos = np.arange(width)
        lo_b = np.where(pos[None, :] < true_len[:, None], lo_c[:width][None, :], 0.0).astype(np.float32)
        hi_b = np.where(pos[None, :] + 1 < true_len[:, None], hi_c[:width][None, :], 0.0).astype(np.float32)
    pos = np.arange(d.shape[1])
    pool_mask = (pos[None, :, None] < lengths[:, None, :]).astype(np.float32)
    return Prepared(d.astype(np.float32), pool_mask, lo_b, hi_b)


def interaction(params):
    """``W = [[-|w1|, |w'1|], [|w'11|, -|w11|]]`` from ``params = (w1, w11, w'1, w'11, w_f, b_f)``."""
    torch = _torch()
    a = params.abs()
    return torch.stack([torch.stack([-a[0], a[2]]), torch.stack([a[3], -a[1]])])


def chain(d, lo, hi, w_in, steps: int, update: str):
    """Run ``steps`` updates on normalised scores ``d`` ``(B, W)``; return the machine beliefs ``(B, W)``.

    With two states the softmax is a sigmoid of the logit difference, so the chain carries the machine
    belief ``q`` alone through the neighbour sums: as ``p + q = 1``, the human component of
    ``lo x_{i-1} + x_i + hi x_{i+1}`` is ``(lo + 1 + hi) - m`` with ``m`` the machine component (at the
    ends the missing neighbour's coefficient is 0). Per step, with ``c_k = W[k, 1] - W[k, 0]``::

        u = log(q + eps) - log(p + eps) - (lo + 1 + hi) c_0 - m (c_1 - c_0);  q = sigmoid(u), p = sigmoid(-u)

    ``p`` is computed as ``sigmoid(-u)``, not ``1 - q``, which would lose the small values the log term
    needs. This is the authors' softmax over a ``(B, W, 2)`` tensor up to float rounding, in half the
    memory traffic and without a 2 x 2 matrix product per position. Gradients flow to ``w_in`` only
    (through ``c_0`` and ``c_1 - c_0``), by the hand-written adjoint of :func:`_chain_function`.
    """
    c0 = w_in[0, 1] - w_in[0, 0]
    dc = (w_in[1, 1] - w_in[1, 0]) - c0
    return _chain_function().apply(d, lo, hi, c0, dc, steps, update == "authors")


def _neighbour_sum(q, lo, hi, out):
    """``m_i = q_i + lo_i q_{i-1} + hi_i q_{i+1}`` into ``out``, by fused multiply-adds on slices."""
    out.copy_(q)
    out[:, 1:].addcmul_(lo[:, 1:], q[:, :-1])
    out[:, :-1].addcmul_(hi[:, :-1], q[:, 1:])
    return out


def _neighbour_sum_adjoint(g, lo, hi, out):
    """The transpose of :func:`_neighbour_sum`, into ``out``:
    ``g_j + lo_{j+1} g_{j+1} + hi_{j-1} g_{j-1}``."""
    out.copy_(g)
    out[:, :-1].addcmul_(lo[:, 1:], g[:, 1:])
    out[:, 1:].addcmul_(hi[:, :-1], g[:, :-1])
    return out


def _log_odds(q, p, out, tmp):
    """``log(q + eps) - log(p + eps)`` into ``out``, as one log of a ratio (``tmp``: scratch)."""
    torch = _torch()
    return torch.add(q, EPS, out=out).div_(torch.add(p, EPS, out=tmp)).log_()


@functools.cache
def _chain_function():
    """The chain as a ``torch.autograd.Function`` (built on first use: torch is imported lazily).

    When a gradient is needed, forward keeps every step's beliefs ``(q_k, p_k)`` (inference overwrites
    one pair of buffers instead); backward walks the steps in reverse. With
    ``G_q``, ``G_p`` the gradients reaching step ``k + 1``'s beliefs, ``g_u = (G_q - G_p) q_{k+1} p_{k+1}``
    (as ``dq/du = q p = -dp/du``); ``u_k`` depends on ``c_0`` through ``-(lo + 1 + hi)``, on ``dc`` through
    ``-m_k``, and on ``q_k``/``p_k`` through ``-dc m_k`` and, with the compounding update, the log-odds.
    """
    torch = _torch()

    class _Chain(torch.autograd.Function):
        @staticmethod
        def forward(ctx, d, lo, hi, c0, dc, steps, compounding):
            # training keeps every step's beliefs for the backward pass; inference reuses four buffers
            keep = any(ctx.needs_input_grad)
            q, p = d.clone(), 1.0 - d
            s_c0 = (lo + 1.0 + hi).mul_(c0)
            m, u, tmp = torch.empty_like(d), torch.empty_like(d), torch.empty_like(d)
            log0 = _log_odds(q, p, torch.empty_like(d), tmp).sub_(s_c0)
            qs, ps = [q], [p]
            for step in range(steps):
                _neighbour_sum(q, lo, hi, out=m)
                if compounding and step > 0:  # the previous step's log-odds (step 0: the initial ones)
                    _log_odds(q, p, u, tmp).sub_(s_c0)
                else:
                    u.copy_(log0)
                u.addcmul_(m, dc, value=-1.0)
                if keep:
                    q, p = torch.sigmoid(u), torch.sigmoid(u.neg_())
                    qs.append(q)
                    ps.append(p)
                else:
                    torch.sigmoid(u, out=q)
                    torch.sigmoid(u.neg_(), out=p)
            if keep:
                ctx.save_for_backward(lo, hi, dc, *qs, *ps)
            ctx.compounding = compounding
            return q

        @staticmethod
        def backward(ctx, grad_q):
            lo, hi, dc, *beliefs = ctx.saved_tensors
            half = len(beliefs) // 2
            qs, ps = beliefs[:half], beliefs[half:]
            weights = (lo + 1.0 + hi).reshape(-1)
            g_u, m, tmp = torch.empty_like(grad_q), torch.empty_like(grad_q), torch.empty_like(grad_q)
            g_q_buf, g_p_buf = torch.empty_like(grad_q), torch.empty_like(grad_q)
            g_q, g_p = grad_q, None
            grad_c0 = torch.zeros((), dtype=grad_q.dtype)
            grad_dc = torch.zeros((), dtype=grad_q.dtype)
            for k in range(half - 2, -1, -1):
                if g_p is None:
                    g_u.copy_(g_q)
                else:
                    torch.sub(g_q, g_p, out=g_u)
                g_u.mul_(qs[k + 1]).mul_(ps[k + 1])
                flat = g_u.reshape(-1)
                grad_c0 -= torch.dot(flat, weights)
                grad_dc -= torch.dot(flat, _neighbour_sum(qs[k], lo, hi, out=m).reshape(-1))
                if k == 0:  # the initial beliefs are data
                    break
                g_q = _neighbour_sum_adjoint(g_u, lo, hi, out=g_q_buf).mul_(-dc)
                g_p = None
                if ctx.compounding:
                    g_q.addcdiv_(g_u, torch.add(qs[k], EPS, out=tmp))
                    g_p = torch.div(g_u, torch.add(ps[k], EPS, out=tmp), out=g_p_buf).neg_()
            return None, None, None, grad_c0, grad_dc, None, None

    return _Chain


def pooled(values, mask, weights):
    """Weighted mean over positions (last axis): ``sum(v m w) / (sum(m w) + 1e-10)``."""
    torch = _torch()
    return torch.sum(values * mask * weights, dim=-1) / (torch.sum(mask * weights, dim=-1) + EPS)


def pooled_score(params, prep_t, *, filter_pos: int, steps: int, update: str):
    """The pooled calibrated score per text ``(B,)`` and the beliefs ``q`` ``(B, W)``.

    ``prep_t`` holds the :class:`Prepared` arrays as torch tensors ``(d, pool_mask, lo, hi)``.
    """
    torch = _torch()
    d, mask, lo, hi = prep_t
    q = chain(d[..., 0], lo, hi, interaction(params), steps, update)
    _, _, pool_w = neighbour_weights(d.shape[1], filter_pos)
    w = torch.from_numpy(pool_w)
    score = pooled(q, mask[..., 0], w)
    if d.shape[2] > 1:  # Fast-DetectGPT: standardise by the sampled tokens' pooled scores
        samples = pooled(d[..., 1:].transpose(1, 2), mask[..., 1:].transpose(1, 2), w)
        score = (score - samples.mean(dim=-1)) / (samples.std(dim=-1) + EPS)
    return score, q


def forward(params, prep_t, *, filter_pos: int, steps: int, update: str):
    """Probability of "machine" per text: ``sigmoid(w_final * pooled + b_final)``, ``(B,)``."""
    torch = _torch()
    score, _ = pooled_score(params, prep_t, filter_pos=filter_pos, steps=steps, update=update)
    return torch.sigmoid(score * params[4] + params[5])
