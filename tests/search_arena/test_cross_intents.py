"""cross_arena_test, the intent taxonomy and classifier, and the citation-attribution loader, against the
authors' notebook and scripts where their snapshot is available."""

from __future__ import annotations

import contextlib
import io
import json
import re

import numpy as np
import pandas as pd
import pytest

from iclr26.models import ScriptedModel
from iclr26.search_arena import (
    INTENTS,
    attribution_features,
    authors_intent_prompt,
    binomial_preference,
    classify_intents,
    cross_arena_test,
    intent_prompt,
    load_citation_attribution,
    parse_intents,
)

from . import authors_ref

SEARCH = "gemini-2.5-pro-grounding"


def _battles(seed: int, n: int = 400, p_win: float = 0.55) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    other = rng.choice(["gemini-2.5-pro", "sonar", "gpt-4o"], size=n)
    search_is_a = rng.random(n) < 0.5
    u = rng.random(n)
    outcome = np.where(
        u < 0.15, "tie", np.where(u < 0.2, "tie (bothbad)", np.where(rng.random(n) < p_win, "w", "l"))
    )
    winner = np.where(
        outcome == "w",
        np.where(search_is_a, "model_a", "model_b"),
        np.where(outcome == "l", np.where(search_is_a, "model_b", "model_a"), outcome),
    )
    return pd.DataFrame(
        {
            "model_a": np.where(search_is_a, SEARCH, other),
            "model_b": np.where(search_is_a, other, SEARCH),
            "winner": winner,
            "intent": rng.choice(list(INTENTS[:8]), size=n),
        }
    )


def _authors_binom():
    """The notebook's cell 3 (``run_binom_test``, ``run_binom_test_for_intent``), run as they wrote it."""
    nb = json.loads(authors_ref.source("scripts/cross_setting_analysis.ipynb"))
    cell = "".join(nb["cells"][3]["source"])
    env: dict = {"pd": pd, "np": np}
    exec("from scipy.stats import binomtest\n" + cell, env)  # noqa: S102
    return env


@pytest.mark.parametrize("seed", range(6))
def test_cross_arena_test_equals_the_authors_notebook(seed):
    env = _authors_binom()
    battles = _battles(seed, p_win=[0.5, 0.55, 0.62, 0.4, 0.5, 0.7][seed])
    ours = cross_arena_test(battles, SEARCH, authors_compat=True)
    overall = ours.iloc[0]
    theirs = env["run_binom_test"](int(overall.preferred), int(overall.not_preferred), int(overall.ties))
    assert overall.p_value == pytest.approx(theirs.pvalue, rel=1e-12)
    # per intent: their function prints a result per intent; our rows are in the same (sorted) order
    data = battles.copy()
    won = ((data.model_a == SEARCH) & (data.winner == "model_a")) | (
        (data.model_b == SEARCH) & (data.winner == "model_b")
    )
    lost = ((data.model_a == SEARCH) & (data.winner == "model_b")) | (
        (data.model_b == SEARCH) & (data.winner == "model_a")
    )
    data["group_name"] = np.where(won, "search_better", np.where(lost, "search_worse", "tie"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        env["run_binom_test_for_intent"](data)
    p_theirs = [float(x) for x in re.findall(r"pvalue=([0-9.eE+-]+)", out.getvalue())]
    np.testing.assert_allclose(ours.p_value.iloc[1:].to_numpy(), p_theirs, rtol=1e-12)


def test_cross_arena_test_counts_and_rules():
    b = pd.DataFrame(
        {
            "model_a": ["s", "s", "x", "x", "s", "y", "x"],
            "model_b": ["x", "y", "s", "s", "x", "s", "y"],
            "winner": ["model_a", "model_b", "model_b", "tie", "tie (bothbad)", "tie", "model_a"],
            "intent": ["A", "A", "B", "B", "A", "B", "A"],
        }
    )
    res = cross_arena_test(b, "s")
    assert list(res.group) == ["all", "A", "B"]
    row = res.iloc[0]
    assert (row.preferred, row.not_preferred, row.ties) == (2, 1, 3)  # the x-y battle is ignored
    assert (row.wins, row.losses) == (3, 2)  # 3 ties // 2 = 1 to each side
    dropped = cross_arena_test(b, "s", intent=None, ties="drop")
    assert len(dropped) == 1 and (dropped.wins[0], dropped.losses[0]) == (2, 1)
    assert binomial_preference(10, 0)["p_value"] == pytest.approx(0.5**10)
    r = binomial_preference(3, 7)
    assert r["direction"] == "not preferred" and r["ci_low"] < 0.3 < r["ci_high"]
    assert np.isnan(binomial_preference(0, 0)["p_value"])


def test_cross_arena_test_bad_input():
    b = _battles(0, n=20)
    with pytest.raises(ValueError, match="model 'nobody'"):
        cross_arena_test(b, "nobody")
    with pytest.raises(ValueError, match="intent"):
        cross_arena_test(b, SEARCH, intent="category")
    with pytest.raises(ValueError, match="ties"):
        cross_arena_test(b, SEARCH, ties="half")
    b.loc[b.index[0], "intent"] = None
    b.loc[b.index[0], ["model_a"]] = SEARCH if b.model_b.iloc[0] != SEARCH else "sonar"
    with pytest.raises(ValueError, match="missing values"):
        cross_arena_test(b, SEARCH)
    with pytest.raises(ValueError, match="preferred"):
        binomial_preference(-1, 2)
    with pytest.raises(ValueError, match="winner"):
        cross_arena_test(b.assign(winner="draw"), SEARCH)


def test_intent_parsing_and_classifier():
    assert len(INTENTS) == 9 and INTENTS[-1] == "Other"
    replies = [
        '{"primary_intent": "Guidance", "secondary_intent": "Explanation", "reasoning": "how to"}',
        'Sure! {"primary_intent": "Factual Lookup", "secondary_intent": "Poetry"}',
        "I think this is Analysis, maybe Recommendation.",
        '{"primary_intent": "Cooking"} no idea',
        "",
    ]
    got = [parse_intents(r) for r in replies]
    assert got[0] == ("Guidance", "Explanation", True)
    assert got[1] == ("Factual Lookup", "Unassigned", True)
    assert got[2] == ("Analysis", "Unassigned", True)
    assert got[3] == ("Other", "Unassigned", False) and got[4][2] is False
    queries = ["How do I install Docker?", "When was the Mona Lisa painted?", "x", "y", "z"]
    table = classify_intents(queries, ScriptedModel(replies))
    assert list(table.primary_intent) == ["Guidance", "Factual Lookup", "Analysis", "Other", "Other"]
    assert table.parsed.sum() == 3
    p = intent_prompt("How do I renew my passport?")
    assert all(name in p for name in INTENTS) and "renew my passport" in p
    with pytest.raises(ValueError, match="queries"):
        classify_intents("one query", ScriptedModel(replies))
    with pytest.raises(ValueError, match="model"):
        classify_intents(["q"], object())


def test_authors_intent_prompt_is_read_from_a_checkout(tmp_path):
    src = authors_ref.source("scripts/intent_classification/utils.py")
    target = tmp_path / "scripts" / "intent_classification"
    target.mkdir(parents=True)
    (target / "utils.py").write_text(src)
    build = authors_intent_prompt(tmp_path)
    text = build("Best laptop under $1500?")
    assert all(name in text for name in INTENTS) and "Best laptop under $1500?" in text
    table = classify_intents(
        ["Best laptop under $1500?"], ScriptedModel(['{"primary_intent": "Recommendation"}']), prompt=build
    )
    assert table.primary_intent[0] == "Recommendation"
    with pytest.raises(ValueError, match="checkout"):
        authors_intent_prompt(tmp_path / "nothing")


def _attribution_rows(n: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        row = {
            "model_a": "sonar",
            "model_b": "gpt-4o-search",
            "winner": ["model_a", "model_b", "tie", None][i % 4],
            "turn": int(rng.integers(1, 4)),
            "timestamp": "2025-04-01 10:00:00",
            "conv_metadata": {"citation_count_a": 2, "citation_count_b": 1},
        }
        for kind in ("support", "irrelevant", "contradict"):
            for side in "ab":
                row[f"{kind}_count_{side}"] = int(rng.integers(0, 6))
        rows.append(row)
    return rows


def test_citation_attribution_loader_equals_the_authors_counts(tmp_path):
    rows = _attribution_rows(40)
    path = tmp_path / "citation_attribution_data.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    battles, feats = load_citation_attribution(path)
    assert len(battles) == 30 and set(feats) == {"support", "irrelevant", "contradict"}
    mod = authors_ref.load()
    theirs = mod.add_cit_misattribution_counts(battles.copy())
    for kind, arr in feats.items():
        for j, side in enumerate("ab"):
            np.testing.assert_array_equal(
                arr[:, j], theirs["conv_metadata"].map(lambda m, k=f"{kind}_count_{side}": m[k])
            )


def test_citation_attribution_bad_input(tmp_path):
    df = pd.DataFrame(_attribution_rows(4))
    with pytest.raises(ValueError, match="attribution columns"):
        attribution_features(df.drop(columns=["support_count_b"]))
    with pytest.raises(ValueError, match="turn"):
        attribution_features(df.assign(turn=0))
    with pytest.raises(ValueError, match="irrelevant_count"):
        attribution_features(df.assign(irrelevant_count_a=-1))
