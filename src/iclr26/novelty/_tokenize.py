"""Text units for n-grams: words (Unicode ``\\w+`` runs and single punctuation marks) or characters.

Every unit holds no whitespace, so a text's units joined by single spaces is a byte string in which a
word n-gram ``(w1, ..., wn)`` occurs exactly where ``" w1 ... wn "`` occurs (the property the
infini-gram agreement test relies on).

Both built-in units are *local*: the units of ``text[:k]`` are, one for one, the units of ``text``
that start before offset ``k`` (a word cut by the offset is still one ``\\w+`` run; punctuation and
characters are one code point). So a prompt's units are the units that start before its end. For many
texts at once, :mod:`._batch` finds the same units as offsets in ``numpy`` passes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

_WORD = re.compile(r"\w+|[^\w\s]")
_SPACE = re.compile(r"\s+")

Tokenizer = Callable[[str], Sequence[str]]


def word_units(text: str, lowercase: bool = True) -> list[str]:
    """Word units of ``text``, each lower-cased on its own when ``lowercase``.

    ASCII text is lower-cased before matching (same units, one C call); other text unit by unit, since
    ``str.lower`` may lengthen a code point (``"İ"``) and split a unit.
    """
    if not lowercase:
        return _WORD.findall(text)
    if text.isascii():
        return _WORD.findall(text.lower())
    return [u.lower() for u in _WORD.findall(text)]


def char_units(text: str, lowercase: bool = True) -> list[str]:
    """Non-whitespace characters of ``text`` (each lower-cased on its own when ``lowercase``)."""
    chars = list(_SPACE.sub("", text))
    return [c.lower() for c in chars] if lowercase else chars


UNITS = {"word": word_units, "char": char_units}


def tokenize(text: str, unit: str | Tokenizer, lowercase: bool = True) -> list[str]:
    """The units of ``text``: built-in ``unit`` names (see :data:`UNITS`) or a callable tokenizer."""
    if callable(unit):
        units = unit(text)
        if isinstance(units, str | bytes):  # a string would be read character by character
            raise ValueError(
                f"unit: a callable tokenizer must return a list of units, got {type(units).__name__}"
            )
        return [str(t) for t in units]
    return UNITS[unit](text, lowercase)
