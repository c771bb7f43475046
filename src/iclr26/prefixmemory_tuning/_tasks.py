"""Embedded 1-shot generative classification tasks built from data that PyPI packages ship (ours).

- **Entity type** (country / city / language / currency): English names from babel's CLDR data
  (territories with a letter code, the exemplar city of every time-zone id, language names, currency
  names). When Todd et al.'s MIT-licensed ``country-capital.json`` (*Function Vectors in Large Language
  Models*) is found beside the checkout, its countries and capitals join the country and city pools; it
  is read in place, never copied into the package.
- **Language identification** (English / French / German / Spanish): single-word CLDR names of
  territories and languages in each of the four locales (babel).
- **Word sentiment** (positive / negative): alphabetic words of the VADER lexicon (``vaderSentiment``)
  whose mean rating is at least ``SENTIMENT_MARGIN`` away from 0 (ratings run from -4 to +4).

A name listed under two labels is dropped from both, as are names shorter than ``MIN_CHARS``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

MIN_CHARS = 4
SENTIMENT_MARGIN = 1.5
LANGUAGES = ("English", "French", "German", "Spanish")
_LOCALES = {"English": "en", "French": "fr", "German": "de", "Spanish": "es"}
#: Letters, with single spaces, hyphens or apostrophes between words (no digits, no brackets).
_NAME = re.compile(r"^[^\W\d_]+(?:[ '-][^\W\d_]+)*$")


@dataclass(frozen=True)
class WordTask:
    """A word classification task: prompt ``"Word: <w>\\n<field>:"``, completion ``" <label>"``.

    ``pools`` maps each label to its words (sorted, distinct, no word under two labels).
    Raises ValueError naming the argument for an empty ``name``/``field``, fewer than two labels,
    a label without words, non-string words or a word listed under two labels.
    """

    name: str
    field: str
    pools: Mapping[str, tuple[str, ...]]
    source: str = "user"

    def __post_init__(self) -> None:
        for arg in ("name", "field"):
            if not (isinstance(getattr(self, arg), str) and getattr(self, arg).strip()):
                raise ValueError(f"{arg} must be a non-empty string, got {getattr(self, arg)!r}")
        if not isinstance(self.pools, Mapping) or len(self.pools) < 2:
            n = len(self.pools) if isinstance(self.pools, Mapping) else type(self.pools).__name__
            raise ValueError(f"pools must map at least two labels to words, got {n}")
        owner: dict[str, str] = {}
        for label, words in self.pools.items():
            if not isinstance(label, str) or not label.strip():
                raise ValueError(f"pools: labels must be non-empty strings, got {label!r}")
            if isinstance(words, str) or not words:
                raise ValueError(f"pools[{label!r}] must be a non-empty sequence of words")
            for w in words:
                if not isinstance(w, str) or not w.strip():
                    raise ValueError(f"pools[{label!r}] holds {w!r}; words must be non-empty strings")
                if owner.setdefault(w, label) != label:
                    raise ValueError(f"pools: {w!r} is listed under {owner[w]!r} and {label!r}")
        object.__setattr__(self, "pools", {y: tuple(sorted(set(ws))) for y, ws in self.pools.items()})

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self.pools)

    def prompt(self, word: str) -> str:
        """The classification prompt of one word."""
        return f"Word: {word}\n{self.field}:"

    def completion(self, label: str) -> str:
        """The completion a label is scored (and trained) as: the label after one space."""
        return " " + label


def _distinct(pools: dict[str, set[str]]) -> dict[str, tuple[str, ...]]:
    """Names of at least ``MIN_CHARS`` characters listed under exactly one label."""
    seen: dict[str, int] = {}
    for words in pools.values():
        for w in words:
            seen[w] = seen.get(w, 0) + 1
    return {
        y: tuple(sorted(w for w in ws if seen[w] == 1 and len(w) >= MIN_CHARS)) for y, ws in pools.items()
    }


def _names(mapping: Mapping[str, str]) -> set[str]:
    return {n for n in mapping.values() if _NAME.match(n)}


def entity_type_task(todd_dir: str | os.PathLike | None = "auto") -> WordTask:
    """Entity type of an English name: country, city, language or currency.

    ``todd_dir``: ``"auto"`` (default) adds Todd et al.'s ``country-capital.json`` when
    :func:`iclr26.runtime.find_shared_data` finds it, ``None`` uses babel's data only, a folder must
    hold ``country-capital.json`` (FileNotFoundError otherwise).
    """
    from babel import Locale
    from babel.core import get_global

    en = Locale("en")
    pools = {
        "country": _names({c: n for c, n in en.territories.items() if c.isalpha()}),
        "city": {z.rsplit("/", 1)[1].replace("_", " ") for z in get_global("zone_territories") if "/" in z},
        "language": _names(en.languages),
        "currency": _names(en.currencies),
    }
    source = "babel CLDR (en)"
    if isinstance(todd_dir, str) and todd_dir == "auto":
        from ..runtime import find_shared_data

        todd_dir = find_shared_data("concept-vectors", "country-capital.json")
    if todd_dir is not None:
        path = Path(todd_dir) / "country-capital.json"
        if not path.exists():
            raise FileNotFoundError(f"todd_dir: {path} not found")
        for row in json.loads(path.read_text(encoding="utf-8")):
            pools["country"] |= _names({0: row["input"]})
            pools["city"] |= _names({0: row["output"]})
        source += " + Todd et al. country-capital"
    return WordTask("entity_type", "Type", _distinct(pools), source)


def language_id_task() -> WordTask:
    """Language of a single-word CLDR name of a territory or language (English/French/German/Spanish)."""
    from babel import Locale

    pools = {}
    for lang in LANGUAGES:
        loc = Locale(_LOCALES[lang])
        pools[lang] = {n for n in [*loc.territories.values(), *loc.languages.values()] if n.isalpha()}
    return WordTask("language_id", "Language", _distinct(pools), "babel CLDR (en, fr, de, es)")


def vader_lexicon_path() -> Path:
    """``vader_lexicon.txt`` inside the installed ``vaderSentiment`` package (read in place)."""
    spec = importlib.util.find_spec("vaderSentiment")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(
            "vaderSentiment is not installed: pip install 'iclr26[prefixmemory-tuning]'"
        )
    return Path(spec.origin).parent / "vader_lexicon.txt"


def word_sentiment_task(margin: float = SENTIMENT_MARGIN) -> WordTask:
    """Sentiment of an English word of the VADER lexicon: mean rating >= ``margin`` is positive,
    <= -``margin`` negative (alphabetic entries only; emoticons and the words between are dropped)."""
    if not (isinstance(margin, int | float) and 0 < margin < 4):
        raise ValueError(f"margin must be a number in (0, 4), got {margin!r}")
    pools: dict[str, set[str]] = {"positive": set(), "negative": set()}
    for line in vader_lexicon_path().read_text(encoding="utf-8").splitlines():
        word, mean = line.split("\t")[:2]
        if word.isalpha() and abs(float(mean)) >= margin:
            pools["positive" if float(mean) > 0 else "negative"].add(word)
    return WordTask("word_sentiment", "Sentiment", _distinct(pools), "VADER lexicon (vaderSentiment)")


#: The embedded tasks by name, in the order of the medium plan.
TASKS = {
    "entity_type": entity_type_task,
    "language_id": language_id_task,
    "word_sentiment": word_sentiment_task,
}
