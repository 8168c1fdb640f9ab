"""`ndpkit._core.crc32` is zlib's CRC-32: manifests hold zlib CRCs, so any difference in
polynomial, initial value or final inversion would make every existing data set "corrupt"."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpkit import _core
from ndpkit.runtime.dataset import _file_crc

initials = st.integers(min_value=0, max_value=2**32 - 1)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=5000), initial=initials)
def test_matches_zlib_on_any_bytes_and_initial_value(data: bytes, initial: int) -> None:
    assert _core.crc32(data, initial) == zlib.crc32(data, initial)


@settings(max_examples=40, deadline=None)
@given(
    length=st.integers(min_value=0, max_value=3 * 2**20),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    initial=initials,
)
def test_matches_zlib_on_long_random_buffers(length: int, seed: int, initial: int) -> None:
    # Long enough for the folding loop and to release the GIL; odd lengths leave tails.
    data = np.random.default_rng(seed).integers(0, 256, length, dtype=np.uint8)
    assert _core.crc32(data, initial) == zlib.crc32(data.tobytes(), initial)


@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=2000), cut=st.integers(min_value=0, max_value=2000))
def test_continues_a_crc_like_zlib(data: bytes, cut: int) -> None:
    head, tail = data[:cut], data[cut:]
    assert _core.crc32(tail, _core.crc32(head)) == zlib.crc32(data)


@pytest.mark.parametrize("length", [*range(0, 130), 255, 256, 257, 4095, 4096, 65_535, 65_536])
def test_every_short_length_and_block_boundary(length: int) -> None:
    data = bytes((i * 131 + 7) % 256 for i in range(length))
    assert _core.crc32(data) == zlib.crc32(data)
    assert _core.crc32(data, 0xFFFFFFFF) == zlib.crc32(data, 0xFFFFFFFF)


def test_known_value() -> None:
    assert _core.crc32(b"123456789") == 0xCBF43926  # the CRC-32/ISO-HDLC check value


def test_takes_any_contiguous_buffer() -> None:
    points = np.random.default_rng(3).random((1000, 8), dtype=np.float32)
    expected = zlib.crc32(points.tobytes())
    raw = bytearray(points.tobytes())
    assert _core.crc32(points) == expected  # a float32 array: its bytes, not its values
    assert _core.crc32(raw) == expected
    assert _core.crc32(memoryview(raw)[100:]) == zlib.crc32(raw[100:])
    assert _core.crc32(points[10:20]) == zlib.crc32(points[10:20].tobytes())


def test_rejects_what_is_not_a_contiguous_buffer() -> None:
    with pytest.raises(ValueError, match="C-contiguous"):
        _core.crc32(np.zeros((10, 4), np.float32)[:, ::2])
    with pytest.raises(TypeError):
        _core.crc32("text")
    with pytest.raises(OverflowError):
        _core.crc32(b"", 2**32)


@pytest.mark.parametrize("length", [0, 1, 8 * 2**20 - 1, 8 * 2**20, 8 * 2**20 + 5])
def test_file_crc_reads_in_blocks_like_zlib_whole(tmp_path: Path, length: int) -> None:
    data = np.random.default_rng(length).integers(0, 256, length, dtype=np.uint8).tobytes()
    path = tmp_path / "shard.bin"
    path.write_bytes(data)
    assert _file_crc(path) == f"{zlib.crc32(data):08x}"
    assert _file_crc(path, bytearray(4096)) == f"{zlib.crc32(data):08x}"  # a reused buffer
