"""The ``iclr26`` command line: list, run, reproduce, sweep, report."""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from . import __version__, catalogue

try:  # typer >= 0.22 vendors its own copy of click
    from typer._click import exceptions as _click_errors
except ImportError:  # pragma: no cover - older typer uses click itself
    from click import exceptions as _click_errors

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Faithful, fast implementations of 38 ICLR 2026 systems, and their reproduction.",
)
console = Console()
err_console = Console(stderr=True)


class UserError(Exception):
    """A problem with what the user asked for: printed as one line, exit code 2."""


class Scale(StrEnum):
    small = "small"
    medium = "medium"


class Executor(StrEnum):
    local = "local"
    ray = "ray"


ExecutorOption = Annotated[
    Executor,
    typer.Option(help="local (this machine's processes) or ray (a local Ray instance, or --address)."),
]
AddressOption = Annotated[
    str | None,
    typer.Option(help="Address of a running Ray cluster (with --executor ray); default: start a local one."),
]


def _check_executor(executor: Executor, address: str | None) -> None:
    """Fail early, in one line, when the executor cannot work (before anything runs)."""
    if address is not None and executor != Executor.ray:
        raise UserError("--address needs --executor ray")
    if executor == Executor.ray:
        from .ray_executor import RayUnavailable, check_address, require_ray

        try:
            require_ray()
            if address is not None:
                check_address(address)
        except RayUnavailable as exc:
            raise UserError(str(exc)) from None


def _outcome_line(outcome, entry: catalogue.SystemEntry, scale: str) -> str:
    seconds = "" if outcome.seconds is None else f" ({outcome.seconds:.1f} s)"
    seed = f" seed {outcome.seed}" if outcome.seed is not None else ""
    over = ""
    if scale == "small" and outcome.state == "ran" and outcome.seconds and outcome.seconds > entry.budget_s:
        over = f", over its {entry.budget_s:g} s budget"
    extra = f": {outcome.error}" if outcome.error else ""
    return f"{outcome.slug}{seed}: {outcome.state}{seconds}{over}{extra}"


def _ensure_writable(out: Path) -> Path:
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise UserError(f"cannot write to output folder {str(out)!r}: {exc.strerror or exc}") from None
    return out


def _entry(slug: str) -> catalogue.SystemEntry:
    try:
        return catalogue.get(slug)
    except KeyError as exc:
        raise UserError(exc.args[0]) from None


def _runnable_entry(slug: str) -> catalogue.SystemEntry:
    """The catalogue entry of ``slug``, refused unless its status lets it run (or ``ICLR26_FORCE=1``)."""
    entry = _entry(slug)
    if entry.runnable or os.environ.get("ICLR26_FORCE") == "1":
        return entry
    if (
        importlib.util.find_spec(entry.module) is None
        or importlib.util.find_spec(f"{entry.module}.experiment") is None
    ):
        raise UserError(f"system {slug!r} is {entry.status}: it has no headline experiment to run yet")
    raise UserError(
        f"system {slug!r} is {entry.status}: its headline experiment is incomplete ({entry.docs_page} "
        "says what is missing); set ICLR26_FORCE=1 to run it anyway"
    )


def _claims_table(result) -> Table:
    table = Table(title=f"{result.slug}: claims", show_lines=True)
    for col in ("claim", "paper", "ours", "interval", "criterion", "verdict", "scale"):
        table.add_column(col, overflow="fold")
    styles = {"holds": "green", "does not hold": "red", "inconclusive": "yellow"}
    for c in result.claims:
        ours = "—" if c.measured is None else f"{c.measured:.4g}"
        verdict = str(c.verdict) + (" (post hoc)" if c.post_hoc else "")
        table.add_row(
            c.statement,
            c.paper or "—",
            ours,
            c.interval_text,
            c.criterion,
            f"[{styles.get(str(c.verdict), 'dim')}]{verdict}[/]",
            c.scale,
        )
    return table


@app.command("list")
def list_systems(
    as_json: Annotated[bool, typer.Option("--json", help="Print the catalogue as JSON.")] = False,
) -> None:
    """Show all 38 systems: number, slug, family, status, one-line summary.

    On a terminal: a table. Piped: one tab-separated line per system, never wrapped.
    """
    if as_json:
        import json

        rows = [
            {
                "slug": e.slug,
                "family": e.family,
                "status": e.status,
                "summary": e.summary,
                "docs": e.docs_page,
                "headline_experiment": e.has_experiment,
                "budget_s": e.budget_s,
                "budget_reason": e.budget_reason,
            }
            for e in catalogue.SYSTEMS
        ]
        typer.echo(json.dumps(rows, indent=2))
        return
    if not sys.stdout.isatty():
        for i, e in enumerate(catalogue.SYSTEMS, 1):
            typer.echo("\t".join((str(i), e.slug, e.family, e.status, e.summary)))
        return
    table = Table(title=f"iclr26 {__version__}: {len(catalogue.SYSTEMS)} systems")
    for col in ("#", "slug", "family", "status", "summary"):
        table.add_column(col, overflow="fold")
    colours = {"planned": "dim", "partial": "yellow", "implemented": "green", "verified": "bold green"}
    for i, e in enumerate(catalogue.SYSTEMS, 1):
        table.add_row(str(i), e.slug, e.family, f"[{colours[e.status]}]{e.status}[/]", e.summary)
    console.print(table)


@app.command("run")
def run_command(
    slug: Annotated[str, typer.Argument(help="The system's slug (see `iclr26 list`).")],
    seed: Annotated[int, typer.Option(help="Random seed of the run.")] = 0,
    out: Annotated[Path, typer.Option(help="Results folder; writes OUT/SLUG/result.json.")] = Path("results"),
    scale: Annotated[
        Scale, typer.Option(help="small (minutes on 2 cores) or medium (closer to the paper).")
    ] = Scale.small,
    model: Annotated[
        str | None,
        typer.Option(help="Model benchmarks: embedded | hf:PATH | openai:MODEL@URL (default: the system's)."),
    ] = None,
    judge: Annotated[
        str | None, typer.Option(help="Model benchmarks with a judge: the judge, same forms as --model.")
    ] = None,
    limit: Annotated[
        int | None, typer.Option(min=1, help="Model benchmarks: at most this many items (see the docs page).")
    ] = None,
    batch_size: Annotated[
        int | None, typer.Option(min=1, help="Model benchmarks: prompts per model call.")
    ] = None,
    api_key_env: Annotated[
        str | None,
        typer.Option(help="Environment variable holding the API key of an openai: model (sent only then)."),
    ] = None,
    results: Annotated[
        Path | None,
        typer.Option(
            help="Systems that re-score the authors' published results: their folder (see the docs page)."
        ),
    ] = None,
) -> None:
    """Run one system's headline experiment and print its claims table."""
    from .runner import run_system

    options = dict(model=model, judge=judge, limit=limit, batch_size=batch_size, api_key_env=api_key_env)
    options["results"] = None if results is None else str(results)

    entry = _runnable_entry(slug)
    _ensure_writable(out)
    err_console.print(f"running {slug} (seed {seed}, scale {scale.value}) ...")
    try:
        result = run_system(entry, seed=seed, scale=scale.value, out_dir=out, options=options)
    except ValueError as exc:
        raise UserError(f"{slug}: {exc}") from None
    console.print(_claims_table(result))
    console.print(f"{slug}: {result.seconds:.1f} s; wrote {out / slug / 'result.json'}")


@app.command("reproduce")
def reproduce_command(
    only: Annotated[
        str | None, typer.Option(help="Comma-separated slugs to run (default: all runnable).")
    ] = None,
    out: Annotated[Path, typer.Option(help="Results folder.")] = Path("results"),
    jobs: Annotated[
        int, typer.Option(min=1, help="Systems run in parallel (processes, or CPUs of a local Ray instance).")
    ] = 1,
    seed: Annotated[int, typer.Option(help="Random seed of every run.")] = 0,
    scale: Annotated[Scale, typer.Option(help="small or medium.")] = Scale.small,
    executor: ExecutorOption = Executor.local,
    address: AddressOption = None,
    report: Annotated[bool, typer.Option(help="Write the report when done.")] = True,
) -> None:
    """Run every implemented/verified system (resuming finished ones) and write the report."""
    from tqdm.auto import tqdm

    from .ray_executor import RayUnavailable
    from .report import write_report
    from .runner import reproduce

    if only:
        entries = [_entry(s.strip()) for s in only.split(",") if s.strip()]
        not_runnable = [e.slug for e in entries if not e.runnable]
        if not_runnable:
            raise UserError(f"not implemented yet (status planned/partial): {', '.join(not_runnable)}")
    else:
        entries = catalogue.runnable()
    _check_executor(executor, address)
    _ensure_writable(out)
    if not entries:
        err_console.print("no system is implemented or verified yet: nothing to run")
    bar = tqdm(total=len(entries), desc="reproduce", file=sys.stderr, disable=not entries)
    by_slug = {e.slug: e for e in entries}

    def on_outcome(outcome) -> None:
        bar.update(1)
        bar.write(_outcome_line(outcome, by_slug[outcome.slug], scale.value), file=sys.stderr)

    try:
        summary = reproduce(
            entries,
            seed=seed,
            scale=scale.value,
            out_dir=out,
            jobs=jobs,
            on_outcome=on_outcome,
            executor=executor.value,
            address=address,
        )
    except RayUnavailable as exc:
        raise UserError(str(exc)) from None
    finally:
        bar.close()
    ran, cached, failed = (summary.by_state(s) for s in ("ran", "cached", "failed"))
    console.print(
        f"reproduce: {len(ran)} ran, {len(cached)} cached, {len(failed)} failed"
        + (f" ({', '.join(failed)})" if failed else "")
    )
    if report:
        md, page = write_report(out)
        console.print(f"report: {md} and {page}")
    if failed:
        raise typer.Exit(1)


def _sweep_table(agg: dict) -> Table:
    seeds = agg["seeds"]
    table = Table(title=f"{agg['slug']}: {len(seeds)} seeds, scale {agg['scale']}", show_lines=True)
    for col in ("claim", "criterion", "mean ± std", "95% interval over seeds", "verdicts"):
        table.add_column(col, overflow="fold")
    for row in agg["claims"]:
        mean = "—" if row["mean"] is None else f"{row['mean']:.4g}"
        std = "" if row["std"] is None else f" ± {row['std']:.2g}"
        interval = "—" if row["interval"] is None else f"[{row['interval'][0]:.4g}, {row['interval'][1]:.4g}]"
        verdicts = ", ".join(f"{k} {n}/{row['runs']}" for k, n in row["verdicts"].items() if n)
        table.add_row(row["statement"], row["criterion"], mean + std, interval, verdicts)
    return table


@app.command("sweep")
def sweep_command(
    slug: Annotated[str, typer.Argument(help="The system's slug (see `iclr26 list`).")],
    seeds: Annotated[str, typer.Option(help="Seeds: a range 0-9, a list 0,2,5, or both (0-4,10).")],
    out: Annotated[
        Path, typer.Option(help="Results folder: runs in OUT/sweeps/seed-N/, the aggregate in OUT/sweeps/.")
    ] = Path("results"),
    scale: Annotated[Scale, typer.Option(help="small or medium.")] = Scale.small,
    jobs: Annotated[
        int, typer.Option(min=1, help="Seeds run in parallel (processes, or CPUs of a local Ray instance).")
    ] = 1,
    executor: ExecutorOption = Executor.local,
    address: AddressOption = None,
    report: Annotated[bool, typer.Option(help="Write the report when done.")] = True,
) -> None:
    """Run one system's headline experiment over many seeds and aggregate its claims."""
    from .ray_executor import RayUnavailable
    from .report import write_report
    from .sweep import aggregate_path, parse_seeds, sweep

    entry = _runnable_entry(slug)
    try:
        seed_list = parse_seeds(seeds)
    except ValueError as exc:
        raise UserError(f"--seeds: {exc}") from None
    _check_executor(executor, address)
    _ensure_writable(out)
    err_console.print(f"sweeping {slug} over {len(seed_list)} seeds (scale {scale.value}) ...")

    def on_outcome(outcome) -> None:
        err_console.print(_outcome_line(outcome, entry, scale.value), highlight=False)

    try:
        summary, agg = sweep(
            entry,
            seed_list,
            scale=scale.value,
            out_dir=out,
            jobs=jobs,
            executor=executor.value,
            address=address,
            on_outcome=on_outcome,
        )
    except RayUnavailable as exc:
        raise UserError(str(exc)) from None
    console.print(_sweep_table(agg))
    failed = summary.by_state("failed")
    console.print(
        f"sweep {slug}: {len(summary.by_state('ran'))} ran, {len(summary.by_state('cached'))} cached, "
        f"{len(failed)} failed; aggregate {aggregate_path(out, slug)}"
    )
    if report:
        md, page = write_report(out)
        console.print(f"report: {md} and {page}")
    if failed:
        raise typer.Exit(1)


@app.command("report")
def report_command(
    results_dir: Annotated[Path, typer.Argument(help="A results folder written by run/reproduce.")],
    docs: Annotated[
        Path | None,
        typer.Option(help="Also rewrite the measured block of DOCS/<slug>.md from these results."),
    ] = None,
    check: Annotated[
        bool, typer.Option(help="With --docs: write nothing, exit 1 if a page differs from the results.")
    ] = False,
) -> None:
    """Write DIR/report.md and a self-contained DIR/report.html from stored results."""
    from .report import sync_docs, write_report

    if not results_dir.is_dir():
        raise UserError(f"results folder {str(results_dir)!r} does not exist")
    if check and docs is None:
        raise UserError("--check needs --docs DOCS")
    if docs is not None and not docs.is_dir():
        raise UserError(f"--docs: folder {str(docs)!r} does not exist")
    if docs is not None:
        status = sync_docs(results_dir, docs, check=check)
        for slug, what in status.items():
            console.print(f"{slug}: {'differs' if check and what == 'updated' else what}")
        if check:
            if "updated" in status.values():
                raise typer.Exit(1)
            return
    _ensure_writable(results_dir)
    md, page = write_report(results_dir)
    console.print(f"report: {md} and {page}")


#: Sub-command groups that live in other packages (``iclr26 m3-irt fit``, ``iclr26 sandbox doctor``, ...).
#: They are imported only when asked for, or for the top-level help, so ``iclr26 list`` stays fast
#: (importing a system package can pull in scikit-learn, torch or pybamm).
SUB_APPS = {
    "m3-irt": "iclr26.m3_irt.cli",
    "ch-batterygen": "iclr26.ch_batterygen.cli",
    "sandbox": "iclr26.sandbox.cli",
}
_registered: set[str] = set()


def _register_sub_apps(argv: list[str]) -> None:
    words = [a for a in argv if not a.startswith("-")]
    wanted = [words[0]] if words and words[0] in SUB_APPS else ([] if words else list(SUB_APPS))
    for name in wanted:
        if name not in _registered:
            sub = importlib.import_module(SUB_APPS[name]).app
            app.add_typer(sub, name=name)
            _registered.add(name)


def main(argv: list[str] | None = None) -> int:
    """Entry point: usage errors and user errors become one line on stderr and exit code 2."""
    _register_sub_apps(list(sys.argv[1:] if argv is None else argv))
    command = typer.main.get_command(app)
    try:
        # Without standalone mode, a command that raises typer.Exit(n) makes main() *return* n.
        code = command.main(args=argv, prog_name="iclr26", standalone_mode=False)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except _click_errors.NoArgsIsHelpError as exc:
        typer.echo(exc.ctx.get_help() if exc.ctx else "", err=True)
        return 2
    except _click_errors.UsageError as exc:
        print(f"error: {exc.format_message()}", file=sys.stderr)
        return 2
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        return 130
    return code if isinstance(code, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
