"""The shared argument checks of ``iclr26.validation``."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from iclr26.validation import check_bool, check_int, check_real, is_finite_real


@pytest.mark.parametrize("value", [0, -3, 2.5, np.float32(1.5), np.int64(7), Fraction(1, 3)])
def test_finite_reals_pass(value):
    assert is_finite_real(value)
    assert check_real(value, "x") == pytest.approx(float(value))
    assert type(check_real(value, "x")) is float


@pytest.mark.parametrize(
    "value", [True, np.bool_(False), float("nan"), float("inf"), -np.inf, "1.0", None, 1j, [1.0]]
)
def test_non_finite_or_non_real_values_are_refused(value):
    assert not is_finite_real(value)
    with pytest.raises(ValueError, match=r"scale must be a finite number, got"):
        check_real(value, "scale")


def test_check_bool_and_check_int_name_the_argument():
    assert check_bool(np.bool_(True), "flag") is True
    with pytest.raises(ValueError, match="flag must be True or False, got 'False'"):
        check_bool("False", "flag")
    assert check_int(np.int64(3), "n", minimum=1) == 3
    with pytest.raises(ValueError, match="n must be an integer, got True"):
        check_int(True, "n")
    with pytest.raises(ValueError, match="n must be >= 1, got 0"):
        check_int(0, "n", minimum=1)
