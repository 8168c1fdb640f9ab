"""SimOptions refuses, by field, a value of the wrong kind or out of range when it is made:
an infinite chunk reached the Rust spec parser ("spec: expected value at line 1 column 17"),
data_bytes=0 the model's division (ZeroDivisionError), 1.5 buffer slots serde's "expected
usize", and timeline_bins=2**40 aborted the process reserving 8 TiB."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from ndpkit.errors import SpecError
from ndpkit.hw import load_platform
from ndpkit.profile import load_profile
from ndpkit.sim import SimOptions, simulate
from ndpkit.sim.options import MAX_TIMELINE_BINS
from ndpkit.sim.simulation import TooManyChunksError

BAD = [
    ("chunk_bytes", math.inf),
    ("chunk_bytes", "1 MiB"),
    ("chunk_bytes", True),
    ("chunk_bytes", 10**400),
    ("data_bytes", 0),
    ("data_bytes", 0.0),
    ("data_bytes", -1.0),
    ("data_bytes", math.inf),
    ("data_bytes", math.nan),
    ("data_bytes", "1 GiB"),
    ("buffer_chunks", 1.5),
    ("buffer_chunks", True),
    ("buffer_chunks", "2"),
    ("host_buffer_chunks", 2.0),
    ("seed", 1.5),
    ("seed", True),
    ("timeline_bins", 2.5),
    ("timeline_bins", MAX_TIMELINE_BINS + 1),
    ("timeline_bins", 2**40),
    ("trace_limit", 0.5),
    ("trace_limit", 2**64),
    ("trace", "no"),
    ("service_cv", "0.1"),
    ("service_cv", True),
]


@pytest.mark.parametrize(("name", "value"), BAD, ids=[f"{n}={v!r}"[:40] for n, v in BAD])
def test_a_bad_option_is_refused_by_name_when_made(name: str, value: Any) -> None:
    with pytest.raises(SpecError) as e:
        SimOptions(**{name: value})
    assert e.value.field == name
    assert e.value.source == "simulator options"


def test_the_bounds_themselves_are_accepted() -> None:
    sim = SimOptions(timeline_bins=MAX_TIMELINE_BINS, trace_limit=2**64 - 1, seed=2**64 - 1)
    assert sim.timeline_bins == MAX_TIMELINE_BINS


def test_a_data_set_of_a_fraction_of_a_chunk_still_runs() -> None:
    """Not a bound on size: one byte over 36 SSDs runs, one small chunk per SSD."""
    s = simulate(load_platform("rans"), load_profile("he"), sim=SimOptions(data_bytes=1))
    assert s.chunks == 36
    assert s.time_s >= s.model.time_s > 0


def test_numpy_numbers_are_taken_as_python_ones() -> None:
    """A chunk size from np.arange (np.int64), a cv from a float32 array, a seed as
    np.uint64, np.bool_ for the trace: each was "Object of type int64 is not JSON
    serializable" when the spec went to the simulator (or refused as no bool)."""
    rans, he = load_platform("rans"), load_profile("he")
    given = SimOptions(
        chunk_bytes=np.int64(2**22),
        buffer_chunks=np.int64(3),
        seed=np.uint64(7),
        service_cv=np.float32(0.25),
        data_bytes=np.int64(2**30),
        trace=np.bool_(True),
    )
    plain = SimOptions(
        chunk_bytes=2**22,
        buffer_chunks=3,
        seed=7,
        service_cv=float(np.float32(0.25)),
        data_bytes=2**30,
        trace=True,
    )
    assert given == plain
    assert all(type(getattr(given, k)) is type(getattr(plain, k)) for k in plain.as_dict())
    a, b = simulate(rans, he, sim=given), simulate(rans, he, sim=plain)
    assert (a.time_s, a.trace_json) == (b.time_s, b.trace_json)


def test_a_negative_zero_cv_is_no_jitter_said_as_zero() -> None:
    """`--cv -0` passed the range check and a sweep's rows said service_cv -0.0."""
    cv = SimOptions(service_cv=-0.0).service_cv
    assert cv == 0 and math.copysign(1.0, cv) == 1.0


@pytest.mark.parametrize("chunk_bytes", [1e-300, 5e-324, 1e-290])
def test_a_chunk_too_small_to_count_its_chunks_is_refused_as_too_many(chunk_bytes: float) -> None:
    """A chunk of 1e-300 B is a finite number > 0, so SimOptions takes it; the chunk count
    check then raised OverflowError (a count past a float, or a share over the chunk that
    is infinite), not the TooManyChunksError that the command line turns into its one line."""
    with pytest.raises(TooManyChunksError, match=r"chunks of .* is more than 100,000,000"):
        simulate(load_platform("rans"), load_profile("he"), sim=SimOptions(chunk_bytes=chunk_bytes))
