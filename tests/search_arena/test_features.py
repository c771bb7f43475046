"""Feature builders and the loader of the released Search Arena schema."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from iclr26.search_arena import (
    DOMAIN_CATEGORIES,
    battle_features,
    citation_count,
    controlled_bt,
    domain_category,
    domain_counts,
    load_search_arena,
    response_length,
)


def _row(i: int) -> dict:
    trace_a = [
        [["t", "https://en.wikipedia.org/wiki/X"], ["t", "https://www.nasa.gov/a"]],
        [["t", "https://github.com/x"]],
    ]
    trace_b = [[["t", "https://www.reddit.com/r/x"]] * (i % 4)]
    return {
        "model_a": f"m{i % 3}",
        "model_b": f"m{(i + 1) % 3}",
        "winner": ["model_a", "model_b", "tie", "tie (bothbad)", None][i % 5],
        "messages_a": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "one two three" + " w" * i},
        ],
        "messages_b": [{"role": "assistant", "content": "a b"}, {"role": "assistant", "content": "c d e f"}],
        "system_a_metadata": {"web_search_trace": trace_a},
        "system_b_metadata": {"web_search_trace": trace_b},
    }


def test_response_length_and_citations():
    assert (
        response_length([{"role": "user", "content": "x y"}, {"role": "assistant", "content": "a b c"}]) == 3
    )
    assert (
        response_length(
            [{"role": "assistant", "content": "a b"}, {"role": "assistant", "content": "c d e f"}]
        )
        == 3
    )
    assert np.isnan(response_length([{"role": "user", "content": "x"}]))
    assert citation_count([[["t", "u"], ["t", "v"]], [["t", "w"]]]) == 1.5
    assert citation_count([]) == 0.0


def test_domain_rules_in_order():
    assert domain_category("https://www.youtube.com/watch?v=1") == "youtube"
    assert domain_category("https://www.nasa.gov/x") == "gov_edu"
    assert (
        domain_category("https://www.microsoft.com/x") == "us_news"
    )  # 'ft.com' is a substring (authors' rule)
    assert domain_category("https://www.netflix.com/") == "social_media"  # 'x.com' is a substring
    assert domain_category("github.com") == "tech_coding"
    assert domain_category("https://www.example.com/") == "other"
    counts = domain_counts([[["t", "https://arxiv.org/abs/1"], ["t", "https://www.amazon.com/p"]]])
    assert set(counts) == set(DOMAIN_CATEGORIES) and counts["academic_journal"] == 1 and counts["retail"] == 1
    with pytest.raises(ValueError, match="url must be a non-empty string"):
        domain_category("")


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_loader_reads_the_released_schema(tmp_path, suffix):
    rows = [_row(i) for i in range(40)]
    path = tmp_path / f"battles{suffix}"
    if suffix == ".jsonl":
        path.write_text("\n".join(json.dumps(r) for r in rows))
    else:
        pd.DataFrame(rows).to_parquet(path)
    battles, feats = load_search_arena(path)
    assert len(battles) == 32  # rows without a vote dropped
    assert feats["citation_count"].shape == (32, 2)
    np.testing.assert_allclose(feats["citation_count"][:, 0], 1.5)
    assert (feats["cites_wiki"][:, 0] == 1).all()
    reddit = battles["system_b_metadata"].map(lambda m: sum(len(t) for t in m["web_search_trace"]))
    np.testing.assert_array_equal(feats["num_cites_community_blog"][:, 1], reddit.to_numpy())
    res = controlled_bt(battles, {"response_length": feats["response_length"]}, n_rounds=5)
    assert np.isfinite(res.coefficients).all()


def test_loader_bad_input(tmp_path):
    with pytest.raises(ValueError, match="is not a file"):
        load_search_arena(tmp_path / "none.jsonl")
    bad = tmp_path / "x.csv"
    bad.write_text("a")
    with pytest.raises(ValueError, match="must end in"):
        load_search_arena(bad)
    with pytest.raises(ValueError, match="messages_a"):
        battle_features(pd.DataFrame({"winner": ["tie"]}))
