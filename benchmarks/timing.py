"""Timing and machine-description helpers shared by the benchmark scripts."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path


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


def best_interleaved(runs: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Best wall time of each run over `rounds` rounds, every round running each once in
    turn, starting one further along each round (so no run always follows the same one):
    on these VMs the speed drifts over minutes (other guests, turbo), and runs done one
    after another would each meet a different machine."""
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    names = list(runs)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            start = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - start)
    return {name: min(t) for name, t in times.items()}


def huge_page_settings() -> str:
    """This machine's transparent huge page settings for anonymous and shared memory (the
    arrays of a one-process run, and the executor's rows arena), e.g. "madvise / advise"."""
    chosen = []
    for name in ("enabled", "shmem_enabled"):
        try:
            text = Path(f"/sys/kernel/mm/transparent_hugepage/{name}").read_text()
        except OSError:
            return "unknown"
        chosen.append(text.split("[")[1].split("]")[0] if "[" in text else text.strip())
    return " / ".join(chosen)
