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
    assert Claim("s", measured, op, reference).verdict == expected


def test_within_tolerance():
    assert Claim("s", 0.93, "within", 0.928, tolerance=0.01).verdict == Verdict.HOLDS
    assert Claim("s", 0.80, "within", 0.928, tolerance=0.01).verdict == Verdict.DOES_NOT_HOLD
    with pytest.raises(ValueError, match="tolerance"):
        Claim("s", 0.8, "within", 0.9)


def test_bad_operator_and_reference():
    with pytest.raises(ValueError, match="op"):
        Claim("s", 1.0, "==", 1.0)
    with pytest.raises(ValueError, match="reference"):
        Claim("s", 1.0, ">", float("nan"))


def test_not_measurable_constructor():
    c = Claim.not_measurable("needs a GPU", "no accelerator here", paper="1.85x")
    assert c.verdict == Verdict.NOT_MEASURABLE and c.detail == "no accelerator here"


def test_result_round_trip_through_json():
    r = Result(
        claims=[Claim("a", np.float32(0.5), ">", 0.1, paper="0.4"), Claim("b", float("nan"), "<", 1.0)],
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
