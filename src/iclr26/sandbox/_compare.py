"""Judge-style output comparison (LiveCodeBench's stdin/stdout rules, plus an optional float tolerance)."""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation


def _lines(text: str) -> list[str]:
    # The whole output is stripped first (so trailing blank lines do not count), then every line.
    return [line.strip() for line in text.strip().split("\n")]


def _decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(tok) for tok in line.split()]
    except (InvalidOperation, ValueError):
        return None


def _close(a: Decimal, b: Decimal, tol: float) -> bool:
    if a == b:
        return True
    if not (a.is_finite() and b.is_finite()):
        return False
    fa, fb = float(a), float(b)
    return math.isclose(fa, fb, rel_tol=tol, abs_tol=tol)


def outputs_match(actual: str, expected: str, *, float_tolerance: float | None = None) -> bool:
    """Whether a program's output matches the expected output, as LiveCodeBench judges stdin/stdout tasks.

    Both texts are stripped, split on newlines and each line stripped; the line counts must agree. Two
    lines match when they are equal, or when both split on whitespace into the same number of tokens that
    all parse as decimal numbers and are equal as numbers (so ``"1.0"`` matches ``"1"``, ``"2 3"`` matches
    ``"2   3"``; exact decimal equality, as LiveCodeBench's ``Decimal`` comparison). With
    ``float_tolerance``, numeric tokens also match when within that absolute *or* relative tolerance
    (for tasks that accept answers within, e.g., 1e-6).

    Parameters
    ----------
    actual, expected : str
        The program's stdout and the reference output.
    float_tolerance : float or None
        None for LiveCodeBench's exact rule; else a non-negative tolerance.

    Returns
    -------
    bool

    Raises
    ------
    ValueError
        If ``actual``/``expected`` are not strings or ``float_tolerance`` is negative or not finite.
    """
    for name, v in (("actual", actual), ("expected", expected)):
        if not isinstance(v, str):
            raise ValueError(f"{name} must be a str, got {type(v).__name__}")
    if float_tolerance is not None and (
        isinstance(float_tolerance, bool)
        or not isinstance(float_tolerance, int | float)
        or not math.isfinite(float_tolerance)
        or float_tolerance < 0
    ):
        raise ValueError(f"float_tolerance must be None or a finite number >= 0, got {float_tolerance!r}")
    got, want = _lines(actual), _lines(expected)
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        if g == w:
            continue
        dg, dw = _decimals(g), _decimals(w)
        if dg is None or dw is None or len(dg) != len(dw):
            return False
        if float_tolerance is None:
            if dg != dw:
                return False
        elif not all(_close(a, b, float_tolerance) for a, b in zip(dg, dw)):
            return False
    return True
