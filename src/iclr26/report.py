"""The reproduction report: one Markdown and one self-contained HTML file from a results folder."""

from __future__ import annotations

import base64
import datetime as dt
import html
import math
import os
from pathlib import Path
from typing import Any

from . import __version__, catalogue
from .claims import Result
from .store import atomic_write_text, load_error, load_result
from .sweep import load_sweeps

MAX_TABLE_ROWS = 40


def collect(results_dir: str | Path) -> tuple[list[Result], list[dict[str, Any]]]:
    """Stored results and stored errors under ``results_dir``, in catalogue order."""
    results, errors = [], []
    for slug in catalogue.slugs():
        result = load_result(results_dir, slug)
        if result is not None:
            results.append(result)
            continue
        error = load_error(results_dir, slug)
        if error is not None:
            errors.append(error)
    return results, errors


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        return f"{value:.4g}"
    return str(value)


def _claim_rows(result: Result) -> list[list[str]]:
    return [
        [
            c.statement,
            c.paper or "—",
            _fmt(c.measured),
            c.interval_text,
            c.criterion,
            str(c.verdict) + (" (post hoc)" if c.post_hoc else ""),
            c.scale,
            c.detail,
        ]
        for c in result.claims
    ]


CLAIM_HEADER = ["claim", "paper", "ours", "interval", "criterion", "verdict", "scale", "what ours is"]
VERDICT_COL = CLAIM_HEADER.index("verdict")


def _table(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    header: list[str] = []
    for row in rows:
        header.extend(k for k in row if k not in header)
    body = [[_fmt(row.get(k)) for k in header] for row in rows[:MAX_TABLE_ROWS]]
    return header, body


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    esc = lambda s: str(s).replace("|", "\\|").replace("\n", " ")
    lines = ["| " + " | ".join(esc(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def verdict_counts(claims: list) -> dict[str, int]:
    """Claims by verdict kind; a post-hoc claim is counted apart, never as ``holds``."""
    counts = {"holds": 0, "does not hold": 0, "inconclusive": 0, "not measurable here": 0, "post hoc": 0}
    for c in claims:
        counts["post hoc" if c.post_hoc else str(c.verdict)] += 1
    return counts


def _verdict_counts(result: Result) -> str:
    n = verdict_counts(result.claims)
    text = (
        f"{n['holds']} hold, {n['does not hold']} do not, {n['inconclusive']} inconclusive, "
        f"{n['not measurable here']} not measurable"
    )
    return text + (f", {n['post hoc']} post hoc" if n["post hoc"] else "")


def _scalar_metrics(metrics: dict[str, Any]) -> list[list[str]]:
    return [[k, _fmt(v)] for k, v in metrics.items() if isinstance(v, int | float | str | bool) or v is None]


_DOCS_DIR = Path(__file__).resolve().parents[2] / "docs"  # the repository's docs/, in a source checkout
FRONT_HEADER = ["#", "system", "status", "claims", "seconds", "budget (s)", "scale", "sweep", "docs"]


def _docs_link(results_dir: Path, entry: catalogue.SystemEntry) -> str | None:
    """Relative link from ``results_dir`` to the system's docs page, or ``None`` when it has none."""
    page = _DOCS_DIR / f"{entry.slug}.md"
    if not page.is_file():
        return None
    return Path(os.path.relpath(page, results_dir.resolve())).as_posix()


def over_budget(result: Result) -> bool:
    """Whether a ``small``-scale run took longer than its system's budget (other scales have none)."""
    budget = catalogue.get(result.slug).budget_s
    return result.scale == "small" and result.seconds is not None and result.seconds > budget


def _front_rows(
    results_dir: Path, results: list[Result], errors: list[dict[str, Any]], sweeps: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """One row per catalogue system: status, verdict counts or failure, time beside budget, links."""
    ran = {r.slug: r for r in results}
    failed = {e["slug"]: e for e in errors}
    swept = {a["slug"]: a for a in sweeps}
    rows = []
    for i, entry in enumerate(catalogue.SYSTEMS, 1):
        r, e, sw = ran.get(entry.slug), failed.get(entry.slug), swept.get(entry.slug)
        if r is not None:
            claims, seconds, scale = _verdict_counts(r), _fmt(r.seconds), r.scale
        elif e is not None:
            error = (e.get("error") or "").strip().splitlines()
            first = error[0] if error else "no message"
            claims = "FAILED: " + (first if len(first) <= 100 else first[:99] + "…")
            seconds, scale = _fmt(e.get("seconds")), e.get("scale", "")
        else:
            claims, seconds, scale = "not run", "—", "—"
        over = r is not None and over_budget(r)
        rows.append(
            {
                "cells": [
                    str(i),
                    entry.slug,
                    entry.status,
                    claims,
                    seconds + (" (over budget)" if over else ""),
                    f"{entry.budget_s:g}",
                    scale,
                    f"{len(sw['seeds'])} seeds" if sw else "—",
                    f"docs/{entry.slug}.md",
                ],
                "section": r is not None or e is not None,
                "sweep": sw is not None,
                "docs": _docs_link(results_dir, entry),
                "over": over,
            }
        )
    return rows


def _budget_line(results: list[Result]) -> str:
    over = [r for r in results if over_budget(r)]
    if not over:
        return "No small-scale run is over its budget."
    return (
        "Over budget at scale small: "
        + ", ".join(f"{r.slug} ({_fmt(r.seconds)} s of {catalogue.get(r.slug).budget_s:g} s)" for r in over)
        + "."
    )


SWEEP_HEADER = ["claim", "criterion", "runs", "mean", "std", "95% interval over seeds", "verdicts"]


def _sweep_rows(agg: dict[str, Any]) -> list[list[str]]:
    rows = []
    for c in agg["claims"]:
        lo_hi = c.get("interval")
        interval = "—" if lo_hi is None else f"[{_fmt(lo_hi[0])}, {_fmt(lo_hi[1])}]"
        verdicts = ", ".join(f"{k} {n}/{c['runs']}" for k, n in c["verdicts"].items() if n)
        rows.append(
            [
                c["statement"],
                c["criterion"],
                f"{c['measured_runs']} measured of {c['runs']}",
                _fmt(c.get("mean")),
                _fmt(c.get("std")),
                interval,
                verdicts + (" (post hoc)" if c.get("post_hoc") else ""),
            ]
        )
    return rows


def _sweep_caption(agg: dict[str, Any]) -> str:
    seeds = agg["seeds"]
    text = f"{len(seeds)} seeds ({', '.join(map(str, seeds))}), scale {agg['scale']}"
    if agg.get("failed"):
        text += "; failed seeds: " + "; ".join(f"{k}: {v}" for k, v in agg["failed"].items())
    return text


Collected = tuple[list[Result], list[dict[str, Any]]]


def _md_link(text: str, target: str | None) -> str:
    return f"[{text}]({target})" if target else text


def render_markdown(results_dir: str | Path, collected: Collected | None = None) -> str:
    """The Markdown report; ``collected`` is ``collect(results_dir)`` when the caller already has it."""
    results_dir = Path(results_dir)
    results, errors = collected if collected is not None else collect(results_dir)
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        "# iclr26 reproduction report",
        "",
        f"Generated {now} by iclr26 {__version__} from `{results_dir}`.",
        "",
    ]
    statuses = [e.status for e in catalogue.SYSTEMS]
    out.append("Catalogue: " + ", ".join(f"{statuses.count(s)} {s}" for s in catalogue.STATUSES) + ".")
    out.append("")
    sweeps = load_sweeps(results_dir)
    if not results and not errors:
        out += [
            "No system has a result here yet: no system is `implemented` or `verified`, or none has run.",
            "",
        ]
    front = []
    for row in _front_rows(results_dir, results, errors, sweeps):
        cells = list(row["cells"])
        cells[1] = _md_link(cells[1], f"#{cells[1]}" if row["section"] else None)
        cells[7] = _md_link(cells[7], f"#sweep-{row['cells'][1]}" if row["sweep"] else None)
        cells[8] = _md_link(cells[8], row["docs"]) if row["docs"] else "—"
        if row["over"]:
            cells[4] = f"**{cells[4]}**"
        front.append(cells)
    out += [
        "## Systems",
        "",
        _md_table(FRONT_HEADER, front),
        "",
        f"Budget: seconds a `small` run may take on an idle machine ({catalogue.DEFAULT_BUDGET_S:g} s unless "
        "the catalogue gives a reason for another). " + _budget_line(results),
        "",
    ]
    for r in results:
        out += [f'<a id="{r.slug}"></a>', "", f"## {r.slug}", "", catalogue.get(r.slug).summary, ""]
        out += [_md_table(CLAIM_HEADER, _claim_rows(r)), ""]
        scalars = _scalar_metrics(r.metrics)
        if scalars:
            out += ["**Metrics**", "", _md_table(["metric", "value"], scalars), ""]
        for name, rows in r.tables.items():
            if rows:
                header, body = _table(rows)
                more = f" (first {MAX_TABLE_ROWS} of {len(rows)} rows)" if len(rows) > MAX_TABLE_ROWS else ""
                out += [f"**{name}**{more}", "", _md_table(header, body), ""]
        for art in r.artifacts:
            if art.endswith(".png"):
                out += [f"![{r.slug}: {art}]({r.slug}/{art})", ""]
        if r.notes:
            out += [r.notes, ""]
        out += [
            f"Run time {_fmt(r.seconds)} s ({_budget_text(r)}), seed {r.seed}, scale {r.scale}, "
            f"config `{r.config_hash}`; "
            + ", ".join(f"{k} {v}" for k, v in r.versions.items() if k != "platform"),
            "",
        ]
    for e in errors:
        out += [f'<a id="{e["slug"]}"></a>', "", f"## {e['slug']} (failed)", ""]
        out += ["```", e.get("error", ""), "```", ""]
    if sweeps:
        out += ["## Sweeps", ""]
    for agg in sweeps:
        out += [f'<a id="sweep-{agg["slug"]}"></a>', "", f"### {agg['slug']} over seeds", ""]
        out += [_sweep_caption(agg), "", _md_table(SWEEP_HEADER, _sweep_rows(agg)), ""]
    return "\n".join(out)


def _budget_text(r: Result) -> str:
    budget = catalogue.get(r.slug).budget_s
    if r.scale != "small":
        return f"the {budget:g} s budget is for scale small"
    return f"budget {budget:g} s" + (", OVER BUDGET" if over_budget(r) else "")


def _html_table(header: list[str], rows: list[list[str]], verdict_col: int | None = None) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            cls = ""
            if i == verdict_col:
                cls = {"holds": "ok", "does not hold": "bad", "inconclusive": "mid"}.get(cell, "na")
            cells.append(f'<td class="{cls}">{html.escape(cell)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _html_front_table(rows: list[dict[str, Any]]) -> str:
    def link(text: str, target: str | None) -> str:
        text = html.escape(text)
        return f"<a href='{html.escape(target)}'>{text}</a>" if target else text

    head = "".join(f"<th>{html.escape(h)}</th>" for h in FRONT_HEADER)
    body = []
    for row in rows:
        cells = [html.escape(c) for c in row["cells"]]
        slug = row["cells"][1]
        cells[1] = link(slug, f"#{slug}" if row["section"] else None)
        cells[7] = link(row["cells"][7], f"#sweep-{slug}" if row["sweep"] else None)
        cells[8] = link(row["cells"][8], row["docs"]) if row["docs"] else "—"
        classes = [""] * len(cells)
        if row["over"]:
            classes[4] = "bad"
        body.append("<tr>" + "".join(f'<td class="{k}">{c}</td>' for k, c in zip(classes, cells)) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


_CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:0.9em}
th,td{border:1px solid #ccc;padding:3px 7px;vertical-align:top}th{background:#f2f2f2}
td.ok{background:#e3f6e3}td.bad{background:#fbe3e3}td.mid{background:#fdf3d8}td.na{background:#f4f4f4}
img{max-width:100%;border:1px solid #ddd;margin:0.5em 0}code,pre{background:#f6f6f6}
"""


def render_html(results_dir: str | Path, collected: Collected | None = None) -> str:
    """The self-contained HTML report (plots embedded as base64)."""
    results_dir = Path(results_dir)
    results, errors = collected if collected is not None else collect(results_dir)
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>iclr26 reproduction report</title>"
        f"<style>{_CSS}</style></head><body><h1>iclr26 reproduction report</h1>",
        f"<p>Generated {now} by iclr26 {__version__}.</p>",
    ]
    if not results and not errors:
        parts.append(
            "<p>No system has a result here yet: no system is <code>implemented</code> or "
            "<code>verified</code>, or none has run.</p>"
        )
    sweeps = load_sweeps(results_dir)
    parts += [
        "<h2>Systems</h2>",
        _html_front_table(_front_rows(results_dir, results, errors, sweeps)),
        f"<p>Budget: seconds a <code>small</code> run may take on an idle machine "
        f"({catalogue.DEFAULT_BUDGET_S:g} s unless the catalogue gives a reason for another). "
        f"{html.escape(_budget_line(results))}</p>",
    ]
    for r in results:
        parts += [
            f"<h2 id='{html.escape(r.slug)}'>{html.escape(r.slug)}</h2>",
            f"<p>{html.escape(catalogue.get(r.slug).summary)}</p>",
            _html_table(CLAIM_HEADER, _claim_rows(r), verdict_col=VERDICT_COL),
        ]
        scalars = _scalar_metrics(r.metrics)
        if scalars:
            parts += ["<h3>Metrics</h3>", _html_table(["metric", "value"], scalars)]
        for name, rows in r.tables.items():
            if rows:
                header, body = _table(rows)
                parts += [f"<h3>{html.escape(name)}</h3>", _html_table(header, body)]
        for art in r.artifacts:
            path = results_dir / r.slug / art
            if art.endswith(".png") and path.exists():
                data = base64.b64encode(path.read_bytes()).decode()
                parts.append(f"<img alt='{html.escape(art)}' src='data:image/png;base64,{data}'>")
        if r.notes:
            parts.append(f"<p>{html.escape(r.notes)}</p>")
        versions = ", ".join(f"{k} {v}" for k, v in r.versions.items() if k != "platform")
        parts.append(
            f"<p><small>Run time {_fmt(r.seconds)} s ({html.escape(_budget_text(r))}), seed {r.seed}, "
            f"scale {html.escape(r.scale)}, "
            f"config {html.escape(r.config_hash)}; {html.escape(versions)}</small></p>"
        )
    for e in errors:
        slug = html.escape(e["slug"])
        parts += [f"<h2 id='{slug}'>{slug} (failed)</h2><pre>{html.escape(e.get('error', ''))}</pre>"]
    if sweeps:
        parts.append("<h2>Sweeps</h2>")
    for agg in sweeps:
        slug = html.escape(agg["slug"])
        parts += [
            f"<h3 id='sweep-{slug}'>{slug} over seeds</h3>",
            f"<p>{html.escape(_sweep_caption(agg))}</p>",
            _html_table(SWEEP_HEADER, _sweep_rows(agg)),
        ]
    parts.append("</body></html>")
    return "".join(parts)


def write_report(results_dir: str | Path) -> tuple[Path, Path]:
    """Write ``results_dir/report.md`` and ``results_dir/report.html`` atomically; return both paths."""
    results_dir = Path(results_dir)
    collected = collect(results_dir)  # read every stored result once, for both renderings
    md = atomic_write_text(results_dir / "report.md", render_markdown(results_dir, collected))
    page = atomic_write_text(results_dir / "report.html", render_html(results_dir, collected))
    return md, page


#: The generated part of a docs page lies between these two lines; ``sync_docs`` rewrites only that part.
#: They hold the ``small`` run (the one ``make run`` makes); each other scale has its own pair of lines
#: (:func:`docs_markers`), so a page can show its small and its medium run side by side.
DOCS_BEGIN = "<!-- iclr26:measured begin (generated by `iclr26 report DIR --docs docs`; do not edit) -->"
DOCS_END = "<!-- iclr26:measured end -->"
DOCS_CLAIM_HEADER = ["claim", "paper", "ours", "interval", "criterion", "verdict"]


def docs_markers(scale: str) -> tuple[str, str]:
    """The first and last line of the generated block of a run at ``scale``."""
    if scale == "small":
        return DOCS_BEGIN, DOCS_END
    return (
        f"<!-- iclr26:measured-{scale} begin (generated by `iclr26 report DIR --docs docs`; do not edit) -->",
        f"<!-- iclr26:measured-{scale} end -->",
    )


def docs_block(result: Result, results_dir: str | Path) -> str:
    """The generated "measured" block of a system's docs page: which run, then its claims.

    It says which run it comes from (results folder, finish time, scale, seed, wall time, versions) so that
    a reader can check that the page and that run's report agree.
    """
    versions = ", ".join(f"{k} {v}" for k, v in result.versions.items() if k != "platform")
    rows = [row[: len(DOCS_CLAIM_HEADER)] for row in _claim_rows(result)]
    begin, end = docs_markers(result.scale)
    lines = [
        begin,
        "",
        f"From the run in `{Path(results_dir).name}/` finished {result.finished or 'at an unrecorded time'}: "
        f"scale {result.scale}, seed {result.seed}, {_fmt(result.seconds)} s ({_budget_text(result)}), "
        f"config `{result.config_hash}`; {versions}. {_verdict_counts(result)}.",
        "",
        _md_table(DOCS_CLAIM_HEADER, rows),
        "",
        end,
    ]
    return "\n".join(lines)


def sync_docs(results_dir: str | Path, docs_dir: str | Path, check: bool = False) -> dict[str, str]:
    """Rewrite the generated block of ``docs_dir/<slug>.md`` from each result stored in ``results_dir``.

    The block rewritten is the one of the result's scale (:func:`docs_markers`). A page without that
    block gets a section "Measured by the last regenerated run" (for small) or "Measured at scale
    <scale> by the last regenerated run" appended. Returns ``{slug: "updated" | "unchanged" | "no
    page"}``; with ``check=True`` nothing is written and "updated" means the page differs from the
    stored result.
    """
    results, _ = collect(results_dir)
    status: dict[str, str] = {}
    for result in results:
        page = Path(docs_dir) / f"{result.slug}.md"
        if not page.is_file():
            status[result.slug] = "no page"
            continue
        text = page.read_text(encoding="utf-8")
        block = docs_block(result, results_dir)
        begin, end = docs_markers(result.scale)
        if begin in text and end in text:
            head, rest = text.split(begin, 1)
            tail = rest.split(end, 1)[1]
            new = head + block + tail
        else:
            at = "" if result.scale == "small" else f" at scale {result.scale}"
            section = f"## Measured{at} by the last regenerated run"
            new = text.rstrip("\n") + f"\n\n{section}\n\n{block}\n"
        status[result.slug] = "unchanged" if new == text else "updated"
        if new != text and not check:
            atomic_write_text(page, new)
    return status
