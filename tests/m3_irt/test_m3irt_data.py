import numpy as np
import pytest

from iclr26.m3_irt import ResponseMatrix, is_low_quality, merge_responses, parse_variant, validation_split


def test_parse_variant_indicators():
    assert parse_variant("x") == ("x", "full", 1, 1)
    assert parse_variant("<no_image>x") == ("x", "no_image", 1, 0)
    assert parse_variant("<no_question>x") == ("x", "no_question", 0, 1)
    assert parse_variant("<no_info>x") == ("x", "no_info", 0, 0)


def test_low_quality_rule():
    assert not is_low_quality("validation_Art_1")
    assert is_low_quality("shuffled_10")
    assert is_low_quality("<no_image>shuffled_10")
    assert not is_low_quality("<no_info>shuffle_all_3")
    assert not is_low_quality("<no_question>shuffle_image_3")
    assert is_low_quality("<no_image>shuffle_image_3")
    assert not is_low_quality("<no_image>shuffle_question_3")


def test_from_columns_groups_and_merge():
    cols = ["a", "<no_image>a", "<no_question>a", "<no_info>a", "b", "<no_info>b"]
    d = ResponseMatrix.from_columns(np.ones((3, 6)), cols, ["m0", "m1", "m2"])
    assert d.n_items == 2 and list(d.group) == [0, 0, 0, 0, 1, 1]
    assert list(d.variant) == ["full", "no_image", "no_question", "no_info", "full", "no_info"]
    e = ResponseMatrix.from_columns(np.zeros((2, 1)), ["c"], ["m2", "m0"], low_quality=[True])
    m = merge_responses(d, e)
    assert m.models == ["m0", "m2"] and m.n_items == 3 and m.low_quality.sum() == 1
    assert np.all(m.values[:, -1] == 0)
    assert list(m.item_low_quality) == [False, False, True]


def test_bad_input():
    with pytest.raises(ValueError, match="0/1"):
        ResponseMatrix.from_columns(np.full((2, 1), 2.0), ["a"])
    with pytest.raises(ValueError, match="columns"):
        ResponseMatrix.from_columns(np.ones((2, 2)), ["a"])
    with pytest.raises(ValueError, match="merge|share"):
        merge_responses(
            ResponseMatrix.from_columns(np.ones((1, 1)), ["a"], ["x"]),
            ResponseMatrix.from_columns(np.ones((1, 1)), ["b"], ["y"]),
        )


def test_validation_split_holds_out_whole_items():
    cols = [p + f"i{k}" for k in range(30) for p in ("", "<no_image>", "<no_question>", "<no_info>")]
    d = ResponseMatrix.from_columns(np.ones((20, 120)), cols)
    m = validation_split(d, 0.1, np.random.default_rng(0))
    per_item = m.reshape(20, 30, 4)
    assert np.all(per_item.all(2) == per_item.any(2))  # all four variants together
    assert np.all(per_item[:, :, 0].sum(0) == 2)  # ceil(0.1 * 20) models per item
