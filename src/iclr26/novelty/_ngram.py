"""``NgramIndex``: exact counts of the n-grams of a training corpus (Padmakumar et al., ICLR 2026,
arXiv:2504.09389, Sec. 3: originality is the fraction of a generation's n-grams unseen in training)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, repeat
from pathlib import Path

import numpy as np

from ..validation import check_bool, check_int
from ._batch import VocabLookup
from ._index import SortedKeyStore, id_bits, load_arrays, pack, save_arrays, windows
from ._tokenize import UNITS, Tokenizer, tokenize


def _check_orders(n: int | Iterable[int]) -> tuple[int, ...]:
    orders = tuple(n) if isinstance(n, Iterable) and not isinstance(n, str) else (n,)
    if not orders:
        raise ValueError("n must name at least one n-gram order, got an empty sequence")
    return tuple(sorted({check_int(k, "n", minimum=1) for k in orders}))


def _read_corpus(texts: Sequence[str] | str | os.PathLike) -> list[str]:
    if isinstance(texts, Mapping):  # list(mapping) would index its keys (e.g. work titles), not its texts
        raise ValueError("texts must be a sequence of documents, got a mapping (pass its .values())")
    if isinstance(texts, str | os.PathLike):
        path = Path(texts)
        if not path.exists():
            raise ValueError(f"texts: no such file or folder {str(path)!r}")
        files = sorted(p for p in path.rglob("*.txt")) if path.is_dir() else [path]
        texts = [p.read_text(encoding="utf-8") for p in files]
    texts = list(texts)
    if not all(isinstance(t, str) for t in texts):
        raise ValueError("texts must be strings (one per document), a .txt file or a folder of .txt files")
    if not texts or not any(t.strip() for t in texts):
        raise ValueError("texts: the corpus is empty (no document holds any text)")
    return texts


class UnitIndex:
    """What every exact n-gram index of a corpus shares: its units, vocabulary and query conversion.

    Subclasses count rows of vocabulary ids (:meth:`_count_ids`) and say which orders they hold
    (:meth:`has_order`). Unit ``vocab[i]`` has id ``i + 1``; ``0`` marks a unit absent from the corpus.
    """

    def __init__(self, vocab: list[str], unit: str | Tokenizer, lowercase: bool, n_tokens: int, n_docs: int):
        self.vocab = vocab
        self._ids = {u: i + 1 for i, u in enumerate(vocab)}
        self.unit = unit
        self.lowercase = lowercase
        self.n_tokens = n_tokens
        self.n_docs = n_docs
        self._lookup: VocabLookup | None = None

    @property
    def lookup(self) -> VocabLookup:
        """The vocabulary's batch lookup (built on first use)."""
        if self._lookup is None:
            self._lookup = VocabLookup(self.vocab, self._ids)
        return self._lookup

    def unit_ids(
        self, texts: Sequence[str], skip: Sequence[int] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Ids of the units of all ``texts`` concatenated ``(U,)`` and the units per text ``(m,)``.

        ``skip[i]``: only units of text ``i`` that start at or after offset ``skip[i]`` are kept (a
        prompt's length). Built-in units are split and looked up for all texts at once
        (:class:`VocabLookup`); a callable tokenizer is applied to each text (after ``skip``).
        """
        if not callable(self.unit):
            return self.lookup.text_unit_ids(texts, self.unit, self.lowercase, skip)
        skip = [0] * len(texts) if skip is None else skip
        units = [tokenize(t[k:], self.unit) for t, k in zip(texts, skip, strict=True)]
        lengths = np.fromiter(map(len, units), np.int64, len(units))
        return self.ids(list(chain.from_iterable(units))), lengths

    def has_order(self, n: int) -> bool:
        """Whether order-``n`` n-grams can be counted."""
        raise NotImplementedError

    def _count_ids(self, grams: np.ndarray) -> np.ndarray:
        """Occurrences of each row of known ids (all > 0), shape ``(m,)``."""
        raise NotImplementedError

    def _orders_text(self) -> str:
        raise NotImplementedError

    def _save(self, path: str | os.PathLike, kind: str, meta: dict, arrays: dict[str, np.ndarray]) -> Path:
        """Write the vocabulary, unit settings, ``meta`` and ``arrays`` to ``path`` atomically."""
        if callable(self.unit):
            raise ValueError("unit: an index built with a callable tokenizer cannot be saved by name")
        base = {"kind": kind, "vocab": self.vocab, "unit": self.unit, "lowercase": self.lowercase}
        base.update({"n_tokens": self.n_tokens, "n_docs": self.n_docs})
        save_arrays(Path(path), {**base, **meta}, arrays)
        return Path(path)

    def ids(self, units: Sequence[str]) -> np.ndarray:
        """Vocabulary ids of ``units`` (``0`` for a unit not in the corpus), shape ``(len(units),)``."""
        return np.fromiter(map(self._ids.get, units, repeat(0)), np.int64, len(units))

    def count(self, ngrams) -> np.ndarray:
        """Corpus occurrences of each n-gram, shape ``(m,)`` int64.

        ``ngrams``: a 2-D int array ``(m, n)`` of vocabulary ids, or a sequence of n-grams each a
        sequence of units or a string (split into units); all of one order ``n`` the index holds.
        """
        return self._count_rows(self._as_id_rows(ngrams))

    def _count_rows(self, grams: np.ndarray) -> np.ndarray:
        """Occurrences of each row of ids (``0``: a unit the corpus lacks), shape ``(m,)``."""
        out = np.zeros(len(grams), dtype=np.int64)
        known = (grams > 0).all(axis=1)
        if known.any():
            out[known] = self._count_ids(grams[known])
        return out

    def contains(self, ngrams) -> np.ndarray:
        """Whether each n-gram occurs in the corpus, shape ``(m,)`` bool."""
        return self.count(ngrams) > 0

    def _rows_of_units(self, ngrams: list) -> np.ndarray:
        """``(m, n)`` ids of n-grams each given as a string (split into units) or a sequence of units."""
        if not ngrams:
            return np.zeros((0, 1), dtype=np.int64)
        kinds = {issubclass(k, str) for k in set(map(type, ngrams))}
        if kinds == {True} and not callable(self.unit):
            ids, lengths = self.unit_ids(ngrams)
            return ids.reshape(len(ngrams), _one_length(lengths.tolist()))
        rows = ngrams
        if True in kinds:
            rows = [tokenize(g, self.unit, self.lowercase) if isinstance(g, str) else g for g in ngrams]
        n = _one_length(map(len, rows))
        get = self._ids.get
        ids = np.fromiter(map(get, chain.from_iterable(rows), repeat(0)), np.int64, len(rows) * n)
        # a unit the corpus lacks gets id 0; one that is not even a string is a caller's mistake
        unknown = (rows[at // n][at % n] for at in np.flatnonzero(ids == 0).tolist())
        stray = next((u for u in unknown if not isinstance(u, str)), None)
        if stray is not None:
            kind = type(stray).__name__
            raise ValueError(f"ngrams: units must be strings (or pass a 2-D integer id array), got {kind}")
        return ids.reshape(len(rows), n)

    def _as_id_rows(self, ngrams) -> np.ndarray:
        _check_not_one_string(ngrams)
        if isinstance(ngrams, np.ndarray) and ngrams.dtype.kind not in "iuUSO":
            raise ValueError(f"ngrams: an id array must hold integers, got dtype {ngrams.dtype}")
        if isinstance(ngrams, np.ndarray) and ngrams.dtype.kind in "iu":
            arr = ngrams
            if arr.ndim != 2:
                raise ValueError(f"ngrams must be 2-D (m, n) ids, got shape {arr.shape}")
            if arr.shape[0] and ((arr < 0) | (arr > len(self.vocab))).any():
                raise ValueError(f"ngrams: ids must lie in [0, {len(self.vocab)}]")
        else:
            arr = self._rows_of_units(list(ngrams))  # ids in [0, V] by construction
        if arr.shape[0] and not self.has_order(arr.shape[1]):
            raise ValueError(f"n must be an indexed order {self._orders_text()}, got {arr.shape[1]}")
        return arr.astype(np.int64, copy=False)


def _check_not_one_string(ngrams) -> None:
    """A string (or mapping) would be read item by item: ``"cat"`` as the 1-grams ``c``, ``a``, ``t``."""
    if isinstance(ngrams, str | bytes | Mapping):
        raise ValueError(
            f"ngrams must be a sequence of n-grams or a 2-D id array, got {type(ngrams).__name__} "
            "(wrap a single n-gram in a list)"
        )


def _one_length(lengths) -> int:
    distinct = set(lengths)
    if len(distinct) != 1:
        raise ValueError(f"ngrams must all have the same length, got lengths {sorted(distinct)}")
    return int(distinct.pop())


def _docs_as_ids(
    texts: Sequence[str] | str | os.PathLike, unit: str | Tokenizer, lowercase: bool
) -> tuple[list[str], list[np.ndarray], str | Tokenizer]:
    """The corpus vocabulary (sorted units) and each document as an id array (ids ``1..V``)."""
    if not callable(unit):
        unit = _check_unit(unit)
    lowercase = check_bool(lowercase, "lowercase")
    docs = [tokenize(t, unit, lowercase) for t in _read_corpus(texts)]
    if not any(docs):
        raise ValueError("texts: the corpus is empty (no units after tokenisation)")
    vocab = sorted({u for d in docs for u in d})
    ids = {u: i + 1 for i, u in enumerate(vocab)}
    return vocab, [np.fromiter(map(ids.__getitem__, d), np.int64, len(d)) for d in docs], unit


class NgramIndex(UnitIndex):
    """Exact n-gram counts of a corpus, one sorted key table per order.

    Build with :meth:`build`; query with :meth:`count` / :meth:`contains` (n-grams as sequences of
    units, strings split into units, or a 2-D array of vocabulary ids); persist with :meth:`save` /
    :meth:`load`. For many or unbounded orders over a large corpus, :class:`SuffixArrayIndex` holds
    every order in one array.

    Attributes
    ----------
    orders: the n-gram orders indexed, e.g. ``(1, ..., 6)``.
    unit: ``"word"``, ``"char"``, or the callable tokenizer the corpus was split with.
    lowercase: whether units were lower-cased (built-in units only).
    vocab: the corpus units; unit ``vocab[i]`` has id ``i + 1``.
    n_tokens: units in the corpus; n_docs: documents.
    """

    def __init__(
        self,
        vocab: list[str],
        stores: dict[int, SortedKeyStore],
        unit: str | Tokenizer,
        lowercase: bool,
        n_tokens: int,
        n_docs: int,
    ) -> None:
        super().__init__(vocab, unit, lowercase, n_tokens, n_docs)
        self._stores = stores
        self.orders = tuple(sorted(stores))
        self._bits = id_bits(len(vocab))

    # ------------------------------------------------------------------ building
    @classmethod
    def build(
        cls,
        texts: Sequence[str] | str | os.PathLike,
        n: int | Iterable[int] = (1, 2, 3, 4, 5, 6),
        unit: str | Tokenizer = "word",
        lowercase: bool = True,
    ) -> NgramIndex:
        """Index every n-gram (of each order in ``n``) of ``texts``.

        Parameters
        ----------
        texts: documents (strings), a ``.txt`` file, or a folder whose ``*.txt`` files are documents.
        n: one order or several (each >= 1).
        unit: ``"word"`` (``\\w+`` runs and single punctuation marks), ``"char"``, or a callable
            ``str -> list[str]`` (e.g. a subword tokenizer's ``tokenize``).
        lowercase: lower-case units (built-in units only).
        """
        orders = _check_orders(n)
        vocab, id_docs, unit = _docs_as_ids(texts, unit, lowercase)
        bits = id_bits(len(vocab))
        stores = {k: SortedKeyStore.from_keys(_keys_of_docs(id_docs, k, bits)) for k in orders}
        return cls(vocab, stores, unit, lowercase, sum(map(len, id_docs)), len(id_docs))

    # ------------------------------------------------------------------ queries
    def has_order(self, n: int) -> bool:
        return n in self._stores

    def _count_ids(self, grams: np.ndarray) -> np.ndarray:
        return self._stores[grams.shape[1]].count(pack(grams, self._bits))

    def _count_rows(self, grams: np.ndarray) -> np.ndarray:
        # packing is one-to-one on ids 0..V and every stored key holds ids >= 1, so a row holding an
        # unknown unit (id 0) finds no key: no need to set those rows aside first
        if len(grams) == 0:
            return np.zeros(0, dtype=np.int64)
        return self._count_ids(grams)

    def _orders_text(self) -> str:
        return str(self.orders)

    def distinct(self, n: int) -> int:
        """Number of distinct n-grams of order ``n`` in the corpus."""
        n = check_int(n, "n", minimum=1)
        if n not in self._stores:
            raise ValueError(f"n must be an indexed order {self.orders}, got {n}")
        return len(self._stores[n].keys)

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | os.PathLike) -> Path:
        """Write the index to ``path`` (``.npz``) atomically; returns the path."""
        arrays = {}
        for k, st in self._stores.items():
            arrays[f"keys{k}"], arrays[f"counts{k}"] = st.keys, st.counts
        return self._save(path, "sorted-keys", {"orders": list(self.orders)}, arrays)

    @classmethod
    def load(cls, path: str | os.PathLike) -> NgramIndex:
        """Read an index written by :meth:`save`."""
        meta, arrays = load_arrays(path, "sorted-keys")
        stores = {k: SortedKeyStore(arrays[f"keys{k}"], arrays[f"counts{k}"]) for k in meta["orders"]}
        return cls(meta["vocab"], stores, meta["unit"], meta["lowercase"], meta["n_tokens"], meta["n_docs"])

    def __repr__(self) -> str:
        return (
            f"NgramIndex(orders={self.orders}, unit={self.unit!r}, docs={self.n_docs}, "
            f"tokens={self.n_tokens}, vocab={len(self.vocab)})"
        )


def _check_unit(unit) -> str:
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {tuple(UNITS)} or a callable tokenizer, got {unit!r}")
    return unit


def _keys_of_docs(id_docs: list[np.ndarray], n: int, bits: int) -> np.ndarray:
    """Packed keys of every order-``n`` window of every document, shape ``(total windows,)``."""
    parts = [windows(d, n) for d in id_docs if len(d) >= n]
    if not parts:
        return pack(np.zeros((0, n), dtype=np.int64), bits)
    return pack(np.concatenate(parts), bits)
