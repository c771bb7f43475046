"""Append-only per-sample log in SQLite (WAL mode): one row per (task, sample, model, config, seed).

The ``model`` column holds the model's content identity (what keys are built from); ``model_name``
its readable name; ``error`` why parsing or scoring the raw output failed (``NULL`` when it did not).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS samples (
    key TEXT PRIMARY KEY,
    task TEXT NOT NULL,
    sample_id TEXT NOT NULL,
    sample_group TEXT NOT NULL,
    model TEXT NOT NULL,
    config TEXT NOT NULL,
    seed INTEGER NOT NULL,
    prompt TEXT NOT NULL,
    output TEXT NOT NULL,
    parsed TEXT NOT NULL,
    scores TEXT NOT NULL,
    batch_size INTEGER NOT NULL,
    created REAL NOT NULL,
    model_name TEXT,
    error TEXT
);
CREATE INDEX IF NOT EXISTS samples_task_model ON samples (task, model);
CREATE TRIGGER IF NOT EXISTS samples_no_update BEFORE UPDATE ON samples
BEGIN SELECT RAISE(ABORT, 'the sample log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS samples_no_delete BEFORE DELETE ON samples
BEGIN SELECT RAISE(ABORT, 'the sample log is append-only'); END;
"""

_COLUMNS = (
    "key",
    "task",
    "sample_id",
    "sample_group",
    "model",
    "config",
    "seed",
    "prompt",
    "output",
    "parsed",
    "scores",
    "batch_size",
    "created",
    "model_name",
    "error",
)
#: Columns added after the first release: logs written before them get them on open (NULL for old rows).
_ADDED_COLUMNS = ("model_name", "error")
_JSON_COLUMNS = ("config", "prompt", "output", "parsed", "scores")


class SampleLog:
    """The per-sample log of an evaluation: prompt, raw output, parsed answer and scores per sample.

    Rows are only ever inserted (triggers refuse updates and deletes); each batch is committed at
    once, so a killed run loses at most the batch in flight. Several processes may read while one
    writes (WAL mode).
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(_SCHEMA)
        have = {row[1] for row in self._conn.execute("PRAGMA table_info(samples)")}
        for col in _ADDED_COLUMNS:
            if col not in have:
                try:
                    self._conn.execute(f"ALTER TABLE samples ADD COLUMN {col} TEXT")
                except sqlite3.OperationalError as exc:  # another process added it first
                    if "duplicate column" not in str(exc):
                        raise

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> SampleLog:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0])

    def append(self, records: Sequence[dict[str, Any]]) -> int:
        """Insert records (dicts with the log's fields) in one transaction; existing keys are kept
        as they are. Returns the number of rows added."""
        if not records:
            return 0
        rows = []
        now = time.time()
        for r in records:
            row = {"model_name": None, "error": None, **r, "created": r.get("created", now)}
            rows.append(
                tuple(
                    json.dumps(row[c], ensure_ascii=False) if c in _JSON_COLUMNS else row[c] for c in _COLUMNS
                )
            )
        placeholders = ",".join("?" * len(_COLUMNS))
        before = self._conn.total_changes
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            self._conn.executemany(
                f"INSERT OR IGNORE INTO samples ({','.join(_COLUMNS)}) VALUES ({placeholders})", rows
            )
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        return self._conn.total_changes - before

    def _decode(self, row: tuple) -> dict[str, Any]:
        d = dict(zip(_COLUMNS, row))
        for c in _JSON_COLUMNS:
            d[c] = json.loads(d[c])
        return d

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        keys = list(keys)
        out: dict[str, dict[str, Any]] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            q = f"SELECT {','.join(_COLUMNS)} FROM samples WHERE key IN ({','.join('?' * len(chunk))})"
            for row in self._conn.execute(q, chunk):
                d = self._decode(row)
                out[d["key"]] = d
        return out

    def identities(self, task: str, model_name: str) -> list[str]:
        """The model identities logged for ``task`` under the readable name ``model_name``."""
        q = "SELECT DISTINCT model FROM samples WHERE task = ? AND model_name = ? ORDER BY model"
        return [r[0] for r in self._conn.execute(q, (task, model_name))]

    def records(self, task: str | None = None, model: str | None = None) -> list[dict[str, Any]]:
        """All rows (optionally of one task and/or model identity), in insertion order."""
        q = f"SELECT {','.join(_COLUMNS)} FROM samples"
        cond, args = [], []
        if task is not None:
            cond.append("task = ?")
            args.append(task)
        if model is not None:
            cond.append("model = ?")
            args.append(model)
        if cond:
            q += " WHERE " + " AND ".join(cond)
        q += " ORDER BY rowid"
        return [self._decode(r) for r in self._conn.execute(q, args)]
