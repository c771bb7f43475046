"""``iclr26 m3-irt``: fit M3-IRT (or a baseline) to a response CSV from the command line.

The counterpart of the authors' ``m3irt-estimate``: reads a CSV in their format (first column = model
names, one column per item variant, ``<no_image>`` / ``<no_question>`` / ``<no_info>`` prefixes),
optionally joined with a second CSV of extra items, fits, and writes ``abilities.csv`` (abilities and
standard errors per model), ``items.csv`` (item parameters) and ``model.npz`` (:meth:`M3IRT.load`).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="M3-IRT: fit multimodal IRT to a response matrix (see docs/m3-irt.md).",
)


class Model(StrEnum):
    m3irt = "m3irt"
    m2irt = "m2irt"
    twopl = "2pl"


class Solver(StrEnum):
    authors = "authors"
    newton = "newton"


@app.command()
def fit(
    responses: Annotated[Path, typer.Argument(help="Response CSV: rows = models, columns = item variants.")],
    extra: Annotated[
        Path | None, typer.Option(help="A second CSV of items to join (e.g. the authors' shuffled items).")
    ] = None,
    out: Annotated[Path, typer.Option(help="Folder for abilities.csv, items.csv and model.npz.")] = Path(
        "m3irt-fit"
    ),
    model: Annotated[Model, typer.Option(help="m3irt, m2irt (authors' baseline) or 2pl.")] = Model.m3irt,
    solver: Annotated[Solver, typer.Option(help="authors (their Adam) or newton (MAP).")] = Solver.authors,
    scale: Annotated[float | None, typer.Option(help="Fix the scale (default: the authors' search).")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the scale search's validation split.")] = 0,
) -> None:
    """Fit a model to RESPONSES and write its abilities and item parameters."""
    from iclr26.store import atomic_write_text

    from . import M2IRT, M3IRT, TwoPL, merge_responses, read_responses

    try:
        data = read_responses(responses)
        if extra is not None:
            data = merge_responses(data, read_responses(extra))
        cls = {"m3irt": M3IRT, "m2irt": M2IRT, "2pl": TwoPL}[model.value]
        est = cls(scale=scale, solver=solver.value, random_state=seed).fit(data)
    except (OSError, ValueError) as exc:
        raise typer.BadParameter(str(exc)) from exc
    out.mkdir(parents=True, exist_ok=True)
    ab = est.abilities_frame()
    atomic_write_text(out / "abilities.csv", ab.to_csv())
    atomic_write_text(out / "items.csv", est.items_frame().to_csv())
    est.save(out / "model.npz")
    typer.echo(
        f"{type(est).__name__} ({solver.value}) on {data.n_models} models x {data.n_items} items"
        f" ({data.shape[1]} columns): scale {est.scale_:g}, training loss {est.loss_:.4f},"
        f" converged {est.converged_}, {est.fit_seconds_:.1f} s"
    )
    typer.echo(ab.round(3).to_string())
    typer.echo(f"wrote {out / 'abilities.csv'}, {out / 'items.csv'}, {out / 'model.npz'}")
