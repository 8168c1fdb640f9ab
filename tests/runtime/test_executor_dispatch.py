"""How the pool and its workers talk: a busy worker is sent its next task while there is work
enough for every worker, never a large one or one that passes an arena; a worker that dies
with a task queued behind the one it runs is reported for the one it runs; progress comes now
and then, not per chunk."""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import sys
import time
from collections import deque
from multiprocessing import reduction
from multiprocessing.connection import Connection
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from test_executor import SumCount  # a sibling module: workers unpickle it by name

import ndpkit.runtime.executor as runtime_executor
from ndpkit.kernels import run_in_memory
from ndpkit.kernels.base import RowSpec
from ndpkit.runtime import LocalExecutor, WorkerDiedError, generate_dataset
from ndpkit.runtime.dataset import RecordLayout
from ndpkit.runtime.executor import (
    PROGRESS_EVERY_S,
    QUEUED_TASK_BYTES,
    _Pool,
    _Shard,
    _Task,
    _Worker,
    queue_limit_bytes,
)
from ndpkit.runtime.transfer import Rows


class DiesOnDevice(SumCount):
    """SIGKILLs its worker when it reaches record `first_record` (offsets are global), after
    a pause in which the parent has long queued the next engine behind this one."""

    def __init__(self, first_record: int) -> None:
        self.first_record = first_record

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> dict[str, int]:
        if offset <= self.first_record < offset + len(chunk):
            time.sleep(0.5)
            os.kill(os.getpid(), signal.SIGKILL)
        return super().device(chunk, state, offset)


class _Pipe:
    """Stands in for a worker's pipe: keeps what the pool sends."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def send_bytes(self, data: bytes) -> None:
        self.sent.append(data)


def _task(engine: int, state: Any = None, rows: Rows | None = None, records: int = 100) -> _Task:
    shard = _Shard(f"device-{engine}.npy", engine, records, 0, 0, "")
    return _Task(
        kernel=SumCount(),
        state=state,
        engine=engine,
        devices=(engine,),
        shards=(shard,),
        layout=RecordLayout(np.dtype(np.float32), (4,)),
        chunk_records=16,
        report_progress=False,
        verify=False,
        spill_dir=None,
        rows=rows,
    )


def _pool(workers: int, queue_bytes: int = QUEUED_TASK_BYTES) -> _Pool:
    pool = _Pool.__new__(_Pool)  # no processes: only the hand-out is under test
    pool.workers = [
        _Worker(process=SimpleNamespace(pid=0), conn=_Pipe(), queue_bytes=queue_bytes)  # type: ignore[arg-type]
        for _ in range(workers)
    ]
    pool._too_large = set()
    pool._last = {}
    return pool


def _engines(worker: _Worker) -> list[int]:
    return [t.engine for t in worker.tasks]


def test_an_engine_goes_back_to_the_worker_that_ran_it() -> None:
    """Its shards are mapped there (`ShardMaps`): the next pass hands each worker its own
    engines first, whatever order they are pending in."""
    pool = _pool(2)
    pool._dispatch(deque(_task(e) for e in range(4)))
    first = {e: w for w in pool.workers for e in _engines(w)}
    assert len(first) == 3  # two running, one queued
    for w in pool.workers:
        w.tasks.clear()
    pool._dispatch(deque(_task(e) for e in sorted(first, reverse=True)))
    again = {e: w for w in pool.workers for e in _engines(w)}
    assert len(again) == 2 and all(first[e] is w for e, w in again.items())
    # A worker whose engines are all gone takes another's rather than stay idle.
    for w in pool.workers:
        w.tasks.clear()
    lonely = pool.workers[0]
    pool._dispatch(deque(_task(e) for e in first if first[e] is not lonely))
    assert lonely.tasks


def test_one_worker_gets_its_next_task_while_it_runs_one() -> None:
    pool, pending = _pool(1), deque(_task(e) for e in range(8))
    pool._dispatch(pending)
    assert _engines(pool.workers[0]) == [0, 1] and len(pending) == 6
    sent = [reduction.ForkingPickler.loads(m) for m in pool.workers[0].conn.sent]  # type: ignore[attr-defined]
    assert [(kind, t.engine, fd) for kind, t, fd in sent] == [
        ("task", 0, False),
        ("task", 1, False),
    ]
    pool.workers[0].tasks.popleft()  # engine 0 answered
    pool._dispatch(pending)
    assert _engines(pool.workers[0]) == [1, 2] and len(pending) == 5


@pytest.mark.parametrize(
    ("workers", "tasks", "expected"),
    [
        (2, 5, [[1, 3], [0, 2]]),  # 3 left for 2 workers: each gets its next one queued
        (2, 4, [[1], [0, 2]]),  # then 1 left for 2: it waits for whichever is free first
        (2, 3, [[1], [0]]),
        (3, 2, [[], [1], [0]]),
    ],
)
def test_a_queue_only_while_every_worker_has_work_to_come(
    workers: int, tasks: int, expected: list[list[int]]
) -> None:
    pool = _pool(workers)
    pending = deque(_task(e) for e in range(tasks))
    pool._dispatch(pending)
    assert [_engines(w) for w in pool.workers] == expected
    assert [t.engine for t in pending] == list(range(sum(map(len, expected)), tasks))


def test_no_task_queues_behind_a_longer_one_while_a_shorter_one_runs() -> None:
    """Engine 0 reads four devices (a route), the others one: 2 waiting behind 0 would wait
    while the worker running 1 went idle."""
    pool = _pool(2)
    pending = deque([_task(0, records=400), *(_task(e) for e in range(1, 6))])
    pool._dispatch(pending)
    assert [_engines(w) for w in pool.workers] == [[1, 2], [0]]
    pool.workers[0].tasks.popleft()  # engine 1 answered: 2 runs, 3 is queued behind it
    pool._dispatch(pending)
    assert [_engines(w) for w in pool.workers] == [[2, 3], [0]]


def test_a_task_queues_only_within_the_pipes_room() -> None:
    pool = _pool(1, queue_bytes=0)  # a pipe whose buffer could not be read
    pending = deque(_task(e) for e in range(4))
    pool._dispatch(pending)
    assert _engines(pool.workers[0]) == [0] and len(pending) == 3


@pytest.mark.skipif(sys.platform != "linux", reason="queues only where the buffer is known")
def test_the_queue_limit_is_a_quarter_of_the_sockets_send_buffer() -> None:
    def buffer_bytes(conn: Connection, set_to: int | None = None) -> int:
        with socket.fromfd(conn.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            if set_to is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, set_to)
            return int(sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF))

    here, there = multiprocessing.Pipe()
    with here, there:
        assert queue_limit_bytes(here) == min(QUEUED_TASK_BYTES, buffer_bytes(here) // 4) > 0
        small = buffer_bytes(here, set_to=8192)  # Linux doubles what it is asked for
        assert queue_limit_bytes(here) == small // 4 < QUEUED_TASK_BYTES


def test_a_large_task_waits_for_an_idle_worker() -> None:
    big = np.zeros(QUEUED_TASK_BYTES // 8 + 1)  # pickled, over the limit
    pool = _pool(1)
    pending = deque([_task(0), _task(1, state=big), _task(2)])
    pool._dispatch(pending)
    assert _engines(pool.workers[0]) == [0] and [t.engine for t in pending] == [1, 2]
    pool.workers[0].tasks.popleft()
    pool._dispatch(pending)  # idle: the large one goes now, a small one may queue behind it
    assert _engines(pool.workers[0]) == [1, 2]


def test_a_task_passing_an_arena_waits_for_an_idle_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    passed: list[int] = []
    monkeypatch.setattr(runtime_executor, "send_arena", lambda conn, fd, pid: passed.append(fd))

    class Arena:  # as the pool's arena looks to `_send`
        fd = 99
        generation = 1

    rows = Rows(generation=1, size_bytes=8, spec=RowSpec(np.dtype(np.float32), ()), on_disk=False)
    pool = _pool(1)
    pool.arena = Arena()  # type: ignore[assignment]
    pending = deque([_task(0), _task(1, rows=rows), _task(2, rows=rows)])
    pool._dispatch(pending)
    assert _engines(pool.workers[0]) == [0] and len(pending) == 2 and passed == []
    pool.workers[0].tasks.popleft()
    pool._dispatch(pending)  # idle: engine 1 goes with the arena; engine 2 needs none now
    assert _engines(pool.workers[0]) == [1, 2] and passed == [99]
    assert pool.workers[0].arena == 1


def test_a_worker_killed_with_a_task_queued_names_the_engine_it_was_running(
    tmp_path: Path,
) -> None:
    ds = generate_dataset(SumCount(), 8_000, 4, tmp_path / "ds", shard_bytes=1000)
    victim = ds.shards_of(1)[0]
    with pytest.raises(WorkerDiedError, match=r"^engine 1 ") as caught:
        LocalExecutor(1).run(DiesOnDevice(victim.offset), ds, {}, chunk_bytes=400)
    assert str(ds.shard_path(victim)) in str(caught.value)
    assert "SIGKILL" in str(caught.value)


def test_queued_tasks_give_the_same_answer_pass_after_pass(tmp_path: Path) -> None:
    ds = generate_dataset(SumCount(), 40_000, 8, tmp_path / "ds", shard_bytes=1000)
    with LocalExecutor(1) as ex:
        outs = [ex.run(SumCount(), ds, {}, chunk_bytes=400) for _ in range(3)]
    expected = run_in_memory(SumCount(), ds.read_all(), {}, 25)
    assert expected["count"] == ds.records
    assert all(out.result == expected for out in outs)
    assert all(sorted(e.engine for e in out.engines) == list(range(8)) for out in outs)


class Slow(SumCount):
    def device(self, chunk: np.ndarray, state: Any, offset: int) -> dict[str, int]:
        time.sleep(0.002)
        return super().device(chunk, state, offset)


def test_progress_is_sent_now_and_then_and_adds_up(tmp_path: Path) -> None:
    """A message per chunk would wake the parent 200 times; at most one per PROGRESS_EVERY_S
    (the first at once) still shows the run moving, and the answers bring the rest."""
    ds = generate_dataset(SumCount(), 200 * 16, 2, tmp_path / "ds", shard_bytes=800)
    seen: list[tuple[int, int]] = []
    start = time.monotonic()
    LocalExecutor(1).run(Slow(), ds, {}, chunk_bytes=16, progress=lambda *a: seen.append(a))
    elapsed = time.monotonic() - start
    done = [d for d, _ in seen]
    assert done == sorted(done) and seen[-1] == (ds.total_bytes,) * 2
    assert seen[0][0] == 16  # the first chunk, at once
    assert 3 <= len(seen) <= 2 + 2 + elapsed / PROGRESS_EVERY_S  # first, timed, two answers
    assert len(seen) < 200 / 2
