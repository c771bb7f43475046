"""``iclr26 sandbox ...``: a typer sub-app (registered by iclr26.cli)."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    help="The sandbox that runs model-written code.",
)


@app.command("doctor")
def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """List the toolchains present (with versions), the missing ones (with their Debian package), and the
    isolation this machine allows."""
    from . import isolation_report, toolchains

    chains, iso = toolchains(), isolation_report()
    if as_json:
        typer.echo(json.dumps({"isolation": iso, "toolchains": [t.__dict__ for t in chains]}, indent=2))
        return
    console = Console()
    table = Table(title="sandbox toolchains")
    for col in ("language", "status", "version", "Debian package"):
        table.add_column(col, overflow="fold")
    for t in chains:
        status = "[green]present[/]" if t.present else f"[red]missing[/] ({', '.join(t.missing)})"
        table.add_row(t.language, status, t.version or "—", t.debian)
    console.print(table)
    iso_table = Table(title="isolation", show_header=False)
    for k, v in iso.items():
        iso_table.add_row(k, v)
    console.print(iso_table)
    missing = [t.debian for t in chains if not t.present]
    if missing:
        console.print("install the missing ones with: apt-get install " + " ".join(missing))
