"""The six table serialisations of Tab-MIA (German et al., ICLR 2026), byte-identical to the authors'.

Every encoder takes a CSV text, splits it into lines on ``\\n`` after stripping surrounding whitespace,
parses each line with :mod:`csv` (so a quoted field cannot span lines, as in the authors' code), and
writes one string. Rows may be ragged; the rules for short and long rows are the authors':

- ``json``: one object per data row, keys = stripped header cells, missing cells ``""``, extra cells
  dropped, ``json.dumps(..., indent=4)`` (ASCII escapes);
- ``html``: ``<table>``, one ``<tr>`` per line *including the header*, every cell a stripped ``<td>``;
- ``markdown``: GitHub table, columns padded to the longest stripped cell (at least 3), a column is
  right-aligned when at least ``n_rows // 2`` of its data cells look numeric (``^[+-]?\\d+([.,]\\d+)?$``);
- ``key-value-pair``: ``header: value`` pairs joined by `` | ``, one line per row
  (raw header, stripped value);
- ``key-is-value``: ``header is value`` joined by ``, `` and closed by ``.``;
- ``line-sep``: the CSV text itself.
"""

from __future__ import annotations

import csv
import json
import re
import warnings

ENCODINGS = ("json", "html", "markdown", "key-value-pair", "key-is-value", "line-sep")

_NUMERIC = re.compile(r"^[+-]?\d+([.,]\d+)?$")


def csv_rows(csv_text: str) -> list[list[str]]:
    """Parse CSV text as the authors do: strip, split on newlines, :func:`csv.reader` per line."""
    return list(csv.reader(csv_text.strip().split("\n")))


def _json(rows: list[list[str]]) -> str:
    """The authors' records: a repeated header keeps its last cell, cells past the header are dropped;
    either loss of data is warned about (the text is still theirs, byte for byte)."""
    keys = [h.strip() for h in rows[0]]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        warnings.warn(
            f"table: repeated column names {repeated}; the json encoding keeps the last cell of each",
            stacklevel=4,  # the caller of encode_table
        )
    long_rows = [i for i, row in enumerate(rows[1:], start=1) if len(row) > len(keys)]
    if long_rows:
        warnings.warn(
            f"table: {len(long_rows)} row(s) (first: row {long_rows[0]}) have more cells than the "
            f"{len(keys)} columns; the json encoding drops the extra cells",
            stacklevel=4,
        )
    records = []
    for row in rows[1:]:
        cells = row + [""] * (len(keys) - len(row))
        records.append(dict(zip(keys, (c.strip() for c in cells))))
    return json.dumps(records, indent=4)


def _html(rows: list[list[str]]) -> str:
    body = "".join(
        "  <tr>\n" + "".join(f"    <td>{c.strip()}</td>\n" for c in row) + "  </tr>\n" for row in rows
    )
    return "<table>\n" + body + "</table>"


def _markdown(rows: list[list[str]]) -> str:
    n_cols = max(len(r) for r in rows)
    grid = [[c.strip() for c in r] + [""] * (n_cols - len(r)) for r in rows]
    widths = [max(3, *(len(r[j]) for r in grid)) for j in range(n_cols)]
    n_data = len(grid) - 1
    right = [sum(bool(_NUMERIC.match(r[j])) for r in grid[1:]) >= n_data // 2 for j in range(n_cols)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(cells) + " |\n"

    out = line([f"{h:<{w}}" for h, w in zip(grid[0], widths)])
    out += line(["-" * w for w in widths])
    for r in grid[1:]:
        out += line([f"{c:>{w}}" if a else f"{c:<{w}}" for c, w, a in zip(r, widths, right)])
    return out


def _pairs(rows: list[list[str]], sep: str, joiner: str, end: str) -> str:
    head = rows[0]
    return "\n".join(joiner.join(f"{h}{sep}{c.strip()}" for h, c in zip(head, row)) + end for row in rows[1:])


def encode_csv_text(csv_text: str, encoding: str) -> str:
    """Serialise one CSV text in ``encoding`` (one of :data:`ENCODINGS`; validated by the caller)."""
    if encoding == "line-sep":
        return csv_text
    rows = csv_rows(csv_text)
    if encoding == "json":
        return _json(rows)
    if encoding == "html":
        return _html(rows)
    if encoding == "markdown":
        return _markdown(rows)
    if encoding == "key-value-pair":
        return _pairs(rows, ": ", " | ", "")
    return _pairs(rows, " is ", ", ", ".")


def kv_chunk_to_csv(chunk: str) -> str:
    """The authors' key-value → CSV round trip of long-context chunks (``convert_chunk_to_line_sep``):
    headers from the first line, each value the text after the first ``": "`` of its pair."""
    lines = chunk.strip().split("\n")
    header = ",".join(pair.split(": ")[0] for pair in lines[0].split(" | "))
    body = [",".join(pair.split(": ")[1] for pair in line.split(" | ")) for line in lines]
    return "\n".join([header, *body])
