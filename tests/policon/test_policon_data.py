"""The authors' shipped data (4 topics in ../shared/data/policon; skipped cleanly without it)."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

import numpy as np

from iclr26.policon import GOALS, max_variance_subsets, oracle_rows, policon_metrics, row_arrays, score_rows

#: The oracle table over all 5,724 tasks of the 19 topics (issue 27, from the paper): pass rates and
#: welfare means for 2 / 4 / 6 parties.
FULL_TABLE = {
    "simple_majority": (0.530, 0.593, 0.677),
    "two_thirds": (0.282, 0.318, 0.324),
    "veto": (0.310, 0.396, 0.474),
    "rawlsian": (1.50, 1.27, 0.95),
    "utilitarian": (4.89, 5.35, 5.60),
}


def test_shipped_tasks_are_valid_max_variance_settings(shared_data):
    assert len(shared_data.tasks) == 459  # 184 + 164 + 111 (SOURCE.md says 479)
    for k in (2, 4, 6):  # the shipped ids number each file's tasks 0..n-1 (the script keeps the topic index)
        for top, recs in shared_data.topics.items():
            tasks = [t for t in shared_data.tasks if (t["party_num"], t["topic"]) == (k, top)]
            assert [t["id"] for t in tasks] == list(range(len(tasks)))
            assert len(tasks) == sum(len(r["stances"]) >= k for r in recs)
    for t in shared_data.tasks:
        topic = next(
            r
            for r in shared_data.topics[t["topic"]]
            if (r["title"], r["background"]) == (t["title"], t["background"])
        )
        names = [s["party_name"] for s in topic["stances"]]
        best = max_variance_subsets([s["choice"] for s in topic["stances"]], t["party_num"])
        chosen = [names.index(s["party_name"]) for s in t["stances"]]
        assert any(list(b) == chosen for b in best)
        assert all(round(w * 10) == w * 10 for w in t["seat_weights"])
        assert math.isclose(sum(t["seat_weights"]), 1.0) and t["veto_party_name"] in names


def test_oracle_table_on_shared_topics_matches_plain_python(shared_data, authors):
    rows = oracle_rows(shared_data.tasks)
    cells = {(c["goal"], c["party_num"]): c for c in policon_metrics(rows, n_boot=200) if c["scope"] == "all"}
    gv = authors.voting.get_voting_result
    for k in (2, 4, 6):
        tasks = [t for t in shared_data.tasks if t["party_num"] == k]
        ch = [{s["party_name"]: s["choice"] for s in t["stances"]} for t in tasks]
        ref = {
            "simple_majority": np.mean(
                [gv(t, c, "seat_apportionment", "simple_majority")[0] for t, c in zip(tasks, ch)]
            ),
            "two_thirds": np.mean(
                [gv(t, c, "seat_apportionment", "simple_majority")[1] for t, c in zip(tasks, ch)]
            ),
            "veto": np.mean([gv(t, c, "seat_apportionment", "veto_power")[1] for t, c in zip(tasks, ch)]),
            "rawlsian": np.mean([gv(t, c, "rawlsianism", None) for t, c in zip(tasks, ch)]),
            "utilitarian": np.mean([gv(t, c, "utilitarianism", None) for t, c in zip(tasks, ch)]),
        }
        for goal in GOALS:
            cell = cells[(goal, k)]
            assert cell["n"] == len(tasks)
            assert cell["value"] == ref[goal]
            assert cell["lo"] <= cell["value"] <= cell["hi"]


def test_oracle_table_on_full_authors_data(authors):
    """All 19 topics from the authors' checkout: the paper's oracle table to its printed precision."""
    import pytest

    from iclr26.policon import load_policon

    root = authors.swf.__file__.rsplit("/utils/", 1)[0]
    try:
        full = load_policon(root)
    except ValueError as e:
        pytest.skip(f"no full task data in the authors' checkout: {e}")
    if len(full.tasks) != 5724:
        pytest.skip(f"the checkout holds {len(full.tasks)} tasks, not the full 5,724")
    cells = {
        (c["goal"], c["party_num"]): c["value"]
        for c in policon_metrics(oracle_rows(full.tasks), n_boot=10)
        if c["scope"] == "all"
    }
    for goal, paper in FULL_TABLE.items():
        for k, ref in zip((2, 4, 6), paper):
            value = cells[(goal, k)]
            if goal in ("simple_majority", "two_thirds", "veto"):
                assert round(value, 3) == ref, (goal, k, value)
            else:
                # the welfare cells are printed as their 3-decimal values rounded again, half up: ours
                # give all six so (Rawlsian 4 parties: 1.2646 -> 1.265 -> 1.27; rounded once it is 1.26)
                printed = _half_up(round(value, 3), "0.01")
                assert printed == Decimal(str(ref)).quantize(Decimal("0.01")), (goal, k, value)


def _half_up(value: float, step: str) -> Decimal:
    return Decimal(repr(value)).quantize(Decimal(step), rounding=ROUND_HALF_UP)


def test_scoring_a_full_benchmark_sized_batch(shared_data):
    """28,740 rows, the size of the full benchmark, in one vectorised call (its speed is measured by
    benchmarks/policon_scoring.py, not asserted here)."""
    base = oracle_rows(shared_data.tasks)
    out = score_rows(row_arrays(base * 12))
    single = score_rows(row_arrays(base))
    assert out["outcome"].shape == (12 * len(base),)
    assert np.array_equal(out["outcome"], np.tile(single["outcome"], 12))


def test_oracle_cells_on_shared_topics_equal_plain_loops(shared_data):
    """Without the authors' code: the oracle cells against plain Python loops over the shared tasks."""
    cells = {
        (c["goal"], c["party_num"]): c["value"]
        for c in policon_metrics(oracle_rows(shared_data.tasks), n_boot=10)
        if c["scope"] == "all"
    }
    for k in (2, 4, 6):
        tasks = [t for t in shared_data.tasks if t["party_num"] == k]
        simple = two = veto = rawls = util = 0.0
        for t in tasks:
            ch = {s["party_name"]: s["choice"] for s in t["stances"]}
            ws = sum(w * ch[s["party_name"]] for w, s in zip(t["seat_weights"], t["stances"]))
            simple += ws >= 5
            two += ws >= 20 / 3
            veto += ch[t["veto_party_name"]] >= 6 and ws >= 5
            rawls += min(ch.values())
            util += sum(ch.values()) / len(ch)
        n = len(tasks)
        ref = {
            "simple_majority": simple,
            "two_thirds": two,
            "veto": veto,
            "rawlsian": rawls,
            "utilitarian": util,
        }
        for goal, total in ref.items():
            assert math.isclose(cells[(goal, k)], total / n, rel_tol=1e-12), (goal, k)
