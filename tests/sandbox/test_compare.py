import pytest

from iclr26.sandbox import outputs_match


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        ("42\n", "42"),
        ("  1 2 3  \n\n\n", "1 2 3"),
        ("a\r\nb\r\n", "a\nb"),
        ("1.0\n", "1"),  # numeric lines compare as decimals (LiveCodeBench)
        ("2   3\n", "2 3"),
        ("1e2", "100"),
        ("-0", "0"),
        ("", ""),
        ("\n\n", ""),
    ],
)
def test_matches_as_livecodebench(actual, expected):
    assert outputs_match(actual, expected)


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        ("42", "43"),
        ("1 2", "1 2 3"),
        ("a\nb", "a"),  # line counts differ
        ("a\n\nb", "a\nb"),  # an inner blank line counts
        ("yes", "YES"),
        ("0.3333333", "0.3333334"),  # exact decimals without a tolerance
        ("50000000000000000", "50000000000000001"),  # no float rounding (np.isclose would say equal)
        ("1 2", "1 x"),
        ("nan 1", "nan 1.0"),  # Decimal NaN never equals itself, so this line falls to a mismatch
    ],
)
def test_mismatches(actual, expected):
    assert not outputs_match(actual, expected)


def test_equal_lines_match_before_any_numeric_parsing():
    assert outputs_match("nan 1", "nan 1")


def test_float_tolerance():
    assert outputs_match("0.3333333", "0.3333334", float_tolerance=1e-6)
    assert not outputs_match("0.333", "0.334", float_tolerance=1e-6)
    assert outputs_match("1000000.1", "1000000.0", float_tolerance=1e-6)  # relative
    assert outputs_match("1e-9 2", "0 2", float_tolerance=1e-6)  # absolute
    assert not outputs_match("inf", "1e308", float_tolerance=1e-6)
    assert not outputs_match("x 1.0", "y 1.0", float_tolerance=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(actual=1, expected="1"), "actual"),
        (dict(actual="1", expected=b"1"), "expected"),
        (dict(actual="1", expected="1", float_tolerance=-1e-6), "float_tolerance"),
        (dict(actual="1", expected="1", float_tolerance=float("nan")), "float_tolerance"),
        (dict(actual="1", expected="1", float_tolerance=True), "float_tolerance"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        outputs_match(**kwargs)
