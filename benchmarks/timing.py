"""Timing helper shared by the benchmark scripts."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(fn: Callable[[], object], repeat: int, *, warm_up: bool = True) -> float:
    """Best wall time of `repeat` runs, after one warm-up run (first touch is slow on
    these VMs) unless `warm_up` is false."""
    if warm_up:
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)
