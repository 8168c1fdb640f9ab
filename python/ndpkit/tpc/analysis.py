"""NASCENT2 experiment E8 (paper Fig. 4; spec §11, §12 E8): which TPC-H columns and sort
keys could be dictionary encoded.

The criterion (spec §3.2) is **fewer than 2^16 distinct values**. Two counts:

1. **Columns**: for each of the eight TPC-H tables, the columns with < 2^16 distinct values,
   and the fraction averaged over tables (paper: 48 %).
2. **Sort keys**: the ORDER BY keys of Q1–Q22, transcribed below from the TPC-H
   specification (v3.0.1, clause 2.4), each typed integer or non-integer and tested for
   encodability (paper: 16 integer keys, 10 encodable; 12 non-integer, 11 encodable).

How a key's distinct count is found:
- a base column: its distinct values in the table;
- `extract(year …)` and `substring(…)`: the distinct values of the expression over the table;
- a computed aggregate (revenue, value, counts): the distinct values of the aggregate over the
  query's GROUP BY **on the unfiltered tables**, an upper bound on what the query's sort sees
  (its WHERE clause only removes groups). Q5's revenue is grouped by the supplier's nation
  (the query requires customer and supplier nation to be equal).

Types: TPC-H identifiers and integers, counts and extracted years are integer keys; decimals,
dates and text are non-integer (the NASCENT2 spec's E7 treats a date as a non-integer key,
sorted through generic sort). Each key is counted once per ORDER BY occurrence, and also
once per distinct source (e.g. `s_name` in Q2, Q20 and Q21 counts once).

Distinct counts are pyarrow's (`count_distinct`, `group_by`); the tests recompute every one
with DuckDB SQL as an independent engine.

Example: `analyse(1.0).rows()` gives the statistics beside the paper's.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ndpkit.errors import SpecError, check_kinds
from ndpkit.files import literal_path
from ndpkit.summary import summary
from ndpkit.tpc.tpch import (
    TPCH_TABLES,
    check_scale_factor,
    directory_path,
    generate_tpch,
    sf_text,
)

ENCODABLE_BELOW = 2**16
"""Spec §3.2: "can be dictionary encoded" means fewer than 2^16 distinct values."""

KeyKind = Literal["integer", "non-integer"]

PAPER = {
    "integer_keys": 16,
    "integer_keys_encodable": 10,
    "non_integer_keys": 12,
    "non_integer_keys_encodable": 11,
    "mean_table_fraction_encodable": 0.48,
    "intro_claim_keys_encodable": 0.78,
}
"""The paper's stated figures (spec §11)."""


class TpchData:
    """The eight tables as pyarrow tables, read on first use (string views cast to strings,
    which every pyarrow kernel accepts)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._tables: dict[str, pa.Table] = {}

    def check_files(self) -> None:
        """Every table's file is there, or an error naming the first missing."""
        for name in TPCH_TABLES:
            self._path(name)

    def _path(self, name: str) -> Path:
        path = self.directory / f"{name}.parquet"
        if not path.is_file():
            raise SpecError("no such TPC-H table file", source=str(path))
        return path

    def __getitem__(self, name: str) -> pa.Table:
        if name not in self._tables:
            table = pq.read_table(literal_path(self._path(name)))
            schema = pa.schema(
                [
                    f.with_type(pa.string()) if pa.types.is_string_view(f.type) else f
                    for f in table.schema
                ]
            )
            self._tables[name] = table.cast(schema)
        return self._tables[name]


Values = Callable[[TpchData], pa.Array | pa.ChunkedArray]


@dataclass(frozen=True)
class SortKey:
    """One ORDER BY key of a TPC-H query."""

    query: int
    key: str
    """As the query names it (an alias for an expression)."""
    sql_type: str
    """The TPC-H datatype, or the expression's kind."""
    kind: KeyKind
    source: str
    """What its values are: `table.column`, `year(table.column)`, or the name of an
    expression in `EXPRESSIONS`. Keys with the same source count once in the distinct view."""

    def values(self, data: TpchData) -> pa.Array | pa.ChunkedArray:
        """The values the query sorts (for an aggregate: over the unfiltered tables)."""
        if self.source in EXPRESSIONS:
            return EXPRESSIONS[self.source](data)
        inner = self.source.removeprefix("year(").removesuffix(")")
        table, column = inner.split(".")
        values = data[table][column]
        return pc.year(values) if inner != self.source else values


def _revenue(lineitem: pa.Table) -> pa.ChunkedArray:
    return pc.multiply(lineitem["l_extendedprice"], pc.subtract(1, lineitem["l_discount"]))


def _sum_by(table: pa.Table, value: pa.ChunkedArray, keys: list[str]) -> pa.ChunkedArray:
    grouped = table.select(keys).append_column("v", value).group_by(keys).aggregate([("v", "sum")])
    return grouped["v_sum"]


def _revenue_per_order(data: TpchData) -> pa.ChunkedArray:  # Q3: group by l_orderkey, …
    lineitem = data["lineitem"]
    return _sum_by(lineitem, _revenue(lineitem), ["l_orderkey"])


def _revenue_per_supplier_nation(data: TpchData) -> pa.ChunkedArray:  # Q5: group by n_name
    suppliers = data["supplier"].select(["s_suppkey", "s_nationkey"])
    lineitem = data["lineitem"].join(suppliers, "l_suppkey", "s_suppkey")
    return _sum_by(lineitem, _revenue(lineitem), ["s_nationkey"])


def _revenue_per_customer(data: TpchData) -> pa.ChunkedArray:  # Q10: group by c_custkey, …
    orders = data["orders"].select(["o_orderkey", "o_custkey"])
    lineitem = data["lineitem"].join(orders, "l_orderkey", "o_orderkey")
    return _sum_by(lineitem, _revenue(lineitem), ["o_custkey"])


def _value_per_part(data: TpchData) -> pa.ChunkedArray:  # Q11: group by ps_partkey
    partsupp = data["partsupp"]
    value = pc.multiply(partsupp["ps_supplycost"], partsupp["ps_availqty"])
    return _sum_by(partsupp, value, ["ps_partkey"])


def _orders_per_customer(data: TpchData) -> pa.Array:  # Q13's c_count: a left outer join
    counts = data["orders"].group_by("o_custkey").aggregate([("o_orderkey", "count")])
    per_customer = data["customer"].select(["c_custkey"]).join(counts, "c_custkey", "o_custkey")
    return pc.fill_null(per_customer["o_orderkey_count"], 0).combine_chunks()


def _customers_per_count(data: TpchData) -> pa.ChunkedArray:  # Q13's custdist
    counts = pa.table({"c_count": _orders_per_customer(data)})
    return counts.group_by("c_count").aggregate([("c_count", "count")])["c_count_count"]


def _suppliers_per_part_group(data: TpchData) -> pa.ChunkedArray:  # Q16's supplier_cnt
    groups = ["p_brand", "p_type", "p_size"]
    parts = data["part"].select(["p_partkey", *groups])
    joined = data["partsupp"].join(parts, "ps_partkey", "p_partkey")
    aggregate = joined.group_by(groups).aggregate([("ps_suppkey", "count_distinct")])
    return aggregate["ps_suppkey_count_distinct"]


def _lines_per_supplier(data: TpchData) -> pa.ChunkedArray:  # Q21's numwait: group by s_name
    counts = data["lineitem"].group_by("l_suppkey").aggregate([("l_orderkey", "count")])
    return counts["l_orderkey_count"]


def _phone_country(data: TpchData) -> pa.ChunkedArray:  # Q22: substring(c_phone from 1 for 2)
    return pc.utf8_slice_codeunits(data["customer"]["c_phone"], 0, 2)


EXPRESSIONS: dict[str, Values] = {
    "Q3 revenue per order": _revenue_per_order,
    "Q5 revenue per nation": _revenue_per_supplier_nation,
    "Q10 revenue per customer": _revenue_per_customer,
    "Q11 value per part": _value_per_part,
    "Q13 customers per order count": _customers_per_count,
    "Q13 orders per customer": _orders_per_customer,
    "Q16 suppliers per part group": _suppliers_per_part_group,
    "Q21 lines per supplier": _lines_per_supplier,
    "Q22 substring(c_phone, 1, 2)": _phone_country,
}
"""The sort keys that are expressions, by source name."""

_I: KeyKind = "integer"
_N: KeyKind = "non-integer"

# TPC-H v3.0.1 clause 2.4.n.1, the ORDER BY clause of each query (Q6, Q14, Q17 and Q19 return
# one row and have none): (query, key as named in the query, datatype, kind, source).
SORT_KEYS: tuple[SortKey, ...] = tuple(
    SortKey(*row)
    for row in (
        (1, "l_returnflag", "fixed text(1)", _N, "lineitem.l_returnflag"),
        (1, "l_linestatus", "fixed text(1)", _N, "lineitem.l_linestatus"),
        (2, "s_acctbal", "decimal", _N, "supplier.s_acctbal"),
        (2, "n_name", "fixed text(25)", _N, "nation.n_name"),
        (2, "s_name", "fixed text(25)", _N, "supplier.s_name"),
        (2, "p_partkey", "identifier", _I, "part.p_partkey"),
        (3, "revenue", "sum of decimal", _N, "Q3 revenue per order"),
        (3, "o_orderdate", "date", _N, "orders.o_orderdate"),
        (4, "o_orderpriority", "fixed text(15)", _N, "orders.o_orderpriority"),
        (5, "revenue", "sum of decimal", _N, "Q5 revenue per nation"),
        (7, "supp_nation", "fixed text(25)", _N, "nation.n_name"),
        (7, "cust_nation", "fixed text(25)", _N, "nation.n_name"),
        (7, "l_year", "extract year (integer)", _I, "year(lineitem.l_shipdate)"),
        (8, "o_year", "extract year (integer)", _I, "year(orders.o_orderdate)"),
        (9, "nation", "fixed text(25)", _N, "nation.n_name"),
        (9, "o_year", "extract year (integer)", _I, "year(orders.o_orderdate)"),
        (10, "revenue", "sum of decimal", _N, "Q10 revenue per customer"),
        (11, "value", "sum of decimal", _N, "Q11 value per part"),
        (12, "l_shipmode", "fixed text(10)", _N, "lineitem.l_shipmode"),
        (13, "custdist", "count", _I, "Q13 customers per order count"),
        (13, "c_count", "count", _I, "Q13 orders per customer"),
        (15, "s_suppkey", "identifier", _I, "supplier.s_suppkey"),
        (16, "supplier_cnt", "count distinct", _I, "Q16 suppliers per part group"),
        (16, "p_brand", "fixed text(10)", _N, "part.p_brand"),
        (16, "p_type", "variable text(25)", _N, "part.p_type"),
        (16, "p_size", "integer", _I, "part.p_size"),
        (18, "o_totalprice", "decimal", _N, "orders.o_totalprice"),
        (18, "o_orderdate", "date", _N, "orders.o_orderdate"),
        (20, "s_name", "fixed text(25)", _N, "supplier.s_name"),
        (21, "numwait", "count", _I, "Q21 lines per supplier"),
        (21, "s_name", "fixed text(25)", _N, "supplier.s_name"),
        (22, "cntrycode", "substring of fixed text(15)", _N, "Q22 substring(c_phone, 1, 2)"),
    )
)
QUERIES_WITHOUT_ORDER_BY = (6, 14, 17, 19)


@dataclass(frozen=True)
class ColumnCount:
    table: str
    column: str
    distinct: int

    @property
    def encodable(self) -> bool:
        return self.distinct < ENCODABLE_BELOW


@dataclass(frozen=True)
class KeyCount:
    query: int
    key: str
    sql_type: str
    kind: KeyKind
    source: str
    distinct: int

    @property
    def encodable(self) -> bool:
        return self.distinct < ENCODABLE_BELOW


@dataclass(frozen=True)
class KindTally:
    """Sort keys of one kind: how many, and how many can be dictionary encoded."""

    keys: int
    encodable: int


@dataclass(frozen=True)
class Analysis:
    """E8 at one scale factor."""

    sf: float
    columns: tuple[ColumnCount, ...]
    keys: tuple[KeyCount, ...]

    def __repr__(self) -> str:  # the dataclass's: every column and key counted, 8,000 characters
        return summary(
            "Analysis",
            sf=self.sf,
            mean_table_fraction=self.mean_table_fraction,
            pooled_fraction=self.pooled_fraction,
        )

    def table_fractions(self) -> dict[str, float]:
        """Each table's fraction of columns with < 2^16 distinct values."""
        out: dict[str, float] = {}
        for table in TPCH_TABLES:
            mine = [c for c in self.columns if c.table == table]
            if mine:
                out[table] = sum(c.encodable for c in mine) / len(mine)
        return out

    @property
    def mean_table_fraction(self) -> float:
        """The fraction averaged over tables (the paper's 48 % statistic)."""
        fractions = self.table_fractions()
        return sum(fractions.values()) / len(fractions)

    @property
    def pooled_fraction(self) -> float:
        """The fraction over all columns of all tables together."""
        return sum(c.encodable for c in self.columns) / len(self.columns)

    def tally(self, kind: KeyKind, *, distinct_sources: bool = False) -> KindTally:
        """Sort keys of `kind`, per ORDER BY occurrence or per distinct source."""
        keys = [k for k in self.keys if k.kind == kind]
        if distinct_sources:
            keys = list({k.source: k for k in keys}.values())
        return KindTally(len(keys), sum(k.encodable for k in keys))

    @cached_property
    def _summary(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for view, distinct in (("per occurrence", False), ("per distinct source", True)):
            integer = self.tally("integer", distinct_sources=distinct)
            other = self.tally("non-integer", distinct_sources=distinct)
            total = integer.keys + other.keys
            rows += [
                _stat(f"integer sort keys ({view})", integer.keys, PAPER["integer_keys"]),
                _stat(
                    f"  of which encodable ({view})",
                    integer.encodable,
                    PAPER["integer_keys_encodable"],
                ),
                _stat(f"non-integer sort keys ({view})", other.keys, PAPER["non_integer_keys"]),
                _stat(
                    f"  of which encodable ({view})",
                    other.encodable,
                    PAPER["non_integer_keys_encodable"],
                ),
                _stat(
                    f"sort keys encodable, fraction ({view})",
                    (integer.encodable + other.encodable) / total,
                    PAPER["intro_claim_keys_encodable"],
                    "paper: 78 % in the introduction, 21/28 = 75 % from its counts",
                ),
            ]
        rows.insert(
            0,
            _stat(
                "columns < 2^16 distinct, mean over tables",
                self.mean_table_fraction,
                PAPER["mean_table_fraction_encodable"],
                f"pooled over all {len(self.columns)} columns: {self.pooled_fraction:.3f}",
            ),
        )
        return rows

    def rows(self) -> list[dict[str, Any]]:
        """The statistics beside the paper's: statistic, ours, paper, note."""
        return [dict(row) for row in self._summary]

    def as_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready."""
        return {
            "sf": self.sf,
            "encodable_below": ENCODABLE_BELOW,
            "summary": self.rows(),
            "tables": [
                {"table": t, "columns": n, "encodable_columns": e, "fraction": e / n}
                for t, (n, e) in self._per_table().items()
            ],
            "columns": [{**asdict(c), "encodable": c.encodable} for c in self.columns],
            "keys": [{**asdict(k), "encodable": k.encodable} for k in self.keys],
        }

    def _per_table(self) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        for c in self.columns:
            n, e = out.get(c.table, (0, 0))
            out[c.table] = (n + 1, e + c.encodable)
        return out


def _stat(statistic: str, ours: float, paper: float, note: str = "") -> dict[str, Any]:
    return {"statistic": statistic, "ours": ours, "paper": paper, "note": note}


@dataclass(frozen=True)
class Change:
    """A column or sort key whose encodability differs between two scale factors."""

    name: str
    distinct_a: int
    distinct_b: int
    encodable_a: bool
    encodable_b: bool


def analyse(sf: float = 1.0, data_dir: str | os.PathLike[str] | None = None) -> Analysis:
    """E8 at scale factor `sf`: on `data_dir/<table>.parquet` if given (made at that SF,
    checked by the orders row count; a str or a Path), else on tables tpchgen-cli generates
    into a temporary directory."""
    check_scale_factor(sf)
    directory = None if data_dir is None else directory_path(data_dir, "data_dir")
    with _tables(sf, directory) as data:
        if directory is not None:
            # Before any count: every table was read and counted (most of the ~30 s at SF
            # 1) before tables made at another SF were refused.
            data.check_files()
            _check_made_at(sf, data, directory)
        columns = tuple(
            ColumnCount(table, column, _distinct(data[table][column]))
            for table in TPCH_TABLES
            for column in data[table].column_names
        )
        keys = tuple(
            KeyCount(k.query, k.key, k.sql_type, k.kind, k.source, _distinct(k.values(data)))
            for k in SORT_KEYS
        )
    return Analysis(sf, columns, keys)


ORDERS_PER_SF = 1_500_000
"""TPC-H ORDERS rows per unit of SF (clause 4.2.5; tpchgen-cli's count at any SF)."""


def _check_made_at(sf: float, data: TpchData, directory: Path) -> None:
    """Tables read from `directory` must be TPC-H at `sf`: counts of tables made at another
    SF were reported, and tabled by E8, as `sf`'s."""
    rows = data["orders"].num_rows
    expected = ORDERS_PER_SF * sf
    if abs(rows - expected) > max(1.0, 0.001 * expected):
        # the SF as given (`sf_text`): `:g` said SF 0.0012345678 as "SF 0.00123457"
        raise SpecError(
            f"holds {rows:,} orders, TPC-H at SF {sf_text(sf)} has {round(expected):,} (these "
            f"tables look made at SF {rows / ORDERS_PER_SF:g}); give the SF they were made at",
            source=str(directory / "orders.parquet"),
        )


def sensitivity(a: Analysis, b: Analysis) -> list[Change]:
    """Columns and sort keys (by source) that are encodable at one SF and not the other."""
    check_kinds(  # an SF for an analysis ended in "… has no attribute 'columns'"
        ("a", a, Analysis, "an Analysis (analyse(sf))"),
        ("b", b, Analysis, "an Analysis (analyse(sf))"),
    )
    pairs = [
        (f"{x.table}.{x.column}", x.distinct, y.distinct)
        for x, y in zip(a.columns, b.columns, strict=True)
    ]
    seen = {name for name, _, _ in pairs}
    for x, y in zip(a.keys, b.keys, strict=True):
        if x.source not in seen:
            seen.add(x.source)
            pairs.append((x.source, x.distinct, y.distinct))
    return [
        Change(name, da, db, da < ENCODABLE_BELOW, db < ENCODABLE_BELOW)
        for name, da, db in pairs
        if (da < ENCODABLE_BELOW) != (db < ENCODABLE_BELOW)
    ]


def _distinct(values: pa.Array | pa.ChunkedArray) -> int:
    return int(pc.count_distinct(values, mode="all").as_py())


@contextmanager
def _tables(sf: float, data_dir: Path | None) -> Iterator[TpchData]:
    if data_dir is not None:
        yield TpchData(data_dir)
        return
    with tempfile.TemporaryDirectory(prefix="ndpkit-e8-") as directory:
        generate_tpch(sf, Path(directory))
        yield TpchData(Path(directory))
