"""The reproduction report: one Markdown and one self-contained HTML file from a results folder."""

from __future__ import annotations

import base64
import datetime as dt
import html
import math
from pathlib import Path
from typing import Any

from . import __version__, catalogue
from .claims import Result
from .store import atomic_write_text, load_error, load_result

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


SUMMARY_HEADER = ["system", "status", "claims", "seconds", "seed", "scale"]


def _summary_rows(results: list[Result], errors: list[dict[str, Any]]) -> list[list[str]]:
    """One row per system that ran (its verdict counts) or failed (its error)."""
    rows = [
        [r.slug, catalogue.get(r.slug).status, _verdict_counts(r), _fmt(r.seconds), _fmt(r.seed), r.scale]
        for r in results
    ]
    rows += [
        [
            e["slug"],
            catalogue.get(e["slug"]).status,
            "FAILED: " + e.get("error", ""),
            _fmt(e.get("seconds")),
            _fmt(e.get("seed")),
            e.get("scale", ""),
        ]
        for e in errors
    ]
    return rows


Collected = tuple[list[Result], list[dict[str, Any]]]


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
    if not results and not errors:
        out += [
            "No system has a result here yet: no system is `implemented` or `verified`, or none has run.",
            "",
        ]
        return "\n".join(out)
    out += [
        "## Summary",
        "",
        _md_table(SUMMARY_HEADER, _summary_rows(results, errors)),
        "",
    ]
    for r in results:
        out += [f"## {r.slug}", "", catalogue.get(r.slug).summary, ""]
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
            f"Run time {_fmt(r.seconds)} s, seed {r.seed}, scale {r.scale}, config `{r.config_hash}`; "
            + ", ".join(f"{k} {v}" for k, v in r.versions.items() if k != "platform"),
            "",
        ]
    for e in errors:
        out += [f"## {e['slug']} (failed)", "", "```", e.get("error", ""), "```", ""]
    return "\n".join(out)


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
            "<code>verified</code>, or none has run.</p></body></html>"
        )
        return "".join(parts)
    parts += ["<h2>Summary</h2>", _html_table(SUMMARY_HEADER, _summary_rows(results, errors))]
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
            f"<p><small>Run time {_fmt(r.seconds)} s, seed {r.seed}, scale {html.escape(r.scale)}, "
            f"config {html.escape(r.config_hash)}; {html.escape(versions)}</small></p>"
        )
    for e in errors:
        parts += [f"<h2>{html.escape(e['slug'])} (failed)</h2><pre>{html.escape(e.get('error', ''))}</pre>"]
    parts.append("</body></html>")
    return "".join(parts)


def write_report(results_dir: str | Path) -> tuple[Path, Path]:
    """Write ``results_dir/report.md`` and ``results_dir/report.html`` atomically; return both paths."""
    results_dir = Path(results_dir)
    collected = collect(results_dir)  # read every stored result once, for both renderings
    md = atomic_write_text(results_dir / "report.md", render_markdown(results_dir, collected))
    page = atomic_write_text(results_dir / "report.html", render_html(results_dir, collected))
    return md, page
