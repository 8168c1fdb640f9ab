"""Workers keep their freed memory for the next chunk (`keep_freed_memory`): checked through
glibc's own accounting, in a new process as every worker is."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ndpkit.kernels import Kernel
from ndpkit.runtime import LocalExecutor, generate_dataset
from ndpkit.runtime.executor import MALLOC_MMAP_THRESHOLD_BYTES

_PROBE = """
import ctypes, sys
import numpy as np
from ndpkit.runtime.executor import keep_freed_memory

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]

mallinfo2 = ctypes.CDLL(None).mallinfo2
mallinfo2.restype = MallInfo2

def mapped_after(size):
    before = mallinfo2().hblkhd
    block = np.empty(size, dtype=np.uint8)
    block[::4096] = 1
    grew = mallinfo2().hblkhd - before
    del block
    return grew

size = int(sys.argv[1])
print(mapped_after(size), end=" ")
if sys.argv[2] == "keep":
    keep_freed_memory()
# Twice the size: glibc raised its own threshold to the size just freed, not beyond.
print(mapped_after(2 * size))
"""


def _glibc() -> bool:
    try:
        ctypes.CDLL(None).mallinfo2  # noqa: B018
    except (OSError, AttributeError):
        return False
    return sys.platform.startswith("linux")


@pytest.mark.skipif(not _glibc(), reason="glibc's malloc only (mallopt, mallinfo2)")
def test_a_new_process_maps_a_temporary_afresh_until_keep_freed_memory() -> None:
    """4 MiB, a FFT2D batch's temporary: its own mapping in a new process (a page fault per
    4 KiB each time it is made), from the reused heap once the worker's setting applies."""
    size = 4 * 2**20
    assert 2 * size < MALLOC_MMAP_THRESHOLD_BYTES
    mapped = {setting: _probe(size, setting) for setting in ("keep", "default")}
    assert mapped["keep"][0] >= size  # a new process: mapped afresh
    assert mapped["keep"][1] == 0  # kept: from the heap
    assert mapped["default"][1] >= 2 * size  # without the setting, mapped afresh again


@pytest.mark.skipif(not _glibc(), reason="glibc's malloc only (mallopt, mallinfo2)")
@pytest.mark.parametrize("name", ["MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES"])
def test_a_users_own_malloc_setting_wins(name: str) -> None:
    """With the user's 1 MiB mmap threshold, an 8 MiB temporary stays mapped afresh."""
    value = {"MALLOC_MMAP_THRESHOLD_": "1048576"}.get(name, "glibc.malloc.mmap_threshold=1048576")
    size = 4 * 2**20
    assert _probe(size, "keep", {name: value})[1] >= 2 * size


def _probe(size: int, setting: str, env: dict[str, str] | None = None) -> list[int]:
    """Bytes mapped afresh for a `size` temporary, then for one of twice the size after
    `keep_freed_memory` (setting "keep") or not, in a new process with only `env`'s malloc
    settings."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(_MALLOC_SETTINGS)}
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(size), setting],
        capture_output=True,
        text=True,
        check=True,
        env=clean | (env or {}),
    )
    return [int(x) for x in out.stdout.split()]


_MALLOC_SETTINGS = ("MALLOC_", "GLIBC_TUNABLES")


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


TEMPORARY_BYTES = 16 * 2**20


class MappedTemporaries(Kernel):
    """Its device part makes and frees a 16 MiB temporary per chunk and reports how much of
    it glibc mapped afresh (`mallinfo2().hblkhd`): what a worker pays page faults for."""

    name = "mapped-temporaries"
    dtype = np.dtype(np.uint8)
    record_shape = (1024,)

    def generate(self, size_bytes: int, seed: int) -> np.ndarray:
        return np.zeros((max(1, size_bytes // 1024), 1024), dtype=np.uint8)

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> int:
        mallinfo2 = ctypes.CDLL(None).mallinfo2
        mallinfo2.restype = _MallInfo2
        before = mallinfo2().hblkhd
        temporary = np.empty(TEMPORARY_BYTES, dtype=np.uint8)
        temporary[::4096] = 1
        mapped = int(mallinfo2().hblkhd - before)
        del temporary
        return mapped

    def merge(self, partials: list[Any]) -> int:
        return max(partials, default=0)

    def host(self, merged: Any, state: Any) -> tuple[Any, bool]:
        return merged, True

    def reference(self, data: np.ndarray, params: dict[str, Any]) -> Any:
        return 0

    def check(self, result: Any, expected: Any) -> None:
        assert result == expected


@pytest.mark.skipif(not _glibc(), reason="glibc's malloc only (mallopt, mallinfo2)")
def test_every_worker_takes_its_temporaries_from_the_heap(tmp_path: Path) -> None:
    """In the executor's (new) workers, no chunk's temporary is mapped afresh: the worker
    set `keep_freed_memory` before its first task."""
    assert TEMPORARY_BYTES < MALLOC_MMAP_THRESHOLD_BYTES
    ds = generate_dataset(MappedTemporaries(), 64 * 1024, 2, tmp_path / "ds")
    with LocalExecutor(workers=2) as executor:
        out = executor.run(MappedTemporaries(), ds, {}, chunk_bytes=8 * 1024)
    assert out.result == 0
