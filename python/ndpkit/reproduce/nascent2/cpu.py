"""The CPU baseline's compute, **measured on this machine** with numpy stand-ins (the
i7-8700's std::qsort, Boost block_indirect_sort and pthreads decoder are not available here):

- single-thread sort: `numpy.sort(kind="quicksort")` (introsort) on one thread;
- multi-thread sort: one `ndarray.sort` per thread on contiguous chunks (numpy releases the
  GIL), then `numpy.sort(kind="stable")` over the sorted runs (timsort merges them);
- argsort for table sorts: `numpy.argsort(kind="quicksort")`;
- decoder: `numpy.take` of the dictionary per thread (fixed), a vectorised byte gather
  (variable); shuffle: `numpy.take` of whole rows;
- E5: decode, then Python's built-in `sorted`; a host sort of U dictionary values: `sorted`.

Where a job is too large to run in the time budget, its CPU time is extrapolated from the
rate measured at the largest size that ran (n·log₂n for sorts, bytes for decode and
shuffle), and the result says `measured` or `extrapolated`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ndpkit.reproduce.nascent2.context import Basis, Context


def best_s(fn: Callable[[], object], repeats: int) -> float:
    """The fastest of `repeats` runs of `fn`, in seconds."""
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _repeats(n: int) -> int:
    return 5 if n <= 2**16 else (2 if n <= 2**20 else 1)


def nlogn(n: int) -> float:
    return n * math.log2(max(n, 2))


def sort_single_s(keys: NDArray[Any]) -> float:
    """std::qsort's stand-in: numpy's introsort on one thread, including the copy in and out."""
    return best_s(lambda: np.sort(keys, kind="quicksort"), _repeats(keys.size))


def sort_multi_s(keys: NDArray[Any], threads: int) -> float:
    """block_indirect_sort's stand-in: per-thread chunk sorts, then a merge of the runs. The
    thread pool is started outside the timed region, as a C++ program's would be."""
    with ThreadPoolExecutor(threads) as pool:

        def run() -> None:
            work = keys.copy()
            list(pool.map(np.ndarray.sort, np.array_split(work, threads)))
            np.sort(work, kind="stable")

        return best_s(run, _repeats(keys.size))


@dataclass(frozen=True)
class CpuSort:
    """CPU sort times for one n: measured, or scaled by n·log₂n from the largest run."""

    single_s: float
    multi_s: float
    argsort_s: float
    basis: Basis


class CpuSorts:
    """Memoised CPU sort measurements of random 32-bit keys up to the settings' cap."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.cache: dict[int, CpuSort] = {}

    def __call__(self, n: int) -> CpuSort:
        cap = self.ctx.settings.cpu_sort_cap
        if n > cap:
            base = self(cap)
            k = nlogn(n) / nlogn(cap)
            return CpuSort(base.single_s * k, base.multi_s * k, base.argsort_s * k, "extrapolated")
        if n not in self.cache:
            keys = self.ctx.rng.integers(0, 2**32, n, dtype=np.uint32)
            self.cache[n] = CpuSort(
                sort_single_s(keys),
                sort_multi_s(keys, self.ctx.settings.threads),
                best_s(lambda: np.argsort(keys, kind="quicksort"), _repeats(n)),
                "measured",
            )
        return self.cache[n]


def sort64_s(ctx: Context, n: int, m: int) -> float:
    """A multi-thread sort of n 64-bit keys, scaled by n·log₂n from one of m ≤ n keys."""
    if ("sort64", m) not in ctx.cache:
        keys = ctx.rng.integers(0, 2**63, m, dtype=np.uint64)
        ctx.cache["sort64", m] = sort_multi_s(keys, ctx.settings.threads)
    return ctx.cache["sort64", m] * nlogn(n) / nlogn(m)


def host_sort_s(ctx: Context, values: int) -> float:
    """T_hostsort(U): Python's sorted over U random floats, measured here once per U."""
    if values < 2:
        return 0.0
    if ("hostsort", values) not in ctx.cache:
        data = [float(v) for v in ctx.rng.random(values)]
        ctx.cache["hostsort", values] = best_s(lambda: sorted(data), 3)
    return ctx.cache["hostsort", values]


def decode_then_sort(values: list[Any], keys: NDArray[Any]) -> list[Any]:
    """The E5 CPU baseline: decode every key, then Python's built-in sort."""
    return sorted([values[i] for i in keys.tolist()])


def decode_fixed_s(dictionary: NDArray[Any], keys: NDArray[Any], threads: int) -> float:
    """The pthreads decoder's stand-in: each thread takes its share of the page."""
    out = np.empty(keys.size, dtype=dictionary.dtype)
    bounds = np.linspace(0, keys.size, threads + 1).astype(int)

    def part(i: int) -> None:
        lo, hi = bounds[i], bounds[i + 1]
        np.take(dictionary, keys[lo:hi], out=out[lo:hi])

    with ThreadPoolExecutor(threads) as pool:
        return best_s(lambda: list(pool.map(part, range(threads))), 3)


@dataclass(frozen=True)
class StringDictionary:
    """Random strings (lowercase, length uniform in 1..L_Max) as a list and as one buffer."""

    values: list[bytes]
    data: NDArray[np.uint8]
    starts: NDArray[np.int64]
    lengths: NDArray[np.int64]

    @property
    def mean_length(self) -> float:
        return float(self.lengths.mean())


def string_dictionary(rng: np.random.Generator, count: int, l_max: int) -> StringDictionary:
    lengths = rng.integers(1, l_max + 1, count).astype(np.int64)
    data = rng.integers(ord("a"), ord("z") + 1, int(lengths.sum())).astype(np.uint8)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    raw = data.tobytes()
    values = [raw[s : s + n] for s, n in zip(starts.tolist(), lengths.tolist(), strict=True)]
    return StringDictionary(values, data, starts, lengths)


def decode_variable(strings: StringDictionary, keys: NDArray[Any]) -> NDArray[np.uint8]:
    """Concatenate the values of `keys` (a vectorised byte gather)."""
    lens = strings.lengths[keys]
    ends = np.cumsum(lens)
    shift = np.repeat(strings.starts[keys] - (ends - lens), lens)
    out: NDArray[np.uint8] = strings.data[np.arange(int(ends[-1]) if lens.size else 0) + shift]
    return out


def key_dtype(key_bytes: int) -> np.dtype[Any]:
    return np.dtype(f"u{key_bytes}")


def shuffle_s(ctx: Context, rows: int, row_bytes: float) -> tuple[float, Basis]:
    """numpy.take of whole rows by a random permutation; above the byte cap, scaled by bytes."""
    table = rows * row_bytes
    cap = ctx.settings.cpu_shuffle_cap_bytes
    if table > cap:
        scaled_rows = max(1, int(cap // max(row_bytes, 1)))
        width = int(min(max(row_bytes, 1), cap))
        measured, _ = _shuffle_run(ctx, scaled_rows, width)
        return measured * table / (scaled_rows * width), "extrapolated"
    return _shuffle_run(ctx, rows, max(1, round(row_bytes)))


def _shuffle_run(ctx: Context, rows: int, width: int) -> tuple[float, Basis]:
    if ("shuffle", rows * 2**32 + width) not in ctx.cache:
        table = ctx.rng.integers(0, 256, (rows, width), dtype=np.uint8)
        order = ctx.rng.permutation(rows)
        seconds = best_s(lambda: np.take(table, order, axis=0), 3 if table.nbytes < 2**24 else 2)
        ctx.cache["shuffle", rows * 2**32 + width] = seconds
    return ctx.cache["shuffle", rows * 2**32 + width], "measured"
