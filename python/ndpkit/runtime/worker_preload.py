"""What the fork server imports once so that every worker it starts has it (`executor._PRELOAD`):
the light kernel modules (a worker imports its kernel's module to unpickle it: 1-6 ms each),
and the scan of the loaded thread-pool libraries that `threadpoolctl` makes (2.5 ms a worker).
FFT2D's module is left out: it imports scipy.fft (0.16 s), which a pool that never runs it
would pay for."""

from __future__ import annotations

from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

import ndpkit.kernels.binarize
import ndpkit.kernels.he
import ndpkit.kernels.kmeans
import ndpkit.kernels.knn
import ndpkit.kernels.lc
import ndpkit.kernels.sobel  # noqa: F401

THREADPOOLS = ThreadpoolController()
"""The thread-pool libraries loaded when the server started (numpy's BLAS); a worker limits
their threads from it."""
