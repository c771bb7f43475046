"""Compact subsets by Fisher-information item selection, and their ranking fidelity."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from scipy.stats import spearmanr

from iclr26.validation import check_in, check_int

from ._data import ResponseMatrix
from ._models import M2IRT, M3IRT, TwoPL, _BaseIRT  # noqa: F401 (_BaseIRT in annotations)

METHODS = {"m3irt": M3IRT, "m2irt": M2IRT, "2pl": TwoPL}
ALL_METHODS = (*METHODS, "random")


def adaptive_subset(model: _BaseIRT, y: Any, n_select: int, batch: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Computerized adaptive testing of one model, as in the authors' CAT loop.

    Starting from the initial ability, repeatedly pick the not-yet-administered items with the
    highest selection score (:meth:`~M3IRT.item_scores`: D-optimal for M3-IRT, summed scalar Fisher
    information for M2-IRT / 2PL) at the current ability, administer all their variants, and
    re-estimate the ability by maximum likelihood on everything administered so far.

    Parameters
    ----------
    model : fitted M3IRT, M2IRT or TwoPL (item parameters; the tested model need not be among its rows)
    y : array of shape (n_columns,)
        The tested model's responses on the fitted columns.
    n_select : int
        Number of items to administer.
    batch : int, default 1
        Items picked per ability update (1 = the authors' one-at-a-time loop).

    Returns
    -------
    order : ndarray of int, shape (n_select,)  administered items in order.
    thetas : ndarray, shape (n_updates, d)     the ability after each update.
    """
    model._check_fitted()
    n_select = check_int(n_select, "n_select", minimum=1, maximum=model.n_items_)
    batch = check_int(batch, "batch", minimum=1)
    y = np.asarray(y, dtype=np.float64)
    theta = model.initial_theta()
    taken = np.zeros(model.n_items_, dtype=bool)
    order: list[int] = []
    thetas = []
    while len(order) < n_select:
        scores = np.where(taken, -np.inf, np.nan_to_num(model.item_scores(theta), nan=-np.inf, neginf=-1e300))
        k = min(batch, n_select - len(order))
        pick = np.argsort(-scores, kind="stable")[:k]
        taken[pick] = True
        order.extend(int(p) for p in pick)
        theta = model.fit_theta(y, np.asarray(order), theta0=theta)
        thetas.append(theta.copy())
    return np.asarray(order, dtype=np.int64), np.asarray(thetas)


def compact_subset(model: _BaseIRT, n_select: int, theta: Any = None) -> np.ndarray:
    """A population-level compact subset: the ``n_select`` items most informative across models.

    Every item is scored by its selection score (:meth:`~M3IRT.item_scores`: D-optimal for M3-IRT,
    summed Fisher information for M2-IRT / 2PL) at each model's ability, the scores are divided by their
    mean over items for that model (so no single model dominates) and averaged over models; the items
    with the highest average are returned, best first. Unlike :func:`adaptive_subset` this needs no
    tested model: it is one fixed subset for the whole population.

    Parameters
    ----------
    model : fitted M3IRT, M2IRT or TwoPL
    n_select : int
        Number of items.
    theta : array of shape (n_abilities, d), optional
        The abilities to average over (default: the fitted models' abilities).

    Returns
    -------
    ndarray of int, shape (n_select,)
    """
    model._check_fitted()
    n_select = check_int(n_select, "n_select", minimum=1, maximum=model.n_items_)
    th = model.theta_ if theta is None else np.asarray(theta, dtype=np.float64)
    th = th.reshape(th.shape[0], -1)
    d = 1 if model._kind == "2pl" else 4
    if th.ndim != 2 or th.shape[1] != d or th.shape[0] == 0:
        raise ValueError(f"theta must have shape (n, {d}), got {np.shape(theta)}")
    total = np.zeros(model.n_items_)
    for t in th:
        sc = np.nan_to_num(model.item_scores(t), nan=0.0, neginf=0.0, posinf=0.0)
        sc = np.clip(sc, 0.0, None)
        mean = sc.mean()
        if mean > 0:
            total += sc / mean
    return np.argsort(-total, kind="stable")[:n_select].astype(np.int64)


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return 0.0
    return float(spearmanr(a, b).statistic)


def ranking_fidelity(
    data: ResponseMatrix,
    reference: Any,
    method: str = "m3irt",
    fractions: Any = (0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5),
    *,
    targets: Any = None,
    scale: float | None = None,
    batch_fraction: float = 0.005,
    fit_kwargs: dict | None = None,
    seed: int = 0,
    progress: Any = None,
) -> dict[str, Any]:
    """Ranking fidelity of compact subsets, following the authors' leave-one-model-out CAT protocol.

    For every target model: fit ``method`` on the other models, select items adaptively for the target
    (:func:`adaptive_subset`; ``"random"`` draws a random order), and at every subset size
    ``fraction * n_items`` compute the Spearman correlation between the models' accuracies on the
    subset's columns (all variants) and ``reference`` (e.g. accuracies on the full normal benchmark).

    Parameters
    ----------
    data : ResponseMatrix (may contain low-quality items, see ``data.low_quality``)
    reference : array of shape (n_models,)
    method : "m3irt", "m2irt", "2pl" or "random"
    fractions : subset sizes as fractions of ``data.n_items``
    targets : model indices to test (default: all)
    scale : fixed scale for the leave-one-out fits; default: one scale search on all models
    batch_fraction : items picked per ability update, as a fraction of the items (speed knob)
    seed : seed of the random baseline and the scale search
    progress : optional wrapper (``ctx.progress``) for the loop over targets

    Returns
    -------
    dict with ``fractions``, ``n_selected``, ``spearman`` (n_targets, n_fractions), ``mean``,
    ``low_quality_ratio`` (n_targets, n_fractions, share of low-quality columns), ``scale``, ``targets``.
    """
    check_in(method, ALL_METHODS, "method")
    reference = np.asarray(reference, dtype=np.float64)
    if reference.shape != (data.n_models,):
        raise ValueError(f"reference must have shape ({data.n_models},), got {reference.shape}")
    fr = np.asarray(fractions, dtype=np.float64)
    if fr.ndim != 1 or fr.size == 0 or np.any((fr <= 0) | (fr > 1)):
        raise ValueError("fractions must be a non-empty 1-D sequence in (0, 1]")
    sizes = np.maximum(1, np.round(fr * data.n_items).astype(int))
    if targets is None:
        targets = np.arange(data.n_models)
    else:
        targets = np.atleast_1d(np.asarray(targets))
        if targets.ndim != 1 or targets.size == 0 or not np.issubdtype(targets.dtype, np.integer):
            raise ValueError(f"targets must be a non-empty 1-D sequence of model indices, got {targets!r}")
        if targets.min() < 0 or targets.max() >= data.n_models:
            raise ValueError(f"targets must index the models 0..{data.n_models - 1}, got {targets.max()}")
        targets = targets.astype(np.int64)
    fit_kwargs = dict(fit_kwargs or {})
    rng = np.random.default_rng(seed)
    if method != "random" and scale is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # constant columns: reported by a direct fit
            scale = METHODS[method](random_state=seed, **fit_kwargs).fit(data).scale_
    batch = max(1, int(round(batch_fraction * data.n_items)))
    rho = np.zeros((targets.size, sizes.size))
    lq = np.zeros_like(rho)
    loop = progress(targets, total=targets.size, desc=f"{method} CAT") if progress else targets
    for row, m in enumerate(loop):
        if method == "random":
            order = rng.permutation(data.n_items)[: sizes.max()]
        else:
            others = np.setdiff1d(np.arange(data.n_models), [m])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                model = METHODS[method](scale=scale, random_state=seed, **fit_kwargs).fit(
                    data.take_models(others)
                )
            order, _ = adaptive_subset(model, data.values[m], int(sizes.max()), batch=batch)
        for c, k in enumerate(sizes):
            items = order[:k]
            cols = np.isin(data.group, items)
            rho[row, c] = _spearman(np.nanmean(data.values[:, cols], axis=1), reference)
            lq[row, c] = data.low_quality[cols].mean()
    return {
        "method": method,
        "fractions": fr,
        "n_selected": sizes,
        "spearman": rho,
        "mean": rho.mean(0),
        "low_quality_ratio": lq,
        "scale": scale,
        "targets": targets,
    }
