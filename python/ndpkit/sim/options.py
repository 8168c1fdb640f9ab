"""How a simulation runs: chunking, buffers, the host part's timing and engine power policy.

These are the simulator's own settings; the model conventions (energy form, placement,
port cap, …) stay in `ndpkit.model.Options` and mean the same thing to both.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Literal, get_args

from ndpkit.errors import SpecError, finite_number, true_or_false, whole_number

if TYPE_CHECKING:
    from ndpkit.profile import Profile

HostMode = Literal["auto", "stream", "after"]
EnginePowerOff = Literal["auto", "end", "phase", "done"]

MIB = 2**20
MAX_BUFFER_CHUNKS = 2**20
"""The most staging slots a buffer may have: far more than a run fills (a slot per
chunk of a 1 TiB run of 1 MiB chunks), and a bound on what a typo can ask for."""
_SOURCE = "simulator options"
MAX_TIMELINE_BINS = 2**24
"""The most timeline bins: the simulator reserves 8 bytes a bin before it starts, so 2^40
of them aborted the process (an 8 TiB allocation); 2^24 is 128 MiB, and far more bins than
a timeline can show."""
MAX_SERVICE_CV = 1 / math.sqrt(3)
"""The largest jitter: a service time is t x (1 + cv x sqrt(3) x U[-1, 1]), which would be
negative for a larger cv (crates/ndp-sim/src/spec.rs has the same bound)."""


@dataclass(frozen=True)
class SimOptions:
    """Simulator settings. The defaults reproduce the analytic model's assumptions."""

    chunk_bytes: float = MIB
    """Data moves in chunks of this many bytes (the last chunk of a shard may be smaller)."""
    buffer_chunks: int = 2
    """Staging slots on each side of an engine (input, output): 2 = double buffering."""
    host_buffer_chunks: int = 1024
    """Host DRAM slots for partials waiting for a core (streaming host part)."""
    host_mode: HostMode = "auto"
    """stream: the host part works on each partial as it lands; after: it waits for all of
    them (k-NN's global top-k, the paper's T_NDP + T_CPU); auto: after when the host part
    of a device split has work, else stream (a host split streams raw data through the
    whole kernel, as CNS does). A host split whose host-only rate is the papers' (a run
    reading its data, `host_only_in_memory = false`) streams even when after is asked for:
    that rate holds the transfer already."""
    engine_power_off: EnginePowerOff = "auto"
    """end: engines stay on to the end of the run; phase: all switch off when the last
    partial lands (the paper charges them for T_NDP); done: each switches off as soon as
    its own work is delivered (beyond the paper); auto: phase with host_mode after, else end."""
    service_cv: float = 0.0
    """Coefficient of variation of SSD read and engine compute times (uniform jitter),
    0 to 1/sqrt(3) (`MAX_SERVICE_CV`)."""
    seed: int = 0
    trace: bool = False
    """Record a Chrome trace-event timeline (memory grows with the events recorded)."""
    trace_limit: int = 1_000_000
    timeline_bins: int = 200
    data_bytes: float | None = None
    """The data set size D; None = the profile's. The run reads it the profile's `passes`
    times (`streamed_bytes`)."""

    def streamed_bytes(self, profile: Profile) -> float:
        """The bytes the run streams: the profile's (D x its passes), or `data_bytes` read
        `profile.passes` times. (A K-Means profile from `ndpkit evaluate` read 69 times at
        --size D was simulated for one pass.)"""
        if self.data_bytes is None:
            return profile.data_bytes
        return self.data_bytes * profile.passes

    def __post_init__(self) -> None:
        # Kinds first: inf or "1 MiB" reached the Rust spec parser ("expected value at line 1
        # column 17"), 1.5 slots its "expected usize", data_bytes=0 the model's division.
        _number(self.chunk_bytes, "chunk_bytes", "a finite number of bytes > 0")
        if self.data_bytes is not None:
            _number(self.data_bytes, "data_bytes", "a finite number of bytes > 0, or None")
        for name in ("buffer_chunks", "host_buffer_chunks", "timeline_bins", "trace_limit", "seed"):
            _whole(getattr(self, name), name)
        for name in ("buffer_chunks", "host_buffer_chunks"):
            slots = getattr(self, name)
            _check(slots >= 1, name, "must be at least 1")
            _check(
                slots <= MAX_BUFFER_CHUNKS,
                name,
                f"must be at most {MAX_BUFFER_CHUNKS} (2^20) chunks, got {slots}",
            )
        _check(
            isinstance(self.service_cv, numbers.Real) and not isinstance(self.service_cv, bool),
            "service_cv",
            f"must be a number, got {self.service_cv!r}",
        )
        _check(
            0 <= self.service_cv <= MAX_SERVICE_CV,
            "service_cv",
            f"must be in [0, 1/sqrt(3) = {MAX_SERVICE_CV:.4f}] (uniform jitter: a larger one "
            f"would make some times negative), got {self.service_cv}",
        )
        if self.service_cv == 0:  # -0.0 (`--cv -0`) is no jitter: a sweep's file said "-0.0"
            object.__setattr__(self, "service_cv", 0.0)
        # numpy's bool too
        object.__setattr__(self, "trace", true_or_false(self.trace, "trace", source=_SOURCE))
        _check(self.timeline_bins >= 2, "timeline_bins", "must be at least 2")
        _check(
            self.timeline_bins <= MAX_TIMELINE_BINS,
            "timeline_bins",
            f"must be at most {MAX_TIMELINE_BINS} (2^24), got {self.timeline_bins}",
        )
        _check(1 <= self.trace_limit < 2**64, "trace_limit", "must be in [1, 2^64)")
        _check(0 <= self.seed < 2**64, "seed", "must be in [0, 2^64)")
        for name, kind in (("host_mode", HostMode), ("engine_power_off", EnginePowerOff)):
            allowed = get_args(kind)
            value = getattr(self, name)
            _check(value in allowed, name, f"must be one of {', '.join(allowed)}, got {value!r}")
        # numpy's numbers as Python's (np.int64 chunk sizes from np.arange were "Object of
        # type int64 is not JSON serializable" when the spec went to the simulator).
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, numbers.Real) and not isinstance(value, bool | int | float):
                plain = int(value) if isinstance(value, numbers.Integral) else float(value)
                object.__setattr__(self, f.name, plain)

    def with_(self, **changes: Any) -> SimOptions:
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def resolved(self, host_part_waits: bool) -> tuple[str, str]:
        """(host_mode, engine_power_off) with `auto` decided; `host_part_waits`: a device
        split whose host part has work."""
        host = self.host_mode
        if host == "auto":
            host = "after" if host_part_waits else "stream"
        power = self.engine_power_off
        if power == "auto":
            power = "phase" if host == "after" else "end"
        return host, power


def _check(ok: bool, field: str, message: str) -> None:
    if not ok:
        raise SpecError(message, source=_SOURCE, field=field)


def _number(value: object, field: str, expected: str) -> None:
    """A finite real number > 0 (not a bool or a string), else a SpecError naming `field`."""
    finite_number(value, field, expected, above=0, source=_SOURCE)


def _whole(value: object, field: str) -> None:
    """An integer (not a bool or a float), else a SpecError naming `field`; the range is
    each field's own check."""
    whole_number(value, field, "an integer", source=_SOURCE)
