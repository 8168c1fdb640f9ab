"""Cycles and instructions of the calling thread, from Linux's `perf_event_open` (via ctypes).

`open_counters()` opens one counter group, CPU cycles (the leader) and retired instructions,
on the calling thread only (pid 0, any CPU, not inherited by threads it starts), counting user
space only (`exclude_kernel`, `exclude_hv`), which an unprivileged process may do at
`perf_event_paranoid` ≤ 2. Kernel time (page faults, system calls) is therefore not in the
counts. `start()` zeroes and enables the group, `stop()` disables it and returns the counts
since `start()`, scaled by time enabled / time running over that interval if the kernel
multiplexed the counters. The descriptors are close-on-exec, like Python's own.

Where the syscall is missing or refused (not Linux, an unknown architecture, a VM without a
virtual PMU: `perf stat -e cycles` then says `<not supported>` and the syscall fails with
ENOENT, seccomp, paranoid level 3), `open_counters` raises `CounterError` with the reason, and
callers fall back to the clock.

Example:
    with open_counters() as counters:
        counters.start(); work(); reading = counters.stop()
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import platform
import struct
import sys
import threading
from dataclasses import dataclass
from functools import cache
from types import TracebackType
from typing import NamedTuple, Protocol

SYSCALL_NUMBERS = {"x86_64": 298, "aarch64": 241}
"""`__NR_perf_event_open` (arch/x86/entry/syscalls/syscall_64.tbl; asm-generic/unistd.h)."""

PERF_TYPE_HARDWARE = 0
PERF_TYPE_SOFTWARE = 1
PERF_FORMAT_TOTAL_TIME_ENABLED = 1 << 0
PERF_FORMAT_TOTAL_TIME_RUNNING = 1 << 1
PERF_FORMAT_GROUP = 1 << 3
PERF_IOC_ENABLE = 0x2400  # _IO('$', 0)
PERF_IOC_DISABLE = 0x2401  # _IO('$', 1)
PERF_IOC_RESET = 0x2403  # _IO('$', 3)
PERF_IOC_FLAG_GROUP = 1
PERF_FLAG_FD_CLOEXEC = 1 << 3  # Linux ≥ 3.14
_DISABLED, _EXCLUDE_KERNEL, _EXCLUDE_HV = 1 << 0, 1 << 5, 1 << 6  # perf_event_attr bit flags
_WORD = struct.Struct("=Q")


class CounterError(Exception):
    """The counters could not be opened or read; the message says why."""


@dataclass(frozen=True)
class Event:
    """A perf event: `type` and `config` as in `struct perf_event_attr`."""

    name: str
    type: int
    config: int


CYCLES = Event("cycles", PERF_TYPE_HARDWARE, 0)  # PERF_COUNT_HW_CPU_CYCLES
INSTRUCTIONS = Event("instructions", PERF_TYPE_HARDWARE, 1)  # PERF_COUNT_HW_INSTRUCTIONS
TASK_CLOCK = Event("task-clock", PERF_TYPE_SOFTWARE, 1)  # PERF_COUNT_SW_TASK_CLOCK, ns
CONTEXT_SWITCHES = Event(
    "context-switches", PERF_TYPE_SOFTWARE, 3
)  # PERF_COUNT_SW_CONTEXT_SWITCHES


class CounterReading(NamedTuple):
    """Counts of one counted interval."""

    cycles: float
    instructions: float


class Counters(Protocol):
    """What profiling needs from a counter: count an interval, then let go."""

    def start(self) -> None: ...

    def stop(self) -> CounterReading: ...

    def close(self) -> None: ...


class _Attr(ctypes.Structure):
    """`struct perf_event_attr` up to `config1` (PERF_ATTR_SIZE_VER0, 64 bytes): every later
    field is optional and the kernel takes the size from `size`."""

    _fields_ = [
        ("type", ctypes.c_uint32),
        ("size", ctypes.c_uint32),
        ("config", ctypes.c_uint64),
        ("sample_period", ctypes.c_uint64),
        ("sample_type", ctypes.c_uint64),
        ("read_format", ctypes.c_uint64),
        ("flags", ctypes.c_uint64),
        ("wakeup_events", ctypes.c_uint32),
        ("bp_type", ctypes.c_uint32),
        ("config1", ctypes.c_uint64),
    ]


def _syscall_number() -> int:
    machine = platform.machine()
    if not sys.platform.startswith("linux") or machine not in SYSCALL_NUMBERS:
        raise CounterError(f"perf_event_open is not available on {sys.platform}/{machine}")
    return SYSCALL_NUMBERS[machine]


@cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _open_event(event: Event, group_fd: int) -> int:
    """One counter on this thread; the leader (group_fd −1) starts disabled."""
    attr = _Attr(
        type=event.type,
        size=ctypes.sizeof(_Attr),
        config=event.config,
        read_format=PERF_FORMAT_GROUP
        | PERF_FORMAT_TOTAL_TIME_ENABLED
        | PERF_FORMAT_TOTAL_TIME_RUNNING,
        flags=_EXCLUDE_KERNEL | _EXCLUDE_HV | (_DISABLED if group_fd == -1 else 0),
    )
    fd = _libc().syscall(
        ctypes.c_long(_syscall_number()),
        ctypes.byref(attr),
        ctypes.c_int(0),  # pid 0: the calling thread
        ctypes.c_int(-1),  # on any CPU
        ctypes.c_int(group_fd),
        # Not inherited by programs this process runs: they would keep the counter open.
        ctypes.c_ulong(PERF_FLAG_FD_CLOEXEC),
    )
    if fd < 0:
        code = ctypes.get_errno()
        name = errno.errorcode.get(code, str(code))
        raise CounterError(f"perf_event_open({event.name}): {os.strerror(code)} ({name})")
    return int(fd)


class PerfGroup:
    """Counters of `events` on the calling thread, read together (the first is the leader)."""

    def __init__(self, events: tuple[Event, ...]):
        if not events:
            raise ValueError("a counter group needs at least one event")
        self.events = events
        self._fds: list[int] = []
        self._since = (0, 0)  # time enabled and running at `start()`
        self._owner = _this_thread()
        try:
            for event in events:
                self._fds.append(_open_event(event, self._fds[0] if self._fds else -1))
        except CounterError:
            self.close()
            raise

    def start(self) -> None:
        self._ioctl(PERF_IOC_RESET)
        # RESET zeroes the counts but not the times, which add up over every interval: the
        # interval's are the difference from these (the group is disabled, so they hold).
        enabled, running, _ = group_read(self._read(), len(self.events))
        self._since = (enabled, running)
        self._ioctl(PERF_IOC_ENABLE)

    def stop_counts(self) -> list[float]:
        """Disable the group; its counts since `start()`, one per event."""
        self._ioctl(PERF_IOC_DISABLE)
        return scaled_counts(self._read(), len(self.events), self._since)

    def _read(self) -> bytes:
        self._check_usable()
        try:
            return os.read(self._fds[0], _WORD.size * (3 + len(self.events)))
        except OSError as e:
            raise CounterError(f"reading perf counters: {e}") from e

    def close(self) -> None:
        for fd in self._fds:
            os.close(fd)
        self._fds = []

    def _check_usable(self) -> None:
        if not self._fds:
            raise CounterError("the perf counters are closed")
        # pid 0 counts the thread that opened them: used from another thread or a forked
        # child, they would silently give that thread's counts.
        if _this_thread() != self._owner:
            raise CounterError("the perf counters count another thread (the one that opened them)")

    def _ioctl(self, request: int) -> None:
        self._check_usable()
        try:
            fcntl.ioctl(self._fds[0], request, PERF_IOC_FLAG_GROUP)
        except OSError as e:
            raise CounterError(f"perf counter ioctl {request:#x}: {e}") from e

    def __enter__(self) -> PerfGroup:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _this_thread() -> tuple[int, int]:
    return os.getpid(), threading.get_native_id()


def group_read(raw: bytes, n_events: int) -> tuple[int, int, list[int]]:
    """Decode a PERF_FORMAT_GROUP read: (nr, time enabled, time running, one value per
    event) as (enabled, running, values); the times add up over every enabled interval."""
    words = [_WORD.unpack_from(raw, _WORD.size * i)[0] for i in range(len(raw) // _WORD.size)]
    if len(words) < 3 or words[0] != n_events or len(words) < 3 + n_events:
        raise CounterError(f"perf counters: unexpected group read of {len(raw)} bytes")
    return words[1], words[2], words[3 : 3 + n_events]


def scaled_counts(raw: bytes, n_events: int, since: tuple[int, int] = (0, 0)) -> list[float]:
    """The values of a group read scaled by enabled / running since `since` (the times at the
    interval's start), the kernel's multiplexing correction for that interval."""
    enabled, running, values = group_read(raw, n_events)
    enabled, running = enabled - since[0], running - since[1]
    if running <= 0:
        # Counts of 0, not an error, had the times of earlier intervals been used.
        raise CounterError("perf counters never ran (the PMU was busy or is not virtualised)")
    return [value * enabled / running for value in values]


class CycleCounter(PerfGroup):
    """Cycles and instructions of the calling thread (user space)."""

    def __init__(self) -> None:
        super().__init__((CYCLES, INSTRUCTIONS))

    def stop(self) -> CounterReading:
        cycles, instructions = self.stop_counts()
        return CounterReading(cycles, instructions)

    def __enter__(self) -> CycleCounter:
        return self


def open_counters() -> CycleCounter:
    """Cycle and instruction counters on this thread, or `CounterError` saying why not."""
    return CycleCounter()
