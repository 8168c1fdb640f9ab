"""LocalExecutor: same answers as the one-process reference, routes, passes, failures, memory.

The kernels here are defined in this module; worker processes (spawn) import it to unpickle
them. Data are integer-valued float32 so every sum is exact and results compare with ==.
"""

from __future__ import annotations

import errno
import mmap
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ndpkit.errors import SpecError
from ndpkit.kernels import Kernel, get_kernel, run_in_memory
from ndpkit.plan import activate
from ndpkit.runtime import (
    Dataset,
    EngineStats,
    LocalExecutor,
    ShardError,
    TaskLoadError,
    WorkerDiedError,
    executor,
    generate_dataset,
    import_dataset,
    open_dataset,
    transfer,
)
from ndpkit.runtime.executor import _kib, _memory_bytes, _reset_peak_memory


class SumCount(Kernel):
    """Sum, count and Σ (global record index x record sum): the last catches wrong offsets."""

    name = "sumcount"
    dtype = np.dtype(np.float32)
    record_shape = (4,)

    def generate(self, size_bytes: int, seed: int) -> np.ndarray:
        n = max(1, size_bytes // self.record_bytes)
        return np.random.default_rng(seed).integers(0, 100, (n, 4)).astype(np.float32)

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> dict[str, int]:
        sums = chunk.sum(axis=1, dtype=np.float64).astype(np.int64)
        index = np.arange(offset, offset + len(chunk), dtype=np.int64)
        return {"sum": int(sums.sum()), "count": len(chunk), "weighted": int(index @ sums)}

    def merge(self, partials: list[Any]) -> dict[str, int]:
        return {key: sum(p[key] for p in partials) for key in ("sum", "count", "weighted")}

    def host(self, merged: Any, state: Any) -> tuple[Any, bool]:
        return merged, True

    def reference(self, data: np.ndarray, params: dict[str, Any]) -> Any:
        # ndpkit's own in-process path (subclasses change the device and host parts); the
        # tests compare with `sumcount_numpy` too
        return run_in_memory(self, data, params, len(data))

    def check(self, result: Any, expected: Any) -> None:
        assert result == expected


def sumcount_numpy(data: np.ndarray) -> dict[str, int]:
    """SumCount's answer in numpy over the whole data, without ndpkit's chunking, offsets
    or merge (the executor tests compared with `run_in_memory` alone)."""
    sums = data.sum(axis=1, dtype=np.float64).astype(np.int64)
    weighted = int(np.arange(len(data), dtype=np.int64) @ sums)
    return {"sum": int(sums.sum()), "count": len(data), "weighted": weighted}


def shard_files(ds: Dataset) -> np.ndarray:
    """The data set's records as np.load reads its shard files, in manifest order: not
    through ndpkit's reader, which both the executor and `Dataset.read_all` use."""
    return np.concatenate([np.load(ds.shard_path(shard)) for shard in ds.shards])


class Median(SumCount):
    """The lower median of column 0 by bisection: one pass per halving (done=False until the
    interval closes), each pass counting the records below the midpoint."""

    name = "median"

    def init(self, params: dict[str, Any]) -> Any:
        return {"lo": 0, "hi": 100, "passes": 0}

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> dict[str, int]:
        mid = (state["lo"] + state["hi"]) // 2
        return {"below": int((chunk[:, 0] < mid).sum()), "count": len(chunk)}

    def merge(self, partials: list[Any]) -> dict[str, int]:
        return {key: sum(p[key] for p in partials) for key in ("below", "count")}

    def host(self, merged: Any, state: Any) -> tuple[Any, bool]:
        lo, hi = state["lo"], state["hi"]
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if merged["below"] * 2 > merged["count"] - 1 else (mid, hi)
        new = {"lo": lo, "hi": hi, "passes": state["passes"] + 1}
        return new, hi - lo <= 1


class Doubles(SumCount):
    """A per-record kernel like LC: every record comes back (doubled), so partials are large
    arrays that travel through spill files rather than the pipe."""

    name = "doubles"

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> dict[int, np.ndarray]:
        return {offset: chunk * 2}

    def merge(self, partials: list[Any]) -> dict[int, np.ndarray]:
        return {k: v for p in partials for k, v in p.items()}

    def host(self, merged: Any, state: Any) -> tuple[Any, bool]:
        for array in merged.values():
            np.add(array, 0, out=array)  # the host part may write to what it receives
        return np.concatenate([merged[k] for k in sorted(merged)]), True


class KillsItself(SumCount):
    """Dies by SIGKILL on the chunk holding record `kill_at`, like an OOM kill would."""

    def __init__(self, kill_at: int) -> None:
        self.kill_at = kill_at

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> dict[str, int]:
        if offset <= self.kill_at < offset + len(chunk):
            os.kill(os.getpid(), signal.SIGKILL)
        return super().device(chunk, state, offset)


_KEPT: list[LocalExecutor] = []
"""The executor a `KillsAWorkerBetweenPasses` test runs (its host part runs in this process)."""


class KillsAWorkerBetweenPasses(Median):
    """After the first pass, SIGKILLs the worker the next pass sends its first task to (the
    pool's last: `_dispatch` fills idle workers from the end), while it is idle."""

    def host(self, merged: Any, state: Any) -> tuple[Any, bool]:
        if state["passes"] == 0:
            pool = _KEPT[0]._pool
            assert pool is not None
            victim = pool.workers[-1].process
            os.kill(victim.pid or 0, signal.SIGKILL)
            victim.join(timeout=10)
        return super().host(merged, state)


class Buggy(SumCount):
    def device(self, chunk: np.ndarray, state: Any, offset: int) -> dict[str, int]:
        raise ZeroDivisionError("a bug in the device part")


class BadPointError(ValueError):
    """An exception whose `__init__` takes other arguments than its `args`: it pickles, but
    unpickling calls `BadPointError("bad point at 3")`, which raises TypeError."""

    def __init__(self, what: str, where: int) -> None:
        super().__init__(f"{what} at {where}")


class RaisesUnloadable(SumCount):
    def device(self, chunk: np.ndarray, state: Any, offset: int) -> dict[str, int]:
        raise BadPointError("bad point", offset)


class FailsToLoad(SumCount):
    """Its unpickling raises, as a kernel module with a bug that shows only in a worker does
    as the worker imports it: the parent only pickles it."""

    def __init__(self) -> None:
        self.table = {"scale": 1}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.scale = state["table"]["scael"]


@pytest.fixture(scope="module")
def datasets(small_datasets: Callable[[Kernel], dict[int, Dataset]]) -> dict[int, Dataset]:
    return small_datasets(SumCount())


@pytest.fixture
def fresh(tmp_path: Path) -> Dataset:
    """A data set a test may damage."""
    return generate_dataset(SumCount(), 20_000, 4, tmp_path / "ds", shard_bytes=2000)


@pytest.fixture
def no_new_children() -> Iterator[None]:
    """Every worker a test starts is gone when it ends (the shared executor's may stay)."""
    before = {p.pid for p in multiprocessing.active_children()}
    yield
    assert {p.pid for p in multiprocessing.active_children()} <= before


@pytest.mark.parametrize("devices", [1, 3, 8])
@pytest.mark.parametrize("chunk_bytes", [48, 1000, 2**20])
def test_equals_run_in_memory(
    executor: LocalExecutor, datasets: dict[int, Dataset], devices: int, chunk_bytes: int
) -> None:
    ds = datasets[devices]
    kernel = SumCount()
    out = executor.run(kernel, ds, {}, chunk_bytes=chunk_bytes)
    assert out.result == run_in_memory(kernel, ds.read_all(), {}, 97)
    assert out.result == sumcount_numpy(shard_files(ds))
    assert out.passes == 1 and len(out.engines) == devices
    assert out.bytes_in == ds.total_bytes == sum(e.bytes_in for e in out.engines)
    assert out.alpha == ds.total_bytes / out.bytes_out
    assert all(e.chunks >= -(-e.bytes_in // max(chunk_bytes, 16)) for e in out.engines)


def test_mux2_route_one_engine_reads_two_devices(
    executor: LocalExecutor, datasets: dict[int, Dataset]
) -> None:
    ds = datasets[8]
    out = executor.run(
        SumCount(), ds, {}, active_devices=[0, 2, 4, 6], route=[0, 0, 2, 2, 4, 4, 6, 6]
    )
    assert out.result == run_in_memory(SumCount(), ds.read_all(), {}, 1000)
    assert out.result == sumcount_numpy(shard_files(ds))
    assert [(e.engine, e.devices) for e in out.engines] == [
        (0, (0, 1)),
        (2, (2, 3)),
        (4, (4, 5)),
        (6, (6, 7)),
    ]
    assert out.engines[0].bytes_in == ds.device_bytes(0) + ds.device_bytes(1)


@pytest.fixture(scope="module")
def seven_devices(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    """An odd device count, which no mux-k with k > 1 divides except k = 7."""
    path = tmp_path_factory.mktemp("seven") / "ds"
    return generate_dataset(SumCount(), 40_000, 7, path, shard_bytes=3000)


@pytest.mark.parametrize(
    ("k", "engines_on"),
    [(1, 7), (2, 4), (2, 5), (3, 3), (3, 5), (4, 2), (4, 6), (7, 1), (7, 3)],
)
def test_a_planner_mapping_routes_each_device_once_to_its_engine(
    executor: LocalExecutor, seven_devices: Dataset, k: int, engines_on: int
) -> None:
    """The executor runs `plan.activate`'s mux-k mapping as the planner states it (odd n, k
    not dividing n, k = 1 and k = n): each active engine reads exactly the devices routed to
    it, every device once, and the answer (offsets included) is the all-engines run's."""
    ds = seven_devices
    mapping = activate(ds.devices, k, engines_on)
    out = executor.run(
        SumCount(), ds, {}, active_devices=mapping.active, route=mapping.route, chunk_bytes=1000
    )
    assert out.result == run_in_memory(SumCount(), ds.read_all(), {}, 97)
    assert out.result == sumcount_numpy(shard_files(ds))
    routed = {e: tuple(d for d, r in enumerate(mapping.route) if r == e) for e in mapping.active}
    assert {e.engine: e.devices for e in out.engines} == routed
    assert sorted(d for e in out.engines for d in e.devices) == list(range(ds.devices))
    assert sum(e.shards for e in out.engines) == len(ds.shards)
    assert [e.bytes_in for e in out.engines] == [
        sum(ds.device_bytes(d) for d in e.devices) for e in out.engines
    ]


def test_an_active_engine_no_device_is_routed_to_stays_idle(
    executor: LocalExecutor, seven_devices: Dataset
) -> None:
    """Every engine on, but the mux2 route of four: engines 1, 3 and 5 read nothing."""
    ds = seven_devices
    route = activate(ds.devices, 2, 4).route
    out = executor.run(SumCount(), ds, {}, active_devices=range(7), route=route)
    assert out.result == run_in_memory(SumCount(), ds.read_all(), {}, 97)
    assert out.result == sumcount_numpy(shard_files(ds))
    assert [(e.engine, e.devices) for e in out.engines] == [
        (0, (0, 1)),
        (2, (2, 3)),
        (4, (4, 5)),
        (6, (6,)),
    ]


@pytest.mark.parametrize(
    ("active", "route"),
    [(None, None), ([0, 2, 4, 6], [6, 6, 2, 2, 4, 4, 0, 0]), ([0], [0] * 8)],
)
def test_a_folding_kernel_over_any_route_selects_what_the_paper_split_does(
    executor: LocalExecutor, tmp_path: Path, active: Any, route: Any
) -> None:
    """k-NN's top-k folds each engine's chunks into one partial (`Kernel.fold`), whichever
    devices it reads; on points of a coarse grid (many exact ties) its answer is the paper
    split's, indices and distances."""
    points = np.random.default_rng(4).integers(0, 4, (6000, 8)).astype(np.float32)
    np.save(tmp_path / "points.npy", points)
    folding = get_kernel("knn8-topk")
    ds = import_dataset(tmp_path / "points.npy", 8, tmp_path / "ds", folding)
    params = folding.params(0)
    out = executor.run(folding, ds, params, chunk_bytes=4096, active_devices=active, route=route)
    expected = run_in_memory(get_kernel("knn8"), points, params, len(points))
    assert folding.folds
    np.testing.assert_array_equal(out.result.indices, expected.indices)
    np.testing.assert_array_equal(out.result.distances_sq, expected.distances_sq)


@pytest.mark.parametrize(
    ("active", "route", "message"),
    [
        (None, [0, 0, 1], "each of the 8 devices"),
        ([0, 2], [0, 0, 2, 2, 4, 4, 6, 6], r"devices \[4, 5, 6, 7\] are routed to engines"),
        (None, [-1] * 8, "engine numbers must be"),
        # Named the route, which was not given.
        ([0, 2], None, r"active_devices: leaves devices \[1, 3, 4, 5, 6, 7\] without an engine"),
    ],
)
def test_bad_routes_are_clear_errors(
    executor: LocalExecutor, datasets: dict[int, Dataset], active: Any, route: Any, message: str
) -> None:
    with pytest.raises(SpecError, match=message):
        executor.run(SumCount(), datasets[8], {}, active_devices=active, route=route)


def test_multi_pass_kernel_reads_everything_each_pass(
    executor: LocalExecutor, datasets: dict[int, Dataset]
) -> None:
    ds = datasets[3]
    kernel = Median()
    out = executor.run(kernel, ds, {}, chunk_bytes=1000)
    expected = run_in_memory(kernel, ds.read_all(), {}, 333)
    assert out.result == expected and out.passes == expected["passes"] > 3
    assert out.result["lo"] == int(np.sort(ds.read_all()[:, 0])[(ds.records - 1) // 2])
    assert len(out.pass_stats) == out.passes
    assert out.bytes_in == out.passes * ds.total_bytes
    assert all(p.bytes_in == ds.total_bytes for p in out.pass_stats)


def test_large_partials_arrive_intact_and_spill_files_are_removed(
    executor: LocalExecutor, datasets: dict[int, Dataset], no_spill_left: None
) -> None:
    ds = datasets[3]
    out = executor.run(Doubles(), ds, {}, chunk_bytes=8000)  # partials of 8 KB: in the pipe
    assert np.array_equal(out.result, ds.read_all() * 2)
    big = generate_dataset(SumCount(), 6 * 2**20, 2, ds.path.parent / "big", shard_bytes=2**20)
    out = executor.run(Doubles(), big, {}, chunk_bytes=2**20)  # 1 MiB arrays: spilled
    assert np.array_equal(out.result, big.read_all() * 2)
    assert out.bytes_out == big.total_bytes and out.alpha == 1.0


def test_a_spilled_partial_that_cannot_be_mapped_is_out_of_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under `ulimit -v` the parent's mapping of a spilled partial fails with ENOMEM: that is
    a MemoryError (which `evaluate` reports as one line), not an OSError traceback."""
    packed = transfer.pack(np.zeros(2**20, np.uint8), str(tmp_path), "engine-0.bin")
    assert packed.path is not None

    def no_room(*args: Any, **kwargs: Any) -> mmap.mmap:
        raise OSError(errno.ENOMEM, "Cannot allocate memory")

    monkeypatch.setattr(transfer.mmap, "mmap", no_room)
    with pytest.raises(MemoryError, match="cannot map a spilled partial"):
        transfer.unpack(packed)


def test_more_engines_than_workers_queue(
    datasets: dict[int, Dataset], no_new_children: None
) -> None:
    ds = datasets[8]
    out = LocalExecutor(workers=1).run(SumCount(), ds, {})
    assert out.workers == 1 and len(out.engines) == 8
    assert out.result == run_in_memory(SumCount(), ds.read_all(), {}, 1000)
    assert out.result == sumcount_numpy(shard_files(ds))


def test_progress_reaches_the_total(executor: LocalExecutor, datasets: dict[int, Dataset]) -> None:
    seen: list[tuple[int, int]] = []
    executor.run(SumCount(), datasets[3], {}, chunk_bytes=4000, progress=lambda *a: seen.append(a))
    done = [d for d, _ in seen]
    assert done == sorted(done) and seen[-1] == (datasets[3].total_bytes,) * 2


def test_kernel_that_does_not_fit_the_data(
    executor: LocalExecutor, datasets: dict[int, Dataset]
) -> None:
    class Wide(SumCount):
        record_shape = (5,)

    with pytest.raises(SpecError, match="kernel 'sumcount' needs float32 \\(5,\\)"):
        executor.run(Wide(), datasets[1], {})


# -- failures: a clear error, never a partial result ----------------------------------------


def _truncate(path: Path) -> None:
    with path.open("r+b") as f:
        f.truncate(path.stat().st_size - 100)


def _scramble_header(path: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[:6] = b"NOTNPY"
    path.write_bytes(raw)


def _fortran_header(path: Path) -> None:
    raw = path.read_bytes()
    path.write_bytes(raw.replace(b"'fortran_order': False", b"'fortran_order': True ", 1))


def _longer_header(path: Path) -> None:
    """A header 64 bytes longer and the data 64 bytes shorter: the same file size."""
    raw = path.read_bytes()
    length = int.from_bytes(raw[8:10], "little")
    header = raw[10 : 10 + length].rstrip(b"\n") + b" " * 64 + b"\n"
    body = raw[:8] + len(header).to_bytes(2, "little") + header + raw[10 + length : -64]
    assert len(body) == len(raw)
    path.write_bytes(body)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (_truncate, "truncated or corrupt"),
        (Path.unlink, "shard is missing"),
        (_scramble_header, r"not a readable \.npy shard"),
        (_fortran_header, "Fortran order"),
        (_longer_header, "fewer than the"),
    ],
)
def test_bad_shard_names_it(
    fresh: Dataset, damage: Any, message: str, no_new_children: None
) -> None:
    victim = fresh.shard_path(fresh.shards_of(2)[1])
    damage(victim)  # after open: the data set looked fine when the run began
    with pytest.raises(ShardError, match=message) as caught:
        LocalExecutor(2).run(SumCount(), fresh, {})
    assert caught.value.source == str(victim)


def test_verify_catches_silent_corruption(fresh: Dataset) -> None:
    victim = fresh.shard_path(fresh.shards[3])
    raw = bytearray(victim.read_bytes())
    raw[-40] ^= 0x10  # a record's byte: the header is intact
    victim.write_bytes(raw)
    LocalExecutor(1).run(SumCount(), fresh, {})  # same size, valid header: unnoticed
    with pytest.raises(ShardError, match="CRC-32") as caught:
        LocalExecutor(1).run(SumCount(), fresh, {}, verify=True)
    assert caught.value.source == str(victim)


def test_killed_worker_names_engine_and_shards(fresh: Dataset, no_new_children: None) -> None:
    target = fresh.shards_of(2)[0]
    kernel = KillsItself(kill_at=target.offset + 3)
    with pytest.raises(WorkerDiedError, match="engine 2 ") as caught:
        LocalExecutor(2).run(kernel, fresh, {}, chunk_bytes=160)
    message = str(caught.value)
    assert "SIGKILL" in message and str(fresh.shard_path(target)) in message
    assert "no result" in message


def test_a_worker_killed_between_tasks_is_not_said_to_have_read_the_next_ones_shards(
    fresh: Dataset, no_new_children: None
) -> None:
    # It was "engine 3 (...) was killed by SIGKILL while reading <engine 3's shards>": shards
    # it was never sent, which pointed at them (a truncated shard's SIGBUS, say).
    with LocalExecutor(2) as ex:
        _KEPT[:] = [ex]
        with pytest.raises(WorkerDiedError, match="SIGKILL while idle, between tasks") as e:
            ex.run(KillsAWorkerBetweenPasses(), fresh, {})
    _KEPT.clear()
    assert "could not be sent to it; no result" in str(e.value)
    assert "while reading" not in str(e.value)


def test_kernel_bug_surfaces_with_the_workers_traceback(
    fresh: Dataset, no_new_children: None
) -> None:
    with pytest.raises(ZeroDivisionError, match="a bug in the device part") as caught:
        LocalExecutor(2).run(Buggy(), fresh, {})
    assert "Traceback" in str(caught.value.__cause__)
    assert "in device" in str(caught.value.__cause__)
    # The shard it was reading is a note in the traceback (its type and message are the bug's).
    notes = getattr(caught.value, "__notes__", [])
    shards = {str(fresh.shard_path(s)) for s in fresh.shards}
    assert len(notes) == 1 and notes[0].startswith("raised reading shard "), notes
    assert notes[0].split()[3] in shards, notes


def test_a_kernel_error_that_cannot_be_unpickled_still_says_what_it_was(
    fresh: Dataset, no_new_children: None
) -> None:
    # It was multiprocessing's TypeError ("__init__() missing 1 required positional
    # argument: 'where'"), raised in the parent as it read the worker's answer.
    with pytest.raises(RuntimeError, match=r"BadPointError: bad point at \d+") as caught:
        LocalExecutor(2).run(RaisesUnloadable(), fresh, {})
    assert "in device" in str(caught.value.__cause__)


def test_a_kernel_class_the_workers_cannot_import_is_said_to_be(
    fresh: Dataset, no_new_children: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As a class defined under a script's `if __name__ == "__main__":`: it pickles by name
    # in the parent, where the name exists, but a worker importing the module finds none.
    # The worker died: "engine 0 ... exited with status 1 while reading <its shards>".
    here = sys.modules[__name__]
    guarded = type("Guarded", (SumCount,), {"__module__": __name__, "__qualname__": "Guarded"})
    monkeypatch.setattr(here, "Guarded", guarded, raising=False)
    with pytest.raises(TaskLoadError, match="cannot load its task") as caught:
        LocalExecutor(2).run(guarded(), fresh, {})
    assert not isinstance(caught.value, WorkerDiedError)
    assert "Can't get attribute 'Guarded'" in str(caught.value)
    assert 'outside its `if __name__ == "__main__":` block' in str(caught.value)


def test_a_kernel_that_fails_as_a_worker_loads_it_keeps_its_error_and_traceback(
    fresh: Dataset, no_new_children: None
) -> None:
    # Its KeyError came with the advice to define the class at the top level of a module
    # (which it is), and without the worker's traceback, so nowhere said where it failed.
    with pytest.raises(
        TaskLoadError, match="load its task: unpickling it raised KeyError"
    ) as caught:
        LocalExecutor(2).run(FailsToLoad(), fresh, {})
    assert "top level" not in str(caught.value)
    assert "in __setstate__" in str(caught.value.__cause__)


def test_an_executor_recovers_after_a_failure(fresh: Dataset) -> None:
    with LocalExecutor(2) as ex:
        with pytest.raises(WorkerDiedError):
            ex.run(KillsItself(kill_at=0), fresh, {})
        out = ex.run(SumCount(), fresh, {})
    assert out.result == run_in_memory(SumCount(), fresh.read_all(), {}, 100)
    assert out.result == sumcount_numpy(shard_files(fresh))


# -- bounded memory -------------------------------------------------------------------------


def test_worker_memory_does_not_grow_with_the_data(
    one_engine: Callable[[Kernel, int, int], EngineStats],
) -> None:
    """A 64 MiB device read in 256 KiB chunks needs no more memory than a 4 MiB one: the
    worker holds a chunk (plus numpy temporaries), never the shard or the data set."""
    chunk_bytes = 256 * 2**10
    small, large = (one_engine(SumCount(), size_mib, chunk_bytes) for size_mib in (4, 64))
    assert large.bytes_in == 64 * 2**20 and large.chunks == 64 * 4
    assert (
        large.rss_growth_bytes < 20 * chunk_bytes
    )  # 5 MiB (a window is 4 chunks), 1/13 of the data
    assert large.rss_growth_bytes < small.rss_growth_bytes + 4 * chunk_bytes


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="Linux /proc only")
def test_memory_fields_are_read_as_proc_states_them() -> None:
    """The four fields the worker's stats use, parsed from the bytes, agree with a plain
    parse of the text; the peak is reset and then grows with an allocation."""
    _reset_peak_memory()
    rss, peak, shared, files = _memory_bytes()
    text = Path("/proc/self/status").read_text()
    fields = {
        k: int(v.split()[0]) * 1024
        for k, v in (ln.split(":", 1) for ln in text.splitlines())
        if k in ("VmRSS", "VmHWM", "RssShmem", "RssFile")
    }
    assert abs(rss - fields["VmRSS"]) < 8 * 2**20 and abs(files - fields["RssFile"]) < 8 * 2**20
    assert peak >= rss and shared >= 0
    block = np.ones(64 * 2**20 // 8)  # 64 MiB touched
    assert _memory_bytes()[1] >= peak + 48 * 2**20
    del block
    assert _kib(b"Name:\tx\nVmRSS:\t  12 kB\n", b"\nVmRSS:") == 12 * 1024
    assert _kib(b"Name:\tx\nVmRSS:\t  12 kB", b"\nVmRSS:") == 12 * 1024  # no newline after
    assert _kib(b"Name:\tx\n", b"\nRssShmem:") == 0  # an older kernel without the field


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="Linux /proc only")
def test_proc_files_are_read_through_this_processs_own_kept_descriptor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The kept descriptor of /proc/self/status is this process's: one inherited across a
    fork (kept under the parent's pid) names the parent and is not used; an answer longer
    than one read is read again whole, not cut."""
    _memory_bytes()
    mine = executor._proc_fd("status", os.O_RDONLY)
    assert mine is not None
    text = executor._proc_read("status")
    assert (
        text is not None
        and text.split(b"\n")[:3] == Path("/proc/self/status").read_bytes().split(b"\n")[:3]
    )
    assert executor._proc_fd("status", os.O_RDONLY) == mine  # kept, not opened again
    monkeypatch.setattr(executor.os, "getpid", lambda: -1)  # as seen by a forked child
    child = executor._proc_fd("status", os.O_RDONLY)
    assert child is not None and child != mine
    os.close(child)
    del executor._proc_fds[("status", -1)]
    monkeypatch.undo()
    monkeypatch.setattr(executor, "_PROC_READ_BYTES", 64)  # VmRSS lies beyond the first 64
    whole = executor._proc_read("status")
    assert whole is not None and b"\nVmRSS:" in whole and b"\nVmHWM:" in whole


@pytest.mark.skipif(
    not hasattr(os, "register_at_fork") or not Path("/proc/self/status").exists(),
    reason="POSIX fork and Linux /proc only",
)
def test_a_forked_child_closes_the_parents_proc_descriptors() -> None:
    """The parent's kept descriptors name the parent: a fork closes them in the child
    (they used to stay open there for good), which then opens its own."""
    _memory_bytes()
    parents = dict(executor._proc_fds)
    assert parents
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave without running pytest's exit handlers
        try:
            closed = all(_fd_closed(fd) for fd in parents.values())
            _memory_bytes()
            mine = executor._proc_fds and all(pid == os.getpid() for _, pid in executor._proc_fds)
            os.write(
                write_end,
                b"ok" if closed and not set(parents) & set(executor._proc_fds) and mine else b"no",
            )
        finally:
            os._exit(0)
    os.close(write_end)
    answer = os.read(read_end, 2)
    os.close(read_end)
    os.waitpid(pid, 0)
    assert answer == b"ok"
    assert all(not _fd_closed(fd) for fd in parents.values())  # the parent's stay open


def _fd_closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


# -- a real kernel ------------------------------------------------------------------------


def test_lc_smoke(tmp_path: Path) -> None:
    kernel = get_kernel("lc")
    ds = generate_dataset("lc", 2**20, 4, tmp_path / "lc", seed=3, shard_bytes=100_000)
    params = kernel.params(3)
    out = LocalExecutor(2).run(kernel, open_dataset(ds.path), params, chunk_bytes=64_000)
    kernel.check(out.result, kernel.reference(ds.read_all(), params))
    assert out.alpha == pytest.approx(8.0)


# -- a fork server that dies ----------------------------------------------------------------

SLOW_KERNEL = """
import time
from typing import Any

import numpy as np

from ndpkit.kernels import Kernel


class Slow(Kernel):
    name = "slow"
    dtype = np.dtype(np.float32)
    record_shape = (4,)

    def generate(self, size_bytes: int, seed: int) -> np.ndarray:
        return np.zeros((max(1, size_bytes // 16), 4), np.float32)

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> Any:
        time.sleep(0.05)
        return len(chunk)

    def merge(self, partials: list[Any]) -> Any:
        return sum(partials)

    def host(self, merged: Any, state: Any) -> tuple[Any, bool]:
        return merged, True

    def reference(self, data: np.ndarray, params: dict[str, Any]) -> Any:
        return len(data)

    def check(self, result: Any, expected: Any) -> None:
        assert result == expected
"""

KILL_THE_FORK_SERVER = """
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import sys

sys.path.insert(0, sys.argv[1])
from slow_kernel import Slow

from ndpkit.runtime import LocalExecutor, WorkerDiedError, generate_dataset


def main() -> None:
    ds = generate_dataset(Slow(), 16 * 40 * 2, 2, sys.argv[2], shard_bytes=160)
    workers: list[int] = []

    def progress(done: int, total: int) -> None:
        if not workers:  # the workers are under way: take their fork server away
            workers.extend(p.pid for p in multiprocessing.active_children())
            server = multiprocessing.forkserver._forkserver._forkserver_pid
            os.kill(server, signal.SIGKILL)

    try:
        LocalExecutor(2).run(Slow(), ds, {}, chunk_bytes=16, progress=progress)
    except WorkerDiedError as exc:
        print(exc)
    print(*workers)


if __name__ == "__main__":
    main()
"""


def _gone(pid: int) -> bool:
    """No such process, or a zombie: nothing left running."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


@pytest.mark.skipif(
    "forkserver" not in multiprocessing.get_all_start_methods() or sys.platform != "linux",
    reason="a fork server, and /proc",
)
def test_a_dead_fork_server_is_named_and_its_workers_stopped(tmp_path: Path) -> None:
    (tmp_path / "slow_kernel.py").write_text(SLOW_KERNEL)
    (tmp_path / "run.py").write_text(KILL_THE_FORK_SERVER)
    result = subprocess.run(
        [sys.executable, str(tmp_path / "run.py"), str(tmp_path), str(tmp_path / "ds")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr, result.stderr  # no worker's BrokenPipeError
    message, pids = result.stdout.strip().splitlines()
    assert "when the pool's fork server, which starts the workers and reports their exits, " in (
        message
    )
    assert "died (killed or crashed); the worker was still running and has been stopped" in (
        message
    )
    assert "exited with status 255" not in message
    workers = [int(pid) for pid in pids.split()]
    assert len(workers) == 2
    deadline = time.monotonic() + 5
    while not all(_gone(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(_gone(pid) for pid in workers)  # not left reading shards for no one
