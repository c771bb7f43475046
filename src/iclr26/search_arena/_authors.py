"""The authors' optimiser, restated: L-BFGS-B from zero, at most 100 iterations, ``gtol`` on the raw loss.

``lmarena/search-arena`` (``scripts/utils.py``) fits plain Bradley-Terry on de-duplicated battles with
count weights and the contextual model on every battle with an L2 penalty ``reg / 2 * ||theta||^2`` on
all parameters (gradient ``reg * theta``), both with SciPy's L-BFGS-B
stopped after 100 iterations. Their bootstrap of plain BT normalises the multinomial counts by the number
of battles, so its gradient tolerance acts on a loss N times smaller and it stops earlier; where no finite
optimum exists (a model that never loses) the 100-iteration cap decides the ratings. ``authors_compat``
reproduces all of this; the default solver (:mod:`._solver`) does not.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

_DIFF = np.array([1.0, -1.0])


def _bt_loss_grad(ratings, matchups, outcomes, weights, alpha):
    pair = ratings[matchups]
    probs = expit(alpha * (pair[:, 0] - pair[:, 1]))
    loss = -((np.log(probs) * outcomes + np.log(1.0 - probs) * (1.0 - outcomes)) * weights).sum()
    g = -alpha * (outcomes - probs) * weights
    grad = np.zeros_like(ratings)
    np.add.at(grad, matchups, g[:, None] * _DIFF)
    return loss, grad


def fit_bt(matchups, outcomes, weights, n_models, alpha, tol=1e-6) -> np.ndarray:
    """Natural-scale ratings as the authors' ``fit_bt`` computes them."""
    res = minimize(
        _bt_loss_grad,
        np.zeros(n_models),
        args=(matchups, outcomes, weights, alpha),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 100, "gtol": tol},
    )
    return res.x


def _ctx_loss_grad(params, n_models, matchups, features, outcomes, alpha, reg):
    ratings = params[:n_models]
    pair = ratings[matchups]
    probs = expit(alpha * (pair[:, 0] - pair[:, 1]) + features @ params[n_models:])
    loss = -(np.log(probs) * outcomes + np.log(1.0 - probs) * (1.0 - outcomes)).sum()
    loss += reg / 2.0 * np.inner(params, params)
    err = outcomes - probs
    grad = reg * params
    np.add.at(grad[:n_models], matchups, (-alpha * err)[:, None] * _DIFF)
    grad[n_models:] -= features.T @ err
    return loss, grad


def fit_contextual(matchups, features, outcomes, n_models, alpha, reg, tol=1e-6) -> np.ndarray:
    """``[ratings, coefficients]`` as the authors' ``fit_contextual_bt`` computes them."""
    res = minimize(
        _ctx_loss_grad,
        np.zeros(n_models + features.shape[1]),
        args=(n_models, matchups, features, outcomes, alpha, reg),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 100, "gtol": tol},
    )
    return res.x
