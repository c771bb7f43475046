"""Shared fixtures: the authors' code (skipped when absent) and the tasks at hand."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import _authors  # noqa: E402

from iclr26.policon import build_tasks, generate_topics, load_policon  # noqa: E402

_REPO = Path(__file__).resolve().parents[2]
#: The authors' data beside the checkout (``../shared`` or ``../../shared``), or ``POLICON_DATA``.
SHARED = next(
    (
        p
        for p in (
            Path(os.environ.get("POLICON_DATA", "/nonexistent")),
            _REPO.parent / "shared/data/policon",
            _REPO.parent.parent / "shared/data/policon",
        )
        if (p / "task_datas").is_dir()
    ),
    _REPO.parent / "shared/data/policon",
)


@pytest.fixture(scope="session")
def authors():
    mods = _authors.load()
    if mods is None:
        pytest.skip(f"the authors' EuroCon checkout is absent ({_authors.ROOT})")
    return mods


@pytest.fixture(scope="session")
def shared_data():
    if not (SHARED / "task_datas").is_dir():
        pytest.skip(f"the authors' data is absent ({SHARED})")
    return load_policon(SHARED)


@pytest.fixture(scope="session")
def our_tasks():
    topics = generate_topics(6, seed=3)
    return [t for k in (2, 4, 6) for t in build_tasks(topics, k, rng=k)]
