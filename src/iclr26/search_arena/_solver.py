"""Batched Newton fit of (contextual) Bradley-Terry models: every bootstrap replicate at once.

The model: row ``u`` (a battle, or a group of identical battles) has a design vector
``x_u = [alpha (e_a - e_b), f_u]`` of length ``P = n_models + n_features``; replicate ``r`` gives it
``W[r, u]`` battles of which ``S[r, u]`` are won by model a (a tie is half a win), and minimises

    L_r(theta) = -sum_u [S log sigmoid(x_u . theta) + (W - S) log sigmoid(-x_u . theta)] + reg/2 ||theta||^2

With ``reg = 0`` the ratings are identified only up to a common shift: the gradient has no component along
``v = [1, ..., 1, 0, ..., 0]`` and a step solves ``(H + v v^T) d = -g``, which keeps the ratings' sum at
zero.

Two solvers. :func:`newton_fit` takes damped Newton steps with every replicate's own Hessian
``X^T diag(W_r h) X``, computed for all replicates by one product ``(W * h) @ Z`` with
``Z[u] = vec(x_u x_u^T)``. :func:`chord_fit`, for bootstrap replicates, starts from the full-data optimum and
reuses its Hessian: a replicate's Hessian differs from it by O(1/sqrt(N)), so the iteration contracts fast
and each step costs two matrix products instead of a Hessian per replicate; replicates it does not settle
within its iteration budget are finished by :func:`newton_fit`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, log_expit

_DENSE_Z_LIMIT = 40_000_000  # entries of a dense Z (rows x P^2); above it Z is sparse
_DENSE_X_LIMIT = 20_000_000  # entries of a dense X (rows x P)


def design(matchups: np.ndarray, features: np.ndarray | None, n_models: int, alpha: float) -> sp.csr_matrix:
    """Sparse design matrix ``X`` (rows x P): ``alpha`` at model a, ``-alpha`` at model b, then features."""
    n = len(matchups)
    rows = np.repeat(np.arange(n), 2)
    X = sp.csr_matrix((np.tile([alpha, -alpha], n), (rows, matchups.reshape(-1))), shape=(n, n_models))
    if features is not None and features.shape[1]:
        X = sp.hstack([X, sp.csr_matrix(features)], format="csr")
    return X


class _Design:
    """``X`` with the products the solvers need, dense (BLAS) when it fits, sparse otherwise."""

    def __init__(self, X: sp.csr_matrix):
        self.shape = X.shape
        n, p = X.shape
        self.sparse = X.tocsr()
        self.dense = X.toarray() if n * p <= _DENSE_X_LIMIT else None
        self._Z = None

    def logits(self, theta: np.ndarray) -> np.ndarray:  # (R, P) -> (R, n)
        if self.dense is not None:
            return theta @ self.dense.T
        return np.asarray((self.sparse @ theta.T).T)

    def back(self, resid: np.ndarray) -> np.ndarray:  # (R, n) -> (R, P)
        if self.dense is not None:
            return resid @ self.dense
        return np.asarray((self.sparse.T @ resid.T).T)

    def hessians(self, h: np.ndarray) -> np.ndarray:  # (R, n) -> (R, P, P)
        n, p = self.shape
        if self._Z is None:
            self._Z = _outer_rows(self.sparse, self.dense)
        Z = self._Z
        H = np.asarray(Z.T @ h.T).T if sp.issparse(Z) else h @ Z
        return H.reshape(h.shape[0], p, p)


def _outer_rows(X: sp.csr_matrix, dense: np.ndarray | None) -> np.ndarray | sp.csr_matrix:
    """``Z`` with ``Z[u] = vec(x_u x_u^T)``: dense when small enough, else sparse."""
    n, p = X.shape
    if n * p * p <= _DENSE_Z_LIMIT:
        D = dense if dense is not None else X.toarray()
        return (D[:, :, None] * D[:, None, :]).reshape(n, p * p)
    indptr, indices, data = X.indptr, X.indices, X.data
    row_of = np.repeat(np.arange(n), np.diff(indptr) ** 2)
    cols, vals = [], []
    for u in range(n):  # rows hold 2 + n_features entries; only very wide designs come here
        idx, val = indices[indptr[u] : indptr[u + 1]], data[indptr[u] : indptr[u + 1]]
        cols.append((idx[:, None] * p + idx[None, :]).ravel())
        vals.append((val[:, None] * val[None, :]).ravel())
    return sp.csr_matrix((np.concatenate(vals), (row_of, np.concatenate(cols))), shape=(n, p * p))


def _loss(eta, W, S, theta, reg) -> np.ndarray:
    nll = -(S * log_expit(eta) + (W - S) * log_expit(-eta)).sum(axis=1)
    return nll + 0.5 * reg * np.einsum("rp,rp->r", theta, theta)


def _extra(p: int, n_models: int, reg: float) -> np.ndarray:
    """``v v^T`` (reg = 0: pins the ratings' sum) or ``reg I``."""
    if reg > 0:
        return reg * np.eye(p)
    v = np.zeros(p)
    v[:n_models] = 1.0
    return np.outer(v, v)


def _converged(grad: np.ndarray, W: np.ndarray, tol: float) -> np.ndarray:
    return np.abs(grad).max(axis=1) / np.maximum(W.sum(axis=1), 1.0) <= tol


def newton_fit(
    X: sp.csr_matrix | _Design,
    W: np.ndarray,
    S: np.ndarray,
    n_models: int,
    reg: float = 0.0,
    theta0: np.ndarray | None = None,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> tuple[np.ndarray, np.ndarray]:
    """Damped Newton for every replicate (rows of ``W`` and ``S``, shape (R, rows)).

    Returns ``theta`` (R, P) and ``converged`` (R,): the largest gradient component, relative to the
    replicate's number of battles, fell under ``tol``.
    """
    D = X if isinstance(X, _Design) else _Design(X)
    R, p = W.shape[0], D.shape[1]
    theta = np.zeros((R, p)) if theta0 is None else theta0.copy()
    extra = _extra(p, n_models, reg)
    eta = D.logits(theta)
    loss = _loss(eta, W, S, theta, reg)
    converged = np.zeros(R, dtype=bool)
    for _ in range(max_iter):
        prob = expit(eta)
        grad = D.back(W * prob - S) + reg * theta
        converged = _converged(grad, W, tol)
        if converged.all():
            break
        H = D.hessians(W * prob * (1.0 - prob)) + extra
        step = -np.linalg.solve(H, grad[:, :, None])[:, :, 0]
        step[converged] = 0.0
        t = np.ones(R)
        for _halving in range(30):
            trial = theta + t[:, None] * step
            eta_trial = D.logits(trial)
            loss_trial = _loss(eta_trial, W, S, trial, reg)
            worse = loss_trial > loss + 1e-13 * np.abs(loss)
            if not worse.any():
                break
            t[worse] *= 0.5
        theta, eta, loss = trial, eta_trial, loss_trial
    return theta, converged


def chord_inverse(
    D: _Design, total: np.ndarray, n_models: int, reg: float, theta_hat: np.ndarray
) -> np.ndarray:
    """Inverse of the full-data Hessian at ``theta_hat`` (``total``: battles per row), for chord_fit."""
    prob_hat = expit(D.logits(theta_hat[None, :]))
    H_hat = D.hessians(total[None, :] * prob_hat * (1 - prob_hat))[0]
    return np.linalg.inv(H_hat + _extra(D.shape[1], n_models, reg))


def chord_fit(
    D: _Design,
    W: np.ndarray,
    S: np.ndarray,
    n_models: int,
    reg: float,
    theta_hat: np.ndarray,
    H_inv: np.ndarray,
    tol: float = 1e-8,
    max_iter: int = 30,
) -> tuple[np.ndarray, np.ndarray]:
    """Fit bootstrap replicates from the full-data optimum ``theta_hat`` (P,) with its fixed Hessian.

    ``W``/``S`` are the replicates' battle and win counts (R, rows), ``H_inv`` from :func:`chord_inverse`.
    The default ``tol`` (relative gradient 1e-8) puts a replicate within about 1e-4 Elo of its optimum,
    far below the bootstrap's own Monte-Carlo noise; each iteration shrinks the gradient about tenfold.
    Returns ``theta`` (R, P) and ``converged`` (R,).
    """
    R = W.shape[0]
    theta = np.repeat(theta_hat[None, :], R, axis=0)
    converged = np.zeros(R, dtype=bool)
    for _ in range(max_iter):
        resid = expit(D.logits(theta), out=None)
        resid *= W
        resid -= S
        grad = D.back(resid) + reg * theta
        converged = _converged(grad, W, tol)
        if converged.all():
            return theta, converged
        theta -= np.where(converged[:, None], 0.0, grad @ H_inv.T)
    left = ~converged
    theta[left], converged[left] = newton_fit(D, W[left], S[left], n_models, reg, theta0=theta[left], tol=tol)
    return theta, converged
