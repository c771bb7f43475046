"""Full-batch, box-constrained penalised maximum likelihood (MAP) for M3-IRT, M2-IRT and 2PL.

Every model is a Bernoulli model with logits linear in the abilities. The objective is the negative
log-likelihood (mean over observed cells) plus an optional Gaussian prior on every parameter, centred
on the authors' initial values, inside the authors' parameter boxes. It is minimised by alternating
batched projected Newton steps (:class:`AlternatingNewton`); the solver reports convergence only when
the projected gradient has vanished. (The authors' own optimiser, clamped Adam, is in ``_adam.py``.)

Parameter layout (flat vector ``x``)
-----------------------------------
- ``m3`` / ``m2``: ``theta`` (n_models, 4), ``A`` (n_items, 4), ``B`` (n_items, 4); the four
  components are [base, text, image, cross-modal]; a column ``j`` of item ``g`` with indicators
  ``R_j = [1, r_t, r_i, r_t r_i]`` has difficulty ``b_j = B_g . R_j``.

  * M3-IRT: ``logit = sum_k R_jk A_gk theta_mk - b_j``
  * M2-IRT: ``logit = (A_g . R_j) (theta_m . R_j) - b_j``
- ``2pl``: ``theta`` (n_models,), ``a`` (n_columns,), ``d`` (n_columns,), ``logit = a_j theta_m - d_j``.

Probabilities are floored as ``p = eps + (1 - 2 eps) sigmoid(logit)`` (the authors clamp the sigmoid into
``[eps, 1 - eps]``; the affine floor keeps the objective smooth for a quasi-Newton method).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.special import expit

KINDS = ("m3", "m2", "2pl")


@dataclass
class Layout:
    """Column structure: item index per column and the indicator matrix R (n_columns, 4)."""

    group: np.ndarray
    R: np.ndarray
    n_items: int

    @classmethod
    def build(cls, group: np.ndarray, r_text: np.ndarray, r_image: np.ndarray, n_items: int) -> Layout:
        R = np.stack([np.ones_like(r_text), r_text, r_image, r_text * r_image], axis=1).astype(np.float64)
        return cls(np.asarray(group, dtype=np.int64), R, int(n_items))

    @property
    def n_columns(self) -> int:
        return self.group.shape[0]

    def summer(self) -> sparse.csr_matrix:
        """Sparse (n_items, n_columns) one-hot matrix: ``S @ X`` sums column rows per item."""
        j = self.n_columns
        return sparse.csr_matrix((np.ones(j), (self.group, np.arange(j))), shape=(self.n_items, j))


def n_params(kind: str, n_models: int, layout: Layout) -> int:
    if kind == "2pl":
        return n_models + 2 * layout.n_columns
    return 4 * n_models + 8 * layout.n_items


def unpack(kind: str, x: np.ndarray, n_models: int, layout: Layout) -> dict[str, np.ndarray]:
    if kind == "2pl":
        j = layout.n_columns
        return {"theta": x[:n_models], "a": x[n_models : n_models + j], "d": x[n_models + j :]}
    g = layout.n_items
    o = 4 * n_models
    return {
        "theta": x[:o].reshape(n_models, 4),
        "A": x[o : o + 4 * g].reshape(g, 4),
        "B": x[o + 4 * g :].reshape(g, 4),
    }


def pack(kind: str, params: dict[str, np.ndarray]) -> np.ndarray:
    if kind == "2pl":
        return np.concatenate([params["theta"].ravel(), params["a"].ravel(), params["d"].ravel()])
    return np.concatenate([params["theta"].ravel(), params["A"].ravel(), params["B"].ravel()])


def bounds(
    kind: str, n_models: int, layout: Layout, scale: float, theta_base_max: float = 0.1
) -> tuple[np.ndarray, np.ndarray]:
    """The authors' boxes for a given ``scale`` (their grid search sets every bound to ``scale``).

    M3-IRT: abilities in [1e-4, scale] (base ability in [1e-4, theta_base_max]); discriminations in
    [1e-4, scale]; base difficulty in [0, scale]; text/image/cross difficulty offsets in [-scale, 0].
    M2-IRT: the same but abilities may reach 0. 2PL (our baseline, not in the authors' code): ability
    in [-scale, scale], discrimination in [1e-4, scale], intercept in [-scale^2, scale^2].
    """
    s = float(scale)
    if kind == "2pl":
        j = layout.n_columns
        lo = np.concatenate([np.full(n_models, -s), np.full(j, 1e-4), np.full(j, -s * s)])
        hi = np.concatenate([np.full(n_models, s), np.full(j, s), np.full(j, s * s)])
        return lo, hi
    g = layout.n_items
    t_lo = np.full((n_models, 4), 1e-4 if kind == "m3" else 0.0)
    t_hi = np.full((n_models, 4), s)
    t_hi[:, 0] = min(theta_base_max, s)
    a_lo, a_hi = np.full((g, 4), 1e-4), np.full((g, 4), s)
    b_lo = np.full((g, 4), -s)
    b_hi = np.zeros((g, 4))
    b_lo[:, 0], b_hi[:, 0] = 0.0, s
    lo = np.concatenate([t_lo.ravel(), a_lo.ravel(), b_lo.ravel()])
    hi = np.concatenate([t_hi.ravel(), a_hi.ravel(), b_hi.ravel()])
    return lo, hi


def logits(kind: str, params: dict[str, np.ndarray], layout: Layout) -> np.ndarray:
    """Logit matrix (n_models, n_columns)."""
    if kind == "2pl":
        return params["theta"][:, None] * params["a"][None, :] - params["d"][None, :]
    R, g = layout.R, layout.group
    b = (params["B"][g] * R).sum(1)
    if kind == "m3":
        return params["theta"] @ (params["A"][g] * R).T - b[None, :]
    a_full = (params["A"][g] * R).sum(1)
    return (params["theta"] @ R.T) * a_full[None, :] - b[None, :]


def probabilities(z: np.ndarray, eps: float) -> np.ndarray:
    return eps + (1.0 - 2.0 * eps) * expit(z)


class Objective:
    """Mean Bernoulli NLL and its gradient for one model kind on one (masked) matrix."""

    def __init__(
        self, kind: str, Y: np.ndarray, mask: np.ndarray, layout: Layout, eps: float, dtype: type = np.float64
    ):
        self.kind, self.layout, self.eps = kind, layout, float(eps)
        self.n_models = Y.shape[0]
        self.mask = mask.astype(np.float64)
        self.n_obs = max(float(self.mask.sum()), 1.0)
        Yc = np.where(mask, np.nan_to_num(Y, nan=0.0), 0.0)
        self.sign = 2.0 * Yc - 1.0
        self.base = np.where(Yc > 0, eps, 1.0 - eps)  # q = eps + (1-2eps) s  or  1 - eps - (1-2eps) s
        self.sign *= 1.0 - 2.0 * eps
        self.coef = -self.sign * self.mask / self.n_obs
        self.neg_w = -self.mask / self.n_obs
        self.w_scale = self.mask / self.n_obs
        if dtype != np.float64:  # cell-level work in lower precision (the optimiser's own choice)
            for name in ("sign", "base", "coef", "neg_w", "w_scale"):
                setattr(self, name, getattr(self, name).astype(dtype))
        self.S = layout.summer() if kind != "2pl" else None

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """Mean NLL at ``x`` and its gradient (used for the solver's convergence test)."""
        kind, lay = self.kind, self.layout
        P = unpack(kind, x, self.n_models, lay)
        Z = logits(kind, P, lay)
        s = expit(Z)
        # q = probability of the observed answer; sign = +1 for a correct answer, -1 otherwise
        q = self.base + self.sign * s
        loss = -float(np.einsum("ij,ij->", np.log(q), self.mask)) / self.n_obs
        # d loss / d logit = -(1 - 2 eps) s (1 - s) sign / q  (masked, per observation)
        D = s * (1.0 - s)
        D *= self.coef
        D /= q
        if kind == "2pl":
            th, a = P["theta"], P["a"]
            grad = np.concatenate([D @ a, th @ D, -D.sum(0)])
            return loss, grad
        R, g, th = lay.R, lay.group, P["theta"]
        colsum = D.sum(0)
        gB = self.S @ (-colsum[:, None] * R)
        if kind == "m3":
            Wc = P["A"][g] * R
            g_th = D @ Wc
            gA = self.S @ ((D.T @ th) * R)
        else:
            a_full = (P["A"][g] * R).sum(1)
            TF = th @ R.T
            g_th = (D * a_full[None, :]) @ R
            gA = self.S @ ((D * TF).sum(0)[:, None] * R)
        return loss, np.concatenate([g_th.ravel(), np.asarray(gA).ravel(), np.asarray(gB).ravel()])


def fit_theta(
    kind: str,
    params: dict[str, np.ndarray],
    layout: Layout,
    y: np.ndarray,
    cols: np.ndarray,
    theta0: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    eps: float,
    n_steps: int = 8,
) -> np.ndarray:
    """Maximum-likelihood ability of one model on columns ``cols`` with item parameters fixed.

    The logit is linear in the ability, ``z = X theta - c``, so the NLL is convex; we take projected
    Newton steps (Fisher scoring with a backtracking line search, free variables only).
    """
    y = np.asarray(y, dtype=np.float64)[cols]
    ok = ~np.isnan(y)
    y = y[ok]
    cols = np.asarray(cols)[ok]
    theta = np.clip(np.atleast_1d(np.asarray(theta0, dtype=np.float64)).copy(), lo, hi)
    if cols.size == 0:
        return theta
    if kind == "2pl":
        X = params["a"][cols][:, None]
        c = params["d"][cols]
    else:
        R, g = layout.R[cols], layout.group[cols]
        c = (params["B"][g] * R).sum(1)
        X = params["A"][g] * R if kind == "m3" else (params["A"][g] * R).sum(1)[:, None] * R

    def nll(t: np.ndarray) -> float:
        p = probabilities(X @ t - c, eps)
        return -float(np.sum(y * np.log(p) + (1 - y) * np.log1p(-p)))

    f = nll(theta)
    for _ in range(n_steps):
        z = X @ theta - c
        s = expit(z)
        p = eps + (1 - 2 * eps) * s
        dz = (1 - 2 * eps) * s * (1 - s)
        r = dz * ((1 - y) / (1 - p) - y / p)
        grad = X.T @ r
        w = dz**2 / (p * (1 - p))  # Fisher weight of the floored model
        H = (X * w[:, None]).T @ X
        free = ~(((theta <= lo) & (grad > 0)) | ((theta >= hi) & (grad < 0)))
        if not free.any():
            break
        step = np.zeros_like(theta)
        Hf = H[np.ix_(free, free)] + 1e-6 * np.eye(int(free.sum()))
        step[free] = -np.linalg.solve(Hf, grad[free])
        t_new, improved = theta, False
        for _ls in range(20):
            t_new = np.clip(theta + step, lo, hi)
            f_new = nll(t_new)
            if f_new <= f - 1e-12:
                improved = True
                break
            step *= 0.5
        if not improved:
            break
        if np.max(np.abs(t_new - theta)) < 1e-6:
            theta, f = t_new, f_new
            break
        theta, f = t_new, f_new
    return theta


# ---------------------------------------------------------------------------------------------------
# Alternating projected Newton (the default optimiser)
# ---------------------------------------------------------------------------------------------------
def _cell_loss(obj: Objective, Z: np.ndarray) -> np.ndarray:
    """Per-cell NLL (masked, divided by n_obs)."""
    q = expit(Z)
    q *= obj.sign
    q += obj.base
    np.log(q, out=q)
    q *= obj.neg_w
    return q


def _cell_terms(obj: Objective, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """d NLL / d logit and the Fisher weight ``s (1 - s)`` (both masked and divided by n_obs)."""
    s = expit(Z)
    q = obj.sign * s
    q += obj.base
    ds = s
    ds *= 1.0 - s
    D = ds * obj.coef
    D /= q
    ds *= obj.w_scale
    return D, ds


def _newton_directions(
    G: np.ndarray, H: np.ndarray, v: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> np.ndarray:
    """Batched projected Newton directions: variables at a bound with the gradient pushing outward
    are held fixed; the rest solve ``H_ff d = -G_f`` (with a small ridge)."""
    K, p = G.shape
    fixed = ((v <= lo) & (G > 0)) | ((v >= hi) & (G < 0))
    Gf = np.where(fixed, 0.0, G)
    keep = ~fixed
    Hm = H * (keep[:, :, None] & keep[:, None, :])
    diag = np.arange(p)
    scale = np.maximum(np.abs(H[:, diag, diag]).max(axis=1), 1e-12)
    Hm[:, diag, diag] += np.where(fixed, 1.0, 0.0) * scale[:, None] + 1e-8 * scale[:, None]
    return -np.linalg.solve(Hm, Gf[:, :, None])[:, :, 0]


class AlternatingNewton:
    """Minimise an :class:`Objective` by alternating batched projected Newton steps on the abilities
    (one small problem per model) and on the item parameters (one small problem per item or column).

    Given the other block, the logit is linear in each block for all three models, so each block
    step is a Fisher-scoring step on a (nearly) convex problem; a per-problem backtracking line search
    keeps every step a descent step.

    With ``precision > 0`` the objective gains a Gaussian prior ``precision / 2 * ||x - center||^2``
    (in units of the summed NLL, so the mean objective gains it divided by the number of observations):
    the fit is a MAP estimate, and the prior keeps weakly identified parameters off the bounds.
    """

    def __init__(
        self,
        obj: Objective,
        lo: np.ndarray,
        hi: np.ndarray,
        center: np.ndarray | None = None,
        precision: float = 0.0,
    ):
        self.obj, self.lo, self.hi = obj, lo, hi
        self.center = np.zeros_like(lo) if center is None else np.asarray(center, dtype=np.float64)
        self.pen = float(precision) / obj.n_obs
        self.kind, self.lay, self.n = obj.kind, obj.layout, obj.n_models
        self.dtype = obj.sign.dtype
        self.lay_c = Layout(self.lay.group, self.lay.R.astype(self.dtype), self.lay.n_items)

    def _split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(abilities as (n_models, d), item parameters as (K, p)) views of a flat vector."""
        if self.kind == "2pl":
            j = self.lay.n_columns
            return x[: self.n].reshape(self.n, 1), np.stack([x[self.n : self.n + j], x[self.n + j :]], 1)
        o = 4 * self.n
        g = self.lay.n_items
        return x[:o].reshape(self.n, 4), np.concatenate(
            [x[o : o + 4 * g].reshape(g, 4), x[o + 4 * g :].reshape(g, 4)], axis=1
        )

    def _join(self, th: np.ndarray, it: np.ndarray) -> np.ndarray:
        if self.kind == "2pl":
            return np.concatenate([th.ravel(), it[:, 0], it[:, 1]])
        return np.concatenate([th.ravel(), it[:, :4].ravel(), it[:, 4:].ravel()])

    def _logits(self, x: np.ndarray) -> np.ndarray:
        return logits(self.kind, unpack(self.kind, x.astype(self.dtype), self.n, self.lay), self.lay_c)

    def _theta_system(self, x: np.ndarray, D: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        kind, lay = self.kind, self.lay_c
        P = unpack(kind, x.astype(self.dtype), self.n, lay)
        if kind == "2pl":
            a = P["a"]
            return (D @ a)[:, None], (w @ (a * a))[:, None, None]
        X = P["A"][lay.group] * lay.R
        if kind == "m2":
            X = X.sum(1)[:, None] * lay.R
        G = D @ X
        H = (w @ (X[:, :, None] * X[:, None, :]).reshape(-1, 16)).reshape(-1, 4, 4)
        return G, H

    def _item_system(self, x: np.ndarray, D: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        kind, lay = self.kind, self.lay_c
        P = unpack(kind, x.astype(self.dtype), self.n, lay)
        th = P["theta"]
        if kind == "2pl":
            G = np.stack([th @ D, -D.sum(0)], 1)
            h11 = (th * th) @ w
            h12 = -(th @ w)
            h22 = w.sum(0)
            H = np.stack([np.stack([h11, h12], 1), np.stack([h12, h22], 1)], 1)
            return G, H
        R, S = lay.R, self.obj.S
        RR = R[:, :, None] * R[:, None, :]
        t3 = w.sum(0)
        if kind == "m3":
            t2 = w.T @ th  # (J, 4)
            T1 = (w.T @ (th[:, :, None] * th[:, None, :]).reshape(-1, 16)).reshape(-1, 4, 4)
            gA = (D.T @ th) * R
            HAA = T1 * RR
            HAB = -(t2[:, :, None] * RR)
        else:
            TF = th @ R.T  # (M, J)
            gA = (D * TF).sum(0)[:, None] * R
            HAA = ((w * TF * TF).sum(0))[:, None, None] * RR
            HAB = -((w * TF).sum(0))[:, None, None] * RR
        gB = -D.sum(0)[:, None] * R
        HBB = t3[:, None, None] * RR
        Hc = np.concatenate(
            [np.concatenate([HAA, HAB], 2), np.concatenate([np.swapaxes(HAB, 1, 2), HBB], 2)], 1
        )
        G = np.asarray(S @ np.concatenate([gA, gB], 1))
        H = np.asarray(S @ Hc.reshape(-1, 64)).reshape(-1, 8, 8)
        return G, H

    def _group_loss(self, nll: np.ndarray, block: str) -> np.ndarray:
        if block == "theta":
            return nll.sum(1, dtype=np.float64)
        cols = nll.sum(0, dtype=np.float64)
        if self.kind == "2pl":
            return cols
        return np.asarray(self.obj.S @ cols.astype(np.float64)).ravel()

    def _block_step(
        self, x: np.ndarray, Z: np.ndarray, block: str, n_halvings: int = 5
    ) -> tuple[np.ndarray, np.ndarray | None, float]:
        """One projected Newton step on ``block``; returns the new x, its logits if known, and the
        loss before the step."""
        D, w = _cell_terms(self.obj, Z)
        th, it = self._split(x)
        lo_th, lo_it = self._split(self.lo)
        hi_th, hi_it = self._split(self.hi)
        if block == "theta":
            G, H = self._theta_system(x, D, w)
            v, lo, hi = th, lo_th, hi_th
        else:
            G, H = self._item_system(x, D, w)
            v, lo, hi = it, lo_it, hi_it
        G, H = np.asarray(G, dtype=np.float64), np.asarray(H, dtype=np.float64)
        c_th, c_it = self._split(self.center)
        c = c_th if block == "theta" else c_it
        pen = self.pen
        if pen:
            G = G + pen * (v - c)
            H = H + pen * np.eye(H.shape[1])[None]
        d = _newton_directions(G, H, v, lo, hi)
        nll = _cell_loss(self.obj, Z)
        f_old = self._group_loss(nll, block) + 0.5 * pen * ((v - c) ** 2).sum(1)
        step = np.ones(v.shape[0])
        best = v.copy()
        # problems whose predicted decrease is negligible are left as they are
        pred = -(G * (np.clip(v + d, lo, hi) - v)).sum(1)
        todo = pred > 1e-9 * max(float(f_old.max()), 1e-300)
        Z_new = None
        if not todo.any():
            return x, Z, float(nll.sum())
        for trial in range(n_halvings):
            cand = np.where(todo[:, None], np.clip(v + step[:, None] * d, lo, hi), best)
            xc = self._join(cand, it) if block == "theta" else self._join(th, cand)
            Zc = self._logits(xc)
            f_new = self._group_loss(_cell_loss(self.obj, Zc), block) + 0.5 * pen * ((cand - c) ** 2).sum(1)
            ok = todo & (f_new <= f_old + 1e-15)
            best[ok] = cand[ok]
            todo &= ~ok
            if not todo.any():
                if trial == 0:
                    Z_new = Zc
                break
            step[todo] *= 0.5
        x_new = self._join(best, it) if block == "theta" else self._join(th, best)
        return x_new, Z_new, float(nll.sum())

    def penalty(self, x: np.ndarray) -> float:
        """The prior term of the mean objective at ``x``."""
        return 0.5 * self.pen * float(((x - self.center) ** 2).sum())

    def projected_gradient(self, x: np.ndarray) -> float:
        """Largest projected-gradient component of the penalised mean objective (0 at a constrained
        stationary point)."""
        g = self.obj(x)[1] + self.pen * (x - self.center)
        g[((x <= self.lo) & (g > 0)) | ((x >= self.hi) & (g < 0))] = 0.0
        return float(np.abs(g).max())

    def run(
        self, x0: np.ndarray, max_iter: int, tol: float, gtol: float = 1e-4
    ) -> tuple[np.ndarray, float, int, bool, float]:
        """Alternate ability and item steps until the projected gradient falls below ``gtol`` (converged),
        a round improves the objective by less than ``tol`` (relative; stalled) or after ``max_iter``
        rounds. Returns (x, mean NLL, rounds, converged, projected-gradient size)."""
        x = np.clip(x0, self.lo, self.hi)
        Z = self._logits(x)
        prev = np.inf
        it = 0
        while it < max_iter:
            it += 1
            x, Z, _ = self._block_step(x, Z, "theta")
            x, Z, _ = self._block_step(x, self._logits(x) if Z is None else Z, "items")
            if Z is None:
                Z = self._logits(x)
            f = float(_cell_loss(self.obj, Z).sum()) + self.penalty(x)
            if prev - f <= tol * max(1.0, abs(f)):
                break
            prev = f
        pg = self.projected_gradient(x)
        return x, float(_cell_loss(self.obj, Z).sum()), it, pg < gtol, pg
