"""`files.cleanup_held`: a first signal that lands while a cleanup's hold is being set up
(before its handlers are swapped in) no longer skips the cleanup. Stood in for here by a
hold that raises the stop as it is entered, as a signal checked there would."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ndpkit import files
from ndpkit.runtime import dataset, generate_dataset


@contextmanager
def _stopped_as_entered() -> Iterator[None]:
    raise KeyboardInterrupt
    yield  # pragma: no cover


@contextmanager
def _stopped_in_a_cleanup() -> Iterator[None]:
    """Stops as a hold is entered while an exception is handled, i.e. in a cleanup."""
    if sys.exc_info()[0] is not None:
        raise KeyboardInterrupt
    yield


def test_the_cleanup_runs_and_the_stop_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "signals_held", _stopped_as_entered)
    calls: list[int] = []
    with pytest.raises(KeyboardInterrupt):
        files.cleanup_held(lambda: calls.append(1))
    assert calls == [1]


def test_a_failed_data_set_leaves_no_staging_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real, written = dataset._write_npy_in_place, list[int]()

    def write_then_fail(*args: Any) -> tuple[int, str]:
        if written:
            raise RuntimeError("a writer's bug")
        written.append(1)
        return real(*args)

    monkeypatch.setattr(dataset, "_write_npy_in_place", write_then_fail)
    monkeypatch.setattr(files, "signals_held", _stopped_in_a_cleanup)
    with pytest.raises(KeyboardInterrupt):
        generate_dataset("lc", 2**20, 2, tmp_path / "ds", shard_bytes=2**16)
    assert list(tmp_path.iterdir()) == []
    assert written == [1]  # the failure came after a shard was written


def _stop_in_a_hold_at(monkeypatch: pytest.MonkeyPatch, putting_back: bool) -> None:
    """A hold whose first handler swap (`putting_back`: the first put back) is followed by a
    stop, as a signal landing right there would raise; then every handler must be back."""
    before = {signum: signal.getsignal(signum) for signum in files.HELD_SIGNALS}
    first, real = files.HELD_SIGNALS[0], signal.signal

    def swap(signum: int, handler: Any) -> Any:
        previous = real(signum, handler)
        if signum == first and (handler is before[signum]) == putting_back:
            raise KeyboardInterrupt
        return previous

    monkeypatch.setattr(signal, "signal", swap)
    entered: list[bool] = []
    try:
        with pytest.raises(KeyboardInterrupt), files.signals_held():
            entered.append(True)
        monkeypatch.undo()
        assert {signum: signal.getsignal(signum) for signum in files.HELD_SIGNALS} == before
        assert entered == ([True] if putting_back else [])  # stopped before or after the body
    finally:  # else a failure would leave this pytest session's Ctrl-C recorded for good
        monkeypatch.undo()
        for signum, handler in before.items():
            signal.signal(signum, handler)


def test_a_stop_midway_through_the_swap_puts_every_handler_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stop raised after SIGINT's handler was swapped and before SIGTERM's (by SIGTERM's
    own handler) left SIGINT's the hold's recorder for good: every later Ctrl-C was lost."""
    _stop_in_a_hold_at(monkeypatch, putting_back=False)


def test_a_stop_as_the_first_handler_is_put_back_still_puts_back_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _stop_in_a_hold_at(monkeypatch, putting_back=True)


def test_a_failing_second_cleanup_is_noted_on_the_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "signals_held", _stopped_as_entered)

    def clean() -> None:
        raise PermissionError("no")

    with pytest.raises(KeyboardInterrupt) as stop:
        files.cleanup_held(clean)
    assert stop.value.__notes__ == ["the cleanup after this stop failed: PermissionError('no')"]


def test_a_data_set_published_by_another_run_mid_replace_is_one_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Run B publishes at X between run A's two renames (old X aside, A's onto X): A's
    putting back the old one failed too, as a bare OSError (a traceback, exit 1)."""
    from ndpkit.errors import SpecError  # noqa: PLC0415

    target = tmp_path / "ds"
    generate_dataset("lc", 2**16, 1, target)
    real = os.replace

    def another_run_first(src: Any, dst: Any) -> None:
        if Path(dst) == target and ".tmp-" in Path(src).name:
            target.mkdir()
            (target / "b.txt").write_text("run B's")
        real(src, dst)

    monkeypatch.setattr(dataset.os, "replace", another_run_first)
    with pytest.raises(SpecError, match="another run made a data set here"):
        generate_dataset("lc", 2**16, 1, target, overwrite=True, seed=1)
    monkeypatch.undo()
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]
    assert [p.name for p in target.iterdir()] == ["b.txt"]
