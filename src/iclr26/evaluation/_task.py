"""A task is data: samples, a prompt builder, an answer parser, a scorer and aggregate metrics."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..models import GenerationConfig, Prompt


@dataclass(frozen=True)
class Sample:
    """One evaluation item: a unique ``id``, its raw record ``data``, and an optional ``group``
    (e.g. a question type) that aggregate metrics are broken down by."""

    id: str
    data: dict[str, Any]
    group: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise ValueError(f"Sample.id must be a non-empty string, got {self.id!r}")
        if not isinstance(self.data, dict):
            raise ValueError(f"Sample.data must be a dict, got {type(self.data).__name__}")

    def content_hash(self) -> str:
        blob = json.dumps(self.data, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def mean_by_group(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Default aggregate: the mean of every score, overall and per sample group, with counts.

    A score missing from a record (e.g. a record whose output could not be parsed, when the task
    sets no ``error_scores``) counts as 0; ``errors`` counts such records."""
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by["all"].append(r)
        if r.get("group"):
            by[r["group"]].append(r)
    out: dict[str, Any] = {}
    for g, rows in by.items():
        keys = sorted({k for row in rows for k in row["scores"]})
        out[g] = {
            "n": len(rows),
            "errors": sum(1 for row in rows if row.get("error")),
            **{k: sum(float(row["scores"].get(k, 0.0)) for row in rows) / len(rows) for k in keys},
        }
    return out


@dataclass
class Task:
    """A declarative evaluation task.

    Parameters
    ----------
    name: a stable task name (part of every sample key).
    samples: the items, or a zero-argument loader returning them (called once, lazily).
    build_prompt: ``sample -> prompt`` (a string or a list of chat messages).
    parse: ``(output_text, sample) -> answer`` (any JSON-serialisable value).
    score: ``(answer, sample) -> {metric: float}``.
    aggregate: ``records -> metrics`` (default :func:`mean_by_group`); each record is a dict with
        ``sample_id``, ``group``, ``parsed``, ``scores``, ``output``.
    generation: the generation settings the task asks for.
    version: bump when the prompt, parser or scorer changes (part of every sample key).
    error_scores: the scores of a sample whose ``parse`` or ``score`` raised (e.g. ``{"acc": 0.0}``);
        default: no scores (:func:`mean_by_group` then counts each missing score as 0).
    """

    name: str
    samples: Sequence[Sample] | Callable[[], Iterable[Sample]]
    build_prompt: Callable[[Sample], Prompt]
    parse: Callable[[str, Sample], Any]
    score: Callable[[Any, Sample], dict[str, float]]
    aggregate: Callable[[Sequence[dict[str, Any]]], dict[str, Any]] = mean_by_group
    generation: GenerationConfig = field(default_factory=GenerationConfig)
    version: str = "1"
    error_scores: dict[str, float] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("Task.name must be a non-empty string")
        for attr in ("build_prompt", "parse", "score", "aggregate"):
            if not callable(getattr(self, attr)):
                raise ValueError(f"Task.{attr} must be callable")
        if self.error_scores is not None and not (
            isinstance(self.error_scores, dict)
            and all(isinstance(k, str) and isinstance(v, int | float) for k, v in self.error_scores.items())
        ):
            raise ValueError(f"Task.error_scores must be a dict of numbers, got {self.error_scores!r}")
        self._loaded: list[Sample] | None = None

    def load(self) -> list[Sample]:
        """The task's samples (loaded once); ids must be unique."""
        if self._loaded is None:
            items = self.samples() if callable(self.samples) else self.samples
            items = list(items)
            for i, s in enumerate(items):
                if not isinstance(s, Sample):
                    raise ValueError(
                        f"sample {i} of task {self.name!r} is a {type(s).__name__}, expected Sample"
                    )
            ids = [s.id for s in items]
            if len(set(ids)) != len(ids):
                dup = next(i for i in ids if ids.count(i) > 1)
                raise ValueError(f"task {self.name!r} has duplicate sample id {dup!r}")
            self._loaded = items
        return self._loaded
