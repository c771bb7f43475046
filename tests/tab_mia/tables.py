"""Generated CSV tables covering the encoders' edge cases: numeric and text columns, ragged rows, empty
cells, unicode, padded cells, 1-row tables."""

from __future__ import annotations

import csv
import io

import numpy as np

WORDS = ["alpha", "Beta", "gamma ray", "naïve", "日本", "Zürich", "x", "", " padded ", "O'Neil", "a|b", "-"]


def _cell(rng: np.random.Generator, kind: str) -> str:
    if kind == "int":
        return str(int(rng.integers(-500, 5000)))
    if kind == "float":
        return f"{rng.normal(0, 100):.{int(rng.integers(0, 4))}f}"
    if kind == "mixed":
        return _cell(rng, str(rng.choice(["int", "text"])))
    return str(rng.choice(WORDS))


def random_csv(seed: int) -> str:
    """A CSV text; every 5th table is 1-row, every 3rd ragged (rows shorter or longer than the header)."""
    rng = np.random.default_rng(seed)
    n_cols = int(rng.integers(1, 7))
    n_rows = 1 if seed % 5 == 0 else int(rng.integers(2, 9))
    kinds = rng.choice(["int", "float", "text", "mixed"], size=n_cols)
    header = [f"col {j}" if j % 2 else f"Name{j}é" for j in range(n_cols)]
    rows = [[_cell(rng, k) for k in kinds] for _ in range(n_rows)]
    if seed % 3 == 0:
        rows = [
            r[: int(rng.integers(1, n_cols + 1))] + (["extra"] if rng.random() < 0.3 else []) for r in rows
        ]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([header, *rows])
    return buf.getvalue()
