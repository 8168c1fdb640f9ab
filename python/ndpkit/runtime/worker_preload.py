"""What the fork server imports once so that every worker it starts has it (`executor._PRELOAD`):
the light kernel modules (a worker imports its kernel's module to unpickle it: 1-6 ms each),
and the scan of the loaded thread-pool libraries that `threadpoolctl` makes (2.5 ms a worker;
made again in a worker that has loaded compiled modules since, `threadpools`).
FFT2D's module is left out: it imports scipy.fft (0.16 s), which a pool that never runs it
would pay for."""

from __future__ import annotations

import sys
from importlib.machinery import EXTENSION_SUFFIXES

from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

import ndpkit.kernels.binarize
import ndpkit.kernels.he
import ndpkit.kernels.kmeans
import ndpkit.kernels.knn
import ndpkit.kernels.lc
import ndpkit.kernels.sobel  # noqa: F401

THREADPOOLS = ThreadpoolController()
"""The thread-pool libraries loaded when the server started (numpy's BLAS)."""
_SCANNED_WITH = frozenset(sys.modules)
"""The modules imported at the scan."""


def _compiled_since_scan() -> bool:
    """Whether a compiled module was imported since the scan: a thread-pool library loaded
    by a Python package comes with one (scipy's, scikit-learn's OpenMP). One loaded directly
    with `ctypes` does not, and is then not limited. Only the new modules' files are read."""
    suffixes = tuple(EXTENSION_SUFFIXES)
    for name in sys.modules.keys() - _SCANNED_WITH:
        module = sys.modules.get(name)
        if str(getattr(module, "__file__", None) or "").endswith(suffixes):
            return True
    return False


def threadpools() -> ThreadpoolController:
    """The thread-pool libraries loaded now, for a worker to limit: the server's scan, unless
    compiled modules were imported since (on Python 3.11 and 3.12 each worker imports the
    main script itself, which may load a BLAS of its own, scipy's say): then a new scan."""
    if not _compiled_since_scan():
        return THREADPOOLS
    return ThreadpoolController()
