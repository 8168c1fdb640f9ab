"""A worker that makes no progress for the executor's `stall_timeout_s` (stopped, asleep in a
read that does not return, a kernel that never ends) is killed, and the run fails naming
its engine, shard and chunk; a slow worker that goes on reading chunks is left alone."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import multiprocessing
import os
import re
import shutil
import signal
import socket
import struct
import tempfile
import threading
import time
from collections.abc import Callable
from multiprocessing import reduction
from multiprocessing.connection import Connection
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from test_executor import SumCount  # a sibling module: workers unpickle it by name
from test_executor_dispatch import _task as one_shard_task

import ndpkit.runtime.dataset as runtime_dataset
import ndpkit.runtime.executor as runtime_executor
from ndpkit.errors import SpecError
from ndpkit.kernels import get_kernel, run_in_memory
from ndpkit.runtime import (
    LocalExecutor,
    WorkerDiedError,
    WorkerStalledError,
    generate_dataset,
)
from ndpkit.runtime.executor import BEGAN, CHECKED, CHUNKS, ENDED, SHARD, _Shard, _Task, _Worker
from ndpkit.runtime.transfer import Rows
from ndpkit.runtime.watched_pipe import recv_watched, send_watched


class StopsAt(SumCount):
    """Stops its own worker (SIGSTOP) in the chunk that holds record `record`."""

    def __init__(self, record: int, how: str = "stop") -> None:
        self.record = record
        self.how = how

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> dict[str, int]:
        if offset <= self.record < offset + len(chunk):
            if self.how == "stop":
                os.kill(os.getpid(), signal.SIGSTOP)
            else:
                time.sleep(60)
        return super().device(chunk, state, offset)


class SlowChunks(SumCount):
    """Takes `seconds` over every chunk: slow, but never without progress for long."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> dict[str, int]:
        time.sleep(self.seconds)
        return super().device(chunk, state, offset)


class SlowLoading(SumCount):
    """Sleeps as its worker unpickles it, as a kernel whose module takes long to import."""

    def __init__(self) -> None:
        self.scale = 1  # some state, or pickle would not call __setstate__

    def __setstate__(self, state: dict[str, Any]) -> None:
        if multiprocessing.parent_process() is not None:
            time.sleep(60)
        self.__dict__.update(state)


def _warm(workers: int, limit_s: float) -> LocalExecutor:
    """A kept executor whose workers have imported this module (unpickling a first task,
    which can take longer than the limits here), then given `limit_s`."""
    executor = LocalExecutor(workers)
    executor.__enter__()
    ds = generate_dataset(SumCount(), 800, workers, Path(tempfile.mkdtemp()) / "warm")
    executor.run(SumCount(), ds, {})
    shutil.rmtree(ds.path.parent)
    executor.stall_timeout_s = limit_s
    return executor


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize(("how", "state"), [("stop", "stopped (SIGSTOP)"), ("sleep", "sleeping")])
def test_a_worker_without_progress_is_killed_and_named_with_its_shard_and_chunk(
    tmp_path: Path, how: str, state: str
) -> None:
    ds = generate_dataset(SumCount(), 8_000, 4, tmp_path / "ds", shard_bytes=1000)
    victim = ds.shards_of(2)[0]  # 62 records of 16 bytes: chunks of 25 records (400 bytes)
    start = time.monotonic()
    with _warm(1, 0.5) as ex, pytest.raises(WorkerStalledError) as caught:
        ex.run(StopsAt(victim.offset + 30, how), ds, {}, chunk_bytes=400)
    assert time.monotonic() - start < 20  # not the 60 s of the sleep
    message = str(caught.value)
    assert message.startswith("engine 2 (devices [2], worker pid ")
    quiet = re.search(r"made no progress for ([\d.]+) s reading ", message)
    assert quiet is not None and 0.5 <= float(quiet[1]) < 20, message
    assert (
        f"reading {ds.shard_path(victim)}, in its chunk 2 (chunks of 400 bytes; 1 of them done)"
        in message
    )
    assert f"while the process was {state}" in message
    assert message.endswith("or `ndpkit evaluate --stall-timeout`)")
    assert isinstance(caught.value, WorkerDiedError)  # callers that catch those catch it
    found = re.search(r"worker pid (\d+)", message)
    assert found is not None and _gone_within(int(found[1]), 10)


def test_a_slow_worker_that_goes_on_reading_chunks_is_not_stalled(tmp_path: Path) -> None:
    """Eight chunks of 0.2 s each: 1.6 s for the engine, four times the limit, but the
    board changes at every chunk."""
    ds = generate_dataset(SumCount(), 3_200, 1, tmp_path / "ds", shard_bytes=3_200)
    with _warm(1, 0.4) as ex:
        out = ex.run(SlowChunks(0.2), ds, {}, chunk_bytes=400)
    assert out.engines[0].chunks == 8
    assert out.result == run_in_memory(SumCount(), ds.read_all(), {}, 25)


def test_a_worker_stuck_loading_its_task_is_said_to_be_before_its_first_chunk(
    tmp_path: Path,
) -> None:
    ds = generate_dataset(SumCount(), 8_000, 4, tmp_path / "ds", shard_bytes=1000)
    with _warm(1, 0.5) as ex, pytest.raises(WorkerStalledError) as caught:
        ex.run(SlowLoading(), ds, {}, chunk_bytes=400)
    first = ds.shard_path(ds.shards_of(0)[0])
    assert str(caught.value).startswith("engine 0 (devices [0], worker pid ")
    assert f"before its first chunk (loading its task, or opening {first})" in str(caught.value)


def test_a_kept_executor_runs_again_after_a_stall(tmp_path: Path) -> None:
    ds = generate_dataset(SumCount(), 8_000, 4, tmp_path / "ds", shard_bytes=1000)
    with _warm(2, 0.5) as ex:
        with pytest.raises(WorkerStalledError, match=r"^engine 1 "):
            ex.run(StopsAt(ds.shards_of(1)[0].offset), ds, {}, chunk_bytes=400)
        ex.stall_timeout_s = 60.0  # new workers import this module again
        out = ex.run(SumCount(), ds, {}, chunk_bytes=400)
    assert out.result == run_in_memory(SumCount(), ds.read_all(), {}, 25)


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, "600", True, [1]])
def test_a_bad_stall_timeout_is_refused_naming_it(bad: object) -> None:
    with pytest.raises(SpecError, match=r"stall_timeout_s.*a number of seconds > 0"):
        LocalExecutor(1, stall_timeout_s=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, "600"])
def test_a_bad_stall_timeout_set_between_runs_is_refused_naming_it(bad: object) -> None:
    """A kept executor's limit may be changed between runs; a bad one is refused there, not
    taken (0 failed the next run at once with a stall of 0 s; "600" with a TypeError)."""
    executor = LocalExecutor(1, stall_timeout_s=5.0)
    with pytest.raises(SpecError, match=r"stall_timeout_s.*a number of seconds > 0"):
        executor.stall_timeout_s = bad  # type: ignore[assignment]
    assert executor.stall_timeout_s == 5.0
    executor.stall_timeout_s = math.inf
    assert executor.stall_timeout_s is None


def test_no_stall_timeout_is_none_and_infinity_is_none_too() -> None:
    assert LocalExecutor(1).stall_timeout_s == runtime_executor.STALL_TIMEOUT_S
    assert LocalExecutor(1, stall_timeout_s=None).stall_timeout_s is None
    assert LocalExecutor(1, stall_timeout_s=math.inf).stall_timeout_s is None
    assert LocalExecutor(1, stall_timeout_s=np.float64(2.5)).stall_timeout_s == 2.5


# -- the message, from a worker's board ---------------------------------------------------


def _task(engine: int) -> _Task:
    """The dispatch tests' task, reading two shards."""
    shards = tuple(
        _Shard(f"d{engine}/s{i}.npy", f"d{engine}/s{i}.npy", engine, 100, 0, 0, "")
        for i in range(2)
    )
    return dataclasses.replace(one_shard_task(engine), shards=shards)


def _stuck(tasks: list[_Task], board: list[int]) -> _Worker:
    process = SimpleNamespace(pid=4321, exitcode=None, kill=lambda: None)
    worker = _Worker(process=process, conn=None, board=board, started=True)  # type: ignore[arg-type]
    worker.tasks.extend(tasks)
    return worker


def _message(tasks: list[_Task], board: dict[int, int], monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(runtime_executor, "_process_state", lambda pid: "")
    slots = [0] * runtime_executor.BOARD_SLOTS
    for slot, value in board.items():
        slots[slot] = value
    return str(runtime_executor._stalled(_stuck(tasks, slots), 612.4, 600.0))


def test_a_stall_in_a_shard_names_the_shard_and_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    message = _message([_task(3)], {BEGAN: 1, SHARD: 1, CHUNKS: 4}, monkeypatch)
    assert message.startswith(
        "engine 3 (devices [3], worker pid 4321) made no progress for 612 s reading "
        "d3/s1.npy, in its chunk 5 (chunks of 256 bytes; 4 of them done); the worker has "
        "been killed; no result. A chunk that may take longer than 600 s needs a longer limit"
    )


def test_a_stall_before_the_first_chunk_or_after_the_last_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = _message([_task(3)], {BEGAN: 1, SHARD: -1}, monkeypatch)
    assert "before its first chunk (loading its task, or opening d3/s0.npy);" in before
    after = _message([_task(3)], {BEGAN: 1, SHARD: 2}, monkeypatch)
    assert "after reading its shards (merging or sending its partial);" in after


def test_a_stall_in_a_crc_check_before_the_first_chunk_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    task = _task(3)
    shards = tuple(dataclasses.replace(shard, file_bytes=50_000) for shard in task.shards)
    message = _message(
        [dataclasses.replace(task, shards=shards)], {BEGAN: 1, SHARD: 1, CHECKED: 8192}, monkeypatch
    )
    assert "made no progress for 612 s checking the CRC-32 of d3/s1.npy (8,192 of its " in message
    assert "50,000 bytes read);" in message


def test_a_stall_between_tasks_names_the_worker_and_its_next_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Engine 3 ended (its answer held), engine 5 not begun.
    message = _message([_task(3), _task(5)], {BEGAN: 1, ENDED: 1}, monkeypatch)
    assert message.startswith(
        "worker pid 4321 made no progress for 612 s between tasks (engine 5 was to begin "
        "next); the worker has been killed"
    )


def test_a_stall_before_the_worker_said_it_was_ready_says_it_was_starting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not "between tasks": it never got through its start-up, and was not told its task."""
    monkeypatch.setattr(runtime_executor, "_process_state", lambda pid: "")
    monkeypatch.setattr(runtime_executor, "_start_hint", lambda: "")
    worker = _stuck([_task(3)], [0] * runtime_executor.BOARD_SLOTS)
    worker.started = False
    worker.conn = SimpleNamespace(poll=lambda: False)  # type: ignore[assignment]
    error = runtime_executor._stalled(worker, 612.4, 600.0)
    assert str(error).startswith(
        "worker pid 4321 made no progress for 612 s while starting, before it said it was "
        "ready (engine 3 was to begin there); the worker has been killed; no result. A "
        "worker that may take longer than 600 s to start needs a longer limit"
    )
    # `ndpkit evaluate --data --stall-timeout 1ms` was told of LocalExecutor's argument alone
    assert str(error).endswith("or `ndpkit evaluate --stall-timeout`)")
    assert error.failed_to_start


SLOW_TO_START = """
import sys
import time

if __name__ == "__mp_main__":  # run again in each worker, as it starts
    time.sleep(60)  # as a script that imports a large library at its top

from ndpkit.runtime import LocalExecutor, WorkerStalledError, open_dataset
from ndpkit.kernels import get_kernel

if __name__ == "__main__":
    kernel = get_kernel("lc")
    try:
        ds = open_dataset(sys.argv[1])
        LocalExecutor(1, stall_timeout_s=1.0).run(kernel, ds, kernel.params(0))
    except WorkerStalledError as exc:
        print(exc)
"""


@pytest.mark.skipif(
    "forkserver" not in multiprocessing.get_all_start_methods(), reason="a fork server"
)
def test_a_worker_slow_to_start_is_said_to_be_starting(tmp_path: Path) -> None:
    import subprocess  # noqa: PLC0415 (only here)
    import sys  # noqa: PLC0415

    ds = generate_dataset("lc", 1 << 16, 1, tmp_path / "ds")
    script = tmp_path / "slow_start.py"
    script.write_text(SLOW_TO_START)
    result = subprocess.run(
        [sys.executable, str(script), str(ds.path)],
        capture_output=True,
        text=True,
        timeout=50,  # not the 60 s of the worker's start-up
        check=False,
    )
    message = result.stdout.strip()
    assert re.match(r"worker pid \d+ made no progress for [\d.]+ s while starting, ", message), (
        result.stdout + result.stderr
    )
    assert f"main module ({script}) again" in message
    assert "between tasks" not in message


def test_the_process_state_comes_from_proc() -> None:
    if not Path("/proc/self/stat").exists():
        pytest.skip("no /proc")
    assert runtime_executor._process_state(os.getpid()) == ", while the process was running"
    assert runtime_executor._process_state(2**22 + 1) == ""  # no such process


def test_evaluate_hands_its_stall_timeout_to_the_executor(tmp_path: Path) -> None:
    from ndpkit import evaluate as ev  # noqa: PLC0415 (only here)

    ds = generate_dataset("lc", 1 << 20, 2, tmp_path / "ds")
    with pytest.raises(SpecError, match=r"stall_timeout_s: must be a number of seconds > 0"):
        ev.evaluate(["lc"], ["cns"], data=ds, stall_timeout_s=-1.0)


# -- time the parent itself was not running ----------------------------------------------


def test_time_the_parent_was_stopped_is_not_blamed_on_its_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-Z stops the parent and its workers; `fg` an hour later resumes both, and the
    parent's first look found a board unchanged for an hour, and the run failed (a stall).
    The parent's own gap counts as twice its check period at most; a worker that then shows
    no change for the limit is still stalled."""
    clock = [0.0]
    monkeypatch.setattr(runtime_executor, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    pool = runtime_executor._Pool.__new__(runtime_executor._Pool)  # no processes
    board = [0] * runtime_executor.BOARD_SLOTS
    board[BEGAN], board[SHARD], board[CHUNKS] = 1, 1, 4
    pool.workers = [_stuck([_task(3)], board)]
    for now in (0.0, 1.0, 2.0, 3602.0):  # the job stopped for an hour after 2 s
        clock[0] = now
        pool._check_progress(600.0)
    with pytest.raises(WorkerStalledError, match=r"made no progress for 60\d s reading d3/s1"):
        for _ in range(610):
            clock[0] += 1.0
            pool._check_progress(600.0)
    assert clock[0] - 3602.0 >= 590  # not before the limit, counted from the resume


# -- a CRC-32 pass over a whole Parquet shard before its first chunk -----------------------


class SlowCrcLC(type(get_kernel("lc"))):  # type: ignore[misc]
    """LC whose worker checks CRC-32s slowly: 4 KiB blocks at 0.05 s each, as a large Parquet
    shard on slow storage is checked whole before its first chunk."""

    def __init__(self) -> None:
        self.slow = True  # some state, or pickle would not call __setstate__

    def __setstate__(self, state: dict[str, Any]) -> None:
        if multiprocessing.parent_process() is not None:
            crc = runtime_dataset._crc32

            def slow(*args: Any) -> int:
                time.sleep(0.05)
                return crc(*args)

            runtime_dataset._CRC_BLOCK_BYTES = 4096
            runtime_dataset._crc32 = slow
        self.__dict__.update(state)


def test_a_parquet_shard_checked_whole_before_its_first_chunk_is_not_stalled(
    tmp_path: Path,
) -> None:
    """About 50 blocks: 2.5 s for the check before any chunk, with a limit of 1 s; each block
    read is progress."""
    ds = generate_dataset("lc", 200_000, 1, tmp_path / "ds", shard_format="parquet")
    kernel = SlowCrcLC()
    with _warm(1, 1.0) as ex:
        out = ex.run(kernel, ds, kernel.params(0), verify=True)
    expected = LocalExecutor(1).run(get_kernel("lc"), ds, kernel.params(0))
    assert np.array_equal(out.result, expected.result)


class FailsSlowCrc(SumCount):
    """Refuses its first chunk, in a worker whose CRC-32 checks are slow (`SlowCrcLC`): with
    `verify`, the .npy shard is then read whole to see whether it is corrupt."""

    def __init__(self) -> None:
        self.slow = True

    __setstate__ = SlowCrcLC.__setstate__

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> dict[str, int]:
        raise ValueError("this kernel refuses every chunk")


def test_the_whole_shard_check_after_a_failure_is_progress_not_a_stall(tmp_path: Path) -> None:
    """About 50 blocks of 4 KiB: 2.5 s with a limit of 1 s; the shard is sound, so the
    kernel's own error is the run's."""
    ds = generate_dataset(SumCount(), 200_000, 1, tmp_path / "ds", shard_bytes=200_000)
    with _warm(1, 1.0) as ex, pytest.raises(ValueError, match="refuses every chunk"):
        ex.run(FailsSlowCrc(), ds, {}, verify=True)


# -- a worker a SIGKILL does not end -------------------------------------------------------

UNKILLABLE = """
import sys
from multiprocessing.process import BaseProcess
from pathlib import Path

sys.path[:0] = [{tests!r}]
from test_executor_stall import StopsAt

import ndpkit.runtime.executor as runtime_executor
from ndpkit.runtime import LocalExecutor, WorkerStalledError, open_dataset

# As a worker stuck in a read that does not return (state D): a SIGKILL ends it only once
# the read does. Here: never, while this test runs.
runtime_executor._kill = lambda process: None
BaseProcess.kill = lambda self: None
runtime_executor.WORKER_EXIT_WAIT_S = 0.5  # the test's time, not the default 5 s twice

if __name__ == "__main__":
    try:
        LocalExecutor(1, stall_timeout_s=1.0).run(
            StopsAt(100), open_dataset({data!r}), {{}}, chunk_bytes=400
        )
    except WorkerStalledError as exc:
        print(exc, flush=True)
"""


def test_the_process_exits_after_a_stall_whose_worker_cannot_die(tmp_path: Path) -> None:
    """The error was printed, and then the process hung as it exited (multiprocessing joins
    its children without a time limit), so `ndpkit evaluate` would not return to the shell
    while the file system did not answer. Now it exits after the executor's bounded waits."""
    import subprocess  # noqa: PLC0415 (only here)
    import sys  # noqa: PLC0415

    ds = generate_dataset(SumCount(), 8_000, 1, tmp_path / "ds", shard_bytes=1000)
    script = tmp_path / "unkillable.py"
    script.write_text(UNKILLABLE.format(tests=str(Path(__file__).parent), data=str(ds.path)))
    out = tmp_path / "out.txt"
    with out.open("w") as sink:  # not a pipe: the stuck worker holds it open
        job = subprocess.Popen(
            [sys.executable, str(script)],
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its worker too is killed at the end, whatever happens
        )
    try:
        job.wait(timeout=45)
    finally:
        with contextlib.suppress(ProcessLookupError):  # the job, and its stopped worker
            os.killpg(job.pid, signal.SIGKILL)
        job.wait()
    output = out.read_text()
    assert job.returncode == 0, output
    assert re.match(r"engine 0 \(devices \[0\], worker pid \d+\) made no progress", output)


# -- the pipe itself: a worker stopped mid-message ----------------------------------------


class BigState(SumCount):
    """A kernel whose task is far larger than a pipe's buffer (4 MiB of state)."""

    def __init__(self) -> None:
        self.table = np.zeros(2**19)


def test_a_worker_stopped_while_idle_fails_the_run_sending_it_a_large_task(
    tmp_path: Path,
) -> None:
    """The parent blocked in its send for ever: the stopped worker never read the task, and
    the board, which says how a worker is doing, does not change between tasks."""
    ds = generate_dataset(SumCount(), 8_000, 1, tmp_path / "ds", shard_bytes=1000)
    with _warm(1, 0.5) as ex:
        assert ex._pool is not None
        pid = ex._pool.workers[0].process.pid
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        with pytest.raises(WorkerStalledError) as caught:
            ex.run(BigState(), ds, {})
    message = str(caught.value)
    assert message.startswith(f"worker pid {pid} made no progress for ")
    assert "taking engine 0's task (" in message and "stopped (SIGSTOP)" in message
    assert _gone_within(pid, 10)


def _pipe() -> tuple[Connection, Connection]:
    ours, theirs = multiprocessing.Pipe()
    return ours, theirs


@pytest.mark.parametrize("size", [0, 10, 20_000, 3 * 2**20])
def test_watched_messages_are_framed_as_multiprocessing_frames_them(size: int) -> None:
    data = os.urandom(size)
    ours, theirs = _pipe()
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(theirs.recv_bytes()))
    reader.start()
    send_watched(ours, data, 0.05, lambda s: None)
    reader.join()
    assert got == [data]
    writer = threading.Thread(target=lambda: theirs.send_bytes(data))
    writer.start()
    assert recv_watched(ours, 0.05, lambda s: None) == data
    writer.join()


def test_a_watched_read_takes_the_long_header_too() -> None:
    """Messages over 2 GiB have -1 and an 8-byte length (too large to send here)."""
    ours, theirs = _pipe()
    os.write(theirs.fileno(), struct.pack("!iQ", -1, 5) + b"hello")
    assert recv_watched(ours, 0.05, lambda s: None) == b"hello"


class _QuietError(Exception):
    """What the tests' `quiet` raises once it has heard enough."""


def _quiet_after(limit_s: float, heard: list[float]) -> Callable[[float], None]:
    def quiet(seconds: float) -> None:
        heard.append(seconds)
        if seconds >= limit_s:
            raise _QuietError

    return quiet


def test_a_side_that_stops_reading_is_heard_until_the_caller_gives_up() -> None:
    ours, _theirs = _pipe()  # never read
    heard: list[float] = []
    with pytest.raises(_QuietError):
        send_watched(ours, bytes(16 * 2**20), 0.05, _quiet_after(0.2, heard))
    assert heard == pytest.approx([0.05, 0.1, 0.15, 0.2])
    assert os.get_blocking(ours.fileno())  # as multiprocessing needs it


def test_a_side_that_stops_mid_message_is_heard_until_the_caller_gives_up() -> None:
    ours, theirs = _pipe()
    os.write(theirs.fileno(), struct.pack("!i", 2**20) + bytes(10))  # and nothing more
    heard: list[float] = []
    with pytest.raises(_QuietError):
        recv_watched(ours, 0.05, _quiet_after(0.15, heard))
    assert heard == pytest.approx([0.05, 0.1, 0.15])
    theirs.close()
    with pytest.raises(EOFError):
        recv_watched(ours, 0.05, lambda s: None)


def _fills_the_buffer(size: int) -> bool:
    """Whether a message of `size` bytes, sent as `send_watched` sends it to a side that reads
    nothing, goes in whole and leaves no room for one more byte."""
    ours, theirs = _pipe()
    with ours, theirs:
        try:
            send_watched(ours, bytes(size), 0.01, lambda s: _raise(_QuietError()))
        except _QuietError:
            return False
        with socket.fromfd(ours.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            try:
                sock.send(b"x", socket.MSG_DONTWAIT)
            except BlockingIOError:
                return True
        return False


def _raise(exc: Exception) -> None:
    raise exc


def test_a_task_that_just_fits_the_pipe_and_an_arena_to_pass_fail_the_run_on_a_stopped_worker(
    tmp_path: Path,
) -> None:
    """The task went in whole, but left no room in the pipe for the byte that carries the
    rows arena: its send waited for ever on a worker stopped while idle."""
    sizes = [s for s in range(150_000, 400_000, 1024) if _fills_the_buffer(s)]
    if not sizes:
        pytest.skip("no task size fills this system's socket buffer exactly")
    with _warm(1, 0.5) as ex:
        pool = ex._pool
        assert pool is not None
        worker = pool.workers[0]
        pid = worker.process.pid
        assert pid is not None
        rows = Rows(generation=pool.arena.generation + 1, size_bytes=4096, spec=None)  # type: ignore[arg-type]

        def task(pad: int) -> _Task:
            return one_shard_task(0, state=bytes(pad), rows=rows)

        pad = sizes[0] - len(reduction.ForkingPickler.dumps(("task", task(sizes[0]), True)))
        pad += sizes[0]
        assert len(reduction.ForkingPickler.dumps(("task", task(pad), True))) == sizes[0]
        arena = os.open(os.devnull, os.O_RDONLY)
        pool.arena.fd = arena
        pool.stall_timeout_s = 0.5  # as a run sets it
        os.kill(pid, signal.SIGSTOP)
        caught: list[BaseException] = []

        def send() -> None:
            try:
                pool._send(worker, task(pad))
            except BaseException as exc:
                caught.append(exc)

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        sender.join(60)  # not a timing check: the old code never returned
        hung = sender.is_alive()
        if hung:
            os.kill(pid, signal.SIGKILL)  # lets the old code's send fail
            sender.join(10)
        pool.arena.fd = None
        os.close(arena)
    assert not hung, "the send waited for ever"
    assert len(caught) == 1 and isinstance(caught[0], WorkerStalledError), caught
    message = str(caught[0])
    assert message.startswith(f"worker pid {pid} made no progress for ")
    assert "taking engine 0's rows arena from its pipe" in message
    assert "stopped (SIGSTOP)" in message
    assert _gone_within(pid, 10)


@pytest.mark.parametrize("limit", [None, 60.0])
def test_a_default_socket_timeout_leaves_the_pipes_blocking(
    tmp_path: Path, limit: float | None
) -> None:
    """`socket.setdefaulttimeout` in the caller's program: the pool's look at its pipes'
    buffers (`socket.fromfd`) made them non-blocking for good, and a task larger than the
    room left in the pipe failed with BlockingIOError from multiprocessing."""
    ds = generate_dataset(SumCount(), 8_000, 1, tmp_path / "ds", shard_bytes=1000)
    before = socket.getdefaulttimeout()
    socket.setdefaulttimeout(30)
    try:
        with LocalExecutor(1, stall_timeout_s=limit) as ex:
            ex.run(SumCount(), ds, {})
            assert ex._pool is not None
            assert os.get_blocking(ex._pool.workers[0].conn.fileno())
            assert ex.run(BigState(), ds, {}).result == ex.run(SumCount(), ds, {}).result
    finally:
        socket.setdefaulttimeout(before)


def _pool_of_one_exited_worker(
    limit_s: float | None,
) -> tuple[runtime_executor._Pool, _Worker, Connection]:
    """A pool (no processes of its own) of one worker that has exited, running engine 0,
    and the worker's end of its pipe, to write what it would have sent."""
    process = multiprocessing.get_context("spawn").Process(target=time.sleep, args=(0,))
    process.start()
    process.join()
    ours, theirs = _pipe()
    worker = _Worker(process=process, conn=ours, started=True)
    worker.tasks.append(one_shard_task(0))
    pool = runtime_executor._Pool.__new__(runtime_executor._Pool)
    pool.stall_timeout_s = limit_s
    return pool, worker, theirs


@pytest.mark.parametrize("limit", [None, 60.0])
def test_a_worker_gone_part_way_through_an_answer_is_reported_as_dead(limit: float | None) -> None:
    """Its pipe ends mid-message (an OOM kill as it sent a large partial): multiprocessing's
    recv raised OSError("got end of file during message"), which came out as it was, not as
    the worker's death, where no stall limit was set."""
    pool, worker, theirs = _pool_of_one_exited_worker(limit)
    process, ours = worker.process, worker.conn
    os.write(theirs.fileno(), struct.pack("!i", 2**20) + bytes(1000))
    theirs.close()
    with pytest.raises(WorkerDiedError) as caught:
        pool._drain(worker, {}, None)
    message = str(caught.value)
    assert message.startswith(f"engine 0 (devices [0], worker pid {process.pid}) exited with ")
    ours.close()


@pytest.mark.parametrize("error", [EOFError("truncated input"), ConnectionResetError("peer")])
def test_a_kernels_own_eof_or_connection_error_is_its_error_not_a_death(error: Exception) -> None:
    """Raised by the kernel in the worker and sent as its error: it was taken for the pipe
    ending, and reported as the worker's death."""
    pool, worker, theirs = _pool_of_one_exited_worker(60.0)
    ours = worker.conn
    theirs.send(("error", error, "Traceback (in the worker)"))
    with pytest.raises(type(error), match=str(error)):
        pool._drain(worker, {}, None)
    ours.close()
    theirs.close()
