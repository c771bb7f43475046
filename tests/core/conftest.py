import importlib
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.fixture
def toys(monkeypatch):
    """The toy systems module, importable here and in worker processes (spawned or Ray's)."""
    monkeypatch.syspath_prepend(str(HERE))
    paths = [str(HERE), *([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))
    module = importlib.import_module("iclr26_toy_systems")
    yield module
    sys.modules.pop("iclr26_toy_systems", None)
