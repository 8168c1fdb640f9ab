"""The perf_event_open wrapper: group reads decoded and scaled, failures reported, and real
counters where this machine has them (skipped with the reason where it does not)."""

from __future__ import annotations

import struct

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
