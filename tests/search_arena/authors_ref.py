"""The authors' ``scripts/utils.py``, loaded at test time from a local snapshot of ``lmarena/search-arena``.

Nothing of theirs is stored here: the snapshot (``ICLR26_SEARCH_ARENA_AUTHORS_REPO``, default the mirror
under ``/work/.mirror``; a checkout or a bare git directory) is read when the tests run, and tests using it
skip when it is absent.
"""

from __future__ import annotations

import os
import subprocess
import types
from pathlib import Path

import pytest

DEFAULT = "/work/.mirror/lmarena+search-arena/repo"
SCRIPT = "scripts/utils.py"


def _source() -> str | None:
    repo = Path(os.environ.get("ICLR26_SEARCH_ARENA_AUTHORS_REPO", DEFAULT))
    if (repo / SCRIPT).is_file():
        return (repo / SCRIPT).read_text()
    try:
        return subprocess.run(
            ["git", "--git-dir", str(repo), "show", f"HEAD:{SCRIPT}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def load() -> types.ModuleType:
    """The authors' utils module (skips the calling test when the snapshot is unavailable)."""
    src = _source()
    if src is None:
        pytest.skip("the authors' search-arena snapshot is not available (ICLR26_SEARCH_ARENA_AUTHORS_REPO)")
    mod = types.ModuleType("search_arena_authors_utils")
    exec(compile(src, SCRIPT, "exec"), mod.__dict__)  # noqa: S102
    return mod


def source(path: str) -> str:
    """Any file of the snapshot (skips the calling test when the snapshot is unavailable)."""
    repo = Path(os.environ.get("ICLR26_SEARCH_ARENA_AUTHORS_REPO", DEFAULT))
    if (repo / path).is_file():
        return (repo / path).read_text()
    try:
        return subprocess.run(
            ["git", "--git-dir", str(repo), "show", f"HEAD:{path}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("the authors' search-arena snapshot is not available (ICLR26_SEARCH_ARENA_AUTHORS_REPO)")
