"""Sorted (value, index) pairs per second: NASCENT2's bitonic sort kernel vs numpy.

    .venv/bin/python benchmarks/sort_bitonic.py [--repeat 3] [--max-log2 23] [--quick]

For N = 1 Ki … 8 Mi uniformly random uint32 keys (powers of four, plus 8 Mi):

- the Rust kernel (`ndpkit.nascent.bitonic.argsort`, 𝒫 = 8, ℒ = 8, so on-chip chunks of
  128 Ki and DRAM-level merges above) with the paper's value-only comparisons and with the
  stable (value, index) comparisons; both return sorted keys and original indices and
  count every comparator and memory access while they sort;
- `numpy.argsort(kind="stable")` followed by the gather of the keys (`keys[idx]`), which
  produces the same pairs.

Figures are million pairs per second, best of `--repeat` after a warm-up, one thread. The
kernel models hardware (O(N log² N) compare-and-swaps, data-independent), so it need not
win; the ratio is reported either way. The stable kernel's indices are checked against
numpy's on every size.
"""

from __future__ import annotations

import argparse
import os
import platform

import numpy as np

from ndpkit.nascent.bitonic import argsort
from timing import best_of


def numpy_pairs(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    idx = np.argsort(keys, kind="stable")
    return keys[idx], idx


def measure(n: int, repeat: int) -> str:
    keys = np.random.default_rng(n).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    stable = argsort(keys, tie_break="value_then_index")
    if not np.array_equal(stable.indices, np.argsort(keys, kind="stable")):
        raise SystemExit(f"stable kernel differs from numpy at n = {n}")
    times = {
        "value_only": best_of(lambda: argsort(keys), repeat),
        "value_then_index": best_of(lambda: argsort(keys, tie_break="value_then_index"), repeat),
        "numpy": best_of(lambda: numpy_pairs(keys), repeat),
    }
    rate = {what: n / t / 1e6 for what, t in times.items()}
    c = stable.counts
    return (
        f"| {n:,} | {c.chunks} | {c.compare_swaps:,} | {rate['value_only']:.1f} | "
        f"{rate['value_then_index']:.1f} | {rate['numpy']:.1f} | "
        f"{rate['value_only'] / rate['numpy']:.2f}× | "
        f"{rate['value_then_index'] / rate['numpy']:.2f}× |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-log2", type=int, default=23)
    parser.add_argument("--quick", action="store_true", help="up to 256 Ki, one repeat")
    args = parser.parse_args()
    top = 18 if args.quick else args.max_log2
    repeat = 1 if args.quick else args.repeat
    sizes = [1 << s for s in range(10, top + 1, 2)]
    if top % 2:
        sizes.append(1 << top)
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"numpy {np.__version__}, 1 thread, best of {repeat}"
    )
    print(
        "| N | chunks | compare-swaps | kernel value-only (M pairs/s) | kernel stable "
        "(M pairs/s) | numpy stable argsort + gather (M pairs/s) | value-only / numpy | "
        "stable / numpy |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for n in sizes:
        print(measure(n, repeat), flush=True)


if __name__ == "__main__":
    main()
