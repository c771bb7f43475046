"""``iclr26 ch-batterygen``: generate a fleet in the release layout, and benchmark a dataset folder.

``iclr26 ch-batterygen generate --vehicles 200 --out DIR`` writes (or resumes) a fleet;
``iclr26 ch-batterygen benchmark DIR`` runs RF / SVM / LSTM / CNN on any folder in the release layout
(ours or the real CH-BatteryGen download) and prints window- and vehicle-level macro-F1.
"""

from __future__ import annotations

import os
import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    name="ch-batterygen",
    no_args_is_help=True,
    rich_markup_mode=None,
    help="CH-BatteryGen: generate EV battery-pack fault data in the release layout; run the benchmark.",
)


class Packs(StrEnum):
    paper = "paper"
    small = "small"


class Fmt(StrEnum):
    csv = "csv"
    parquet = "parquet"


_SMALL_PACKS = {"LFP": ((28, 150.0),), "NCM": ((96, 180.0),)}


def _user_error(msg: str) -> Exception:
    from ..cli import UserError

    return UserError(msg)


def _split(text: str, allowed: tuple, what: str) -> tuple:
    items = tuple(x.strip() for x in text.split(",") if x.strip())
    bad = [x for x in items if x not in allowed]
    if bad or not items:
        raise _user_error(f"{what} must be a comma-separated subset of {', '.join(allowed)}, got {text!r}")
    return items


@app.command("generate")
def generate_command(
    vehicles: Annotated[
        int, typer.Option("--vehicles", min=1, help="Number of vehicles (split over chemistries).")
    ],
    out: Annotated[Path, typer.Option("--out", help="Dataset folder (created; an interrupted run resumes).")],
    seed: Annotated[int, typer.Option(help="Fleet seed (every vehicle derives its own).")] = 0,
    cycles: Annotated[int, typer.Option(min=1, help="Charge and discharge segments per vehicle, each.")] = 3,
    packs: Annotated[
        Packs, typer.Option(help="paper: LFP 124/28 cells, NCM 96; small: LFP 28, NCM 96 cells.")
    ] = Packs.paper,
    fmt: Annotated[Fmt, typer.Option("--format", help="csv (as released) or parquet.")] = Fmt.csv,
    chemistries: Annotated[str, typer.Option(help="Comma-separated chemistries.")] = "LFP,NCM",
    normal_share: Annotated[float, typer.Option(min=0.0, max=1.0, help="Share of normal vehicles.")] = 0.25,
    jobs: Annotated[int | None, typer.Option(min=1, help="Worker processes (default: all cores).")] = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    """Generate (or resume) a fleet in the release layout.

    OUT/<LFP|NCM>/<category>/<vin>/<vin>_<charge|discharge>_<k>.csv plus the label table
    OUT/faults_details.csv, rewritten after each vehicle (so an interrupted run resumes).
    """
    from . import CHEMISTRIES, generate_fleet, make_fleet

    chems = _split(chemistries, CHEMISTRIES, "--chemistries")
    try:
        specs = make_fleet(
            vehicles, seed=seed, chemistries=chems, n_cycles=cycles, normal_share=normal_share,
            pack_designs=_SMALL_PACKS if packs is Packs.small else None,
        )  # fmt: skip
        t0 = time.perf_counter()
        res = generate_fleet(specs, out, fmt=fmt.value, n_jobs=jobs, progress=progress)
    except ValueError as exc:
        raise _user_error(str(exc)) from None
    new = [r for r in res if r["rows"] is not None]
    rows = sum(r["rows"] for r in new)
    typer.echo(
        f"{out}: {len(specs)} vehicles ({len(new)} generated now, {rows:,} rows, "
        f"{time.perf_counter() - t0:.1f} s; {len(specs) - len(new)} already there)"
    )


@app.command("benchmark")
def benchmark_command(
    root: Annotated[Path, typer.Argument(help="A dataset folder in the release layout.")],
    folds: Annotated[int, typer.Option(min=2, help="Vehicle folds of the cross-validation.")] = 3,
    seed: Annotated[int, typer.Option(help="First seed (folds, validation split, initialisation).")] = 0,
    seeds: Annotated[int, typer.Option(min=1, help="Number of seeds, seed .. seed + seeds - 1.")] = 1,
    models: Annotated[str, typer.Option(help="Comma-separated models.")] = "RF,SVM,LSTM,CNN",
    tasks: Annotated[str, typer.Option(help="Comma-separated tasks.")] = "classification,grading",
    chemistries: Annotated[str, typer.Option(help="Comma-separated chemistries.")] = "LFP,NCM",
    scenarios: Annotated[str, typer.Option(help="Comma-separated scenarios.")] = "charge,discharge",
    window: Annotated[int, typer.Option(min=8, help="Window length in samples (10 s each).")] = 128,
    stride: Annotated[int, typer.Option(min=1, help="Window stride in samples.")] = 64,
    max_epochs: Annotated[int, typer.Option(min=1, help="Networks: most epochs (early stopping).")] = 40,
    patience: Annotated[int, typer.Option(min=1, help="Networks: epochs without improvement.")] = 6,
    jobs: Annotated[int, typer.Option(min=1, help="Processes (one torch thread each).")] = max(
        1, os.cpu_count() or 1
    ),
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the results as JSON here.")
    ] = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    """Fault classification and grading (RF, SVM, LSTM, CNN) per chemistry x scenario on ROOT."""
    from rich.console import Console
    from rich.table import Table

    from ..store import atomic_write_json
    from ..uncertainty import bootstrap
    from . import CHEMISTRIES, MODELS, SCENARIOS, TASKS, benchmark, f1_from_confusion, load_dataset

    model_list = _split(models, MODELS, "--models")
    task_list = _split(tasks, TASKS, "--tasks")
    chem_list = _split(chemistries, CHEMISTRIES, "--chemistries")
    scen_list = _split(scenarios, SCENARIOS, "--scenarios")
    try:
        ds = load_dataset(root)
        results, windows = benchmark(
            ds, chemistries=chem_list, scenarios=scen_list, tasks=task_list, models=model_list,
            seeds=tuple(range(seed, seed + seeds)), n_folds=folds, window=window, stride=stride,
            max_epochs=max_epochs, patience=patience, n_jobs=jobs, progress=progress,
        )  # fmt: skip
    except ValueError as exc:
        raise _user_error(str(exc)) from None
    console = Console()
    table = Table(
        title=f"{root}: macro-F1 (window-level [95% bootstrap over test vehicles]; vehicle-level vote)"
    )
    for col in (
        "task",
        "chemistry",
        "scenario",
        "model",
        "seed",
        "window F1",
        "vehicle F1",
        "vehicles",
        "windows",
    ):
        table.add_column(col)
    rows = []
    for r in results:
        _, conf = r.per_vehicle_confusion()
        est = bootstrap(
            lambda c: f1_from_confusion(c.sum(0)), conf, n_boot=1000, seed=r.seed, unit="vehicles"
        )
        rows.append({
            "task": r.task, "chemistry": r.chemistry, "scenario": r.scenario, "model": r.model,
            "seed": r.seed, "f1": r.f1, "interval": [est.lo, est.hi], "vehicle_f1": r.vehicle_f1,
            "n_vehicles": r.n_vehicles, "n_windows": r.n_windows, "folds": r.extra.get("folds", []),
        })  # fmt: skip
        table.add_row(
            r.task, r.chemistry, r.scenario, r.model, str(r.seed), f"{r.f1:.3f} [{est.lo:.3f}, {est.hi:.3f}]",
            f"{r.vehicle_f1:.3f}", str(r.n_vehicles), str(r.n_windows),
        )  # fmt: skip
    console.print(table)
    for (c, s), ws in windows.items():
        g = ws.gaps
        console.print(
            f"{c}/{s}: {len(ws)} windows from {g.segments_in} segments; gap policy: "
            f"{g.interpolated_rows} rows interpolated, {g.dropped_rows} dropped, {g.splits} splits"
        )
    if ds.skipped:
        console.print(f"skipped {len(ds.skipped)} entries not in the release layout (see the warning above)")
    if json_out is not None:
        gaps = {f"{c}/{s}": ws.gaps.to_dict() for (c, s), ws in windows.items()}
        atomic_write_json(json_out, {"root": str(root), "results": rows, "gap_policy": gaps})
        console.print(f"wrote {json_out}")
