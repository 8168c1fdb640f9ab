"""The perf_event_open wrapper: group reads decoded and scaled, failures reported, and real
counters where this machine has them (skipped with the reason where it does not)."""

from __future__ import annotations

import ctypes
import os
import struct
import threading
import time
import types
import warnings

import pytest

from ndpkit.runtime import perf_event
from ndpkit.runtime.perf_event import (
    CONTEXT_SWITCHES,
    TASK_CLOCK,
    CounterError,
    PerfGroup,
    open_counters,
    scaled_counts,
)


def _group_read(values: list[int], enabled: int, running: int) -> bytes:
    return struct.pack(f"={3 + len(values)}Q", len(values), enabled, running, *values)


def _busy(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def test_group_read_is_decoded_in_event_order() -> None:
    assert scaled_counts(_group_read([10, 20], 100, 100), 2) == [10.0, 20.0]


def test_multiplexed_counts_are_scaled_by_enabled_over_running() -> None:
    assert scaled_counts(_group_read([10, 30], 400, 100), 2) == [40.0, 120.0]


def test_counters_that_never_ran_are_an_error() -> None:
    with pytest.raises(CounterError, match="never ran"):
        scaled_counts(_group_read([0, 0], 100, 0), 2)


def test_a_short_or_foreign_read_is_an_error() -> None:
    with pytest.raises(CounterError, match="unexpected group read"):
        scaled_counts(_group_read([1], 100, 100), 2)
    with pytest.raises(CounterError, match="unexpected group read"):
        scaled_counts(b"\0" * 12, 2)


def test_unknown_architecture_is_refused_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(perf_event.platform, "machine", lambda: "sparc64")
    with pytest.raises(CounterError, match=r"not available on .*sparc64"):
        open_counters()


def test_an_empty_group_is_a_bug() -> None:
    with pytest.raises(ValueError, match="at least one event"):
        PerfGroup(())


def test_real_syscall_with_software_events() -> None:
    """The same syscall, ioctls and group read as the cycle counter, on events every Linux
    kernel counts (so this runs in VMs without a PMU)."""
    try:
        group = PerfGroup((TASK_CLOCK, CONTEXT_SWITCHES))
    except CounterError as e:
        pytest.skip(f"perf_event_open unavailable: {e}")
    with group:
        group.start()
        _busy(2_000_000)
        busy_ns, switches = group.stop_counts()
        group.start()
        idle_ns, _ = group.stop_counts()
    assert busy_ns > 0 and switches >= 0
    assert idle_ns < busy_ns  # start() resets the group


def test_real_cycle_and_instruction_counts() -> None:
    try:
        counters = open_counters()
    except CounterError as e:
        pytest.skip(f"hardware counters unsupported on this machine: {e}")
    with counters:
        counters.start()
        _busy(100_000)
        small = counters.stop()
        counters.start()
        _busy(1_000_000)
        large = counters.stop()
    assert small.cycles > 0 and small.instructions > 0
    assert large.instructions > small.instructions


class _FakeGroupKernel:
    """The kernel's side of a counter group as Linux behaves (checked with software events
    by the tests below): RESET zeroes the counts but not the times, which add up over every
    enabled interval. Interval k (ENABLE to DISABLE) adds `intervals[k]`: (time enabled,
    time running, counts)."""

    def __init__(self, intervals: list[tuple[int, int, list[int]]]):
        self.intervals = list(intervals)
        self.enabled = self.running = 0
        self.values = [0] * len(intervals[0][2])

    def ioctl(self, fd: int, request: int, arg: int) -> int:
        assert arg == perf_event.PERF_IOC_FLAG_GROUP
        if request == perf_event.PERF_IOC_RESET:
            self.values = [0] * len(self.values)
        elif request == perf_event.PERF_IOC_DISABLE:
            enabled, running, counts = self.intervals.pop(0)
            self.enabled, self.running = self.enabled + enabled, self.running + running
            self.values = [v + c for v, c in zip(self.values, counts, strict=True)]
        return 0

    def read(self, fd: int, size: int) -> bytes:
        return _group_read(self.values, self.enabled, self.running)[:size]


def _fake_group(monkeypatch: pytest.MonkeyPatch, kernel: _FakeGroupKernel) -> PerfGroup:
    fds = iter(range(1000, 1010))
    monkeypatch.setattr(perf_event, "_open_event", lambda event, group_fd: next(fds))
    monkeypatch.setattr(perf_event, "fcntl", types.SimpleNamespace(ioctl=kernel.ioctl))
    fake_os = types.SimpleNamespace(read=kernel.read, close=lambda fd: None, getpid=os.getpid)
    monkeypatch.setattr(perf_event, "os", fake_os)
    return PerfGroup((TASK_CLOCK, CONTEXT_SWITCHES))


def test_multiplexing_is_corrected_per_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second interval ran a quarter of its time: its counts x 4. The times the kernel
    reports cover both intervals (500 enabled, 200 running), which made it x 2.5."""
    kernel = _FakeGroupKernel([(100, 100, [10, 20]), (400, 100, [10, 30])])
    with _fake_group(monkeypatch, kernel) as group:
        group.start()
        assert group.stop_counts() == [10.0, 20.0]
        group.start()
        assert group.stop_counts() == [40.0, 120.0]


def test_an_interval_that_never_ran_is_an_error_after_one_that_did(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Counts of 0 scaled by the earlier interval's times were returned as a reading."""
    kernel = _FakeGroupKernel([(100, 100, [10, 20]), (300, 0, [0, 0])])
    with _fake_group(monkeypatch, kernel) as group:
        group.start()
        group.stop_counts()
        group.start()
        with pytest.raises(CounterError, match="never ran"):
            group.stop_counts()


def test_scaled_counts_take_the_times_since_the_interval_began() -> None:
    raw = _group_read([10, 30], 500, 200)
    assert scaled_counts(raw, 2, since=(100, 100)) == [40.0, 120.0]


CPU_CLOCK = perf_event.Event("cpu-clock", perf_event.PERF_TYPE_SOFTWARE, 0)  # ns


def _software_group(*events: perf_event.Event) -> PerfGroup:
    try:
        return PerfGroup(events or (TASK_CLOCK, CONTEXT_SWITCHES))
    except CounterError as e:
        pytest.skip(f"the kernel refuses even software events: {e}")


def test_real_group_read_matches_the_threads_cpu_time() -> None:
    """The attr layout and the group read against the kernel: task-clock (the leader) and
    cpu-clock (a member, enabled with it by the group ioctl) both count this thread's CPU
    time over the interval, in nanoseconds."""
    with _software_group(TASK_CLOCK, CPU_CLOCK) as group:
        before = time.thread_time_ns()
        group.start()
        _busy(2_000_000)
        counts = group.stop_counts()
        spent = time.thread_time_ns() - before
    # The clocks are kept apart by the scheduler (task-clock came out 0.1 ms over).
    assert all(0.8 * spent <= ns <= 1.2 * spent for ns in counts), (counts, spent)


def test_real_counters_are_not_inherited_by_programs_run() -> None:
    with _software_group() as group:
        fds = list(group._fds)
        assert fds and not any(os.get_inheritable(fd) for fd in fds)


def _two_cpus() -> tuple[int, int]:
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("no CPU affinity on this platform")
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("one CPU: a counter cannot be kept from running")
    return cpus[0], cpus[1]


def test_real_interval_that_never_ran_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Real kernel times of a group that stops being scheduled: counters of this thread on
    CPU b only, the thread moved to CPU a. The second interval was enabled for as long as
    it ran `_busy` and running for none of it; its counts of 0 were returned as a reading."""
    a, b = _two_cpus()
    libc = perf_event._libc()

    class OnCpuB:  # perf_event_open(attr, pid, cpu, group_fd, flags) with cpu b
        @staticmethod
        def syscall(number: object, attr: object, pid: object, cpu: object, *rest: object) -> int:
            return int(libc.syscall(number, attr, pid, ctypes.c_int(b), *rest))

    monkeypatch.setattr(perf_event, "_libc", lambda: OnCpuB)
    allowed = os.sched_getaffinity(0)
    try:
        with _software_group() as group:
            os.sched_setaffinity(0, {b})
            group.start()
            _busy(200_000)
            assert group.stop_counts()[0] > 0
            os.sched_setaffinity(0, {a})
            group.start()
            _busy(200_000)
            with pytest.raises(CounterError, match="never ran"):
                group.stop_counts()
    finally:
        os.sched_setaffinity(0, allowed)


def test_real_counters_refuse_another_thread() -> None:
    """They count the thread that opened them: started and stopped in another, they gave
    0.1 ms of task-clock for its 66 ms of work."""
    failures: list[CounterError] = []

    def elsewhere(group: PerfGroup) -> None:
        try:
            group.start()
        except CounterError as e:
            failures.append(e)

    with _software_group() as group:
        worker = threading.Thread(target=elsewhere, args=(group,))
        worker.start()
        worker.join()
        group.start()  # still fine in the thread that opened them
        assert group.stop_counts()[0] > 0
    assert len(failures) == 1 and "another thread" in str(failures[0])


def _exit_refused(group: PerfGroup) -> None:
    """End this forked child: status 0 if stopping `group` was refused, else 1."""
    code = 1
    try:
        group.stop_counts()
    except CounterError:
        code = 0
    finally:
        os._exit(code)


def test_real_counters_refuse_a_forked_child() -> None:
    """A child of os.fork read its parent's counts as its own."""
    with _software_group() as group:
        group.start()
        with warnings.catch_warnings():
            # Python ≥ 3.12 warns of forking with threads; the child only makes syscalls.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the child: exit status 0 only if its stop was refused
            _exit_refused(group)
        _, status = os.waitpid(pid, 0)
        assert group.stop_counts()[0] > 0
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_failed_group_closes_what_it_opened() -> None:
    """The second event is refused (no such software event): the leader is closed again."""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd to list this process's descriptors")
    before = set(os.listdir("/proc/self/fd"))
    bogus = perf_event.Event("bogus", perf_event.PERF_TYPE_SOFTWARE, 1 << 30)
    try:
        PerfGroup((TASK_CLOCK, bogus)).close()
    except CounterError as e:
        assert "bogus" in str(e) or "task-clock" in str(e)
    else:
        pytest.fail("the kernel took a software event it does not have")
    assert set(os.listdir("/proc/self/fd")) == before
