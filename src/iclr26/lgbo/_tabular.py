"""Tabular benchmarks a user supplies as CSV: Crossed-barrel, LNP3 and Concrete, as the authors prepare them.

The authors (Xinzhe309/LGBO, ``fun/`` and ``docs/benchmark_data.md``) read:

- **Crossed-barrel** (Olympus, 600 rows ``n, theta, r, t, toughness``; maximise the toughness) and
  **Concrete** (UCI 165, rows with ``Age <= 100``, ``Age`` dropped, 968 rows of seven ingredients and the
  strength; maximise it) through one tabular evaluator: non-numeric cells make a row drop out; when the
  data fill a full Cartesian grid (2..64 levels per input, at most 200,000 cells) a query is interpolated
  multilinearly with clamped edges (the last row of a repeated input wins); otherwise, and always for
  Concrete, inputs are min-max scaled by the data's bounds and a query gets the 12-NN inverse-squared-distance
  mean (:class:`IDWOracle`).
- **LNP3** (Olympus, 768 rows: drug input, solid lipid, solid-lipid / liquid-lipid / surfactant inputs, then
  drug loading, encapsulation efficiency, particle diameter): a full 4 x 3 x 4 x 4 x 4 design looked up
  exactly; the score ``0.4 dl + 0.4 ee + 0.2 (1 - pd)`` of min-max normalised targets is maximised. The
  optimiser works on the unit cube ``[0, 1]^6`` (drug input, two lipid bits, the three inputs): each
  coordinate is rounded to the nearest level *index* (``00`` stearic acid, ``10`` Compritol 888, ``11``
  glyceryl monostearate; bit 1 is ignored when bit 0 is 0).

Olympus files come without a header; a CSV whose first row lacks the column names but has the layout's
number of fields is read as such a file (the authors' downloader prepends the same names).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.interpolate import RegularGridInterpolator

from iclr26.validation import check_array, check_int

from ._hplc import IDWOracle

CROSSED_BARREL_INPUTS = ("n", "theta", "r", "t")
CROSSED_BARREL_TARGET = "toughness"
CONCRETE_INPUTS = ("Cement", "Blast", "Fly", "Water", "Superplas", "CoarseAg", "FineAggr")
CONCRETE_TARGET = "Strength"
CONCRETE_UCI_COLUMNS = (
    "Cement",
    "Blast Furnace Slag",
    "Fly Ash",
    "Water",
    "Superplasticizer",
    "Coarse Aggregate",
    "Fine Aggregate",
    "Age",
    "Concrete compressive strength",
)
CONCRETE_MAX_AGE = 100.0
LNP3_COLUMNS = (
    "drug_input",
    "solid_lipid",
    "solid_lipid_input",
    "liquid_lipid_input",
    "surfactant_input",
    "drug_loading",
    "encap_efficiency",
    "particle_diameter",
)
LNP3_LIPIDS = ("Stearic_acid", "Compritol_888", "Glyceryl_monostearate")
LNP3_LEVELS = {
    "drug_input": (6.0, 12.0, 24.0, 48.0),
    "solid_lipid_input": (72.0, 96.0, 108.0, 120.0),
    "liquid_lipid_input": (0.0, 12.0, 24.0, 48.0),
    "surfactant_input": (0.0, 0.0025, 0.005, 0.01),
}
LNP3_ROWS = 768


class GridOracle:
    """Multilinear interpolation of values on a full Cartesian grid, queries clamped to the grid's box.

    Parameters
    ----------
    levels:
        One strictly increasing array of at least two levels per input.
    values:
        Values of shape ``tuple(len(l) for l in levels)``.
    """

    def __init__(self, levels: list[np.ndarray], values: np.ndarray):
        self.levels = [np.asarray(lv, dtype=float) for lv in levels]
        if any(len(lv) < 2 or np.any(np.diff(lv) <= 0) for lv in self.levels):
            raise ValueError("levels must each hold at least two strictly increasing values")
        if any(not np.isfinite(lv).all() for lv in self.levels):
            raise ValueError("levels must be finite")
        values = check_array(values, "values", ndim=None)
        self.bounds = np.array([[lv[0] for lv in self.levels], [lv[-1] for lv in self.levels]])
        self._interp = RegularGridInterpolator(self.levels, values)

    def __call__(self, Q: Any) -> np.ndarray:
        """Interpolated values ``(m,)`` at the queries ``Q`` ``(m, d)``."""
        Q = check_array(np.atleast_2d(Q), "Q")
        if Q.shape[1] != len(self.levels):
            raise ValueError(f"Q must have {len(self.levels)} columns, got {Q.shape[1]}")
        return self._interp(np.clip(Q, self.bounds[0], self.bounds[1]))


def tabular_oracle(
    X: Any,
    y: Any,
    try_regular_grid: bool = True,
    max_grid_cells: int = 200_000,
    max_levels: int = 64,
    k: int = 12,
) -> GridOracle | IDWOracle:
    """The authors' tabular evaluator: a :class:`GridOracle` when ``X`` fills a full grid, else 12-NN IDW."""
    X, y = check_array(X, "X"), check_array(y, "y", ndim=1)
    if len(y) != len(X):
        raise ValueError(f"y must have one value per row of X ({len(X)}), got {len(y)}")
    k = check_int(k, "k", minimum=1)
    max_grid_cells = check_int(max_grid_cells, "max_grid_cells", minimum=1)
    max_levels = check_int(max_levels, "max_levels", minimum=2)
    if try_regular_grid:
        levels, codes = zip(*(np.unique(col, return_inverse=True) for col in X.T))
        shape = tuple(len(lv) for lv in levels)
        if all(2 <= s <= max_levels for s in shape) and np.prod(shape) <= max_grid_cells:
            flat = np.ravel_multi_index(np.stack(codes), shape)
            if len(np.unique(flat)) == np.prod(shape):
                last = len(flat) - 1 - np.unique(flat[::-1], return_index=True)[1]  # last row per cell
                values = np.empty(shape)
                values.flat[flat[last]] = y[last]
                return GridOracle(list(levels), values)
    return IDWOracle(X, y, k=k)


@dataclass
class TabularBenchmark:
    """A measured data set as a black box to maximise.

    ``X`` ``(n, d)`` and ``y`` ``(n,)`` are the rows kept; ``bounds`` ``(2, d)`` is the box the optimiser
    searches (physical units, or the unit cube for LNP3); calling the benchmark on ``(m, d)`` points in
    that box returns ``(m,)`` values; ``task`` holds the prompt fields for :func:`build_prompts`.
    """

    name: str
    inputs: tuple[str, ...]
    target: str
    X: np.ndarray
    y: np.ndarray
    bounds: np.ndarray
    oracle: Any = field(repr=False)
    goal: str = "max"

    def __call__(self, Q: Any) -> np.ndarray:
        return self.oracle(Q)

    @property
    def task(self) -> dict[str, Any]:
        params = [
            {"name": n, "bounds": [float(lo), float(hi)]}
            for n, lo, hi in zip(self.inputs, self.bounds[0], self.bounds[1])
        ]
        return {
            "background": f"Tabular benchmark {self.name}: choose the inputs of the next measurements.",
            "parameters": params,
            "objective": f"Maximize {self.target}. Larger is better.",
            "y_key": self.target,
        }


def _read_layout(path: Any, columns: tuple[str, ...], what: str) -> pd.DataFrame:
    """The CSV at ``path`` as strings, with ``columns`` present (named, or a headerless Olympus file)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{what}: no CSV file at {str(path)!r}")
    raw = pd.read_csv(path, header=None, dtype=str, skip_blank_lines=True, encoding="utf-8-sig")
    if raw.empty:
        raise ValueError(f"{what}: {str(path)!r} is empty")
    first = [str(v).strip() for v in raw.iloc[0]]
    if set(columns) <= set(first):
        return raw.iloc[1:].set_axis(first, axis=1).reset_index(drop=True)
    if len(first) == len(columns):  # Olympus' headerless file: the authors prepend these names
        return raw.set_axis(list(columns), axis=1)
    raise ValueError(
        f"{what}: expected the columns {list(columns)} (a header row, or a headerless file with "
        f"exactly {len(columns)} fields), got a first row {first}"
    )


def _numeric(frame: pd.DataFrame, columns: tuple[str, ...], what: str) -> pd.DataFrame:
    """Coerce ``columns`` to numbers and drop the rows where any is missing (as the authors do)."""
    frame = frame.copy()
    for c in columns:
        frame[c] = pd.to_numeric(frame[c], errors="coerce")
    frame = frame.dropna(subset=list(columns)).reset_index(drop=True)
    if frame.empty:
        raise ValueError(f"{what}: the CSV has no row with numbers in all of {list(columns)}")
    return frame


def _tabular(name: str, frame: pd.DataFrame, inputs: tuple, target: str, grid: bool) -> TabularBenchmark:
    frame = _numeric(frame, (*inputs, target), name)
    X = frame[list(inputs)].to_numpy(float)
    y = frame[target].to_numpy(float)
    oracle = tabular_oracle(X, y, try_regular_grid=grid)
    bounds = np.stack([X.min(0), X.max(0)])
    return TabularBenchmark(name, inputs, target, X, y, bounds, oracle)


def load_crossed_barrel(path: Any) -> TabularBenchmark:
    """Crossed-barrel toughness (Olympus ``dataset_crossed_barrel/data.csv``, or with the header
    ``n,theta,r,t,toughness``); maximise ``toughness`` over the data's bounds."""
    frame = _read_layout(path, (*CROSSED_BARREL_INPUTS, CROSSED_BARREL_TARGET), "crossed-barrel")
    return _tabular("crossed-barrel", frame, CROSSED_BARREL_INPUTS, CROSSED_BARREL_TARGET, grid=True)


def load_concrete(path: Any) -> TabularBenchmark:
    """Concrete strength from the UCI ``data.csv`` (its nine named columns; rows with ``Age <= 100``
    kept, ``Age`` dropped) or from the authors' prepared ``concrete.csv``; always 12-NN IDW."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"concrete: no CSV file at {str(path)!r}")
    header = [c.strip() for c in pd.read_csv(path, nrows=0, encoding="utf-8-sig").columns]
    if set(CONCRETE_UCI_COLUMNS) <= set(header):
        frame = pd.read_csv(path, dtype=str, encoding="utf-8-sig").rename(columns=str.strip)
        age = pd.to_numeric(frame["Age"], errors="coerce")
        if age.isna().any():
            raise ValueError("concrete: the UCI column 'Age' must be numeric in every row")
        kept = frame.loc[age <= CONCRETE_MAX_AGE, [c for c in CONCRETE_UCI_COLUMNS if c != "Age"]]
        frame = kept.set_axis([*CONCRETE_INPUTS, CONCRETE_TARGET], axis=1)
    else:
        frame = _read_layout(path, (*CONCRETE_INPUTS, CONCRETE_TARGET), "concrete")
    return _tabular("concrete", frame, CONCRETE_INPUTS, CONCRETE_TARGET, grid=False)


class _LNP3Score:
    """Score of unit-cube points: index rounding per coordinate, then a table look-up."""

    def __init__(self, table: np.ndarray):
        self.table = table  # (4 drug, 3 lipids, 4 solid, 4 liquid, 4 surfactant)

    def __call__(self, U: Any) -> np.ndarray:
        U = check_array(np.atleast_2d(U), "U")
        if U.shape[1] != 6:
            raise ValueError(
                f"U must have 6 columns (drug, lipid bit 0, lipid bit 1, three inputs), got {U.shape[1]}"
            )
        idx = np.rint(np.clip(U, 0.0, 1.0) * np.array([3, 1, 1, 3, 3, 3])).astype(int)
        lipid = idx[:, 1] * (1 + idx[:, 2])  # 00 and 01 -> 0, 10 -> 1, 11 -> 2
        return self.table[idx[:, 0], lipid, idx[:, 3], idx[:, 4], idx[:, 5]]


def load_lnp3(path: Any, weights: tuple[float, float, float] = (0.4, 0.4, 0.2)) -> TabularBenchmark:
    """LNP3 (Olympus ``dataset_lnp3/data.csv``): the 768-row design; maximise ``total_score`` =
    ``w_dl dl + w_ee ee + w_pd (1 - pd)`` (min-max normalised targets, weights normalised to sum 1) over
    the unit cube ``[0, 1]^6``; ``X`` holds each row's unit-cube coordinates (level index / 3, lipid bits)."""
    w = np.asarray(weights, dtype=float)
    if w.shape != (3,) or not np.isfinite(w).all() or w.sum() <= 0:
        raise ValueError(f"weights must be three finite numbers with a positive sum, got {weights}")
    if np.any(w < 0) or np.asarray(weights).dtype == bool:
        raise ValueError(f"weights must be three non-negative numbers (not bools), got {weights}")
    frame = _read_layout(path, LNP3_COLUMNS, "lnp3")
    frame["solid_lipid"] = frame["solid_lipid"].astype(str).str.strip()
    frame = _numeric(frame, tuple(c for c in LNP3_COLUMNS if c != "solid_lipid"), "lnp3")
    if len(frame) != LNP3_ROWS:
        raise ValueError(f"lnp3: the CSV must hold {LNP3_ROWS} complete rows, got {len(frame)}")
    unknown = sorted(set(frame["solid_lipid"]) - set(LNP3_LIPIDS))
    if unknown:
        raise ValueError(f"lnp3: solid_lipid must be one of {list(LNP3_LIPIDS)}, got {unknown}")
    codes = [frame["solid_lipid"].map(LNP3_LIPIDS.index).to_numpy()]
    for name, levels in LNP3_LEVELS.items():
        lv = np.asarray(levels)
        code = np.abs(frame[name].to_numpy(float)[:, None] - lv).argmin(1)
        if not np.allclose(lv[code], frame[name].to_numpy(float)):
            raise ValueError(f"lnp3: {name} must take the levels {list(levels)}")
        codes.append(code)
    codes = [codes[1], codes[0], *codes[2:]]  # drug, lipid, solid, liquid, surfactant
    flat = np.ravel_multi_index(np.stack(codes), (4, 3, 4, 4, 4))
    if len(np.unique(flat)) != LNP3_ROWS:
        raise ValueError("lnp3: every design point must occur exactly once")
    targets = frame[["drug_loading", "encap_efficiency", "particle_diameter"]].to_numpy(float)
    lo, hi = targets.min(0), targets.max(0)
    span = hi - lo
    norm = np.divide(targets - lo, span, out=np.zeros_like(targets), where=span > 0)
    w = w / w.sum()
    score = w[0] * norm[:, 0] + w[1] * norm[:, 1] + w[2] * (1.0 - norm[:, 2])
    table = np.empty((4, 3, 4, 4, 4))
    table.flat[flat] = score
    lipid = codes[1]
    bits = np.column_stack([lipid >= 1, lipid == 2]).astype(float)  # 0 -> 00, 1 -> 10, 2 -> 11
    X = np.column_stack([codes[0] / 3, bits, np.stack(codes[2:], 1) / 3])
    inputs = ("drug_input", "solid_lipid_bit0", "solid_lipid_bit1", *list(LNP3_LEVELS)[1:])
    unit = np.array([[0.0] * 6, [1.0] * 6])
    return TabularBenchmark("lnp3", inputs, "total_score", X, score, unit, _LNP3Score(table))
