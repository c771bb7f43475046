"""Exact n-gram counts over a corpus: sorted packed keys of vocabulary ids (no hashing).

Each corpus unit gets a vocabulary id ``1..V`` (``0`` is never used, so an unknown unit can be told
apart). An n-gram of ids is packed big-endian into a fixed-width key: a ``uint64`` when ``n * bits``
fits in 64 bits (``bits = ceil(log2(V + 1))``), otherwise ``n * bytes`` raw bytes (``numpy`` ``S``
dtype, compared as ``memcmp``). For each order ``n`` the index keeps the sorted distinct keys and their
counts; a batch of queries is one ``searchsorted``. N-grams never cross document boundaries.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np

_FORMAT = 1


def id_bits(vocab_size: int) -> int:
    """Bits needed for ids ``0..vocab_size``."""
    return max(1, int(vocab_size).bit_length())


def windows(ids: np.ndarray, n: int) -> np.ndarray:
    """All length-``n`` windows of a 1-D id array: shape ``(max(len(ids) - n + 1, 0), n)``."""
    if len(ids) < n:
        return np.zeros((0, n), dtype=ids.dtype)
    return np.lib.stride_tricks.sliding_window_view(ids, n)


def pack(grams: np.ndarray, bits: int) -> np.ndarray:
    """Pack id rows ``(m, n)`` into sortable keys of shape ``(m,)``.

    ``uint64`` keys (``sum_j id_j << bits * (n - 1 - j)``) when ``n * bits <= 64``, else big-endian
    bytes of width ``n * ceil(bits / 8)`` (``S`` dtype). Both orderings are lexicographic in the ids.
    """
    m, n = grams.shape
    if n * bits <= 64:
        g = grams.astype(np.uint64, copy=False)
        shifts = (np.uint64(bits) * np.arange(n - 1, -1, -1, dtype=np.uint64)).astype(np.uint64)
        return np.bitwise_or.reduce(g << shifts, axis=1) if n > 1 else g[:, 0].copy()
    width = (bits + 7) // 8
    dtype = {1: ">u1", 2: ">u2", 3: ">u4", 4: ">u4"}.get(width, ">u8")
    size = np.dtype(dtype).itemsize
    raw = np.ascontiguousarray(grams.astype(dtype))
    return raw.view(f"S{n * size}").reshape(m)


class SortedKeyStore:
    """Sorted distinct keys of one n-gram order and their counts."""

    def __init__(self, keys: np.ndarray, counts: np.ndarray) -> None:
        self.keys = keys
        self.counts = counts

    @classmethod
    def from_keys(cls, keys: np.ndarray) -> SortedKeyStore:
        uniq, counts = np.unique(keys, return_counts=True)
        return cls(uniq, counts.astype(np.int64))

    def count(self, keys: np.ndarray) -> np.ndarray:
        """Occurrences of each query key, shape ``(m,)`` int64.

        The queries are sorted first: ``np.searchsorted`` starts each search where the previous one
        ended when its needles ascend, which keeps the table walk cache-friendly (2.4x faster on 10^6
        queries against a 20 MB corpus). Byte keys are sorted by their first 8 bytes only (as a
        ``uint64``): nearly in order, at a fraction of the cost of sorting byte strings.
        """
        if len(self.keys) == 0 or len(keys) == 0:
            return np.zeros(len(keys), dtype=np.int64)
        order = np.argsort(_leading_word(keys) if keys.dtype.kind == "S" else keys)
        needles = keys[order]
        pos = np.minimum(np.searchsorted(self.keys, needles), len(self.keys) - 1)
        out = np.empty(len(keys), dtype=np.int64)
        out[order] = np.where(self.keys[pos] == needles, self.counts[pos], 0)
        return out


def _leading_word(keys: np.ndarray) -> np.ndarray:
    """The first 8 bytes of each byte key as a big-endian ``uint64`` (the whole key, zero-padded, when
    shorter), shape ``(m,)``."""
    width = keys.dtype.itemsize
    raw = np.ascontiguousarray(keys).view(np.uint8).reshape(len(keys), width)[:, :8]
    if width < 8:
        raw = np.pad(raw, ((0, 0), (0, 8 - width)))
    return np.ascontiguousarray(raw).view(">u8").reshape(len(keys))


def save_arrays(path: Path, meta: dict, arrays: dict[str, np.ndarray]) -> None:
    """Write ``meta`` (JSON) and ``arrays`` to one ``.npz`` atomically (temp file + ``os.replace``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".npz")
    os.close(fd)
    try:
        payload = {"meta": np.frombuffer(json.dumps({**meta, "format": _FORMAT}).encode(), dtype=np.uint8)}
        np.savez(tmp, **payload, **arrays)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_arrays(path: str | os.PathLike, kind: str) -> tuple[dict, dict[str, np.ndarray]]:
    """Read what :func:`save_arrays` wrote for an index of ``kind`` (files without a kind are sorted-key
    indexes, the first layout)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path: no index file at {str(path)!r}")
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(bytes(z["meta"]).decode())
        arrays = {k: z[k] for k in z.files if k != "meta"}
    if meta.get("format") != _FORMAT:
        raise ValueError(f"path: unsupported index format {meta.get('format')!r} (expected {_FORMAT})")
    if meta.get("kind", "sorted-keys") != kind:
        raise ValueError(f"path: {str(path)!r} holds a {meta.get('kind')} index, not a {kind} one")
    return meta, arrays
