"""Bradley-Terry leaderboards with bootstrap or sandwich intervals, and style/citation control.

Conventions follow LMArena's (``lmarena/search-arena`` ``scripts/utils.py``): ratings on the Elo scale
``init + scale * r`` with ``P(a beats b) = 1 / (1 + base^(r_b - r_a))``; ties (``tie`` and
``tie (bothbad)``) count as half a win for each side; models are indexed in order of first appearance in
``model_a`` then ``model_b``; the rank of a model is ``1 + #{j : lower_j > upper_i}``.
"""

from __future__ import annotations

import functools
import math
import os
import warnings
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy import stats
from scipy.sparse.csgraph import connected_components
from threadpoolctl import ThreadpoolController

from ..validation import check_bool, check_real
from . import _authors
from ._solver import _Design, chord_fit, chord_inverse, design, newton_fit

WINNERS = ("model_a", "model_b", "tie", "tie (bothbad)")
_CHUNK_CELLS = 1_200_000  # replicates x rows per batched call: bounds memory, keeps arrays in cache


class ConvergenceWarning(UserWarning):
    """Some bootstrap replicates have no finite optimum (a model never loses or never wins in them)."""


# --------------------------------------------------------------------------------------------- input


def check_battles(battles: Any) -> pd.DataFrame:
    """Validate ``battles`` (a DataFrame with ``model_a``, ``model_b``, ``winner``) and return it."""
    if not isinstance(battles, pd.DataFrame):
        raise ValueError(f"battles must be a pandas DataFrame, got {type(battles).__name__}")
    for col in ("model_a", "model_b", "winner"):
        if col not in battles.columns:
            raise ValueError(f"battles must have a column {col!r}; it has {list(battles.columns)}")
        missing = battles[col].isna().to_numpy()
        if missing.any():
            raise ValueError(f"battles[{col!r}] has a missing value at row {int(np.argmax(missing))}")
    if len(battles) == 0:
        raise ValueError("battles is empty")
    bad = ~battles["winner"].isin(WINNERS).to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"battles['winner'] must be one of {WINNERS}; row {i} has {battles['winner'].iloc[i]!r}"
        )
    same = (battles["model_a"] == battles["model_b"]).to_numpy()
    if same.any():
        i = int(np.argmax(same))
        raise ValueError(
            f"battles row {i}: model_a and model_b are the same model {battles['model_a'].iloc[i]!r}"
        )
    return battles


def encode(battles: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """``matchups`` (N, 2) model indices, ``outcomes`` (N,) for model a in {0, .5, 1}, ``models``."""
    n = len(battles)
    idx, models = pd.factorize(pd.concat([battles["model_a"], battles["model_b"]]))
    matchups = np.column_stack([idx[:n], idx[n:]]).astype(np.int64)
    winner = battles["winner"].to_numpy()
    outcomes = np.full(n, 0.5)
    outcomes[winner == "model_a"] = 1.0
    outcomes[winner == "model_b"] = 0.0
    return matchups, outcomes, list(models)


def deduplicate(matchups: np.ndarray, outcomes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unique (a, b, outcome) rows in the authors' (lexicographic) order, and their counts."""
    schedule = np.column_stack([matchups, (2 * outcomes).astype(np.int64)])
    uniq, counts = np.unique(schedule, axis=0, return_counts=True)
    return uniq[:, :2], uniq[:, 2] / 2.0, counts.astype(np.float64)


def unidentified_models(matchups: np.ndarray, outcomes: np.ndarray, n_models: int) -> list[int]:
    """Models outside the largest strongly connected 'beats or ties' component (empty when identified).

    The maximum-likelihood ratings are finite exactly when every model reaches every other through a
    chain of wins (a tie counts both ways) — Zermelo's condition; otherwise some ratings run to infinity.
    ``matchups`` (N, 2) holds model indices in ``[0, n_models)`` and ``outcomes`` (N,) the result for the
    first model, 1, 0.5 or 0 (as :func:`encode` gives them).
    """
    if isinstance(n_models, bool) or not isinstance(n_models, int | np.integer) or n_models < 1:
        raise ValueError(f"n_models must be an integer >= 1, got {n_models!r}")
    m, o = np.asarray(matchups), np.asarray(outcomes)
    if m.ndim != 2 or m.shape[1] != 2 or not np.issubdtype(m.dtype, np.integer):
        raise ValueError(
            f"matchups must be an (N, 2) array of integer model indices, got {m.dtype} {m.shape}"
        )
    if m.size and (m.min() < 0 or m.max() >= n_models):
        raise ValueError(f"matchups must hold model indices in [0, {n_models}), got {m.min()}..{m.max()}")
    if (
        o.shape != (m.shape[0],)
        or not np.issubdtype(o.dtype, np.number)
        or not np.isin(o, (0.0, 0.5, 1.0)).all()
    ):
        raise ValueError(f"outcomes must be {m.shape[0]} values in {{0, 0.5, 1}} (one per matchup)")
    return _unidentified_models(m, o, int(n_models))


def _unidentified_models(matchups: np.ndarray, outcomes: np.ndarray, n_models: int) -> list[int]:
    win_a, win_b = outcomes >= 0.5, outcomes <= 0.5
    src = np.concatenate([matchups[win_a, 0], matchups[win_b, 1]])
    dst = np.concatenate([matchups[win_a, 1], matchups[win_b, 0]])
    graph = sp.csr_matrix((np.ones(len(src)), (src, dst)), shape=(n_models, n_models))
    n_comp, labels = connected_components(graph, directed=True, connection="strong")
    if n_comp == 1:
        return []
    main = np.bincount(labels).argmax()
    return [int(i) for i in np.flatnonzero(labels != main)]


def _alpha(base: float) -> float:
    if not (isinstance(base, int | float) and math.isfinite(base) and base > 1):
        raise ValueError(f"base must be a number > 1, got {base!r}")
    return math.log(base)


def _check_positive(value: Any, name: str) -> float:
    if isinstance(value, bool) or not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return float(value)


def _check_elo(scale: Any, init: Any, anchor_rating: Any, authors_compat: Any) -> float:
    """Validate the Elo-scale arguments and ``authors_compat``; return ``scale`` as a float."""
    check_real(init, "init")  # a NaN init or anchor_rating would make every rating NaN
    check_real(anchor_rating, "anchor_rating")
    check_bool(authors_compat, "authors_compat")
    return _check_positive(scale, "scale")


def _check_rounds(n_rounds: Any) -> int:
    if isinstance(n_rounds, bool) or not isinstance(n_rounds, int | np.integer) or n_rounds < 2:
        raise ValueError(f"n_rounds must be an integer >= 2, got {n_rounds!r}")
    return int(n_rounds)


def _to_elo(
    natural: np.ndarray, models: list[Any], scale: float, init: float, anchor: Any, anchor_rating: float
):
    elo = natural * scale + init
    if anchor is not None:
        if anchor not in models:
            raise ValueError(f"anchor {anchor!r} is not one of the battles' models")
        elo = elo + (anchor_rating - elo[..., [models.index(anchor)]])
    return elo


def _refuse_unidentified(matchups, outcomes, models) -> None:
    bad = _unidentified_models(matchups, outcomes, len(models))
    if bad:
        names = ", ".join(repr(models[i]) for i in bad[:5])
        raise ValueError(
            "battles: the Bradley-Terry ratings have no finite maximum-likelihood value because some models "
            f"are not linked to the rest by wins in both directions ({names}); add battles, use "
            "controlled_bt (its L2 penalty makes every rating finite), or authors_compat=True (the authors' "
            "100-iteration L-BFGS values)"
        )


def _warn_unconverged(ok: np.ndarray) -> None:
    if not ok.all():
        warnings.warn(
            f"{int((~ok).sum())} of {len(ok)} fits did not converge (a model never loses or never wins in "
            "those resamples, so its rating has no finite optimum); their ratings are where the solver "
            "stopped, far out",
            ConvergenceWarning,
            stacklevel=4,
        )


@functools.cache
def _stream_pool() -> ThreadPoolExecutor:
    """Worker threads for the bootstrap streams after the first, kept for the process's life (starting
    threads on each call cost about as much as a plain-BT fit)."""
    return ThreadPoolExecutor(max_workers=max(1, min(_STREAMS, os.cpu_count() or 1) - 1))


@functools.cache
def _blas_controller() -> ThreadpoolController:
    """The BLAS libraries found once: ``threadpool_limits`` rescans the loaded libraries on every call,
    which cost 5 ms a bootstrap (about a sixth of the whole plain bootstrap at 12k battles)."""
    return ThreadpoolController()


def _fit_point(X, W, S, n_models, reg) -> np.ndarray:
    """The full-data optimum (P,)."""
    theta, ok = newton_fit(X, W[None, :], S[None, :], n_models, reg)
    _warn_unconverged(ok)
    return theta[0]


def _fit_replicates(X, W, S, n_models, reg, theta_hat) -> np.ndarray:
    """All bootstrap replicates (rows of ``W``/``S``) of the controlled model, in chunks small enough
    to stay in cache. (The plain-BT bootstrap, which also checks identifiability, is
    :func:`_bootstrap_pairs`.)
    """
    D = _Design(X)
    H_inv = chord_inverse(D, W.mean(axis=0), n_models, reg, theta_hat)
    halves = np.array_split(np.arange(W.shape[0]), _STREAMS)

    def fit(rows: np.ndarray):
        return _chord_chunks(D, H_inv, W[rows], S[rows], n_models, reg, theta_hat)

    parts = _in_streams(fit, halves)
    theta, ok = (np.concatenate([part[i] for part in parts]) for i in range(2))
    _warn_unconverged(ok)
    return theta


def _row_draw_counts(n: int, n_rounds: int, rng: np.random.Generator) -> np.ndarray:
    """How often each of ``n`` rows is drawn in each of ``n_rounds`` resamples of ``n`` rows with
    replacement: (n_rounds, n) float64, distributed as ``rng.multinomial(n, [1/n] * n)`` per round, but
    from ``n`` uniform integers and a ``bincount`` (a multinomial over ``n`` equal cells is ``n``
    sequential binomial draws: 1.7 s against 0.56 s for 1,000 rounds of 12,000 rows, both at load 9)."""
    out = np.empty((n_rounds, n))
    step = max(1, _CHUNK_CELLS // n)
    for start in range(0, n_rounds, step):
        r = min(step, n_rounds - start)
        cells = rng.integers(0, n, size=(r, n)) + (np.arange(r) * n)[:, None]
        out[start : start + r] = np.bincount(cells.ravel(), minlength=r * n).reshape(r, n)
    return out


def _in_streams(fn, args: list) -> list:
    """``[fn(a) for a in args]``, the first in the calling thread and the rest in :func:`_stream_pool`
    (numpy's samplers, ufuncs and single-threaded BLAS release the GIL)."""
    others = [_stream_pool().submit(fn, a) for a in args[1:]]
    return [fn(args[0])] + [f.result() for f in others]


def _chord_chunks(D, H_inv, W, S, n_models, reg, theta_hat) -> tuple[np.ndarray, np.ndarray]:
    """:func:`chord_fit` over chunks of replicates: ``theta`` (R, P) and ``converged`` (R,)."""
    chunk = max(1, _CHUNK_CELLS // max(W.shape[1], 1))
    thetas, ok = [], []
    for start in range(0, W.shape[0], chunk):
        sl = slice(start, start + chunk)
        th, conv = chord_fit(D, W[sl], S[sl], n_models, reg, theta_hat, H_inv)
        thetas.append(th)
        ok.append(conv)
    return np.vstack(thetas), np.concatenate(ok)


def _flag_unidentified(theta, ok, pairs, W, S, theta_hat, n_models) -> None:
    """Mark (in ``ok``) the replicates whose ratings ran off because some model has no finite optimum.

    A plain-BT replicate whose resampled battles leave some model without a win or without a loss has
    no finite optimum; the solver still stops (the gradient vanishes as ratings run off), so such
    replicates are found here by the identifiability check and reported as not converged.
    """
    spread = np.ptp(theta[:, :n_models], axis=1)
    for r in np.flatnonzero(spread > 4.0 * max(np.ptp(theta_hat[:n_models]), 1.0)):
        ok[r] &= not _unidentified_models(*_replicate_rows(pairs, W[r], S[r]), n_models)


def _replicate_rows(pairs, W, S) -> tuple[np.ndarray, np.ndarray]:
    """Rows for the identifiability check: a win (or tie) each way a resampled pair allows."""
    first = S > 0
    second = W - S > 0
    rows = np.concatenate([pairs[first], pairs[second]])
    return rows, np.concatenate([np.ones(first.sum()), np.zeros(second.sum())])


def pair_table(matchups: np.ndarray, outcomes: np.ndarray, n_models: int) -> tuple[np.ndarray, np.ndarray]:
    """Unordered pairs ``(i < j)`` that met, and their counts ``[i wins, ties, j wins]`` (pairs x 3).

    Plain Bradley-Terry depends on the battles only through these counts.
    """
    lo, hi = matchups.min(axis=1), matchups.max(axis=1)
    first_won = np.where(matchups[:, 0] == lo, outcomes, 1.0 - outcomes)
    kind = np.where(first_won == 1.0, 0, np.where(first_won == 0.5, 1, 2))
    pair_id = lo * n_models + hi
    ids, inverse = np.unique(pair_id, return_inverse=True)
    counts = np.bincount(inverse.ravel() * 3 + kind, minlength=3 * len(ids)).reshape(-1, 3).astype(np.float64)
    return np.column_stack([ids // n_models, ids % n_models]), counts


def _pair_rows(pairs: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One (matchup, outcome) row per non-empty cell of the pair table (for the identifiability check)."""
    cell = np.argwhere(counts > 0)
    return pairs[cell[:, 0]], np.array([1.0, 0.5, 0.0])[cell[:, 1]]


def _draw_pairs(counts: np.ndarray, n_rounds: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Battles and wins per pair in ``n_rounds`` bootstrap resamples of the battles.

    Same distribution as a multinomial draw of all N battles over the distinct (pair, outcome) cells,
    drawn hierarchically: battles per pair (a multinomial over pairs), then each pair's wins and ties
    (binomials), which needs a few hundred times fewer random draws. Returns ``W`` (battles) and ``S``
    (wins, ties counted half), each (n_rounds, n_pairs).
    """
    per_pair = counts.sum(axis=1)
    n = int(per_pair.sum())
    W = rng.multinomial(n, per_pair / n, size=n_rounds)
    q_win = counts[:, 0] / per_pair
    rest = 1.0 - q_win
    q_tie = np.divide(counts[:, 1], per_pair * rest, out=np.zeros_like(rest), where=rest > 0)
    wins = rng.binomial(W, q_win)
    ties = rng.binomial(W - wins, np.clip(q_tie, 0.0, 1.0))
    return W.astype(np.float64), wins + 0.5 * ties


# the rounds are drawn and fitted in this many independent streams, one thread each: the replicates
# depend on the seed only, not on how many cores run them (numpy's samplers and ufuncs release the GIL)
_STREAMS = 2


def _bootstrap_pairs(table, pairs, X, theta_hat, n_models: int, n_rounds: int, rng) -> np.ndarray:
    """Plain-BT bootstrap: ``n_rounds`` replicates (n_rounds, n_models), drawn by :func:`_draw_pairs`
    and fitted by :func:`chord_fit` in ``_STREAMS`` child generators of ``rng`` (``Generator.spawn``)."""
    D = _Design(X)
    # the chord iteration's fixed Hessian: at the full data (the replicates' expected counts)
    H_inv = chord_inverse(D, table.sum(axis=1).astype(np.float64), n_models, 0.0, theta_hat)

    def stream(size: int, gen: np.random.Generator):
        W, S = _draw_pairs(table, size, gen)
        return (W, S, *_chord_chunks(D, H_inv, W, S, n_models, 0.0, theta_hat))

    sizes = np.diff(np.linspace(0, n_rounds, _STREAMS + 1).astype(int))
    parts = _in_streams(lambda job: stream(*job), list(zip(sizes, rng.spawn(_STREAMS))))
    W, S, theta, ok = (np.concatenate([part[i] for part in parts]) for i in range(4))
    _flag_unidentified(theta, ok, pairs, W, S, theta_hat, n_models)
    _warn_unconverged(ok)
    return theta


# ------------------------------------------------------------------------------------- plain BT


def bradley_terry(
    battles: pd.DataFrame,
    anchor: Any = None,
    anchor_rating: float = 1000.0,
    scale: float = 400.0,
    base: float = 10.0,
    init: float = 1000.0,
    authors_compat: bool = False,
) -> pd.Series:
    """Maximum-likelihood Bradley-Terry ratings on the Elo scale, sorted from best to worst.

    Parameters
    ----------
    battles:
        DataFrame with ``model_a``, ``model_b`` and ``winner`` (one of :data:`WINNERS`), one row per vote.
    anchor, anchor_rating:
        When ``anchor`` names a model, all ratings are shifted so that it has ``anchor_rating``.
    scale, base, init:
        ``rating = init + scale * r`` with ``P(a beats b) = 1 / (1 + base ** (r_b - r_a))``; without an
        anchor the natural-scale ratings sum to zero.
    authors_compat:
        Reproduce the authors' ``compute_bt`` (L-BFGS-B from zero, at most 100 iterations, ``gtol=1e-6``)
        instead of solving to machine precision by Newton's method. Only in this mode are ratings
        returned when no finite optimum exists (a model that never loses); the default raises.

    Returns
    -------
    pandas.Series indexed by model.
    """
    check_battles(battles)
    alpha = _alpha(base)
    scale = _check_elo(scale, init, anchor_rating, authors_compat)
    matchups, outcomes, models = encode(battles)
    if authors_compat:
        um, uo, counts = deduplicate(matchups, outcomes)
        natural = _authors.fit_bt(um, uo, counts, len(models), alpha)
    else:
        pairs, table = pair_table(matchups, outcomes, len(models))
        _refuse_unidentified(*_pair_rows(pairs, table), models)
        W, S = table.sum(axis=1), table[:, 0] + 0.5 * table[:, 1]
        natural = _fit_point(design(pairs, None, len(models), alpha), W, S, len(models), 0.0)
    elo = _to_elo(natural, models, scale, init, anchor, anchor_rating)
    return pd.Series(elo, index=models).sort_values(ascending=False)


def bootstrap_bt(
    battles: pd.DataFrame,
    n_rounds: int = 100,
    seed: int = 0,
    anchor: Any = None,
    anchor_rating: float = 1000.0,
    scale: float = 400.0,
    base: float = 10.0,
    init: float = 1000.0,
    authors_compat: bool = False,
) -> pd.DataFrame:
    """Bootstrap replicates of the ratings: DataFrame (n_rounds, models), columns by median rating.

    Each round resamples the ``N`` battles with replacement. The default draws them per pair (battles per
    pair, then wins and ties: the same distribution as a draw of N battles) and fits all rounds together
    from the full-data optimum (:func:`._solver.chord_fit`). ``authors_compat=True`` draws exactly as the
    authors (one multinomial over the distinct (a, b, outcome) rows per round from
    ``numpy.random.default_rng(seed)``) and runs one L-BFGS-B per round on counts divided by ``N``, with
    their tolerance and iteration cap. With ``anchor``, every replicate is shifted by the offset
    that puts the anchor at ``anchor_rating`` in the point fit (the authors' notebook), so the anchor's
    own uncertainty stays visible.
    """
    check_battles(battles)
    n_rounds = _check_rounds(n_rounds)
    alpha = _alpha(base)
    scale = _check_elo(scale, init, anchor_rating, authors_compat)
    matchups, outcomes, models = encode(battles)
    if authors_compat:
        um, uo, counts = deduplicate(matchups, outcomes)
        n = len(battles)
        draws = np.random.default_rng(seed).multinomial(n, counts / counts.sum(), size=n_rounds)
        natural = np.array([_authors.fit_bt(um, uo, w / n, len(models), alpha) for w in draws.astype(float)])
    else:
        pairs, table = pair_table(matchups, outcomes, len(models))
        _refuse_unidentified(*_pair_rows(pairs, table), models)
        # one BLAS thread: the products are small, and after a multi-threaded call OpenBLAS's idle
        # threads spin for a while, which slowed the bootstrap's own threads about twofold
        with _blas_controller().limit(limits=1, user_api="blas"):
            X = design(pairs, None, len(models), alpha)
            theta_hat = _fit_point(X, table.sum(axis=1), table[:, 0] + 0.5 * table[:, 1], len(models), 0.0)
            rng = np.random.default_rng(seed)
            natural = _bootstrap_pairs(table, pairs, X, theta_hat, len(models), n_rounds, rng)
    offset = 0.0
    if anchor is not None:
        point = bradley_terry(battles, None, scale=scale, base=base, init=init, authors_compat=authors_compat)
        if anchor not in models:
            raise ValueError(f"anchor {anchor!r} is not one of the battles' models")
        offset = anchor_rating - point[anchor]
    df = pd.DataFrame(natural * scale + init + offset, columns=models)
    return df[df.median().sort_values(ascending=False).index]


def _sandwich_sd(battles, base) -> pd.Series:
    """Robust (sandwich) standard errors of the natural-scale ratings, ``H^+ B H^+`` at the optimum."""
    alpha = _alpha(base)
    matchups, outcomes, models = encode(battles)
    um, uo, counts = deduplicate(matchups, outcomes)
    _refuse_unidentified(um, uo, models)
    X = design(um, None, len(models), alpha)
    theta = _fit_point(X, counts, counts * uo, len(models), 0.0)
    D = X.toarray()
    p = 1.0 / (1.0 + np.exp(-(D @ theta)))
    H = (D * (counts * p * (1 - p))[:, None]).T @ D
    B = (D * (counts * (p - uo) ** 2)[:, None]).T @ D
    Hp = np.linalg.pinv(H)
    cov = Hp @ B @ Hp
    return pd.Series(np.sqrt(np.clip(np.diag(cov), 0, None)), index=models)


def _ranks(lower: pd.Series, upper: pd.Series) -> pd.Series:
    lo = lower.to_numpy()
    hi = upper.to_numpy()
    return pd.Series(1 + (lo[None, :] > hi[:, None]).sum(axis=1), index=lower.index)


def leaderboard(
    battles: pd.DataFrame,
    n_rounds: int = 100,
    seed: int = 0,
    ci: str = "bootstrap",
    level: float = 0.95,
    anchor: Any = None,
    anchor_rating: float = 1000.0,
    scale: float = 400.0,
    base: float = 10.0,
    init: float = 1000.0,
    authors_compat: bool = False,
) -> pd.DataFrame:
    """Leaderboard: ``rating, variance, lower, upper, num_battles, rank`` per model, best first.

    ``ci="bootstrap"``: the point MLE as ``rating`` (``authors_compat=True``: the bootstrap mean, as the
    authors' table; their plain-BT bootstrap always has 100 rounds, so ``n_rounds`` is ignored there),
    the bootstrap variance and ``level`` quantiles. ``ci="sandwich"``: the point MLE with robust
    (sandwich) variance ``H^+ B H^+`` and a normal interval, as LMArena's ``arena-rank`` reports it.
    ``rank = 1 + #{j : lower_j > upper_i}``.
    """
    check_battles(battles)
    if ci not in ("bootstrap", "sandwich"):
        raise ValueError(f"ci must be 'bootstrap' or 'sandwich', got {ci!r}")
    if not (isinstance(level, float) and 0 < level < 1):
        raise ValueError(f"level must be a float in (0, 1), got {level!r}")
    scale = _check_elo(scale, init, anchor_rating, authors_compat)
    counts = pd.concat([battles["model_a"], battles["model_b"]]).value_counts()
    kw = dict(anchor=anchor, anchor_rating=anchor_rating, scale=scale, base=base, init=init)
    if ci == "bootstrap":
        rounds = 100 if authors_compat else n_rounds
        boot = bootstrap_bt(battles, rounds, seed, authors_compat=authors_compat, **kw)
        q = (1 - level) / 2
        rating = boot.mean() if authors_compat else bradley_terry(battles, **kw)
        table = pd.DataFrame(
            {
                "rating": rating,
                "variance": boot.var(),
                "lower": boot.quantile(q),
                "upper": boot.quantile(1 - q),
            }
        )
    else:
        rating = bradley_terry(battles, **kw)
        sd = _sandwich_sd(battles, base) * scale
        z = float(stats.norm.ppf(0.5 + level / 2))
        table = pd.DataFrame({"rating": rating, "variance": sd**2})
        table["lower"] = table["rating"] - z * sd
        table["upper"] = table["rating"] + z * sd
    table["num_battles"] = counts.reindex(table.index).astype(int)
    table["rank"] = _ranks(table["lower"], table["upper"])
    return table.sort_values("rating", ascending=False)


# ------------------------------------------------------------------------------------ controlled BT


def transform_features(
    features: Mapping[str, Any], n: int, authors_compat: bool = False
) -> tuple[np.ndarray, list[str]]:
    """Style features ``(N, F)``: ``(a - b) / (a + b + 1)`` per feature, z-scored (population std).

    ``features`` maps a name to an (N, 2) array of non-negative per-side values (model a, model b).
    ``authors_compat=True`` first truncates them to int32 as the authors' ``preprocess_for_style`` does
    (a mean of 2.7 citations per turn becomes 2).
    """
    if not isinstance(features, Mapping) or not features:
        raise ValueError("features must be a non-empty mapping of name -> (N, 2) array")
    check_bool(authors_compat, "authors_compat")
    cols, names = [], []
    for name, values in features.items():
        v = (
            np.asarray(values, dtype=np.float64)
            if not isinstance(values, pd.DataFrame)
            else values.to_numpy(float)
        )
        if v.shape != (n, 2):
            raise ValueError(
                f"features[{name!r}] must have shape ({n}, 2) (one row per battle), got {v.shape}"
            )
        if not np.isfinite(v).all():
            raise ValueError(f"features[{name!r}] has a non-finite value")
        if (v < 0).any():
            raise ValueError(f"features[{name!r}] must be non-negative (counts, lengths), got {v.min()}")
        if authors_compat:
            v = v.astype(np.int32).astype(np.float64)
        ratio = (v[:, 0] - v[:, 1]) / (v[:, 0] + v[:, 1] + 1.0)
        sd = ratio.std()
        if not sd > 0:
            raise ValueError(
                f"features[{name!r}] is constant after the ratio transform; it cannot be controlled for"
            )
        cols.append((ratio - ratio.mean()) / sd)
        names.append(str(name))
    return np.column_stack(cols), names


@dataclass(frozen=True)
class ControlledBT:
    """Result of :func:`controlled_bt`.

    ``ratings`` and ``coefficients`` are the point estimates (Elo scale; coefficients in log-odds per
    standard deviation of the transformed feature); ``ratings_bootstrap`` (n_rounds, models) and
    ``coef_bootstrap`` (n_rounds, features) the replicates; ``coef_table`` has ``estimate, lower, upper``
    (``level`` percentile interval) and ``significant`` (the interval excludes 0).
    """

    ratings: pd.Series
    coefficients: pd.Series
    ratings_bootstrap: pd.DataFrame
    coef_bootstrap: pd.DataFrame
    coef_table: pd.DataFrame


def controlled_bt(
    battles: pd.DataFrame,
    features: Mapping[str, Any],
    reg: float = 0.5,
    n_rounds: int = 100,
    seed: int = 0,
    level: float = 0.95,
    anchor: Any = None,
    anchor_rating: float = 1000.0,
    scale: float = 400.0,
    base: float = 10.0,
    init: float = 1000.0,
    authors_compat: bool = False,
) -> ControlledBT:
    """Bradley-Terry with style/citation control (contextual BT), with bootstrap intervals.

    ``logit P(a beats b) = ln(base) (r_a - r_b) + x . beta`` with ``x`` from :func:`transform_features`,
    L2 penalty ``reg / 2`` on all parameters (the authors' objective). Rows are resampled with
    replacement ``n_rounds`` times and all replicates are fitted together (batched Newton); the features
    are transformed once, on the full data, as the authors do. ``authors_compat=True``: the authors'
    int32 truncation, ``np.random.seed(seed)`` row draws, one L-BFGS-B run per replicate, and
    bootstrap-mean point figures in ``coef_table``.
    """
    check_battles(battles)
    reg = _check_positive(reg, "reg")
    n_rounds = _check_rounds(n_rounds)
    alpha = _alpha(base)
    scale = _check_elo(scale, init, anchor_rating, authors_compat)
    if not (isinstance(level, float) and 0 < level < 1):
        raise ValueError(f"level must be a float in (0, 1), got {level!r}")
    matchups, outcomes, models = encode(battles)
    n, m = len(battles), len(models)
    F, names = transform_features(features, n, authors_compat)
    if authors_compat:
        point = _authors.fit_contextual(matchups, F, outcomes, m, alpha, reg)
        np.random.seed(seed)  # noqa: NPY002 - the authors draw rows from the legacy global generator
        idx = np.random.randint(0, n, size=(n_rounds, n))  # noqa: NPY002
        reps = np.array([_authors.fit_contextual(matchups[i], F[i], outcomes[i], m, alpha, reg) for i in idx])
    else:
        X = design(matchups, F, m, alpha)
        point = _fit_point(X, np.ones(n), outcomes, m, reg)
        draws = _row_draw_counts(n, n_rounds, np.random.default_rng(seed))
        with _blas_controller().limit(limits=1, user_api="blas"):
            reps = _fit_replicates(X, draws, draws * outcomes, m, reg, point)
    ratings = pd.Series(_to_elo(point[:m], models, scale, init, anchor, anchor_rating), index=models)
    offset = 0.0 if anchor is None else float(ratings[anchor] - (point[models.index(anchor)] * scale + init))
    boot = pd.DataFrame(reps[:, :m] * scale + init + offset, columns=models)
    boot = boot[boot.median().sort_values(ascending=False).index]
    coef_boot = pd.DataFrame(reps[:, m:], columns=names)
    q = (1 - level) / 2
    estimate = coef_boot.mean() if authors_compat else pd.Series(point[m:], index=names)
    table = pd.DataFrame(
        {"estimate": estimate, "lower": coef_boot.quantile(q), "upper": coef_boot.quantile(1 - q)}
    )
    table["significant"] = (table["lower"] > 0) | (table["upper"] < 0)
    return ControlledBT(
        ratings.sort_values(ascending=False), pd.Series(point[m:], index=names), boot, coef_boot, table
    )
