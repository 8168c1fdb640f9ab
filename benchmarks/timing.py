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


def last_level_cache_bytes() -> int | None:
    """The size of this CPU's largest cache (Linux sysfs), or None where it cannot be read."""
    sizes = []
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (index / "size").read_text().strip()
        except OSError:
            continue
        units = {"K": 2**10, "M": 2**20, "G": 2**30}
        if text and text[-1] in units and text[:-1].isdigit():
            sizes.append(int(text[:-1]) * units[text[-1]])
        elif text.isdigit():
            sizes.append(int(text))
    return max(sizes) if sizes else None


def where_the_data_is(size_bytes: int) -> str:
    """Whether a buffer of `size_bytes`, read over and over, is read from the last-level cache
    or from memory: a "read bandwidth" over data that fits the cache is the cache's."""
    llc = last_level_cache_bytes()
    if llc is None:
        return "last-level cache size unknown"
    if size_bytes >= 2 * llc:
        where = "memory (DRAM)"
    elif size_bytes > llc:
        where = "memory and the last-level cache"
    else:
        where = "the last-level cache"
    mib, llc_mib = size_bytes / 2**20, llc / 2**20
    return f"{mib:.0f} MiB against a {llc_mib:.0f} MiB last-level cache: read from {where}"
