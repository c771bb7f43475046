import json
import math

import numpy as np
import pytest

from iclr26.claims import Claim, Result, Verdict


@pytest.mark.parametrize(
    ("measured", "op", "reference", "expected"),
    [
        (0.95, ">=", 0.9, Verdict.HOLDS),
        (0.85, ">=", 0.9, Verdict.DOES_NOT_HOLD),
        (0.9, ">=", 0.9, Verdict.HOLDS),
        (0.9, ">", 0.9, Verdict.DOES_NOT_HOLD),
        (-1.0, "<", 0.0, Verdict.HOLDS),
        (1.0, "<=", 0.0, Verdict.DOES_NOT_HOLD),
        (None, ">", 0.0, Verdict.NOT_MEASURABLE),
        (float("nan"), ">", 0.0, Verdict.NOT_MEASURABLE),
    ],
)
def test_verdict_is_computed_from_measurement(measured, op, reference, expected):
    assert Claim("s", measured, op, reference, exact=True).verdict == expected


def test_within_tolerance():
    assert Claim("s", 0.93, "within", 0.928, tolerance=0.01, exact=True).verdict == Verdict.HOLDS
    assert Claim("s", 0.80, "within", 0.928, tolerance=0.01, exact=True).verdict == Verdict.DOES_NOT_HOLD
    with pytest.raises(ValueError, match="tolerance"):
        Claim("s", 0.8, "within", 0.9, exact=True)


def test_bad_operator_and_reference():
    with pytest.raises(ValueError, match="op"):
        Claim("s", 1.0, "==", 1.0, exact=True)
    with pytest.raises(ValueError, match="reference"):
        Claim("s", 1.0, ">", float("nan"), exact=True)


def test_not_measurable_constructor():
    c = Claim.not_measurable("needs a GPU", "no accelerator here", paper="1.85x")
    assert c.verdict == Verdict.NOT_MEASURABLE and c.detail == "no accelerator here"


def test_result_round_trip_through_json():
    r = Result(
        claims=[
            Claim("a", np.float32(0.5), ">", 0.1, paper="0.4", interval=(0.2, 0.7), method="bootstrap"),
            Claim("b", float("nan"), "<", 1.0),
        ],
        metrics={"x": np.float64(1.5), "arr": np.arange(3), "bad": float("inf")},
        tables={"t": [{"k": 1, "v": np.int64(2)}]},
    )
    d = json.loads(json.dumps(r.to_dict(), allow_nan=False))
    assert d["claims"][0]["verdict"] == "holds"
    assert d["claims"][1]["measured"] is None and d["claims"][1]["verdict"] == "not measurable here"
    assert d["metrics"] == {"x": 1.5, "arr": [0, 1, 2], "bad": None}
    back = Result.from_dict(d)
    assert back.claims[0].verdict == Verdict.HOLDS
    assert math.isclose(back.claims[0].measured, 0.5)
    assert back.claims[1].verdict == Verdict.NOT_MEASURABLE
    assert back.claims[0].interval == (0.2, 0.7) and back.claims[0].method == "bootstrap"


@pytest.mark.parametrize(
    ("interval", "op", "reference", "tolerance", "expected"),
    [
        ((0.1, 0.3), ">", 0.0, None, Verdict.HOLDS),
        ((-0.1, 0.3), ">", 0.0, None, Verdict.INCONCLUSIVE),
        ((-0.3, -0.1), ">", 0.0, None, Verdict.DOES_NOT_HOLD),
        ((0.0, 0.3), ">", 0.0, None, Verdict.INCONCLUSIVE),
        ((0.0, 0.3), ">=", 0.0, None, Verdict.HOLDS),
        ((0.85, 0.95), "<=", 0.9, None, Verdict.INCONCLUSIVE),
        ((0.92, 0.94), "within", 0.93, 0.02, Verdict.HOLDS),
        ((0.90, 0.94), "within", 0.93, 0.02, Verdict.INCONCLUSIVE),
        ((0.80, 0.90), "within", 0.93, 0.02, Verdict.DOES_NOT_HOLD),
        ((0.80, 1.10), "within", 0.93, 0.02, Verdict.INCONCLUSIVE),
    ],
)
def test_verdict_uses_the_whole_interval(interval, op, reference, tolerance, expected):
    measured = sum(interval) / 2
    claim = Claim("s", measured, op, reference, tolerance=tolerance, interval=interval)
    assert claim.verdict == expected


def test_interval_straddling_the_bar_is_inconclusive_even_when_the_point_passes():
    claim = Claim("DISCO beats silhouette", 0.143, ">", 0.0, interval=(-0.10, 0.34), method="bootstrap")
    assert claim.verdict == Verdict.INCONCLUSIVE
    assert "[-0.1, 0.34]" in claim.interval_text


def test_measured_claim_needs_an_interval_or_exact():
    with pytest.raises(ValueError, match="interval"):
        Claim("s", 0.5, ">", 0.1)
    with pytest.raises(ValueError, match="lo <= hi"):
        Claim("s", 0.5, ">", 0.1, interval=(0.7, 0.2))
    with pytest.raises(ValueError, match="exact"):
        Claim("s", 0.5, ">", 0.1, interval=(0.2, 0.7), exact=True)
    with pytest.raises(ValueError, match="level"):
        Claim("s", 0.5, ">", 0.1, interval=(0.2, 0.7), level=95)
    assert Claim("s", 1.0, ">=", 1.0, exact=True).interval_text == "exact"


def test_post_hoc_claim_never_counts_as_success():
    from iclr26.report import verdict_counts

    post = Claim("s", 0.5, ">", 0.1, interval=(0.3, 0.7), post_hoc=True)
    pre = Claim("t", 0.5, ">", 0.1, interval=(0.3, 0.7))
    assert post.verdict == Verdict.HOLDS and not post.counts_as_success and pre.counts_as_success
    assert "post hoc" in post.criterion
    counts = verdict_counts([post, pre, Claim("u", 0.5, ">", 0.1, interval=(0.0, 0.7))])
    assert counts == {
        "holds": 1,
        "does not hold": 0,
        "inconclusive": 1,
        "not measurable here": 0,
        "post hoc": 1,
    }
