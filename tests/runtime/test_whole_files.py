"""`write_npy` and `write_parquet` write a file whole or not at all: they wrote straight to
the final name, so a failing source, short pieces or a file size limit left a partial file
there (one numpy could not load), and said so as the private `_WriteError` or a bare
ValueError."""

from __future__ import annotations

import errno
import os
import resource
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest

from ndpkit.errors import SpecError
from ndpkit.runtime.dataset import write_npy, write_parquet

F32 = np.dtype(np.float32)
COLUMNS = [f"x{j}" for j in range(8)]


def _write(kind: str, path: Path, shape: tuple[int, ...], pieces: Any) -> tuple[int, str]:
    if kind == "npy":
        return write_npy(path, F32, shape, pieces)
    return write_parquet(path, F32, shape, pieces, COLUMNS)


def _fails_after_a_piece() -> Iterator[np.ndarray]:
    yield np.zeros((2**16, 8), np.float32)
    raise RuntimeError("the source failed")


def _stopped_after_a_piece() -> Iterator[np.ndarray]:
    yield np.zeros((2**16, 8), np.float32)
    raise KeyboardInterrupt


@pytest.mark.parametrize("kind", ["npy", "parquet"])
def test_a_failing_source_leaves_nothing(tmp_path: Path, kind: str) -> None:
    with pytest.raises(RuntimeError, match="the source failed"):
        _write(kind, tmp_path / "a", (2**17, 8), _fails_after_a_piece())
    with pytest.raises(KeyboardInterrupt):
        _write(kind, tmp_path / "a", (2**17, 8), _stopped_after_a_piece())
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["npy", "parquet"])
@pytest.mark.parametrize("rows", [50, 150])
def test_pieces_that_do_not_make_the_shape_are_a_spec_error_naming_the_file(
    tmp_path: Path, kind: str, rows: int
) -> None:
    path = tmp_path / "short"
    with pytest.raises(SpecError) as caught:
        _write(kind, path, (100, 8), [np.zeros((rows, 8), np.float32)])
    message = str(caught.value)
    assert message.startswith(f"{path}: the pieces gave "), message
    assert message.endswith("; nothing was written")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="POSIX file size limits")
@pytest.mark.parametrize("kind", ["npy", "parquet"])
def test_a_file_size_limit_is_a_spec_error_naming_the_file(tmp_path: Path, kind: str) -> None:
    """`ulimit -f` refuses the write once 3 MiB are written (EFBIG: SIGXFSZ ignored)."""
    path = tmp_path / "big"
    pieces = [np.zeros((2**17, 8), np.float32) for _ in range(4)]  # 16 MiB
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (3 * 2**20, limits[1]))
        with pytest.raises(SpecError) as caught:
            _write(kind, path, (2**19, 8), pieces)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, handler)
    assert str(caught.value).startswith(f"{path}: cannot write: {os.strerror(errno.EFBIG)}")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["npy", "parquet"])
def test_an_existing_file_is_refused_and_kept(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "there"
    path.write_text("keep")
    with pytest.raises(SpecError, match="already exists; not replacing it"):
        _write(kind, path, (1, 8), [np.zeros((1, 8), np.float32)])
    assert path.read_text() == "keep"
    assert list(tmp_path.iterdir()) == [path]


def test_a_whole_file_is_what_numpy_and_pyarrow_read(tmp_path: Path) -> None:
    data = np.random.default_rng(1).standard_normal((1000, 8), dtype=np.float32)
    size, crc = write_npy(tmp_path / "a.npy", F32, data.shape, [data[:300], data[300:]])
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), data)
    assert size == (tmp_path / "a.npy").stat().st_size and len(crc) == 8
    write_parquet(tmp_path / "a.parquet", F32, data.shape, [data], COLUMNS)
    assert pq.read_table(tmp_path / "a.parquet").num_rows == 1000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy", "a.parquet"]
