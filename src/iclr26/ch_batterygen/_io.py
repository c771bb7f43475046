"""Writing and reading the release layout: ``ROOT/<chem>/<category>/<vin>/<vin>_<scenario>_<k>.<ext>``."""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..store import atomic_write_bytes
from ._schema import (
    BASE_COLUMNS,
    CATEGORIES,
    CHEMISTRIES,
    LABEL_COLUMNS,
    LABEL_FILE,
    parse_segment_filename,
    segment_filename,
    volt_columns_of,
)


def _frame_bytes(frame: pd.DataFrame, fmt: str) -> bytes:
    if fmt == "csv":
        return frame.to_csv(index=False).encode("utf-8")
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    return buf.getvalue()


def write_vehicle(root: str | os.PathLike, data, fmt: str = "parquet") -> list[Path]:
    """Write one generated vehicle's segments (atomically, one file per segment) under ``root``."""
    spec = data.spec
    folder = Path(root) / spec.chemistry / spec.category / spec.vin
    paths = []
    for seg in data.segments:
        p = folder / segment_filename(spec.vin, seg.scenario, seg.index, fmt)
        atomic_write_bytes(p, _frame_bytes(seg.frame, fmt))
        paths.append(p)
    return paths


def write_labels(root: str | os.PathLike, labels: list[dict]) -> Path:
    """Write the per-vehicle label table ``ROOT/faults_details.csv`` (columns :data:`LABEL_COLUMNS`)."""
    df = pd.DataFrame(labels, columns=list(LABEL_COLUMNS)).sort_values(["chemistry", "vin"])
    return atomic_write_bytes(Path(root) / LABEL_FILE, df.to_csv(index=False).encode("utf-8"))


def validate_segment(frame: pd.DataFrame, name: str = "segment") -> pd.DataFrame:
    """Check a segment frame against the release schema; return it with numeric columns.

    Requires the nine base columns and at least one ``VOLT_n`` column; raises ``ValueError`` naming
    what is missing or not numeric.
    """
    missing = [c for c in BASE_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{name}: missing columns {missing}")
    if not volt_columns_of(frame.columns):
        raise ValueError(f"{name}: no VOLT_n cell-voltage columns")
    out = frame.copy()
    for c in out.columns:
        if not pd.api.types.is_numeric_dtype(out[c]):
            conv = pd.to_numeric(out[c], errors="coerce")
            if conv.isna().all() and len(out):
                raise ValueError(f"{name}: column {c!r} is not numeric")
            out[c] = conv
    return out


def read_segment(path: str | os.PathLike, columns: list[str] | None = None) -> pd.DataFrame:
    """Read one segment file (CSV as released, or Parquet), validated against the schema.

    ``columns`` restricts what is read (the base columns are always included).
    """
    path = Path(path)
    want = None
    if columns is not None:
        want = list(dict.fromkeys([*BASE_COLUMNS, *columns]))
    if path.suffix == ".parquet":
        if want is not None:
            import pyarrow.parquet as pq

            names = pq.read_schema(path).names
            extra = volt_columns_of(names)[:1]  # keep one cell column so validation can see the schema
            frame = pd.read_parquet(path, columns=[c for c in dict.fromkeys([*want, *extra]) if c in names])
        else:
            frame = pd.read_parquet(path)
    else:
        frame = pd.read_csv(path, encoding="utf-8-sig")
        if want is not None:
            keep = [c for c in frame.columns if c in want] + volt_columns_of(frame.columns)[:1]
            frame = frame[list(dict.fromkeys(keep))]
    return validate_segment(frame, name=str(path))


@dataclass(frozen=True)
class SegmentRef:
    """Where one segment lies and what its path says about it."""

    path: Path
    chemistry: str
    category: str
    vin: str
    scenario: str
    index: int


def discover(root: str | os.PathLike) -> list[SegmentRef]:
    """All segment files under ``root`` in the release layout, sorted.

    Folders that are not a chemistry or a category are ignored; a file name that is not
    ``<vin>_<charge|discharge>_<k>.<csv|parquet>`` is ignored.
    """
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"root must be an existing folder, got {str(root)!r}")
    refs = []
    for chem in CHEMISTRIES:
        for cat in CATEGORIES:
            folder = root / chem / cat
            if not folder.is_dir():
                continue
            for vdir in sorted(p for p in folder.iterdir() if p.is_dir()):
                for f in sorted(vdir.iterdir()):
                    parsed = parse_segment_filename(f.name)
                    if parsed is None:
                        continue
                    _, scenario, k = parsed
                    refs.append(SegmentRef(f, chem, cat, vdir.name, scenario, k))
    return refs


_LABEL_ALIASES = {
    "vin": ("vin", "vehicle", "vehicle_id", "car"),
    "severity": ("severity", "level", "fault_level", "grade"),
    "fault_cell_id": ("fault_cell_id", "fault cell id", "cell_id", "fault_cell"),
    "fault_value": ("fault_value", "fault value", "value"),
    "category": ("category", "fault_type", "fault type", "fault"),
    "chemistry": ("chemistry",),
}


def load_labels(root_or_file: str | os.PathLike) -> pd.DataFrame:
    """The per-vehicle fault table: ``faults_details.csv`` (ours) or the release's ``.xlsx``.

    Column names are matched case-insensitively to :data:`LABEL_COLUMNS` (``severity``,
    ``fault cell id``, ``fault value``...). Reading ``.xlsx`` needs ``openpyxl``.
    """
    p = Path(root_or_file)
    if p.is_dir():
        cand = [p / LABEL_FILE, *sorted(p.glob("*.xlsx")), *sorted(p.glob("*fault*.csv"))]
        cand = [c for c in cand if c.is_file()]
        if not cand:
            raise ValueError(f"no label table ({LABEL_FILE} or *.xlsx) in {str(p)!r}")
        p = cand[0]
    if p.suffix == ".xlsx":
        try:
            df = pd.read_excel(p)
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ValueError("reading the release's .xlsx label table needs openpyxl") from e
    else:
        df = pd.read_csv(p)
    rename = {}
    low = {str(c).strip().lower(): c for c in df.columns}
    for target, aliases in _LABEL_ALIASES.items():
        for a in aliases:
            if a in low:
                rename[low[a]] = target
                break
    df = df.rename(columns=rename)
    if "vin" not in df.columns:
        raise ValueError(f"{str(p)!r}: no vehicle (vin) column in the label table")
    df["vin"] = df["vin"].astype(str)
    return df


@dataclass
class BatteryDataset:
    """A dataset in the release layout, opened for reading.

    ``segments``: every file found; ``vehicles``: one row per (chemistry, vin) with its category (from the
    folder), and severity/fault fields where the label table has them (severity 0 for normal, -1 when
    unknown).
    """

    root: Path
    segments: list[SegmentRef]
    vehicles: pd.DataFrame

    def read(self, ref: SegmentRef, columns: list[str] | None = None) -> pd.DataFrame:
        return read_segment(ref.path, columns=columns)

    def select(self, chemistry: str | None = None, scenario: str | None = None) -> list[SegmentRef]:
        return [
            r
            for r in self.segments
            if (chemistry is None or r.chemistry == chemistry)
            and (scenario is None or r.scenario == scenario)
        ]


def load_dataset(root: str | os.PathLike) -> BatteryDataset:
    """Open a dataset in the release layout (the real CH-BatteryGen download or one we generated)."""
    root = Path(root)
    refs = discover(root)
    if not refs:
        raise ValueError(f"no segment files in the release layout under {str(root)!r}")
    veh = (
        pd.DataFrame([{"chemistry": r.chemistry, "category": r.category, "vin": r.vin} for r in refs])
        .drop_duplicates()
        .reset_index(drop=True)
    )
    try:
        labels = load_labels(root)
    except ValueError:
        labels = None
    if labels is not None:
        keep = [c for c in ("vin", "chemistry", "severity", "fault_cell_id", "fault_value") if c in labels]
        on = ["vin", "chemistry"] if "chemistry" in labels else ["vin"]
        veh = veh.merge(labels[keep].drop_duplicates(on), on=on, how="left")
    if "severity" not in veh:
        veh["severity"] = np.nan
    sev = veh["severity"].to_numpy(dtype=float)
    sev = np.where(veh["category"].to_numpy() == "normal", 0.0, sev)
    veh["severity"] = np.where(np.isnan(sev), -1, sev).astype(int)
    return BatteryDataset(root, refs, veh)
