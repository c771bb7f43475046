"""``SuffixArrayIndex``: exact counts of n-grams of *any* order from one suffix array of the corpus.

The corpus is one stream of vocabulary ids (``1..V``) with a ``0`` after every document; its suffix
array (``pydivsufsort``, an optional dependency in the ``novelty`` extra) sorts every suffix. The
suffixes that start with an n-gram form one contiguous block, found by two vectorised binary searches
over all queries at once (``ceil(log2 N)`` steps, each comparing an ``(m, n)`` gather of the stream
with the queries). A query never holds ``0`` (unknown units are counted as absent before the search),
so no match crosses a document boundary. Memory: 4 or 8 bytes per token for the array plus the stream,
whatever the orders asked, where :class:`NgramIndex` keeps one key table per order.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ._index import load_arrays
from ._ngram import UnitIndex, _docs_as_ids
from ._tokenize import Tokenizer


def _suffix_array(stream: np.ndarray) -> np.ndarray:
    try:
        from pydivsufsort import divsufsort
    except ImportError as exc:  # pragma: no cover - the extra is installed by `make install`
        raise ImportError("SuffixArrayIndex needs pydivsufsort: pip install 'iclr26[novelty]'") from exc
    return np.asarray(divsufsort(stream))


class SuffixArrayIndex(UnitIndex):
    """Exact n-gram counts of every order from a suffix array (same queries as :class:`NgramIndex`).

    Build with :meth:`build`; query with :meth:`count` / :meth:`contains` (an ``(m, n)`` id array or
    n-grams as units / strings, any ``n >= 1``); persist with :meth:`save` / :meth:`load`.

    Attributes: ``vocab``, ``unit``, ``lowercase``, ``n_tokens``, ``n_docs`` as in :class:`NgramIndex`;
    ``orders`` is ``None`` (every order is held).
    """

    orders = None

    def __init__(
        self,
        vocab: list[str],
        stream: np.ndarray,
        suffixes: np.ndarray,
        unit: str | Tokenizer,
        lowercase: bool,
        n_docs: int,
    ) -> None:
        super().__init__(vocab, unit, lowercase, int((stream > 0).sum()), n_docs)
        self._stream = stream
        self._sa = suffixes

    @classmethod
    def build(
        cls,
        texts: Sequence[str] | str | os.PathLike,
        unit: str | Tokenizer = "word",
        lowercase: bool = True,
    ) -> SuffixArrayIndex:
        """Index ``texts`` (documents, a ``.txt`` file or a folder of them) for counts of any order."""
        vocab, id_docs, unit = _docs_as_ids(texts, unit, lowercase)
        dtype = np.uint16 if len(vocab) < 2**16 else np.uint32
        sep = np.zeros(1, dtype=dtype)
        stream = np.concatenate([part for d in id_docs for part in (d.astype(dtype), sep)])
        return cls(vocab, stream, _suffix_array(stream), unit, lowercase, len(id_docs))

    def has_order(self, n: int) -> bool:
        return n >= 1

    def _orders_text(self) -> str:
        return "(any n >= 1)"

    def _count_ids(self, grams: np.ndarray) -> np.ndarray:
        lower = self._bound(grams, upper=False)
        return self._bound(grams, upper=True) - lower

    def _bound(self, grams: np.ndarray, upper: bool) -> np.ndarray:
        """Per query, the first suffix-array rank whose suffix is ``>= gram`` (``> gram`` when ``upper``,
        where a suffix that starts with the gram counts as equal)."""
        m, n = grams.shape
        last = len(self._stream) - 1  # the stream ends with a 0, which ends every comparison there
        lo = np.zeros(m, dtype=np.int64)
        hi = np.full(m, len(self._sa), dtype=np.int64)
        steps = np.arange(n)
        active = lo < hi
        while active.any():
            rows = np.flatnonzero(active)
            mid = (lo[rows] + hi[rows]) // 2
            prefix = self._stream[np.minimum(self._sa[mid][:, None] + steps, last)].astype(np.int64)
            cmp = _lexicographic_sign(prefix, grams[rows])
            go_right = cmp <= 0 if upper else cmp < 0
            lo[rows] = np.where(go_right, mid + 1, lo[rows])
            hi[rows] = np.where(go_right, hi[rows], mid)
            active = lo < hi
        return lo

    def save(self, path: str | os.PathLike) -> Path:
        """Write the index to ``path`` (``.npz``) atomically; returns the path."""
        return self._save(path, "suffix-array", {}, {"stream": self._stream, "suffixes": self._sa})

    @classmethod
    def load(cls, path: str | os.PathLike) -> SuffixArrayIndex:
        """Read an index written by :meth:`save`."""
        meta, arrays = load_arrays(path, "suffix-array")
        return cls(
            meta["vocab"],
            arrays["stream"],
            arrays["suffixes"],
            meta["unit"],
            meta["lowercase"],
            meta["n_docs"],
        )

    def __repr__(self) -> str:
        return (
            f"SuffixArrayIndex(unit={self.unit!r}, docs={self.n_docs}, tokens={self.n_tokens}, "
            f"vocab={len(self.vocab)})"
        )


def _lexicographic_sign(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise sign of ``a - b`` in lexicographic order (``-1``, ``0``, ``1``), shape ``(m,)``."""
    diff = np.sign(a - b)
    first = np.argmax(diff != 0, axis=1)
    return diff[np.arange(len(diff)), first]
