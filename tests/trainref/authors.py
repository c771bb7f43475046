"""Load the authors' TrainRef functions from a checkout outside this repository (nothing of theirs is
committed here). Set ``ICLR26_TRAINREF_AUTHORS`` to the checkout (a folder holding ``utils.py`` and
``train_script.py`` of github.com/xaimm/TrainRef); without it the agreement tests are skipped.

``train_script.py`` runs its whole pipeline at import, so only its top-level ``class``/``def`` nodes
and its scipy/sklearn imports (``MLPClassifier``, ``get_voting_results_optimized``,
``compute_knn_distances``) are executed.
The authors hard-code ``device='cuda'`` as a default of ``get_influence_scores_batch``; on a CPU-only
machine that default is switched to ``'cpu'`` (nothing else is changed).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
import types
from pathlib import Path

WANTED = ("MLPClassifier", "get_voting_results_optimized", "compute_knn_distances")


def authors_dir() -> Path | None:
    path = os.environ.get("ICLR26_TRAINREF_AUTHORS")
    if not path or not (Path(path) / "utils.py").is_file() or not (Path(path) / "train_script.py").is_file():
        return None
    return Path(path)


def load_authors() -> types.SimpleNamespace:
    import numpy as np
    import torch
    from torch import nn
    from tqdm import tqdm

    root = authors_dir()
    if root is None:
        raise FileNotFoundError("ICLR26_TRAINREF_AUTHORS is not set to a TrainRef checkout")
    spec = importlib.util.spec_from_file_location("trainref_authors_utils", root / "utils.py")
    utils = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = utils
    spec.loader.exec_module(utils)
    if not torch.cuda.is_available():
        fn = utils.get_influence_scores_batch
        fn.__defaults__ = tuple("cpu" if d == "cuda" else d for d in fn.__defaults__)
    tree = ast.parse((root / "train_script.py").read_text())
    nodes = [n for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef) and n.name in WANTED]
    imports = [
        n
        for n in tree.body
        if isinstance(n, ast.ImportFrom) and n.module.split(".")[0] in ("sklearn", "scipy")
    ]
    nodes = imports + nodes
    namespace = {"torch": torch, "nn": nn, "np": np, "tqdm": tqdm}
    exec(compile(ast.Module(body=nodes, type_ignores=[]), str(root / "train_script.py"), "exec"), namespace)
    return types.SimpleNamespace(utils=utils, **{name: namespace[name] for name in WANTED})
