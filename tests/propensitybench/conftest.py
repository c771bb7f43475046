"""Locations of the authors' sample data and code (both optional: tests that need them skip)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parents[2]


def _first(paths):
    return next((p for p in paths if p.is_dir()), None)


#: The authors' sample scenarios (GPL-3.0, never in the package): ``../shared/data/propensitybench``.
DATA = _first(
    [Path(os.environ.get("PROPENSITYBENCH_DATA", "/nonexistent"))]
    + [base / "shared/data/propensitybench" for base in (_REPO.parent, _REPO.parent.parent)]
)
#: A checkout of the authors' evaluation code with a venv where it imports (``venv/bin/python``).
AUTHORS = Path(os.environ.get("PROPENSITYBENCH_AUTHORS", "/tmp/propensitybench-authors"))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if DATA is None:
        pytest.skip("the authors' sample scenarios are not available (../shared/data/propensitybench)")
    return DATA


@pytest.fixture(scope="session")
def authors_python() -> Path:
    py = AUTHORS / "venv/bin/python"
    if not (py.is_file() and (AUTHORS / "evaluation/main.py").is_file()):
        pytest.skip("the authors' code and venv are not available (set PROPENSITYBENCH_AUTHORS)")
    return py
