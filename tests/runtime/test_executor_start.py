"""Starting workers, and the executor's arguments: a worker that dies while multiprocessing
starts it is said to have failed to start (with the `if __name__ == "__main__":` advice when
the main script is the likely cause), not to have failed reading a shard; arguments of the
wrong type or out of range are SpecErrors naming them, raised before any process starts."""

from __future__ import annotations

import ast
import multiprocessing
import os
import pickle
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np
import pytest
from test_executor import SumCount  # a sibling module: workers unpickle it by name

from ndpkit.cli import main as cli_main
from ndpkit.cpus import usable_cpus
from ndpkit.errors import NdpkitError, SpecError
from ndpkit.kernels import get_kernel
from ndpkit.runtime import Dataset, LocalExecutor, engine_devices, executor, generate_dataset
from ndpkit.runtime.dataset import RecordLayout
from ndpkit.runtime.executor import _died, _Shard, _start_hint, _Task, _Worker

needs_forkserver = pytest.mark.skipif(
    "forkserver" not in multiprocessing.get_all_start_methods(), reason="a fork server"
)
GUARD = 'if __name__ == "__main__":'


class SumCountLC(SumCount):
    """SumCount over LC's points (8 float32 features)."""

    record_shape = (8,)


class SmallChunks(SumCountLC):
    """Asks for chunks of 32 records (`Kernel.chunk_bytes`)."""

    chunk_bytes = 1024


class NoChunks(SumCountLC):
    chunk_bytes = 0


@pytest.fixture(scope="module")
def lc_data(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return generate_dataset("lc", 2**14, 2, tmp_path_factory.mktemp("lc") / "ds", shard_bytes=4096)


def _python(
    args: list[str], cwd: Path, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        input=stdin,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


UNGUARDED = """
import sys

from ndpkit.kernels import get_kernel
from ndpkit.runtime import LocalExecutor, WorkerDiedError, open_dataset

kernel = get_kernel("lc")
try:
    out = LocalExecutor(2).run(kernel, open_dataset(sys.argv[1]), kernel.params(0))
except WorkerDiedError as exc:
    print(exc)
else:
    print("alpha", out.alpha)
"""


# -- a worker that dies before it starts ---------------------------------------------------


@needs_forkserver
def test_an_unguarded_script_is_told_to_guard_its_entry_point(
    tmp_path: Path, lc_data: Dataset
) -> None:
    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED)
    result = _python([str(script), str(lc_data.path)], cwd=tmp_path)
    message = result.stdout.strip().splitlines()[-1]
    assert "the worker process failed to start" in message, result.stdout + result.stderr
    assert "before it began its task" in message
    assert GUARD in message and str(script) in message
    assert "while reading" not in message and "shard-" not in message
    assert "bootstrapping phase" in result.stderr  # the worker's own error, left on stderr


UNGUARDED_GENERATING = """
from ndpkit.kernels import get_kernel
from ndpkit.runtime import LocalExecutor, WorkerDiedError, generate_dataset

ds = generate_dataset("lc", 2**20, devices=4, path="ug", overwrite=True)
kernel = get_kernel("lc")
try:
    out = LocalExecutor(2).run(kernel, ds, kernel.params(0))
except WorkerDiedError as exc:
    print(exc)
"""


UNGUARDED_EVALUATING = """
from ndpkit.errors import NdpkitError
from ndpkit.evaluate import evaluate
from ndpkit.runtime import generate_dataset

ds = generate_dataset("lc", 2**20, devices=4, path="ug", overwrite=True)
try:
    evaluate(["lc"], ["rans"], data=ds, workers=2, verify_shards=False, size_bytes=2**16)
except NdpkitError as exc:
    print(exc)
"""


@needs_forkserver
@pytest.mark.parametrize("code", [UNGUARDED_GENERATING, UNGUARDED_EVALUATING])
def test_an_unguarded_script_that_makes_its_data_is_told_to_guard_too(
    tmp_path: Path, code: str
) -> None:
    """The docs' example without its guard: each worker runs the script again, which writes
    the data set again; the error said the data set was replaced while it was read ("run
    again", which fails the same way) instead of why (through `evaluate` too, whose own
    check of the data set wraps the executor's)."""
    script = tmp_path / "unguarded.py"
    script.write_text(code)
    result = _python([str(script)], cwd=tmp_path)
    message = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert "the worker process failed to start" in message, result.stdout + result.stderr
    assert GUARD in message
    assert "replaced" not in message


@needs_forkserver
def test_code_on_stdin_is_told_to_become_a_guarded_script(tmp_path: Path, lc_data: Dataset) -> None:
    result = _python(["-", str(lc_data.path)], cwd=tmp_path, stdin=UNGUARDED)
    message = result.stdout.strip().splitlines()[-1]
    assert "the worker process failed to start" in message, result.stdout + result.stderr
    assert "'<stdin>', which it cannot read" in message and GUARD in message
    assert "while reading" not in message


@needs_forkserver
def test_the_same_code_guarded_runs(tmp_path: Path, lc_data: Dataset) -> None:
    head, body = UNGUARDED.split("kernel = ", 1)
    script = tmp_path / "guarded.py"
    script.write_text(f"{head}{GUARD}\n" + textwrap.indent("kernel = " + body, "    "))
    result = _python([str(script), str(lc_data.path)], cwd=tmp_path)
    assert result.stdout.strip() == "alpha 8.0", result.stdout + result.stderr


FAILING_PRELOAD = """
import sys

import ndpkit.runtime.executor as executor
from ndpkit.kernels import get_kernel
from ndpkit.runtime import LocalExecutor, WorkerDiedError, open_dataset

if __name__ == "__main__":
    executor._PRELOAD = [*executor._PRELOAD, "fails_on_import"]
    kernel = get_kernel("lc")
    try:
        LocalExecutor(2).run(kernel, open_dataset(sys.argv[1]), kernel.params(0))
    except WorkerDiedError as exc:
        print(exc)
    print(*(p.pid for p in __import__("multiprocessing").active_children()))
"""


@needs_forkserver
def test_a_fork_server_that_ends_before_it_answers_is_a_failed_start(
    tmp_path: Path, lc_data: Dataset
) -> None:
    """As where CPython preloads an unguarded `__main__` in the server (its body fails
    there): `Process.start` hits EOF, which becomes a WorkerDiedError, no bare EOFError."""
    (tmp_path / "fails_on_import.py").write_text("raise RuntimeError('fails on import')\n")
    (tmp_path / "run.py").write_text(FAILING_PRELOAD)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    result = _python([str(tmp_path / "run.py"), str(lc_data.path)], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "EOFError" not in result.stderr
    message, children = [*result.stdout.splitlines(), ""][:2]
    assert message.startswith("the worker processes failed to start: multiprocessing's fork ")
    assert "ended before it answered" in message and GUARD in message
    assert children.strip() == ""  # no worker left behind


def _task() -> _Task:
    shard = _Shard("device-03/shard-0000.npy", "device-03/shard-0000.npy", 3, 10, 0, 0, "")
    layout = RecordLayout(np.dtype(np.float32), (4,))
    return _Task(SumCount(), None, 3, (3,), (shard,), layout, 16, False, False, None, None)


def _dead_worker(said: list[Any]) -> _Worker:
    """A worker that exited with status 1, running engine 3, after sending `said`."""
    parent_end, child_end = multiprocessing.Pipe()
    for message in said:
        child_end.send(message)
    child_end.close()
    process = SimpleNamespace(pid=4242, exitcode=1, join=lambda timeout=None: None)
    worker = _Worker(process=process, conn=parent_end)  # type: ignore[arg-type]
    worker.tasks.append(_task())
    return worker


@pytest.fixture
def in_shard_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fake task's shard, as an empty file (its manifest size) in the working directory."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "device-03").mkdir()
    shard = tmp_path / "device-03" / "shard-0000.npy"
    shard.touch()
    return shard


def test_a_worker_that_said_it_was_ready_died_reading(in_shard_dir: Path) -> None:
    """The ready message still in the pipe counts (a worker that died as it was sent its
    first task, whose pipe the parent had not read yet)."""
    message = str(_died(_dead_worker([("ready",)])))
    assert message == (
        "engine 3 (devices [3], worker pid 4242) exited with status 1 while reading "
        "device-03/shard-0000.npy; no result"
    )


def test_a_worker_that_died_reading_a_shard_that_changed_size_names_it(
    in_shard_dir: Path,
) -> None:
    """A shard truncated (here: grown) while mapped kills its reader with SIGBUS; the shard
    list alone may not show which one."""
    in_shard_dir.write_bytes(b"12345")
    message = str(_died(_dead_worker([("ready",)])))
    assert message == (
        "engine 3 (devices [3], worker pid 4242) exited with status 1 while reading "
        "device-03/shard-0000.npy (since then device-03/shard-0000.npy is 5 bytes, the "
        "manifest says 0: changed while it was read); no result"
    )
    in_shard_dir.unlink()
    assert "(since then device-03/shard-0000.npy is gone: changed while" in str(
        _died(_dead_worker([("ready",)]))
    )


def test_a_worker_that_never_said_it_was_ready_failed_to_start() -> None:
    worker = _dead_worker([])
    message = str(_died(worker))
    assert message.startswith(
        "engine 3 (devices [3], worker pid 4242): the worker process failed to start: it "
        "exited with status 1 before it began its task"
    )
    assert "while reading" not in message and message.endswith("; no result")


def test_workers_say_they_are_ready_before_their_first_task(lc_data: Dataset) -> None:
    with LocalExecutor(1) as ex:
        ex.run(SumCountLC(), lc_data, {})
        assert ex._pool is not None and all(w.started for w in ex._pool.workers)


# -- arguments --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("workers", "message"),
    [
        (2.5, r"workers: must be an integer ≥ 1 .*got 2\.5 \(float\)"),
        ("2", r"workers: must be an integer ≥ 1 .*got '2' \(str\)"),
        (True, r"workers: must be an integer ≥ 1 .*got True \(bool\)"),
        (0, "workers: must be ≥ 1, got 0"),
    ],
)
def test_workers_must_be_an_integer_at_least_1(workers: Any, message: str) -> None:
    with pytest.raises(SpecError, match=message) as caught:
        LocalExecutor(workers)
    assert caught.value.field == "workers"


def test_workers_may_be_a_numpy_integer() -> None:
    assert LocalExecutor(np.int64(3)).workers == 3  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("chunk_bytes", "message"),
    [
        (100.5, r"got 100\.5 \(float\)"),
        ("4096", r"got '4096' \(str\)"),
        (True, r"got True \(bool\)"),
    ],
)
def test_chunk_bytes_must_be_an_integer_before_any_worker_starts(
    lc_data: Dataset, chunk_bytes: Any, message: str
) -> None:
    ex = LocalExecutor(1)
    with pytest.raises(SpecError, match="chunk_bytes: must be a whole number of bytes ≥ 1, ") as e:
        ex.run(SumCountLC(), lc_data, {}, chunk_bytes=chunk_bytes)
    assert re.search(message, str(e.value))
    assert ex._pool is None  # refused in the parent: no worker was started


@pytest.mark.parametrize(
    ("keyword", "message"),
    [
        # progress=True failed at the first chunk read ("'bool' object is not callable").
        ({"progress": True}, r"progress: must be a function progress\(bytes_done, bytes_total\)"),
        # verify="no" verified every shard.
        ({"verify": "no"}, "verify: must be True or False, got 'no'"),
        ({"verify": 1}, "verify: must be True or False, got 1"),
    ],
)
def test_progress_and_verify_are_checked_before_any_worker_starts(
    lc_data: Dataset, keyword: dict[str, Any], message: str
) -> None:
    ex = LocalExecutor(1)
    with pytest.raises(SpecError, match=message):
        ex.run(SumCountLC(), lc_data, {}, **keyword)
    assert ex._pool is None


def test_verify_may_be_a_numpy_bool(lc_data: Dataset) -> None:
    out = LocalExecutor(1).run(SumCountLC(), lc_data, {}, verify=np.True_)  # type: ignore[arg-type]
    assert out.result == LocalExecutor(1).run(SumCountLC(), lc_data, {}).result


@pytest.mark.parametrize(
    ("active", "route", "field", "message"),
    [
        (None, [9, 9, 9, 9], "route", r"no engine 9: engine i sits beside device i, so over 4 "),
        (None, [0, 1, 2, 4], "route", r"no engine 4: .* the engines are 0 to 3"),
        ([0, 1, 2, 3, 99], None, "active_devices", r"no engine 99: "),
        ([0, 1, 2, -3], None, "active_devices", "engine numbers must be ≥ 0"),
        (None, [0.0, 1, 2, 3], "route", r"engine numbers must be integers, got 0\.0 in "),
        (None, [0, 1, 2, True], "route", r"engine numbers must be integers, got True in "),
        ([0.0, 1], [0, 0, 1, 1], "active_devices", r"must be integers, got 0\.0"),
        ([0, 1, 1], [0, 0, 1, 1], "active_devices", r"names engines \[1\] more than once"),
        (None, "0123", "route", "must be a list of engine numbers, got '0123'"),
        (None, 3, "route", "must be a list of engine numbers, got 3"),
        # A dict gave its keys: this one ran every device on its own engine, silently.
        (None, {0: 1, 1: 1, 2: 1, 3: 1}, "route", r"route\[device\] = engine\), got a dict"),
        (None, {3, 2, 1, 0}, "route", r"in device order, .*got a set"),
        ({0: False, 1: True, 2: True, 3: True}, None, "active_devices", "got a dict"),
    ],
)
def test_engine_numbers_are_integers_beside_a_device(
    active: Any, route: Any, field: str, message: str
) -> None:
    with pytest.raises(SpecError, match=message) as caught:
        engine_devices(4, active, route)
    assert caught.value.field == field


def test_a_route_may_name_an_engine_many_times() -> None:
    assert engine_devices(4, [0, 2], [0, 0, 2, 2]) == {0: (0, 1), 2: (2, 3)}
    assert engine_devices(4, {2, 0}, [0, 0, 2, 2]) == {0: (0, 1), 2: (2, 3)}  # a set of engines
    assert engine_devices(4, None, np.array([3, 3, 3, 3])) == {3: (0, 1, 2, 3)}


def test_run_refuses_an_engine_without_a_device_before_any_worker_starts(
    lc_data: Dataset,
) -> None:
    ex = LocalExecutor(1)
    with pytest.raises(SpecError, match="route: no engine 9"):
        ex.run(SumCountLC(), lc_data, {}, route=[9, 9])
    assert ex._pool is None


def test_too_few_open_files_for_the_workers_is_one_error_before_any_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A soft limit below 4096 is raised towards the hard one (once, generously: the fork
    server keeps the limit it starts with); a hard limit below what the workers need stops
    the run before a worker or the fork server starts."""
    limits = {"soft": 20, "hard": 100_000}
    monkeypatch.setattr(executor.resource, "getrlimit", lambda _: (limits["soft"], limits["hard"]))
    monkeypatch.setattr(
        executor.resource, "setrlimit", lambda _, value: limits.update(soft=value[0])
    )
    executor._check_open_files(8)
    assert limits == {"soft": 4096, "hard": 100_000}
    limits.update(soft=20, hard=30)  # raised as far as it goes: enough for 2, not for 8
    executor._check_open_files(2)
    assert limits["soft"] == 30
    with pytest.raises(NdpkitError, match=r"8 worker processes need about 48 open files, "
                       r"and this process may open 30 \(ulimit -n\)"):  # fmt: skip
        executor._check_open_files(8)
    limits.update(soft=20, hard=executor.resource.RLIM_INFINITY)  # macOS reports that
    executor._check_open_files(8)
    assert limits["soft"] == 4096
    limits.update(soft=executor.resource.RLIM_INFINITY)
    executor._check_open_files(8)  # never lowered
    assert limits["soft"] == executor.resource.RLIM_INFINITY


@needs_forkserver
def test_the_fork_server_leaves_ctrl_c_to_the_parent(tmp_path: Path) -> None:
    """Ctrl-C from a terminal reaches the whole process group: under the `ndpkit` command the
    fork server (and the workers it forks) ignore it, so only the parent reports it, and
    the parent's own handler is back once the server runs. A program that embeds ndpkit
    keeps Python's default in the server."""
    script = tmp_path / "server.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import signal
            from multiprocessing import forkserver
            import sys
            from ndpkit import files
            from ndpkit.runtime import executor
            {GUARD}
                if sys.argv[1] == "command":
                    files.leave_ctrl_c_to_the_parent()
                before = signal.getsignal(signal.SIGINT)
                executor._context()
                forkserver.ensure_running()  # started by then under the command; else now
                pid = forkserver._forkserver._forkserver_pid
                status = open(f"/proc/{{pid}}/status").read()
                # blocked from its start (and pending ones dropped once it ignores it)
                mask = 0
                for field in ("SigIgn:", "SigBlk:"):
                    mask |= int(status.split(field)[1].split()[0], 16)
                restored = signal.getsignal(signal.SIGINT) is before
                restored &= signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])
                print(bool(mask & (1 << (signal.SIGINT - 1))), restored)
            """
        )
    )
    # In a library the server ignores Ctrl-C too once its preload is imported (its own
    # code): only whether it already did at start-up is ours, under the command.
    for who, ignored in (("command", "True"), ("library", None)):
        done = subprocess.run(
            [sys.executable, str(script), who],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        server_ignores, handler_back = done.stdout.split()
        assert handler_back == "True", who
        assert ignored is None or server_ignores == ignored, who


@needs_forkserver
def test_a_ctrl_c_while_the_fork_server_starts_stops_the_command(tmp_path: Path) -> None:
    """The parent ignored Ctrl-C while it started the server, so one sent then was lost and
    the run went on to the end (exit 0). Now it waits, and stops the command after."""
    script = tmp_path / "late.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import os, signal, time
            from multiprocessing import forkserver
            from ndpkit import files
            from ndpkit.runtime import executor
            {GUARD}
                files.leave_ctrl_c_to_the_parent()
                start = forkserver.ensure_running
                def ctrl_c_meanwhile():
                    start()
                    os.kill(os.getpid(), signal.SIGINT)
                forkserver.ensure_running = ctrl_c_meanwhile
                try:
                    executor._start_fork_server()
                    # Raised once unblocked, at the interpreter's next check for signals:
                    # that may be just after the return. Lost, it never comes.
                    time.sleep(2)
                except KeyboardInterrupt:
                    print("stopped")
                else:
                    print("lost")
            """
        )
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.stdout.split() == ["stopped"], done.stderr


def test_the_ndpkit_command_gets_no_advice_to_guard_its_entry_point(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Its console script (`from ndpkit.cli import main`, guarded) is a file like any script:
    the advice is for scripts of users, which this one is not."""
    script = tmp_path / "ndpkit"
    script.write_text("from ndpkit.cli import main\n")
    module = ModuleType("__main__")
    module.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", module)
    assert "__name__" in _start_hint()  # a script of the user's
    module.main = cli_main  # type: ignore[attr-defined]
    assert _start_hint() == ""


class BlasThreads(SumCountLC):
    """Each worker's thread-pool libraries and their thread counts, as it runs."""

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> Any:
        from threadpoolctl import ThreadpoolController  # noqa: PLC0415

        return {(i["filepath"], i["num_threads"]) for i in ThreadpoolController().info()}

    def merge(self, partials: list[Any]) -> Any:
        return set().union(*partials)


needs_two_cpus = pytest.mark.skipif(
    usable_cpus() < 2, reason="one CPU: a worker's share is every library's default"
)


@needs_two_cpus
def test_each_worker_limits_blas_to_its_share_of_the_cpus(lc_data: Dataset) -> None:
    """Two workers: half the CPUs each, where OpenBLAS would start one thread per CPU (from
    the scan the fork server made once, `worker_preload.THREADPOOLS`)."""
    found = LocalExecutor(2).run(BlasThreads(), lc_data, {}).result
    assert found, "numpy's BLAS is a thread-pool library threadpoolctl sees"
    assert {threads for _, threads in found} == {usable_cpus() // 2}


LOADS_ITS_OWN_BLAS = """
import scipy.linalg  # a BLAS of scipy's own, loaded by the main script (in each worker too)

from ndpkit.runtime import LocalExecutor, open_dataset
from test_executor_start import BlasThreads

if __name__ == "__main__":
    import sys

    found = LocalExecutor(2).run(BlasThreads(), open_dataset(sys.argv[1]), {}).result
    print(sorted(found))
"""


@needs_two_cpus
@needs_forkserver
def test_a_blas_the_main_script_loads_is_limited_too(tmp_path: Path, lc_data: Dataset) -> None:
    """On Python 3.11 and 3.12 each worker imports the main script itself, after the fork
    server's scan: a BLAS it loads (scipy's) was left at its default thread count."""
    script = tmp_path / "own_blas.py"
    script.write_text(LOADS_ITS_OWN_BLAS)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])}
    result = _python([str(script), str(lc_data.path)], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    found = ast.literal_eval(result.stdout.strip().splitlines()[-1])  # a list of tuples
    assert any("scipy.libs" in path for path, _ in found), found  # numpy's is numpy.libs
    assert {threads for _, threads in found} == {usable_cpus() // 2}, found


def test_a_run_that_names_no_chunk_uses_the_kernels_own(lc_data: Dataset) -> None:
    """Two devices of two 4 KiB shards each (128 records of 32 bytes)."""
    with LocalExecutor(1) as ex:
        own = ex.run(SmallChunks(), lc_data, {})
        default = ex.run(SumCountLC(), lc_data, {})  # RUN_CHUNK_BYTES: a shard a chunk
        named = ex.run(SmallChunks(), lc_data, {}, chunk_bytes=2048)
    assert [e.chunks for e in own.engines] == [8, 8]
    assert [e.chunks for e in default.engines] == [2, 2]
    assert [e.chunks for e in named.engines] == [4, 4]
    assert own.result == default.result == named.result


def test_a_kernels_own_chunk_is_checked_before_any_worker_starts(lc_data: Dataset) -> None:
    ex = LocalExecutor(1)
    with pytest.raises(SpecError, match=r"NoChunks\.chunk_bytes: must be a whole number of bytes"):
        ex.run(NoChunks(), lc_data, {})
    assert ex._pool is None


def test_the_top_k_split_asks_for_large_chunks() -> None:
    """Its fold's memory does not grow with the chunk; the paper's split's distances do."""
    assert executor.run_chunk_bytes(get_kernel("knn8-topk")) == 128 * 2**20
    assert executor.run_chunk_bytes(get_kernel("knn8")) == executor.RUN_CHUNK_BYTES


class LargeChunks(SumCountLC):
    """Asks for more than RUN_CHUNK_BYTES (which the test below lowers to 1 KiB)."""

    chunk_bytes = 4096


def test_a_parquet_data_set_caps_the_kernels_own_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Parquet chunk is a decoded batch, several times its size in the worker: a kernel's
    own chunk (k-NN's top-k split: 128 MiB) is held to RUN_CHUNK_BYTES there; an explicit
    one and a .npy data set are not. Two devices of one 4 KiB shard each."""
    monkeypatch.setattr(executor, "RUN_CHUNK_BYTES", 1024)
    pq = generate_dataset("lc", 8192, 2, tmp_path / "pq", shard_format="parquet")
    npy = generate_dataset("lc", 8192, 2, tmp_path / "npy")
    with LocalExecutor(1) as ex:
        capped = ex.run(LargeChunks(), pq, {})
        named = ex.run(LargeChunks(), pq, {}, chunk_bytes=4096)
        own = ex.run(LargeChunks(), npy, {})
    assert [e.chunks for e in capped.engines] == [4, 4]  # on the old code [1, 1]
    assert [e.chunks for e in named.engines] == [1, 1]
    assert [e.chunks for e in own.engines] == [1, 1]
    assert capped.result == named.result == own.result


def test_workers_start_where_dev_shm_takes_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """multiprocessing puts a worker's shared board in /dev/shm whenever that has the free
    space, even where no file can be made there (read-only, out of inodes): the run stopped
    on that file. It goes to the temporary directory instead. (A file stands in for that
    /dev/shm: it has free space, and no file can be made in it.)"""
    import multiprocessing.heap  # noqa: PLC0415 - its private Arena is what is patched

    kernel = get_kernel("he")
    ds = generate_dataset(kernel, 2**20, 2, tmp_path / "he")
    params = kernel.params(0)
    expected = LocalExecutor(1).run(kernel, ds, params).result
    no_files = tmp_path / "shm"
    no_files.write_bytes(b"")
    monkeypatch.setattr(multiprocessing.heap.Arena, "_dir_candidates", [str(no_files)])
    # a heap of its own: one left from an earlier run may have room and make no new file
    monkeypatch.setattr(multiprocessing.heap.BufferWrapper, "_heap", multiprocessing.heap.Heap())
    got = LocalExecutor(1).run(kernel, ds, params).result
    assert type(got) is type(expected)
    assert pickle.dumps(got) == pickle.dumps(expected)
