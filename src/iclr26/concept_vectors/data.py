"""Concept datasets: generated from ``lemminflect``'s word data (ours), and loaders for the authors' files.

The embedded default concepts are **ours**, generated from the English inflection tables that the PyPI
package ``lemminflect`` (0.2.3, MIT) ships, in Todd et al.'s ``{"input", "output"}`` format:

- ``present-past``: verb lemma → simple past (``VBD``), e.g. ``walk → walked``;
- ``singular-plural``: noun lemma → plural (``NNS``), e.g. ``child → children``;
- ``capitalize``: the same verbs → first letter upper-cased (used with ``present-past`` for AmbiguousICL).

Only lower-case alphabetic lemmas of 3-10 letters whose inflection differs from the lemma are kept; an
optional ``vocabulary`` (e.g. the words a tokenizer holds as single tokens) keeps common words.
Todd et al.'s or the authors' JSON files load with :func:`load_tasks`; :func:`shared_data_dir` finds
Todd et al.'s files in the project's shared data folder (never shipped with the package), and
:func:`dictionary_pivot` turns an English concept into another language's through a translation task
(our second format, e.g. French ``present-past`` from Todd et al.'s ``english-french``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from ._prompts import ICLTask

__all__ = ["dictionary_pivot", "lemminflect_tasks", "load_tasks", "shared_data_dir"]


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


def shared_data_dir() -> Path | None:
    """Todd et al.'s datasets (``present-past.json``, ``english-french.json`` ...), or None if absent
    (:func:`iclr26.runtime.find_shared_data` for ``concept-vectors``)."""
    from ..runtime import find_shared_data

    return find_shared_data("concept-vectors", "present-past.json")


def dictionary_pivot(task: ICLTask, dictionary: ICLTask, min_pairs: int = 40) -> ICLTask | None:
    """The concept in the dictionary's language: ``(x, y) -> (d(x), d(y))`` where both words have an entry.

    Ours (not the authors', whose French sets are DeepL translations without a licence): a pair is
    kept when the dictionary task (e.g. Todd et al.'s ``english-french``) translates both its input
    and its output; the first entry of a word is its translation. Pairs whose two translations are
    equal (no concept left to apply) and repeated pairs are dropped; order follows ``task``.

    Returns:
        ``ICLTask`` named ``"{task.name}_{dictionary.name}"`` with ``task``'s concept, or None when
        fewer than ``min_pairs`` pairs remain.
    """
    if not isinstance(task, ICLTask) or not isinstance(dictionary, ICLTask):
        raise ValueError("task and dictionary must be ICLTask objects")
    if not isinstance(min_pairs, int) or min_pairs < 2:
        raise ValueError(f"min_pairs must be an integer >= 2, got {min_pairs!r}")
    lookup: dict[str, str] = {}
    for word, translation in dictionary.pairs:
        lookup.setdefault(word, translation)
    pivoted = (
        (lookup[x], lookup[y])
        for x, y in task.pairs
        if x in lookup and y in lookup and lookup[x] != lookup[y]
    )
    pairs = list(dict.fromkeys(pivoted))
    if len(pairs) < min_pairs:
        return None
    return ICLTask.from_pairs(pairs, f"{task.name}_{dictionary.name}", concept=task.concept)
