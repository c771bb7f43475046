"""Preference -> plan rules, prompts and the reply parser."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.lgbo import build_prompts, parse_preference, preference_to_lift, toy_task
from iclr26.lgbo._plan import point_radius

B2 = np.array([[0.0, 0.0], [10.0, 10.0]])


def _region(lb, ub, c=0.8):
    return {"mode": "region", "lb": lb, "ub": ub, "confidence": c}


def test_regimes_follow_expected_grid_hits():
    hard = preference_to_lift(_region([0, 0], [5, 5]), B2)  # E = 128
    soft = preference_to_lift(_region([0, 0], [1, 0.8]), B2)  # E = 4.1
    tiny = preference_to_lift(_region([5, 5], [5.1, 5.1]), B2)  # E = 0.05
    assert (hard.mode, hard.smooth, hard.applied_smooth) == ("region", None, None)
    assert (soft.mode, soft.smooth) == ("region-soft", 0.08)
    assert tiny.mode == "region-soft" and tiny.expected_hits == pytest.approx(2.05, rel=1e-3)
    np.testing.assert_allclose(0.5 * (tiny.lb + tiny.ub), [0.505, 0.505])


def test_authors_compat_keeps_their_quirks():
    hard = preference_to_lift(_region([0, 0], [5, 5]), B2, compat="authors")
    tiny = preference_to_lift(_region([5, 5], [5.1, 5.1]), B2, compat="authors")
    assert hard.applied_smooth == 0.06 and hard.smooth is None
    assert tiny.mode == "point" and not tiny.lifts
    odd = preference_to_lift(_region([0, 0], [5, 5], c=7.0), B2, compat="authors")
    assert odd.confidence == pytest.approx(1 - 1e-4)


def test_point_becomes_the_minimal_soft_box():
    plan = preference_to_lift({"mode": "point", "point": [2.0, 3.0], "confidence": 0.9}, B2)
    assert plan.mode == "region-soft"
    assert plan.expected_hits == pytest.approx(2.05, rel=1e-6)
    np.testing.assert_allclose(0.5 * (plan.lb + plan.ub), [0.2, 0.3])


def test_point_radius_near_a_corner_is_clipped_and_grows():
    r_mid = point_radius(np.array([0.5, 0.5]), 512)
    r_corner = point_radius(np.array([1e-6, 1e-6]), 512)
    assert r_corner > r_mid
    assert point_radius(np.array([0.5] * 20), 2) == pytest.approx(0.5 - 1e-6)


def test_region_corners_are_sorted_and_outside_values_clipped_with_a_warning():
    with pytest.warns(UserWarning, match="outside the bounds"):
        plan = preference_to_lift(_region([8, 12], [-3, 2]), B2)
    np.testing.assert_allclose(plan.lb, [1e-6, 0.2])
    np.testing.assert_allclose(plan.ub, [0.8, 1 - 1e-6])


def test_no_preference_gives_no_lift():
    assert preference_to_lift({"mode": None, "confidence": None}, B2).mode == "none"


@pytest.mark.parametrize(
    ("pref", "bounds", "kw", "match"),
    [
        (_region([0, 0], [5, 5]), [[0, 0], [0, 10]], {}, "bounds"),
        (_region([0, 0], [5, 5]), [[0, 0, 0], [1, 1, 1], [2, 2, 2]], {}, "bounds"),
        (_region([0, 0], [5, 5]), [[0, np.nan], [1, 1]], {}, "bounds"),
        (_region([0, 0], [5, 5], c=1.2), B2, {}, "confidence"),
        (_region([0, 0], [5, 5], c=-0.2), B2, {}, "confidence"),
        (_region([0, 0], [5, 5], c=None), B2, {}, "confidence"),
        (_region([0, 0, 0], [5, 5, 5]), B2, {}, "pref\\['lb'\\]"),
        (_region([0, np.nan], [5, 5]), B2, {}, "pref\\['lb'\\]"),
        ({"mode": "point", "point": [1], "confidence": 0.5}, B2, {}, "pref\\['point'\\]"),
        ([1, 2], B2, {}, "pref"),
        (_region([0, 0], [5, 5]), B2, {"compat": "x"}, "compat"),
        (_region([0, 0], [5, 5]), B2, {"rule": "x"}, "rule"),
    ],
)
def test_preference_to_lift_rejects_bad_input(pref, bounds, kw, match):
    with pytest.raises(ValueError, match=match):
        preference_to_lift(pref, bounds, **kw)


def test_parser_reads_point_and_region_and_thinking():
    p = parse_preference("Thinking:\nnear 1\nFinal Answer:\n[point, [1, 2.5], 0.7]")
    assert p == {"mode": "point", "point": [1, 2.5], "confidence": 0.7, "thinking": "near 1"}
    r = parse_preference("[region, [[0, 1], [2, 3]], 0.9] [point, [0, 0], 0.1]")
    assert r["mode"] == "region" and r["lb"] == [0, 1] and r["ub"] == [2, 3]
    assert parse_preference("I do not know")["mode"] is None
    assert parse_preference(None)["mode"] is None


def test_prompts_carry_bounds_history_and_batch():
    task = toy_task("levy", [(-10, 10)] * 2)
    system, user = build_prompts(task, [{"x": {"x1": 1.0, "x2": 2.0}, "f": 3.5}], 3)
    assert "Final Answer" in system
    assert "- x1 in [-10.0, 10.0]; continuous toy-function coordinate" in user
    assert "- x1=1.0, x2=2.0 -> f=3.5" in user
    assert "LGBO will draw 3 batch points" in user


def test_prompt_inputs_are_validated():
    with pytest.raises(ValueError, match="task"):
        build_prompts("ackley", [], 3)
    with pytest.raises(ValueError, match="task"):
        build_prompts({"background": "x"}, [], 3)
    with pytest.raises(ValueError, match="task"):
        toy_task("sphere", [(0, 1)])
