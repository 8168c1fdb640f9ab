"""Dictionary encoding, renumbering and the generic sort (spec §8, Fig. 5(b), §13.6, §13.8)."""

from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from ndpkit.errors import ModelError
from ndpkit.nascent.bitonic import argsort
from ndpkit.nascent.decoder import decode
from ndpkit.nascent.dictionary import (
    MAX_DISTINCT,
    URAM_BYTES,
    encode,
    map_keys,
    placement,
    renumber,
)
from ndpkit.nascent.generic import generic_sort

DICTIONARY = np.array(["USA", "Iran", "Croatia", "Brazil", "Ghana", "Chile"])


def test_fig5b_steps_one_by_one() -> None:
    data_page = np.array([0, 2, 4, 1, 3], dtype=np.uint8)
    r = renumber(DICTIONARY)
    assert r.sorted.tolist() == ["Brazil", "Chile", "Croatia", "Ghana", "Iran", "USA"]
    assert r.mapping.tolist() == [5, 4, 2, 0, 3, 1]  # USA → 5, Brazil → 0 [paper]
    assert r.mapping_bytes == 12
    mapped, counts = map_keys(data_page, r)
    assert mapped.dtype == np.uint32 and mapped.tolist() == [5, 2, 3, 4, 0]  # [paper]
    assert counts.table_copies == 10  # the decoder in fixed mode, O7 lanes for 8-bit keys
    s = argsort(mapped)
    assert s.keys.tolist() == [0, 2, 3, 4, 5]  # [paper]
    decoded = decode(r.sorted.tolist(), s.keys)
    assert decoded.values() == [b"Brazil", b"Croatia", b"Ghana", b"Iran", b"USA"]


def test_largest_key_mapping_table_is_128_kib() -> None:
    # §3.4: u16[U] with U ≤ 2^16, so at most 2^16 × 2 B = 128 KiB (one value more is refused,
    # test_more_than_2_16_distinct_values_is_a_model_error).
    values = np.random.default_rng(3).permutation(MAX_DISTINCT).astype(np.float64)
    r = renumber(values)
    assert r.mapping_bytes == 128 * 1024
    assert r.mapping.dtype == np.uint16 and r.mapping[values.argmax()] == MAX_DISTINCT - 1


def test_fig5b_through_generic_sort() -> None:
    column = DICTIONARY[[0, 2, 4, 1, 3]]
    r = generic_sort(column)
    assert r.values.tolist() == ["Brazil", "Croatia", "Ghana", "Iran", "USA"]
    assert r.indices.tolist() == [4, 1, 2, 3, 0]
    assert r.placement == "fpga" and r.decode_counts is not None


def test_encode_numbers_values_in_first_seen_order() -> None:
    e = encode(np.array([7.5, -1.0, 7.5, 3.0, -1.0]))
    assert e.dictionary.tolist() == [7.5, -1.0, 3.0]
    assert e.keys.tolist() == [0, 1, 0, 2, 1] and e.key_bits == 8
    wide = encode(np.arange(300) % 257)
    assert wide.key_bits == 16 and wide.dictionary.size == 257
    zeros = encode(np.array([0.0, -0.0, 0.0]))
    assert zeros.dictionary.size == 2  # lossless: the sign of zero is kept


@pytest.mark.parametrize(
    "column",
    [
        np.array(["pear", "apple", "fig", "apple", "kiwi", "", "fig", "ápple"]),
        np.array([b"x", b"ab", b"", b"ab", b"zz"], dtype="S2"),
        np.array(["b", "a", "c", "a"], dtype=object),
        np.array([3.5, -2.0, 1e9, -2.0, np.inf, -np.inf, 0.5], dtype=np.float32),
        np.array([-5, 2**40, 0, -5, 7], dtype=np.int64),
    ],
)
def test_generic_sort_matches_numpy_stable_argsort(column: np.ndarray) -> None:
    r = generic_sort(column, tie_break="value_then_index")
    expected = np.argsort(column, kind="stable")
    assert np.array_equal(r.indices, expected)
    assert r.values.dtype == column.dtype
    assert r.values.tolist() == column[expected].tolist()
    d = generic_sort(column, tie_break="value_then_index", descending=True)
    assert d.values.tolist() == column[expected].tolist()[::-1]


def test_generic_sort_on_many_rows_and_the_host_fallback() -> None:
    rng = np.random.default_rng(5)
    words = np.array([f"w{i:05d}" for i in rng.permutation(3000)])
    column = words[rng.integers(0, words.size, 50_000)]
    on_chip = generic_sort(column, tie_break="value_then_index")
    assert on_chip.placement == "fpga"
    assert np.array_equal(on_chip.indices, np.argsort(column, kind="stable"))
    fallback = generic_sort(column, tie_break="value_then_index", budget_bytes=1024)
    assert fallback.placement == "host" and fallback.decode_counts is None
    assert np.array_equal(fallback.values, on_chip.values)
    assert placement(4096, 2, 8192) == "fpga" and placement(4097, 2, 8192) == "host"


def test_empty_and_signed_zero_columns() -> None:
    empty = generic_sort(np.array([], dtype=np.float64))
    assert empty.values.size == 0 and empty.indices.size == 0
    r = generic_sort(np.array([0.0, -1.0, -0.0, 2.0]))
    assert r.values.tolist() == [-1.0, 0.0, -0.0, 2.0]  # equal zeros keep their bits
    assert np.signbit(r.values).tolist() == [True, False, True, False]


def test_more_than_2_16_distinct_values_is_a_model_error() -> None:
    column = np.arange(MAX_DISTINCT + 1)
    with pytest.raises(ModelError, match="2\\^16"):
        encode(column)
    with pytest.raises(ModelError, match="2\\^16"):
        generic_sort(column)
    with pytest.raises(ModelError, match="2\\^16"):
        renumber(column)
    assert encode(np.arange(MAX_DISTINCT)).key_bits == 16


def test_unsortable_values_are_model_errors() -> None:
    with pytest.raises(ModelError, match="ordered"):
        encode(np.array(["a", 1, None], dtype=object))
    with pytest.raises(ModelError, match="twice"):
        renumber(np.array(["a", "b", "a"]))
    with pytest.raises(ModelError, match="one-dimensional"):
        encode(np.zeros((2, 2)))


@pytest.mark.parametrize(
    "make",
    [
        lambda: pa.array([2**53 + 1, 2**53, None], pa.int64()),
        lambda: pa.chunked_array([[2**53 + 1], [2**53, None]]),
        lambda: pl.Series([2**53 + 1, None, 2**53]),
        lambda: np.ma.masked_array([2**53 + 1, 0, 2**53], mask=[False, True, False]),
    ],
    ids=["arrow", "arrow-chunked", "polars", "masked"],
)
def test_a_column_with_nulls_is_refused_not_sorted_as_other_values(make: Any) -> None:
    """np.asarray turned an Arrow or Polars integer column with a null into floats (2^53 + 1
    became 2^53, a tie, and the values came back changed) with the null as NaN, first in a
    descending sort; a masked array lost its mask. Without the nulls the values are exact."""
    with pytest.raises(ModelError, match=r"1 null\(s\)"):
        generic_sort(make())
    with pytest.raises(ModelError, match="null"):
        encode(make())
    exact = generic_sort(pa.array([2**53 + 1, 2**53], pa.int64()), tie_break="value_then_index")
    assert exact.values.tolist() == [2**53, 2**53 + 1]
    assert exact.indices.tolist() == [1, 0]


@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
def test_value_then_index_orders_long_doubles_finer_than_float64(descending: bool) -> None:
    """Values that differ below float64's precision (long doubles 2^-60 apart) are distinct:
    they were one equality class, so "value_then_index" left them in row order, unsorted."""
    one = np.longdouble(1)
    column = np.array([one + np.longdouble(2**-60), one, one + np.longdouble(2**-61), one + 1])
    if column[0] == column[1]:
        pytest.skip("this platform's long double is float64")
    r = generic_sort(column, tie_break="value_then_index", descending=descending)
    expected = np.argsort(-column if descending else column, kind="stable")
    assert r.indices.tolist() == expected.tolist()
    assert r.values.tolist() == column[expected].tolist()


@pytest.mark.parametrize("descending", [False, True], ids=["asc", "desc"])
@pytest.mark.parametrize("budget", [URAM_BYTES, 0], ids=["fpga-decode", "host-decode"])
def test_value_then_index_keeps_equal_zeros_and_nans_in_row_order(
    descending: bool, budget: int
) -> None:
    """-0.0 and 0.0 are two dictionary entries (distinct bits) but equal values, as are two
    NaNs of different payloads: with "value_then_index" they keep their row order, as
    `keys._float_keys` and `filesort` order them; each row's own bits are decoded."""
    other_nan = np.array([0x7FF8_0000_0000_0001], dtype=np.uint64).view(np.float64)[0]
    column = np.array([0.0, -0.0, 1.5, np.nan, -0.0, 0.0, -2.0, other_nan, -0.0, 0.0])
    r = generic_sort(
        column, tie_break="value_then_index", descending=descending, budget_bytes=budget
    )
    rank = np.where(np.isnan(column), np.inf, column + 0.0)  # NaN above every number here
    expected = np.argsort(-rank if descending else rank, kind="stable")
    assert r.indices.tolist() == expected.tolist()
    assert r.placement == ("fpga" if budget else "host")
    assert np.array_equal(r.values.view(np.uint64), column[r.indices].view(np.uint64))
