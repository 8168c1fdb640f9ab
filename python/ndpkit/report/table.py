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
    """One column of a `Table`: the row key it shows, its header, and how it is printed."""

    key: str
    header: str
    digits: int | None = 2
    """Decimals shown in the terminal; None for text."""
    description: str = ""
    marks: tuple[str, str] | None = None
    """How a yes/no shows in the terminal (for yes, for no); None: `yes` and `no`. CSV and
    JSON give it as `true`/`false` either way: a mark kept in the row read `✓` in the CSV."""


@dataclass(frozen=True)
class Table:
    """A titled table of rows (dicts keyed by its columns' keys), as every command reports:
    `to_rich` for a terminal, `to_csv`, or `rows_of` for JSON."""

    name: str
    title: str
    columns: Sequence[Column]
    rows: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""

    def descriptions(self) -> dict[str, str]:
        """Each column's key and what it holds (its description, else its header)."""
        return {c.key: c.description or c.header for c in self.columns}


SIGNIFICANT = 3
"""A number below 1 keeps this many significant digits, however few decimals its column
shows (0.000123 s, not 0.000 s)."""
MAX_DECIMALS = 6
"""Numbers needing more decimals than this are shown in scientific notation (1.23e-07)."""
NOISE = 1e-9
"""Below this magnitude a number is floating-point rounding noise, shown as zero without a
sign: no seconds, joules, gigabytes or percentages in these tables are that small."""


def cell(value: Any, digits: int | None) -> str:
    """A value as the terminal shows it: `digits` decimals (None: text or `g` format), more
    for a small number so that it keeps `SIGNIFICANT` digits."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isinf(value):
            return "+∞" if value > 0 else "−∞"
        if abs(value) < NOISE:
            value = 0.0
        text = f"{value:g}" if digits is None else _number(value, digits)
        if text.startswith("-") and not text.strip("-0.,"):
            return text[1:]  # a value that rounds to zero shows no sign
        return text
    if isinstance(value, list | tuple):
        return " ".join(str(v) for v in value)
    return str(value)


def _shown(value: Any, column: Column) -> str:
    """A row's value as its column shows it in the terminal (a yes/no by its marks)."""
    if column.marks is not None and isinstance(value, bool):
        return column.marks[0] if value else column.marks[1]
    return cell(value, column.digits)


def _number(value: float, digits: int) -> str:
    decimals = digits
    if 0 < abs(value) < 1:
        decimals = max(digits, SIGNIFICANT - 1 - math.floor(math.log10(abs(value))))
    if decimals > MAX_DECIMALS:
        return f"{value:.{SIGNIFICANT - 1}e}"
    return f"{value:,.{decimals}f}"


SHORT_TEXT = 16
"""In a table too wide for the terminal, text longer than this (a note, an explanation)
goes under the table as a numbered footnote."""
BORDER = 3
"""Characters a column adds to a table's width: its padding and one rule."""
FOLD = 8
"""A text column too narrow for its longest word folds words, but keeps this many
characters before the columns that name the row do."""


def to_rich(table: Table, width: int | None = None) -> list[RenderableType]:
    """The table for a terminal of `width` columns (None: as wide as it needs).

    Cells are never cut. A table wider than `width` first moves long text (notes) under
    itself as numbered footnotes, then is split into several tables, each repeating the
    columns that name the row (the text columns before the first number); a part still too
    wide wraps its text cells onto more lines, the row names last. The title and caption are
    lines of their own, wrapped at the terminal's width, not the table's."""
    cells = [[_shown(row.get(c.key), c) for c in table.columns] for row in table.rows]
    keys = _key_columns(table)
    notes: dict[str, int] = {}
    widths = _widths(table, cells)
    if not _fits(widths, width):
        notes = _footnotes(table, cells, keys)
        widths = _widths(table, cells)
    out: list[RenderableType] = [Text(table.title, style="table.title")] if table.title else []
    for g, group in enumerate(_column_groups(widths, keys, width)):
        if g:
            out.append(Text("(continued)", style="table.title"))
        fitted = _wrapped_widths(table, cells, widths, group, keys, width)
        out.append(_part(table, cells, fitted))
    if table.note:
        out.append(Text(table.note, style="table.caption"))
    if notes:
        out.append(Text("\n".join(f"[{n}] {text}" for text, n in notes.items())))
    return out


def _part(table: Table, cells: list[list[str]], widths: dict[int, int]) -> RichTable:
    """One printed table: the columns in `widths`, each exactly that wide. Text folds onto
    more lines rather than being cut; a table of unnamed columns has no header row."""
    group = list(widths)
    rich = RichTable(show_header=any(table.columns[i].header for i in group))
    for i in group:
        column = table.columns[i]
        rich.add_column(
            Text(column.header),
            justify="left" if column.digits is None else "right",
            width=widths[i],
            overflow="fold",
        )
    for row in cells:
        # Text, not str: a cell such as "[engines]" is data, not Rich markup.
        rich.add_row(*(Text(row[i]) for i in group))
    return rich


def _wrapped_widths(
    table: Table,
    cells: list[list[str]],
    widths: list[int],
    group: list[int],
    keys: list[int],
    width: int | None,
) -> dict[int, int]:
    """The widths of `group`'s columns narrowed, one character at a time, until the part
    fits in `width`. Text wraps at spaces first: the widest notes, then the row names, the
    first (which names the row) last, each down to its longest word. Then words fold, in
    the same order, down to `FOLD` characters, then to one. Numbers are never narrowed."""
    fitted = {i: widths[i] for i in group}
    if width is None:
        return fitted
    excess = 1 + sum(w + BORDER for w in fitted.values()) - width
    text = [i for i in group if table.columns[i].digits is None]
    word = {i: _longest_word(table.columns[i].header, [r[i] for r in cells]) for i in text}
    order = [[i for i in text if i not in keys], *([i] for i in reversed(text) if i in keys)]
    for floor in (word, {i: min(w, FOLD) for i, w in word.items()}, dict.fromkeys(text, 1)):
        for candidates in order:
            while excess > 0:
                room = [i for i in candidates if fitted[i] > floor[i]]
                if not room:
                    break
                fitted[max(room, key=fitted.__getitem__)] -= 1
                excess -= 1
    return fitted


def _longest_word(header: str, texts: list[str]) -> int:
    return max(len(word) for text in [header, *texts] for word in [*text.split(" "), ""])


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
    """`document` as strict, indented JSON (`jsonable`: no bare Infinity or NaN)."""
    return json.dumps(jsonable(document), indent=2, allow_nan=False) + "\n"


def to_csv(tables: Iterable[Table]) -> str:
    """One CSV: a column naming each row's table, then the union of every table's columns.
    That first column is `table`, or `section` where a table has a `table` column of its
    own (TPC tables, NASCENT2's E7), which would otherwise overwrite it."""
    tables = list(tables)
    keys: list[str] = []
    for table in tables:
        keys.extend(c.key for c in table.columns if c.key not in keys)
    section = "section" if "table" in keys else "table"
    buffer = io.StringIO()
    writer = csv.DictWriter(
        buffer, fieldnames=[section, *keys], extrasaction="ignore", lineterminator="\n"
    )
    writer.writeheader()
    for table in tables:
        for row in table.rows:
            cells = {key: _csv_cell(value) for key, value in jsonable(row).items()}
            writer.writerow({**cells, section: table.name})
    return buffer.getvalue()


def _csv_cell(value: Any) -> Any:
    """A list, table or yes/no as JSON text, which any reader parses: str() wrote Python's
    repr, so a data set's Parquet columns read `['x0', 'x1']`, a name with a quote in it came
    out in Python's escaping, and evaluate's `verified` read `True` where JSON says `true`."""
    if isinstance(value, list | dict | bool):
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    return value


def rows_of(tables: Iterable[Table]) -> dict[str, list[dict[str, Any]]]:
    """Each table's rows by its name, with its columns' keys only: the JSON form of tables."""
    return {t.name: [{c.key: r.get(c.key) for c in t.columns} for r in t.rows] for t in tables}
