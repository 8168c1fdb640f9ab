"""`sweep`: the simulator over a grid of platforms x apps x engine counts x chunk sizes.

The Rust core releases the GIL while it runs, so a thread per core keeps every core busy
without starting processes. Rows come back in grid order whatever order they finish in.
The threads are daemons the calling thread waits on, so Ctrl-C stops a sweep at once.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

from ndpkit.cpus import usable_cpus
from ndpkit.errors import ModelError, function_or_none, whole_number
from ndpkit.hw import Platform
from ndpkit.model import FULL_GEAR, HOST_ONLY, Configuration, Options
from ndpkit.plan import activate, configuration_of, minimum_engines
from ndpkit.profile import Profile
from ndpkit.sim.options import SimOptions
from ndpkit.sim.simulation import simulate

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class SweepPoint:
    platform: Platform
    profile: Profile
    engines_on: int | None
    """None = every engine (full gear)."""
    chunk_bytes: float


def engine_counts(platform: Platform) -> list[int]:
    """Every engine count the platform's switch layer can route: ceil(n/k) … n."""
    n = platform.devices
    if platform.engines is None:
        return []
    k = platform.switch_layer.module_size(n)
    return list(range(minimum_engines(n, k), n + 1))


def grid(
    platforms: Sequence[Platform],
    profiles: Sequence[Profile],
    engines: Sequence[int] | None,
    chunks: Sequence[float],
) -> list[SweepPoint]:
    """The grid's points; `engines` None = every routable count of each platform.

    A platform without engines (CNS) has one point per app and chunk size, with no engines,
    whatever `engines` says: it is the baseline of a sweep over platforms with engines. Engine
    counts for a grid in which no platform has engines are an error (a ModelError), as they
    would be ignored."""
    without = [p.name for p in platforms if p.engines is None]
    if engines is not None and platforms and len(without) == len(platforms):
        have = "has" if len(without) == 1 else "have"
        raise ModelError(
            f"platform {', '.join(repr(name) for name in without)} {have} no engines; give "
            "engine counts with a platform that has engines, or leave them out"
        )
    points = []
    for platform, profile, chunk in product(platforms, profiles, chunks):
        counts: Sequence[int | None]
        if platform.engines is None:
            counts = [None]
        elif engines is None:
            counts = engine_counts(platform)
        else:
            counts = list(engines)
        for count in counts:
            points.append(SweepPoint(platform, profile, count, chunk))
    return points


def configuration(platform: Platform, engines_on: int | None) -> Configuration:
    """Engines switched on by the switch layer's activation policy (§6.3, mux-k)."""
    n = platform.devices
    if engines_on is not None:  # 18.5 was "slice indices must be integers", "18" a TypeError
        whole_number(engines_on, "engines_on", "an integer (or None: every engine)")
    if platform.engines is None:
        return HOST_ONLY  # nothing beside the storage: the host runs the whole kernel
    if engines_on is None or engines_on == n:
        return FULL_GEAR
    k = platform.switch_layer.module_size(n)
    if not minimum_engines(n, k) <= engines_on <= n:
        raise ModelError(
            f"{platform.name}: {engines_on} engine{'' if engines_on == 1 else 's'} cannot "
            f"serve {n} SSD{'' if n == 1 else 's'} through "
            f"{platform.switch_layer.scheme} (needs {minimum_engines(n, k)}..{n})"
        )
    return configuration_of(activate(n, k, engines_on), n)


def run_point(point: SweepPoint, options: Options, sim: SimOptions) -> dict[str, Any]:
    start = time.perf_counter()
    s = simulate(
        point.platform,
        point.profile,
        configuration(point.platform, point.engines_on),
        options,
        sim.with_(chunk_bytes=point.chunk_bytes),
        explain_difference=False,  # a row has no notes: no second, unjittered run for one
    )
    engines = [e for e in s.engines if e["active"]]
    return {
        "platform": s.platform,
        "app": s.app,
        "engines_on": len(engines),
        # Whole bytes as an integer (a CSV with "262144.0" reads as a float elsewhere).
        "chunk_bytes": int(point.chunk_bytes)
        if float(point.chunk_bytes).is_integer()
        else point.chunk_bytes,
        "data_bytes": round(s.data_bytes),  # whole bytes: a data set has no fractions
        "time_s": s.time_s,
        "model_time_s": s.model.time_s,
        "time_difference_pct": s.time_difference * 100,
        "energy_j": s.energy_j,
        "model_energy_j": s.model.energy_j,
        "energy_difference_pct": s.energy_difference * 100,
        "ee_mb_per_j": s.ee_mb_per_j,
        "units": options.units,  # the MB of ee_mb_per_j: 2^20 B (binary) or 10^6 B
        # The simulator's options, host mode and power-off as run (a host split reading its
        # data streams whatever was asked): a jittered or single-buffered sweep's file says so.
        # A point without engines (cns) ran no power-off policy: None, not the "end" (or
        # whatever was asked) it recorded, as `simulate` refuses --engine-power-off there.
        "host_mode": s.host_mode,
        "engine_power_off": _power_off_as_run(sim, s.host_mode) if engines else None,
        "buffer_chunks": sim.buffer_chunks,
        "service_cv": sim.service_cv,
        "seed": sim.seed,
        "bottleneck": s.bottleneck,
        **{f"utilisation_{name}": u for name, u in s.utilisation.items()},
        "chunks": s.chunks,
        "events": s.events,
        "wall_s": time.perf_counter() - start,
    }


def _power_off_as_run(sim: SimOptions, host_mode: str) -> str:
    """`engine_power_off` with auto decided as the run decided it, from its host mode."""
    _, power_off = sim.with_(host_mode=host_mode).resolved(host_part_waits=False)
    return power_off


def sweep(
    points: Sequence[SweepPoint],
    options: Options | None = None,
    sim: SimOptions | None = None,
    *,
    workers: int | None = None,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """Simulate every point on `workers` threads (default: one per CPU this process may run
    on, `usable_cpus`)."""
    options = options or Options()
    sim = sim or SimOptions()
    if workers is not None:  # 0 was the default, -1 ThreadPoolExecutor's ValueError
        whole_number(workers, "workers", "an integer ≥ 1 (or None: one per usable CPU)", least=1)
    function_or_none(progress, "progress", "a function progress(done, total)")
    threads = workers or usable_cpus()
    return _run_all(points, lambda p: run_point(p, options, sim), threads, progress)


Finished = tuple[int, dict[str, Any] | None, BaseException | None]


def _run_all(
    points: Sequence[SweepPoint],
    run: Callable[[SweepPoint], dict[str, Any]],
    workers: int,
    progress: Progress | None,
) -> list[dict[str, Any]]:
    """`run` over `points` on `workers` daemon threads, the rows in the points' order.

    A ThreadPoolExecutor's threads are joined when the interpreter exits, so after Ctrl-C
    (or SIGTERM) `ndpkit sweep` waited for every point in flight to end: 66 s for two
    k-NN points in 2 KiB chunks. Daemon threads are not: a stopped sweep ends at once, and
    in a program that goes on each thread stops after its current point. Where points fail,
    the error raised is that of the first in grid order, as `pool.map` raised it: the points
    before it still running are waited for, none after it is started."""
    finished: queue.Queue[Finished] = queue.Queue()
    stop = threading.Event()
    claim = threading.Lock()
    claimed = [0]  # points handed out, in index order

    def work() -> None:
        while True:
            with claim:  # no point is handed out once a failure has stopped the sweep
                if stop.is_set() or claimed[0] == len(points):
                    return
                index = claimed[0]
                claimed[0] += 1
            try:
                finished.put((index, run(points[index]), None))
            except BaseException as exc:  # raised again in the waiting thread
                finished.put((index, None, exc))
                return

    for _ in range(min(workers, len(points))):
        threading.Thread(target=work, name="ndpkit-sweep", daemon=True).start()
    rows: list[dict[str, Any] | None] = [None] * len(points)
    try:
        for done in range(1, len(points) + 1):
            index, row, error = finished.get()  # Ctrl-C interrupts the wait
            if error is not None:
                raise _first_failure(index, error, rows, finished, stop, claim, claimed)
            rows[index] = row
            if progress is not None:
                progress(done, len(points))
    finally:
        stop.set()
    return [row for row in rows if row is not None]


def _first_failure(
    index: int,
    error: BaseException,
    rows: list[dict[str, Any] | None],
    finished: queue.Queue[Finished],
    stop: threading.Event,
    claim: threading.Lock,
    claimed: list[int],
) -> BaseException:
    """The error of the first failing point in grid order, given that point `index` failed
    with `error`: the points before it that are still running are waited for."""
    with claim:
        stop.set()
        running = {i for i in range(claimed[0]) if rows[i] is None and i != index}
    first = (index, error)
    while any(i < first[0] for i in running):
        other, _, failure = finished.get()
        running.discard(other)
        if failure is not None and other < first[0]:
            first = (other, failure)
    return first[1]
