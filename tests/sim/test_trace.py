"""The Chrome trace: one labelled track per unit with no overlapping spans, and a trace cut
short by its span limit says so (issue 5 audit, findings 3 and 4)."""

from __future__ import annotations

import json
from collections import defaultdict
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from ndpkit.hw import load_platform
from ndpkit.model import FULL_GEAR, HOST_ONLY, Configuration
from ndpkit.profile import Profile, load_profile
from ndpkit.sim import SimOptions, Simulation, simulate

from .synthetic import APP, write_platform

MIB = 2**20
STORAGE, ENGINES, UPLINK, HOST = 1, 2, 3, 4


def overlaps(trace: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Pairs of complete events on one (pid, tid) track that overlap in time."""
    tracks: dict[tuple[int, int], list[tuple[float, float, str]]] = defaultdict(list)
    for e in trace["traceEvents"]:
        if e["ph"] == "X":
            tracks[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], e["name"]))
    found = []
    for track, spans in tracks.items():
        spans.sort()
        for a, b in pairwise(spans):
            if b[0] < a[1] - 1e-9 * max(1.0, a[1]):
                found.append((track, a, b))
    return found


def labels(trace: dict[str, Any]) -> dict[tuple[int, int], str]:
    return {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in trace["traceEvents"]
        if e["ph"] == "M" and e["name"] == "thread_name"
    }


def traced(
    platform: str, app: str, config: Configuration, data_bytes: float = 256 * MIB, **sim: Any
) -> Simulation:
    options = SimOptions(trace=True, data_bytes=data_bytes, **sim)
    return simulate(load_platform(platform), load_profile(app), config, sim=options)


@pytest.mark.parametrize(
    ("platform", "app", "config", "sim"),
    [
        ("cns", "knn8", FULL_GEAR, {}),  # 36 host cores behind the link, raw data
        ("rfns", "knn8", FULL_GEAR, {"host_mode": "stream"}),  # top-k per partial
        ("rfns", "knn8", FULL_GEAR, {}),  # top-k after every partial
        ("rans", "he", HOST_ONLY, {}),
    ],
    ids=["cns-knn8", "rfns-knn8-stream", "rfns-knn8-after", "rans-he-host"],
)
def test_no_two_spans_on_one_track_overlap(
    platform: str, app: str, config: Configuration, sim: dict[str, Any]
) -> None:
    """2 GiB: enough for a host core to take an SSD's chunk while another core still runs
    that SSD's previous one (filed under the SSD, 432 pairs of spans overlapped)."""
    s = traced(platform, app, config, 2 * 2**30, **sim)
    assert s.trace_json is not None
    trace = json.loads(s.trace_json)
    assert overlaps(trace) == []
    named = labels(trace)
    used = {(e["pid"], e["tid"]) for e in trace["traceEvents"] if e["ph"] == "X"}
    assert used <= set(named), used - set(named)  # every track in use is labelled
    host = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["name"] == "host part"]
    cores = load_platform(platform).host.cores
    assert host and {e["tid"] for e in host} <= set(range(cores))
    assert named[(HOST, 0)] == "host core 0" and named[(STORAGE, 35)] == "SSD 35"
    assert s.trace_dropped_events == 0


def test_host_part_spans_land_on_the_core_that_ran_them(tmp_path: Path) -> None:
    """One SSD at 4 GB/s streams 8 chunks of 1 MB straight to a host of 2 cores whose host
    part runs at 1 GB/s over both (2 ms a chunk on one core). Chunks land every 0.25 ms, so
    the two cores alternate: core 0 runs chunks 0, 2, 4, 6, core 1 chunks 1, 3, 5, 7, each
    2 ms, queued behind the one before it on that core."""
    platform = write_platform(tmp_path, devices=1, ssd="4 GB/s", uplink="1000 GB/s", cores=2)
    prof = Profile(app=APP, data_size="8 MB", alpha=1, host_only="1 GB/s")
    s = simulate(platform, prof, HOST_ONLY, sim=SimOptions(chunk_bytes=1e6, trace=True))
    assert s.trace_json is not None
    trace = json.loads(s.trace_json)
    host = sorted((e["ts"], e["tid"]) for e in trace["traceEvents"] if e.get("name") == "host part")
    assert [tid for _, tid in host] == [0, 1] * 4
    assert overlaps(trace) == []
    assert labels(trace)[(UPLINK, 0)] == "SSD 0 DMA"


def test_a_trace_cut_short_by_its_limit_says_so() -> None:
    s = traced("rfns", "knn8", FULL_GEAR, trace_limit=500)
    assert s.trace_json is not None
    trace = json.loads(s.trace_json)
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(spans) == 500
    # 288 chunks read, computed and sent, and 36 host cores: 900 spans.
    assert s.trace_dropped_events == 3 * 288 + 36 - 500
    assert trace["otherData"] == {"dropped_events": s.trace_dropped_events, "event_limit": 500}
    assert s.as_dict()["trace_dropped_events"] == s.trace_dropped_events
    note = next(n for n in s.notes if n.startswith("trace:"))
    assert "400 spans past the limit of 500" in note
    assert "later part of the run is missing" in note and "--chunk" in note
    whole = traced("rfns", "knn8", FULL_GEAR)
    assert whole.trace_dropped_events == 0
    assert not [n for n in whole.notes if n.startswith("trace:")]
