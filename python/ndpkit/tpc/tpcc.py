"""The TPC-C ORDER-LINE table, populated as TPC-C v5.11 clause 4.3.3.1 says, as Parquet.

Layout (clause 1.3.1) and population (clause 4.3.3.1), per order line:

| column | type (Arrow) | value |
|---|---|---|
| ol_o_id | int32 | the order, 1..3,000 within its district |
| ol_d_id | int32 | the district, 1..10 |
| ol_w_id | int32 | the warehouse, 1..W |
| ol_number | int32 | 1..O_OL_CNT, O_OL_CNT uniform in [5, 15] per order |
| ol_i_id | int32 | uniform in [1, 100,000] |
| ol_supply_w_id | int32 | = ol_w_id |
| ol_delivery_d | timestamp[us], nullable | = O_ENTRY_D if ol_o_id < 2,101, else null |
| ol_quantity | int32 | 5 |
| ol_amount | decimal128(6, 2) | 0.00 if ol_o_id < 2,101, else uniform in [0.01, 9,999.99] |
| ol_dist_info | string | a random a-string of 24 characters |

Choices the specification leaves open, made here:
- **Scale factor** (NASCENT2 spec option O14): SF s is s × the rows of one warehouse. It is
  realised as the first round(s × 30,000) orders of the population order (warehouse,
  district, order id): whole warehouses first, then whole districts of 3,000 orders, then a
  partial district holding order ids 1..r. SF 0.1 is thus exactly one district (3,000
  orders, both delivered and undelivered ones); SF 1 one warehouse; SF 5 five warehouses.
  The expected row count is 10 × the orders (the mean O_OL_CNT); the actual count varies
  with the seed by about ±0.2 % at SF 1.
- **O_ENTRY_D** is "the current date and time" at load; a fixed `LOAD_TIME` keeps files
  reproducible (pass another to `order_line`).
- **a-string characters**: the 62 ASCII letters and digits (the specification asks for a
  character set of at least 128 characters for the database, not for the generator).
- **Randomness**: each warehouse draws from its own stream `default_rng([seed, w])`, so a
  warehouse's rows do not depend on how many warehouses are generated.

Generation is vectorised numpy, one warehouse per Parquet row group (memory is bounded by
one warehouse, ~300,000 rows, whatever the SF).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from datetime import datetime

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ndpkit.errors import SpecError, whole_number
from ndpkit.files import literal_path, replacing
from ndpkit.tpc.tpch import (
    GeneratedTable,
    Progress,
    check_out_dir,
    check_room,
    check_scale_factor,
    directory_path,
    make_out_dir,
    missing_ancestors,
    remove_if_empty,
)

DISTRICTS_PER_WAREHOUSE = 10
ORDERS_PER_DISTRICT = 3_000
ORDERS_PER_WAREHOUSE = DISTRICTS_PER_WAREHOUSE * ORDERS_PER_DISTRICT
MIN_OL_CNT, MAX_OL_CNT = 5, 15
ITEMS = 100_000
DELIVERED_BELOW_O_ID = 2_101
"""Orders 1..2,100 of each district are delivered at load; 2,101..3,000 are new orders."""
DIST_INFO_CHARS = 24
QUANTITY = 5
MAX_AMOUNT_CENTS = 999_999
LOAD_TIME = datetime(2000, 1, 1)
DEFAULT_SEED = 20_250_101
PARQUET_BYTES_PER_SF = 9_500_000
"""A lower bound of the Parquet bytes `generate_tpcc` writes per unit of SF (9.64 MB at
SF 1 with the default seed, 9.64 GB at SF 1000): `check_room` refuses a run that cannot fit."""
ALPHANUMERIC = np.frombuffer(
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", dtype=np.uint8
)

SCHEMA = pa.schema(
    [
        pa.field("ol_o_id", pa.int32(), nullable=False),
        pa.field("ol_d_id", pa.int32(), nullable=False),
        pa.field("ol_w_id", pa.int32(), nullable=False),
        pa.field("ol_number", pa.int32(), nullable=False),
        pa.field("ol_i_id", pa.int32(), nullable=False),
        pa.field("ol_supply_w_id", pa.int32(), nullable=False),
        pa.field("ol_delivery_d", pa.timestamp("us")),
        pa.field("ol_quantity", pa.int32(), nullable=False),
        pa.field("ol_amount", pa.decimal128(6, 2), nullable=False),
        pa.field("ol_dist_info", pa.string(), nullable=False),
    ]
)


def order_count(sf: float) -> int:
    """Orders at scale factor `sf`: round(sf × 30,000), at least one."""
    check_scale_factor(sf)
    return max(1, round(sf * ORDERS_PER_WAREHOUSE))


def expected_rows(sf: float) -> int:
    """The expected ORDER-LINE rows at `sf`: 10 (the mean of O_OL_CNT) per order."""
    return order_count(sf) * (MIN_OL_CNT + MAX_OL_CNT) // 2


def order_line_batches(
    sf: float, seed: int = DEFAULT_SEED, load_time: datetime = LOAD_TIME
) -> Iterator[pa.RecordBatch]:
    """ORDER-LINE at `sf`, one record batch per warehouse (the last may be partial)."""
    # True was seed 1 and 1.5 numpy's TypeError from default_rng, deep in the generator
    seed = whole_number(seed, "seed", "an integer ≥ 0", least=0)
    orders = order_count(sf)
    for warehouse in range(1, math.ceil(orders / ORDERS_PER_WAREHOUSE) + 1):
        done = (warehouse - 1) * ORDERS_PER_WAREHOUSE
        count = min(ORDERS_PER_WAREHOUSE, orders - done)
        yield _warehouse(warehouse, count, np.random.default_rng([seed, warehouse]), load_time)


def order_line(sf: float, seed: int = DEFAULT_SEED, load_time: datetime = LOAD_TIME) -> pa.Table:
    """The whole ORDER-LINE table at `sf` in memory."""
    return pa.Table.from_batches(list(order_line_batches(sf, seed, load_time)), schema=SCHEMA)


def generate_tpcc(
    sf: float,
    out: str | os.PathLike[str],
    *,
    seed: int = DEFAULT_SEED,
    overwrite: bool = False,
    progress: Progress | None = None,
) -> GeneratedTable:
    """Write `out/order_line.parquet` atomically (a temporary name, then a rename)."""
    check_scale_factor(sf)
    whole_number(seed, "seed", "an integer ≥ 0", least=0)  # before a directory is made
    out = directory_path(out)  # a str as well (as `analyse` takes one)
    check_out_dir(out)
    check_room(out, sf * PARQUET_BYTES_PER_SF, "TPC-C order_line", sf)
    target = out / "order_line.parquet"
    # Before generating: a directory in the table's place was found only at the rename,
    # after the whole table was made (minutes at a large SF).
    if target.is_dir() or (target.exists() and not target.is_file()):
        raise SpecError(
            "exists and is not a file; --overwrite replaces table files only", source=str(target)
        )
    if target.exists() and not overwrite:
        raise SpecError(
            "already exists; pass overwrite (--overwrite) to replace it", source=str(target)
        )
    warehouses = math.ceil(order_count(sf) / ORDERS_PER_WAREHOUSE)
    # The table is written whole or not at all, also on Ctrl-C or a generator error.
    made = missing_ancestors(out)
    make_out_dir(out)
    try:
        with (
            replacing(target, overwrite=overwrite) as tmp,
            pq.ParquetWriter(literal_path(tmp), SCHEMA) as writer,
        ):
            for number, batch in enumerate(order_line_batches(sf, seed), 1):
                if progress is not None:
                    progress(f"generating TPC-C order_line: warehouse {number}/{warehouses}")
                writer.write_batch(batch)
    except BaseException:  # no empty output directory either
        remove_if_empty(made)
        raise
    rows = pq.read_metadata(literal_path(target)).num_rows
    return GeneratedTable("order_line", target, rows, target.stat().st_size)


def _warehouse(
    warehouse: int, orders: int, rng: np.random.Generator, load_time: datetime
) -> pa.RecordBatch:
    """`orders` orders of one warehouse, in (district, order id) order."""
    order_index = np.arange(orders, dtype=np.int32)
    district = order_index // ORDERS_PER_DISTRICT + 1
    o_id = order_index % ORDERS_PER_DISTRICT + 1
    ol_cnt = rng.integers(MIN_OL_CNT, MAX_OL_CNT + 1, size=orders)
    rows = int(ol_cnt.sum())
    starts = np.cumsum(ol_cnt) - ol_cnt
    ol_number = np.arange(rows, dtype=np.int32) - np.repeat(starts, ol_cnt).astype(np.int32) + 1
    ol_o_id = np.repeat(o_id, ol_cnt)
    delivered = ol_o_id < DELIVERED_BELOW_O_ID
    w_id = np.full(rows, warehouse, dtype=np.int32)
    cents = np.where(delivered, 0, rng.integers(1, MAX_AMOUNT_CENTS + 1, size=rows))
    entry_us = int((load_time - datetime(1970, 1, 1)).total_seconds()) * 1_000_000
    columns = [
        pa.array(ol_o_id),
        pa.array(np.repeat(district, ol_cnt)),
        pa.array(w_id),
        pa.array(ol_number),
        pa.array(rng.integers(1, ITEMS + 1, size=rows, dtype=np.int32)),
        pa.array(w_id),
        pa.array(np.full(rows, entry_us, dtype=np.int64), pa.timestamp("us"), mask=~delivered),
        pa.array(np.full(rows, QUANTITY, dtype=np.int32)),
        _decimal_cents(cents),
        _fixed_strings(rng.choice(ALPHANUMERIC, size=(rows, DIST_INFO_CHARS))),
    ]
    return pa.RecordBatch.from_arrays(columns, schema=SCHEMA)


def _decimal_cents(cents: np.ndarray) -> pa.Array:
    """decimal128(6, 2) from integer cents, built from its buffer (16-byte little-endian
    two's complement; every value here is ≥ 0, so the high word is 0): no per-value Python."""
    words = np.zeros((len(cents), 2), dtype=np.int64)
    words[:, 0] = cents
    return pa.Array.from_buffers(pa.decimal128(6, 2), len(cents), [None, pa.py_buffer(words)])


def _fixed_strings(chars: np.ndarray) -> pa.Array:
    """A string array from an (n, width) uint8 matrix: one buffer plus arithmetic offsets."""
    n, width = chars.shape
    offsets = np.arange(0, (n + 1) * width, width, dtype=np.int32)
    data = np.ascontiguousarray(chars)
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
