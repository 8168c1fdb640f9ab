"""TPC-C ORDER-LINE: types, the population rules of clause 4.3.3.1, the SF rule, seeds."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from ndpkit.errors import SpecError
from ndpkit.tpc import generate_tpcc, order_line, tpcc


@pytest.fixture(scope="module")
def table() -> pa.Table:
    return order_line(1.0, seed=7)  # one warehouse: 30,000 orders


def test_arrow_types(table: pa.Table) -> None:
    assert table.schema == tpcc.SCHEMA
    types = {f.name: f.type for f in table.schema}
    assert types["ol_o_id"] == pa.int32() and types["ol_i_id"] == pa.int32()
    assert types["ol_delivery_d"] == pa.timestamp("us")
    assert types["ol_amount"] == pa.decimal128(6, 2)
    assert types["ol_dist_info"] == pa.string()


def test_keys_and_order_line_numbers(table: pa.Table) -> None:
    o_id = table["ol_o_id"].to_numpy()
    d_id = table["ol_d_id"].to_numpy()
    number = table["ol_number"].to_numpy()
    assert set(np.unique(d_id)) == set(range(1, 11))
    assert o_id.min() == 1 and o_id.max() == 3000
    assert (table["ol_w_id"].to_numpy() == 1).all()
    assert (table["ol_supply_w_id"].to_numpy() == table["ol_w_id"].to_numpy()).all()
    # O_OL_CNT = the lines per (district, order): uniform in [5, 15], every value reached.
    orders = d_id.astype(np.int64) * 10_000 + o_id
    _, ol_cnt = np.unique(orders, return_counts=True)
    assert len(ol_cnt) == 30_000
    assert ol_cnt.min() == 5 and ol_cnt.max() == 15 and len(np.unique(ol_cnt)) == 11
    assert ol_cnt.mean() == pytest.approx(10, abs=0.1)
    # ol_number runs 1..O_OL_CNT within each order.
    assert number.min() == 1 and (number <= 15).all()
    assert (number[1:][orders[1:] != orders[:-1]] == 1).all()


def test_delivery_date_and_amount_rules(table: pa.Table) -> None:
    o_id = table["ol_o_id"].to_numpy()
    delivered = o_id < 2101
    is_null = table["ol_delivery_d"].is_null().to_numpy(zero_copy_only=False)
    assert (is_null == ~delivered).all()
    dates = table.filter(pa.array(delivered))["ol_delivery_d"]
    assert pc.unique(dates).to_pylist() == [tpcc.LOAD_TIME]
    cents = pc.multiply(table["ol_amount"].cast(pa.float64()), 100).to_numpy()
    assert (cents[delivered] == 0).all()
    assert cents[~delivered].min() >= 1 and cents[~delivered].max() <= 999_999
    assert table["ol_amount"][0].as_py() == Decimal("0.00")
    assert cents[~delivered].mean() == pytest.approx(500_000, rel=0.02)  # uniform


def test_item_quantity_and_dist_info(table: pa.Table) -> None:
    items = table["ol_i_id"].to_numpy()
    assert items.min() >= 1 and items.max() <= 100_000
    assert items.mean() == pytest.approx(50_000, rel=0.02)
    assert pc.unique(table["ol_quantity"]).to_pylist() == [5]
    lengths = pc.utf8_length(table["ol_dist_info"])
    assert pc.min_max(lengths).as_py() == {"min": 24, "max": 24}
    assert pc.all(pc.match_substring_regex(table["ol_dist_info"], "^[0-9A-Za-z]{24}$")).as_py()


def test_seed_determines_the_table() -> None:
    assert order_line(0.2, seed=3).equals(order_line(0.2, seed=3))
    assert not order_line(0.2, seed=3).equals(order_line(0.2, seed=4))


def test_a_warehouse_does_not_depend_on_the_sf() -> None:
    two = order_line(2.0, seed=5)
    one = order_line(1.0, seed=5)
    assert two.slice(0, one.num_rows).equals(one)


@pytest.mark.parametrize(
    ("sf", "orders", "warehouses"),
    [(0.1, 3_000, 1), (0.05, 1_500, 1), (1.0, 30_000, 1), (2.5, 75_000, 3)],
)
def test_scale_factor_is_a_fraction_of_a_warehouse(sf: float, orders: int, warehouses: int) -> None:
    table = order_line(sf, seed=1)
    keys = pc.unique(
        pc.add(
            pc.multiply(pc.cast(table["ol_w_id"], pa.int64()), 100_000_000),
            pc.add(pc.multiply(pc.cast(table["ol_d_id"], pa.int64()), 10_000), table["ol_o_id"]),
        )
    )
    assert len(keys) == tpcc.order_count(sf) == orders
    assert pc.max(table["ol_w_id"]).as_py() == warehouses
    # Rows = the sum of O_OL_CNT; expected 10 per order (sd ≈ 3.2 per order).
    assert table.num_rows == pytest.approx(tpcc.expected_rows(sf), rel=6 * 3.17 / orders**0.5)


def test_sf_0_1_is_one_district_with_new_orders() -> None:
    table = order_line(0.1)
    assert pc.unique(table["ol_d_id"]).to_pylist() == [1]
    assert table["ol_delivery_d"].null_count > 0  # orders 2,101..3,000 are undelivered


def test_written_atomically(tmp_path: Path) -> None:
    made = generate_tpcc(0.1, tmp_path, seed=9)
    assert made.path == tmp_path / "order_line.parquet"
    assert os.listdir(tmp_path) == ["order_line.parquet"]
    assert pq.read_table(made.path).equals(order_line(0.1, seed=9))
    assert made.rows == pq.read_metadata(made.path).num_rows
    with pytest.raises(SpecError, match="already exists"):
        generate_tpcc(0.1, tmp_path)


def test_failure_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tpcc.order_line_batches

    def failing(
        sf: float, seed: int, load_time: datetime = tpcc.LOAD_TIME
    ) -> Iterator[pa.RecordBatch]:
        yield from real(1.0, seed)  # one warehouse written, then Ctrl-C
        raise KeyboardInterrupt

    monkeypatch.setattr(tpcc, "order_line_batches", failing)
    with pytest.raises(KeyboardInterrupt):
        generate_tpcc(2.0, tmp_path)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(("sf", "seed", "match"), [(0.0, 1, "sf: must"), (1.0, -1, "seed: must")])
def test_bad_input(sf: float, seed: int, match: str) -> None:
    with pytest.raises(SpecError, match=match):
        order_line(sf, seed=seed)


def test_a_failed_generation_leaves_no_output_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tpcc.order_line_batches

    def failing(sf: float, seed: int) -> Iterator[pa.RecordBatch]:
        yield from real(sf, seed)
        raise SpecError("the generator failed")

    monkeypatch.setattr(tpcc, "order_line_batches", failing)
    with pytest.raises(SpecError, match="the generator failed"):
        generate_tpcc(0.001, tmp_path / "new")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "kept").mkdir()  # a directory that was there before stays
    with pytest.raises(SpecError, match="the generator failed"):
        generate_tpcc(0.001, tmp_path / "kept")
    assert [p.name for p in tmp_path.iterdir()] == ["kept"]


@pytest.mark.parametrize("overwrite", [True, False])
def test_a_directory_in_the_tables_place_is_refused_before_generating(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, overwrite: bool
) -> None:
    """It was found at the rename, after the whole table was generated (minutes at a large
    SF); `data tpch` checks first."""

    def not_generated(*args: object, **kwargs: object) -> Iterator[pa.RecordBatch]:
        pytest.fail("generated")
        yield  # a generator, as the real one

    monkeypatch.setattr(tpcc, "order_line_batches", not_generated)
    (tmp_path / "order_line.parquet" / "keep").mkdir(parents=True)
    with pytest.raises(SpecError, match="exists and is not a file; --overwrite replaces table"):
        generate_tpcc(1.0, tmp_path, overwrite=overwrite)
    assert [p.name for p in tmp_path.iterdir()] == ["order_line.parquet"]
    assert (tmp_path / "order_line.parquet" / "keep").is_dir()


def test_out_may_be_a_str(tmp_path: Path) -> None:
    """`generate_tpcc(0.01, "dir")` failed: 'str' object has no attribute 'exists'."""
    made = generate_tpcc(0.001, str(tmp_path / "out"))
    assert made.path == tmp_path / "out" / "order_line.parquet" and made.rows > 0
