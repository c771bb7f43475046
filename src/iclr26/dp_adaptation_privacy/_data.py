"""Loaders for user corpora: plain text (one document per line or per blank-line block) and JSONL."""

from __future__ import annotations

import json
from pathlib import Path


def read_text(path: Path, split: str) -> list[str]:
    """Documents of a text file: one per line (``split="line"``) or per blank-line block (``"paragraph"``)."""
    raw = path.read_text(encoding="utf-8")
    parts = raw.splitlines() if split == "line" else raw.split("\n\n")
    return [p.strip() for p in parts if p.strip()]


def read_jsonl(path: Path, field: str) -> list[str]:
    """The string ``field`` of every JSON object of a JSONL file (blank lines skipped)."""
    out = []
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if not isinstance(row, dict) or not isinstance(row.get(field), str):
                raise ValueError(f"field: line {number} of {path} has no string field {field!r}")
            out.append(row[field])
    return out
