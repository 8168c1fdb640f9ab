"""The TableFile and page byte formats (spec §3.1, §3.3): bytes by hand, round trips,
corrupt files, and the kernels reading a file end to end against a Polars/numpy sort."""

import struct
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from ndpkit.errors import ModelError, SpecError
from ndpkit.nascent import tablefile
from ndpkit.nascent.filesort import (
    SortOptions,
    decode_key_column,
    sort_key_section,
    sort_table_file,
)
from ndpkit.nascent.pages import (
    DataPage,
    decode_data_page,
    decode_dictionary_page,
    dictionary_page,
    encode_data_page,
    encode_dictionary_page,
)
from ndpkit.nascent.tablefile import HEADER_BYTES, read_table_file, write_table_file

LAYOUTS = ["row", "column", "hybrid"]
# Byte offsets of the header fields (struct "<IHBBQBIQQQHHI").
AT = {
    "magic": 0,
    "version": 4,
    "layout": 6,
    "key_encoding": 7,
    "n_rows": 8,
    "key_width_bytes": 16,
    "row_bytes": 17,
    "key_section_off": 21,
    "row_section_off": 29,
    "row_offsets_off": 37,
    "n_columns": 45,
    "key_column": 47,
    "schema_bytes": 49,
}


def _every_type(n: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    ints = {f"i{b}": rng.integers(-100, 100, n).astype(f"int{b}") for b in (8, 16, 32, 64)}
    uints = {f"u{b}": rng.integers(0, 200, n).astype(f"uint{b}") for b in (8, 16, 32, 64)}
    return pl.DataFrame(
        {
            **ints,
            **uints,
            "f32": rng.standard_normal(n).astype(np.float32),
            "f64": rng.standard_normal(n),
            "flag": rng.random(n) < 0.5,
            "text": pl.Series([f"v{i % 13}" * (i % 4) for i in range(n)], dtype=pl.String),
            "blob": pl.Series([bytes([i % 256]) * (i % 5) for i in range(n)], dtype=pl.Binary),
        }
    )


def test_header_schema_and_sections_by_hand(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {
            "k": pl.Series([30, 10, 50, 20, 40], dtype=pl.Int32),
            "price": [3.0, 1.0, 5.0, 2.0, 4.0],
        }
    )
    path = tmp_path / "t.nsc"
    header = write_table_file(frame, "k", path)
    raw = path.read_bytes()
    # 53-byte header, a 12 + 16-byte schema, then the keys and the rows on 4 KiB pages.
    assert HEADER_BYTES == 53
    assert raw[:4] == b"NSC2"
    fields = struct.unpack_from("<IHBBQBIQQQHHI", raw)
    assert fields == (tablefile.MAGIC, 1, 2, 0, 5, 4, 8, 4096, 8192, 0, 2, 0, 28)
    assert header.row_bytes == 8 and header.key_section_off == 4096
    schema = raw[53:81]
    assert schema[:12] == b"\x01\x00k" + bytes([4]) + bytes(8)  # int32, block_off 0
    assert schema[12:] == b"\x05\x00price" + bytes([11]) + bytes(8)  # float64
    assert raw[81:4096] == bytes(4096 - 81)
    assert raw[4096:4116] == np.array([30, 10, 50, 20, 40], "<i4").tobytes()
    assert raw[8192:] == np.array([3.0, 1.0, 5.0, 2.0, 4.0], "<f8").tobytes()
    assert len(raw) == 8192 + 40


def test_dictionary_and_data_pages_by_hand(tmp_path: Path) -> None:
    frame = pl.DataFrame({"country": ["USA", "Iran", "USA", "Brazil"], "n": [1, 2, 3, 4]})
    path = tmp_path / "t.nsc"
    write_table_file(frame, "country", path)  # utf8 key: DICT
    raw = path.read_bytes()
    t = read_table_file(path)
    assert (t.header.key_encoding, t.header.key_width_bytes) == ("dict", 1)
    dictionary = (
        struct.pack("<IBBH", 3, 1, 0, 8) + b"\x03\x00USA" + b"\x04\x00Iran" + b"\x06\x00Brazil"
    )
    at = t.header.key_section_off
    assert raw[at : at + len(dictionary)] == dictionary
    data = struct.pack("<QB", 4, 1) + bytes([0, 1, 0, 2])
    assert raw[at + 4096 : at + 4096 + len(data)] == data  # the DataPage on the next page
    assert t.dictionary is not None and t.dictionary.values == (b"USA", b"Iran", b"Brazil")
    assert t.data_page is not None and t.data_page.keys.tolist() == [0, 1, 0, 2]


def test_pages_round_trip_and_fixed_values() -> None:
    countries = [b"USA", b"IRAN", b"CROATIA", b"BRAZIL", b"GHANA"]
    page = dictionary_page(countries, None)
    assert page.l_max == 8  # spec §13.5
    assert decode_dictionary_page(encode_dictionary_page(page)) == (page, 8 + 2 * 5 + 25)
    fixed = dictionary_page([np.int64(v).tobytes() for v in (7, -1, 3)], 8)
    raw = encode_dictionary_page(fixed)
    assert raw[:8] == struct.pack("<IBBH", 3, 0, 8, 8)
    assert decode_dictionary_page(raw)[0] == fixed
    keys = np.array([3, 0, 65535], dtype=np.uint16)
    raw = encode_data_page(DataPage(keys))
    assert raw == struct.pack("<QB", 3, 2) + keys.astype("<u2").tobytes()
    page_back, size = decode_data_page(raw, n_values=65536)
    assert size == len(raw) and page_back.keys.tolist() == keys.tolist()
    with pytest.raises(ModelError):
        encode_dictionary_page(dictionary_page([b"x" * 40_000], None))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("key", ["i32", "u64", "f32", "flag", "i8", "text", "blob"])
def test_round_trip_every_type_layout_and_encoding(tmp_path: Path, layout: str, key: str) -> None:
    frame = _every_type(300)
    encodings = ["dict"] if key in ("text", "blob") else ["plain", "dict"]
    for encoding in encodings:
        path = tmp_path / f"{layout}-{key}-{encoding}.nsc"
        write_table_file(frame, key, path, layout=layout, key_encoding=encoding)  # type: ignore[arg-type]
        t = read_table_file(path)
        assert (t.header.layout, t.header.key_encoding) == (layout, encoding)
        assert_frame_equal(t.to_polars(), frame)


def test_fixed_width_rows_are_records(tmp_path: Path) -> None:
    frame = _every_type(100).drop("text", "blob")
    path = tmp_path / "t.nsc"
    header = write_table_file(frame, "i64", path, layout="hybrid")
    t = read_table_file(path)
    widths = [1, 2, 4, 1, 2, 4, 8, 4, 8, 1]  # every column but i64, in schema order
    assert header.row_bytes == sum(widths) and header.row_offsets_off == 0
    records = t.records()
    assert records.shape == (100, sum(widths))
    assert records[:, :1].view(np.int8).ravel().tolist() == frame["i8"].to_list()


def test_variable_rows_use_n_plus_one_offsets(tmp_path: Path) -> None:
    frame = pl.DataFrame({"k": [2, 1, 3], "s": ["", "ab", "xyz"]})
    path = tmp_path / "t.nsc"
    header = write_table_file(frame, "k", path, layout="hybrid")
    t = read_table_file(path)
    assert header.row_bytes == 0 and header.row_offsets_off % 4096 == 0
    assert t.row_offsets is not None and t.row_offsets.tolist() == [0, 4, 10, 17]
    assert t.rows.tobytes() == b"\0\0\0\0" + b"\2\0\0\0ab" + b"\3\0\0\0xyz"


@pytest.mark.parametrize(("distinct", "width"), [(1, 1), (256, 1), (257, 2), (65_536, 2)])
def test_dict_key_widths_8_and_16_bit(tmp_path: Path, distinct: int, width: int) -> None:
    keys = np.arange(70_000) % distinct
    frame = pl.DataFrame({"k": keys.astype(np.int64), "v": np.arange(70_000, dtype=np.uint16)})
    path = tmp_path / "t.nsc"
    header = write_table_file(frame, "k", path, key_encoding="dict")
    t = read_table_file(path)
    assert header.key_width_bytes == width
    assert t.data_page is not None and t.data_page.keys.dtype.itemsize == width
    assert t.dictionary is not None and len(t.dictionary.values) == distinct
    assert_frame_equal(t.to_polars(), frame)


def test_more_than_2_16_distinct_dict_keys_are_rejected(tmp_path: Path) -> None:
    frame = pl.DataFrame({"k": np.arange(65_537)})
    with pytest.raises(ModelError, match=r"key column 'k'.*2\^16"):
        write_table_file(frame, "k", tmp_path / "t.nsc", key_encoding="dict")
    write_table_file(frame, "k", tmp_path / "t.nsc")  # PLAIN holds it


@pytest.mark.parametrize("layout", LAYOUTS)
def test_empty_tables(tmp_path: Path, layout: str) -> None:
    frame = _every_type(0)
    for key, encoding in (("i32", "plain"), ("text", "dict"), ("f64", "dict")):
        path = tmp_path / f"{key}.nsc"
        header = write_table_file(frame, key, path, layout=layout, key_encoding=encoding)  # type: ignore[arg-type]
        assert header.n_rows == 0
        assert_frame_equal(read_table_file(path).to_polars(), frame)
    only_key = pl.DataFrame({"k": pl.Series([], dtype=pl.Int64)})
    write_table_file(only_key, "k", tmp_path / "k.nsc", layout=layout)
    assert_frame_equal(read_table_file(tmp_path / "k.nsc").to_polars(), only_key)


def test_arrow_tables_are_written_too(tmp_path: Path) -> None:
    table = pa.table({"k": pa.array([2, 1], pa.int32()), "s": pa.array(["b", "a"], pa.string())})
    write_table_file(table, "k", tmp_path / "t.nsc")
    assert read_table_file(tmp_path / "t.nsc").table.column("s").to_pylist() == ["b", "a"]


_TYPES = {
    "i8": (pl.Int8, st.integers(-128, 127)),
    "u16": (pl.UInt16, st.integers(0, 2**16 - 1)),
    "i64": (pl.Int64, st.integers(-(2**63), 2**63 - 1)),
    "u32": (pl.UInt32, st.integers(0, 2**32 - 1)),
    "f64": (pl.Float64, st.floats(allow_nan=True, allow_infinity=True)),
    "f32": (pl.Float32, st.floats(width=32, allow_nan=False)),
    "flag": (pl.Boolean, st.booleans()),
    "text": (pl.String, st.text(max_size=12)),
    "blob": (pl.Binary, st.binary(max_size=12)),
}


@st.composite
def _frames(draw: Any) -> tuple[pl.DataFrame, str, str, str]:
    names = draw(st.lists(st.sampled_from(sorted(_TYPES)), min_size=1, max_size=5, unique=True))
    n = draw(st.integers(0, 30))
    data = {
        name: pl.Series(
            name, draw(st.lists(_TYPES[name][1], min_size=n, max_size=n)), _TYPES[name][0]
        )
        for name in names
    }
    key = draw(st.sampled_from(names))
    variable = key in ("text", "blob")
    encoding = "dict" if variable else draw(st.sampled_from(["plain", "dict"]))
    return pl.DataFrame(data), key, draw(st.sampled_from(LAYOUTS)), encoding


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=_frames())
def test_property_round_trip(tmp_path: Path, case: tuple[pl.DataFrame, str, str, str]) -> None:
    frame, key, layout, encoding = case
    path = tmp_path / "t.nsc"
    write_table_file(frame, key, path, layout=layout, key_encoding=encoding)  # type: ignore[arg-type]
    back = read_table_file(path).to_polars()
    # Bit for bit: floats through their bits, so NaN payloads and -0.0 must survive.
    for name in frame.columns:
        a, b = frame[name].to_numpy(), back[name].to_numpy()
        if a.dtype.kind == "f":
            assert a.view(f"u{a.itemsize}").tolist() == b.view(f"u{b.itemsize}").tolist()
        else:
            assert a.tolist() == b.tolist(), name
    assert back.schema == frame.schema


# Corrupt files: each edit must raise SpecError naming the file and the field.


def _file(tmp_path: Path, frame: pl.DataFrame, key: str, **kw: Any) -> tuple[Path, bytearray]:
    path = tmp_path / "good.nsc"
    write_table_file(frame, key, path, **kw)
    return path, bytearray(path.read_bytes())


def _put(raw: bytearray, field: str, fmt: str, value: int) -> None:
    struct.pack_into(fmt, raw, AT[field], value)


def _expect(tmp_path: Path, raw: bytes | bytearray, field: str) -> None:
    bad = tmp_path / "bad.nsc"
    bad.write_bytes(bytes(raw))
    with pytest.raises(SpecError, match=field) as info:
        read_table_file(bad)
    assert str(bad) in str(info.value)
    assert info.value.field is not None and field.split("\\", 1)[0] in info.value.field


@pytest.mark.parametrize(
    ("field", "fmt", "value"),
    [
        ("magic", "<I", 0x12345678),
        ("version", "<H", 2),
        ("layout", "<B", 3),
        ("key_encoding", "<B", 2),
        ("key_width_bytes", "<B", 2),
        ("row_bytes", "<I", 99),
        ("key_section_off", "<Q", 4097),
        ("key_section_off", "<Q", 1 << 40),
        ("row_section_off", "<Q", 0),
        ("row_offsets_off", "<Q", 4096 * 3),
        ("n_columns", "<H", 0),
        ("key_column", "<H", 7),
        ("schema_bytes", "<I", 1 << 30),
        ("schema_bytes", "<I", 40),
    ],
)
def test_corrupt_header_fields(tmp_path: Path, field: str, fmt: str, value: int) -> None:
    frame = pl.DataFrame({"k": [3, 1, 2], "v": [1.0, 2.0, 3.0]})
    _, raw = _file(tmp_path, frame, "k")
    _put(raw, field, fmt, value)
    _expect(tmp_path, raw, field if field != "n_rows" else "key_section")


def test_truncated_files(tmp_path: Path) -> None:
    frame = pl.DataFrame({"k": [3, 1, 2], "s": ["a", "bb", "ccc"]})
    _, raw = _file(tmp_path, frame, "k")
    _expect(tmp_path, raw[:20], "header")
    _expect(tmp_path, raw[:60], "schema_bytes")
    _expect(tmp_path, raw[:-1], "row_offsets")
    _, fixed = _file(tmp_path, pl.DataFrame({"k": [3, 1, 2], "v": [1, 2, 3]}), "k")
    _expect(tmp_path, fixed[:-1], "row_section")
    _put(fixed, "n_rows", "<Q", 1000)
    _expect(tmp_path, fixed, "key_section")


def test_corrupt_schema(tmp_path: Path) -> None:
    _, raw = _file(tmp_path, pl.DataFrame({"k": [1], "v": [2]}), "k")
    raw[HEADER_BYTES + 3] = 99  # column 0's type code
    _expect(tmp_path, raw, "schema\\[0\\].type")
    _, raw = _file(tmp_path, pl.DataFrame({"k": [1], "v": [2]}), "k")
    raw[HEADER_BYTES + 2] = 0xFF  # a name byte that is not UTF-8
    _expect(tmp_path, raw, "schema\\[0\\].name")
    _, raw = _file(tmp_path, pl.DataFrame({"k": [1], "v": [2]}), "k", layout="column")
    struct.pack_into("<Q", raw, HEADER_BYTES + 12 + 2 + 1 + 1, 4097)  # v's block_off
    _expect(tmp_path, raw, "schema\\[1\\].block_off")


def test_corrupt_pages(tmp_path: Path) -> None:
    frame = pl.DataFrame({"c": ["USA", "Iran", "USA"], "n": [1, 2, 3]})
    path, raw = _file(tmp_path, frame, "c")
    at = read_table_file(path).header.key_section_off
    cases = [
        (at + 6, "<H", 6, "dictionary_page.L_Max"),
        (at + 6, "<H", 2, "dictionary_page.len"),
        (at + 4, "<B", 5, "dictionary_page.value_kind"),
        (at + 5, "<B", 3, "dictionary_page.fixed_width"),
        (at, "<I", 70_000, "dictionary_page.n_values"),
        (at + 4096 + 8, "<B", 3, "data_page.key_bytes"),
        (at + 4096 + 9, "<B", 2, "data_page.keys"),
        (at + 4096, "<Q", 2, "data_page.n_keys"),
        (at + 4096, "<Q", 1 << 20, "data_page"),
    ]
    for offset, fmt, value, field in cases:
        bad = bytearray(raw)
        struct.pack_into(fmt, bad, offset, value)
        _expect(tmp_path, bad, field.replace(".", "\\."))


def test_corrupt_rows(tmp_path: Path) -> None:
    frame = pl.DataFrame({"k": [3, 1, 2], "s": ["a", "bb", "ccc"]})
    path, raw = _file(tmp_path, frame, "k")
    h = read_table_file(path).header
    bad = bytearray(raw)
    struct.pack_into("<Q", bad, h.row_offsets_off + 8, 99)  # offsets decrease after 99
    _expect(tmp_path, bad, "row_offsets")
    bad = bytearray(raw)
    struct.pack_into("<I", bad, h.row_section_off, 50)  # row 0's length past its end
    _expect(tmp_path, bad, "rows")
    bad = bytearray(raw)
    struct.pack_into("<I", bad, h.row_section_off + 5, 0)  # row 1 shorter than its offsets
    _expect(tmp_path, bad, "row_offsets")
    bad = bytearray(raw)
    bad[h.row_section_off + 4] = 0xFF  # "a" becomes invalid UTF-8
    _expect(tmp_path, bad, "s")
    path, raw = _file(tmp_path, pl.DataFrame({"k": [1, 2], "f": [True, False]}), "k")
    bad = bytearray(raw)
    bad[read_table_file(path).header.row_section_off] = 2
    _expect(tmp_path, bad, "f")


def test_missing_file_and_bad_options(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="cannot read"):
        read_table_file(tmp_path / "absent.nsc")
    frame = pl.DataFrame({"k": [1, 2], "s": ["a", "b"]})
    with pytest.raises(SpecError, match="key_column"):
        write_table_file(frame, "nope", tmp_path / "t.nsc")
    with pytest.raises(SpecError, match="layout"):
        write_table_file(frame, "k", tmp_path / "t.nsc", layout="diagonal")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="key_encoding"):
        write_table_file(frame, "s", tmp_path / "t.nsc", key_encoding="plain")
    with pytest.raises(ModelError, match="nulls"):
        write_table_file(pl.DataFrame({"k": [1, None]}), "k", tmp_path / "t.nsc")
    with pytest.raises(ModelError, match="type"):
        write_table_file(pl.DataFrame({"k": [1], "d": [[1, 2]]}), "k", tmp_path / "t.nsc")
    assert not (tmp_path / "t.nsc").exists()


def test_writes_are_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "t.nsc"
    write_table_file(pl.DataFrame({"k": [1]}), "k", path)
    before = path.read_bytes()

    def fail(self: tablefile.Header) -> bytes:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tablefile.Header, "pack", fail)
    with pytest.raises(SpecError, match="cannot write"):
        write_table_file(pl.DataFrame({"k": [5, 6]}), "k", path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["t.nsc"]


# The kernels on a file: decode → sort → shuffle, against a stable Polars/numpy sort.


def test_spec_eq4_example_through_a_file(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {
            "k": pl.Series([30, 10, 50, 20, 40], dtype=pl.UInt32),
            "row": [b"r0", b"r1", b"r2", b"r3", b"r4"],
        }
    )
    path = tmp_path / "t.nsc"
    write_table_file(frame, "k", path)
    r = sort_table_file(path, options=SortOptions(tie_break="value_only"))
    assert r.key.indices.tolist() == [1, 3, 0, 4, 2]  # spec §13.4
    assert r.to_polars()["row"].to_list() == [b"r1", b"r3", b"r0", b"r4", b"r2"]


def test_decoder_reads_its_dictionary_from_the_dictionary_page(tmp_path: Path) -> None:
    countries = ["USA", "IRAN", "CROATIA", "BRAZIL", "GHANA"]
    frame = pl.DataFrame({"c": [*countries, "BRAZIL", "USA"], "n": range(7)})
    path = tmp_path / "t.nsc"
    write_table_file(frame, "c", path)
    t = read_table_file(path)
    decoded = decode_key_column(t)
    assert [v.decode() for v in decoded.values()] == frame["c"].to_list()
    assert decoded.counts.l_max == 8 and decoded.counts.keys == 7  # spec §13.5's table


def test_generic_sort_through_a_file(tmp_path: Path) -> None:
    frame = pl.DataFrame({"c": ["USA", "Croatia", "Ghana", "Iran", "Brazil"], "n": range(5)})
    path = tmp_path / "t.nsc"
    write_table_file(frame, "c", path)
    key = sort_key_section(read_table_file(path))
    assert key.flow == "C" and key.map_counts is not None and key.decode_counts is not None
    assert key.keys.to_pylist() == ["Brazil", "Croatia", "Ghana", "Iran", "USA"]  # §13.6


def _table(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "id": np.arange(n, dtype=np.int64),
            "k32": rng.integers(-50, 50, n).astype(np.int32),
            "k64": rng.integers(0, 300, n).astype(np.uint64),
            "name": [f"name-{v}" for v in rng.integers(0, 400, n)],
            "price": rng.standard_normal(n),
            "flag": rng.random(n) < 0.3,
        }
    )


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(
    ("key", "encoding", "flow"),
    [("k32", "plain", "A"), ("k64", "dict", "A"), ("name", "dict", "C"), ("price", "plain", "A")],
)
def test_end_to_end_file_decode_sort_shuffle(
    tmp_path: Path, layout: str, key: str, encoding: str, flow: str
) -> None:
    frame = _table(9_000, 1)
    path = tmp_path / "t.nsc"
    write_table_file(frame, key, path, layout=layout, key_encoding=encoding)  # type: ignore[arg-type]
    for options in (
        SortOptions(p=2, l=1),
        SortOptions(p=2, l=1, descending=True, dram_merge="merge_tree", merge_ways=3),
    ):
        out = tmp_path / "sorted.nsc"
        r = sort_table_file(path, out=out, options=options)
        reference = frame.sort(key, descending=options.descending, maintain_order=True)
        assert_frame_equal(r.to_polars(), reference)
        assert_frame_equal(read_table_file(out).to_polars(), reference)
        assert r.key.flow == flow
        assert r.key.sort_counts.chunks > 1  # the DRAM merge ran
        if encoding == "dict" and flow == "A":
            assert r.key.decode_counts is not None and r.key.decode_counts.keys == 9_000
        if not options.descending and frame[key].dtype.is_integer():
            expected = np.argsort(frame[key].to_numpy(), kind="stable")
            assert np.array_equal(r.key.indices, expected)


def test_hybrid_fixed_rows_go_through_the_shuffle_kernel(tmp_path: Path) -> None:
    frame = _table(5_000, 2).drop("name")
    path = tmp_path / "t.nsc"
    write_table_file(frame, "k32", path, layout="hybrid")
    r = sort_table_file(path)
    assert_frame_equal(r.to_polars(), frame.sort("k32", maintain_order=True))
    c = r.shuffle_counts
    assert c is not None and len(c.workers) == 6
    # §6.4 hybrid: the key column in bursts, each row 1 random access + 1 burst.
    assert c.key_read.random_accesses == 0
    assert c.key_read.sequential_bursts == -(-5_000 * 4 // 4096)
    row_bytes = read_table_file(path).header.row_bytes
    # Rows gathered, plus the sort kernel's sorted keys copied rather than gathered.
    assert c.reads.bytes == 5_000 * (row_bytes + 4)
    assert c.reads.random_accesses == 5_000


@pytest.mark.parametrize("dtype", [pl.Float32, pl.Float64])
@pytest.mark.parametrize("descending", [False, True])
def test_dict_floats_that_compare_equal_keep_their_row_order(
    tmp_path: Path, dtype: pl.DataType, descending: bool
) -> None:
    """-0.0 and 0.0 are two dictionary entries but one key: their rows stay interleaved in
    row order, as in a stable sort (and so do NaNs), and each row keeps its own bits."""
    rng = np.random.default_rng(0)
    keys = pl.Series("k", rng.choice([-1.5, 0.0, -0.0, 2.0, np.nan, np.inf], 300), dtype=dtype)
    frame = pl.DataFrame({"k": keys, "row": np.arange(300)})
    path = tmp_path / "f.tbl"
    write_table_file(frame, "k", path, key_encoding="dict")
    got = sort_table_file(path, options=SortOptions(descending=descending)).to_polars()
    want = frame.sort("k", descending=descending, maintain_order=True, nulls_last=True)
    assert got["row"].to_list() == want["row"].to_list()
    assert np.array_equal(np.signbit(got["k"].to_numpy()), np.signbit(want["k"].to_numpy()))
