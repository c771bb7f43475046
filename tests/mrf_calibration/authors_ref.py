"""The authors' classes, loaded at test time from a local snapshot of ``Daftstone/MRF_Calibration``.

Nothing of theirs is stored here: the snapshot (``ICLR26_MRF_AUTHORS_REPO``, default the mirror under
``/work/.mirror``) is read with git, and only the function and class definitions are executed (their
scripts train at import). Tests using it skip when no snapshot is available.
"""

from __future__ import annotations

import ast
import os
import subprocess
from pathlib import Path

import pytest

DEFAULT = "/work/.mirror/Daftstone+MRF_Calibration/repo"
WANTED = {"get_mask", "my_dataset", "GCN"}


def _source(name: str) -> str | None:
    repo = Path(os.environ.get("ICLR26_MRF_AUTHORS_REPO", DEFAULT))
    if (repo / name).is_file():
        return (repo / name).read_text()
    try:
        return subprocess.run(
            ["git", "--git-dir", str(repo), "show", f"HEAD:{name}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def load(script: str = "improve_mrf.py") -> dict:
    """``{"get_mask", "my_dataset", "GCN"}`` of the authors' ``script`` (skips when unavailable)."""
    src = _source(script)
    if src is None:
        pytest.skip("the authors' repository snapshot is not available")
    torch = pytest.importorskip("torch")
    import numpy as np

    tree = ast.parse(src)
    body = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name in WANTED]
    ns = {
        "np": np,
        "torch": torch,
        "nn": torch.nn,
        "Dataset": torch.utils.data.Dataset,
        "device": "cpu",
    }
    exec(compile(ast.Module(body=body, type_ignores=[]), script, "exec"), ns)  # noqa: S102
    return ns
