"""Shared fixtures: the authors' LGBO code, loaded from a checkout outside the repository if present.

Point ``ICLR26_LGBO_AUTHORS`` at a directory holding ``saibo/`` of Xinzhe309/SAIBO-framework
(default ``/tmp/lgbo-authors``); tests that need it skip when it is absent.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("botorch")

AUTHORS_DIR = Path(os.environ.get("ICLR26_LGBO_AUTHORS", "/tmp/lgbo-authors"))


@pytest.fixture(scope="session")
def authors():
    """The authors' modules ``prior``, ``decide``, ``prompt``, ``lgbo_core`` (skip when absent)."""
    if not (AUTHORS_DIR / "saibo" / "methods" / "lgbo" / "prior.py").exists():
        pytest.skip(f"authors' SAIBO-framework checkout not found at {AUTHORS_DIR}")
    sys.path.insert(0, str(AUTHORS_DIR))
    try:
        mods = {n: importlib.import_module(f"saibo.methods.lgbo.{n}") for n in ("prior", "decide", "prompt")}
    except ImportError as exc:  # pragma: no cover - a broken checkout
        pytest.skip(f"authors' code does not import: {exc}")
    finally:
        sys.path.remove(str(AUTHORS_DIR))
    return mods
