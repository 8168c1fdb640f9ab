"""The k-NN paper split through LocalExecutor's rows arena: the same answer as the partials,
and a worker's memory that does not grow with the data (its distances go to the arena).

The kernel subclass is defined here; worker processes import this module to unpickle it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ndpkit.kernels import run_in_memory
from ndpkit.kernels.knn import KnnRows, Segment
from ndpkit.runtime import LocalExecutor, generate_dataset, transfer


class CountedKnn(KnnRows):
    """knn8 that notes, in the parent, how many rows each pass's host part got."""

    merged_from_rows: list[int] = []  # noqa: RUF012  (filled in the parent by rows_merged)

    def rows_merged(self, rows: np.ndarray, state: Any) -> list[Segment]:
        CountedKnn.merged_from_rows.append(len(rows))
        return super().rows_merged(rows, state)


@pytest.mark.skipif(not transfer.ARENAS, reason="no rows arenas on this platform")
@pytest.mark.parametrize("chunk_bytes", [4000, 1 << 20])
def test_rows_path_gives_the_partials_answer(tmp_path: Path, chunk_bytes: int) -> None:
    kernel = CountedKnn(8)
    ds = generate_dataset(kernel, 3 << 20, 3, tmp_path / "knn8", seed=2, shard_bytes=200_000)
    params = kernel.params(2)
    CountedKnn.merged_from_rows.clear()
    with LocalExecutor(2) as executor:
        out = executor.run(kernel, ds, params, chunk_bytes=chunk_bytes)
    assert CountedKnn.merged_from_rows == [ds.records]  # the rows path was taken
    expected = run_in_memory(kernel, ds.read_all(), params, 4096)
    np.testing.assert_array_equal(out.result.indices, expected.indices)
    np.testing.assert_array_equal(out.result.distances_sq, expected.distances_sq)


@pytest.mark.skipif(not transfer.ARENAS, reason="no rows arenas on this platform")
def test_worker_memory_does_not_grow_with_the_distances(tmp_path: Path) -> None:
    """64 MiB of knn8 points is 8 MiB of distances: a worker that kept them as partials grew
    by that much; writing them into the arena it holds a chunk's worth."""
    kernel = KnnRows(8)
    chunk_bytes = 256 * 2**10
    ds = generate_dataset(kernel, 64 << 20, 1, tmp_path / "knn8", shard_bytes=16 << 20)
    (engine,) = LocalExecutor(1).run(kernel, ds, kernel.params(0), chunk_bytes=chunk_bytes).engines
    assert engine.bytes_in == 64 << 20
    assert engine.rss_growth_bytes < 20 * chunk_bytes  # 5 MiB, under the 8 MiB of distances
