"""``cross_arena_test``: is one model preferred over its opponents, overall and per intent?

The paper compares a search-augmented model with its non-search variant in Search Arena and in Text
Arena (``scripts/cross_setting_analysis.ipynb``, cells 3-15): each battle is "preferred" (the model
won), "not preferred" (it lost) or a tie, and a one-sided exact binomial test (p = 0.5) is run in the
direction of the majority. Ties are split half to each side with integer halving (``ties // 2`` each,
so an odd tie is dropped), as the authors do for the overall test; their per-intent test drops ties
(``ties="drop"``; ``authors_compat=True`` uses exactly their pair of conventions).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from ..validation import check_bool, is_finite_real
from ._bt import check_battles

TIES_RULES = ("split", "drop")


def _check_count(value, name: str) -> int:
    """A non-negative whole number (``True`` is not a count; NaN and inf are refused by name)."""
    if not (is_finite_real(value) and int(value) == value and value >= 0):
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def _check_model(battles: pd.DataFrame, model) -> None:
    if (
        not isinstance(model, str)
        or not ((battles["model_a"] == model) | (battles["model_b"] == model)).any()
    ):
        raise ValueError(f"model {model!r} plays in none of the battles")


def binomial_preference(preferred: int, not_preferred: int, ties: int = 0, ties_rule: str = "split") -> dict:
    """One-sided binomial test of ``preferred`` against ``not_preferred`` (ties split or dropped).

    Returns the counts used, the preferred share with its 95 % Clopper-Pearson interval, the
    direction (``"preferred"`` or ``"not preferred"``, the majority; ``"preferred"`` on an exact
    balance) and the one-sided p-value in that direction.
    """
    preferred = _check_count(preferred, "preferred")
    not_preferred = _check_count(not_preferred, "not_preferred")
    ties = _check_count(ties, "ties")
    if ties_rule not in TIES_RULES:
        raise ValueError(f"ties_rule must be 'split' or 'drop', got {ties_rule!r}")
    half = ties // 2 if ties_rule == "split" else 0
    wins, losses = preferred + half, not_preferred + half
    n = wins + losses
    if n == 0:
        return {
            "n": 0,
            "wins": 0,
            "losses": 0,
            "share": np.nan,
            "ci_low": np.nan,
            "ci_high": np.nan,
            "direction": "none",
            "p_value": np.nan,
        }
    res = binomtest(wins, n, p=0.5, alternative="greater" if wins >= losses else "less")
    ci = binomtest(wins, n, p=0.5).proportion_ci(0.95, method="exact")
    return {
        "n": n,
        "wins": wins,
        "losses": losses,
        "share": wins / n,
        "ci_low": float(ci.low),
        "ci_high": float(ci.high),
        "direction": "preferred" if wins >= losses else "not preferred",
        "p_value": float(res.pvalue),
    }


def preference_outcomes(battles: pd.DataFrame, model: str) -> pd.Series:
    """Per battle of ``model``: ``"preferred"``, ``"not preferred"`` or ``"tie"`` (both tie kinds).

    ``battles`` are checked as in :func:`bradley_terry` (an unknown ``winner`` would otherwise count as a
    tie) and ``model`` must play in them.
    """
    check_battles(battles)
    _check_model(battles, model)
    on_a, on_b = battles["model_a"] == model, battles["model_b"] == model
    won = (on_a & (battles["winner"] == "model_a")) | (on_b & (battles["winner"] == "model_b"))
    lost = (on_a & (battles["winner"] == "model_b")) | (on_b & (battles["winner"] == "model_a"))
    out = pd.Series("tie", index=battles.index)
    out[won], out[lost] = "preferred", "not preferred"
    return out[on_a | on_b]


def cross_arena_test(
    battles: pd.DataFrame,
    model: str,
    intent: str | None = "intent",
    ties: str = "split",
    authors_compat: bool = False,
) -> pd.DataFrame:
    """Binomial preference test of ``model`` in its battles, overall and per intent.

    Parameters
    ----------
    battles: ``model_a``, ``model_b``, ``winner`` (``model_a|model_b|tie|tie (bothbad)``) and, for the
        per-intent rows, the ``intent`` column; only battles that involve ``model`` are used.
    model: the model whose wins count as "preferred" (e.g. the search-augmented variant).
    intent: the intent column (``None``: overall only).
    ties: ``"split"`` (``ties // 2`` to each side) or ``"drop"``.
    authors_compat: split ties overall and drop them per intent, as the authors' notebook does.

    Returns
    -------
    DataFrame, one row per group (``"all"`` first, then intents in sorted order), with columns
    ``group, preferred, not_preferred, ties`` (raw counts) and those of :func:`binomial_preference`.
    Run it on each arena (e.g. Search Arena and Text Arena) to compare settings.
    """
    # positions, not labels, tie the outcomes to their intents (a concatenation of arenas repeats labels)
    battles = check_battles(battles).reset_index(drop=True)
    _check_model(battles, model)
    if ties not in TIES_RULES:
        raise ValueError(f"ties must be 'split' or 'drop', got {ties!r}")
    authors_compat = check_bool(authors_compat, "authors_compat")
    if intent is not None and intent not in battles.columns:
        raise ValueError(f"intent: battles have no column {intent!r}")
    outcome = preference_outcomes(battles, model)
    groups = [("all", outcome, "split" if authors_compat else ties)]
    if intent is not None:
        labels = battles.loc[outcome.index, intent]
        if labels.isna().any():
            raise ValueError(
                f"intent: column {intent!r} has missing values in {int(labels.isna().sum())} battles"
            )
        rule = "drop" if authors_compat else ties
        groups += [(str(k), outcome[labels == k], rule) for k in sorted(labels.unique(), key=str)]
    rows = []
    for name, o, rule in groups:
        counts = o.value_counts()
        raw = {
            k: int(counts.get(v, 0))
            for k, v in (("preferred", "preferred"), ("not_preferred", "not preferred"), ("ties", "tie"))
        }
        rows.append(
            {
                "group": name,
                **raw,
                **binomial_preference(raw["preferred"], raw["not_preferred"], raw["ties"], rule),
            }
        )
    return pd.DataFrame(rows)
