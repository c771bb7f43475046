"""Text units for n-grams: words (Unicode ``\\w+`` runs and single punctuation marks) or characters.

Every unit holds no whitespace, so a text's units joined by single spaces is a byte string in which a
word n-gram ``(w1, ..., wn)`` occurs exactly where ``" w1 ... wn "`` occurs (the property the
infini-gram agreement test relies on).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

_WORD = re.compile(r"\w+|[^\w\s]")

Tokenizer = Callable[[str], Sequence[str]]


def word_spans(text: str, lowercase: bool = True) -> tuple[list[str], np.ndarray]:
    """Word units of ``text`` and their start offsets (shape ``(n_units,)``, int64)."""
    matches = list(_WORD.finditer(text))
    units = [m.group().lower() if lowercase else m.group() for m in matches]
    return units, np.fromiter((m.start() for m in matches), np.int64, len(matches))


def char_spans(text: str, lowercase: bool = True) -> tuple[list[str], np.ndarray]:
    """Non-whitespace characters of ``text`` and their offsets."""
    starts = np.fromiter((i for i, c in enumerate(text) if not c.isspace()), np.int64)
    return [text[i].lower() if lowercase else text[i] for i in starts], starts


UNITS = {"word": word_spans, "char": char_spans}


def tokenize(text: str, unit: str | Tokenizer, lowercase: bool = True) -> list[str]:
    """The units of ``text``: built-in ``unit`` names (see :data:`UNITS`) or a callable tokenizer."""
    if callable(unit):
        return [str(t) for t in unit(text)]
    return UNITS[unit](text, lowercase)[0]


def continuation_units(text: str, prompt: str, unit: str | Tokenizer, lowercase: bool = True) -> list[str]:
    """Units of ``text`` (which starts with ``prompt``) that start at or after the prompt's end.

    A unit that straddles the boundary counts as the prompt's, so no n-gram crossing the boundary is
    kept. A callable tokenizer has no offsets: it is applied to the continuation alone.
    """
    if callable(unit):
        return tokenize(text[len(prompt) :], unit)
    units, starts = UNITS[unit](text, lowercase)
    return units[int(np.searchsorted(starts, len(prompt), side="left")) :]
