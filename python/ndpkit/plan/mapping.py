"""Which engines to switch on under a mux-k switch layer, and where each SSD's data goes.

The paper's mux2 policy (RANS/RFNS §6.3, Table 10): engines with even ids first,
then odd ids in ascending order; an SSD whose own engine is off is read by its left
neighbour's engine. Generalised to mux-k: SSDs and engines form modules of k
neighbours (the last may be smaller); engine 0 of each module is always on, so a
plan needs at least one engine per module. Extra engines go to modules in ascending
order, round after round (this is the paper's order for k = 2), and inside a module
with a engines on they sit at positions floor(i·k/a), so each serves a contiguous
block of at most ceil(k/a) SSDs, and every SSD goes to the nearest active engine
at or to its left.

Example: `activate(8, 2, 5)` → (0, 1, 2, 4, 6); routes 0→0, 1→1, 2→2, 3→2, 4→4, 5→4, 6→6, 7→6.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ndpkit.errors import ModelError, whole_number


@dataclass(frozen=True)
class Mapping:
    """Active engines, the engine each SSD is routed to, and the select line of each module."""

    devices: int
    module_size: int
    active: tuple[int, ...]
    route: tuple[int, ...]

    @property
    def select(self) -> dict[int, int]:
        """mux2 select lines (§2.6): 1 = the odd SSD to its own engine, 0 = to its left neighbour.

        For k > 2 the value is the position, inside the module, of the engine that the
        module's last switched SSD is routed to.
        """
        k = self.module_size
        lines: dict[int, int] = {}
        for module in range(math.ceil(self.devices / k)):
            first = module * k
            last = min(first + k, self.devices) - 1
            if last == first:
                continue
            lines[module] = self.route[last] - first if k > 2 else int(self.route[last] == last)
        return lines

    def shards_per_engine(self) -> dict[int, int]:
        loads = dict.fromkeys(self.active, 0)
        for engine in self.route:
            loads[engine] += 1
        return loads


def minimum_engines(devices: int, module_size: int) -> int:
    """The fewest engines a mux-k layer can run with: one per module (n/2 for mux2)."""
    _check_layer(devices, module_size)
    return math.ceil(devices / module_size)


def _check_layer(devices: object, module_size: object) -> None:
    """Whole numbers with 1 <= k <= devices: `activate(8.0, 2, 5)` made a Mapping of 8.0
    devices, `minimum_engines(36, 0)` divided by zero, and `minimum_engines(-36, 2)` was -18."""
    whole_number(devices, "devices", "an integer ≥ 1")
    whole_number(module_size, "module_size", "an integer ≥ 1")
    k = module_size
    if devices < 1 or not 1 <= k <= devices:  # type: ignore[operator]
        raise ModelError(f"mux{k} needs 1 <= k <= devices ({devices})")


def activate(devices: int, module_size: int, engines_on: int) -> Mapping:
    """Choose `engines_on` engines under mux-`module_size` and route every SSD to one."""
    k = module_size
    low = minimum_engines(devices, k)
    whole_number(engines_on, "engines_on", "an integer")  # 5.0 was a TypeError from a slice
    if not low <= engines_on <= devices:
        raise ModelError(
            f"mux{k} over {devices} SSDs can run {low}..{devices} engines, not {engines_on}"
        )
    modules = math.ceil(devices / k)
    sizes = np.full(modules, k, dtype=np.int64)
    sizes[-1] = devices - (modules - 1) * k
    counts = _per_module_counts(sizes, engines_on)
    # Modules come in at most three runs of one (size, count), each laid out at once:
    # `plan --optimal` maps every engine count, n²/2 SSDs in all
    changes = np.flatnonzero((np.diff(sizes) != 0) | (np.diff(counts) != 0)) + 1
    bounds = [0, *changes.tolist(), modules]
    active: list[np.ndarray] = []
    route: list[np.ndarray] = []
    for start, stop in itertools.pairwise(bounds):
        firsts = k * np.arange(start, stop)
        positions, routed = _module_layout(int(sizes[start]), int(counts[start]))
        active.append(np.add.outer(firsts, positions).ravel())
        route.append(np.add.outer(firsts, routed).ravel())
    return Mapping(
        devices, k, tuple(np.concatenate(active).tolist()), tuple(np.concatenate(route).tolist())
    )


@lru_cache(maxsize=64)  # muxn asks (n, a) once for each a: unbounded, n² ints were kept
def _module_layout(size: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Inside a module of `size` with `count` engines on: their positions, and the position
    each SSD is routed to (the nearest engine at or to its left)."""
    # count <= size, so the positions floor(i·size/count) are distinct and start at 0; numpy,
    # not a loop over the SSDs: muxn's one module is all n of them, for every count
    positions = np.arange(count, dtype=np.int64) * size // count
    routed = np.repeat(positions, np.diff(positions, append=size))
    return positions, routed


def _per_module_counts(sizes: np.ndarray, engines_on: int) -> np.ndarray:
    """One engine per module, then one more per module in ascending order, round by round.

    The rounds every module still short of its size takes whole are given at once: a round
    at a time, muxn (one module, one engine a round) took n rounds per engine count, and
    `plan --optimal --scheme muxn` on 4,000 SSDs 53 s where mux2 takes 8."""
    counts = np.ones_like(sizes)
    left = engines_on - len(sizes)
    while left > 0:  # at most three passes: the modules have at most two sizes
        open_ = np.flatnonzero(counts < sizes)
        whole = min(left // len(open_), int((sizes[open_] - counts[open_]).min()))
        if whole:
            counts[open_] += whole
            left -= whole * len(open_)
        else:  # fewer engines left than open modules: one more each, in ascending order
            counts[open_[:left]] += 1
            left = 0
    return counts
