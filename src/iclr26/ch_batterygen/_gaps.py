"""The gap policy: what happens to missing cells and time gaps in a segment before windows are cut.

Real vehicle logs have gaps (a dropped CAN frame, a logger restart). Nothing downstream may see a NaN:
one NaN window turns a network's input standardisation, then every parameter, into NaN. The policy,
applied by :func:`clean_segment` (and so by :func:`make_windows`) and reported by a :class:`GapReport`:

1. A *missing row* is a row with an empty cell in any required column (the nine base columns and the
   ``VOLT_n`` columns).
2. A run of at most ``max_interp_rows`` missing rows between two complete rows is filled by linear
   interpolation between those two rows, cell by cell (only the empty cells are filled;
   ``CHARGE_STATUS`` is carried forward: it is a code, not a quantity).
3. A longer run is dropped and the segment is split there; missing rows at the start or end of a
   segment are dropped (nothing to interpolate from).
4. Rows that repeat the previous row's ``TIME`` are dropped; the segment is split where ``TIME`` goes
   backwards or jumps by more than ``max_gap_s`` seconds.
5. Pieces shorter than 2 rows are dropped.

Every interpolated, dropped and split row is counted.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from ._schema import BASE_COLUMNS, volt_columns_of


@dataclass
class GapReport:
    """Counts of what the gap policy did (summed over the segments it saw).

    ``segments_in``/``segments_out``: segments read / continuous pieces produced; ``rows``: rows read;
    ``interpolated_rows``: short gaps filled; ``dropped_rows``: rows removed (long gaps, gaps at the
    ends, repeated timestamps, pieces too short); ``splits``: places a segment was cut (long gaps of
    missing rows, time jumps, time going backwards).
    """

    segments_in: int = 0
    segments_out: int = 0
    rows: int = 0
    interpolated_rows: int = 0
    dropped_rows: int = 0
    splits: int = 0

    def add(self, other: GapReport) -> GapReport:
        for k, v in asdict(other).items():
            setattr(self, k, getattr(self, k) + v)
        return self

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    @property
    def clean(self) -> bool:
        """True when the policy changed nothing."""
        return self.interpolated_rows == 0 and self.dropped_rows == 0 and self.splits == 0


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """``[start, stop)`` of each run of True in ``mask``."""
    if not mask.any():
        return []
    d = np.diff(np.r_[0, mask.astype(np.int8), 0])
    return list(zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1)))


def clean_segment(
    frame: pd.DataFrame, max_interp_rows: int = 3, max_gap_s: float = 60.0
) -> tuple[list[pd.DataFrame], GapReport]:
    """Apply the gap policy to one (validated, numeric) segment frame.

    Parameters
    ----------
    frame:
        A release-schema segment (see :func:`validate_segment`); empty cells are NaN.
    max_interp_rows:
        The longest run of missing rows that is interpolated (default 3 rows = 30 s at 10 s sampling).
    max_gap_s:
        The largest time step kept inside one piece (default 60 s); a larger jump splits the segment.

    Returns
    -------
    pieces, report
        The continuous pieces (each complete, strictly increasing ``TIME``, at least 2 rows) and the counts.
    """
    if (
        isinstance(max_interp_rows, bool)
        or not isinstance(max_interp_rows, int | np.integer)
        or max_interp_rows < 0
    ):
        raise ValueError(f"max_interp_rows must be an integer >= 0, got {max_interp_rows!r}")
    if not max_gap_s > 0:
        raise ValueError(f"max_gap_s must be positive, got {max_gap_s!r}")
    cols = [*BASE_COLUMNS, *volt_columns_of(frame.columns)]
    rep = GapReport(segments_in=1, rows=len(frame))
    values = frame[cols].to_numpy(dtype=np.float64, copy=True)
    missing = np.isnan(values).any(axis=1)
    keep = ~missing
    n = len(frame)
    breaks_before = np.zeros(n, dtype=bool)  # a split between row i-1 and row i
    for a, b in _runs(missing):
        if a == 0 or b == n:
            rep.dropped_rows += b - a  # at an end: nothing to interpolate from
        elif b - a <= max_interp_rows:
            keep[a:b] = True
            rep.interpolated_rows += b - a
        else:
            rep.dropped_rows += b - a
            rep.splits += 1
            breaks_before[b] = True
    status_col = cols.index("CHARGE_STATUS")
    for a, b in _runs(missing):
        if not (keep[a] and a > 0 and b < n):
            continue
        left, right = values[a - 1], values[b]
        w = (np.arange(a, b) - a + 1.0) / (b - a + 1.0)
        filled = left + w[:, None] * (right - left)
        filled[:, status_col] = left[status_col]
        values[a:b] = np.where(np.isnan(values[a:b]), filled, values[a:b])
    idx = np.flatnonzero(keep)
    values = values[idx]
    brk = breaks_before[idx] if idx.size else breaks_before[:0]
    # a split recorded at a dropped row moves to the next kept row
    for b in np.flatnonzero(breaks_before):
        j = np.searchsorted(idx, b)
        if j < idx.size:
            brk[j] = True
    t = values[:, 0]
    dt = np.diff(t)
    dup = np.r_[False, dt == 0]
    if dup.any():
        rep.dropped_rows += int(dup.sum())
        nxt = np.flatnonzero(dup)
        # carry a split flag of a dropped duplicate to the next row
        for j in nxt:
            if brk[j] and j + 1 < brk.size:
                brk[j + 1] = True
        values, brk = values[~dup], brk[~dup]
        t = values[:, 0]
        dt = np.diff(t)
    jump = np.r_[False, (dt > max_gap_s) | (dt < 0)]
    rep.splits += int((jump & ~brk).sum())
    cut = np.flatnonzero(jump | brk)
    pieces = []
    for part in np.split(np.arange(values.shape[0]), cut):
        if part.size < 2:
            rep.dropped_rows += int(part.size)
            continue
        piece = pd.DataFrame(values[part], columns=cols)
        for c in ("TIME", "CHARGE_STATUS"):
            piece[c] = piece[c].round().astype(np.int64)
        pieces.append(piece)
    rep.segments_out = len(pieces)
    return pieces, rep
