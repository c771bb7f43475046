"""PoliCon records: loading the authors' files, checking records, goals and settings.

A *topic record* is one European Parliament debate: ``topic``, ``title``, ``background``,
``resolution`` (the adopted text) and ``stances`` (per political group: ``party_name``, ``stance``,
``score`` = share of the group's MEPs voting for, ``choice`` = min(9, floor(10 * score))).
A *task record* adds the parliament setting: the chosen ``stances`` (2, 4 or 6 groups),
``seat_weights`` (tenths summing to 1, aligned with ``stances``), ``veto_party_name``, ``party_num``
and ``id`` (Kang et al., PoliCon, ICLR 2026; data first released as EuroCon).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Our goal names and the authors' setting names (their result folder names).
AUTHORS_GOALS = {
    "simple_majority": "simple_majority",
    "two_thirds": "2_3_majority",
    "veto": "veto_power",
    "rawlsian": "rawlsianism",
    "utilitarian": "utilitarianism",
}
GOALS = tuple(AUTHORS_GOALS)
VOTING_GOALS = ("simple_majority", "two_thirds", "veto")
WELFARE_GOALS = {"rawlsian": math.inf, "utilitarian": 0.0}
PARTY_NUMS = (2, 4, 6)
#: The 19 topics of the authors' ``datas/task_infos.py`` (European Parliament committees).
TOPICS = (
    "development",
    "culture & education",
    "agriculture",
    "gender equality",
    "regional development",
    "constitutional and inter-institutional affairs",
    "transport & tourism",
    "legal affairs",
    "employment & social affairs",
    "industry, research & energy",
    "fisheries",
    "internal market & consumer protection",
    "international trade",
    "budget",
    "environment & public health",
    "economic & monetary affairs",
    "civil liberties, justice & home affairs",
    "foreign & security policy",
    "budgetary control",
)
#: Political groups per parliamentary term (the authors' ``party_lists``).
PARTY_LISTS = {
    "9th_datas": ("EPP", "SD", "ECR", "RENEW", "GREEN_EFA", "GUE_NGL", "ID"),
    "8th_datas": ("EPP", "SD", "ECR", "EFDD", "GREEN_EFA", "GUE_NGL", "ALDE", "ENF"),
    "7th_datas": ("EPP", "EFD", "SD", "ALDE", "ECR", "GREEN_EFA", "GUE_NGL"),
}
_TOPIC_FIELDS = ("topic", "title", "background", "stances", "resolution")
_STANCE_FIELDS = ("party_name", "stance", "score", "choice")


@dataclass
class PoliconData:
    """Records loaded by :func:`load_policon`.

    ``topics``: ``{topic: [topic records]}`` (the few-shot example pool); ``tasks``: task records of
    every party count, each with ``topic`` and ``party_num``; ``source``: where they came from.
    """

    topics: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    tasks: list[dict[str, Any]] = field(default_factory=list)
    source: str = ""


def _fail(where: str, msg: str) -> None:
    raise ValueError(f"{where}: {msg}")


def check_topic_record(rec: Any, where: str = "record") -> dict[str, Any]:
    """Check a topic record's fields and stances; raise ``ValueError`` naming ``where`` and the field."""
    if not isinstance(rec, Mapping):
        _fail(where, f"must be a dict, got {type(rec).__name__}")
    for f in _TOPIC_FIELDS:
        if f not in rec:
            _fail(where, f"missing field {f!r}")
    for f in ("title", "background", "resolution"):
        if not isinstance(rec[f], str):
            _fail(where, f"field {f!r} must be a string")
    if not isinstance(rec["stances"], list):
        _fail(where, "field 'stances' must be a list")
    names = []
    for j, st in enumerate(rec["stances"]):
        if not isinstance(st, Mapping) or any(f not in st for f in _STANCE_FIELDS):
            _fail(where, f"stances[{j}] must be a dict with {_STANCE_FIELDS}")
        c = st["choice"]
        if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c <= 9:
            _fail(where, f"stances[{j}].choice must be an integer in 0..9, got {c!r}")
        names.append(st["party_name"])
    if len(set(names)) != len(names):
        _fail(where, f"duplicate party names in stances: {names}")
    return dict(rec)


def check_task(rec: Any, where: str = "task") -> dict[str, Any]:
    """Check a task record: a topic record plus ``seat_weights`` (positive, one per stance, summing to
    1 within 1e-9) and ``veto_party_name`` (one of the task's parties)."""
    check_topic_record(rec, where)
    if not rec["stances"]:
        _fail(where, "a task needs at least one stance")
    w = rec.get("seat_weights")
    if not isinstance(w, list | tuple) or len(w) != len(rec["stances"]):
        _fail(where, f"seat_weights must be a list with one weight per stance ({len(rec['stances'])})")
    if any(isinstance(x, bool) or not isinstance(x, int | float) or not x > 0 for x in w):
        _fail(where, f"seat_weights must be positive numbers, got {list(w)}")
    if abs(math.fsum(w) - 1.0) > 1e-9:
        _fail(where, f"seat_weights must sum to 1, got {math.fsum(w)!r}")
    parties = [st["party_name"] for st in rec["stances"]]
    if rec.get("veto_party_name") not in parties:
        _fail(where, f"veto_party_name {rec.get('veto_party_name')!r} is not one of the parties {parties}")
    return dict(rec)


def check_pairs(pairs: Any) -> list[tuple[dict[str, Any], str]]:
    """A judge's input checked: a sequence of ``(task, resolution)`` pairs, each task as
    :func:`check_task` and each resolution a string."""
    if isinstance(pairs, str | bytes | Mapping) or not hasattr(pairs, "__len__"):
        raise ValueError(f"pairs must be a sequence of (task, resolution) pairs, got {type(pairs).__name__}")
    out = []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ValueError(f"pairs[{i}] must be a (task, resolution) pair, got {type(pair).__name__}")
        task, text = pair
        if not isinstance(text, str):
            raise ValueError(f"pairs[{i}][1] (the resolution) must be a string, got {type(text).__name__}")
        out.append((check_task(task, f"pairs[{i}][0]"), text))
    return out


def _read(path: Path) -> list[Any]:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of records")
    return data


def _data_root(root: Path) -> Path:
    """The folder holding ``task_datas``/``topic_datas``: ``root`` itself or ``root/datas`` (EuroCon
    and PoliCon repository layouts)."""
    for cand in (root, root / "datas", root / "data"):
        if (cand / "task_datas").is_dir() or (cand / "topic_datas").is_dir():
            return cand
    raise ValueError(f"root {str(root)!r} has no task_datas/ or topic_datas/ folder (nor under datas/)")


def load_policon(root: str | Path, *, topics: tuple[str, ...] | None = None) -> PoliconData:
    """Load the authors' topic and task records from ``root``.

    Parameters
    ----------
    root: a folder with ``topic_datas/<topic>.json`` and ``task_datas/{2,4,6}/<topic>.json`` (or the
        repository root holding them under ``datas/``).
    topics: keep only these topics (each must be one of :data:`TOPICS` or present in the folder).

    Returns
    -------
    PoliconData. Task records gain ``topic`` (from the file name) and ``party_num`` (from the folder)
    when missing. Every record is checked; a bad one raises ``ValueError`` naming file and index.
    """
    base = _data_root(Path(root))
    out = PoliconData(source=str(base))
    for path in sorted((base / "topic_datas").glob("*.json")):
        if topics is None or path.stem in topics:
            recs = _read(path)
            out.topics[path.stem] = [check_topic_record(r, f"{path}[{i}]") for i, r in enumerate(recs)]
    for k in PARTY_NUMS:
        for path in sorted((base / "task_datas" / str(k)).glob("*.json")):
            if topics is not None and path.stem not in topics:
                continue
            for i, r in enumerate(_read(path)):
                rec = check_task(r, f"{path}[{i}]")
                rec.setdefault("topic", path.stem)
                rec["party_num"] = k
                if len(rec["stances"]) != k:
                    _fail(f"{path}[{i}]", f"has {len(rec['stances'])} stances in the {k}-party folder")
                out.tasks.append(rec)
    if topics is not None:
        found = set(out.topics) | {t["topic"] for t in out.tasks}
        unknown = sorted(set(topics) - found)
        if unknown:
            raise ValueError(f"topics {unknown} not found under {base}; found {sorted(found)}")
    if not out.tasks and not out.topics:
        raise ValueError(f"root {str(base)!r} holds no records")
    return out
