"""How the pool and its workers talk: a busy worker is sent its next tasks while there is work
enough for every worker, never a large one or one that passes an arena; it holds an answer
back while its next task waits, and sends the answers together; a worker that dies with tasks
queued behind the one it runs, or answers held, is reported for the one it runs; progress
comes now and then, not per chunk."""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import socket
import sys
import time
import weakref
from collections import deque
from multiprocessing import reduction
from multiprocessing.connection import Connection
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from test_executor import Doubles, SumCount  # a sibling module: workers unpickle it by name

import ndpkit.runtime.executor as runtime_executor
from ndpkit.kernels import run_in_memory
from ndpkit.kernels.base import RowSpec
from ndpkit.runtime import Dataset, LocalExecutor, WorkerDiedError, generate_dataset
from ndpkit.runtime.dataset import RecordLayout
from ndpkit.runtime.executor import (
    HELD_ANSWER_BYTES,
    PROGRESS_EVERY_S,
    QUEUED_TASK_BYTES,
    _Pool,
    _Run,
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


class DiesLoading(SumCount):
    """SIGKILLs its worker as the worker unpickles its task, as an OOM kill while it loads a
    large state (or a crash importing the kernel's module) would; not in the parent."""

    def __init__(self) -> None:
        self.scale = 1

    def __setstate__(self, state: dict[str, Any]) -> None:
        if multiprocessing.parent_process() is not None:
            os.kill(os.getpid(), signal.SIGKILL)
        self.__dict__.update(state)


class _Pipe:
    """Stands in for a worker's pipe: keeps what the pool sends."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def send_bytes(self, data: bytes) -> None:
        self.sent.append(data)


def _task(engine: int, state: Any = None, rows: Rows | None = None, records: int = 100) -> _Task:
    shard = _Shard(f"device-{engine}.npy", f"device-{engine}.npy", engine, records, 0, 0, "")
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
    pool._sizes = {}
    pool._last = {}
    pool.stall_timeout_s = None  # sends to the stand-in pipes as they are, not watched
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


def test_one_worker_gets_every_task_while_it_runs_the_first() -> None:
    pool, pending = _pool(1), deque(_task(e) for e in range(8))
    pool._dispatch(pending)
    assert _engines(pool.workers[0]) == list(range(8)) and not pending
    sent = [reduction.ForkingPickler.loads(m) for m in pool.workers[0].conn.sent]  # type: ignore[attr-defined]
    assert [(kind, t.engine, fd) for kind, t, fd in sent] == [("task", e, False) for e in range(8)]


def test_tasks_queue_only_within_the_room_left_in_the_pipe() -> None:
    """Every task behind the running one may still be in the pipe: together they stay
    within `queue_bytes`, so that sending cannot block the parent."""
    one = len(reduction.ForkingPickler.dumps(("task", _task(1), False)))
    pool, pending = _pool(1, queue_bytes=3 * one), deque(_task(e) for e in range(8))
    pool._dispatch(pending)
    assert _engines(pool.workers[0]) == [0, 1, 2, 3] and len(pending) == 4
    pool.workers[0].tasks.popleft()  # engine 0 answered: 1 may be running, 2 and 3 wait
    pool._dispatch(pending)
    assert _engines(pool.workers[0]) == [1, 2, 3, 4] and len(pending) == 3


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
    # 2 behind 1, that worker's share of the 4 left (`_share`); none behind engine 0.
    assert [_engines(w) for w in pool.workers] == [[1, 2], [0]]
    assert [t.engine for t in pending] == [3, 4, 5]
    pool.workers[0].tasks.clear()  # engines 1 and 2 answered together
    pool._dispatch(pending)
    assert [_engines(w) for w in pool.workers] == [[3, 4], [0]]


def test_the_engines_with_most_to_read_are_handed_out_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Engine 2 reads two devices (a route), the others one, and it comes last in the plan:
    handed out last it would run alone at the end of the pass while the other worker idled.
    Equal engines keep the plan's order."""
    ds = generate_dataset(SumCount(), 8_000, 5, tmp_path / "ds", shard_bytes=1000)
    orders: list[list[int]] = []
    dispatch = _Pool._dispatch

    def spy(self: _Pool, pending: deque[_Task]) -> None:
        if not any(w.tasks for w in self.workers):  # the pass's first hand-out
            orders.append([t.engine for t in pending])
        dispatch(self, pending)

    monkeypatch.setattr(_Pool, "_dispatch", spy)
    route = [0, 1, 3, 3, 4]
    out = LocalExecutor(2).run(SumCount(), ds, {}, active_devices=[0, 1, 3, 4], route=route)
    assert orders == [[3, 0, 1, 4]]
    assert out.result == run_in_memory(SumCount(), ds.read_all(), {}, 100)


def test_with_other_workers_a_worker_is_handed_half_its_share_at_a_time() -> None:
    """Its answers come only when its queue runs dry: what is queued to a worker that turns
    out slow stays there, so each hand-out is its part of half of what is left."""
    pool, pending = _pool(2), deque(_task(e) for e in range(32))
    pool._dispatch(pending)
    assert [len(w.tasks) for w in pool.workers] == [9, 9] and len(pending) == 14  # 1 + 30/4
    pool.workers[1].tasks.clear()  # one worker's nine answered
    pool._dispatch(pending)
    assert [len(w.tasks) for w in pool.workers] == [9, 5] and len(pending) == 9  # 1 + 13/4


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


def test_a_worker_killed_names_the_shard_and_chunk_it_was_reading(tmp_path: Path) -> None:
    """It listed the engine's shards (the first four, 'and 60 more' for a device of many):
    the board says which one it was reading."""
    ds = generate_dataset(SumCount(), 8_000, 4, tmp_path / "ds", shard_bytes=1000)
    first, victim = ds.shards_of(1)[:2]
    with pytest.raises(WorkerDiedError) as caught:
        LocalExecutor(1).run(DiesOnDevice(victim.offset + 30), ds, {}, chunk_bytes=400)
    message = str(caught.value)
    assert message.startswith("engine 1 (devices [1], worker pid ")
    assert (
        f"was killed by SIGKILL while reading {ds.shard_path(victim)}, in its chunk 2 (chunks "
        "of 400 bytes; 1 of them done); no result"
    ) in message
    assert str(ds.shard_path(first)) not in message


def test_a_worker_killed_loading_its_task_is_not_said_to_have_been_idle(
    tmp_path: Path,
) -> None:
    # It was "worker pid … was killed by SIGKILL while idle, between tasks, so engine 0
    # (devices [0]) was never begun there": the board counted the task begun only once
    # unpickled, and the worker died unpickling it.
    ds = generate_dataset(SumCount(), 8_000, 4, tmp_path / "ds", shard_bytes=1000)
    with pytest.raises(WorkerDiedError, match=r"^engine 0 \(devices \[0\]") as caught:
        LocalExecutor(1).run(DiesLoading(), ds, {}, chunk_bytes=400)
    assert "SIGKILL" in str(caught.value) and "idle" not in str(caught.value)


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


def _spy_on_answers(monkeypatch: pytest.MonkeyPatch, seen: list[tuple[Any, ...]]) -> None:
    """Every message the pool handles (an 'answers' one, then each answer in it) into `seen`."""
    handle = _Pool._handle

    def spy(self: _Pool, worker: _Worker, message: tuple[Any, ...], *rest: Any) -> None:
        seen.append(message)
        handle(self, worker, message, *rest)

    monkeypatch.setattr(_Pool, "_handle", spy)


def _run_unspilled(kernel: SumCount, ds: Dataset) -> dict[int, tuple[Any, Any]]:
    """Every engine's (partial, stats) from one worker, with no spill directory: partials
    come whole through the pipe, as they do once /dev/shm is full."""
    plan = {device: (device,) for device in range(ds.devices)}
    run = _Run(kernel, ds, plan, ds.total_bytes, None, False, None, 1)
    tasks = [run._task(engine, devices, None, None) for engine, devices in plan.items()]
    assert all(task.spill_dir is None for task in tasks)
    pool = _Pool(1, threads=1)
    try:
        return pool.run(tasks, None)
    finally:
        pool.close()


class SlowStart(SumCount):
    """Takes 0.3 s over its first chunk: every task is in the worker's pipe by its end."""

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> Any:
        if offset == 0:
            time.sleep(0.3)
        return super().device(chunk, state, offset)


@pytest.mark.parametrize("with_progress", [False, True])
def test_a_worker_sends_the_answers_of_a_run_of_tasks_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_progress: bool
) -> None:
    """One worker, 8 engines: it is sent all 8, holds each answer while the next task waits in
    its pipe, and sends them in one message: the parent is woken once, not 8 times. With
    progress on too: the held tasks' bytes still reach the bar, each once."""
    ds = generate_dataset(SumCount(), 8 * 4_000, 8, tmp_path / "ds", shard_bytes=4_000)
    messages: list[tuple[Any, ...]] = []
    _spy_on_answers(monkeypatch, messages)
    with LocalExecutor(1) as ex:
        seen: list[tuple[int, int]] = []
        progress = (lambda *a: seen.append(a)) if with_progress else None
        out = ex.run(SlowStart(), ds, {}, chunk_bytes=4_000, progress=progress)
        worker = ex._pool.workers[0]  # type: ignore[union-attr]
        assert (worker.board[0], worker.board[1], worker.answered) == (8, 8, 8)
    assert out.result == run_in_memory(SumCount(), ds.read_all(), {}, 100)
    kinds = [message[0] for message in messages]
    assert kinds.count("done") == 8
    assert kinds.count("answers") == 1 and kinds.index("answers") == kinds.index("done") - 1
    if with_progress:
        assert seen[-1] == (ds.total_bytes, ds.total_bytes)
        assert [d for d, _ in seen] == sorted(d for d, _ in seen)


class SlowDoubles(SlowStart, Doubles):
    """Doubles that takes 0.3 s over its first chunk (`SlowStart`)."""


def test_a_large_answer_is_not_held_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Partials that could not be spilled (here no spill directory; in a run, /dev/shm full)
    come whole through the pipe: a worker holding them while its queue lasts held every
    engine's rows at once (8 engines of 128 MiB: 1 GiB, and as much again to send them)."""
    ds = generate_dataset(Doubles(), 4 * 2 * HELD_ANSWER_BYTES, 4, tmp_path / "ds")
    kernel = SlowDoubles()
    messages: list[tuple[Any, ...]] = []
    _spy_on_answers(monkeypatch, messages)
    done = _run_unspilled(kernel, ds)
    kinds = [message[0] for message in messages]
    assert kinds.count("done") == 4 and "answers" not in kinds
    merged = kernel.merge([done[engine][0] for engine in sorted(done)])
    result, _ = kernel.host(merged, None)
    np.testing.assert_array_equal(result, ds.read_all() * 2)


class SmallFirst(SlowDoubles):
    """Engine 0's partial is small, as one spilled to /dev/shm is; the others' are over
    HELD_ANSWER_BYTES, as ones are once /dev/shm is full (held answers keep their spill
    files there until they are sent)."""

    def __init__(self, small_records: int) -> None:
        self.small_records = small_records

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> dict[int, np.ndarray]:
        out = super().device(chunk, state, offset)
        return {offset: out[offset][:1]} if offset < self.small_records else out


def test_a_large_answer_goes_on_its_own_after_those_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Engine 0's small answer is held while engine 1 waits; engine 1's is large, so it goes
    at once. Sent in one message with engine 0's, it was copied (`bytes`) and pickled again
    beside the pickler's buffer: three times its size in the worker, and the parent held
    the message, the tuple of answers and the partial (an 'answers' message carried it)."""
    ds = generate_dataset(Doubles(), 3 * 2 * HELD_ANSWER_BYTES, 3, tmp_path / "ds")
    handled: list[tuple[Any, ...]] = []
    _spy_on_answers(monkeypatch, handled)
    done = _run_unspilled(SmallFirst(ds.shards_of(0)[0].records), ds)
    messages = [
        ("answers", [len(answer) for answer in m[1]]) if m[0] == "answers" else (m[0], [m[1]])
        for m in handled
        if m[0] in ("answers", "done")
    ]
    assert sorted(done) == [0, 1, 2]
    batches = [sizes for kind, sizes in messages if kind == "answers"]
    assert all(size <= HELD_ANSWER_BYTES for sizes in batches for size in sizes), messages
    assert [engines for kind, engines in messages if kind == "done"] == [[0], [1], [2]]


_COPIES: list[weakref.ref[np.ndarray]] = []
"""In a worker: every copy `KeepsCopies` made there."""


class KeepsCopies(SumCount):
    """Its partial holds a copy of the engine's records (as a per-record kernel's does); each
    engine, one chunk here, counts the copies of the worker's earlier engines still alive."""

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> dict[str, Any]:
        gc.collect()
        alive = sum(ref() is not None for ref in _COPIES)
        copy = chunk.copy()
        _COPIES.append(weakref.ref(copy))
        return {**super().device(chunk, state, offset), "alive": alive, "copies": [copy]}

    def merge(self, partials: list[Any]) -> dict[str, Any]:
        return {
            **super().merge(partials),
            "alive": sum(p["alive"] for p in partials),
            "copies": [c for p in partials for c in p["copies"]],
        }


@pytest.mark.parametrize("with_progress", [False, True])
def test_a_worker_keeps_no_partial_of_an_answered_engine(
    tmp_path: Path, with_progress: bool
) -> None:
    """A worker kept the partial of the engine it had answered (and its pickled copy, when
    not spilled) until the next engine ended: a per-record kernel's worker held two engines'
    records at once, and the next engine's peak_rss_bytes counted the first one's."""
    ds = generate_dataset(SumCount(), 3 * 4_000, 3, tmp_path / "ds", shard_bytes=4_000)
    progress = (lambda *a: None) if with_progress else None
    out = LocalExecutor(1).run(KeepsCopies(), ds, {}, chunk_bytes=4_000, progress=progress)
    assert len(out.result["copies"]) == 3
    assert out.result["alive"] == 0


def _gone(tasks: list[_Task], began: int, ended: int, answered: int = 0) -> _Worker:
    """A worker that was killed (SIGKILL) with `tasks` unanswered, its board as given."""
    process = SimpleNamespace(pid=4321, exitcode=-signal.SIGKILL, join=lambda timeout: None)
    worker = _Worker(process=process, conn=_Pipe(), board=[began, ended], answered=answered)  # type: ignore[arg-type]
    worker.tasks.extend(tasks)
    worker.started = True
    return worker


def test_a_worker_killed_holding_answers_is_reported_for_the_task_it_ran() -> None:
    error = runtime_executor._died(_gone([_task(0), _task(1), _task(2)], began=2, ended=1))
    assert str(error).startswith("engine 1 (devices [1], worker pid 4321) was killed by SIGKILL")
    assert "while reading device-1.npy" in str(error)


def test_a_worker_killed_before_it_began_a_queued_task_was_between_tasks() -> None:
    error = runtime_executor._died(_gone([_task(0), _task(1)], began=1, ended=1))
    assert str(error) == (
        "worker pid 4321 was killed by SIGKILL while idle, between tasks, so engine 1 "
        "(devices [1]) was never begun there; no result"
    )


def test_a_worker_killed_sending_its_answers_had_run_its_tasks() -> None:
    error = runtime_executor._died(_gone([_task(3), _task(5)], began=7, ended=7, answered=5))
    assert str(error) == (
        "worker pid 4321 was killed by SIGKILL after it had run engines 3, 5, before their "
        "answers reached the parent; no result"
    )
