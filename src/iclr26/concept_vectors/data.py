"""Concept datasets: generated from ``lemminflect``'s word data (ours), and loaders for the authors' files.

The embedded default concepts are **ours**, generated from the English inflection tables that the PyPI
package ``lemminflect`` (0.2.3, MIT) ships, in Todd et al.'s ``{"input", "output"}`` format:

- ``present-past``: verb lemma → simple past (``VBD``), e.g. ``walk → walked``;
- ``singular-plural``: noun lemma → plural (``NNS``), e.g. ``child → children``;
- ``capitalize``: the same verbs → first letter upper-cased (used with ``present-past`` for AmbiguousICL).

Only lower-case alphabetic lemmas of 3-10 letters whose inflection differs from the lemma are kept; an
optional ``vocabulary`` (e.g. the words a tokenizer holds as single tokens) keeps common words.
Todd et al.'s or the authors' JSON files load with :func:`load_tasks`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from ._prompts import ICLTask

__all__ = ["lemminflect_tasks", "load_tasks"]


def _lemmas(tag_prefix: str) -> list[str]:
    from lemminflect.core.Inflections import Inflections

    table = Inflections()._getInflDict()  # lemma -> {tag: forms}; the package has no public lister
    return sorted(w for w, forms in table.items() if any(t.startswith(tag_prefix) for t in forms))


def _inflected(lemmas: Iterable[str], tag: str, keep: Callable[[str], bool]) -> list[tuple[str, str]]:
    from lemminflect import getInflection

    pairs = []
    for w in lemmas:
        if not (w.isalpha() and w.islower() and 3 <= len(w) <= 10 and keep(w)):
            continue
        forms = getInflection(w, tag)
        if forms and forms[0] != w and forms[0].isalpha():
            pairs.append((w, forms[0]))
    return pairs


def lemminflect_tasks(
    vocabulary: Callable[[str], bool] | None = None, max_pairs: int = 400
) -> dict[str, ICLTask]:
    """Our ``present-past``, ``singular-plural`` and ``capitalize`` tasks from ``lemminflect``'s tables.

    Args:
        vocabulary: ``keep(word) -> bool`` applied to lemmas and inflected forms (default: keep all).
        max_pairs: keep at most this many pairs per task (the first in alphabetical order of lemmas
            after a fixed interleaving, so the set spans the alphabet).

    Returns:
        ``{name: ICLTask}``; each task's ``concept`` is its name.
    """
    keep = vocabulary or (lambda _w: True)
    verbs = [(x, y) for x, y in _inflected(_lemmas("VB"), "VBD", keep) if keep(y)]
    nouns = [(x, y) for x, y in _inflected(_lemmas("NN"), "NNS", keep) if keep(y)]
    nouns = [(x, y) for x, y in nouns if (x, y) not in set(verbs)]

    def spread(pairs):
        step = max(1, len(pairs) // max_pairs)
        return pairs[::step][:max_pairs]

    verbs, nouns = spread(verbs), spread(nouns)
    caps = [(x, x.capitalize()) for x, _ in verbs]
    return {
        "present-past": ICLTask.from_pairs(verbs, "present-past"),
        "singular-plural": ICLTask.from_pairs(nouns, "singular-plural"),
        "capitalize": ICLTask.from_pairs(caps, "capitalize"),
    }


def load_tasks(folder: str | os.PathLike, names: Iterable[str] | None = None) -> dict[str, ICLTask]:
    """Load ``NAME.json`` files (Todd et al.'s or the authors' ``data/datasets``) as tasks.

    The concept is the name before the first ``_`` (the authors' ``antonym_eng`` → ``antonym``), so
    their 7 concepts × formats/languages design groups by concept unchanged.
    """
    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"folder {os.fspath(folder)!r} is not a directory")
    files = [root / f"{n}.json" for n in names] if names is not None else sorted(root.glob("*.json"))
    missing = [f.name for f in files if not f.is_file()]
    if missing:
        raise ValueError(f"names not found in folder {os.fspath(folder)!r}: {missing}")
    return {f.stem: ICLTask.from_json(f, name=f.stem, concept=f.stem.split("_")[0]) for f in files}
