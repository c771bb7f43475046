"""Load the authors' Tab-MIA functions from a checkout outside this repository (nothing of theirs is
committed here). ``ICLR26_TAB_MIA_AUTHORS`` names the checkout (a clone of github.com/eyalgerman/Tab-MIA;
default ``/tmp/tab-mia-authors/repo``); without it the agreement tests are skipped.

Their modules import packages only other functions of theirs use (``datasets`` for Hugging Face
downloads, ``spacy`` and ``wordfreq`` for the entropy maps): those names are stubbed with empty modules
so that ``tables_encoder``, ``process_csv_file``, ``mia_detection.inference`` and ``eval_2.get_metrics``
import and run unchanged. ``inference`` calls ``torch.cuda.ipc_collect()``, which raises on a CPU-only
build of torch; there it is made a no-op (nothing else of theirs is changed).
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from pathlib import Path

STUBS = {"datasets": ("load_dataset",), "spacy": (), "wordfreq": ("word_frequency",)}


def authors_dir() -> Path | None:
    path = Path(os.environ.get("ICLR26_TAB_MIA_AUTHORS", "/tmp/tab-mia-authors/repo"))
    ok = (path / "process_data" / "tables_encoder.py").is_file() and (path / "MIA" / "eval_2.py").is_file()
    return path if ok else None


def load_authors() -> types.SimpleNamespace:
    root = authors_dir()
    if root is None:
        raise FileNotFoundError("no Tab-MIA checkout: set ICLR26_TAB_MIA_AUTHORS")
    for name, attrs in STUBS.items():
        if name not in sys.modules:
            stub = types.ModuleType(name)
            for attr in attrs:
                setattr(stub, attr, None)
            sys.modules[name] = stub
    import torch

    if not torch.cuda.is_available():
        torch.cuda.ipc_collect = lambda: None
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    return types.SimpleNamespace(
        encoder=importlib.import_module("process_data.tables_encoder"),
        process=importlib.import_module("process_data.process_csv_file"),
        prep=importlib.import_module("process_data.data_preparation"),
        mia=importlib.import_module("MIA.mia_detection"),
        eval=importlib.import_module("MIA.eval_2"),
    )
