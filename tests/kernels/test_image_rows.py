"""The per-record image kernels (Sobel, HE, HE-remap, binarisation, FFT2D) as `RowKernel`s:
rows written in place give the partials' answer bit for bit, the host reads them without a
copy, the runtime takes the rows path, and a worker's memory does not grow with the data."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ndpkit.errors import NdpkitError
from ndpkit.kernels import Kernel, RowKernel, get_kernel, run_in_memory
from ndpkit.kernels.binarize import Binarize, BinaryImages
from ndpkit.kernels.fft2d import Fft2d
from ndpkit.kernels.he import HistogramEqualisation, HistogramEqualisationRemap
from ndpkit.kernels.sobel import Sobel
from ndpkit.runtime import EngineStats, LocalExecutor, generate_dataset

KERNELS: dict[str, RowKernel] = {
    "sobel": Sobel(),
    "he": HistogramEqualisation(),
    "he-remap": HistogramEqualisationRemap(),
    "binarize": Binarize(),
    "binarize-otsu": Binarize("otsu"),
    "fft2d": Fft2d(),
}
N_IMAGES = 5
_FILL = 0xA5
"""What the rows hold before the device writes them: a row left unwritten shows."""


def _data(kernel: Kernel, seed: int, n_images: int = N_IMAGES) -> np.ndarray:
    return kernel.generate(n_images * kernel.record_bytes, seed)


def _columns(result: Any) -> tuple[np.ndarray, ...]:
    return tuple(result) if isinstance(result, BinaryImages) else (result,)


def _same(got: Any, want: Any) -> bool:
    pairs = zip(_columns(got), _columns(want), strict=True)
    return all(a.dtype == b.dtype and np.array_equal(a, b) for a, b in pairs)


def _written_rows(kernel: RowKernel, data: np.ndarray, state: Any, chunk: int) -> np.ndarray:
    """The rows `device_into` writes over `data`, chunk by chunk, into one array."""
    spec = kernel.row_spec(state)
    rows = np.empty((len(data), *spec.shape), spec.dtype)
    rows.view(np.uint8)[...] = _FILL
    for start in range(0, len(data), chunk):
        stop = start + chunk
        kernel.device_into(data[start:stop], state, start, rows[start:stop])
    return rows


@pytest.mark.parametrize("name", ["sobel", "he", "he-remap", "binarize", "fft2d"])
def test_every_per_record_image_kernel_writes_rows(name: str) -> None:
    assert isinstance(get_kernel(name), RowKernel)


@pytest.mark.parametrize("name", KERNELS)
@pytest.mark.parametrize("chunk", [1, 2, N_IMAGES])
@pytest.mark.parametrize("n_images", [0, 1, N_IMAGES])
def test_rows_give_the_partials_answer_bit_for_bit(name: str, chunk: int, n_images: int) -> None:
    kernel = KERNELS[name]
    data, params = _data(kernel, 7, n_images), kernel.params(7)
    state = kernel.init(params)
    rows = _written_rows(kernel, data, state, chunk)
    result, done = kernel.host(kernel.rows_merged(rows, state), state)
    assert done
    assert _same(result, run_in_memory(kernel, data, params, chunk))
    kernel.check(result, kernel.reference(data, params))


@pytest.mark.parametrize("name", KERNELS)
def test_rows_merged_equals_merging_the_device_partials(name: str) -> None:
    kernel = KERNELS[name]
    data = _data(kernel, 8)
    state = kernel.init(kernel.params(8))
    from_rows = kernel.rows_merged(_written_rows(kernel, data, state, 2), state)
    from_partials = kernel.merge(
        [kernel.device(data[:3], state, 0), kernel.device(data[3:], state, 3)]
    )
    if name == "fft2d":
        ((_, spectra),) = from_rows
        assert np.array_equal(spectra, np.concatenate([p.spectra for p in from_partials]))
        return
    ((offset, columns),) = from_rows.items()
    expected = tuple(np.concatenate(c) for c in zip(*from_partials.values(), strict=True))
    assert offset == 0 and len(columns) == len(expected)
    assert all(np.array_equal(a, b) for a, b in zip(columns, expected, strict=True))


@pytest.mark.parametrize("name", KERNELS)
def test_the_host_reads_the_rows_without_copying_them(name: str) -> None:
    """The rows may be as large as the data set (8× for FFT2D), or on disk: neither
    rows_merged nor the host part may copy them."""
    kernel = KERNELS[name]
    state = kernel.init(kernel.params(9))
    rows = _written_rows(kernel, _data(kernel, 9), state, 2)
    merged = kernel.rows_merged(rows, state)
    result, _ = kernel.host(merged, state)
    if name == "he":  # the answer is the LUTs, computed from the histograms in place
        ((counts,),) = merged.values()
        assert np.shares_memory(counts, rows)
        return
    columns = _columns(result)
    if name == "binarize":  # a fixed threshold is not in the rows: the host fills it in
        columns = columns[:1]
    assert all(np.shares_memory(column, rows) for column in columns)


@pytest.mark.parametrize("name", KERNELS)
def test_device_into_refuses_rows_of_the_wrong_shape_or_type(name: str) -> None:
    kernel = KERNELS[name]
    data = _data(kernel, 1, 2)
    state = kernel.init(kernel.params(1))
    spec = kernel.row_spec(state)
    short = np.empty((len(data), spec.shape[0] - 1, *spec.shape[1:]), spec.dtype)
    wide = np.empty((len(data), *spec.shape), np.float64)
    for out in (short, wide, np.empty((1, *spec.shape), spec.dtype)):
        with pytest.raises(NdpkitError, match=f"{kernel.name}: .*output of .*the chunk needs"):
            kernel.device_into(data, state, 0, out)


# -- through the runtime --------------------------------------------------------------------


@pytest.fixture(scope="module")
def executor() -> Iterator[LocalExecutor]:
    with LocalExecutor(2) as ex:
        yield ex


@pytest.mark.parametrize("name", KERNELS)
def test_the_runtime_writes_rows_and_answers_as_in_memory(
    name: str, executor: LocalExecutor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kernel = KERNELS[name]
    ds = generate_dataset(
        kernel,
        11 * kernel.record_bytes,
        3,
        tmp_path / "ds",
        seed=2,
        shard_bytes=2 * kernel.record_bytes,
    )
    params, data = kernel.params(2), ds.read_all()
    merged_rows: list[int] = []
    rows_merged = type(kernel).rows_merged

    def recording(self: RowKernel, rows: np.ndarray, state: Any) -> Any:
        merged_rows.append(len(rows))  # only the parent calls it: no need to reach workers
        return rows_merged(self, rows, state)

    monkeypatch.setattr(type(kernel), "rows_merged", recording)
    expected = run_in_memory(kernel, data, params, 3)
    for chunk_bytes in (kernel.record_bytes, 3 * kernel.record_bytes, 2**30):
        out = executor.run(kernel, ds, params, chunk_bytes=chunk_bytes)
        assert _same(out.result, expected)
        assert out.bytes_out == ds.records * kernel.row_spec(kernel.init(params)).row_bytes
    assert merged_rows == [ds.records] * 3  # the rows path was taken every time


# -- bounded memory -------------------------------------------------------------------------

_CHUNK_BYTES = 2**20
SIZES_MIB = {"sobel": (4, 32), "he-remap": (4, 32), "binarize": (4, 64), "fft2d": (4, 16)}
"""Data sets whose outputs differ by 7.5–96 MiB: a worker that kept its output would grow by
that much, one that writes its rows in place holds a few chunks whatever the size."""


def _engine(kernel: Kernel, size_mib: int, path: Path) -> EngineStats:
    ds = generate_dataset(kernel, size_mib * 2**20, 1, path, seed=1, shard_bytes=16 * 2**20)
    run = LocalExecutor(1).run(kernel, ds, kernel.params(1), chunk_bytes=_CHUNK_BYTES)
    (engine,) = run.engines
    return engine


@pytest.mark.parametrize("name", SIZES_MIB)
def test_worker_memory_does_not_grow_with_the_data(name: str, tmp_path: Path) -> None:
    kernel = KERNELS[name]
    small, large = (_engine(kernel, mib, tmp_path / str(mib)) for mib in SIZES_MIB[name])
    margin_bytes = 2 * _CHUNK_BYTES
    assert large.bytes_out > small.bytes_out + 3 * margin_bytes  # a kept output would show
    assert large.rss_growth_bytes < 16 * _CHUNK_BYTES  # a window of 4 chunks, temporaries
    assert large.rss_growth_bytes < small.rss_growth_bytes + margin_bytes
