"""`native.interruptible`: a long call into the core runs off the main thread, so that a
signal reaches the main thread's handlers while it runs (`ndpkit simulate`, `simulate
nascent2`); the end-to-end signal tests are in tests/cli/test_cli_simulate_signals.py."""

from __future__ import annotations

import threading

import pytest

from ndpkit.nascent import des
from ndpkit.nascent.model import TableJob, load_devices
from ndpkit.native import interruptible


def test_from_the_main_thread_the_call_runs_in_a_daemon_thread() -> None:
    def where() -> tuple[str, bool]:
        here = threading.current_thread()
        return here.name, here.daemon

    assert interruptible(where, "ndpkit-test") == ("ndpkit-test", True)


def test_from_another_thread_the_call_runs_where_it_is() -> None:
    seen: list[str] = []
    caller = threading.Thread(
        target=lambda: seen.append(interruptible(lambda: threading.current_thread().name, "x")),
        name="a-sweep-worker",
    )
    caller.start()
    caller.join()
    assert seen == ["a-sweep-worker"]


def test_the_calls_error_is_raised_in_the_caller() -> None:
    def fail() -> None:
        raise ValueError("spec: bad")

    with pytest.raises(ValueError, match="spec: bad"):
        interruptible(fail, "ndpkit-test")


def test_the_nascent2_simulation_runs_off_the_main_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`simulate nascent2` called the core in the main thread: Ctrl-C waited for its run."""
    threads: list[str] = []
    core = des._core.simulate_nascent2

    def spy(spec_json: str) -> str:
        threads.append(threading.current_thread().name)
        return str(core(spec_json))

    monkeypatch.setattr(des._core, "simulate_nascent2", spy)
    job = TableJob(rows=1024, row_bytes=4096.0, encoded_key_bytes=2, dict_values=1024)
    des.simulate_table_sort(load_devices().fpga("smartssd"), job)
    assert threads == ["ndpkit-nascent2"]
