"""Many texts to vocabulary ids in a few ``numpy`` passes instead of Python work per unit.

The texts are joined by ``"\\n"`` (whitespace, so no unit crosses two texts) and read as one array of
code points. Each code point is a word character (``\\w``), whitespace (``\\s``) or punctuation (the
rest): ASCII from a fixed table, any other code point by the same regular expressions as
:mod:`._tokenize`, once per distinct code point, so the classes are the regex's by construction.
Word units are maximal runs of word characters, every punctuation mark is a unit of its own, and a
character unit is any non-whitespace code point: exactly the units ``re.findall`` gives, as
``(start, end)`` offsets.

A unit of one ASCII code point, or of 2 to ``_SHORT`` ASCII word characters, is looked up by an exact
key (:func:`packed_keys`: distinct units get distinct keys) in a sorted table of the vocabulary's
keys; any other unit (longer, or not ASCII, whose ``str.lower`` may depend on context or change the
length) is sliced out and looked up in the vocabulary dict. Nothing is hashed approximately, so ids
are exact.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

_SHORT = 10  # units of up to this many ASCII word characters get a packed key
_WORD_CHAR = re.compile(r"\w")
_SPACE_CHAR = re.compile(r"\s")
SPACE, WORD, PUNCT = 0, 1, 2


def _class_of(char: str) -> int:
    if _WORD_CHAR.match(char):
        return WORD
    return SPACE if _SPACE_CHAR.match(char) else PUNCT


_ASCII_CLASS = np.array([_class_of(chr(c)) for c in range(128)], dtype=np.uint8)
_ASCII_LOWER = np.array([ord(chr(c).lower()) for c in range(128)], dtype=np.uint64)


def code_points(text: str) -> np.ndarray:
    """The code points of ``text``, shape ``(len(text),)`` ``uint32`` (lone surrogates kept)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def char_classes(cp: np.ndarray) -> np.ndarray:
    """``SPACE`` / ``WORD`` / ``PUNCT`` of each code point, shape ``(len(cp),)`` ``uint8``."""
    cls = _ASCII_CLASS[np.minimum(cp, 127)]
    wide = np.flatnonzero(cp >= 128)
    if len(wide):
        distinct, inverse = np.unique(cp[wide], return_inverse=True)
        table = np.fromiter((_class_of(chr(c)) for c in distinct.tolist()), np.uint8, len(distinct))
        cls[wide] = table[inverse]
    return cls


def unit_spans(cp: np.ndarray, unit: str) -> tuple[np.ndarray, np.ndarray]:
    """Start and end offsets (into ``cp``) of every unit, in order: each shape ``(U,)`` ``int64``.

    ``unit``: ``"word"`` (``\\w+`` runs and single punctuation marks) or ``"char"`` (non-whitespace
    code points).
    """
    cls = char_classes(cp)
    if unit == "char":
        starts = np.flatnonzero(cls != SPACE)
        return starts, starts + 1
    word = cls == WORD
    after_word = np.zeros(len(cp), dtype=bool)
    after_word[1:] = word[:-1]
    starts = np.flatnonzero((cls == PUNCT) | (word & ~after_word))
    before_word = np.zeros(len(cp), dtype=bool)
    before_word[:-1] = word[1:]
    ends = starts + 1
    ends[word[starts]] = np.flatnonzero(word & ~before_word) + 1
    return starts, ends


def _symbol_table(lower: bool) -> np.ndarray:
    """For code points ``0..127`` (and ``128``: any wider one): the 6-bit symbol ``1..63`` of an ASCII
    word character (after ASCII lower-casing when ``lower``), ``_NO_SYMBOL`` for anything else."""
    table = np.full(129, _NO_SYMBOL, dtype=np.uint64)
    for code, char in enumerate(_WORD_SYMBOLS, start=1):
        table[ord(char)] = code
    if lower:
        for char in _WORD_SYMBOLS:
            table[ord(char)] = table[ord(char.lower())]
    return table


_NO_SYMBOL = 255
_WORD_SYMBOLS = "0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_SYMBOLS = {False: _symbol_table(False), True: _symbol_table(True)}
_LONG_FLAG = np.uint64(1 << 63)


def packed_keys(
    cp: np.ndarray, starts: np.ndarray, lengths: np.ndarray, lower: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``uint64`` keys of the units ``cp[starts[k] : starts[k] + lengths[k]]`` and whether each
    unit has one, both shape ``(len(starts),)``.

    A single ASCII code point is its own key (``< 128``; ASCII-lower-cased when ``lower``). A unit of
    2 to ``_SHORT`` ASCII word characters is ``2**63`` plus its 6-bit symbols packed left-aligned
    (symbols are ``>= 1``, so the zero padding cannot be mistaken for a character). Distinct units get
    distinct keys; any other unit has none.
    """
    symbols = _SYMBOLS[lower]
    keys = np.zeros(len(starts), dtype=np.uint64)
    has_key = (lengths >= 1) & (lengths <= _SHORT)
    if len(cp) == 0:
        return keys, np.zeros(len(starts), dtype=bool)
    first = cp[np.minimum(starts, len(cp) - 1)]
    single = np.flatnonzero(has_key & (lengths == 1))
    ascii_single = first[single] < 128
    has_key[single[~ascii_single]] = False
    keys[single] = _ASCII_LOWER[np.minimum(first[single], 127)] if lower else first[single]
    rows = np.flatnonzero(has_key & (lengths >= 2))
    keys[rows] = _LONG_FLAG
    for j in range(_SHORT):
        sym = symbols[np.minimum(cp[starts[rows] + j], 128)]
        has_key[rows[sym == _NO_SYMBOL]] = False
        keys[rows] |= sym << np.uint64(6 * (_SHORT - 1 - j))
        rows = rows[lengths[rows] > j + 1]
    return keys, has_key


class VocabLookup:
    """Exact unit -> id lookup of a vocabulary (unit ``vocab[i]`` has id ``i + 1``; ``0``: unknown)."""

    def __init__(self, vocab: Sequence[str], ids: dict[str, int]):
        self._ids = ids
        short = [(i, u) for i, u in enumerate(vocab, start=1) if len(u) <= _SHORT and u.isascii()]
        rows, units = zip(*short, strict=True) if short else ((), ())
        cp = np.array(units, dtype=f"U{_SHORT}").view(np.uint32).reshape(-1)
        lengths = np.fromiter(map(len, units), np.int64, len(units))
        keys, has_key = packed_keys(cp, np.arange(len(units)) * _SHORT, lengths, lower=False)
        order = np.argsort(keys[has_key])
        self._keys = keys[has_key][order]
        self._key_ids = np.asarray(rows, dtype=np.int64)[has_key][order]

    def span_ids(
        self, text: str, cp: np.ndarray, starts: np.ndarray, ends: np.ndarray, lower: bool
    ) -> np.ndarray:
        """Ids of the units ``text[starts[k]:ends[k]]`` (each lower-cased by ``str.lower`` when
        ``lower``), shape ``(len(starts),)`` int64. ``cp`` holds the code points of ``text``."""
        keys, has_key = packed_keys(cp, starts, ends - starts, lower)
        out = np.zeros(len(starts), dtype=np.int64)
        if len(self._keys):
            pos = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
            out = np.where(has_key & (self._keys[pos] == keys), self._key_ids[pos], 0)
        rest = np.flatnonzero(~has_key)
        if len(rest):
            get = self._ids.get
            spans = zip(starts[rest].tolist(), ends[rest].tolist(), strict=True)
            if lower:
                out[rest] = [get(text[s:e].lower(), 0) for s, e in spans]
            else:
                out[rest] = [get(text[s:e], 0) for s, e in spans]
        return out

    def text_unit_ids(
        self, texts: Sequence[str], unit: str, lower: bool, skip: Sequence[int] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Ids of the units of all ``texts`` concatenated ``(U,)`` and the units per text ``(m,)``.

        ``skip[i]``: a unit of text ``i`` is kept only if it starts at or after offset ``skip[i]``
        (a prompt's length: units inside or straddling the prompt are dropped).
        """
        joined = "\n".join(texts)
        cp = code_points(joined)
        sizes = np.fromiter(map(len, texts), np.int64, len(texts))
        offsets = np.cumsum(sizes + 1) - (sizes + 1)
        starts, ends = unit_spans(cp, unit)
        owner = np.searchsorted(offsets, starts, side="right") - 1
        if skip is not None:
            first = offsets + np.asarray(skip, dtype=np.int64)
            keep = starts >= first[owner]
            starts, ends, owner = starts[keep], ends[keep], owner[keep]
        lengths = np.bincount(owner, minlength=len(texts)).astype(np.int64)
        return self.span_ids(joined, cp, starts, ends, lower), lengths
