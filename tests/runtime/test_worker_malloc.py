"""Workers keep their freed memory for the next chunk (`keep_freed_memory`): checked through
glibc's own accounting, in a new process as every worker is."""

from __future__ import annotations

import ctypes
import subprocess
import sys

import pytest

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
    mapped = {}
    for setting in ("keep", "default"):
        out = subprocess.run(
            [sys.executable, "-c", _PROBE, str(size), setting],
            capture_output=True,
            text=True,
            check=True,
        )
        mapped[setting] = [int(x) for x in out.stdout.split()]
    assert mapped["keep"][0] >= size  # a new process: mapped afresh
    assert mapped["keep"][1] == 0  # kept: from the heap
    assert mapped["default"][1] >= 2 * size  # without the setting, mapped afresh again
