"""Result tables: one shape for terminal tables, JSON and CSV.

A `Table` is a title, typed columns and rows of plain values. Renderers here
return strings or Rich renderables; only the CLI prints them.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import RenderableType
from rich.table import Table as RichTable
from rich.text import Text


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    digits: int | None = 2
    """Decimals shown in the terminal; None for text."""
    description: str = ""


@dataclass(frozen=True)
class Table:
    name: str
    title: str
    columns: Sequence[Column]
    rows: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""


def cell(value: Any, digits: int | None) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isinf(value):
            return "+∞" if value > 0 else "−∞"
        text = f"{value:,.{digits}f}" if digits is not None else f"{value:g}"
        if text.startswith("-") and not text.strip("-0.,"):
            return text[1:]  # a value that rounds to zero shows no sign
        return text
    if isinstance(value, list | tuple):
        return " ".join(str(v) for v in value)
    return str(value)


SHORT_TEXT = 16
"""In a table too wide for the terminal, text longer than this (a note, an explanation)
goes under the table as a numbered footnote."""
BORDER = 3
"""Characters a column adds to a table's width: its padding and one rule."""


def to_rich(table: Table, width: int | None = None) -> list[RenderableType]:
    """The table for a terminal of `width` columns (None: as wide as it needs).

    Cells are never cut. A table wider than `width` first moves long text (notes) under
    itself as numbered footnotes, then is split into several tables, each repeating the
    columns that name the row (the text columns before the first number)."""
    cells = [[cell(row.get(c.key), c.digits) for c in table.columns] for row in table.rows]
    keys = _key_columns(table)
    notes: dict[str, int] = {}
    widths = _widths(table, cells)
    if not _fits(widths, width):
        notes = _footnotes(table, cells, keys)
        widths = _widths(table, cells)
    groups = _column_groups(widths, keys, width)
    out: list[RenderableType] = []
    for g, group in enumerate(groups):
        last = g == len(groups) - 1
        rich = RichTable(
            title=table.title if g == 0 else "(continued)",
            caption=table.note if last and table.note else None,
            title_justify="left",
            caption_justify="left",
        )
        for i in group:
            column = table.columns[i]
            numeric = column.digits is not None
            rich.add_column(
                column.header,
                justify="right" if numeric else "left",
                no_wrap=True,
                min_width=widths[i],
            )
        for row in cells:
            rich.add_row(*(row[i] for i in group))
        out.append(rich)
    if notes:
        out.append(Text("\n".join(f"[{n}] {text}" for text, n in notes.items())))
    return out


def _key_columns(table: Table) -> list[int]:
    """The text columns before the first number: what names a row (app, platform, …)."""
    keys = []
    for i, column in enumerate(table.columns):
        if column.digits is not None:
            break
        keys.append(i)
    return keys


def _widths(table: Table, cells: list[list[str]]) -> list[int]:
    """Each column's widest text: its header or a cell."""
    return [
        max([len(column.header), *(len(r[i]) for r in cells)])
        for i, column in enumerate(table.columns)
    ]


def _fits(widths: Iterable[int], width: int | None) -> bool:
    return width is None or 1 + sum(w + BORDER for w in widths) <= width


def _footnotes(table: Table, cells: list[list[str]], keys: list[int]) -> dict[str, int]:
    """Replaces long text cells (outside the key columns) by "[n]" in place; returns each
    text's number."""
    notes: dict[str, int] = {}
    for i, column in enumerate(table.columns):
        if i in keys or column.digits is not None:
            continue
        if all(len(r[i]) <= SHORT_TEXT for r in cells):
            continue
        for row in cells:
            if len(row[i]) > 1:  # "–" stays as it is
                row[i] = f"[{notes.setdefault(row[i], len(notes) + 1)}]"
    return notes


def _column_groups(widths: list[int], keys: list[int], width: int | None) -> list[list[int]]:
    """Indices of the columns of each printed table: all in one if they fit in `width`."""
    every = list(range(len(widths)))
    if width is None or _fits(widths, width):
        return [every]
    keys = keys or [0]
    room = width - 1 - sum(widths[i] + BORDER for i in keys)
    groups: list[list[int]] = []
    current: list[int] = []
    used = 0
    for i in every:
        if i in keys:
            continue
        need = widths[i] + BORDER
        if current and used + need > room:
            groups.append(current)
            current, used = [], 0
        current.append(i)
        used += need
    if current:
        groups.append(current)
    return [keys + group for group in groups] or [every]


def jsonable(value: Any) -> Any:
    """JSON has no infinity: +inf becomes the string "inf" (documented in docs/)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else ("-inf" if value < 0 else "nan")
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def to_json(document: dict[str, Any]) -> str:
    return json.dumps(jsonable(document), indent=2, allow_nan=False) + "\n"


def to_csv(tables: Iterable[Table]) -> str:
    """One CSV: a `table` column, then the union of every table's columns."""
    tables = list(tables)
    keys: list[str] = []
    for table in tables:
        keys.extend(c.key for c in table.columns if c.key not in keys)
    buffer = io.StringIO()
    writer = csv.DictWriter(
        buffer, fieldnames=["table", *keys], extrasaction="ignore", lineterminator="\n"
    )
    writer.writeheader()
    for table in tables:
        for row in table.rows:
            writer.writerow({"table": table.name, **jsonable(row)})
    return buffer.getvalue()


def rows_of(tables: Iterable[Table]) -> dict[str, list[dict[str, Any]]]:
    return {t.name: [{c.key: r.get(c.key) for c in t.columns} for r in t.rows] for t in tables}
