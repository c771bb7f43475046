"""``InfiniGramIndex``: the same ``count`` / ``contains`` over a local infini-gram byte index.

infini-gram (Liu et al., 2024; ``pip install infini-gram==2.6.0``) is optional. Its ``u8`` index of a
corpus written as one ``" u1 u2 ... uk "`` line per document answers the count of a unit n-gram as the
count of the byte string ``" w1 ... wn "`` (units hold no whitespace, so matches align with units).
The C++ engine is constructed directly (``cpp_engine.Engine_U8``), one query per call.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..validation import check_bool
from ._ngram import _check_not_one_string, _check_unit, _read_corpus
from ._tokenize import tokenize


class InfiniGramIndex:
    """Exact n-gram counts from a local infini-gram ``u8`` index (any order, one query per call)."""

    def __init__(self, index_dir: str | os.PathLike, unit: str = "word", lowercase: bool = True) -> None:
        lowercase = check_bool(lowercase, "lowercase")
        try:
            from infini_gram import cpp_engine
        except ImportError as err:
            raise ImportError("InfiniGramIndex needs `pip install infini-gram==2.6.0`") from err
        index_dir = Path(index_dir)
        if not (index_dir / "table.0").is_file():
            raise ValueError(f"index_dir: no infini-gram index at {str(index_dir)!r}")
        self.unit, self.lowercase = _check_unit(unit), lowercase
        # (dirs, eos, vocab, version, load_to_ram, ds/sa/od prefetch, bow ids, block, unigram, shards)
        self._engine = cpp_engine.Engine_U8(
            [str(index_dir)], 255, 255, 4, False, 1, 3, 3, set(), 512, False, {}
        )

    @classmethod
    def build(
        cls,
        texts: Sequence[str] | str | os.PathLike,
        index_dir: str | os.PathLike,
        unit: str = "word",
        lowercase: bool = True,
    ) -> InfiniGramIndex:
        """Write ``texts`` as boundary-delimited units and index them with ``infini_gram.indexing``."""
        unit, lowercase = _check_unit(unit), check_bool(lowercase, "lowercase")
        docs = [tokenize(t, unit, lowercase) for t in _read_corpus(texts)]
        index_dir = Path(index_dir)
        data = index_dir / "raw"
        data.mkdir(parents=True, exist_ok=True)
        with open(data / "corpus.jsonl", "w", encoding="utf-8") as f:
            for d in docs:
                f.write(json.dumps({"text": " " + " ".join(d) + " "}) + "\n")
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        ulimit = str(hard if hard != resource.RLIM_INFINITY else 1 << 20)
        cmd = [
            sys.executable,
            "-m",
            "infini_gram.indexing",
            "--data_dir",
            str(data),
            "--save_dir",
            str(index_dir),
            "--token_dtype",
            "u8",
            "--mem",
            "4",
            "--cpus",
            "1",
            "--ulimit",
            ulimit,
        ]
        subprocess.run(cmd, check=True, capture_output=True)
        return cls(index_dir, unit, lowercase)

    def count(self, ngrams: Sequence[str | Sequence[str]]) -> np.ndarray:
        """Corpus occurrences of each n-gram (a string split into units, or a sequence of units)."""
        _check_not_one_string(ngrams)
        rows = [tokenize(g, self.unit, self.lowercase) if isinstance(g, str) else list(g) for g in ngrams]
        if any(not r for r in rows):
            raise ValueError("ngrams must each hold at least one unit")
        queries = [list((" " + " ".join(r) + " ").encode()) for r in rows]
        return np.array([self._engine.count(q).count for q in queries], dtype=np.int64)

    def contains(self, ngrams: Sequence[str | Sequence[str]]) -> np.ndarray:
        """Whether each n-gram occurs in the corpus."""
        return self.count(ngrams) > 0
