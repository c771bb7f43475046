"""The influence vote of TrainRef in closed form, computed in chunks.

The authors (``utils.get_influence_scores`` + ``train_script.get_voting_results_optimized``) build, for
every head checkpoint, the per-sample gradients of a linear head's weight (captured by hooks) for the
"all-ones" target of each training sample and for the true label of each reference sample, then the dense
``n x |D_ref|`` matrices of ``cos(e_x, e_v) * cos(grad_x, grad_v)``. For a linear head ``W e + b`` under
cross-entropy, the weight gradient of a sample is an outer product ``g (x) e`` with ``g`` the gradient
with respect to the logits: ``K p - 1`` for the all-ones target (``-sum_k log p_k``), ``p - onehot(y)``
for a hard target. The cosine of two outer products is the product of the cosines, so each pair scores

    cos(e_x, e_v)^2 * cos(K p_x - 1, p_v - onehot(y_v)),

and the vote is that score averaged over checkpoints, averaged over the references of each class,
L2-normalised per row, negated, clipped at 0 and renormalised (rows that are all zero stay zero). Here it
is computed chunk by chunk over training rows, so memory is O(chunk x |D_ref|).
"""

from __future__ import annotations

import numpy as np

_EPS = 1e-8  # the authors' replacement for a zero norm


def _unit_rows(a: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(a, axis=1, keepdims=True)
    norms[norms == 0] = _EPS
    return a / norms


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax of ``logits`` (..., K), stable."""
    z = logits - logits.max(axis=-1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=-1, keepdims=True)
    return z


def class_mean_matrix(ref_labels: np.ndarray, n_classes: int) -> np.ndarray:
    """(m, K) matrix whose column k averages the references of class k (zero column if none)."""
    onehot = np.zeros((len(ref_labels), n_classes))
    onehot[np.arange(len(ref_labels)), ref_labels] = 1.0
    counts = onehot.sum(axis=0)
    return onehot / np.where(counts > 0, counts, 1.0)


def class_influence(
    train_emb: np.ndarray,
    train_logits: np.ndarray,
    ref_emb: np.ndarray,
    ref_logits: np.ndarray,
    ref_labels: np.ndarray,
    n_classes: int,
    chunk_size: int = 4096,
) -> np.ndarray:
    """The authors' ``allone_inf_cls`` before its row normalisation: (n, K) class-mean influence.

    ``train_logits`` is (C, n, K) and ``ref_logits`` (C, m, K) for C checkpoints.
    """
    n = train_emb.shape[0]
    n_ckpt = train_logits.shape[0]
    ref_unit = _unit_rows(ref_emb)
    onehot = np.eye(n_classes)[ref_labels]
    ref_grad = [_unit_rows(softmax(ref_logits[c].copy()) - onehot) for c in range(n_ckpt)]
    mean_by_class = class_mean_matrix(ref_labels, n_classes)
    out = np.empty((n, n_classes))
    for start in range(0, n, chunk_size):
        sl = slice(start, min(start + chunk_size, n))
        emb_cos = _unit_rows(train_emb[sl]) @ ref_unit.T
        grad_cos = np.zeros_like(emb_cos)
        for c in range(n_ckpt):
            train_grad = _unit_rows(n_classes * softmax(train_logits[c, sl].copy()) - 1.0)
            grad_cos += train_grad @ ref_grad[c].T
        emb_cos *= emb_cos
        emb_cos *= grad_cos
        out[sl] = (emb_cos @ mean_by_class) / n_ckpt
    return out


def votes_from_influence(inf_cls: np.ndarray) -> np.ndarray:
    """Row-L2, negate, clip at 0, renormalise to sum 1; all-zero rows stay zero."""
    q = -_unit_rows(inf_cls)
    np.maximum(q, 0.0, out=q)
    sums = q.sum(axis=1, keepdims=True)
    sums[sums == 0] = 1.0
    return q / sums
