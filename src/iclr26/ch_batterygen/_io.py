"""Writing and reading the release layout: ``ROOT/<chem>/<category>/<vin>/<vin>_<scenario>_<k>.<ext>``."""

from __future__ import annotations

import io
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..store import atomic_write_bytes
from ..validation import check_in
from ._schema import (
    BASE_COLUMNS,
    CATEGORIES,
    CHEMISTRIES,
    LABEL_COLUMNS,
    LABEL_FILE,
    SCENARIOS,
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


class LayoutWarning(UserWarning):
    """Something under a dataset root was skipped or could not be matched (the message says what)."""


def _check_columns(names, name: str) -> None:
    missing = [c for c in BASE_COLUMNS if c not in names]
    if missing:
        raise ValueError(f"{name}: missing columns {missing}")
    if not volt_columns_of(names):
        raise ValueError(f"{name}: no VOLT_n cell-voltage columns")


def validate_segment(frame: pd.DataFrame, name: str = "segment") -> pd.DataFrame:
    """Check a segment frame against the release schema; return it with numeric columns.

    Requires the nine base columns and at least one ``VOLT_n`` column. Empty cells are kept as NaN (gaps,
    handled by the gap policy of :func:`clean_segment`); any other non-numeric cell (``"ERR"``, ``"n/a"``)
    raises ``ValueError`` naming the column, the row and the value.
    """
    _check_columns(frame.columns, name)
    out = frame.copy()
    for c in out.columns:
        if pd.api.types.is_numeric_dtype(out[c]) and not pd.api.types.is_bool_dtype(out[c]):
            continue
        col = out[c]
        text = col.astype("string").str.strip()
        conv = pd.to_numeric(text.mask(text == ""), errors="coerce")
        bad = conv.isna() & text.notna() & (text != "")
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise ValueError(
                f"{name}: column {c!r} has a non-numeric value {str(col.iloc[i])!r} in data row {i + 1} "
                f"({int(bad.sum())} such cells); empty cells are gaps, other text is not accepted"
            )
        out[c] = conv.astype(np.float64)
    return out


def _read_csv(path: Path, nrows: int | None = None) -> pd.DataFrame:
    try:
        return pd.read_csv(path, encoding="utf-8-sig", nrows=nrows, low_memory=False)
    except UnicodeDecodeError:
        raise ValueError(f"{str(path)!r} is not a UTF-8 text CSV file (binary or another encoding)") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ValueError(f"{str(path)!r} is not a readable CSV file: {exc}") from None


def read_columns(path: str | os.PathLike) -> list[str]:
    """The column names of a segment file (CSV header or Parquet schema), without reading the data."""
    path = Path(path)
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return list(pq.read_schema(path).names)
        except (pa.ArrowInvalid, OSError) as exc:
            raise ValueError(f"{str(path)!r} is not a readable Parquet file: {exc}") from None
    return [str(c) for c in _read_csv(path, nrows=0).columns]


def read_segment(path: str | os.PathLike, columns: list[str] | None = None) -> pd.DataFrame:
    """Read one segment file (CSV as released, or Parquet), validated against the schema.

    ``columns`` restricts what is read (the base columns are always included). A file that is not
    readable as CSV/Parquet (binary, wrong encoding) raises ``ValueError`` naming it.
    """
    path = Path(path)
    want = None
    if columns is not None:
        want = list(dict.fromkeys([*BASE_COLUMNS, *columns]))
    if path.suffix == ".parquet":
        names = read_columns(path)
        if want is not None:
            extra = volt_columns_of(names)[:1]  # keep one cell column so validation can see the schema
            frame = pd.read_parquet(path, columns=[c for c in dict.fromkeys([*want, *extra]) if c in names])
        else:
            frame = pd.read_parquet(path)
    else:
        frame = _read_csv(path)
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


_QUIET_ROOT_FILES = ("readme", "license", "licence", "citation")


def _is_label_file(p: Path) -> bool:
    return p.name == LABEL_FILE or p.suffix == ".xlsx" or (p.suffix == ".csv" and "fault" in p.name.lower())


def _discover(root: Path) -> tuple[list[SegmentRef], list[tuple[str, str]]]:
    """Segment files in the release layout, and ``(relative path, why)`` for everything skipped."""
    refs: list[SegmentRef] = []
    skipped: list[tuple[str, str]] = []

    def rel(p: Path) -> str:
        return p.relative_to(root).as_posix()

    def visible(folder: Path) -> list[Path]:
        return sorted(p for p in folder.iterdir() if not p.name.startswith("."))

    for entry in visible(root):
        if entry.is_dir() and entry.name in CHEMISTRIES:
            continue
        if entry.is_dir():
            skipped.append((rel(entry), f"folder is not a chemistry {CHEMISTRIES}"))
        elif not (_is_label_file(entry) or entry.name.lower().startswith(_QUIET_ROOT_FILES)):
            skipped.append((rel(entry), "file at the root is neither a label table nor a segment"))
    for chem in CHEMISTRIES:
        cfolder = root / chem
        if not cfolder.is_dir():
            continue
        for entry in visible(cfolder):
            if entry.is_dir() and entry.name in CATEGORIES:
                continue
            why = (
                f"folder is not a category {CATEGORIES}"
                if entry.is_dir()
                else "file outside a vehicle folder"
            )
            skipped.append((rel(entry), why))
        for cat in CATEGORIES:
            folder = cfolder / cat
            if not folder.is_dir():
                continue
            for vdir in visible(folder):
                if not vdir.is_dir():
                    skipped.append((rel(vdir), "file outside a vehicle folder"))
                    continue
                found = 0
                for f in visible(vdir):
                    parsed = parse_segment_filename(f.name) if f.is_file() else None
                    if parsed is None:
                        skipped.append(
                            (rel(f), "not a segment file <vin>_<charge|discharge>_<k>.<csv|parquet>")
                        )
                        continue
                    vin, scenario, k = parsed
                    if vin != vdir.name:
                        skipped.append((rel(f), f"file names vehicle {vin!r}, its folder {vdir.name!r}"))
                        continue
                    refs.append(SegmentRef(f, chem, cat, vdir.name, scenario, k))
                    found += 1
                if not found:
                    skipped.append((rel(vdir), "vehicle folder without segment files"))
    return refs, skipped


def _warn_skipped(root: Path, skipped: list[tuple[str, str]]) -> None:
    if not skipped:
        return
    shown = "; ".join(f"{p} ({why})" for p, why in skipped[:8])
    more = f"; and {len(skipped) - 8} more" if len(skipped) > 8 else ""
    warnings.warn(
        f"{str(root)!r}: skipped {len(skipped)} entr{'y' if len(skipped) == 1 else 'ies'} not in the "
        f"release layout ROOT/<LFP|NCM>/<category>/<vin>/<vin>_<charge|discharge>_<k>.csv: {shown}{more}",
        LayoutWarning,
        stacklevel=3,
    )


def discover(root: str | os.PathLike) -> list[SegmentRef]:
    """All segment files under ``root`` in the release layout, sorted.

    Everything else (a folder that is not a chemistry or a category, a file name that is not
    ``<vin>_<charge|discharge>_<k>.<csv|parquet>``, a file naming another vehicle than its folder, an
    empty vehicle folder) is skipped with one :class:`LayoutWarning` that lists it. Hidden entries, the
    label tables and README/LICENSE files at the root are not reported.
    """
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"root must be an existing folder, got {str(root)!r}")
    refs, skipped = _discover(root)
    _warn_skipped(root, skipped)
    return refs


_LABEL_ALIASES = {
    "vin": ("vin", "vehicle", "vehicle_id", "car"),
    "severity": ("severity", "level", "fault_level", "grade"),
    "fault_cell_id": ("fault_cell_id", "fault cell id", "cell_id", "fault_cell"),
    "fault_value": ("fault_value", "fault value", "value"),
    "category": ("category", "fault_type", "fault type", "fault"),
    "chemistry": ("chemistry", "battery", "battery type", "chemistry type"),
}


def load_labels(root_or_file: str | os.PathLike) -> pd.DataFrame:
    """The per-vehicle fault table: ``faults_details.csv`` (ours) or the release's ``.xlsx``.

    Column names are matched case-insensitively to :data:`LABEL_COLUMNS` (``severity``,
    ``fault cell id``, ``fault value``...). Reading ``.xlsx`` needs ``openpyxl``. ``severity`` must be
    numeric (empty = unknown); ``chemistry`` values must be ``LFP`` or ``NCM``.
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
        except (ValueError, OSError) as exc:
            raise ValueError(f"{str(p)!r} is not a readable .xlsx file: {exc}") from None
    else:
        df = _read_csv(p)
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
    df["vin"] = df["vin"].astype(str).str.strip()
    if "severity" in df.columns:
        sev = pd.to_numeric(df["severity"], errors="coerce")
        bad = sev.isna() & df["severity"].notna()
        if bad.any():
            raise ValueError(
                f"{str(p)!r}: column 'severity' must be numeric, got {df['severity'][bad].iloc[0]!r}"
            )
        df["severity"] = sev
    if "chemistry" in df.columns:
        df["chemistry"] = df["chemistry"].astype(str).str.strip().str.upper()
        unknown = sorted(set(df["chemistry"]) - set(CHEMISTRIES))
        if unknown:
            raise ValueError(
                f"{str(p)!r}: unknown chemistry {unknown} in the label table (expected {CHEMISTRIES})"
            )
    df.attrs["path"] = str(p)
    return df


def _merge_labels(veh: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """Join the label table to the vehicles found, on (chemistry, vin); warn about every mismatch."""
    path = labels.attrs.get("path", "label table")
    labels = labels.copy()
    if "chemistry" not in labels.columns:
        named = [c for c in CHEMISTRIES if c.lower() in Path(path).name.lower()]
        if len(named) == 1:
            labels["chemistry"] = named[0]
            warnings.warn(
                f"{path!r} has no chemistry column; its name says {named[0]}, so its rows are matched to "
                f"{named[0]} vehicles only",
                LayoutWarning,
                stacklevel=3,
            )
        else:
            both = veh.groupby("vin")["chemistry"].nunique()
            clash = sorted(set(both[both > 1].index) & set(labels["vin"]))
            if clash:
                raise ValueError(
                    f"{path!r} has no chemistry column and vehicle ids {clash[:5]} occur under both LFP and "
                    "NCM: add a chemistry column (or name the file after its chemistry) so the rows can be "
                    "matched"
                )
            labels = labels.merge(veh[["vin", "chemistry"]].drop_duplicates(), on="vin", how="left")
            labels["chemistry"] = labels["chemistry"].fillna("?")
            warnings.warn(
                f"{path!r} has no chemistry column; rows were matched on vin alone (no vin occurs under "
                "both chemistries)",
                LayoutWarning,
                stacklevel=3,
            )
    dup = labels.duplicated(["chemistry", "vin"], keep=False)
    if dup.any():
        first = labels.loc[dup, ["chemistry", "vin"]].iloc[0].tolist()
        raise ValueError(f"{path!r}: {int(dup.sum())} rows repeat a (chemistry, vin), e.g. {first}")
    keep = [
        c for c in ("chemistry", "vin", "severity", "fault_cell_id", "fault_value", "category") if c in labels
    ]
    lab = labels[keep].rename(columns={"category": "label_category"})
    out = veh.merge(lab, on=["chemistry", "vin"], how="left", indicator=True)
    matched = set(map(tuple, out.loc[out["_merge"] == "both", ["chemistry", "vin"]].to_numpy()))
    unmatched = [tuple(r) for r in lab[["chemistry", "vin"]].to_numpy() if tuple(r) not in matched]
    if unmatched:
        warnings.warn(
            f"{path!r}: {len(unmatched)} label rows match no vehicle folder, e.g. {unmatched[:3]}",
            LayoutWarning,
            stacklevel=3,
        )
    if "label_category" in out:
        lc = out["label_category"]
        wrong = lc.notna() & (lc.astype(str) != out["category"])
        if wrong.any():
            r = out[wrong].iloc[0]
            warnings.warn(
                f"{path!r}: {int(wrong.sum())} vehicles have a category in the label table that differs from "
                f"their folder (e.g. {r.chemistry}/{r.vin}: table {r.label_category!r}, folder "
                f"{r.category!r}); the folder is used",
                LayoutWarning,
                stacklevel=3,
            )
        out = out.drop(columns="label_category")
    return out.drop(columns="_merge")


@dataclass
class BatteryDataset:
    """A dataset in the release layout, opened for reading.

    ``segments``: every segment file found; ``vehicles``: one row per (chemistry, vin) with its category
    (from the folder), and severity/fault fields where the label table has them (severity 0 for normal,
    -1 when unknown); ``skipped``: ``(relative path, why)`` of everything under the root that was not
    read (also reported by a :class:`LayoutWarning`).
    """

    root: Path
    segments: list[SegmentRef]
    vehicles: pd.DataFrame
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def read(self, ref: SegmentRef, columns: list[str] | None = None) -> pd.DataFrame:
        return read_segment(ref.path, columns=columns)

    def select(self, chemistry: str | None = None, scenario: str | None = None) -> list[SegmentRef]:
        """The segments of ``chemistry`` (``"LFP"``/``"NCM"``) and ``scenario``; ``None`` = all."""
        if chemistry is not None:
            check_in(chemistry, CHEMISTRIES, "chemistry")
        if scenario is not None:
            check_in(scenario, SCENARIOS, "scenario")
        return [
            r
            for r in self.segments
            if (chemistry is None or r.chemistry == chemistry)
            and (scenario is None or r.scenario == scenario)
        ]


def load_dataset(root: str | os.PathLike, validate: bool = True) -> BatteryDataset:
    """Open a dataset in the release layout (the real CH-BatteryGen download or one we generated).

    Layout: ``ROOT/<LFP|NCM>/<normal|self_discharge|high_resistance|low_capacity>/<vin>/``
    ``<vin>_<charge|discharge>_<k>.csv`` (or ``.parquet``), with an optional label table at the root
    (``faults_details.csv`` or the release's ``faults details - LFP batteries.xlsx``). Everything else is
    skipped with a :class:`LayoutWarning`. With ``validate`` (default) every segment file's columns are
    checked now (header only), so a missing column or an unreadable file is reported at load, all files at
    once, not when windows are cut. Labels are joined on (chemistry, vin): a table without a chemistry
    column is matched to the chemistry its file name gives, or on vin alone when no vin occurs under both
    chemistries (with a warning), and otherwise refused.
    """
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"root must be an existing folder, got {str(root)!r}")
    refs, skipped = _discover(root)
    _warn_skipped(root, skipped)
    if not refs:
        raise ValueError(
            f"no segment files in the release layout ROOT/<LFP|NCM>/<category>/<vin>/"
            f"<vin>_<charge|discharge>_<k>.csv under {str(root)!r}"
        )
    if validate:
        problems = []
        for r in refs:
            try:
                _check_columns(read_columns(r.path), r.path.relative_to(root).as_posix())
            except ValueError as exc:
                problems.append(str(exc))
        if problems:
            more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
            raise ValueError(
                f"{len(problems)} segment files fail the schema: " + "; ".join(problems[:5]) + more
            )
    veh = (
        pd.DataFrame([{"chemistry": r.chemistry, "category": r.category, "vin": r.vin} for r in refs])
        .drop_duplicates()
        .reset_index(drop=True)
    )
    twice = veh.duplicated(["chemistry", "vin"], keep=False)
    if twice.any():
        raise ValueError(
            "vehicles found under two category folders: "
            f"{veh.loc[twice, ['chemistry', 'vin']].to_numpy()[:4].tolist()}"
        )
    try:
        labels = load_labels(root)
    except ValueError as exc:
        if "no label table" not in str(exc):
            raise
        labels = None
    if labels is not None:
        veh = _merge_labels(veh, labels)
    if "severity" not in veh:
        veh["severity"] = np.nan
    sev = veh["severity"].to_numpy(dtype=float)
    sev = np.where(veh["category"].to_numpy() == "normal", 0.0, sev)
    veh["severity"] = np.where(np.isnan(sev), -1, sev).astype(int)
    return BatteryDataset(root, refs, veh, skipped)
