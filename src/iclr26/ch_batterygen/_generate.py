"""Vehicles, fault injection and the fleet generator (parallel over vehicles)."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ._cells import ChemistryParameters, chemistry_parameters
from ._pack import PackParameters, PackState, Trace, concat_traces, park, run_cccv, run_current
from ._profiles import drive_current
from ._schema import (
    CATEGORIES,
    CELL_VOLTAGE_DECIMALS,
    CHARGE_STATUS_CHARGING,
    CHARGE_STATUS_DRIVING_OR_STANDING,
    CHEMISTRIES,
    PRECISION,
    SEVERITIES,
    cell_columns,
    columns,
)

#: Fault value per severity level (1 = mild .. 3 = severe) and its unit. Self-discharge is a leakage
#: current expressed as the share of the cell's capacity it drains per day.
FAULT_LEVELS: dict[str, tuple[str, dict[int, float]]] = {
    "self_discharge": ("% capacity per day", {1: 1.0, 2: 2.5, 3: 5.0}),
    "high_resistance": ("x R0,R1", {1: 1.5, 2: 2.0, 3: 3.0}),
    "low_capacity": ("x capacity", {1: 0.90, 2: 0.80, 3: 0.70}),
}

#: Default pack designs (cells in series, cell capacity in Ah). LFP: 124 cells / 200 Ah and 28 cells /
#: 150 Ah, and NCM: 96 cells, as in the release's README; the NCM capacity (180 Ah) is the one the README
#: gives for its low-capacity NCM packs.
PACK_DESIGNS = {"LFP": ((124, 200.0), (28, 150.0)), "NCM": ((96, 180.0),)}

_RECORD_DT = 10.0
_DRIVE_DT = 5.0


@dataclass(frozen=True)
class VehicleSpec:
    """One vehicle to generate.

    ``category`` in :data:`CATEGORIES`; ``severity`` 0 for normal, 1..3 for faults; ``n_cycles``
    discharge (driving) and charge segments each; ``seed`` makes the vehicle reproducible on its own.
    """

    vin: str
    chemistry: str
    category: str = "normal"
    severity: int = 0
    n_cells: int = 96
    capacity_ah: float = 180.0
    n_cycles: int = 3
    seed: int = 0

    def __post_init__(self) -> None:
        if self.chemistry not in CHEMISTRIES:
            raise ValueError(f"chemistry must be one of {CHEMISTRIES}, got {self.chemistry!r}")
        if self.category not in CATEGORIES:
            raise ValueError(f"category must be one of {CATEGORIES}, got {self.category!r}")
        if self.category == "normal" and self.severity != 0:
            raise ValueError("a normal vehicle has severity 0")
        if self.category != "normal" and self.severity not in SEVERITIES:
            raise ValueError(f"a faulty vehicle needs severity in {SEVERITIES}, got {self.severity!r}")
        if not 2 <= int(self.n_cells) <= 400:
            raise ValueError(f"n_cells must be in [2, 400], got {self.n_cells!r}")
        if not self.capacity_ah > 0:
            raise ValueError(f"capacity_ah must be positive, got {self.capacity_ah!r}")
        if int(self.n_cycles) < 1:
            raise ValueError(f"n_cycles must be >= 1, got {self.n_cycles!r}")


@dataclass
class Segment:
    """One recorded charge or discharge segment in the release schema (``frame``)."""

    scenario: str
    index: int
    frame: pd.DataFrame
    trace: Trace | None = None


@dataclass
class VehicleData:
    """A generated vehicle: its label row and its segments."""

    spec: VehicleSpec
    label: dict
    segments: list[Segment] = field(default_factory=list)


def fault_label(spec: VehicleSpec, fault_cell: int | None, fault_value: float | None) -> dict:
    unit = FAULT_LEVELS[spec.category][0] if spec.category != "normal" else ""
    return {
        "vin": spec.vin,
        "chemistry": spec.chemistry,
        "category": spec.category,
        "severity": int(spec.severity),
        "fault_cell_id": int(fault_cell + 1) if fault_cell is not None else 0,
        "fault_value": float(fault_value) if fault_value is not None else float("nan"),
        "fault_unit": unit,
        "n_cells": int(spec.n_cells),
        "capacity_ah": float(spec.capacity_ah),
        "n_cycles": int(spec.n_cycles),
        "seed": int(spec.seed),
    }


def build_pack(
    spec: VehicleSpec, chem: ChemistryParameters, rng: np.random.Generator
) -> tuple[PackParameters, int | None, float | None]:
    """Cell-to-cell manufacturing variation plus the injected fault (one faulty cell per pack)."""
    n, q = int(spec.n_cells), float(spec.capacity_ah)
    cap = q * rng.normal(1.0, 0.01, n)
    r_var = rng.normal(1.0, 0.03, n)
    r0 = chem.r0_ref(q) * r_var
    r1 = chem.r1_ref(q) * r_var * rng.normal(1.0, 0.02, n)
    leak = cap * rng.uniform(0.0, 0.05, n) / 100.0 / 24.0  # <= 0.05 %/day: healthy cells
    k_cj = 0.012 * q * rng.normal(1.0, 0.08, n)
    k_cj[[0, -1]] *= 1.15  # pack ends are cooled better
    fault_cell = fault_value = None
    if spec.category != "normal":
        fault_cell = int(rng.integers(n))
        base = FAULT_LEVELS[spec.category][1][spec.severity]
        fault_value = float(base * rng.uniform(0.97, 1.03)) if spec.category != "low_capacity" else base
        if spec.category == "self_discharge":
            leak[fault_cell] = cap[fault_cell] * fault_value / 100.0 / 24.0
        elif spec.category == "high_resistance":
            r0[fault_cell] *= fault_value
            r1[fault_cell] *= fault_value
        else:
            fault_value = float(base + rng.uniform(-0.01, 0.01))
            cap[fault_cell] = q * fault_value
    params = PackParameters(
        chemistry=chem,
        capacity_ah=cap,
        r0_ohm=r0,
        r1_ohm=r1,
        leak_a=leak,
        cth_cell=np.full(n, chem.heat_capacity_j_k_ah * q),
        cth_jig=np.full(n, 10.0 * q),
        k_cell_jig=k_cj,
        k_jig_air=np.full(n, 0.02 * q),
        nominal_capacity_ah=q,
    )
    return params, fault_cell, fault_value


class _Bms:
    """The measurement side: sensors (noise, gain error, precision) and the BMS SOC estimate."""

    def __init__(self, rng: np.random.Generator, n_cells: int, nominal_ah: float):
        self.rng = rng
        self.gain = 1.0 + rng.normal(0.0, 0.004)
        self.nominal = nominal_ah
        step = max(2, n_cells // 8)
        self.probes = np.unique(np.r_[np.arange(int(rng.integers(step)), n_cells, step), n_cells - 1])
        self.soc = 50.0

    def recalibrate(self, true_soc: np.ndarray) -> None:
        # After a long rest a BMS corrects its SOC from the OCV (here: the mean true SOC, with error).
        self.soc = float(np.clip(100.0 * true_soc.mean() + self.rng.normal(0.0, 1.0), 0.0, 100.0))

    def frame(self, tr: Trace, status: int) -> pd.DataFrame:
        rng = self.rng
        t = tr.time_s
        n_rows = t.shape[0]
        i_meas = tr.current_a * self.gain + rng.normal(0.0, 0.3, n_rows)
        dt = np.diff(t, prepend=t[0])
        soc = self.soc - 100.0 * np.cumsum(np.r_[0.0, i_meas[:-1]] * dt) / (3600.0 * self.nominal)
        soc = np.clip(soc, 0.0, 100.0)
        self.soc = float(soc[-1])
        v_meas = np.round(tr.cell_v + rng.normal(0.0, 0.001, tr.cell_v.shape), CELL_VOLTAGE_DECIMALS)
        temps = tr.cell_t[:, self.probes]
        n_cells = tr.cell_v.shape[1]
        data = {
            "TIME": np.round(t).astype(np.int64),
            "CHARGE_STATUS": np.full(n_rows, status, dtype=np.int64),
            "SUM_VOLTAGE": np.round(tr.pack_v + rng.normal(0.0, 0.05, n_rows), PRECISION["SUM_VOLTAGE"]),
            "SUM_CURRENT": np.round(i_meas, PRECISION["SUM_CURRENT"]),
            "SOC": np.round(soc).astype(np.int64),
            "MAX_CELL_VOLT": v_meas.max(axis=1),
            "MIN_CELL_VOLT": v_meas.min(axis=1),
            "MAX_TEMP": np.round(temps.max(axis=1)).astype(np.int64),
            "MIN_TEMP": np.round(temps.min(axis=1)).astype(np.int64),
        }
        frame = pd.DataFrame(data)
        cells = pd.DataFrame(v_meas, columns=cell_columns(n_cells))
        return pd.concat([frame, cells], axis=1)[columns(n_cells)]


def _drive_session(params, state, rng, chem, t_amb, target_drop, record_every) -> Trace:
    start = state.soc.mean()
    stop_v = chem.v_min + 0.15 * (chem.v_max - chem.v_min)
    parts = []
    aggressiveness = rng.uniform(0.85, 1.1)
    while True:
        dur = rng.uniform(8.0, 40.0) * 60.0
        cur = drive_current(rng, dur, _DRIVE_DT, params.nominal_capacity_ah, aggressiveness)
        tr = run_current(
            params, state, cur, _DRIVE_DT, t_amb, record_every, stop_cell_v=stop_v, stop_soc=0.08,
            v_max=chem.v_max,
        )  # fmt: skip
        parts.append(tr)
        low = state.soc.min() < 0.1 or len(tr) < int(np.ceil(cur.shape[0] / record_every))
        if low or start - state.soc.mean() >= target_drop:
            break
        stop = np.zeros(int(rng.uniform(1.0, 15.0) * 60.0 / _RECORD_DT))  # a stop: standing, recorded
        parts.append(run_current(params, state, stop, _RECORD_DT, t_amb))
    rest = np.zeros(int(rng.uniform(10.0, 30.0) * 60.0 / _RECORD_DT))  # standing after the last trip
    parts.append(run_current(params, state, rest, _RECORD_DT, t_amb))
    return concat_traces(parts)


def _charge_session(params, state, rng, chem, t_amb) -> Trace:
    q = params.nominal_capacity_ah
    fast = rng.random() < 0.5
    c_rate = rng.uniform(0.5, 1.0) if fast else rng.uniform(0.1, 0.25)
    if t_amb < 5.0:
        c_rate = min(c_rate, 0.3)  # cold-battery derating
    stop = None if rng.random() < 0.7 else rng.uniform(0.8, 0.95)  # 30 %: unplugged before full
    if stop is not None and stop < state.soc.mean() + 0.1:
        stop = None
    return run_cccv(
        params,
        state,
        i_cc=c_rate * q,
        v_cv=chem.v_max,
        i_cut=0.05 * q,
        dt=_RECORD_DT,
        t_amb=t_amb,
        max_time_s=14 * 3600.0,
        stop_mean_soc=stop,
    )


def simulate_vehicle(
    spec: VehicleSpec, chem: ChemistryParameters | None = None, keep_traces: bool = False
) -> VehicleData:
    """Simulate one vehicle: alternating driving (discharge) and charging segments, parked in between.

    Returns the label row (the fields of ``faults_details.csv``) and the segments as release-schema
    frames; with ``keep_traces`` also the noise-free simulator traces (true cell voltages, SOCs, ...).
    """
    chem = chem or chemistry_parameters(spec.chemistry)
    rng = np.random.default_rng([int(spec.seed), 7919])
    params, fault_cell, fault_value = build_pack(spec, chem, rng)
    n = params.n_cells
    t_amb0 = rng.uniform(-5.0, 35.0)
    soc0 = rng.uniform(0.75, 0.95)
    state = PackState(
        soc=soc0 + rng.normal(0.0, 0.004, n),
        v1=np.zeros(n),
        t_cell=np.full(n, t_amb0),
        t_jig=np.full(n, t_amb0),
    )
    if spec.category == "self_discharge":
        # The leak has been at work since the last balancing: a few days' worth of charge is missing.
        days = rng.uniform(1.0, 3.0)
        state.soc[fault_cell] -= (
            params.leak_a[fault_cell] * days * 86400.0 / (3600.0 * params.capacity_ah[fault_cell])
        )
    bms = _Bms(rng, n, params.nominal_capacity_ah)
    out = VehicleData(spec, fault_label(spec, fault_cell, fault_value))
    record_every = int(round(_RECORD_DT / _DRIVE_DT))
    for cycle in range(1, int(spec.n_cycles) + 1):
        for scenario in ("discharge", "charge"):
            t_amb = t_amb0 + rng.normal(0.0, 2.0)
            park(params, state, rng.uniform(1.0, 14.0) * 3600.0, t_amb)
            bms.recalibrate(state.soc)
            if scenario == "charge":
                tr = _charge_session(params, state, rng, chem, t_amb)
                status = CHARGE_STATUS_CHARGING
            else:
                room = max(state.soc.min() - 0.12, 0.05)
                drop = min(rng.uniform(0.25, 0.55), room)
                tr = _drive_session(params, state, rng, chem, t_amb, drop, record_every)
                status = CHARGE_STATUS_DRIVING_OR_STANDING
            frame = bms.frame(tr, status)
            out.segments.append(Segment(scenario, cycle, frame, tr if keep_traces else None))
    return out


def make_fleet(
    n_vehicles: int,
    seed: int = 0,
    chemistries: tuple[str, ...] = CHEMISTRIES,
    n_cycles: int = 3,
    pack_designs: dict | None = None,
    normal_share: float = 0.25,
) -> list[VehicleSpec]:
    """Specs of a fleet of ``n_vehicles``: split evenly over ``chemistries``; per chemistry a
    ``normal_share`` of normal vehicles, the rest spread evenly over the 3 faults x 3 severities.

    ``pack_designs`` maps chemistry to a tuple of ``(n_cells, capacity_ah)`` designs, used in turn
    (default :data:`PACK_DESIGNS`).
    """
    if int(n_vehicles) < 1:
        raise ValueError(f"n_vehicles must be >= 1, got {n_vehicles!r}")
    if not 0.0 <= normal_share <= 1.0:
        raise ValueError(f"normal_share must be in [0, 1], got {normal_share!r}")
    for c in chemistries:
        if c not in CHEMISTRIES:
            raise ValueError(f"chemistries must be among {CHEMISTRIES}, got {c!r}")
    designs = pack_designs or PACK_DESIGNS
    fault_classes = [(c, s) for c in CATEGORIES[1:] for s in SEVERITIES]
    specs: list[VehicleSpec] = []
    per = np.array_split(np.arange(int(n_vehicles)), len(chemistries))
    for chem, idx in zip(chemistries, per):
        m = idx.shape[0]
        n_normal = int(round(normal_share * m))
        kinds = [("normal", 0)] * n_normal + [fault_classes[j % 9] for j in range(m - n_normal)]
        for j, (k, (cat, sev)) in enumerate(zip(idx, kinds)):
            n_cells, cap = designs[chem][j % len(designs[chem])]
            specs.append(
                VehicleSpec(
                    vin=f"vin_{int(k) + 1:04d}",
                    chemistry=chem,
                    category=cat,
                    severity=sev,
                    n_cells=int(n_cells),
                    capacity_ah=float(cap),
                    n_cycles=int(n_cycles),
                    seed=int(np.random.SeedSequence([int(seed), int(k)]).generate_state(1)[0]),
                )
            )
    return specs


def _work(spec: VehicleSpec, chem: ChemistryParameters, root: str | None, fmt: str):
    from ._io import write_vehicle

    data = simulate_vehicle(spec, chem)
    if root is None:
        return data
    write_vehicle(root, data, fmt=fmt)
    rows = sum(len(s.frame) for s in data.segments)
    return {"label": data.label, "rows": rows, "segments": len(data.segments)}


_SPEC_FIELDS = ("category", "severity", "n_cells", "capacity_ah", "n_cycles", "seed")


def _done_vehicles(root: Path, specs: list[VehicleSpec], fmt: str) -> dict[tuple[str, str], dict]:
    """Label rows of ``specs`` already generated under ``root`` (a previous, possibly interrupted, run).

    A vehicle counts as done when its label row is in ``faults_details.csv`` (written only after all its
    segment files) and its segment files exist. A row that disagrees with its spec means ``root`` holds
    another fleet: ``ValueError``.
    """
    from ._io import load_labels
    from ._schema import LABEL_FILE, segment_filename

    if not (root / LABEL_FILE).is_file():
        return {}
    table = load_labels(root / LABEL_FILE)
    missing = [c for c in ("chemistry", *_SPEC_FIELDS) if c not in table.columns]
    if missing:
        raise ValueError(
            f"{str(root / LABEL_FILE)!r} was not written by this generator (no columns {missing}); "
            "generate into an empty folder"
        )
    rows = {(r["chemistry"], r["vin"]): r for r in table.to_dict("records")}
    done = {}
    for s in specs:
        r = rows.get((s.chemistry, s.vin))
        if r is None:
            continue
        same = all(
            (float(r[f]) == float(getattr(s, f))) if f != "category" else r[f] == s.category
            for f in _SPEC_FIELDS
        )
        if not same:
            raise ValueError(
                f"{str(root)!r} already holds vehicle {s.chemistry}/{s.vin} generated from another spec "
                f"(seed, fault or pack differ); generate into an empty folder or with the same settings"
            )
        folder = root / s.chemistry / s.category / s.vin
        files = [folder / segment_filename(s.vin, sc, k, fmt) for k in range(1, s.n_cycles + 1)
                 for sc in ("discharge", "charge")]  # fmt: skip
        if all(f.is_file() for f in files):
            r = dict(r)
            for k in ("severity", "fault_cell_id", "n_cells", "n_cycles", "seed"):
                r[k] = int(r[k])
            done[(s.chemistry, s.vin)] = r
    return done


def generate_fleet(
    specs: list[VehicleSpec],
    root: str | os.PathLike | None = None,
    fmt: str = "parquet",
    n_jobs: int | None = None,
    progress: bool = True,
    desc: str = "vehicles",
):
    """Generate ``specs`` in parallel over vehicles (a process pool, ``n_jobs`` workers, default all cores).

    With ``root`` the files are written in the release layout (see :func:`write_vehicle`) and the label
    table ``faults_details.csv`` is rewritten (atomically) as each vehicle finishes, so an interrupted
    generation resumes: vehicles already in the table (with their files) are not generated again, and
    a table from a different fleet is refused. Returns one dict per spec (``label``, ``rows``,
    ``segments``; ``rows`` is ``None`` for a vehicle found done). Without ``root`` the
    :class:`VehicleData` objects are returned (in ``specs`` order either way).
    """
    from tqdm.auto import tqdm

    from ._io import write_labels

    if fmt not in ("csv", "parquet"):
        raise ValueError(f"fmt must be 'csv' or 'parquet', got {fmt!r}")
    specs = list(specs)
    keys = [(s.chemistry, s.vin) for s in specs]
    if len(set(keys)) != len(keys):
        raise ValueError("specs must not repeat a (chemistry, vin)")
    chems = {c: chemistry_parameters(c) for c in sorted({s.chemistry for s in specs})}
    n_jobs = int(n_jobs or os.cpu_count() or 1)
    root_s = None if root is None else str(Path(root))
    results: list = [None] * len(specs)
    done: dict = {}
    if root is not None:
        Path(root).mkdir(parents=True, exist_ok=True)
        done = _done_vehicles(Path(root), specs, fmt)
    labels = dict(done)
    todo = []
    for i, s in enumerate(specs):
        if (s.chemistry, s.vin) in done:
            results[i] = {"label": done[(s.chemistry, s.vin)], "rows": None, "segments": 2 * s.n_cycles}
        else:
            todo.append(i)
    disable = not progress or os.environ.get("ICLR26_NO_PROGRESS") == "1"
    bar = tqdm(total=len(specs), initial=len(specs) - len(todo), desc=desc, disable=disable, leave=False)

    def finished(i: int, out) -> None:
        results[i] = out
        if root is not None:
            labels[keys[i]] = out["label"]
            write_labels(root, list(labels.values()))
        bar.update()

    if n_jobs == 1 or len(todo) <= 1:
        for i in todo:
            finished(i, _work(specs[i], chems[specs[i].chemistry], root_s, fmt))
    else:
        with ProcessPoolExecutor(max_workers=n_jobs) as pool:
            futs = {pool.submit(_work, specs[i], chems[specs[i].chemistry], root_s, fmt): i for i in todo}
            for fut in as_completed(futs):
                finished(futs[fut], fut.result())
    bar.close()
    if root is not None and not todo:
        write_labels(root, list(labels.values()))
    return results
