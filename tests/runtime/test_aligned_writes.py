"""write_npy writes a shard in whole huge-page multiples at huge-page offsets (but its last
write), so that Linux can cache it in huge folios (`dataset.FOLIO_WRITE_BYTES`)."""

from __future__ import annotations

import mmap
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpkit.runtime import dataset
from ndpkit.runtime.dataset import FOLIO_WRITE_BYTES, _AlignedWrites, write_npy


class _Recorder:
    """Stands in for `_OutputFile`: keeps every write's offset and bytes."""

    def __init__(self) -> None:
        self.writes: list[tuple[int, bytes]] = []
        self.at = 0

    def write(self, data: object) -> None:
        raw = bytes(memoryview(data))  # type: ignore[arg-type]
        self.writes.append((self.at, raw))
        self.at += len(raw)


@settings(max_examples=200, deadline=None)
@given(
    align=st.sampled_from([1, 4, 16, 64]),
    sizes=st.lists(st.integers(min_value=0, max_value=200), max_size=12),
)
def test_every_write_but_the_last_is_whole_multiples_at_a_multiple(
    align: int, sizes: list[int]
) -> None:
    out = _Recorder()
    aligned = _AlignedWrites(out, align)  # type: ignore[arg-type]
    pieces = [bytes((i * 7 + j) % 251 for j in range(n)) for i, n in enumerate(sizes)]
    for piece in pieces:
        aligned.write(memoryview(piece))
    aligned.close()
    assert b"".join(raw for _, raw in out.writes) == b"".join(pieces)
    for at, raw in out.writes[:-1]:
        assert at % align == 0 and len(raw) % align == 0, (at, len(raw))
    if out.writes:
        assert out.writes[-1][0] % align == 0
    assert all(raw for _, raw in out.writes)  # no empty writes


def test_a_shard_is_written_in_huge_page_pieces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shard's bytes are what numpy reads back, and every write to the file but the last
    starts and ends on a FOLIO_WRITE_BYTES boundary, though the 4 KiB header and the
    3 MiB pieces never fall on one."""
    offsets: list[tuple[int, int]] = []
    real_write = dataset._OutputFile.write

    def recording(self: dataset._OutputFile, data: object) -> None:
        offsets.append((self.file.tell(), memoryview(data).nbytes))  # type: ignore[arg-type]
        real_write(self, data)

    monkeypatch.setattr(dataset._OutputFile, "write", recording)
    rng = np.random.default_rng(3)
    rows = 3 * FOLIO_WRITE_BYTES // 32
    pieces = [rng.standard_normal((rows, 8), dtype=np.float32) for _ in range(4)]
    path = tmp_path / "shard.npy"
    write_npy(path, np.dtype(np.float32), (4 * rows, 8), pieces)
    np.testing.assert_array_equal(np.load(path), np.concatenate(pieces))
    assert len(offsets) > 2
    for at, n in offsets[:-1]:
        assert at % FOLIO_WRITE_BYTES == 0 and n % FOLIO_WRITE_BYTES == 0, (at, n)


def _pmd_mapped_kib(path: Path) -> int | None:
    """FilePmdMapped of this process's mapping of `path` (None without /proc smaps)."""
    try:
        smaps = Path("/proc/self/smaps").read_text()
    except OSError:
        return None
    at = smaps.find(str(path))
    if at < 0:
        return None
    field = smaps.find("FilePmdMapped:", at)
    return None if field < 0 else int(smaps[field:].split()[1])


@pytest.mark.skipif(sys.platform != "linux", reason="Linux page cache folios")
def test_a_freshly_written_shard_maps_in_huge_pages_where_the_system_can(tmp_path: Path) -> None:
    """Where the kernel maps any page cache in huge pages at all (a file system with large
    folios, memory to spare), a shard write_npy has just written maps whole in them; a file
    written with a 4 KiB head first shows the system can, so this cannot pass vacuously."""
    payload = np.random.default_rng(0).integers(0, 255, 8 * FOLIO_WRITE_BYTES, dtype=np.uint8)
    probe = tmp_path / "probe.bin"
    with probe.open("wb") as f:  # the old way: the head alone, then large pieces
        f.write(b"\0" * 4096)
        f.write(payload.data)
    shard = tmp_path / "shard.npy"
    write_npy(shard, np.dtype(np.uint8), (len(payload),), [payload])

    def mapped_huge(path: Path) -> int | None:
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            m = mmap.mmap(f.fileno(), size, prot=mmap.PROT_READ)
            try:
                np.frombuffer(m, np.uint8)[:: mmap.PAGESIZE].sum()
                return _pmd_mapped_kib(path)
            finally:
                m.close()

    old = mapped_huge(probe)
    if not old:
        pytest.skip("this system maps no page cache in huge pages")
    new = mapped_huge(shard)
    assert new is not None
    whole = (shard.stat().st_size // FOLIO_WRITE_BYTES) * FOLIO_WRITE_BYTES // 1024
    assert new == whole, (new, whole, old)
    assert new > old
