"""Intervals for measured claims: bootstrap over experimental units, repetition over seeds, both.

Every measured :class:`iclr26.claims.Claim` carries an interval over the unit that varies. Three cases
cover the experiments here:

- **units sampled** (candidates, graphs, items, models, vehicles): :func:`bootstrap` resamples the units
  (rows) with replacement and recomputes the statistic; several arrays passed together are resampled with
  the *same* indices, so a paired difference (two indices on the same candidates, two models on the same
  items) is computed on common units;
- **seeds repeated** (training seeds, data seeds): :func:`over_seeds` gives a Student-t interval of the
  mean of one figure per seed;
- **both vary**: :func:`hierarchical_bootstrap` resamples seeds, then units within each resampled seed
  (units nested in seeds: each seed has its own units), or, with ``crossed=True``, seeds and one shared
  draw of the units (the same units measured under every seed, e.g. a fixed test set and training seeds).

Each returns an :class:`Estimate` (the point figure, the interval, how it was obtained), which turns into
a claim with :meth:`Estimate.claim`.

References: B. Efron and R. Tibshirani, *An Introduction to the Bootstrap* (1993), ch. 13-14 (percentile
and BCa intervals); the hierarchical bootstrap as in Saravanan et al., "Application of the hierarchical
bootstrap to multi-level data in neuroscience", NBDC 2020; for crossed seeds x units, the two-way
("pigeonhole") bootstrap of A. B. Owen, "The pigeonhole bootstrap", Ann. Appl. Stat. 1(2), 2007.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from .claims import Claim
from .validation import check_int

__all__ = [
    "Estimate",
    "bootstrap",
    "crossed_resamples",
    "exact",
    "hierarchical_bootstrap",
    "over_seeds",
    "paired_difference",
]

Statistic = Callable[..., float]


@dataclass(frozen=True)
class Estimate:
    """A measured figure with its interval.

    ``value`` is the statistic on the full data; ``(lo, hi)`` its ``level`` interval; ``method`` says how
    it was obtained (it is copied into the claim); ``n`` is the number of units (or seeds) it rests on;
    ``replicates`` holds the bootstrap or per-seed values (for plots and diagnostics).
    """

    value: float
    lo: float
    hi: float
    level: float
    method: str
    n: int
    replicates: np.ndarray | None = None

    @property
    def interval(self) -> tuple[float, float]:
        return (self.lo, self.hi)

    def claim(self, statement: str, op: str, reference: float, **kwargs: Any) -> Claim:
        """A :class:`Claim` measured by this estimate (``kwargs`` go to ``Claim``)."""
        if not (math.isfinite(self.lo) and math.isfinite(self.hi)):
            # No interval could be formed (too few units): nothing can be concluded.
            why = f"point figure {self.value:.4g}, but no interval could be formed ({self.method})"
            kwargs["detail"] = (kwargs.get("detail", "") + "; " + why).lstrip("; ")
            return Claim(statement, float("nan"), op, reference, **kwargs)
        return Claim(
            statement,
            self.value,
            op,
            reference,
            interval=self.interval,
            level=self.level,
            method=self.method,
            **kwargs,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "lo": self.lo,
            "hi": self.hi,
            "level": self.level,
            "method": self.method,
            "n": self.n,
        }


def _check_level(level: float) -> float:
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    return level


def _check_n_boot(n_boot: int) -> int:
    if isinstance(n_boot, bool) or not isinstance(n_boot, int | np.integer) or n_boot < 10:
        raise ValueError(f"n_boot must be an integer >= 10, got {n_boot!r}")
    return int(n_boot)


def _as_units(arrays: Sequence[Any]) -> list[np.ndarray]:
    if not arrays:
        raise ValueError("bootstrap needs at least one array of per-unit values")
    out = [np.asarray(a) for a in arrays]
    n = len(out[0]) if out[0].ndim else 0
    for i, a in enumerate(out):
        if a.ndim == 0 or len(a) != n:
            raise ValueError(f"arrays[{i}] must have one row per unit ({n} units), got shape {a.shape}")
    if n < 2:
        raise ValueError(f"bootstrap needs at least 2 units, got {n}")
    return out


def _percentile(reps: np.ndarray, level: float) -> tuple[float, float]:
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(reps, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def _bca(reps: np.ndarray, value: float, jack: np.ndarray, level: float) -> tuple[float, float]:
    """Bias-corrected and accelerated interval (Efron & Tibshirani 1993, §14.3)."""
    prop = np.clip(np.mean(reps < value) + 0.5 * np.mean(reps == value), 1e-12, 1 - 1e-12)
    z0 = stats.norm.ppf(prop)
    d = jack.mean() - jack
    denom = 6.0 * (np.sum(d**2) ** 1.5)
    accel = float(np.sum(d**3) / denom) if denom > 0 else 0.0
    alpha = (1.0 - level) / 2.0
    z = stats.norm.ppf([alpha, 1.0 - alpha])
    adj = stats.norm.cdf(z0 + (z0 + z) / (1.0 - accel * (z0 + z)))
    lo, hi = np.quantile(reps, np.clip(adj, 0.0, 1.0))
    return float(lo), float(hi)


def bootstrap(
    statistic: Statistic,
    *arrays: Any,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
    method: str = "percentile",
    unit: str = "units",
) -> Estimate:
    """Bootstrap interval of ``statistic(*arrays)`` over the units (rows) of ``arrays``.

    Parameters
    ----------
    statistic:
        ``f(*arrays) -> float``, called on the full arrays and on each resample.
    arrays:
        One or more array-likes with the same first dimension ``n`` (one row per unit). All are resampled
        with the same row indices, so paired statistics stay paired.
    n_boot, level, seed:
        Number of resamples (>= 10), coverage, and the seed of the resampling generator.
    method:
        ``"percentile"`` or ``"bca"`` (bias-corrected and accelerated, which needs ``n`` jackknife calls).
    unit:
        What a row is (``"candidates"``, ``"graphs"``, ...), for the interval's description.

    Returns
    -------
    Estimate
        Resamples whose statistic is NaN (e.g. a correlation of a constant resample) are dropped; the
        count dropped is in ``method``. If fewer than half remain, the interval is ``(nan, nan)``.
    """
    level = _check_level(level)
    n_boot = _check_n_boot(n_boot)
    if method not in ("percentile", "bca"):
        raise ValueError(f"method must be 'percentile' or 'bca', got {method!r}")
    units = _as_units(arrays)
    n = len(units[0])
    value = float(statistic(*units))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    reps = np.array([float(statistic(*(a[i] for a in units))) for i in idx])
    ok = np.isfinite(reps)
    desc = f"{method} bootstrap over {n} {unit}, {n_boot} resamples"
    if (~ok).any():
        desc += f", {int((~ok).sum())} undefined resamples dropped"
    reps = reps[ok]
    if len(reps) < n_boot / 2 or not math.isfinite(value):
        return Estimate(value, math.nan, math.nan, level, desc, n, reps)
    if method == "bca":
        keep = np.ones(n, dtype=bool)
        jack = []
        for i in range(n):
            keep[i] = False
            jack.append(float(statistic(*(a[keep] for a in units))))
            keep[i] = True
        jack = np.asarray(jack)
        lo, hi = (
            _bca(reps, value, jack[np.isfinite(jack)], level)
            if np.isfinite(jack).sum() > 2
            else _percentile(reps, level)
        )
    else:
        lo, hi = _percentile(reps, level)
    return Estimate(value, lo, hi, level, desc, n, reps)


def paired_difference(
    statistic: Statistic,
    a: Any,
    b: Any,
    *shared: Any,
    **kwargs: Any,
) -> Estimate:
    """Bootstrap of ``statistic(a, *shared) - statistic(b, *shared)`` on common units.

    ``a`` and ``b`` are per-unit values of two methods on the same units (e.g. two quality indices on the
    same candidate clusterings, with ``shared`` = the ARI of each candidate); units where either is NaN are
    removed from both first, so each side is computed on the same subset.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    shared_arr = [np.asarray(s) for s in shared]
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same shape, got {a.shape} and {b.shape}")
    common = np.isfinite(a) & np.isfinite(b)
    for s in shared_arr:
        if s.shape[:1] != a.shape[:1]:
            raise ValueError(f"shared arrays need {len(a)} rows, got shape {s.shape}")
        if np.issubdtype(s.dtype, np.number):
            common &= np.all(np.isfinite(s.reshape(len(s), -1)), axis=1)
    diff = lambda x, y, *sh: statistic(x, *sh) - statistic(y, *sh)  # noqa: E731
    est = bootstrap(diff, a[common], b[common], *(s[common] for s in shared_arr), **kwargs)
    dropped = int((~common).sum())
    if dropped:
        est = Estimate(
            est.value,
            est.lo,
            est.hi,
            est.level,
            est.method + f", {dropped} units undefined for either side removed from both",
            est.n,
            est.replicates,
        )
    return est


def over_seeds(values: Any, level: float = 0.95, unit: str = "seeds") -> Estimate:
    """Student-t interval of the mean of one figure per seed (or per repetition).

    With fewer than 2 finite values no interval exists and ``(nan, nan)`` is returned.
    """
    level = _check_level(level)
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v)]
    n = len(v)
    mean = float(v.mean()) if n else math.nan
    desc = f"t interval of the mean over {n} {unit}"
    if n < 2:
        return Estimate(mean, math.nan, math.nan, level, desc, n, v)
    sd = float(v.std(ddof=1))
    half = float(stats.t.ppf(0.5 + level / 2.0, n - 1)) * sd / math.sqrt(n)
    return Estimate(mean, mean - half, mean + half, level, desc, n, v)


def crossed_resamples(n_seeds: int, n_units: int, n_boot: int = 1000, seed: int = 0):
    """Index draws of the two-way bootstrap of a crossed design (every unit measured under every seed).

    Returns an iterator over ``n_boot`` pairs ``(seeds, units)``: ``seeds`` (n_seeds,) drawn with
    replacement from the seeds and ``units`` (n_units,) from the units; one draw of the units serves every
    chosen seed, so the variance that the units share across seeds is kept (resampling them again for each
    seed would divide it by the number of seeds).
    """
    n_boot = _check_n_boot(n_boot)
    n_seeds = check_int(n_seeds, "n_seeds", minimum=1)
    n_units = check_int(n_units, "n_units", minimum=1)
    rng = np.random.default_rng(seed)
    # A generator, so that n_boot draws of n_units indices are never held at once; checked eagerly above.
    return (
        (rng.integers(0, n_seeds, size=n_seeds), rng.integers(0, n_units, size=n_units))
        for _ in range(n_boot)
    )


def hierarchical_bootstrap(
    statistic: Statistic,
    per_seed: Sequence[Any],
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
    unit: str = "units",
    crossed: bool = False,
) -> Estimate:
    """Interval when both seeds and units vary: resample seeds, then units.

    ``per_seed`` is a list (one entry per seed) of arrays with one row per unit. The statistic is applied
    to each seed's (resampled) rows and averaged over the (resampled) seeds; the point figure is the mean
    over seeds of the statistic on the full rows.

    ``crossed=False`` (units nested in seeds; the unit counts may differ): the units of each resampled
    seed are drawn on their own. ``crossed=True`` (row ``i`` is the same unit in every seed, e.g. one test
    set scored by models trained with different seeds; the unit counts must be equal): one draw of the
    units serves every resampled seed (:func:`crossed_resamples`). The nested scheme on a crossed design
    treats the seeds' units as independent samples and so narrows the interval: by up to the square root
    of the number of seeds when the units' effects dominate.
    """
    level = _check_level(level)
    n_boot = _check_n_boot(n_boot)
    groups = [np.asarray(g) for g in per_seed]
    if len(groups) < 2:
        raise ValueError(f"per_seed needs at least 2 seeds, got {len(groups)}")
    for i, g in enumerate(groups):
        if g.ndim == 0 or len(g) < 2:
            raise ValueError(f"per_seed[{i}] needs at least 2 units, got shape {g.shape}")
    if crossed and len({len(g) for g in groups}) > 1:
        raise ValueError(
            f"crossed=True needs the same units in every seed, got unit counts {[len(g) for g in groups]}"
        )
    value = float(np.mean([statistic(g) for g in groups]))
    if crossed:
        draws = crossed_resamples(len(groups), len(groups[0]), n_boot, seed)
        reps = np.array([np.mean([statistic(groups[s][units]) for s in chosen]) for chosen, units in draws])
        scheme = "two-way bootstrap over {} seeds x {} {} (crossed: the same {} in every seed)"
        desc = scheme.format(len(groups), len(groups[0]), unit, unit)
    else:
        rng = np.random.default_rng(seed)
        reps = np.empty(n_boot)
        for b in range(n_boot):
            chosen = rng.integers(0, len(groups), size=len(groups))
            vals = []
            for s in chosen:
                g = groups[s]
                vals.append(statistic(g[rng.integers(0, len(g), size=len(g))]))
            reps[b] = np.mean(vals)
        desc = f"hierarchical bootstrap over {len(groups)} seeds x {sum(map(len, groups))} {unit}"
    desc += f", {n_boot} resamples"
    ok = np.isfinite(reps)
    reps = reps[ok]
    if len(reps) < n_boot / 2:
        return Estimate(value, math.nan, math.nan, level, desc, len(groups), reps)
    lo, hi = _percentile(reps, level)
    return Estimate(value, lo, hi, level, desc, len(groups), reps)


def exact(statement: str, value: float, op: str, reference: float, **kwargs: Any) -> Claim:
    """A claim on an exact quantity (an equality, a round-trip rate, a count): no interval."""
    return Claim(statement, value, op, reference, exact=True, **kwargs)
