"""Calling the compiled core (`ndpkit._core`): arrays as it takes them, and long calls
that Ctrl-C can interrupt."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")


def native_input(array: Any, dtype: type[np.generic]) -> np.ndarray:
    """`array` as the Rust loops take it: of `dtype`, at least 1-d (as
    `np.ascontiguousarray` makes a 0-d one), C-contiguous and aligned, copied only where it
    is not. A view at an odd byte offset (`np.frombuffer` of a slice) is contiguous but not
    aligned, and the binding refused it with "The given array is not contiguous or is
    misaligned" (`np.ascontiguousarray` keeps it as it is)."""
    return np.require(np.ascontiguousarray(array, dtype=dtype), requirements=["C", "A"])


def interruptible(call: Callable[[], T], name: str) -> T:
    """`call()`, a long call into the core that releases the GIL (a simulation), so that
    Ctrl-C and SIGTERM stop it at once. Python runs signal handlers only in the main thread
    and only between bytecodes, so while the main thread itself sat in such a call every
    signal (even the third, which `ndpkit` documents as stopping at once) waited for it to
    end: up to about 30 s for `ndpkit simulate`. From the main thread the call runs in a
    daemon thread (`name`) that the main thread waits for, which a signal interrupts; the
    abandoned call ends with the process (or, in a program that goes on, on its own). From
    any other thread (a sweep's workers) it runs where it is: the main thread is free."""
    if threading.current_thread() is not threading.main_thread():
        return call()
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:  # raised again in the caller's thread
            failure.append(exc)

    worker = threading.Thread(target=run, name=name, daemon=True)
    worker.start()
    worker.join()
    if failure:
        raise failure[0]
    return outcome[0]
