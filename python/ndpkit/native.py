"""Arrays as the compiled core (`ndpkit._core`) takes them."""

from __future__ import annotations

from typing import Any

import numpy as np


def native_input(array: Any, dtype: type[np.generic]) -> np.ndarray:
    """`array` as the Rust loops take it: of `dtype`, at least 1-d (as
    `np.ascontiguousarray` makes a 0-d one), C-contiguous and aligned, copied only where it
    is not. A view at an odd byte offset (`np.frombuffer` of a slice) is contiguous but not
    aligned, and the binding refused it with "The given array is not contiguous or is
    misaligned" (`np.ascontiguousarray` keeps it as it is)."""
    return np.require(np.ascontiguousarray(array, dtype=dtype), requirements=["C", "A"])
