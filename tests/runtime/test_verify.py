"""Streamed verification (`ndpkit.runtime.verify`): the same verdict as the whole-data
reference on right answers, and a failure on every kind of wrong one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ndpkit.kernels import Kernel, KernelMismatchError, get_kernel, kernel_names, run_in_memory
from ndpkit.kernels.knn import Neighbours, ReferenceNeighbours
from ndpkit.runtime import generate_dataset
from ndpkit.runtime.verify import array_chunks, verify_streaming


def solved(
    app: str, size_bytes: int, seed: int = 5
) -> tuple[Kernel, np.ndarray, dict[str, Any], Any]:
    kernel = get_kernel(app)
    data = kernel.generate(size_bytes, seed)
    params = kernel.params(seed)
    chunk = max(1, (64 << 10) // kernel.record_bytes)
    return kernel, data, params, run_in_memory(kernel, data, params, chunk)


@pytest.mark.parametrize(
    ("app", "method"),
    [
        ("lc", "per chunk"),
        ("he", "per chunk"),
        pytest.param(
            "he-remap",
            "per chunk",
            marks=pytest.mark.skipif(
                "he-remap" not in kernel_names(), reason="he-remap not in this build"
            ),
        ),
        ("binarize", "per chunk"),
        ("sobel", "per chunk"),
        ("fft2d", "per chunk"),
        ("knn2", "merged top-k"),
        ("knn8-topk", "merged top-k"),
        ("kmeans", "streamed Lloyd"),
    ],
)
def test_a_right_answer_passes(app: str, method: str) -> None:
    kernel, data, params, result = solved(app, 1 << 20)
    chunk_records = max(1, len(data) // 7)  # uneven chunks: the last one is short
    found = verify_streaming(kernel, array_chunks(data, chunk_records), params, result)
    assert found.method == method
    assert found.records == len(data)
    assert found.chunks >= min(7, len(data))


@pytest.mark.parametrize(("points", "chunk_records"), [(40, 1), (None, 997), (None, 5000)])
def test_knn_merged_reference_is_the_whole_data_reference(
    points: int | None, chunk_records: int
) -> None:
    """The merged per-chunk references give the whole-data reference's k nearest and its
    (k+1)-th distance, whatever the chunking (what `check` is handed is captured)."""
    kernel, data, params, result = solved("knn6", 1 << 20)
    data = data[:points]
    whole = kernel.reference(data, params)
    seen: list[ReferenceNeighbours] = []

    class Capture(type(kernel)):  # type: ignore[misc]
        def check(self, result: Any, expected: Any) -> None:
            seen.append(expected)

    verify_streaming(Capture(6), array_chunks(data, chunk_records), params, result)
    (got,) = seen
    assert got.neighbours.indices.tolist() == whole.neighbours.indices.tolist()
    np.testing.assert_allclose(got.neighbours.distances_sq, whole.neighbours.distances_sq)
    assert got.next_distance_sq == pytest.approx(whole.next_distance_sq)


def test_per_record_mismatch_names_the_records() -> None:
    kernel, data, params, labels = solved("lc", 1 << 20)
    wrong = labels.copy()
    wrong[len(wrong) - 3] ^= 1  # in the last chunk
    chunk_records = 5000
    with pytest.raises(KernelMismatchError, match=r"records \d+\.\.\d+: lc: 1 labels differ"):
        verify_streaming(kernel, array_chunks(data, chunk_records), params, wrong)


def test_per_record_result_of_the_wrong_length_fails() -> None:
    kernel, data, params, labels = solved("lc", 1 << 18)
    chunks = array_chunks(data, 1000)
    with pytest.raises(KernelMismatchError, match="the result has"):
        verify_streaming(kernel, chunks, params, labels[:-1])
    with pytest.raises(KernelMismatchError, match="the result has"):
        verify_streaming(kernel, chunks, params, np.append(labels, labels[:1]))


def test_a_wrong_bit_of_a_named_tuple_result_fails() -> None:
    kernel, data, params, images = solved("binarize", 1 << 20)
    bits = images.bits.copy()
    bits[-1, 5] ^= 0x10
    with pytest.raises(KernelMismatchError, match="binarize: 1 bits entries differ"):
        verify_streaming(kernel, array_chunks(data, 3), params, images._replace(bits=bits))


def test_a_wrong_neighbour_fails() -> None:
    kernel, data, params, result = solved("knn8", 1 << 20)
    farthest = int(np.argmax(((data - params["query"]) ** 2).sum(axis=1)))
    indices = result.indices.copy()
    indices[3] = farthest
    with pytest.raises(KernelMismatchError, match="k-NN"):
        verify_streaming(
            kernel, array_chunks(data, 3000), params, Neighbours(indices, result.distances_sq)
        )
    # Swapping two neighbours with distinct distances is caught too (order, not just the set).
    swapped = result.indices.copy()
    swapped[[0, 1]] = swapped[[1, 0]]
    with pytest.raises(KernelMismatchError):
        verify_streaming(
            kernel, array_chunks(data, 3000), params, Neighbours(swapped, result.distances_sq)
        )


def test_wrong_centres_or_iterations_fail() -> None:
    kernel, data, params, result = solved("kmeans", 1 << 19)
    chunks = array_chunks(data, 4000)
    centres = result.centres.copy()
    centres[2, 3] += 1e-3
    with pytest.raises(KernelMismatchError, match="kmeans: centre 2 feature 3"):
        verify_streaming(kernel, chunks, params, type(result)(centres, result.iterations, True))
    with pytest.raises(KernelMismatchError, match="iterations"):
        verify_streaming(
            kernel, chunks, params, type(result)(result.centres, result.iterations + 1, True)
        )


def test_streams_a_data_set_in_either_format(tmp_path: Path) -> None:
    kernel = get_kernel("knn2")
    params = kernel.params(1)
    for shard_format in ("npy", "parquet"):
        ds = generate_dataset(
            "knn2",
            1 << 18,
            3,
            tmp_path / shard_format,
            seed=1,
            shard_bytes=40_000,
            shard_format=shard_format,  # type: ignore[arg-type]
        )
        result = run_in_memory(kernel, ds.read_all(), params, 4096)
        found = verify_streaming(kernel, lambda ds=ds: ds.chunks(30_000), params, result)
        assert found.records == ds.records and found.chunks >= len(ds.shards)


class Total(Kernel):
    """A kernel with none of the streamed shapes: verified on the whole data."""

    name = "total"
    dtype = np.dtype(np.int64)
    record_shape = ()

    def generate(self, size_bytes: int, seed: int) -> np.ndarray:
        return np.arange(size_bytes // 8, dtype=np.int64)

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> Any:
        return int(chunk.sum())

    def merge(self, partials: list[Any]) -> Any:
        return sum(partials)

    def host(self, merged: Any, state: Any) -> tuple[Any, bool]:
        return merged, True

    def reference(self, data: np.ndarray, params: dict[str, Any]) -> Any:
        return int(np.sum(data))

    def check(self, result: Any, expected: Any) -> None:
        if result != expected:
            raise KernelMismatchError(f"total {result} != {expected}")


def test_other_kernels_fall_back_to_the_whole_data() -> None:
    data = Total().generate(8000, 0)
    chunks = array_chunks(data, 77)
    assert verify_streaming(Total(), chunks, {}, int(data.sum())).method == "whole"
    with pytest.raises(KernelMismatchError):
        verify_streaming(Total(), chunks, {}, int(data.sum()) + 1)
