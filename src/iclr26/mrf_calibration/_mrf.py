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
    """Run ``steps`` updates on normalised scores ``d`` ``(B, W)``; return the machine beliefs ``(B, W)``."""
    torch = _torch()
    x = torch.stack([1.0 - d, d], dim=-1)
    log0 = torch.log(x + EPS)
    lo3, hi3 = lo[..., None], hi[..., None]
    for _ in range(steps):
        prev = torch.nn.functional.pad(x[:, :-1], (0, 0, 1, 0))
        nxt = torch.nn.functional.pad(x[:, 1:], (0, 0, 0, 1))
        ax = lo3 * prev + x + hi3 * nxt
        base = torch.log(x + EPS) if update == "authors" else log0
        x = torch.softmax(base - ax @ w_in, dim=-1)
    return x[..., 1]


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
