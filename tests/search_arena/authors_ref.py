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


def _source(path: str = SCRIPT) -> str | None:
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
        return None


def source(path: str) -> str:
    """Any file of the snapshot (skips the calling test when the snapshot is unavailable)."""
    src = _source(path)
    if src is None:
        pytest.skip("the authors' search-arena snapshot is not available (ICLR26_SEARCH_ARENA_AUTHORS_REPO)")
    return src


def load() -> types.ModuleType:
    """The authors' utils module (skips the calling test when the snapshot is unavailable)."""
    mod = types.ModuleType("search_arena_authors_utils")
    exec(compile(source(SCRIPT), SCRIPT, "exec"), mod.__dict__)  # noqa: S102
    return mod
