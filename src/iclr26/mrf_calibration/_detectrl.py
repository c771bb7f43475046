"""DetectRL JSON files and the authors' 10 / 45 / 45 split (``dataset_loader_sentence.py``)."""

from __future__ import annotations

import gzip
import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path

from ..validation import check_int

#: Replacements of the authors' ``process_spaces``, in their order.
_SPACES = (
    (" ,", ","),
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ;", ";"),
    (" '", "'"),
    (" ’ ", "'"),
    (" :", ":"),
    ("<newline>", "\n"),
    ("`` ", '"'),
    (" ''", '"'),
    ("''", '"'),
    (".. ", "... "),
    (" )", ")"),
    ("( ", "("),
    (" n't", "n't"),
    (" i ", " I "),
    (" i'", " I'"),
    ("\\'", "'"),
    ("\n ", "\n"),
)


def process_spaces(text: str) -> str:
    """Detokenise spacing as the authors do before scoring (then strip)."""
    for a, b in _SPACES:
        text = text.replace(a, b)
    return text.strip()


@dataclass
class DetectRLRecord:
    """One text of a DetectRL file: ``label`` 1 = LLM, 0 = human; ``data_type`` the generation/attack."""

    text: str
    label: int
    data_type: str
    llm_type: str


@dataclass
class Split:
    """Texts, 0/1 labels and the records' ``data_type`` (kept for attack breakdowns)."""

    texts: list[str] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    data_types: list[str] = field(default_factory=list)


def load_detectrl(path: str | os.PathLike) -> list[DetectRLRecord]:
    """Read a DetectRL JSON list (``.json`` or ``.json.gz``) of ``{text, label, data_type, llm_type}``.

    ``label`` must be ``"human"`` or ``"llm"``; a record without text is refused.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path: no DetectRL file at {str(path)!r}")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, list):
        raise ValueError(f"path: {path.name} must hold a JSON list of records")
    out = []
    for i, rec in enumerate(data):
        if not isinstance(rec, dict) or rec.get("label") not in ("human", "llm"):
            raise ValueError(f"path: record {i} of {path.name} needs label 'human' or 'llm'")
        text = rec.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"path: record {i} of {path.name} has no text")
        out.append(
            DetectRLRecord(
                text,
                int(rec["label"] == "llm"),
                str(rec.get("data_type", "")),
                str(rec.get("llm_type", "")),
            )
        )
    return out


def authors_seed(seed: int) -> int:
    """The seed of ``benchmark.py --iter seed``: the ``seed``-th of 100 draws after ``random.seed(0)``."""
    rng = random.Random(0)
    seeds = [rng.randint(0, 100000000) for _ in range(100)]
    return seeds[seed]


def _check_records(records) -> None:
    """``DetectRLRecord``s labelled 0 or 1 (another label would be dropped from both classes unseen)."""
    if isinstance(records, str | bytes) or not isinstance(records, list | tuple):
        raise ValueError(f"records must be a list of DetectRLRecord, got {type(records).__name__}")
    for i, r in enumerate(records):
        if not isinstance(r, DetectRLRecord) or isinstance(r.label, bool) or r.label not in (0, 1):
            got = f"{type(r).__name__} with label {getattr(r, 'label', None)!r}"
            raise ValueError(
                f"records[{i}] must be a DetectRLRecord with label 0 (human) or 1 (LLM), got {got}"
            )
        if not isinstance(r.text, str):
            raise ValueError(f"records[{i}].text must be a string, got {type(r.text).__name__}")


def detectrl_split(records: list[DetectRLRecord], seed: int = 0) -> dict[str, Split]:
    """The authors' split: shuffle human and LLM texts, pair them, cut pairs 10 % / 45 % / 45 %.

    With ``random`` seeded as ``benchmark.py --iter seed``: human and LLM texts are shuffled (in that
    order), truncated to the smaller count, paired (pairs with a one-word text dropped, at most 10,000),
    the pairs shuffled and the first 10 % go to ``train``, the next 45 % to ``val``, the rest to ``test``;
    each pair adds its human text (label 0) then its LLM text (label 1).
    """
    seed = check_int(seed, "seed (the authors' iter)", minimum=0, maximum=99)
    _check_records(records)
    rng = random.Random(authors_seed(seed))
    human = [r for r in records if r.label == 0]
    llm = [r for r in records if r.label == 1]
    rng.shuffle(human)
    rng.shuffle(llm)
    n = min(len(human), len(llm))
    pairs = [
        (h, m) for h, m in zip(human[:n], llm[:n]) if len(h.text.split()) > 1 and len(m.text.split()) > 1
    ][:10000]
    if not pairs:  # one class only, or only one-word texts: every split would be silently empty
        raise ValueError(
            f"records must pair human and LLM texts of more than one word, got {len(human)} human and "
            f"{len(llm)} LLM records and no such pair"
        )
    order = list(range(len(pairs)))
    rng.shuffle(order)
    splits = {"train": Split(), "val": Split(), "test": Split()}
    total = len(pairs)
    for i in range(total):
        part = "train" if i < total * 0.1 else ("val" if i < total * 0.55 else "test")
        for rec in pairs[order[i]]:
            splits[part].texts.append(process_spaces(rec.text))
            splits[part].labels.append(rec.label)
            splits[part].data_types.append(rec.data_type)
    return splits
