"""How big TPC-H LINEITEM and TPC-C ORDER-LINE are at any scale factor, without making them.

`table_shape("lineitem", 5)` → rows, mean bytes per row and columns. Rows follow each
specification's cardinality rule; bytes per row are those of a **plain binary row layout**:

- fixed-width columns at the narrowest byte-aligned width their specification datatype needs:
  TPC-H identifier and integer 4 B (≥ 2^31 values), decimal 8 B (±9,999,999,999.99 as
  scaled cents), date 4 B (days); TPC-C integers 4 B, numeric(6, 2) 4 B (scaled cents),
  date-and-time 8 B (microseconds; a null delivery date still occupies its slot);
- strings at their **mean length measured on generated data** (no padding, no length
  prefix): LINEITEM at SF 0.01 from tpchgen-cli, ORDER-LINE at SF 0.1 from `tpcc`.
  The tests check the measured means against the specifications' definitions (e.g.
  L_COMMENT is a text of random length 10..43, mean 26.5).

The measurement runs once per process (cached): about 1.3 s for LINEITEM, kept in the
cache directory for later processes (`_kept_means`), 0.03 s for ORDER-LINE.
At SF 5 this layout gives LINEITEM ≈ 3.1 GB, against the NASCENT2 paper's "≈ 3.2 GB".
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ndpkit.errors import SpecError, UnknownNameError
from ndpkit.files import cache_root, write_atomic
from ndpkit.tpc.tpcc import expected_rows, order_line
from ndpkit.tpc.tpch import check_scale_factor, find_tpchgen, generate_tpch

LINEITEM_ROWS_AT_SF1 = 6_001_215
"""TPC-H: 1,500,000 × SF orders of 1..7 lines each; dbgen's exact count at SF 1."""

MEASURE_SF = {"lineitem": 0.01, "order_line": 0.1}

# Column → width in the plain binary row layout; None marks a string (mean measured length).
_WIDTH_BYTES: dict[str, dict[str, int | None]] = {
    "lineitem": {
        "l_orderkey": 4, "l_partkey": 4, "l_suppkey": 4, "l_linenumber": 4,
        "l_quantity": 8, "l_extendedprice": 8, "l_discount": 8, "l_tax": 8,
        "l_returnflag": None, "l_linestatus": None,
        "l_shipdate": 4, "l_commitdate": 4, "l_receiptdate": 4,
        "l_shipinstruct": None, "l_shipmode": None, "l_comment": None,
    },
    "order_line": {
        "ol_o_id": 4, "ol_d_id": 4, "ol_w_id": 4, "ol_number": 4, "ol_i_id": 4,
        "ol_supply_w_id": 4, "ol_delivery_d": 8, "ol_quantity": 4, "ol_amount": 4,
        "ol_dist_info": None,
    },
}  # fmt: skip

SHAPED_TABLES = tuple(_WIDTH_BYTES)


@dataclass(frozen=True)
class TableShape:
    """A table's size at one scale factor in the plain binary row layout."""

    rows: int
    row_bytes: float
    """Mean bytes per row."""
    columns: int

    @property
    def table_bytes(self) -> float:
        return self.rows * self.row_bytes


def table_shape(name: str, sf: float) -> TableShape:
    """`name` ("lineitem" or "order_line") at scale factor `sf` (> 0)."""
    if name not in _WIDTH_BYTES:
        raise UnknownNameError("table", name, list(SHAPED_TABLES))
    check_scale_factor(sf)
    return TableShape(_rows(name, sf), row_bytes(name), len(_WIDTH_BYTES[name]))


def _rows(name: str, sf: float) -> int:
    if name == "lineitem":
        return max(1, round(LINEITEM_ROWS_AT_SF1 * sf))
    return expected_rows(sf)


@cache
def row_bytes(name: str) -> float:
    """Mean bytes per row of `name`: fixed widths plus measured mean string lengths."""
    widths = _WIDTH_BYTES[name]
    strings = [column for column, width in widths.items() if width is None]
    means = _kept_means(name, strings)
    return sum(width or 0 for width in widths.values()) + sum(means.values())


def _kept_means(name: str, strings: list[str]) -> dict[str, float]:
    """The mean string lengths of `name`: LINEITEM's measured once per tpchgen-cli binary
    and kept in the cache directory (`files.cache_root`): generating its sample took 1.3 s of
    every `simulate nascent2` and `reproduce nascent2`. The generator is deterministic, so
    the same binary gives the same means; a kept file that cannot be read, or that does
    not hold these columns' means, is measured again and rewritten."""
    path = _means_path(name)
    if path is not None:
        with contextlib.suppress(OSError, ValueError):
            kept = json.loads(path.read_text(encoding="utf-8"))
            if _means_of(kept, strings):
                return dict(kept)
    means = mean_string_bytes(_sample(name, strings))
    if path is not None:
        with contextlib.suppress(OSError, SpecError):
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, json.dumps(means))
    return means


def _means_of(kept: object, strings: list[str]) -> bool:
    """Whether a kept document holds a finite mean for each of `strings` and nothing else."""
    return (
        isinstance(kept, dict)
        and sorted(kept) == sorted(strings)
        and all(isinstance(v, float) and math.isfinite(v) for v in kept.values())
    )


def _means_path(name: str) -> Path | None:
    """Where `name`'s means are kept: by the generator binary's identity (path, size and
    modification time), so that another tpchgen-cli measures again; None for ORDER-LINE
    (made here in 0.03 s) or where nothing is kept."""
    root = cache_root()
    if name != "lineitem" or root is None:
        return None
    try:
        tool = find_tpchgen().resolve()
        stat = tool.stat()
    except (OSError, SpecError):
        return None
    identity = f"{tool}:{stat.st_size}:{stat.st_mtime_ns}:{MEASURE_SF[name]}"
    digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
    return root / f"tpch-{name}-string-means-{digest}.json"


def mean_string_bytes(table: pa.Table) -> dict[str, float]:
    """Each column's mean UTF-8 length in bytes."""
    return {
        column: float(pc.mean(pc.binary_length(table[column].cast(pa.string()))).as_py())
        for column in table.column_names
    }


def _sample(name: str, columns: list[str]) -> pa.Table:
    sf = MEASURE_SF[name]
    if name == "order_line":
        return order_line(sf).select(columns)
    with tempfile.TemporaryDirectory(prefix="ndpkit-shape-") as directory:
        (made,) = generate_tpch(sf, Path(directory), [name])
        return pq.read_table(made.path, columns=columns)
