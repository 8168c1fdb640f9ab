"""Run a kernel over a sharded data set with one local process per engine.

Each active engine is a worker process that reads only the shards of the devices routed to it
(its own device, or under a mux-k plan its k neighbours'), in chunks of whole records of at
most `chunk_bytes`, calls `Kernel.device` on each chunk and merges the partials as it goes
(or folds each chunk into one partial, `Kernel.fold`, for a kernel that `folds`).
The parent merges the engines' partials and runs `Kernel.host`; while the kernel answers
`done=False` (K-Means) every engine makes another pass over its shards.

Why it is built this way:

- **Bounded memory.** A chunk comes from a memory-mapped window of a .npy shard (up to four
  chunks, at most 32 MiB unless one chunk is larger: `dataset.window_records_for`), unmapped
  once the kernel is done with its chunks (or is one batch of a Parquet shard's rows, decoded
  a row group at a time), so a worker's resident memory is a window plus the kernel's
  partials whatever the size of the data set (file pages stay in the page cache, not in the
  worker).
- **Kept mappings, within a budget.** Up to `mapped_budget_bytes` of .npy shards (a quarter
  of physical memory by default, shared by the workers; `NDPKIT_MAPPED_BYTES` or the
  argument sets it, 0 turns it off), a worker maps a shard whole and keeps the mapping for
  later passes and runs (`shard_maps.ShardMaps`): building and tearing down the page tables
  of every window cost an iterative kernel 3-10% of each pass. The pages are the page cache
  the shards occupy anyway; past the budget, shards stream through windows as above, so a
  worker's resident size is bounded by the budget whatever the data set's size. An engine's
  task goes back to the worker that ran it last, where its shards are mapped.
- **forkserver, not fork.** A child forked from the parent would inherit its threads and locks
  (BLAS pools, a progress UI). Forkserver children are forked from a clean, single-purpose
  server that has already imported numpy and this module, so a worker starts in milliseconds
  after the first run in a process (spawn would pay ~0.3 s of imports per worker per run).
  Where forkserver does not exist (Windows), spawn. The processes are started once per run,
  or once for many runs when the executor is used as a context manager.
- **Same core count.** `workers` (default: the CPUs this process may use) caps the processes
  running at once; when there are more engines than workers, engines queue for a free worker.
  Each worker limits its BLAS/OpenMP pools to cores // workers threads (threadpoolctl), so a
  run uses the cores a one-process run would, without oversubscribing them.
- **Workers reuse their memory** (`keep_freed_memory`): a new process's allocator would map
  every temporary of every chunk afresh (FFT2D's engines ran 35% slower than the same loop in
  a long-lived process), so each worker sets it as a long-lived process ends up.
- **Large results bypass the pipe** (`ndpkit.runtime.transfer`). A per-record kernel (LC: a
  score per point) sends the host 1/α of its input; when it declares its row
  (`RowKernel.row_spec`), every engine writes its records' rows straight into the pool's
  rows arena, shared memory that the parent reads in place for the host part
  (`RowKernel.rows_merged`): no merge, no copy. Rows too large for memory go to an arena in
  a file on disk instead, so the workers' and the parent's memory stays bounded whatever
  their size. Other partials are pickled with their large buffers in a spill file in the
  run's spill directory (in /dev/shm when there is one), removed when the run ends.
- **One wake-up for a run of tasks.** A worker that finds its next task already waiting
  when it ends one keeps the answer and sends the answers together when its queue runs dry,
  and the parent queues a busy worker as many tasks as keep every worker busy: each
  wake-up of the parent costs the worker about 0.4 ms on a shared core (its caches and the
  parent's Python), 3% of a GiB of k-NN's top-k split over 8 engines. A shared counter of
  the tasks the worker began and ended (`_Worker.board`) tells the parent which engine a
  worker that dies was running, answered or not.
- **No partial answers.** A missing or corrupt shard is a `ShardError` naming the file, a
  worker that dies is a `WorkerDiedError` naming the engine and its shards, and a kernel bug is
  re-raised with the worker's traceback; in every case the other workers are stopped and no
  result is returned.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import math
import multiprocessing
import multiprocessing.heap
import numbers
import os
import pickle
import resource
import signal
import socket
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import asdict, dataclass, field, replace
from multiprocessing import forkserver, reduction, resource_tracker
from multiprocessing.connection import Connection, wait
from multiprocessing.context import ForkServerContext, SpawnContext
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from ndpkit.cpus import usable_cpus
from ndpkit.errors import (
    NdpkitError,
    RecordError,
    SpecError,
    function_or_none,
    true_or_false,
    whole_number,
)
from ndpkit.files import cleanup_held, ctrl_c_left_to_the_parent, signals_held
from ndpkit.kernels.base import Kernel, RowKernel, RowSpec, check_params
from ndpkit.runtime.dataset import (
    Dataset,
    RecordLayout,
    ShardError,
    corrupt_shard,
    replaced_meanwhile,
    shard_chunks,
    shard_place,
    unchanged,
)
from ndpkit.runtime.shard_maps import BUDGET_ENV, ShardMaps, default_budget_bytes
from ndpkit.runtime.spill_dirs import SpillDir, open_spill_dir, sweep_spill_root
from ndpkit.runtime.transfer import (
    ARENAS,
    Rows,
    RowsArena,
    RowWriter,
    adopt_arena,
    forget_arenas,
    pack,
    send_arena,
    unpack,
)
from ndpkit.runtime.watched_pipe import (
    WATCHED,
    blocking_kept,
    recv_watched,
    send_fd_watched,
    send_watched,
)
from ndpkit.summary import summary
from ndpkit.units import Kind, UnitError, parse

_MERGE_EVERY = 8  # partials a worker holds before merging them into one
RUN_CHUNK_BYTES = 32 * 2**20
"""What an engine hands its device part at once by default. Larger than the data set
readers' 8 MiB (`DEFAULT_CHUNK_BYTES`): each chunk costs a Python call or two around the
kernel (about 10 µs), and with shards kept mapped a chunk is only a slice, so 32 MiB chunks
took 2-3% off K-Means' passes and k-NN's top-k split through the executor against 8 MiB
(benchmarks/README.md). A shard streamed through windows holds one 32 MiB window. A kernel
may ask for its own (`Kernel.chunk_bytes`; over Parquet shards at most this)."""
STALL_TIMEOUT_S = 600.0
"""How long a worker with work may go without any change on its board before the run is
stopped (`WorkerStalledError`): far longer than any chunk of the library's kernels takes
(a 32 MiB chunk of the slowest, FFT2D, takes about 0.2 s), and short enough that a run
whose storage stopped answering ends with an error naming the shard, not never."""
STALL_CHECK_S = 1.0
"""How often the parent looks at the boards while it waits (or at a quarter of a shorter
`stall_timeout_s`). A longer gap between two looks counts as twice this at most: the parent
itself was not watching (the job stopped with Ctrl-Z and its workers with it, or a progress
callback that blocked), and a worker is not to be blamed for that."""

WORKER_EXIT_WAIT_S = 5.0
"""How long closing a pool waits for a worker to end, once asked to stop and again once
killed: a worker stuck in a read that does not return cannot die until it does, and is then
let go (`_let_go`)."""

_UNKNOWN_EXIT = 255
"""The exit status multiprocessing gives a forkserver worker whose status it cannot read:
the fork server, which reports its workers' exits, is gone."""
_PRELOAD = ["__main__", "numpy", "ndpkit.runtime.executor", "ndpkit.runtime.worker_preload"]
"""Imported once by the fork server rather than by every worker. `__main__` is there so that
the user's script (and a kernel it defines) is imported once too, where CPython honours it:
3.11 and 3.12 ignore it (python/cpython#126631, fixed in 2025 for 3.13 and later), and each
worker imports the main module itself. Either way the user's script runs again, as
`__mp_main__`, before a worker can unpickle a kernel it defines; so a script that starts an
executor must protect its entry point with `if __name__ == "__main__":` (`_start_hint`).
`worker_preload` holds what every worker needs besides: the light kernel modules and
threadpoolctl's scan of the loaded thread-pool libraries (about 6 ms of each new worker's
CPU)."""
_GUARD_DOCS = "docs/kernels.md, 'A script that starts an executor'"

Pickled = bytes | memoryview
"""A message pickled for the pipe (the pickler's buffer, or bytes)."""
Progress = Callable[[int, int], None]
"""progress(bytes_done, bytes_total): bytes read so far, and the bytes of the passes started
so far (a multi-pass kernel's total grows by one data set per pass)."""


class WorkerDiedError(NdpkitError):
    """A worker process ended without an answer (killed by a signal, out of memory…).
    `failed_to_start`: it died before it said it was ready, the cause of anything else seen
    then (a main script without its guard, run again in the worker, may rewrite the data
    set: `dataset.unchanged` lets this error stand)."""

    def __init__(self, message: str, *, failed_to_start: bool = False):
        super().__init__(message)
        self.failed_to_start = failed_to_start


class WorkerStalledError(WorkerDiedError):
    """A worker that made no progress (no chunk read, no task begun or ended) for the
    executor's `stall_timeout_s` while it had work: stopped (SIGSTOP), stuck in a read from a
    device or network file system that does not answer, or in a kernel that does not return.
    It has been killed; the message names the engine, the shard and the chunk."""


class TaskLoadError(NdpkitError):
    """A task a worker could not unpickle, most often a kernel whose class the worker
    cannot import (defined in a function or in `python -c` code); raised in the caller with
    the worker's traceback as its cause (the error may be the user's own, raised as the
    kernel's module is imported in the worker). The worker lives on; the run has no
    result."""


class _WorkerTracebackError(Exception):
    """Carries a worker's formatted traceback as the cause of a re-raised kernel error."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class EngineStats:
    """What one engine did: over one pass, or summed over a run's passes."""

    engine: int
    devices: tuple[int, ...]
    shards: int
    records: int
    chunks: int
    bytes_in: int
    """Record bytes read (headers excluded)."""
    bytes_out: int
    """`Kernel.output_bytes` of the engine's merged partial: what it sends to the host."""
    seconds: float
    peak_rss_bytes: int
    """The worker's peak resident set size while this engine ran."""
    rss_growth_bytes: int
    """That peak minus the worker's resident size when the engine started, less the rows it
    wrote into the rows arena (`shared_growth_bytes`): the memory the run itself needed
    (chunks, partials), independent of what the process held before."""
    shared_growth_bytes: int = 0
    """Shared memory the worker mapped while this engine ran: the pages of the rows arena
    it wrote for the first time. They are the host's output, mapped by both processes and
    counted once in the machine's memory, but in both processes' resident sizes. (Near 0 for a
    disk arena: a worker unmaps each chunk's rows once written, so that they count in its
    resident size no longer than a chunk's window does.)"""
    mapped_bytes: int = 0
    """Shard bytes the worker mapped whole while this engine ran and kept for later passes
    and runs (`shard_maps.ShardMaps`): page cache, within the executor's
    `mapped_budget_bytes`. What they added to the resident size is left out of
    `rss_growth_bytes`, as far as it is still resident when the engine ends: where memory
    is short (a cgroup limit below the data set) the kernel reclaims kept pages during the
    run, and those that were in the peak but are gone by the end stay in the growth, which is
    then an upper bound (benchmarks/README.md, "Data sets larger than memory": hundreds of
    MiB with kept mappings under a 2 GiB cgroup, a window's 32 MiB without, for the same
    runs). 0 for an engine whose shards were mapped already, or streamed
    through windows."""

    def plus(self, other: EngineStats) -> EngineStats:
        return replace(
            self,
            records=self.records + other.records,
            chunks=self.chunks + other.chunks,
            bytes_in=self.bytes_in + other.bytes_in,
            bytes_out=self.bytes_out + other.bytes_out,
            seconds=self.seconds + other.seconds,
            peak_rss_bytes=max(self.peak_rss_bytes, other.peak_rss_bytes),
            rss_growth_bytes=max(self.rss_growth_bytes, other.rss_growth_bytes),
            shared_growth_bytes=self.shared_growth_bytes + other.shared_growth_bytes,
            mapped_bytes=self.mapped_bytes + other.mapped_bytes,
        )


@dataclass(frozen=True)
class PassStats:
    """One pass: wall time, time in the host part (merge + host), and every engine."""

    index: int
    wall_s: float
    host_s: float
    engines: tuple[EngineStats, ...]

    @property
    def bytes_in(self) -> int:
        return sum(e.bytes_in for e in self.engines)

    @property
    def bytes_out(self) -> int:
        return sum(e.bytes_out for e in self.engines)


@dataclass(frozen=True)
class RunResult:
    """The answer (`Kernel.finish` of the final state) and how the run went."""

    result: Any
    passes: int
    engines: tuple[EngineStats, ...]
    """Per engine, summed over passes."""
    pass_stats: tuple[PassStats, ...]
    bytes_in: int
    bytes_out: int
    wall_s: float
    workers: int
    """Processes used."""

    def __repr__(self) -> str:  # the dataclass's: every engine of every pass, and the result
        return summary(
            "RunResult",
            passes=self.passes,
            workers=self.workers,
            bytes_in=self.bytes_in,
            bytes_out=self.bytes_out,
            alpha=self.alpha,
            wall_s=self.wall_s,
        )

    @property
    def alpha(self) -> float:
        """The measured reduction ratio α = bytes the engines read / bytes they send."""
        return self.bytes_in / self.bytes_out if self.bytes_out else math.inf

    def as_dict(self) -> dict[str, Any]:
        """Everything but the result, for JSON."""
        return {
            "passes": self.passes,
            "workers": self.workers,
            "bytes_in": self.bytes_in,
            "bytes_out": self.bytes_out,
            "alpha": self.alpha,
            "wall_s": self.wall_s,
            "engines": [asdict(e) for e in self.engines],
            "pass_stats": [
                {"index": p.index, "wall_s": p.wall_s, "host_s": p.host_s}
                | {"engine_s": [e.seconds for e in p.engines]}
                for p in self.pass_stats
            ],
        }


# -- what a worker is sent --------------------------------------------------------------


@dataclass(frozen=True)
class _Shard:
    path: str
    """Absolute: what the worker opens (see `_Engine._task`)."""
    shown: str
    """The path as the data set was opened by (relative if it was): what messages say, as
    the checks made in the parent say it."""
    device: int
    records: int
    offset: int
    file_bytes: int
    crc32: str


@dataclass(frozen=True)
class _Task:
    """One engine's work for one pass."""

    kernel: Kernel
    state: Any
    engine: int
    devices: tuple[int, ...]
    shards: tuple[_Shard, ...]
    layout: RecordLayout
    chunk_records: int
    report_progress: bool
    verify: bool
    spill_dir: str | None
    rows: Rows | None
    run: int = 0
    """Which run of the pool this pass belongs to: a worker keeps the shard mappings of the
    current run (`ShardMaps`)."""

    @property
    def read_bytes(self) -> int:
        return sum(shard.records for shard in self.shards) * self.layout.record_bytes


def engine_devices(
    devices: int, active: Sequence[int] | None, route: Sequence[int] | None
) -> dict[int, tuple[int, ...]]:
    """engine → the devices whose shards it reads, as ndpkit.model.Configuration reads a route:
    `route[device]` is the engine reading that device (default: its own); every device must be
    routed to an active engine. Active engines that no device routes to stay idle.

    Engine i sits beside device i, so engine numbers, in `route` and in `active`, are integers
    from 0 to devices - 1; `active` names each engine once (a route may name one many times:
    that engine reads several devices)."""
    # 2.0 was "'float' object cannot be interpreted as an integer" from range().
    devices = whole_number(devices, "devices", "a whole number of devices ≥ 1", least=1)
    routes = tuple(range(devices)) if route is None else _engine_numbers(route, devices, "route")
    if len(routes) != devices:
        raise SpecError(
            f"must name an engine for each of the {devices} devices, got {len(routes)}",
            field="route",
        )
    if active is None:
        on = set(routes)
    else:
        listed = _engine_numbers(active, devices, "active_devices")
        twice = sorted({engine for engine in listed if listed.count(engine) > 1})
        if twice:
            raise SpecError(
                f"names engines {twice} more than once: {list(listed)}", field="active_devices"
            )
        on = set(listed)
    orphans = [device for device, engine in enumerate(routes) if engine not in on]
    if orphans and route is None:
        # `active_devices=[0]` alone was refused as a bad `route`, which was not given.
        raise SpecError(
            f"leaves devices {orphans} without an engine: with no route each device is read "
            f"by its own engine, and only {sorted(on)} are active; give a route naming an "
            "active engine for every device",
            field="active_devices",
        )
    if orphans:
        raise SpecError(
            f"devices {orphans} are routed to engines that are not active ({sorted(on)})",
            field="route",
        )
    return {
        engine: tuple(d for d, e in enumerate(routes) if e == engine)
        for engine in sorted(set(routes))
    }


def _engine_numbers(values: Iterable[Any], devices: int, name: str) -> tuple[int, ...]:
    """`values` as engine numbers: integers (not bools, not floats) from 0 to devices - 1,
    each beside its own device; else a SpecError naming the argument `name`."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise SpecError(f"must be a list of engine numbers, got {values!r}", field=name)
    # Iterated, a dict gives its keys: route={0: 1, 1: 1} (device: engine) ran each device
    # on its own engine, and a mask {0: False, 1: True} made every engine active, silently.
    # A set's order is not the devices' either.
    unordered = isinstance(values, (AbstractSet, Mapping)) and name == "route"
    if isinstance(values, Mapping) or unordered:
        kind = type(values).__name__
        listed = (
            "one engine per device in device order, route[device] = engine"
            if name == "route"
            else "the engines that are on"
        )
        raise SpecError(
            f"must be a list of engine numbers ({listed}), got a {kind}: {values!r}", field=name
        )
    given = tuple(values)
    wrong = [v for v in given if isinstance(v, bool) or not isinstance(v, numbers.Integral)]
    if wrong:
        raise SpecError(
            f"engine numbers must be integers, got {', '.join(map(repr, wrong))} in {list(given)}",
            field=name,
        )
    engines = tuple(int(v) for v in given)
    if any(engine < 0 for engine in engines):
        raise SpecError(f"engine numbers must be ≥ 0, got {list(engines)}", field=name)
    beyond = sorted({engine for engine in engines if engine >= devices})
    if beyond:
        raise SpecError(
            f"no engine {', '.join(map(str, beyond))}: engine i sits beside device i, so over "
            f"{devices} devices the engines are 0 to {devices - 1}; got {list(engines)}",
            field=name,
        )
    return engines


class LocalExecutor:
    """Runs kernels over data sets with local worker processes.

    `with LocalExecutor(2) as ex:` keeps the processes between runs (no start-up per run);
    without `with`, each `run` starts and stops its own.

    Its workers are started as multiprocessing starts them (forkserver or spawn), by running
    the main script again under another name: a script that uses an executor must protect
    its entry point with `if __name__ == "__main__":`, and cannot be read from stdin.

    Runs from several threads take turns (one executor's workers serve one run at a time);
    an executor per thread runs them side by side. A data set replaced or rewritten while a
    run reads it (`data generate --overwrite`) fails the run with an error saying so.

    `mapped_budget_bytes` bounds the .npy shards the workers keep mapped whole between passes
    and runs, shared evenly among them (default: `NDPKIT_MAPPED_BYTES` if set, else a
    quarter of physical memory; 0: stream every shard through windows every pass).

    `stall_timeout_s`: a worker with work that shows no progress for this long (no chunk
    read, no task begun or ended: stopped, or stuck in a read that does not return) is
    killed and the run fails with `WorkerStalledError`, naming its engine, shard and chunk
    (default STALL_TIMEOUT_S; None: wait for ever).
    """

    def __init__(
        self,
        workers: int | None = None,
        *,
        mapped_budget_bytes: int | None = None,
        stall_timeout_s: float | None = STALL_TIMEOUT_S,
    ):
        if workers is not None:
            workers = _check_workers(workers)
        if mapped_budget_bytes is None:
            mapped_budget_bytes = budget_from_environment()
        self.workers = workers or usable_cpus()
        self.mapped_budget_bytes = mapped_budget_bytes
        self.stall_timeout_s = check_stall_timeout(stall_timeout_s)
        self._keep = False
        self._pool: _Pool | None = None
        self._runs = 0
        self._lock = threading.Lock()
        self._running_in: int | None = None
        """The thread whose run holds `_lock`, if any."""

    @property
    def workers(self) -> int:
        """The most worker processes a run uses (settable between runs, checked as in the
        constructor: 0 set here was a ZeroDivisionError at the next run)."""
        return self._workers

    @workers.setter
    def workers(self, value: int) -> None:
        self._workers = _check_workers(value)

    @property
    def mapped_budget_bytes(self) -> int:
        """The kept-mapping budget of the pools to come (settable between runs, checked as in
        the constructor: -1 set here failed every worker's start, blamed on the script's
        `if __name__ == "__main__":` guard)."""
        return self._mapped_budget_bytes

    @mapped_budget_bytes.setter
    def mapped_budget_bytes(self, value: int) -> None:
        self._mapped_budget_bytes = whole_number(
            value, "mapped_budget_bytes", "a whole number of bytes ≥ 0", least=0
        )

    @property
    def stall_timeout_s(self) -> float | None:
        """The stall limit of the runs to come (settable between runs, checked as in the
        constructor: 0 made every busy worker 'stalled' at the parent's second look)."""
        return self._stall_timeout_s

    @stall_timeout_s.setter
    def stall_timeout_s(self, value: float | None) -> None:
        self._stall_timeout_s = check_stall_timeout(value)

    def __enter__(self) -> LocalExecutor:
        self._keep = True
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stops the kept workers, after a run another thread has under way (they are its)."""
        self._keep = False
        if self._running_in == threading.get_ident():  # from inside a run: it stops them
            return
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    def run(
        self,
        kernel: Kernel,
        dataset: Dataset,
        params: dict[str, Any],
        *,
        active_devices: Sequence[int] | None = None,
        route: Sequence[int] | None = None,
        chunk_bytes: int | None = None,
        progress: Progress | None = None,
        verify: bool = False,
    ) -> RunResult:
        """`kernel` over every shard of `dataset` until its host part says done.

        `active_devices` lists the engines that are on (engine i sits beside device i; None =
        all routed ones); `route[device]` the engine that reads that device. `verify` checks
        each shard's CRC-32 as it is read (costs a CRC pass over the data). `chunk_bytes`:
        the most an engine hands the device part at once (None: the kernel's
        `Kernel.chunk_bytes`, else RUN_CHUNK_BYTES; over Parquet shards at most
        RUN_CHUNK_BYTES)."""
        chunk_bytes = _check_fit(kernel, dataset, chunk_bytes)
        check_params(params, kernel.name)
        plan = engine_devices(dataset.devices, active_devices, route)
        # Both were used only once the workers ran: progress=True ended the run in "'bool'
        # object is not callable" at the first chunk read, and verify="no" verified.
        function_or_none(progress, "progress", "a function progress(bytes_done, bytes_total)")
        verify = true_or_false(verify, "verify")
        # One run at a time: two threads' runs read each other's answers from the same
        # workers' pipes (wrong results, or errors blamed on the other run).
        if self._running_in == threading.get_ident():
            raise SpecError(
                "this executor's run is under way in this thread (a progress callback or a "
                "kernel called run again): start another LocalExecutor for it",
                field="run",
            )
        with self._lock:
            self._running_in = threading.get_ident()
            try:
                start = time.perf_counter()
                stamps = dataset.stamps(with_manifest=True)
                stale = dataset.changed_since_opened(stamps)
                if stale is not None:
                    raise stale
                with unchanged(dataset, stamps):
                    outcome = self._run(
                        kernel, dataset, params, plan, chunk_bytes, progress, verify
                    )
                # A data set replaced while it was read (`data generate --overwrite` renames
                # a new one onto it) gave an answer over a mix of old and new shards: an
                # error, not a result. The files' identities tell, without reading the
                # manifest again; said of the data set where it was replaced whole.
                changed = dataset.changed_shard(stamps)
                if changed is not None:
                    raise replaced_meanwhile(dataset, stamps) or changed
                return replace(outcome, wall_s=time.perf_counter() - start)
            finally:
                self._running_in = None

    def _run(
        self,
        kernel: Kernel,
        dataset: Dataset,
        params: dict[str, Any],
        plan: dict[int, tuple[int, ...]],
        chunk_bytes: int,
        progress: Progress | None,
        verify: bool,
    ) -> RunResult:
        pool = self._acquire(min(self.workers, len(plan)))
        used = min(len(pool.workers), len(plan))
        spill: SpillDir | None = None
        ok = False
        try:
            sweep_spill_root()  # killed runs' leftovers: may take a while, so not held
            with signals_held():  # so that `spill` is known before a signal can stop us
                spill = _spill_dir_if_any()
            self._runs += 1
            spill_path = None if spill is None else spill.path
            run = _Run(kernel, dataset, plan, chunk_bytes, progress, verify, spill_path, self._runs)
            pool.stall_timeout_s = self.stall_timeout_s
            outcome = run.execute(pool, params)
            ok = True
        finally:
            # A second Ctrl-C must not leave workers or spill files.
            cleanup_held(lambda: self._end_run(pool, spill, ok))
        return replace(outcome, workers=used)

    def _end_run(self, pool: _Pool, spill: SpillDir | None, ok: bool) -> None:
        """Stops the pool unless kept (after a failure a worker may be mid-task), and removes
        the run's spill directory; safe to call twice (`files.cleanup_held`)."""
        if not ok or not self._keep:
            pool.close(kill=not ok)
            self._pool = None
        if spill is not None:
            spill.remove()

    def _acquire(self, size: int) -> _Pool:
        if self._pool is not None and len(self._pool.workers) >= size and self._pool.alive():
            return self._pool
        if self._pool is not None:
            self._pool.close()
            self._pool = None  # not kept if the new pool fails to start
        budget = self.mapped_budget_bytes // size
        self._pool = _Pool(size, threads=max(1, usable_cpus() // size), mapped_budget_bytes=budget)
        return self._pool


def _check_workers(value: object) -> int:
    """`value` as a number of workers: an integer ≥ 1."""
    workers = whole_number(value, "workers", "an integer ≥ 1 (or None: one per usable CPU)")
    if workers < 1:
        raise SpecError(f"must be ≥ 1, got {workers}", field="workers")
    return workers


def _check_every(limit_s: float) -> float:
    """How often the parent looks at the boards under a stall limit of `limit_s`."""
    return min(STALL_CHECK_S, limit_s / 4)


def check_stall_timeout(value: object, field: str = "stall_timeout_s") -> float | None:
    """`value` as a stall limit in seconds: a number > 0 (infinity: none), or None (none)."""
    if value is None:
        return None
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    seconds = float(value) if ok else math.nan  # type: ignore[arg-type]
    if not seconds > 0:  # also NaN
        raise SpecError(
            f"must be a number of seconds > 0, or None (wait for ever); got {value!r}",
            field=field,
        )
    return None if math.isinf(seconds) else seconds


def budget_from_environment() -> int:
    """The kept-mapping budget `NDPKIT_MAPPED_BYTES` sets (a size: `2GiB`, `512 MiB`, `0`),
    else `default_budget_bytes()`; a value that is no size is a SpecError naming it."""
    text = os.environ.get(BUDGET_ENV)
    if text is None:
        return default_budget_bytes()
    if text.strip() and text.strip().strip("0") == "":  # "0", "00"
        return 0
    source = f"environment: {BUDGET_ENV}"
    if text.strip().startswith("-"):
        raise SpecError(f"must be ≥ 0 bytes, got {text!r}", source=source)
    try:
        size = parse(text, Kind.SIZE)
    except UnitError as exc:
        raise SpecError(str(exc), source=source) from None
    # `1.5B` was taken as 1 byte and `0.5 B` as 0, which turned keeping off without a word.
    if size != int(size):
        raise SpecError(f"must be a whole number of bytes, got {text!r}", source=source)
    return int(size)


def _check_fit(kernel: Kernel, dataset: Dataset, chunk_bytes: int | None) -> int:
    """The chunk size (`LocalExecutor.run`), once the kernel is known to read the data set's
    records and the size to be a whole number of bytes ≥ 1."""
    # An app name or a directory would fail later as "'str' object has no attribute …".
    if not isinstance(kernel, Kernel):
        raise SpecError(
            f"must be a Kernel (get_kernel(name) for an app), got {kernel!r}", field="kernel"
        )
    if not isinstance(dataset, Dataset):
        raise SpecError(
            f"must be a Dataset (open_dataset(path) for a directory), got {dataset!r}",
            field="dataset",
        )
    if kernel.dtype != dataset.dtype or tuple(kernel.record_shape) != dataset.record_shape:
        raise SpecError(
            f"holds {dataset.dtype} records of shape {dataset.record_shape} (app "
            f"{dataset.app!r}); kernel {kernel.name!r} needs {kernel.dtype} {kernel.record_shape}",
            source=str(dataset.path),
        )
    if chunk_bytes is not None:
        return whole_number(chunk_bytes, "chunk_bytes", "a whole number of bytes ≥ 1", least=1)
    field = f"{type(kernel).__name__}.chunk_bytes"
    own = whole_number(run_chunk_bytes(kernel), field, "a whole number of bytes ≥ 1", least=1)
    # A Parquet shard's chunk is a decoded batch, not a slice of a mapping: a worker took
    # about six times the batch (k-NN's top-k over a 256 MiB shard in 128 MiB chunks: +780
    # MiB, against +80 MiB in 32 MiB ones), for a reading that costs far more than a call.
    if dataset.layout.shard_format == "parquet":
        return min(own, RUN_CHUNK_BYTES)
    return own


def run_chunk_bytes(kernel: Kernel) -> int:
    """The chunk a run hands `kernel` when it names none: its own, else RUN_CHUNK_BYTES."""
    return RUN_CHUNK_BYTES if kernel.chunk_bytes is None else kernel.chunk_bytes


# -- the parent's side --------------------------------------------------------------------


@dataclass
class _Run:
    """One run: passes until done, each pass one task per engine spread over the pool."""

    kernel: Kernel
    dataset: Dataset
    plan: dict[int, tuple[int, ...]]
    chunk_bytes: int
    progress: Progress | None
    verify: bool
    spill_dir: str | None
    serial: int = 0
    """This run's number among the executor's runs (`_Task.run`)."""
    shards: dict[tuple[int, ...], tuple[_Shard, ...]] = field(default_factory=dict)
    """Each engine's shards, by the devices it reads."""
    bytes_done: int = 0
    passes: list[PassStats] = field(default_factory=list)

    def execute(self, pool: _Pool, params: dict[str, Any]) -> RunResult:
        state = self.kernel.init(params)
        while True:
            state, done = self._pass(pool, state)
            if done:
                break
        result = self.kernel.finish(state)
        engines = {e.engine: e for e in self.passes[0].engines}
        for later in self.passes[1:]:
            for e in later.engines:
                engines[e.engine] = engines[e.engine].plus(e)
        return RunResult(
            result=result,
            passes=len(self.passes),
            engines=tuple(engines.values()),
            pass_stats=tuple(self.passes),
            bytes_in=sum(p.bytes_in for p in self.passes),
            bytes_out=sum(p.bytes_out for p in self.passes),
            wall_s=0.0,
            workers=0,
        )

    def _pass(self, pool: _Pool, state: Any) -> tuple[Any, bool]:
        start = time.perf_counter()
        rows = self._rows(pool, state)
        tasks = [self._task(engine, devices, state, rows) for engine, devices in self.plan.items()]
        total = self.dataset.total_bytes * (len(self.passes) + 1)
        on_bytes = None if self.progress is None else self._reporter(total)
        done = pool.run(tasks, on_bytes)
        host_start = time.perf_counter()
        if rows is not None and isinstance(self.kernel, RowKernel):
            merged = self.kernel.rows_merged(pool.arena.lend(rows, self.dataset.records), state)
        else:
            merged = self.kernel.merge([done[engine][0] for engine in self.plan])
        try:
            state, finished = self.kernel.host(merged, state)
        except RecordError as exc:
            raise self._shard_named(exc) from exc
        end = time.perf_counter()
        stats = tuple(done[engine][1] for engine in self.plan)
        self.passes.append(PassStats(len(self.passes), end - start, end - host_start, stats))
        return state, finished

    def _shard_named(self, exc: RecordError) -> NdpkitError:
        """The host part's refusal of a record (`exc.record`, its number in the data set),
        with the shard that holds it named, as a device part's is (`_in_shard`): LC's "the
        score of point 32773 is NaN" named no file, and with --no-verify-shards nothing
        else did."""
        return NdpkitError(f"{self.dataset.place_of(exc.record)}: {exc}")

    def _reporter(self, total: int) -> Callable[[int], None]:
        progress = self.progress
        assert progress is not None

        def on_bytes(n: int) -> None:
            self.bytes_done += n
            progress(self.bytes_done, total)

        return on_bytes

    def _rows(self, pool: _Pool, state: Any) -> Rows | None:
        """Where this pass's rows go, if the kernel writes rows and the pool's arena has
        room for them (else the kernel's partials are merged as usual)."""
        if not isinstance(self.kernel, RowKernel) or not ARENAS:
            return None
        spec = self.kernel.row_spec(state)
        return pool.reserve_rows(self.dataset.records, spec, self.dataset.path)

    def _task(self, engine: int, devices: tuple[int, ...], state: Any, rows: Rows | None) -> _Task:
        ds = self.dataset
        shards = self.shards.get(devices)
        if shards is None:  # the same every pass: built once (paths cost ~10 µs each)
            # Absolute from this process's working directory: a kept worker's is the one it
            # started in, and a caller that changed directory since would have it read
            # another data set's shards under the same relative name. Not normalised: `..`
            # after a symbolic link is the link target's parent, as the checks here saw it.
            shards = tuple(
                _Shard(
                    str(ds.shard_path(s).absolute()),
                    str(ds.shard_path(s)),
                    s.device,
                    s.records,
                    s.offset,
                    s.file_bytes,
                    s.crc32,
                )
                for device in devices
                for s in ds.shards_of(device)
            )
            self.shards[devices] = shards
        return _Task(
            kernel=self.kernel,
            state=state,
            engine=engine,
            devices=devices,
            shards=shards,
            layout=ds.layout,
            chunk_records=ds.chunk_records(self.chunk_bytes),
            report_progress=self.progress is not None,
            verify=self.verify,
            spill_dir=self.spill_dir,
            rows=rows,
            run=self.serial,
        )


@dataclass(eq=False)
class _Worker:
    process: BaseProcess
    conn: Connection
    tasks: deque[_Task] = field(default_factory=deque)
    """Sent and not yet answered, in the order the worker runs them."""
    arena: int = 0
    """The generation of the rows arena this worker has mapped (0: none)."""
    queue_bytes: int = 0
    """The largest task it may be sent while it runs another (`queue_limit_bytes`)."""
    started: bool = False
    """Whether it has said it is ready: got through multiprocessing's start-up, which runs
    the parent's main module again, and its own. A worker that dies before is reported as
    one that failed to start, not as one that failed reading its shards."""
    board: Any = None
    """Shared with the worker (a RawArray of BOARD_SLOTS int64, `BEGAN`…): the tasks it has
    begun and ended, ended ones' answers perhaps still held back (`_worker_main`), and where
    it is in the one under way. None: not shared (the answers then come one by one, and
    `tasks[0]` is the one running)."""
    answered: int = 0
    """Answers heard from it."""
    seen: tuple[int, ...] | None = None
    """Its board when the parent last saw it change while the worker had work (None: idle
    when last looked at)."""
    quiet_s: float = 0.0
    """How long the parent has watched that board without a change (`_Pool._check_progress`:
    time the parent itself was not running is not counted)."""

    @property
    def task(self) -> _Task | None:
        """The task the worker is running or is to begin next, if any: `tasks[0]` unless it
        has ended tasks whose answers it still holds."""
        at = self._ended_unanswered()
        return self.tasks[at] if at < len(self.tasks) else None

    def began(self) -> bool:
        """Whether it had begun `task` (else it was between tasks)."""
        if self.board is None:
            return True
        return bool(self.board[BEGAN] > self.board[ENDED])

    def _ended_unanswered(self) -> int:
        if self.board is None:
            return 0
        return max(0, int(self.board[ENDED]) - self.answered)


BEGAN, ENDED, SHARD, CHUNKS, CHECKED = 0, 1, 2, 3, 4
"""A worker's board: the tasks it has begun (counted once received, before it loads them),
and ended (answered or holding the answer); in the task under way, the shard it reads (its
index in `_Task.shards`; -1 before the first, len(shards) after the last), the chunks of
that shard it has done, and the bytes of it read for a CRC-32 check outside its chunks (a
Parquet shard's, before its first chunk; a whole .npy one's after a failure). The parent
sees a worker's progress by these changing."""
BOARD_SLOTS = 5


HELD_ANSWER_BYTES = 2**20
"""The largest answer a worker holds back while its next task waits: a larger one (a
partial that could not be spilled, with /dev/shm full) goes at once, on its own after those
held before it (not copied into one message with them), so that what a worker holds stays
small however many tasks it is sent."""


QUEUED_TASK_BYTES = 64 * 2**10
"""The largest task sent to a worker that is still running another, where its pipe holds four
times that (`queue_limit_bytes`)."""


def queue_limit_bytes(conn: Connection) -> int:
    """The largest task that may wait in `conn` for a busy worker: a quarter of the socket's
    send buffer, at most QUEUED_TASK_BYTES, so that sending it cannot block the parent (which
    would stall the other workers, and deadlock with a worker blocked sending its progress).
    0 (never queue) where the pipe is no socket whose buffer can be read (Windows pipes, and
    macOS's 8 KiB buffers are left alone too)."""
    if sys.platform != "linux":
        return 0
    try:
        with (
            blocking_kept(conn),
            socket.fromfd(conn.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock,
        ):
            buffer_bytes = sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    except OSError:
        return 0
    return min(QUEUED_TASK_BYTES, buffer_bytes // 4)


class _Pool:
    """Worker processes fed engine tasks over their own pipe, in order, so the parent always
    knows which engine a worker is running when it dies (with `_Worker.board`).

    A worker may be sent its next tasks while it runs one: it then starts the next as soon as
    it has ended one, without waiting for the parent to hear the answer and reply (two
    process wake-ups, about 0.5 ms a task on this VM: 5% of a K-Means pass of 8 engines on
    one worker), and holds the answers until its queue runs dry. Only while there are at
    least as many tasks left as workers (at the end of a pass tasks go only to idle
    workers), each to the busy worker with the least left to read: behind a long one (an
    engine reading several devices), the next would wait while a worker with short ones
    went idle."""

    def __init__(self, size: int, threads: int, mapped_budget_bytes: int = 0):
        _check_open_files(size)
        context = _context()
        self.arena = RowsArena()
        self.stall_timeout_s: float | None = STALL_TIMEOUT_S
        """How long a worker with work may show no progress (None: for ever); set per run."""
        self.workers: list[_Worker] = []
        self._too_large: set[int] = set()
        """Engines of the pass under way whose task is too large to queue."""
        self._sizes: dict[int, int] = {}
        """The pickled size of each engine's task in the pass under way."""
        self._last: dict[int, _Worker] = {}
        """The worker that last ran each engine: it has the engine's shards mapped."""
        for _ in range(size):
            parent_end, child_end = context.Pipe()
            board = _new_board(context)
            process = context.Process(
                target=_worker_main,
                args=(child_end, threads, mapped_budget_bytes, board),
                daemon=True,
            )
            try:
                process.start()
            except (EOFError, ConnectionError):  # the fork server ended before it answered
                parent_end.close()
                child_end.close()
                self.close(kill=True)
                raise WorkerDiedError(
                    "the worker processes failed to start: multiprocessing's fork server, "
                    "which starts them, ended before it answered (its own error, if any, is "
                    f"on stderr){_start_hint()}; no result",
                    failed_to_start=True,
                ) from None
            child_end.close()  # so a dead worker reads as EOF on parent_end
            limit = queue_limit_bytes(parent_end)
            self.workers.append(_Worker(process, parent_end, queue_bytes=limit, board=board))

    def alive(self) -> bool:
        return all(w.process.is_alive() for w in self.workers)

    def reserve_rows(self, records: int, spec: RowSpec, beside: Path) -> Rows | None:
        """The arena's room for a pass's rows (`RowsArena.reserve`; a disk arena may go
        beside the data set `beside`). Workers still mapping an arena that was given up or
        replaced are told to let it go, so that its memory is freed once nothing else holds
        it, even by workers this pass leaves idle."""
        rows = self.arena.reserve(records, spec, beside)
        current = self.arena.generation if rows is not None else 0
        for w in self.workers:
            if w.arena not in (0, current):
                with contextlib.suppress(OSError):
                    w.conn.send(("forget",))
                w.arena = 0
        return rows

    def close(self, kill: bool = False) -> None:
        for w in self.workers:
            if kill:
                _kill(w.process)
            else:
                with contextlib.suppress(OSError):
                    w.conn.send(None)
        for w in self.workers:
            w.process.join(timeout=WORKER_EXIT_WAIT_S)
            if w.process.is_alive():
                w.process.kill()
                # Bounded: a worker stuck in a read that does not return (state D, a device
                # or network file system gone) dies only once the read ends.
                w.process.join(timeout=WORKER_EXIT_WAIT_S)
            if w.process.is_alive():
                _let_go(w.process)
            w.conn.close()
        self.workers = []
        self.arena.close()

    def run(
        self, tasks: list[_Task], on_bytes: Callable[[int], None] | None
    ) -> dict[int, tuple[Any, EngineStats]]:
        """Every task's (partial, stats) by engine; raises on the first failure. The engines
        with the most to read go first (equal ones in plan order): a long one handed out last
        would run alone at the end of the pass while the other workers sat idle."""
        pending = deque(sorted(tasks, key=lambda t: t.read_bytes, reverse=True))
        results: dict[int, tuple[Any, EngineStats]] = {}
        self._too_large, self._sizes = set(), {}
        limit = self.stall_timeout_s
        every = None if limit is None else _check_every(limit)
        self._checked_at = time.monotonic()
        while pending or any(w.tasks for w in self.workers):
            self._dispatch(pending)
            busy = [w for w in self.workers if w.tasks]
            objects = [w.conn for w in busy] + [w.process.sentinel for w in busy]
            ready = set(wait(objects, every))
            for w in busy:
                if w.conn in ready or w.process.sentinel in ready:
                    self._drain(w, results, on_bytes)
            if limit is not None:
                self._check_progress(limit)
        return results

    _checked_at: float | None = None
    """When `_check_progress` last looked (`time.monotonic`; None: not in this run yet)."""

    def _check_progress(self, limit_s: float) -> None:
        """Raise for a worker with work whose board has not changed while the parent watched
        it for `limit_s`. Only up to twice the check period counts between two looks: a
        longer gap is time the parent was not watching (Ctrl-Z stopped the workers with it,
        and `fg` resumed them all an hour later: its first look found every board unchanged
        for an hour), not time the worker had to progress."""
        now = time.monotonic()
        last, self._checked_at = self._checked_at, now
        watched = 0.0 if last is None else min(now - last, 2 * _check_every(limit_s))
        for w in self.workers:
            if not w.tasks or w.board is None:
                w.seen = None
                continue
            board = tuple(w.board)
            if board != w.seen:
                w.seen, w.quiet_s = board, 0.0
                continue
            w.quiet_s += watched
            if w.quiet_s >= limit_s:
                raise _stalled(w, w.quiet_s, limit_s)

    def _dispatch(self, pending: deque[_Task]) -> None:
        """A task to every idle worker; then, while there are at least as many tasks left as
        workers, one queued at a time to the busy worker with the least left to read (so
        none waits behind a long task, an engine reading several devices, while a worker
        with short ones would go idle), each within its pipe's room and its share
        (`_share`)."""
        for w in reversed(self.workers):
            if pending and not w.tasks:
                self._send(w, self._take(pending, w))
        share = self._share(len(pending))
        busy = [w for w in reversed(self.workers) if w.tasks]
        while busy and len(pending) >= len(self.workers):
            w = min(busy, key=lambda w: sum(t.read_bytes for t in w.tasks))
            if len(w.tasks) >= share:  # the others have as much to read, or more
                return
            at = self._choose(pending, w)
            if self._send(w, pending[at], queued=True):
                del pending[at]
            else:
                busy.remove(w)

    def _share(self, pending: int) -> int | float:
        """The most tasks a worker may have unanswered: all of them for a lone worker; with
        others, one more than its part of half the `pending` ones. A worker is heard from
        only when its queue runs dry, so work queued to one that turns out slow (a core
        shared with another process, shards not in the page cache) cannot go to the others:
        halving what is handed out each time keeps that to a few engines at the end of a
        pass (with one of 2 workers at half speed, 32 engines took 1.5 times as long with
        all handed out at once, in a replay of this dispatch)."""
        if len(self.workers) == 1:
            return math.inf
        return 1 + math.ceil(pending / (2 * len(self.workers)))

    def _choose(self, pending: deque[_Task], worker: _Worker) -> int:
        """Where in `pending` the task for `worker` is: the first whose engine it ran last (its
        shards are mapped there), else the first that no other worker ran last, else the first."""
        fallback = None
        for at, task in enumerate(pending):
            last = self._last.get(task.engine)
            if last is worker:
                return at
            if fallback is None and (last is None or last not in self.workers):
                fallback = at
        return 0 if fallback is None else fallback

    def _take(self, pending: deque[_Task], worker: _Worker) -> _Task:
        at = self._choose(pending, worker)
        task = pending[at]
        del pending[at]
        return task

    def _send(self, worker: _Worker, task: _Task, queued: bool = False) -> bool:
        """Send `task`; when `queued` (behind another), only one without an arena to pass
        and within the worker's `queue_bytes`, else False and nothing sent."""
        send_fd = task.rows is not None and worker.arena != task.rows.generation
        if queued and (send_fd or task.engine in self._too_large):
            return False
        message = reduction.ForkingPickler.dumps(("task", task, send_fd))
        if queued and len(message) > worker.queue_bytes:
            self._too_large.add(task.engine)  # not pickled again at every wake-up
            return False
        # Every task behind the first may still be in the pipe.
        waiting = sum(self._sizes.get(t.engine, 0) for t in list(worker.tasks)[1:])
        if queued and waiting + len(message) > worker.queue_bytes:
            return False
        self._sizes[task.engine] = len(message)
        worker.tasks.append(task)
        self._last[task.engine] = worker
        try:
            self._write(worker, message, task.engine)
            if send_fd:
                assert self.arena.fd is not None and task.rows is not None
                self._pass_arena(worker, self.arena.fd, task.engine)
                worker.arena = task.rows.generation
        except (BrokenPipeError, ConnectionResetError):
            # Sent to an idle worker: it died before this task, not reading its shards.
            raise _died(worker, idle=len(worker.tasks) == 1) from None
        return True

    def _write(self, worker: _Worker, message: Pickled, engine: int) -> None:
        """Send `message` (engine `engine`'s task); one that may not fit the pipe's buffer
        under a stall limit as the worker reads it, so that a worker stopped while idle
        fails the run after the limit instead of holding the parent in its send for ever."""
        limit = self.stall_timeout_s
        if limit is None or not WATCHED or len(message) <= worker.queue_bytes:
            worker.conn.send_bytes(message)
            return
        doing = f"taking engine {engine}'s task ({len(message):,} bytes) from its pipe"
        send_watched(worker.conn, message, _check_every(limit), _give_up(worker, limit, doing))

    def _pass_arena(self, worker: _Worker, fd: int, engine: int) -> None:
        """Pass the rows arena `fd` after engine `engine`'s task; under a stall limit as the
        worker reads it: the task before it may have filled the pipe's buffer."""
        limit = self.stall_timeout_s
        if limit is None or not WATCHED or getattr(reduction, "ACKNOWLEDGE", True):
            send_arena(worker.conn, fd, worker.process.pid)
            return
        doing = f"taking engine {engine}'s rows arena from its pipe"
        send_fd_watched(worker.conn, fd, _check_every(limit), _give_up(worker, limit, doing))

    def _read(self, worker: _Worker) -> Any:
        """The next message from `worker`, which has begun sending it; under a stall limit
        read as it comes, so that a worker stopped mid-way through a large answer fails the
        run after the limit."""
        limit = self.stall_timeout_s
        if limit is None or not WATCHED:
            return worker.conn.recv()
        quiet = _give_up(worker, limit, "sending a message to the parent")
        return reduction.ForkingPickler.loads(recv_watched(worker.conn, _check_every(limit), quiet))

    def _drain(
        self,
        worker: _Worker,
        results: dict[int, tuple[Any, EngineStats]],
        on_bytes: Callable[[int], None] | None,
    ) -> None:
        """Handle every message a worker has sent; a worker gone mid-task is an error."""
        while worker.tasks and worker.conn.poll():
            try:
                message = self._read(worker)
            except (EOFError, OSError):  # also part-way through a message: OSError then
                raise _died(worker) from None
            # Not in the `try`: a kernel's own EOFError or OSError is its error, not a death.
            self._handle(worker, message, results, on_bytes)
        if worker.tasks and not worker.process.is_alive():
            raise _died(worker)

    def _handle(
        self,
        worker: _Worker,
        message: tuple[Any, ...],
        results: dict[int, tuple[Any, EngineStats]],
        on_bytes: Callable[[int], None] | None,
    ) -> None:
        kind = message[0]
        if kind == "ready":
            worker.started = True
        elif kind == "progress":
            if on_bytes is not None:
                on_bytes(message[1])
        elif kind == "answers":  # held back while the worker's next tasks waited
            for answer in message[1]:
                self._handle(worker, reduction.ForkingPickler.loads(answer), results, on_bytes)
        elif kind == "done":
            _, engine, packed, stats, unreported_bytes = message
            assert engine == worker.tasks[0].engine, (engine, worker.tasks[0].engine)
            results[engine] = (unpack(packed), stats)
            worker.tasks.popleft()
            worker.answered += 1
            if on_bytes is not None and unreported_bytes:
                on_bytes(unreported_bytes)
        else:
            _, error, remote_traceback = message
            if isinstance(error, NdpkitError) and not isinstance(error, TaskLoadError):
                raise error
            raise error from _WorkerTracebackError(remote_traceback)


FILES_PER_WORKER = 4
"""Open files the parent holds per worker (its pipe, its process sentinel, one passing
through the fork server as it starts, and what a kernel's libraries open), beside
FILES_BESIDE_WORKERS of its own: measured 12 + 3 per worker for LC and one more per worker
for k-NN, so with a margin."""
FILES_BESIDE_WORKERS = 16
OPEN_FILES_WANTED = 4096
"""The soft limit on open files a pool raises a lower one to, within the hard limit: the
fork server and the workers keep the limit they start with, and a later pool with more
workers reuses the same fork server."""


def _check_open_files(workers: int) -> None:
    """Workers to start need open files in this process: a soft limit below
    OPEN_FILES_WANTED is raised towards the hard limit, as a server does (for the rest of
    the process, and the processes it starts, as the docs say), and a hard limit below what
    the workers need stops the run before any worker starts, with one error, not a failure
    halfway through starting the fork server (`ulimit -n 32` and 8 workers: a traceback
    from each process)."""
    needed = FILES_BESIDE_WORKERS + FILES_PER_WORKER * workers
    infinite = resource.RLIM_INFINITY
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = max(OPEN_FILES_WANTED, needed)
        if soft != infinite and soft < wanted:
            soft = wanted if hard == infinite else min(wanted, hard)
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    except (OSError, ValueError):
        return
    if soft != infinite and soft < needed:
        raise NdpkitError(
            f"{workers} worker processes need about {needed} open files, and this process "
            f"may open {soft} (ulimit -n); raise the limit, or start fewer workers"
        )


def _running(process: BaseProcess) -> bool:
    """Whether the worker is still running although multiprocessing says it exited: it read
    the status from the fork server, and made one up when the server was gone."""
    if process.exitcode != _UNKNOWN_EXIT or process.pid is None:
        return False
    try:
        os.kill(process.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill(process: BaseProcess) -> None:
    """SIGKILL the worker, also one whose exit multiprocessing wrongly took as done (then its
    `kill` does nothing, and the worker would go on reading shards for no one)."""
    process.kill()
    if _running(process) and process.pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGKILL)


def _let_go(process: BaseProcess) -> None:
    """Stop waiting for a worker that a SIGKILL has not ended (stuck in a read that does not
    return): multiprocessing joins every child it knows of, without a time limit, as the
    interpreter exits, so the command printed its error and then hung until the read
    returned (for ever, for a file system that is gone). It dies once the read ends."""
    children = getattr(multiprocessing.process, "_children", None)
    if isinstance(children, set):
        children.discard(process)


def _died(worker: _Worker, idle: bool = False) -> WorkerDiedError:
    """The error for a worker gone with tasks unanswered, named for `worker.task`, the one it
    was running or was to begin next; `idle`: that task could not be sent, so the worker died
    before it, between tasks."""
    worker.process.join(timeout=1)
    task = worker.task
    lost = task is None  # it had ended every task it was sent, and was sending the answers
    if task is None:
        task = worker.tasks[-1]
    unsent = idle
    idle = idle or not worker.began()
    names = [shard.shown for shard in task.shards]
    listed = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    engine = f"engine {task.engine} (devices {list(task.devices)}, worker pid {worker.process.pid})"
    pid = worker.process.pid
    if _running(worker.process):
        _kill(worker.process)
        what = (
            f"worker pid {pid} had run engines {_engines_of(worker)}"
            if lost
            else f"{engine} was reading {listed}"
        )
        return WorkerDiedError(
            f"{what} when the pool's fork server, which starts the "
            "workers and reports their exits, died (killed or crashed); the worker was still "
            "running and has been stopped; no result"
        )
    code = worker.process.exitcode
    if code is not None and code < 0:
        how = f"was killed by {signal.Signals(-code).name}"
    elif code is None:
        how = "stopped answering"
    else:
        how = f"exited with status {code}"
    if not _heard_ready(worker):
        return WorkerDiedError(
            f"{engine}: the worker process failed to start: it {how} before it began its "
            f"task (its own error, if any, is on stderr){_start_hint()}; no result",
            failed_to_start=True,
        )
    if lost:
        return WorkerDiedError(
            f"worker pid {pid} {how} after it had run engines {_engines_of(worker)}, before "
            "their answers reached the parent; no result"
        )
    if idle:
        return WorkerDiedError(
            f"worker pid {worker.process.pid} {how} while idle, between tasks, so engine "
            f"{task.engine} (devices {list(task.devices)}) "
            f"{'could not be sent to it' if unsent else 'was never begun there'}; no result"
        )
    where = _reading(worker, task) or f"while reading {listed}"
    return WorkerDiedError(f"{engine} {how} {where}{_resized(task)}; no result")


def _reading(worker: _Worker, task: _Task) -> str | None:
    """Where in `task` the worker was, from its board, as a clause: the shard and chunk it
    was reading, or that it had read them all; None where the board does not say (not
    shared, or the worker was loading the task)."""
    board = worker.board
    if board is None or len(board) <= CHUNKS or task is not worker.task or not worker.began():
        return None
    shard = int(board[SHARD])
    if shard >= len(task.shards):
        return "after reading its shards (merging or sending its partial)"
    if shard < 0:
        return None
    return f"while reading {_chunk_clause(task, shard, int(board[CHUNKS]))}"


def _chunk_clause(task: _Task, shard: int, chunks: int) -> str:
    chunk_bytes = task.chunk_records * task.layout.record_bytes
    return (
        f"{task.shards[shard].shown}, in its chunk {chunks + 1} (chunks of {chunk_bytes:,} "
        f"bytes; {chunks} of them done)"
    )


def _give_up(worker: _Worker, limit_s: float, doing: str) -> Callable[[float], None]:
    """A watched pipe's `quiet`: the worker's stall once nothing has moved for `limit_s`
    while it was `doing` that (`_stalled`'s `in_pipe`)."""

    def quiet(seconds: float) -> None:
        if seconds >= limit_s:
            raise _stalled(worker, seconds, limit_s, in_pipe=doing)

    return quiet


def _stalled(
    worker: _Worker, quiet_s: float, limit_s: float, in_pipe: str | None = None
) -> WorkerStalledError:
    """The error for a worker whose board has not changed for `quiet_s`, named for what it
    was doing (`in_pipe`: a message it stopped taking or giving mid-way, as a clause); the
    worker is killed first (it would go on holding its shards)."""
    state = _process_state(worker.process.pid)
    _kill(worker.process)
    task, board = worker.task, worker.board
    pid = worker.process.pid
    if not _heard_ready(worker):
        # Not yet through multiprocessing's start-up, which runs the parent's main module
        # again (a script that imports a large library at its top, or waits for input).
        nxt = "" if task is None else f" (engine {task.engine} was to begin there)"
        return WorkerStalledError(
            f"worker pid {pid} made no progress for {quiet_s:.3g} s while starting, before "
            f"it said it was ready{nxt}{state}; the worker has been killed; no result"
            f"{_start_hint()}. A worker that may take longer than {limit_s:g} s to start "
            # the flag too, as a stall mid-run says: `evaluate --data` users read this
            "needs a longer limit (LocalExecutor(stall_timeout_s=...), or `ndpkit evaluate "
            "--stall-timeout`)",
            failed_to_start=True,
        )
    if in_pipe is not None:
        who, doing = f"worker pid {pid}", in_pipe
    elif task is None or not worker.began():
        nxt = "" if task is None else f" (engine {task.engine} was to begin next)"
        who, doing = f"worker pid {pid}", f"between tasks{nxt}"
    else:
        shard, chunks = int(board[SHARD]), int(board[CHUNKS])
        who = f"engine {task.engine} (devices {list(task.devices)}, worker pid {pid})"
        if shard < 0:
            first = task.shards[0].shown if task.shards else "its shards"
            doing = f"before its first chunk (loading its task, or opening {first})"
        elif shard >= len(task.shards):
            doing = "after reading its shards (merging or sending its partial)"
        elif 0 < int(board[CHECKED]) < task.shards[shard].file_bytes:
            doing = (
                f"checking the CRC-32 of {task.shards[shard].shown} ({int(board[CHECKED]):,} of "
                f"its {task.shards[shard].file_bytes:,} bytes read)"
            )
        else:
            doing = f"reading {_chunk_clause(task, shard, chunks)}"
    return WorkerStalledError(
        f"{who} made no progress for {quiet_s:.3g} s {doing}{state}; the worker has been "
        "killed; no result. A "
        f"chunk that may take longer than {limit_s:g} s needs a longer limit "
        "(LocalExecutor(stall_timeout_s=...), or `ndpkit evaluate --stall-timeout`)"
    )


_STATES = {
    "T": "stopped (SIGSTOP)",
    "t": "stopped by a debugger",
    "D": "waiting in the operating system for I/O (state D: a device or network file "
    "system that does not answer)",
    "R": "running",
    "S": "sleeping (state S: waiting on an event: a lock, a pipe, a timer, or a network or "
    "FUSE file system)",
}


def _process_state(pid: int | None) -> str:
    """What Linux says the process is doing, as a clause (else empty): from /proc/PID/stat."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return ""
    # The state follows the command name, which is in parentheses and may hold any byte.
    fields = stat[stat.rfind(b")") + 1 :].split()
    state = fields[0].decode() if fields else ""
    described = _STATES.get(state)
    return f", while the process was {described}" if described else ""


def _engines_of(worker: _Worker) -> str:
    return ", ".join(str(t.engine) for t in worker.tasks)


def _resized(task: _Task) -> str:
    """The task's shards that are no longer the size the manifest says, as a clause: a shard
    truncated while it is mapped kills its reader with SIGBUS, and the list of the engine's
    shards may not show it."""
    changed = []
    for shard in task.shards:
        try:
            size = os.stat(shard.path).st_size
        except OSError:
            changed.append(f"{shard.shown} is gone")
            continue
        if size != shard.file_bytes:
            changed.append(f"{shard.shown} is {size} bytes, the manifest says {shard.file_bytes}")
    if not changed:
        return ""
    more = f" and {len(changed) - 2} more" if len(changed) > 2 else ""
    return f" (since then {'; '.join(changed[:2])}{more}: changed while it was read)"


def _heard_ready(worker: _Worker) -> bool:
    """Whether the worker said it was ready, reading that message if it is still in the pipe
    (from a worker that died as it was sent its first task)."""
    if not worker.started:
        with contextlib.suppress(EOFError, OSError):
            worker.started = worker.conn.poll() and worker.conn.recv() == ("ready",)
    return worker.started


def _start_hint() -> str:
    """Why a worker may fail to start: multiprocessing starts it by running the parent's main
    module again (as `__mp_main__`), unless that is a package's `__main__`, `-c` code, an
    interactive session or the `ndpkit` command."""
    main = sys.modules.get("__main__")
    name = getattr(getattr(main, "__spec__", None), "name", None)
    path = getattr(main, "__file__", None)
    if getattr(getattr(main, "main", None), "__module__", None) == "ndpkit.cli":
        return ""  # the `ndpkit` command's own script, whose entry point is guarded
    if name is not None:
        if name == "__main__" or name.endswith(".__main__"):
            return ""
        what = f"module {name}"
    elif path is None:
        return ""
    elif not os.path.isfile(path):
        return (
            f". A worker starts by running the parent's main module again, and here that is "
            f"{path!r}, which it cannot read: run code that starts an executor from a script "
            f'file, with its entry point protected by `if __name__ == "__main__":` '
            f"({_GUARD_DOCS})"
        )
    else:
        what = path
    return (
        f". A worker starts by running the parent's main module ({what}) again: a script "
        f'that starts an executor must protect its entry point with `if __name__ == "__main__":`'
        f", or its body runs again in every worker ({_GUARD_DOCS})"
    )


def _context() -> SpawnContext | ForkServerContext:
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOAD)  # no effect once the server runs: harmless
    _start_fork_server()
    return context


def _start_fork_server() -> None:
    """Starts multiprocessing's fork server with Ctrl-C blocked if the `ndpkit` command
    asked for it (`files.leave_ctrl_c_to_the_parent`). The server's own code ignores SIGINT
    only once its preload modules are imported, so a Ctrl-C from the terminal (sent to the
    whole process group) about a second into a run printed the server's KeyboardInterrupt
    traceback beside the command's one line. A blocked signal stays blocked through fork and
    exec: the server holds a Ctrl-C pending until it ignores SIGINT itself, which discards
    it. Blocked, not ignored, in this process: a Ctrl-C while the server starts waits, and
    stops the command once it is unblocked (ignoring it lost it, and the run went on to the
    end). Only for the command: the server is the process's one, and a program that embeds
    ndpkit may run other forkserver pools whose workers expect Ctrl-C."""
    if not ctrl_c_left_to_the_parent() or threading.current_thread() is not threading.main_thread():
        return
    if not hasattr(signal, "pthread_sigmask"):  # no fork server there either
        return
    # The server's start starts the resource tracker first, and that unblocks SIGINT after
    # blocking it around its own start: so the tracker first, then the server, blocked.
    resource_tracker.ensure_running()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


# -- the worker's side --------------------------------------------------------------------


def _worker_main(
    conn: Connection, threads: int, mapped_budget_bytes: int = 0, board: Any = None
) -> None:
    """Run tasks until told to stop or the parent goes away. Ctrl-C is the parent's to handle:
    it stops the workers. `board` (`_Worker.board`) counts the tasks begun and ended."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from ndpkit.runtime.worker_preload import threadpools  # noqa: PLC0415 (the server's)

    threadpools().limit(limits=threads)  # kept for the life of the process
    keep_freed_memory()
    maps = ShardMaps(mapped_budget_bytes)
    if not _answer(conn, ("ready",)):  # started: a death from now on is the task's
        return
    progress = _Progress(conn)
    held: list[Pickled] = []  # answers kept while the next task waits in the pipe
    while True:
        try:
            data = conn.recv_bytes()
        except (EOFError, OSError):
            return
        # Begun once it is in, before it is loaded: a worker killed loading its task (the
        # kernel's module, a large state: an OOM kill) died in that task, not idle. Not yet
        # at a shard: importing the kernel's module may take a while (`_stalled`).
        _mark(board, -1)
        _count(board, BEGAN)
        try:
            message = reduction.ForkingPickler.loads(data)
        except Exception as exc:  # a task this process cannot unpickle: its kernel's class
            _count(board, ENDED)
            error = ("error", _unloadable(exc), traceback.format_exc())
            if not _send_ended(conn, held, _dumps(error)):
                return
            held = []
            continue
        del data  # not kept beside the task's state while it runs
        if message is None or message[0] == "forget":
            _count(board, BEGAN, -1)  # no task
            # Only between passes, with every answer heard; sent first all the same.
            if held and not _send_answers(conn, held):
                return
            held = []
            if message is None:
                return
            forget_arenas()
            continue
        _, task, fd_follows = message
        answer, hold = _run_and_answer(conn, task, fd_follows, progress, maps, board)
        _count(board, ENDED)
        if hold:
            held.append(answer)
            continue
        if not _send_ended(conn, held, answer):
            return
        held = []
        del answer  # a large one is not kept while the next task runs either


def _run_and_answer(
    conn: Connection,
    task: _Task,
    fd_follows: bool,
    progress: _Progress,
    maps: ShardMaps,
    board: Any,
) -> tuple[Pickled, bool]:
    """Run `task`: its answer, pickled, and whether to hold it back (its next task already
    waiting, and the answer small). The partial, and its pickled copy when it was not
    spilled, are gone once this returns: the worker kept them until its next task ended."""
    try:
        if fd_follows:  # read before anything can fail, so the pipe stays in step
            assert task.rows is not None  # sent with the task's rows (`_Pool._send`)
            adopt_arena(conn, task.rows.generation, task.rows.size_bytes)
        progress.start(task.report_progress)
        partial, stats = _run_task(task, progress, maps, board)
        packed = pack(partial, task.spill_dir, f"engine-{task.engine}.bin")
        # The next task already waiting: this answer may go with the next ones, one
        # wake-up of the parent for the lot; the bytes the bar has not been told of
        # then go with the next progress message instead.
        waiting = board is not None and conn.poll()
        unreported = 0 if waiting else progress.take()
        # Pickled now, so that a result that cannot be pickled is this task's error.
        answer = _dumps(("done", task.engine, packed, stats, unreported))
    except Exception as exc:
        return _dumps(("error", _picklable(exc), traceback.format_exc())), False
    return answer, waiting and len(answer) <= HELD_ANSWER_BYTES


def _count(board: Any, slot: int, by: int = 1) -> None:
    if board is not None:
        board[slot] += by


def _send_ended(conn: Connection, held: list[Pickled], answer: Pickled) -> bool:
    """Send `answer` after those `held`: in one message with them, unless it is over
    HELD_ANSWER_BYTES; that one goes in a message of its own (in one with them it was copied
    and pickled again, three times its size in the worker, and the parent held the message,
    the tuple of answers and the partial). False if the parent is gone (`_answer`)."""
    if len(answer) > HELD_ANSWER_BYTES and held:
        return _send_answers(conn, held) and _send_answers(conn, [answer])
    return _send_answers(conn, [*held, answer])


def _send_answers(conn: Connection, answers: list[Pickled]) -> bool:
    """Send pickled answers, in one message if there are several; False if the parent is
    gone (`_answer`)."""
    if len(answers) == 1:
        data = answers[0]
    else:  # each at most HELD_ANSWER_BYTES
        data = _dumps(("answers", tuple(bytes(a) for a in answers)))
    try:
        conn.send_bytes(data)
    except OSError:
        return False
    return True


def _dumps(message: tuple[Any, ...]) -> Pickled:
    """`message` pickled, in the pickler's own buffer (not copied: a partial that could not
    be spilled may be large)."""
    return reduction.ForkingPickler.dumps(message)


MALLOC_MMAP_THRESHOLD_BYTES = 32 * 2**20
"""Allocations below this come from the worker's heap, not a fresh mapping of their own."""
MALLOC_TRIM_THRESHOLD_BYTES = 64 * 2**20
"""Free memory at the top of the heap below this stays in the worker for the next chunk."""
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's <malloc.h>


def keep_freed_memory() -> None:
    """Let the worker reuse the memory of a kernel's temporaries from one chunk to the next.

    glibc maps each allocation above its mmap threshold (128 KiB in a new process) anew and
    returns freed memory at the heap's top above its trim threshold; it raises both only as
    large blocks are freed. A long-lived one-process run has freed large arrays already and
    reuses its memory; a new worker gets fresh pages, and a page fault per 4 KiB, for every
    temporary of every chunk: FFT2D's ~3 MiB ones per 4 images made its engines 35% slower
    than the same loop in the parent. These are the values glibc's own adjustment tops out
    at on 64-bit (its largest mmap threshold, and twice that). What the worker then keeps is
    bounded by its kernel's working set per chunk, not by the data set: up to 64 MiB free at
    each heap's top, plus whatever is free below live blocks. A user's own
    `MALLOC_MMAP_THRESHOLD_`, `MALLOC_TRIM_THRESHOLD_` or `GLIBC_TUNABLES` wins; elsewhere
    than glibc (musl, macOS, Windows), or if glibc refuses a value, nothing changes."""
    if not sys.platform.startswith("linux") or any(
        name in os.environ
        for name in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")
    ):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # mallopt answers 1 on success; 32-bit glibc caps the mmap threshold at 16 MiB: then
    # leave both as they were rather than half set.
    if mallopt(_M_MMAP_THRESHOLD, MALLOC_MMAP_THRESHOLD_BYTES) == 1:
        mallopt(_M_TRIM_THRESHOLD, MALLOC_TRIM_THRESHOLD_BYTES)


def _answer(conn: Connection, message: tuple[Any, ...]) -> bool:
    """Send `message` to the parent; False if it is gone (stopped the pool, or died), in
    which case there is no one to tell and the worker just ends. Pickled first, so that a
    result that cannot be pickled is the task's error, not mistaken for a closed pipe."""
    return _send_answers(conn, [_dumps(message)])


def _unloadable(exc: Exception) -> NdpkitError:
    """The error for a task the worker cannot unpickle: most likely a kernel whose class the
    worker cannot import. It ended the worker, reported as dying "while reading" the
    engine's shards, with the cause only on stderr. Any other error (the kernel's module
    failing as a worker imports it, its `__setstate__`) is not given that advice, which
    would hide it: the caller sees it with the worker's traceback."""
    if not isinstance(exc, (AttributeError, ImportError)):
        return TaskLoadError(
            f"a worker process cannot load its task: unpickling it raised "
            f"{type(exc).__name__}: {exc} (in importing the kernel's module or rebuilding the "
            "kernel there; the worker's traceback is this error's cause); no result"
        )
    return TaskLoadError(
        f"a worker process cannot load its task ({type(exc).__name__}: {exc}): workers "
        "unpickle the kernel, so its class must be importable there, defined at the top "
        "level of a module, or of the main script outside its "
        '`if __name__ == "__main__":` block (not inside that block or a function, nor in '
        f"`python -c` code or an interactive session; {_GUARD_DOCS}); no result"
    )


def _picklable(exc: Exception) -> Exception:
    """`exc`, or a RuntimeError with its type and message if it does not survive pickling.
    Loaded again too: an exception whose `__init__` takes other arguments than its `args`
    (`def __init__(self, what, where)`) pickles, but unpickling it in the parent raised
    TypeError from multiprocessing (`__init__() missing 1 required positional argument`),
    in place of the kernel's error and the worker's traceback."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


PROGRESS_EVERY_S = 0.05
"""How often at most a worker tells the parent how far it has read: every message wakes the
parent, which on this VM cost a K-Means pass in 8 MiB chunks about 5% when it was every
chunk. 20 updates a second are plenty for a progress bar."""


class _Progress:
    """A worker's bytes read, sent at most every PROGRESS_EVERY_S (a new worker's first chunk
    at once, so the parent sees work start); the rest goes with the task's answer (`take`)."""

    def __init__(self, conn: Connection):
        self.conn = conn
        self.on = False
        self.unsent_bytes = 0
        self.sent_at = -math.inf

    def start(self, on: bool) -> None:
        """A new task, which reports its progress if `on`. Bytes not yet sent (those of a task
        whose answer is held back) stay, for the next message."""
        self.on = on

    def add(self, n_bytes: int) -> None:
        if not self.on:
            return
        self.unsent_bytes += n_bytes
        now = time.monotonic()
        if now - self.sent_at >= PROGRESS_EVERY_S:
            self.conn.send(("progress", self.take()))
            self.sent_at = now

    def take(self) -> int:
        unsent, self.unsent_bytes = self.unsent_bytes, 0
        return unsent


def _run_task(
    task: _Task, progress: _Progress, maps: ShardMaps | None = None, board: Any = None
) -> tuple[Any, EngineStats]:
    """One engine's pass: its partial (None for a kernel that writes rows), and its stats;
    where it is goes on `board` (`SHARD`, `CHUNKS`) as it reads."""
    if maps is not None:
        maps.start_run(task.run)
    _reset_peak_memory()
    (rss_start, _, shared_start, files_start), start = _memory_bytes(), time.perf_counter()
    mapped_start = 0 if maps is None else maps.mapped_bytes
    writer = _writer(task)
    partial, records, chunks = _device_pass(task, progress, writer, maps, board)
    _, peak, shared_end, files_end = _memory_bytes()
    shared = max(0, shared_end - shared_start)
    mapped = 0 if maps is None else maps.mapped_bytes - mapped_start
    # Only what the kept mappings added to the resident size is left out of the growth: a
    # task that dropped older mappings to make room (or whose pages were not all resident)
    # added less than it mapped, and subtracting it all would hide the run's own memory.
    kept_resident = min(mapped, max(0, files_end - files_start)) if files_end else mapped
    if task.rows is None:
        bytes_out = task.kernel.output_bytes(partial)
    else:
        bytes_out = records * task.rows.spec.row_bytes
    stats = EngineStats(
        engine=task.engine,
        devices=task.devices,
        shards=len(task.shards),
        records=records,
        chunks=chunks,
        bytes_in=records * task.layout.record_bytes,
        bytes_out=bytes_out,
        seconds=time.perf_counter() - start,
        peak_rss_bytes=peak,
        rss_growth_bytes=peak - rss_start - shared - kept_resident,
        shared_growth_bytes=shared,
        mapped_bytes=mapped,
    )
    return partial, stats


def _device_pass(
    task: _Task,
    progress: _Progress,
    writer: RowWriter | None,
    maps: ShardMaps | None = None,
    board: Any = None,
) -> tuple[Any, int, int]:
    """Every chunk of the engine's shards through the device part, its rows written by
    `writer` or its partials merged as they come (or folded, `Kernel.folds`): (merged
    partial or None, records, chunks)."""
    kernel, partials = task.kernel, list[Any]()
    records = chunks = 0

    def checked(n: int) -> None:  # a block of a shard's CRC-32 check: progress too
        _count(board, CHECKED, n)

    for at, shard in enumerate(task.shards):
        _mark(board, at)
        stream = shard_chunks(
            Path(shard.path),
            shard,
            task.layout,
            task.chunk_records,
            verify=task.verify,
            maps=maps,
            run=task.run,
            on_read=checked,
        )
        try:
            for offset, chunk in stream:
                if writer is None and kernel.folds:
                    partials = [
                        kernel.fold(partials[0] if partials else None, chunk, task.state, offset)
                    ]
                elif writer is None:
                    partials.append(kernel.device(chunk, task.state, offset))
                else:
                    writer.write(chunk, task.state, offset)
                records, chunks = records + len(chunk), chunks + 1
                if board is not None:
                    board[CHUNKS] += 1
                progress.add(chunk.nbytes)
                del chunk  # so the window is unmapped before the next one is mapped
                if len(partials) >= _MERGE_EVERY:
                    partials = [kernel.merge(partials)]
        except ShardError as exc:  # the shard's own problem, said as well as it can be
            raise _shown(exc, shard) from None
        except Exception as exc:
            # A .npy shard's CRC-32 is known only at its end, so a kernel refusing a corrupt
            # chunk (a NaN point) spoke first: with `verify`, the corruption is the error.
            npy = task.layout.shard_format == "npy"  # a Parquet shard's CRC came first
            corrupt = (
                corrupt_shard(Path(shard.path), shard, checked) if task.verify and npy else None
            )
            if corrupt is not None:
                raise _shown(corrupt, shard) from None
            named = _in_shard(exc, shard)
            if named is exc:
                raise
            raise named from exc
    _mark(board, len(task.shards))
    return (None if writer else kernel.merge(partials)), records, chunks


def _shown(exc: ShardError, shard: _Shard) -> ShardError:
    """`exc`, raised for the absolute path the worker opened, naming the shard as the data
    set was opened instead (as the parent's own checks of the same shard name it), in its
    detail too: a library's report quoted there names the file it opened (pyarrow's "Failed
    to open local file '/abs/…'" of a shard removed as it was read)."""
    if exc.source != shard.path:
        return exc
    return ShardError(shard.shown, exc.detail.replace(shard.path, shard.shown))


def _in_shard(exc: Exception, shard: _Shard) -> Exception:
    """The kernel's error `exc`, raised reading `shard`, with the shard named: a kernel
    refuses a record by its number in the data set ("point 131077 has a non-finite
    coordinate"), which does not say which of thousands of files holds it (with
    `--no-verify-shards` nothing else does). A plain NdpkitError, the kernels' word on their
    input, gets the shard in its message; any other error a note in its traceback."""
    where = shard_place(shard.shown, shard.offset, shard.records)
    if type(exc) in (NdpkitError, RecordError):
        return NdpkitError(f"{where}: {exc}")
    exc.add_note(f"raised reading shard {where}")
    return exc


def _mark(board: Any, shard: int) -> None:
    """On `board`: the worker is at shard `shard` of its task, no chunk of it done yet."""
    if board is not None:
        board[SHARD], board[CHUNKS], board[CHECKED] = shard, 0, 0


def _writer(task: _Task) -> RowWriter | None:
    if task.rows is None or not isinstance(task.kernel, RowKernel):
        return None
    spans = [(shard.offset, shard.records) for shard in task.shards]
    return RowWriter(task.rows, task.kernel, spans)


# -- memory -------------------------------------------------------------------------------


def _memory_bytes() -> tuple[int, int, int, int]:
    """(resident now, peak resident, shared memory resident now, file pages resident now) of
    this process.

    On Linux from /proc/self/status: getrusage's ru_maxrss would not do, because it keeps the
    high-water mark of the parent's memory across the fork+exec that spawned this worker, which
    hides a worker's own growth. Elsewhere, getrusage for the first two. Read as bytes and
    only the four fields parsed, through a descriptor kept open (`_proc_fd`): twice per task,
    right after a chunk has streamed through the caches, each step costs several times what
    it does in a loop (open, read and close took 8 µs a read in a loop, pread 3)."""
    text = _proc_read("status")
    if text is None:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        peak = int(peak if sys.platform == "darwin" else peak * 1024)
        return peak, peak, 0, 0
    rss, hwm, shared, files = (
        _kib(text, field) for field in (b"\nVmRSS:", b"\nVmHWM:", b"\nRssShmem:", b"\nRssFile:")
    )
    return rss, hwm, shared, files


_PROC_READ_BYTES = 16384
"""One read of a /proc/self file; a longer answer (thousands of groups) is read again whole."""
_proc_fds: dict[tuple[str, int], int] = {}
"""Descriptors of this process's /proc/self files, by (name, pid): "self" is resolved when the
file is opened, so one inherited across a fork names the parent; a fork closes them in the
child (`_forget_proc_fds`), and the pid keeps one from being used where that did not run."""


def _forget_proc_fds() -> None:
    """In a forked child: close the parent's /proc descriptors, which name the parent."""
    for fd in _proc_fds.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    _proc_fds.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_proc_fds)


def _proc_fd(name: str, flags: int) -> int | None:
    """A kept descriptor of /proc/self/`name` for this process; None where it cannot be
    opened (no /proc)."""
    key = (name, os.getpid())
    fd = _proc_fds.get(key)
    if fd is None:
        try:
            fd = os.open(f"/proc/self/{name}", flags | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return None
        _proc_fds[key] = fd
    return fd


def _proc_read(name: str) -> bytes | None:
    """The whole of /proc/self/`name`; None if it cannot be read."""
    fd = _proc_fd(name, os.O_RDONLY)
    try:
        text = None if fd is None else os.pread(fd, _PROC_READ_BYTES, 0)
        if text is None or len(text) == _PROC_READ_BYTES:
            with open(f"/proc/self/{name}", "rb") as file:
                text = file.read()
    except OSError:
        return None
    return text


def _kib(status: bytes, field: bytes) -> int:
    """A field of /proc/self/status ("VmRSS:   9308 kB") in bytes; 0 where it is missing."""
    at = status.find(field)
    if at < 0:
        return 0
    end = status.find(b"\n", at + len(field))
    return int(status[at + len(field) : None if end < 0 else end].split()[0]) * 1024


def _reset_peak_memory() -> None:
    """Start a fresh peak for this task (Linux: writing 5 to clear_refs resets VmHWM)."""
    fd = _proc_fd("clear_refs", os.O_WRONLY)
    if fd is not None:
        with contextlib.suppress(OSError):
            os.write(fd, b"5")


def _spill_dir_if_any() -> SpillDir | None:
    """The run's spill directory, or None where none can be made: partials then travel
    through the pipe, as they do when a spill file cannot be written (`transfer.pack`). A
    /dev/shm that is read-only, or full of files (out of inodes: its free space says
    nothing of that), stopped the run with a traceback. Out of file descriptors is still an
    error: the run could not go on without them either."""
    try:
        return open_spill_dir(sweep=False)
    except OSError as exc:
        if exc.errno in (errno.EMFILE, errno.ENFILE):
            raise
        return None


def _new_board(context: Any) -> Any:
    """A worker's board (`_Worker.board`): multiprocessing's shared memory, which it makes
    as a file in /dev/shm whenever that has the free space, even where no file can be made
    there (read-only, or out of inodes): `evaluate --data` then stopped on that file. The
    temporary directory (`TMPDIR`), multiprocessing's other place for it, is then used."""
    arena = multiprocessing.heap.Arena
    try:
        return context.RawArray("q", BOARD_SLOTS)
    except OSError as exc:
        if exc.errno in (errno.EMFILE, errno.ENFILE) or not getattr(arena, _CANDIDATES, None):
            raise
    setattr(arena, _CANDIDATES, [])  # for this process's later boards too
    return context.RawArray("q", BOARD_SLOTS)


_CANDIDATES = "_dir_candidates"
"""multiprocessing.heap.Arena's list of directories tried before the temporary one
(['/dev/shm'] on Linux); private to the standard library, so looked up by name."""
