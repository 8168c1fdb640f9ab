"""table_shape: rows by the specifications' cardinality rules, bytes per row measured once."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ndpkit.errors import SpecError, UnknownNameError
from ndpkit.tpc import SHAPED_TABLES, generate_tpch, order_line, shape, table_shape
from ndpkit.tpc.shape import LINEITEM_ROWS_AT_SF1, mean_string_bytes


def test_lineitem_rows_scale_with_sf() -> None:
    assert table_shape("lineitem", 1).rows == LINEITEM_ROWS_AT_SF1
    assert table_shape("lineitem", 5).rows == 5 * LINEITEM_ROWS_AT_SF1
    assert table_shape("lineitem", 0.1).rows == round(0.1 * LINEITEM_ROWS_AT_SF1)


@pytest.mark.parametrize("sf", [0.01, 0.1])
def test_lineitem_ratio_holds_on_generated_data(tmp_path: Path, tpch_dir: Path, sf: float) -> None:
    path = tpch_dir / "lineitem.parquet"
    if sf != 0.01:
        (made,) = generate_tpch(sf, tmp_path, ["lineitem"])
        path = made.path
    rows = pq.read_metadata(path).num_rows
    # dbgen draws 1..7 lines per order: SF 0.01 is +0.27 % off the SF 1 ratio, SF 0.1 closer.
    assert rows == pytest.approx(table_shape("lineitem", sf).rows, rel=0.005)


def test_lineitem_row_bytes_match_the_spec_definitions(tpch_dir: Path) -> None:
    columns = ["l_returnflag", "l_linestatus", "l_shipinstruct", "l_shipmode", "l_comment"]
    means = mean_string_bytes(pq.read_table(tpch_dir / "lineitem.parquet", columns=columns))
    # TPC-H clause 4.2.3: flags are 1 character; SHIPINSTRUCT one of 4 instructions (mean
    # 48/4 = 12); SHIPMODE one of 7 modes (30/7); COMMENT a text of 10..43 characters.
    expected = {"l_returnflag": 1, "l_linestatus": 1, "l_shipinstruct": 12}
    expected |= {"l_shipmode": 30 / 7, "l_comment": 26.5}
    assert means == pytest.approx(expected, abs=0.3)
    fixed_bytes = 4 * 4 + 4 * 8 + 3 * 4  # 4 identifier/integer, 4 decimal, 3 date columns
    lineitem = table_shape("lineitem", 1)
    assert lineitem.row_bytes == pytest.approx(fixed_bytes + sum(expected.values()), abs=0.5)
    assert lineitem.columns == pq.read_schema(tpch_dir / "lineitem.parquet").__len__() == 16
    # The NASCENT2 paper: lineitem at SF 5 is "≈ 3.2 GB".
    assert table_shape("lineitem", 5).table_bytes == pytest.approx(3.2e9, rel=0.05)


def test_order_line_shape() -> None:
    order_lines = table_shape("order_line", 1)
    assert order_lines.rows == 300_000 and order_lines.columns == order_line(0.1).num_columns == 10
    assert order_lines.row_bytes == 8 * 4 + 8 + 24  # 7 int32 + the amount, a timestamp, 24 chars
    assert table_shape("order_line", 5).rows == 1_500_000
    assert table_shape("order_line", 0.1).rows == 30_000


def test_cheap_after_the_first_call(monkeypatch: pytest.MonkeyPatch) -> None:
    table_shape("lineitem", 1)
    table_shape("order_line", 1)

    def no_generation(*args: object, **kwargs: object) -> None:
        raise AssertionError("table_shape generated data again")

    monkeypatch.setattr(shape, "generate_tpch", no_generation)
    monkeypatch.setattr(shape, "order_line", no_generation)
    sizes = [table_shape(name, sf).table_bytes for name in SHAPED_TABLES for sf in (0.1, 5)]
    assert sizes[1] == pytest.approx(50 * sizes[0], rel=1e-5) and sizes[3] == 50 * sizes[2]


def test_bad_input() -> None:
    with pytest.raises(UnknownNameError, match="known: lineitem, order_line"):
        table_shape("orders", 1)
    with pytest.raises(SpecError, match="sf: must be a finite number > 0"):
        table_shape("lineitem", 0)


def test_lineitems_means_are_kept_for_later_processes_and_measured_again_when_bad(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sampling LINEITEM with tpchgen-cli took 1.3 s of every `simulate nascent2`: its means
    are kept per generator binary; a kept file that is damaged or of other columns is
    measured again and rewritten, and nothing is kept with NDPKIT_CACHE_DIR empty."""
    monkeypatch.setenv("NDPKIT_CACHE_DIR", str(tmp_path))
    strings = ["l_returnflag", "l_linestatus", "l_shipinstruct", "l_shipmode", "l_comment"]
    measured = shape._kept_means("lineitem", strings)
    (kept,) = tmp_path.glob("tpch-lineitem-string-means-*.json")
    samples: list[str] = []
    real_sample = shape._sample

    def counted(name: str, columns: list[str]) -> object:
        samples.append(name)
        return real_sample(name, columns)

    monkeypatch.setattr(shape, "_sample", counted)
    assert shape._kept_means("lineitem", strings) == measured and samples == []
    for damage in ("{not json", '{"l_comment": 1.0}', '{"l_comment": "x"}', ""):
        kept.write_text(damage, encoding="utf-8")
        assert shape._kept_means("lineitem", strings) == measured
        assert json.loads(kept.read_text(encoding="utf-8")) == measured
    assert len(samples) == 4
    monkeypatch.setenv("NDPKIT_CACHE_DIR", "")
    kept.unlink()
    assert shape._kept_means("lineitem", strings) == measured
    assert list(tmp_path.iterdir()) == []
