"""Hostile input: each case used to return a result silently (or fail obscurely); now it raises by name."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from iclr26.models import ScriptedModel
from iclr26.search_arena import (
    ATTRIBUTION_KINDS,
    attribution_features,
    battle_features,
    binomial_preference,
    bootstrap_bt,
    bradley_terry,
    citation_count,
    classify_intents,
    controlled_bt,
    cross_arena_test,
    domain_counts,
    leaderboard,
    preference_outcomes,
    transform_features,
    unidentified_models,
)

BATTLES = pd.DataFrame(
    {
        "model_a": ["x", "y", "x", "y", "x", "z", "z"],
        "model_b": ["y", "x", "y", "x", "z", "x", "y"],
        "winner": ["model_a", "model_a", "model_a", "tie", "model_b", "model_b", "model_a"],
        "intent": list("ABABABA"),
    }
)
FEATURES = {"len": np.arange(14.0).reshape(7, 2) % 5}


@pytest.mark.parametrize(
    "kwargs", [{"init": float("nan")}, {"anchor_rating": float("inf")}, {"init": "1000"}]
)
def test_elo_offsets_must_be_finite(kwargs):
    # a NaN init or an infinite anchor_rating made every rating NaN / inf
    kw = {"anchor": "x", **kwargs}
    for fit in (bradley_terry, lambda b, **k: bootstrap_bt(b, 3, **k), lambda b, **k: leaderboard(b, 3, **k)):
        with pytest.raises(ValueError, match="init|anchor_rating"):
            fit(BATTLES, **kw)
    with pytest.raises(ValueError, match="init|anchor_rating"):
        controlled_bt(BATTLES, FEATURES, n_rounds=2, **kw)


def test_scale_true_is_not_one():
    # scale=True was read as scale 1
    with pytest.raises(ValueError, match="scale"):
        bradley_terry(BATTLES, scale=True)
    with pytest.raises(ValueError, match="reg"):
        controlled_bt(BATTLES, FEATURES, reg=True, n_rounds=2)


def test_authors_compat_must_be_a_bool():
    # authors_compat="False" is truthy: it used to switch the authors' optimiser on
    for call in (
        lambda: bradley_terry(BATTLES, authors_compat="False"),
        lambda: bootstrap_bt(BATTLES, 3, authors_compat="False"),
        lambda: leaderboard(BATTLES, 3, authors_compat="False"),
        lambda: controlled_bt(BATTLES, FEATURES, n_rounds=2, authors_compat="False"),
        lambda: transform_features(FEATURES, 7, authors_compat="no"),
        lambda: cross_arena_test(BATTLES, "x", authors_compat="False"),
    ):
        with pytest.raises(ValueError, match="authors_compat"):
            call()


def test_preference_outcomes_checks_battles_and_model():
    typo = BATTLES.assign(winner=["model_A", *BATTLES["winner"][1:]])
    with pytest.raises(ValueError, match="winner"):  # an unknown winner counted as a tie
        preference_outcomes(typo, "x")
    with pytest.raises(ValueError, match="model 'nobody'"):  # an unknown model gave an empty Series
        preference_outcomes(BATTLES, "nobody")
    assert preference_outcomes(BATTLES, "x").tolist()[:2] == ["preferred", "not preferred"]


def test_cross_arena_test_on_a_repeated_index_and_its_ties_rule():
    # battles concatenated from two arenas repeat index labels: this used to raise an IndexError
    repeated = BATTLES.set_axis([0, 0, 1, 1, 2, 2, 3])
    pd.testing.assert_frame_equal(cross_arena_test(repeated, "x"), cross_arena_test(BATTLES, "x"))
    # with authors_compat=True a bad ties rule was ignored
    with pytest.raises(ValueError, match="ties"):
        cross_arena_test(BATTLES, "x", ties="bogus", authors_compat=True)


@pytest.mark.parametrize("value", [True, float("nan"), float("inf")])
def test_binomial_preference_counts(value):
    # True counted as 1; NaN and inf raised errors that did not name the argument
    with pytest.raises(ValueError, match="preferred must be a non-negative integer"):
        binomial_preference(value, 3)


def test_binomial_preference_names_ties_rule():
    with pytest.raises(ValueError, match="ties_rule"):
        binomial_preference(3, 3, ties_rule="x")


@pytest.mark.parametrize(
    ("matchups", "outcomes", "n_models", "match"),
    [
        ([[0, 1], [1, 0]], [1.0, np.nan], 2, "outcomes"),  # NaN dropped the edge: model 0 'unidentified'
        ([[0, 1], [1, 0]], [2.0, 2.0], 2, "outcomes"),  # 2 counted as a win
        (np.array([[0.5, 1.5], [1.5, 0.5]]), [1.0, 0.0], 2, "matchups"),  # floats truncated
        ([[0, 5], [5, 0]], [1.0, 0.0], 2, "matchups"),
        ([[0, 1], [1, 0]], [1.0], 2, "outcomes"),
        ([[0, 1], [1, 0]], [1.0, 0.0], 0, "n_models"),
    ],
)
def test_unidentified_models_checks_its_arrays(matchups, outcomes, n_models, match):
    with pytest.raises(ValueError, match=match):
        unidentified_models(matchups, outcomes, n_models)


@pytest.mark.parametrize("trace", ["abc", ["https://a.com/x", "https://b.org/y"], {"a": 1}])
def test_traces_of_text_are_refused(trace):
    # a JSON string counted one citation per character
    with pytest.raises(ValueError, match="web_search_trace"):
        citation_count(trace)
    with pytest.raises(ValueError, match="web_search_trace"):
        domain_counts(trace)


def _row(meta_a):
    return {
        "messages_a": [{"role": "assistant", "content": "a b c"}],
        "messages_b": [{"role": "assistant", "content": "a"}],
        "system_a_metadata": meta_a,
        "system_b_metadata": {"web_search_trace": [[["t", "https://cnn.com/x"]]]},
    }


def test_battle_features_refuse_text_metadata_and_no_rows():
    # metadata left as JSON text used to give 0 citations for that side
    text = '{"web_search_trace": [[["t", "https://x.com"]]]}'
    with pytest.raises(ValueError, match="system_a_metadata at row 0"):
        battle_features(pd.DataFrame([_row(text)]))
    assert battle_features(pd.DataFrame([_row(None)]))["citation_count"].tolist() == [[0.0, 1.0]]
    with pytest.raises(ValueError, match="no battles"):  # used to return {}
        battle_features(pd.DataFrame(columns=list(_row(None))))


@pytest.mark.parametrize("turn", [[1.5, 2], [True, True]])
def test_attribution_turn_is_a_whole_count(turn):
    # a fractional or boolean turn count divided the claim counts silently
    df = pd.DataFrame({f"{k}_count_{s}": [1, 2] for k in ATTRIBUTION_KINDS for s in "ab"}).assign(turn=turn)
    with pytest.raises(ValueError, match="turn"):
        attribution_features(df)


def test_classify_intents_reads_a_generator_once():
    # the type check used the generator up, so nothing was classified
    model = ScriptedModel(['{"primary_intent": "Analysis"}', '{"primary_intent": "Guidance"}'])
    table = classify_intents((q for q in ["why?", "how?"]), model)
    assert table["primary_intent"].tolist() == ["Analysis", "Guidance"]
