"""The bitonic sort kernel against numpy and the spec's vectors (§4.3, §13.1–13.3, §13.7)."""

from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from ndpkit.errors import ModelError, SpecError
from ndpkit.nascent.bitonic import argsort, expected_counts, geometry, network

# Spec §4.3, 1-based: (step, sub-step) → pairs with A/D.
SPEC_N8 = {
    (1, 1): "(1,2)A (3,4)D (5,6)A (7,8)D",
    (2, 1): "(1,3)A (2,4)A (5,7)D (6,8)D",
    (2, 2): "(1,2)A (3,4)A (5,6)D (7,8)D",
    (3, 1): "(1,5)A (2,6)A (3,7)A (4,8)A",
    (3, 2): "(1,3)A (2,4)A (5,7)A (6,8)A",
    (3, 3): "(1,2)A (3,4)A (5,6)A (7,8)A",
}


def test_n8_network_is_the_spec_schedule_comparator_by_comparator() -> None:
    expected = []
    for (step, sub), pairs in SPEC_N8.items():
        for pair in pairs.split():
            lo, hi = pair[1:-2].split(",")
            expected.append((step, sub, int(lo) - 1, int(hi) - 1, pair[-1] == "A"))
    got = [(c.step, c.sub_step, c.lo, c.hi, c.ascending) for c in network(8)]
    assert got == expected


def test_fig1_constructed_trace_ends_sorted() -> None:
    x = [4, 2, 8, 5, 6, 7, 1, 3]
    after: dict[tuple[int, int], list[int]] = {}
    for c in network(8):
        out_of_order = x[c.lo] > x[c.hi] if c.ascending else x[c.lo] < x[c.hi]
        if out_of_order:
            x[c.lo], x[c.hi] = x[c.hi], x[c.lo]
        after[(c.step, c.sub_step)] = list(x)
    assert after[(2, 2)] == [2, 4, 5, 8, 7, 6, 3, 1]
    assert after[(3, 1)] == [2, 4, 3, 1, 7, 6, 5, 8]
    assert after[(3, 2)] == [2, 1, 3, 4, 5, 6, 7, 8]
    assert after[(3, 3)] == list(range(1, 9))


@pytest.mark.parametrize(
    ("p", "exact", "approx", "merge"),
    [(8, 24, 18, 32), (16, 80, 64, 80), (32, 240, 200, 192), (64, 672, 576, 448)],
)
def test_eq2_comparator_counts(p: int, exact: int, approx: int, merge: int) -> None:
    g = geometry(p, 1)
    assert (g.sorter_comparators, g.sorter_comparators_approx, g.merger_comparators) == (
        exact,
        approx,
        merge,
    )
    assert len(network(p)) == exact
    assert expected_counts(p, p=p, l=1).cs_sorter == exact
    r = argsort(np.arange(p, dtype=np.uint32)[::-1].copy(), p=p, l=1)
    assert r.counts.sorter_comparators == exact and r.counts.merger_comparators == merge


def test_eq3_capacity_and_iterations() -> None:
    g = geometry(8, 8)
    assert (g.sequence_brams, g.sequence_brams + g.index_brams, g.capacity) == (128, 256, 131_072)
    assert geometry(16, 4).capacity == 131_072
    assert geometry(8, 8, key_bits=64).capacity == 65_536
    assert expected_counts(131_072).chunks == 1
    assert expected_counts(131_073).chunks == 2
    assert expected_counts(65_536, key_bits=64).chunks == 1
    assert expected_counts(65_537, key_bits=64).chunks == 2


def test_eq4_example_and_counts_of_the_pipeline() -> None:
    r = argsort(np.array([30, 10, 50, 20, 40], dtype=np.uint32))
    assert r.keys.tolist() == [10, 20, 30, 40, 50]
    assert r.indices.tolist() == [1, 3, 0, 4, 2]
    assert r.counts == expected_counts(5)
    assert r.counts.compare_swaps == 24


def _stable(keys: np.ndarray, descending: bool) -> np.ndarray:
    """numpy's stable argsort; descending through ~x, which reverses the order exactly."""
    return np.argsort(~keys if descending else keys, kind="stable")


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64, np.int32, np.int64])
@pytest.mark.parametrize("descending", [False, True])
def test_value_then_index_equals_numpy_stable_argsort(dtype: type, descending: bool) -> None:
    rng = np.random.default_rng(7)
    info = np.iinfo(dtype)
    for n in (0, 1, 2, 7, 100, 4097, 20_000):
        for high in (3, 1000, None):
            if high is None:
                keys = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
            else:
                keys = rng.integers(0, high, n).astype(dtype)
            r = argsort(keys, p=2, l=1, tie_break="value_then_index", descending=descending)
            expected = _stable(keys, descending)
            assert np.array_equal(r.indices, expected), (n, high)
            assert np.array_equal(r.keys, keys[expected])
            assert r.keys.dtype == keys.dtype


def test_value_only_is_sorted_and_a_permutation_with_pad_valued_keys() -> None:
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 5, 9_001).astype(np.uint32)
    keys[::4] = np.iinfo(np.uint32).max  # ties with the pad value
    r = argsort(keys, p=4, l=1)
    assert np.array_equal(r.keys, np.sort(keys))
    assert np.array_equal(np.sort(r.indices), np.arange(keys.size))
    assert np.array_equal(keys[r.indices], r.keys)


def test_paper_geometry_beyond_capacity_matches_numpy_and_closed_form() -> None:
    keys = np.random.default_rng(1).integers(0, 2**32, 300_000, dtype=np.uint64).astype(np.uint32)
    r = argsort(keys, tie_break="value_then_index")
    assert np.array_equal(r.indices, np.argsort(keys, kind="stable"))
    c = r.counts
    assert c == expected_counts(300_000)
    assert (c.padded_elements, c.chunks, c.dram_passes, c.onchip_merge_passes) == (524_288, 4, 3, 2)
    s = 19
    assert c.compare_swaps == 524_288 // 2 * s * (s + 1) // 2
    assert c.bram_reads_m1 == c.bram_reads_m2


def test_bad_input() -> None:
    keys = np.arange(10, dtype=np.uint32)
    with pytest.raises(SpecError, match="p"):
        argsort(keys, p=6)
    with pytest.raises(SpecError, match="l"):
        argsort(keys, l=3)
    with pytest.raises(SpecError, match="tie_break"):
        argsort(keys, tie_break="stable")  # type: ignore[arg-type]
    with pytest.raises(ModelError, match="generic_sort"):
        argsort(keys.astype(np.float32))
    with pytest.raises(ModelError, match="one-dimensional"):
        argsort(keys.reshape(2, 5))
    with pytest.raises(SpecError):
        geometry(8, 8, key_bits=16)
    with pytest.raises(SpecError):
        network(12)


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.ma.masked_array(np.array([3, 0, 2], np.int64), mask=[False, True, False]),
        lambda: pa.array([3, None, 2], pa.int64()),
        lambda: pl.Series([3, None, 2], dtype=pl.Int64),
    ],
    ids=["masked", "arrow", "polars"],
)
def test_keys_with_nulls_are_refused_as_nulls(make: Any) -> None:
    """A masked array was sorted by the values under its mask (the null first here); an
    Arrow or Polars integer column with a null was refused as float64 keys, which it is not."""
    with pytest.raises(ModelError, match=r"1 null\(s\)"):
        argsort(make())
    exact = argsort(pa.array([3, 2], pa.int64()), tie_break="value_then_index")
    assert exact.indices.tolist() == [1, 0]
