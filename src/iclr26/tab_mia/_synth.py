"""Synthetic rows for the real-vs-synthetic protocol (the authors' ``main_syn.py``): a sequential CART
synthesizer (Reiter 2005; synthpop's default method, Nowok, Raab & Dibben 2016).

The first column is drawn from its marginal. Each later column is drawn from a classification (text)
or regression (numeric) tree fitted on the real rows, with the columns before it as features: a
synthetic row falls into a leaf by its synthetic values so far and takes the value of a real row drawn
at random from that leaf. Values are always real values, and a column that another determines (Adult's
``education`` → ``educational-num``) keeps that relation whenever the tree separates it.
The authors' synthetic data are not in their repository; this generator is ours.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _codes(real: pd.Series, synthetic: pd.Series | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Numeric columns as floats; text columns as codes of their sorted distinct values (trees split
    codes as ordered numbers; enough to separate categories with depth)."""
    if pd.api.types.is_numeric_dtype(real):
        return real.to_numpy(float), None if synthetic is None else synthetic.to_numpy(float)
    levels = sorted(real.astype(str).unique())

    def to_code(column: pd.Series) -> np.ndarray:
        return pd.Categorical(column.astype(str), categories=levels).codes.astype(float)

    return to_code(real), None if synthetic is None else to_code(synthetic)


def cart_rows(table: pd.DataFrame, n_rows: int, seed: int, min_samples_leaf: int) -> pd.DataFrame:
    """``n_rows`` synthetic rows of ``table`` (validated by the caller)."""
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    rng = np.random.default_rng(seed)
    real = table.reset_index(drop=True)
    columns = list(real.columns)
    first = rng.integers(len(real), size=n_rows)
    synthetic = pd.DataFrame({columns[0]: real[columns[0]].to_numpy()[first]})
    features_real = [_codes(real[columns[0]])[0]]
    features_syn = [_codes(real[columns[0]], synthetic[columns[0]])[1]]
    for j, col in enumerate(columns[1:], start=1):
        target = real[col]
        numeric = pd.api.types.is_numeric_dtype(target)
        tree_cls = DecisionTreeRegressor if numeric else DecisionTreeClassifier
        tree = tree_cls(min_samples_leaf=min_samples_leaf, random_state=seed + j)
        x_real, x_syn = np.column_stack(features_real), np.column_stack(features_syn)
        y = target.to_numpy(float) if numeric else target.astype(str).to_numpy()
        tree.fit(x_real, y)
        donors = _donors(tree.apply(x_real), tree.apply(x_syn), rng)
        synthetic[col] = target.to_numpy()[donors]
        codes_real, codes_syn = _codes(target, synthetic[col])
        features_real.append(codes_real)
        features_syn.append(codes_syn)
    return synthetic.astype(real.dtypes.to_dict())


def _donors(leaves_real: np.ndarray, leaves_syn: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For each synthetic row, a real row drawn uniformly from the real rows of its leaf."""
    order = np.argsort(leaves_real, kind="stable")
    sorted_leaves = leaves_real[order]
    start = np.searchsorted(sorted_leaves, leaves_syn, side="left")
    count = np.searchsorted(sorted_leaves, leaves_syn, side="right") - start
    return order[start + (rng.random(len(leaves_syn)) * count).astype(np.int64)]
