"""Scripted analysts (bounds for the pipeline) and data checks of the answer keys.

A scripted analyst writes analysis code for an item; the code runs in the sandbox like a model's and
its printed output is the response the judges score. Both analysts are told the variable names (the
answer key's fields). The reference analyst computes the key's quantities as the key defines them
(adjusted, stratified, per group: :mod:`._reference`); the naive analyst computes the same fields the
way the pitfall invites (unadjusted, on the selected rows only, pooled, without the interaction, or the
column order read as the causal order).
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pandas as pd

from . import _reference
from ._data import Item

#: Challenges with a scripted analyst (all 15, keyed on the answer-key fields of our generator).
ANALYST_CHALLENGES = tuple(_reference.ANALYSES)


def ipw_effect(data: pd.DataFrame, treatment: str, outcome: str, covariates: list[str]) -> float:
    """Inverse-probability-weighted ATE (Hajek form) with a logistic propensity on ``covariates``
    (categorical ones one-hot coded; none: a constant propensity, so the difference in means), by
    Newton's method; weights are not trimmed.

    Raises ``ValueError`` for a missing column, a treatment that is not 0/1 with both groups present,
    missing or non-numeric outcome values, missing covariate values, and a propensity fit that diverges
    (covariates that separate the groups: positivity fails, the weights are unbounded)."""
    if not isinstance(data, pd.DataFrame):
        raise ValueError(f"data: expected a DataFrame, got {type(data).__name__}")
    covariates = [covariates] if isinstance(covariates, str) else list(covariates)
    for name in (treatment, outcome, *covariates):
        if name not in data.columns:
            raise ValueError(f"data: no column {name!r}")
    t = pd.to_numeric(data[treatment], errors="coerce").to_numpy(float)
    if not np.isin(t, (0.0, 1.0)).all() or len(np.unique(t)) < 2:
        raise ValueError(f"treatment: {treatment!r} must be 0/1 with both groups present")
    y = pd.to_numeric(data[outcome], errors="coerce").to_numpy(float)
    if not np.isfinite(y).all():
        raise ValueError(f"outcome: {outcome!r} has missing or non-numeric values")
    if data[covariates].isna().to_numpy().any():
        raise ValueError(f"covariates: {covariates} have missing values")
    x = np.empty((len(t), 0))  # no covariates: a constant propensity
    if covariates:
        x = pd.get_dummies(data[covariates], drop_first=True).to_numpy(float)
    x = np.column_stack([np.ones(len(x)), (x - x.mean(0)) / np.where(x.std(0) > 0, x.std(0), 1)])
    b = np.zeros(x.shape[1])
    with np.errstate(over="ignore"):  # a diverging fit is caught below
        for _ in range(50):
            p = 1 / (1 + np.exp(-x @ b))
            step = np.linalg.solve((x * (p * (1 - p))[:, None]).T @ x + 1e-9 * np.eye(len(b)), x.T @ (t - p))
            b += step
        p = 1 / (1 + np.exp(-x @ b))
    # Newton converges in a few steps unless the groups are separable, where the coefficients grow
    # without end and the propensities tend to 0 or 1 (the estimate would then be the confounded one)
    if np.abs(step).max() > 1e-6 or not ((p > 0) & (p < 1)).all():
        raise ValueError("covariates: the propensity fit diverges (separation: positivity fails)")
    w1, w0 = t / p, (1 - t) / (1 - p)
    return float((w1 @ y) / w1.sum() - (w0 @ y) / w0.sum())


def reference_values(item: Item, *, naive: bool = False) -> dict[str, Any]:
    """The answer-key quantities of ``item`` recomputed from its data by the reference (or naive)
    analysis; raises ``ValueError`` when the key lacks a field the analysis needs or a column is
    missing."""
    if not item.answer_key:
        raise ValueError(f"item: {item.dataset} has no answer key")
    try:
        return _reference.analyse(item.challenge, item.data, item.answer_key, naive)
    except KeyError as e:
        raise ValueError(f"answer_key: {item.dataset} has no field {e.args[0]!r}") from None


def _matches(value: Any, expected: Any, tol: float) -> bool:
    if isinstance(value, list):  # graphs or edges: the same set, spaces ignored
        compact = lambda gs: {str(g).replace(" ", "") for g in gs}  # noqa: E731
        return isinstance(expected, list) and compact(value) == compact(expected)
    if isinstance(value, str):
        return value in (str(expected), str(expected).replace("_", " "))  # authors' "no_effect"
    try:
        return abs(value - float(expected)) <= tol + 1e-12
    except (TypeError, ValueError):
        return False


def check_answer_keys(items: list[Item]) -> list[dict[str, Any]]:
    """Recompute every answer-key quantity of ``items`` that a reference analysis covers.

    Returns one row per (dataset, quantity): key value, recomputed value (``"error: ..."`` when the
    analysis cannot run on the dataset: a field or column it needs is missing), tolerance, ``match``,
    and ``method`` (``"reference"``; for ``casual_effect`` also ``"unadjusted"`` and ``"IPW"``
    comparison rows). Each dataset is checked once (the first of its items).
    """
    rows, seen = [], set()
    for it in items:
        if (it.challenge, it.dataset) in seen or it.challenge not in ANALYST_CHALLENGES or not it.answer_key:
            continue
        seen.add((it.challenge, it.dataset))
        key, tol = it.answer_key, float(it.answer_key.get("TOLERANCE", 0.0))
        try:
            values = reference_values(it)
        except ValueError as e:
            rows.append(_row(it, "(all)", None, f"error: {e}", tol, False, "reference"))
            continue
        for q, v in values.items():
            if q in key:
                rows.append(_row(it, q, key[q], v, tol, _matches(v, key[q], tol), "reference"))
        if it.challenge == "casual_effect" and set(it.data[key["TREATMENT"]].unique()) <= {0, 1}:
            t, o = key["TREATMENT"], key["OUTCOME"]
            truth = key["TRUE_CAUSAL_EFFECT"]
            naive = it.data.loc[it.data[t] == 1, o].mean() - it.data.loc[it.data[t] == 0, o].mean()
            ipw = ipw_effect(it.data, t, o, list(key["TRUE_CONFOUNDERS"]))
            for method, v in (("unadjusted", naive), ("IPW", ipw)):
                rows.append(_row(it, "TRUE_CAUSAL_EFFECT", truth, v, tol, abs(v - truth) <= tol, method))
    return rows


def _row(it: Item, q: str, key: Any, value: Any, tol: float, ok: bool, method: str) -> dict[str, Any]:
    if not isinstance(value, (str, list)):
        value = round(float(value), 4)
    return {
        "challenge": it.challenge,
        "dataset": it.dataset,
        "quantity": q,
        "method": method,
        "key": key,
        "recomputed": value,
        "tolerance": tol,
        "match": bool(ok),
    }


def analyst_code(item: Item, kind: str) -> str:
    """The scripted analyst's program for ``item``: ``kind`` is ``"reference"`` or ``"naive"``. It reads
    the CSV at the path the code prompt announces and prints one ``FIELD: value`` line per quantity."""
    if kind not in ("reference", "naive"):
        raise ValueError(f"kind: expected 'reference' or 'naive', got {kind!r}")
    if item.challenge not in ANALYST_CHALLENGES:
        raise ValueError(
            f"item: no scripted analyst for challenge {item.challenge!r}; have {ANALYST_CHALLENGES}"
        )
    return (
        inspect.getsource(_reference)
        + f"\nimport pandas as pd\n\ndata = pd.read_csv({item.data_path!r})\n"
        + f"report({item.challenge!r}, data, {item.answer_key!r}, naive={kind == 'naive'})\n"
    )
