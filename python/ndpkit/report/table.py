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

from rich.table import Table as RichTable


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
        if digits is not None:
            return f"{value:,.{digits}f}"
        return f"{value:g}"
    if isinstance(value, list | tuple):
        return " ".join(str(v) for v in value)
    return str(value)


def to_rich(table: Table) -> RichTable:
    out = RichTable(title=table.title, caption=table.note or None, title_justify="left")
    for column in table.columns:
        numeric = column.digits is not None
        out.add_column(column.header, justify="right" if numeric else "left")
    for row in table.rows:
        out.add_row(*(cell(row.get(c.key), c.digits) for c in table.columns))
    return out


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
