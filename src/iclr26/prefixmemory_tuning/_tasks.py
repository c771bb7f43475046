"""Embedded 1-shot generative classification task built from data found beside the checkout.

Language identification of single words (English / French / German / Spanish) from Todd et al.'s
MIT-licensed translation lists (``english-{french,german,spanish}.json`` of *Function Vectors in Large
Language Models*), read from ``$ICLR26_SHARED_DATA/concept-vectors`` or ``<repo>/../shared/data/
concept-vectors`` when present; never copied into the package.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

LANGUAGES = ("English", "French", "German", "Spanish")
MIN_CHARS = 4


def language_pools(data_dir: str | os.PathLike | None = None) -> dict[str, list[str]]:
    """Sorted distinct words per language; a word found in two languages' lists is dropped.

    Raises FileNotFoundError naming the folder when the lists are absent.
    """
    if data_dir is None:
        from ..runtime import find_shared_data

        found = find_shared_data("concept-vectors", "english-french.json")
        if found is None:
            raise FileNotFoundError("Todd et al.'s word lists (shared/data/concept-vectors) not found")
        data_dir = found
    folder = Path(data_dir)
    pools: dict[str, set[str]] = {lang: set() for lang in LANGUAGES}
    for lang in LANGUAGES[1:]:
        path = folder / f"english-{lang.lower()}.json"
        if not path.exists():
            raise FileNotFoundError(f"{path} not found: the Todd et al. word lists are needed")
        for row in json.loads(path.read_text(encoding="utf-8")):
            src, dst = row["input"], row["output"]
            if len(src) >= MIN_CHARS:
                pools["English"].add(src)
            if len(dst) >= MIN_CHARS:
                pools[lang].add(dst)
    seen = [w for words in pools.values() for w in words]
    ambiguous = _duplicates(seen)
    return {lang: sorted(words - ambiguous) for lang, words in pools.items()}


def _duplicates(words: list[str]) -> set[str]:
    """The words listed more than once."""
    seen: set[str] = set()
    return {w for w in words if w in seen or seen.add(w)}


def prompt(word: str) -> str:
    """The classification prompt of one word; the completion is `` <Language>``."""
    return f"Word: {word}\nLanguage:"
