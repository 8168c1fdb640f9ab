"""E8: every distinct count recomputed by DuckDB SQL (an independent engine), the query table,
and the statistics."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from ndpkit.errors import SpecError
from ndpkit.tpc import TPCH_TABLES
from ndpkit.tpc.analysis import (
    ENCODABLE_BELOW,
    EXPRESSIONS,
    PAPER,
    QUERIES_WITHOUT_ORDER_BY,
    SORT_KEYS,
    Analysis,
    ColumnCount,
    KeyCount,
    TpchData,
    analyse,
    sensitivity,
)

REVENUE = "sum(l_extendedprice * (1 - l_discount))"
C_COUNT = "select count(o_orderkey) from customer left join orders on c_custkey = o_custkey group by c_custkey"  # noqa: E501
# Each expression's values as DuckDB SQL, written from the query text, not from the module.
EXPRESSION_SQL = {
    "Q3 revenue per order": f"select {REVENUE} from lineitem group by l_orderkey",
    "Q5 revenue per nation": f"select {REVENUE} from lineitem join supplier on l_suppkey = s_suppkey group by s_nationkey",  # noqa: E501
    "Q10 revenue per customer": f"select {REVENUE} from lineitem join orders on l_orderkey = o_orderkey group by o_custkey",  # noqa: E501
    "Q11 value per part": "select sum(ps_supplycost * ps_availqty) from partsupp "
    "group by ps_partkey",
    "Q13 orders per customer": C_COUNT,
    "Q13 customers per order count": f"select count(*) from ({C_COUNT}) t(c) group by c",
    "Q16 suppliers per part group": "select count(distinct ps_suppkey) from partsupp join part on ps_partkey = p_partkey group by p_brand, p_type, p_size",  # noqa: E501
    "Q21 lines per supplier": "select count(*) from lineitem group by l_suppkey",
    "Q22 substring(c_phone, 1, 2)": "select substring(c_phone, 1, 2) from customer",
}


@pytest.fixture(scope="module")
def analysis(tpch_dir: Path) -> Analysis:
    return analyse(0.01, tpch_dir)


@pytest.fixture(scope="module")
def con(tpch_dir: Path) -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect()
    for table in TPCH_TABLES:
        connection.sql(f"create view {table} as select * from '{tpch_dir / table}.parquet'")
    return connection


def _count(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    return int(con.sql(f"select count(distinct v) from ({sql}) t(v)").fetchall()[0][0])


def test_column_counts_agree_with_duckdb(
    analysis: Analysis, con: duckdb.DuckDBPyConnection
) -> None:
    assert len(analysis.columns) == 61  # TPC-H clause 1.4: 3+4+7+8+9+5+9+16 columns
    for c in analysis.columns:
        assert c.distinct == _count(con, f"select {c.column} from {c.table}"), c
    by_name = {f"{c.table}.{c.column}": c.distinct for c in analysis.columns}
    assert by_name["lineitem.l_orderkey"] == 15_000 and by_name["nation.n_name"] == 25


def test_sort_key_counts_agree_with_duckdb(
    analysis: Analysis, con: duckdb.DuckDBPyConnection
) -> None:
    assert set(EXPRESSION_SQL) == set(EXPRESSIONS)
    for k in analysis.keys:
        if k.source in EXPRESSION_SQL:
            sql = EXPRESSION_SQL[k.source]
        elif k.source.startswith("year("):
            table, column = k.source[5:-1].split(".")
            sql = f"select year({column}) from {table}"
        else:
            table, column = k.source.split(".")
            sql = f"select {column} from {table}"
        assert k.distinct == _count(con, sql), k


def test_query_table_is_well_formed() -> None:
    queries = {k.query for k in SORT_KEYS}
    assert queries | set(QUERIES_WITHOUT_ORDER_BY) == set(range(1, 23))
    assert not queries & set(QUERIES_WITHOUT_ORDER_BY)
    assert len(SORT_KEYS) == 32
    assert {k.kind for k in SORT_KEYS} == {"integer", "non-integer"}
    integer_types = {"identifier", "integer", "count", "count distinct", "extract year (integer)"}
    for k in SORT_KEYS:
        assert (k.kind == "integer") == (k.sql_type in integer_types), k
    # Spot checks against the specification's ORDER BY clauses.
    assert [k.key for k in SORT_KEYS if k.query == 2] == [
        "s_acctbal",
        "n_name",
        "s_name",
        "p_partkey",
    ]
    assert [k.key for k in SORT_KEYS if k.query == 16] == [
        "supplier_cnt",
        "p_brand",
        "p_type",
        "p_size",
    ]


def test_small_sf_everything_is_encodable(analysis: Analysis) -> None:
    # At SF 0.01 the largest column has 60,175 values < 2^16: a fact about SF, not TPC-H.
    assert all(c.encodable for c in analysis.columns)
    assert analysis.mean_table_fraction == 1.0
    assert analysis.tally("integer").keys == 10 and analysis.tally("non-integer").keys == 22
    assert analysis.tally("integer", distinct_sources=True).keys == 9  # o_year twice
    assert analysis.tally("non-integer", distinct_sources=True).keys == 16


def _toy(sf: float, distinct: int) -> Analysis:
    columns = (
        ColumnCount("nation", "n_name", 25),
        ColumnCount("orders", "o_orderkey", distinct),
        ColumnCount("orders", "o_orderdate", 2406),
    )
    keys = (
        KeyCount(3, "revenue", "sum of decimal", "non-integer", "Q3 revenue per order", distinct),
        KeyCount(18, "o_orderdate", "date", "non-integer", "orders.o_orderdate", 2406),
        KeyCount(3, "o_orderdate", "date", "non-integer", "orders.o_orderdate", 2406),
    )
    return Analysis(sf, columns, keys)


def test_statistics_and_report() -> None:
    big = _toy(1.0, ENCODABLE_BELOW)  # exactly 2^16 distinct is not encodable
    assert big.table_fractions() == {"nation": 1.0, "orders": 0.5}
    assert big.mean_table_fraction == 0.75 and big.pooled_fraction == 2 / 3
    assert big.tally("non-integer").encodable == 2
    assert big.tally("non-integer", distinct_sources=True).keys == 2
    rows = big.rows()
    assert rows[0]["ours"] == 0.75 and rows[0]["paper"] == PAPER["mean_table_fraction_encodable"]
    assert {r["paper"] for r in rows} >= {16, 10, 12, 11, 0.78}
    document = json.loads(json.dumps(big.as_dict()))
    assert document["tables"][1] == {
        "table": "orders",
        "columns": 2,
        "encodable_columns": 1,
        "fraction": 0.5,
    }
    assert document["keys"][0]["encodable"] is False


def test_sensitivity_names_what_changes() -> None:
    changes = sensitivity(_toy(0.01, 15_000), _toy(1.0, 1_500_000))
    assert [c.name for c in changes] == ["orders.o_orderkey", "Q3 revenue per order"]
    assert changes[0].encodable_a and not changes[0].encodable_b


def test_missing_table_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"region\.parquet: no such TPC-H table file"):
        analyse(1.0, tmp_path)


def test_data_dir_may_be_a_str(tpch_dir: Path, analysis: Analysis) -> None:
    from_str = analyse(0.01, str(tpch_dir))
    assert from_str == analysis and from_str.columns  # the same counts as from a Path


@pytest.mark.parametrize("sf", [1.0, 0.1, 0.001])
def test_tables_made_at_another_sf_are_refused(tpch_dir: Path, sf: float) -> None:
    """`analyse(1.0, dir_at_sf_0.01)` returned SF 0.01's counts labelled SF 1."""
    with pytest.raises(
        SpecError, match=rf"orders\.parquet: holds 15,000 orders, TPC-H at SF {sf:g} has .*0\.01"
    ):
        analyse(sf, tpch_dir)


def test_tables_made_at_another_sf_are_refused_before_any_count(
    tpch_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only ORDERS is read before the refusal: every table was read and every column
    counted first (most of the ~30 s of an analysis at SF 1)."""
    read: list[str] = []
    real = TpchData.__getitem__

    def reading(data: TpchData, name: str) -> object:
        read.append(name)
        return real(data, name)

    monkeypatch.setattr(TpchData, "__getitem__", reading)
    with pytest.raises(SpecError, match="holds 15,000 orders"):
        analyse(1.0, tpch_dir)
    assert set(read) == {"orders"}


def test_a_missing_table_is_named_before_the_sf_is_checked(tpch_dir: Path, tmp_path: Path) -> None:
    """A directory without LINEITEM (and orders of another SF) names the missing table."""
    for name in TPCH_TABLES[:-1]:
        (tmp_path / f"{name}.parquet").symlink_to(tpch_dir / f"{name}.parquet")
    with pytest.raises(SpecError, match=r"lineitem\.parquet: no such TPC-H table file"):
        analyse(1.0, tmp_path)


def test_the_sf_tables_were_not_made_at_is_said_as_given(tpch_dir: Path) -> None:
    """`:g` keeps six digits: SF 0.0012345678 was said as SF 0.00123457."""
    with pytest.raises(SpecError, match=r"TPC-H at SF 0\.0012345678 has 1,852 \(these"):
        analyse(0.0012345678, tpch_dir)


def test_the_analysis_repr_is_its_sf_and_fractions(analysis: Analysis) -> None:
    """The dataclass's repr listed every column and sort key counted: 7,930 characters at
    any scale factor, for docs/tpc.md's `sf1 = analyse(1.0)` in a notebook."""
    text = repr(analysis)
    assert "\n" not in text and len(text) < 120, text
    assert text.startswith("Analysis(sf=0.01, mean_table_fraction=")
    assert f"pooled_fraction={float(f'{analysis.pooled_fraction:.4g}')!r})" in text
