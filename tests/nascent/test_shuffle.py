"""The shuffle kernel against numpy fancy indexing, Eq. 4 and the §6.4 access table."""

import itertools

import numpy as np
import pytest

from ndpkit.errors import ModelError, SpecError
from ndpkit.nascent.bitonic import argsort
from ndpkit.nascent.shuffler import BURST_BYTES, Layout, shuffle

LAYOUTS: tuple[Layout, ...] = ("row", "column", "hybrid")


def _table(n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [
        rng.integers(0, 50, n).astype(np.uint32),  # the key
        rng.normal(size=n),
        rng.integers(-5, 5, (n, 3)).astype(np.int16),  # a fixed-size sub-array per row
        np.array([f"r{i}" for i in range(n)], dtype="S6"),
        rng.integers(0, 2, n).astype(bool),
    ]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_eq4_example_moves_rows_1_3_0_4_2(layout: Layout) -> None:
    keys = np.array([30, 10, 50, 20, 40], dtype=np.uint32)
    sorted_ = argsort(keys)
    assert sorted_.indices.tolist() == [1, 3, 0, 4, 2]
    table = [keys, np.array([b"a", b"b", b"c", b"d", b"e"]), np.arange(5.0)]
    r = shuffle(table, sorted_.indices, layout=layout, sorted_keys=sorted_.keys)
    for out, column in zip(r.columns, table, strict=True):
        assert out.tobytes() == column[[1, 3, 0, 4, 2]].tobytes()
    assert r.columns[1].tolist() == [b"b", b"d", b"a", b"e", b"c"]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("n", [0, 1, 6, 7, 1000, 25_013])
def test_matches_fancy_indexing(layout: Layout, n: int) -> None:
    table = _table(n, n)
    order = argsort(table[0], tie_break="value_then_index")
    for keys in (None, order.keys):
        r = shuffle(table, order.indices, layout=layout, sorted_keys=keys)
        for out, column in zip(r.columns, table, strict=True):
            assert out.dtype == column.dtype and out.shape == column.shape
            assert np.array_equal(out, column[order.indices])
        ranges = [(w.first_row, w.end_row) for w in r.counts.workers]
        assert len(ranges) == 6 and ranges[0][0] == 0 and ranges[-1][1] == n
        assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
        assert sum(w.reads.bytes for w in r.counts.workers) == r.counts.reads.bytes


def test_access_counts_are_the_spec_table() -> None:
    n = 3000
    table = _table(n, 1)
    order = argsort(table[0])
    row_bytes = sum(c.dtype.itemsize * (c.shape[1] if c.ndim > 1 else 1) for c in table)
    key_blocks = -(-n * 4 // BURST_BYTES)
    columns = len(table)
    expected = {  # layout: (key read random, key read bursts, gather random, gather bursts)
        "column": (0, key_blocks, (columns - 1) * n, 0),
        "row": (n, 0, n, n),
        "hybrid": (0, key_blocks, n, n),
    }
    for layout, (kr, kb, gr, gb) in expected.items():
        r = shuffle(table, order.indices, layout=layout, sorted_keys=order.keys)  # type: ignore[arg-type]
        c = r.counts
        assert (c.key_read.random_accesses, c.key_read.sequential_bursts) == (kr, kb), layout
        key_copy = 0
        if layout != "row":
            key_copy = sum(-(-(w.end_row - w.first_row) * 4 // BURST_BYTES) for w in c.workers)
        assert (c.reads.random_accesses, c.reads.sequential_bursts - key_copy) == (gr, gb), layout
        assert c.reads.bytes == c.writes.bytes == n * row_bytes
        assert c.writes.random_accesses == 0


def test_bad_input() -> None:
    table = _table(5, 2)
    with pytest.raises(ModelError, match="permutation"):
        shuffle(table, np.array([0, 1, 1, 2, 3]))
    with pytest.raises(ModelError, match="indices"):
        shuffle(table, np.array([0, 1, 2, 3, 5]))
    with pytest.raises(ModelError, match="rows"):
        shuffle([table[0], np.arange(4)], np.arange(5))
    with pytest.raises(ModelError, match="object"):
        shuffle([table[0], np.array(["a"] * 5, dtype=object)], np.arange(5))
    with pytest.raises(ModelError, match="dtype"):
        shuffle(table, np.arange(5), sorted_keys=np.arange(5, dtype=np.int64))
    with pytest.raises(SpecError, match="layout"):
        shuffle(table, np.arange(5), layout="columnar")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="workers"):
        shuffle(table, np.arange(5), workers=0)
    with pytest.raises(ModelError, match="key column"):
        shuffle(table, np.arange(5), key_column=9)


def test_columns_that_are_not_a_list_of_arrays_are_named() -> None:
    """One array, or a dict of them, given for the table: its rows (or keys) were taken for
    columns, and the error was numpy's ambiguous truth value, or 'column 0 has shape ();
    every column needs 0 rows'."""
    keys = np.array([3, 1, 2], dtype=np.uint32)
    order = np.array([1, 2, 0])
    with pytest.raises(SpecError, match=r"columns: must be a list of arrays.*give \[column\]"):
        shuffle(keys, order)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match=r"got dict: give list\(table.values\(\)\)"):
        shuffle({"k": keys}, order)  # type: ignore[arg-type]
    with pytest.raises(ModelError, match=r"column 0 is one value \(array\(3"):
        shuffle([keys[0], keys], order)
    assert shuffle([keys], order).columns[0].tolist() == [1, 2, 3]
