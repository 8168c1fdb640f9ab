"""Buffer sizes are slot counts: a huge one is refused by name (Python) and reserves no
memory (Rust). `--buffer 1000000000000` once aborted the process (exit 134) reserving 16 TB;
a host split with more switched-off engines than SSDs panicked in the Rust pipeline."""

from __future__ import annotations

import json
from importlib import import_module
from typing import Any

import pytest

from ndpkit.errors import SpecError
from ndpkit.sim import SimOptions
from ndpkit.sim.options import MAX_BUFFER_CHUNKS

_core: Any = import_module("ndpkit._core")


@pytest.mark.parametrize("name", ["buffer_chunks", "host_buffer_chunks"])
def test_buffers_past_the_bound_are_refused(name: str) -> None:
    assert getattr(SimOptions(**{name: MAX_BUFFER_CHUNKS}), name) == MAX_BUFFER_CHUNKS
    with pytest.raises(SpecError, match=f"at most {MAX_BUFFER_CHUNKS}") as e:
        SimOptions(**{name: MAX_BUFFER_CHUNKS + 1})
    assert e.value.field == name


def test_the_cli_blames_the_buffer_flag(ndpkit) -> None:
    args = ("simulate", "-p", "rfns", "-a", "knn8", "--size", "1 GiB", "--buffer")
    result = ndpkit(*args, "1000000000000")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("error: ")
    assert "--buffer: must be at most 1048576 (2^20) chunks" in result.stderr


def _spec(**changes: Any) -> dict[str, Any]:
    engine = {"active": False, "bps": 1e9, "alpha": 1.0}
    spec = {
        "chunk_bytes": 1e6,
        "ssds": [{"bytes": 1e7, "read_bps": 1e9, "engine": None}],
        "engines": [engine, engine, engine],
        "uplink": {"bps": 1e9},
        "host": {"cores": 2, "bps": 1e9},
    }
    return {**spec, **changes}


def test_the_rust_pipeline_reserves_nothing_for_a_huge_engine_buffer() -> None:
    engine = {"active": True, "bps": 1e9, "alpha": 1.0}
    spec = _spec(
        ssds=[{"bytes": 1e7, "read_bps": 1e9, "engine": 0}],
        engines=[engine],
        engine_buffer_chunks=10**12,
    )
    result, _ = _core.simulate_pipeline(json.dumps(spec))
    assert json.loads(result)["chunks"] == 10


@pytest.mark.parametrize("power_off", ["end", "phase", "done"])
def test_a_host_split_with_more_engines_than_ssds_runs(power_off: str) -> None:
    result, _ = _core.simulate_pipeline(json.dumps(_spec(engine_power_off=power_off)))
    r = json.loads(result)
    assert r["chunks"] == 10
    assert [e["active"] for e in r["engines"]] == [False, False, False]
    # 1 MB chunks read at 1 GB/s (one per ms), carried up at 1 GB/s (1 ms each, behind
    # the reads), then 2 ms on one of the 2 cores sharing 1 GB/s: the last chunk lands at
    # 11 ms and is done at 13 ms.
    assert r["makespan_s"] == pytest.approx(0.013, rel=1e-9)
