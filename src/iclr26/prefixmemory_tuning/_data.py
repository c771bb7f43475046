"""Users' classification data as JSONL (``{"text": ..., "label": ...}`` per line)."""

from __future__ import annotations

import json
import os


def load_jsonl(path: str | os.PathLike) -> list[tuple[str, str]]:
    """``(text, label)`` pairs from a JSONL export (BigBench, GoEmotions, DBpedia, ...).

    Raises ValueError naming ``path`` when a line lacks ``text``/``label``, when the file is empty,
    or when it holds a single label.
    """
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            obj = json.loads(line)
            if not isinstance(obj, dict) or "text" not in obj or "label" not in obj:
                raise ValueError(f"path: line {n} of {path} lacks 'text' or 'label'")
            rows.append((str(obj["text"]), str(obj["label"])))
    if not rows:
        raise ValueError(f"path: {path} holds no examples")
    if len({label for _, label in rows}) < 2:
        raise ValueError(f"path: {path} holds a single label; classification needs at least two")
    return rows
