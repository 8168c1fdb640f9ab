"""The CPUs this process may run on: its affinity mask where the system has one (taskset,
a container's cpuset), else every CPU the system reports."""

from __future__ import annotations

import os


def usable_cpus() -> int:
    """At least 1. A CPU quota (a cgroup's cpu.max) is not counted: callers that hold memory
    per thread cap their own count."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)
