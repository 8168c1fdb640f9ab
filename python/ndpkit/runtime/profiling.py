"""Profiling: measure a kernel on this machine and turn the measurement into a `Profile`.

The papers measured each application on one real engine and extrapolated. ndpkit measures
the device part and the host part on one core of this host, what a device sends (its
partials merged) for the whole sample and for part of it, and the whole kernel run on the
host, then maps the host measurement onto target engines with an explicit scaling model
(`EngineScaling`: the target engine's clock and cores where its platform file gives them).
A platform's own per-engine throughput table always wins over the scaling rule, because
`ndpkit.model` looks there first. The reduction ratio α = device input / device output is
that of the run modelled: D spread over the target's engines (`Measurement.alpha_for`).

An iterative kernel (K-Means) reads its data once per pass: the measurement counts the bytes
of every pass, and `to_profile` models D x passes bytes, so the predicted time, energy and
cycles cover the whole run (the models then see the data streamed that many times).

Cycles per byte (CPB, the whole kernel: device part then host part) come from the CPU's
cycle counter where Linux lets this process read it (`perf_event_open`, see
`ndpkit.runtime.perf_event`): CPB = counted cycles / input bytes, `cpb_source` "perf". Where
it does not (no virtual PMU in a VM, paranoid level 3, not Linux), a read fails part-way, or
a part counted no cycles, they come from the clock: CPB = f × seconds / input bytes with f
this host's documented frequency (the `frequency_hz` argument, else its nominal clock,
`host_clock`), `cpb_source` "clock". The measurement records the source and the frequency
used (for perf, the effective one: counted cycles / seconds), and with perf the instruction
counts too.
"""

from __future__ import annotations

import contextlib
import json
import math
import numbers
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

from ndpkit.cpus import usable_cpus
from ndpkit.errors import (
    SpecError,
    as_path,
    closest,
    finite_number,
    function_or_none,
    true_or_false,
    whole_number,
)
from ndpkit.files import read_spec_file, write_atomic
from ndpkit.hw import Host
from ndpkit.hw.engine import Engine, EngineKind
from ndpkit.hw.loader import json_loads, parse_nested
from ndpkit.kernels.base import (
    Kernel,
    check_kernel,
    check_params,
    chunk_partials,
    records_array,
)
from ndpkit.profile import Profile, TableKind, table_kind
from ndpkit.runtime.dataset import refuse_a_file_inside_a_data_set
from ndpkit.runtime.perf_event import CounterError, Counters, open_counters

__all__ = [
    "DEFAULT_FREQUENCY_HZ",
    "NO_CLOCK_NOTE",
    "EngineScaling",
    "Measurement",
    "host_clock",
    "load",
    "measure",
    "save",
    "to_profile",
]

CounterFactory = Callable[[], Counters]
"""Opens the counters for one `measure` call, or raises `CounterError`."""
ByteProgress = Callable[[int, int], None]
"""progress(bytes_done, bytes_total): the total grows while an iterative kernel's first run
finds out how many passes it takes."""


@dataclass(frozen=True)
class EngineScaling:
    """How a single host core's rate maps onto one engine of each kind.

    arm, cpu: rate(host core) x (f_engine / f_host) x per_clock_ratio x cores;
    fpga:     rate(host core) x fpga_speedup x (f_engine / fpga_frequency_hz).

    f_engine and cores are the target engine's `frequency` and `cores` where its platform
    file sets them (`follow_platform`), else the defaults here: an ARM engine is a
    quad-core Cortex-A53 at 1.2 GHz, a CPU engine one core at this host's clock, and an
    FPGA kernel partition does the work of `fpga_speedup` host cores when clocked at
    `fpga_frequency_hz` (a design's rate is its bytes per cycle times its clock, RISP
    Eq. 6, so another clock scales it; an FPGA's `cores` are not used: its parallelism is
    in the design). The per-clock ratios and the speedup are documented assumptions, not
    measurements: an in-order Cortex-A53 does about a third of a Xeon core's work per clock
    on streaming kernels. Override any of them, or give the platform an `engines.throughput`
    entry, which wins.
    """

    arm_frequency_hz: float = 1.2e9
    arm_per_clock_ratio: float = 0.35
    arm_cores: int = 4
    fpga_speedup: float = 8.0
    fpga_frequency_hz: float = 250e6
    cpu_per_clock_ratio: float = 1.0
    follow_platform: bool = True
    """Take f_engine and cores from the target engine's platform file where it sets them."""

    def __post_init__(self) -> None:
        for name in (
            "arm_frequency_hz",
            "arm_per_clock_ratio",
            "fpga_speedup",
            "fpga_frequency_hz",
            "cpu_per_clock_ratio",
        ):
            _positive(getattr(self, name), name)
        if isinstance(self.arm_cores, bool) or not isinstance(self.arm_cores, numbers.Integral):
            raise SpecError(f"must be a whole number, got {self.arm_cores!r}", field="arm_cores")
        _positive(self.arm_cores, "arm_cores")
        # Strict: "no" (or any other truthy value) followed the platform. numpy's bool (a
        # value read from an array) is a bool, kept as Python's.
        follow = true_or_false(self.follow_platform, "follow_platform")
        object.__setattr__(self, "follow_platform", follow)

    def rates(
        self,
        host_core_bytes_per_s: float,
        host_frequency_hz: float,
        engine: Engine | None = None,
    ) -> dict[str, float]:
        """One engine's rate by kind; `engine`'s kind from its own frequency and cores."""
        shape = _engine_shape(engine) if self.follow_platform else {}
        return {
            kind: self.rate(
                kind,
                host_core_bytes_per_s,
                host_frequency_hz,
                **(shape if engine is not None and engine.kind == kind else {}),
            )
            for kind in get_args(EngineKind)
        }

    def rate(
        self,
        kind: str,
        host_core_bytes_per_s: float,
        host_frequency_hz: float,
        *,
        frequency_hz: float | None = None,
        cores: int | None = None,
    ) -> float:
        """One engine of `kind` at `frequency_hz` with `cores` (None: the defaults). Each
        argument is checked, a SpecError naming it: a clock of 0 or 0 cores meant the
        default without a word, a negative one a negative rate, and a host clock of 0 a
        ZeroDivisionError."""
        _not_negative(host_core_bytes_per_s, "host_core_bytes_per_s")
        _positive(host_frequency_hz, "host_frequency_hz")
        if frequency_hz is not None:
            _positive(frequency_hz, "frequency_hz")
        if cores is not None:
            whole_number(cores, "cores", "a whole number of cores ≥ 1", least=1)
        per_hz = host_core_bytes_per_s / host_frequency_hz
        if kind == "arm":
            clock = frequency_hz or self.arm_frequency_hz
            return per_hz * clock * self.arm_per_clock_ratio * (cores or self.arm_cores)
        if kind == "cpu":
            clock = frequency_hz or host_frequency_hz
            return per_hz * clock * self.cpu_per_clock_ratio * (cores or 1)
        if kind == "fpga":
            clock_ratio = (frequency_hz or self.fpga_frequency_hz) / self.fpga_frequency_hz
            return host_core_bytes_per_s * self.fpga_speedup * clock_ratio
        kinds = ", ".join(get_args(EngineKind))
        raise SpecError(f"no scaling rule for engine kind {kind!r} (the kinds are {kinds})")

    def describe(self, engine: Engine, host_frequency_hz: float) -> str:
        """The rule `rates` applies to `engine`'s kind, with the clock and cores it takes
        (the engine's own where `follow_platform` and its file sets them), e.g. "arm, 4
        cores at 1.1 GHz, 0.35 of a host core's work per clock"."""
        shape = _engine_shape(engine) if self.follow_platform else {}
        clock, cores = shape.get("frequency_hz"), shape.get("cores")
        if engine.kind == "arm":
            return (
                f"arm, {cores or self.arm_cores} cores at "
                f"{(clock or self.arm_frequency_hz) / 1e9:.3g} GHz, "
                f"{self.arm_per_clock_ratio:g} of a host core's work per clock"
            )
        if engine.kind == "cpu":
            return (
                f"cpu, {cores or 1} core(s) at {(clock or host_frequency_hz) / 1e9:.3g} GHz, "
                f"{self.cpu_per_clock_ratio:g} of a host core's work per clock"
            )
        ratio = (clock or self.fpga_frequency_hz) / self.fpga_frequency_hz
        return (
            f"fpga, {self.fpga_speedup * ratio:.3g} host cores ({self.fpga_speedup:g} at "
            f"{self.fpga_frequency_hz / 1e6:g} MHz; the engine at "
            f"{(clock or self.fpga_frequency_hz) / 1e6:g} MHz)"
        )


def _engine_shape(engine: Engine | None) -> dict[str, Any]:
    """The engine's clock and cores as its platform file gives them (cores: ARM and CPU
    engines only); an unset one is None, and the scaling's own default applies. (Not
    `model_fields_set`: a platform rebuilt by `with_scheme` and the like sets every field.)"""
    if engine is None:
        return {}
    shape: dict[str, Any] = {}
    if engine.frequency_hz is not None:
        shape["frequency_hz"] = engine.frequency_hz
    if engine.cores is not None and engine.kind != "fpga":
        shape["cores"] = engine.cores
    return shape


@dataclass(frozen=True)
class Measurement:
    """What one profiling run measured (all rates over the raw input, one core). The cycle
    and instruction counts are set only when perf counters counted every part of every run.

    `input_bytes` counts every pass: an iterative kernel (K-Means) reads its data once per
    pass, so its rates and CPB are per byte streamed, and `data_bytes` is one pass's.

    `output_bytes` is what the chunks' partials add up to over every pass. A device sends
    less when it merges its partials before sending, as an engine does: K-Means sends one
    576-byte table of sums per pass however much it read, LC one score per point. So α is
    not the per-chunk ratio: `device_output_bytes` is what the sample sends as one device's
    data (its partials merged, one pass) and `part_output_bytes` the same for its first
    `part_input_bytes`; the two points give a device's output as a fixed part plus a part
    per byte read, and `alpha_for` the α of a device that reads any number of bytes."""

    app: str
    input_bytes: int
    output_bytes: int
    device_s: float
    host_s: float
    host_frequency_hz: float
    passes: int
    notes: list[str] = field(default_factory=list)
    device_cycles: float | None = None
    host_cycles: float | None = None
    device_instructions: float | None = None
    host_instructions: float | None = None
    device_output_bytes: int | None = None
    part_input_bytes: int | None = None
    part_output_bytes: int | None = None
    device_output_limit_bytes: int | None = None
    """The most a device sends per pass whatever it reads (`Kernel.output_limit_bytes`);
    None where it grows with the input."""

    def __post_init__(self) -> None:
        """`measure` makes only sensible measurements; one built by hand is checked here,
        else a negative time was read as one clock tick (an engine rate of 5.6e15 B/s) and
        a zero clock or an infinite time ended in a ZeroDivisionError."""
        whole_number(self.passes, "passes", "an integer ≥ 1", least=1)
        # Every pass reads the data, at least a byte of it.
        expected = f"an integer ≥ passes ({self.passes})"
        whole_number(self.input_bytes, "input_bytes", expected, least=self.passes)
        whole_number(self.output_bytes, "output_bytes", "an integer ≥ 0", least=0)
        for name in (
            "device_output_bytes",
            "part_input_bytes",
            "part_output_bytes",
            "device_output_limit_bytes",
        ):
            value = getattr(self, name)
            if value is not None:
                whole_number(value, name, "an integer ≥ 0", least=0)
        if self.part_input_bytes is not None and self.part_input_bytes >= self.data_bytes:
            # The part is the sample's first half of chunks: at or past the whole, the two
            # points gave a device's output a negative fixed part (α 1.6e-05 for LC).
            raise SpecError(
                f"must be less than the data profiled ({self.data_bytes} bytes: input_bytes "
                f"over passes), got {self.part_input_bytes}",
                field="part_input_bytes",
            )
        # The times are measured, never None: a null in a saved file ended in "'>' not
        # supported between instances of 'float' and 'NoneType'" (`profiling.load`).
        _not_negative(self.device_s, "device_s")
        _not_negative(self.host_s, "host_s")
        for name in ("device_cycles", "host_cycles", "device_instructions", "host_instructions"):
            value = getattr(self, name)
            if value is not None:
                _not_negative(value, name)
        _positive(self.host_frequency_hz, "host_frequency_hz")
        if self.device_cycles is not None and self.host_cycles is not None:
            _positive(self.device_cycles + self.host_cycles, "device_cycles + host_cycles")

    @property
    def data_bytes(self) -> int:
        """The data profiled: what one pass reads."""
        return self.input_bytes // max(self.passes, 1)

    @property
    def alpha(self) -> float:
        """α of the profiled sample as one device's data: bytes read / bytes sent."""
        return self.alpha_for(self.data_bytes)

    def device_sends_bytes(self, device_bytes: float) -> float:
        """What one device sends per pass after reading `device_bytes` and merging its
        partials: fixed + per byte, through the two measured points (without them, the
        chunks' output in proportion), at most `device_output_limit_bytes`."""
        _not_negative(device_bytes, "device_bytes")  # "1e6" was a TypeError from numpy
        whole, part = self.device_output_bytes, self.part_output_bytes
        if whole is None:
            sends = device_bytes * self.output_bytes / max(self.input_bytes, 1)
        elif part is None or self.part_input_bytes is None:
            sends = whole / max(self.data_bytes, 1) * device_bytes
        else:
            spread = max(self.data_bytes - self.part_input_bytes, 1)
            per_byte = max(whole - part, 0) / spread
            fixed = max(whole - per_byte * self.data_bytes, 0.0)
            sends = fixed + per_byte * device_bytes
        # A sample of fewer points than k sent all of them, twice as many from twice the
        # input: the line through its two points took a device's top-k to grow for ever
        # (α 0.667 for knn2-topk at the paper's D, where a device sends 120 bytes).
        limit = self.device_output_limit_bytes
        return sends if limit is None else min(sends, float(limit))

    def alpha_for(self, device_bytes: float) -> float:
        """α = bytes read / bytes sent for a device that reads `device_bytes` per pass. What
        a device sends may be under a byte on average (LC's 4 bytes per 32 read, over less
        than a record per device): flooring it at one byte made LC's α 0.03 for a 1-byte
        model size, and a link bottleneck with it. Only a device that sends nothing is taken
        to send one byte, so that α stays finite."""
        # 0 gave α 0, and -5 an α of -5: a device reads something.
        _positive(device_bytes, "device_bytes")
        sends = self.device_sends_bytes(device_bytes)
        return device_bytes / sends if sends > 0 else device_bytes

    @property
    def device_bytes_per_s(self) -> float:
        # A part faster than the clock can tell (0 s) read as at most one tick's worth.
        return self.input_bytes / max(self.device_s, _TICK_S)

    @property
    def host_part_bytes_per_s(self) -> float:
        return self.input_bytes / self.host_s if self.host_s > 0 else float("inf")

    @property
    def host_only_bytes_per_s(self) -> float:
        """The whole kernel on one host core: device part then host part."""
        return self.input_bytes / max(self.device_s + self.host_s, _TICK_S)

    @property
    def cpb_source(self) -> Literal["perf", "clock"]:
        counted = self.device_cycles is not None and self.host_cycles is not None
        return "perf" if counted else "clock"

    @property
    def cpb_frequency_hz(self) -> float:
        """The clock CPB stands for: counted cycles / seconds with perf, else the host's."""
        if self.device_cycles is None or self.host_cycles is None:
            return self.host_frequency_hz
        return (self.device_cycles + self.host_cycles) / max(self.device_s + self.host_s, _TICK_S)

    @property
    def cycles_per_byte(self) -> float:
        """The whole kernel (device part then host part) on one core."""
        if self.device_cycles is None or self.host_cycles is None:
            return self.host_frequency_hz / self.host_only_bytes_per_s
        return (self.device_cycles + self.host_cycles) / self.input_bytes

    @property
    def device_cycles_per_byte(self) -> float:
        if self.device_cycles is None:
            return self.host_frequency_hz / self.device_bytes_per_s
        return self.device_cycles / self.input_bytes

    @property
    def device_instructions_per_byte(self) -> float | None:
        if self.device_instructions is None:
            return None
        return self.device_instructions / self.input_bytes

    def as_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "data_bytes": self.data_bytes,
            "alpha": self.alpha,
            "device_bytes_per_s": self.device_bytes_per_s,
            "host_part_bytes_per_s": self.host_part_bytes_per_s,
            "host_only_bytes_per_s": self.host_only_bytes_per_s,
            "cycles_per_byte": self.cycles_per_byte,
            "device_cycles_per_byte": self.device_cycles_per_byte,
            "device_instructions_per_byte": self.device_instructions_per_byte,
            "cpb_source": self.cpb_source,
            "cpb_frequency_hz": self.cpb_frequency_hz,
        }


_TICK_S = time.get_clock_info("perf_counter").resolution
"""The finest time `perf_counter` tells apart: a part timed at 0 s took less."""
DEFAULT_FREQUENCY_HZ = 2.0e9
"""The clock assumed where this host states none (`host_clock`)."""
NO_CLOCK_NOTE = "this host states no clock"
"""How a measurement's note that `DEFAULT_FREQUENCY_HZ` was assumed begins."""


def host_clock(
    cpufreq: str | Path = Path("/sys/devices/system/cpu/cpu0/cpufreq/base_frequency"),
    cpuinfo: str | Path = Path("/proc/cpuinfo"),
) -> tuple[float, str]:
    """(Hz, where it was read) for this host's nominal clock: the base frequency cpufreq
    states (Intel's driver; kHz), else the one in the processor's name ("… @ 2.30GHz"),
    else /proc/cpuinfo's first "cpu MHz" (on bare metal with frequency scaling that is a
    momentary reading, which is why it comes last; a VM shows its host's fixed clock),
    else `DEFAULT_FREQUENCY_HZ` ("assumed")."""
    # A str path was "'str' object has no attribute 'read_text'".
    paths = as_path(cpufreq, "cpufreq"), as_path(cpuinfo, "cpuinfo")
    for hz, source in _clock_readings(*paths):
        if math.isfinite(hz) and hz > 0:  # some VMs show "cpu MHz : 0.000"
            return hz, source
    return DEFAULT_FREQUENCY_HZ, "assumed"


def _clock_readings(cpufreq: Path, cpuinfo: Path) -> Iterator[tuple[float, str]]:
    """The clocks this host states, best first (see `host_clock`)."""
    with contextlib.suppress(OSError, ValueError):
        yield float(cpufreq.read_text(encoding="ascii").strip()) * 1e3, str(cpufreq)
    try:
        text = cpuinfo.read_text(encoding="utf-8")
    except OSError:
        return
    named = re.search(r"^model name\s*:.*@\s*([0-9]+(?:\.[0-9]+)?)\s*GHz", text, re.MULTILINE)
    if named:
        yield float(named.group(1)) * 1e9, "the processor's name"
    for line in text.splitlines():
        if line.startswith("cpu MHz"):
            with contextlib.suppress(ValueError):
                yield float(line.split(":", 1)[1]) * 1e6, "/proc/cpuinfo cpu MHz"
            return


def _not_negative(value: float, name: str) -> None:
    """A finite number ≥ 0, else a SpecError naming the field."""
    finite_number(value, name, "a finite number ≥ 0", least=0)


def _positive(value: float, name: str) -> None:
    """A finite number > 0, else a SpecError naming the argument (NaN fails every test)."""
    finite_number(value, name, "a finite number > 0", above=0)


def measure(
    kernel: Kernel,
    data: np.ndarray,
    params: dict[str, Any],
    *,
    chunk_records: int | None = None,
    frequency_hz: float | None = None,
    repeat: int = 3,
    counters: CounterFactory | None = open_counters,
    progress: ByteProgress | None = None,
) -> Measurement:
    """Time the device and host parts on one core over `data` (best of `repeat`), counting
    their cycles and instructions with `counters` (None: the clock only) while they work.
    `progress` hears the bytes streamed after every pass."""
    # Each was found out only part-way: an app's name or a list as "… has no attribute
    # 'record_bytes'" ('nbytes'), params=None inside the kernel's init, and progress=True
    # or counters=5 as "… is not callable" once the first pass had been timed.
    check_kernel(kernel)
    data = records_array(data)
    check_params(params, kernel.name)
    function_or_none(progress, "progress", "a function progress(done_bytes, total_bytes)")
    function_or_none(counters, "counters", "a counter factory (perf_event.open_counters)")
    if np.ndim(data) == 0:
        raise SpecError("must be an array of records (axis 0), got a scalar", field="data")
    if len(data) == 0:
        # Said as "lc: cannot profile …", the app in the place of the argument's name.
        raise SpecError(
            f"has no records: cannot profile {kernel.name} on an empty data set", field="data"
        )
    if frequency_hz is not None:
        _positive(frequency_hz, "frequency_hz")  # 0 would have meant this host's clock
    # 0 or -3 ran once without a word, 2.5 ended in a TypeError
    repeat = whole_number(repeat, "repeat", "a whole number of runs ≥ 1", least=1)
    # At least two chunks where there are two records: α needs the output of part of the
    # sample beside the whole's (`Measurement.device_sends_bytes`).
    if chunk_records is not None:
        chunk_records = whole_number(
            chunk_records, "chunk_records", "a whole number of records ≥ 1", least=1
        )
    chunk = chunk_records or max(
        1, min((4 << 20) // max(kernel.record_bytes, 1), math.ceil(len(data) / 2))
    )
    meter = _Meter.opened(counters)
    try:
        # One core, as the figures claim: the counters see only this thread, so BLAS must
        # not spread a part over others.
        with threadpool_limits(limits=1):
            ticker = _Ticker(int(data.nbytes), repeat, progress)
            runs = [
                _one_run(kernel, data, params, chunk, meter, ticker.tick) for _ in range(repeat)
            ]
        counted = meter.counting
    finally:
        meter.close()
    device, host = _best(r.device for r in runs), _best(r.host for r in runs)
    if counted:
        counted = _cycles_counted(device, host, meter.notes)
    last = runs[-1]
    if frequency_hz is None:
        frequency_hz, source = host_clock()
        if source == "assumed" and not counted:  # counted cycles give their own clock
            meter.notes.append(
                f"{NO_CLOCK_NOTE}: {frequency_hz / 1e9:.2f} GHz assumed for the "
                "cycles per byte and the engine and host scaling (measure(..., frequency_hz=…) "
                "sets it)"
            )
    return Measurement(
        app=kernel.name,
        input_bytes=int(data.nbytes) * last.passes,
        output_bytes=last.output_bytes,
        device_s=device.seconds,
        host_s=host.seconds,
        host_frequency_hz=frequency_hz,
        passes=runs[-1].passes,
        notes=meter.notes,
        device_cycles=device.cycles if counted else None,
        host_cycles=host.cycles if counted else None,
        device_instructions=device.instructions if counted else None,
        host_instructions=host.instructions if counted else None,
        device_output_bytes=last.device_output_bytes,
        part_input_bytes=last.part_input_bytes,
        part_output_bytes=last.part_output_bytes,
        device_output_limit_bytes=kernel.output_limit_bytes(),
    )


@dataclass
class _Part:
    """One part (device or host) of one run: totals over its passes."""

    seconds: float = 0.0
    cycles: float = 0.0
    instructions: float = 0.0


@dataclass
class _Run:
    device: _Part
    host: _Part
    output_bytes: int
    passes: int
    device_output_bytes: int | None = None
    part_input_bytes: int | None = None
    part_output_bytes: int | None = None


@dataclass
class _Ticker:
    """Bytes streamed so far, of the repeats' passes as far as they are known."""

    pass_bytes: int
    repeat: int
    report: ByteProgress | None
    done_bytes: int = 0
    passes_per_run: int = 1

    def tick(self, run_passes: int) -> None:
        if self.report is None:
            return
        self.done_bytes += self.pass_bytes
        self.passes_per_run = max(self.passes_per_run, run_passes)
        self.report(self.done_bytes, self.pass_bytes * self.passes_per_run * self.repeat)


def _cycles_counted(device: _Part, host: _Part, notes: list[str]) -> bool:
    """Whether the counts stand for the cycles: every part ran user code for some time, so
    a part (of any repeat: the best is the fewest) that counted 0 cycles means counters
    that opened and ran but did not count (a VM that exposes them without counting). With
    them the part's CPB was 0 and the kernel's too low; the clock says more."""
    empty = [name for name, part in (("device", device), ("host", host)) if part.cycles <= 0]
    if empty:
        # Naming perf, as every other counter note does (what a reader and the tests look for).
        notes.append(
            "cycles per byte from the clock: the cycle counter counted nothing in the "
            + " and the ".join(empty)
            + " part (perf counters that opened and ran but did not count)"
        )
    return not empty


def _best(parts: Iterator[_Part]) -> _Part:
    """The least disturbed of the repeats: the fewest seconds, and the fewest counts."""
    found = list(parts)
    return _Part(
        min(p.seconds for p in found),
        min(p.cycles for p in found),
        min(p.instructions for p in found),
    )


class _Meter:
    """Times parts of runs and, while its counters work, counts them; the first counter
    failure stops counting for the rest of the measurement and is noted."""

    def __init__(self, counters: Counters | None, notes: list[str]):
        self.counters = counters
        self.notes = notes

    @classmethod
    def opened(cls, factory: CounterFactory | None) -> _Meter:
        if factory is None:
            return cls(None, ["cycles per byte from the clock (counters not asked for)"])
        try:
            return cls(factory(), [])
        except CounterError as e:
            return cls(None, [f"cycles per byte from the clock: {e}"])

    @property
    def counting(self) -> bool:
        return self.counters is not None

    @contextmanager
    def part(self, into: _Part) -> Iterator[None]:
        self._counted(lambda c: c.start())
        start = time.perf_counter()
        yield
        into.seconds += time.perf_counter() - start
        reading = self._counted(lambda c: c.stop())
        if reading is not None:
            into.cycles += reading.cycles
            into.instructions += reading.instructions

    def _counted(self, action: Callable[[Counters], Any]) -> Any:
        if self.counters is None:
            return None
        try:
            return action(self.counters)
        except CounterError as e:
            self.notes.append(f"cycles per byte from the clock: {e}")
            self.close()
            return None

    def close(self) -> None:
        if self.counters is not None:
            self.counters.close()
            self.counters = None


def _one_run(
    kernel: Kernel,
    data: np.ndarray,
    params: dict[str, Any],
    chunk: int,
    meter: _Meter,
    on_pass: Callable[[int], None],
) -> _Run:
    state = kernel.init(params)
    run = _Run(_Part(), _Part(), output_bytes=0, passes=0)
    done = False
    while not done:
        run.passes += 1
        with meter.part(run.device):
            partials = chunk_partials(kernel, data, state, 0, chunk)
            merged = kernel.merge(partials)
        run.output_bytes += sum(kernel.output_bytes(p) for p in partials)
        if run.passes == 1:
            _device_outputs(kernel, run, data, state, chunk, partials, merged)
        with meter.part(run.host):
            state, done = kernel.host(merged, state)
        on_pass(run.passes)
    return run


def _device_outputs(
    kernel: Kernel,
    run: _Run,
    data: np.ndarray,
    state: Any,
    chunk: int,
    partials: list[Any],
    merged: Any,
) -> None:
    """What the sample sends as one device (its partials merged or folded, as an engine
    does), and the same for its first half of chunks: outside the timed parts."""
    run.device_output_bytes = kernel.output_bytes(merged)
    half = -(-len(data) // chunk) // 2
    if half >= 1:
        run.part_input_bytes = half * chunk * int(data[:1].nbytes)
        # A folded partial covers every chunk: fold the first half again.
        if kernel.folds:
            partials = chunk_partials(kernel, data[: half * chunk], state, 0, chunk)
        first = kernel.merge(partials[:half])
        run.part_output_bytes = kernel.output_bytes(first)


def _check_profile_inputs(m: object, scaling: object, host: object, engine: object) -> None:
    """`to_profile`'s objects, each of its type: the platform given as `target_host` (for
    `platform.host`) ended in "'Platform' object has no attribute 'cores'", and a dict as
    the measurement in "… no attribute 'cpb_frequency_hz'"."""
    wanted: list[tuple[str, object, type, str]] = [
        ("m", m, Measurement, "a Measurement (measure(…), load(path))"),
        ("scaling", scaling, EngineScaling, "an EngineScaling, or None"),
        ("target_host", host, Host, "a platform's Host (platform.host), or None"),
        ("target_engine", engine, Engine, "a platform's Engine (platform.engines), or None"),
    ]
    for name, value, kind, expected in wanted:
        if not isinstance(value, kind) and (name == "m" or value is not None):
            raise SpecError(f"must be {expected}, got {type(value).__name__}", field=name)


def to_profile(
    m: Measurement,
    *,
    data_bytes: float | None = None,
    passes: int | None = None,
    scaling: EngineScaling | None = None,
    target_host: Host | None = None,
    target_engine: Engine | None = None,
) -> Profile:
    """A `Profile` for the models: the bytes streamed, α, host rates, CPB, and engine rates
    by kind from the scaling model.

    `data_bytes` is the data set's size D (default: the data profiled), `passes` how often
    the kernel reads it (default: the passes measured). The measured rates and CPB are per
    byte streamed, so the profile's size is D x passes: with D alone an iterative kernel's
    time, energy and cycles would cover one of its passes.

    With `target_host`, the one-core host rates are scaled to that host: x cores x
    (f_target / f_here), i.e. the host part is assumed to parallelise perfectly (an upper
    bound; the measured per-core CPB is kept as is).

    With `target_engine`, its kind's rate follows its `frequency` and `cores`
    (`EngineScaling`), and α is that of the run modelled: each of its `count` engines reads
    D / count per pass and sends its merged partials (`Measurement.alpha_for`). Without
    it, one device reads D."""
    _check_profile_inputs(m, scaling, target_host, target_engine)
    scaling = scaling or EngineScaling()
    # The clock the parts ran at: counted cycles / seconds where perf counted them, so that
    # these rates and the RISP Baseline's f x cores / CPB come from one clock.
    clock = m.cpb_frequency_hz
    rates = scaling.rates(m.device_bytes_per_s, clock, target_engine)
    scale = 1.0
    if target_host is not None:
        scale = target_host.cores * target_host.frequency_hz / clock
    if data_bytes is not None:
        _positive(data_bytes, "data_bytes")  # 0 would have meant the data profiled
    d = float(m.data_bytes if data_bytes is None else data_bytes)
    n = m.passes if passes is None else passes
    # 1.5 modelled D x 1.5 bytes, and True one pass, without a word
    n = whole_number(n, "passes", "at least 1 (a whole number of passes)", least=1)
    devices = 1 if target_engine is None else target_engine.count
    host_part = m.host_part_bytes_per_s * scale  # infinite: a host part too fast to time
    return Profile.model_validate(
        {
            "app": m.app,
            "description": f"measured on this host ({usable_cpus()} usable CPUs), one core; "
            f"CPB from {_cpb_origin(m)}; α for D over {devices} device(s)"
            + (f"; data_size = D x {n} passes" if n > 1 else ""),
            "data_bytes": d * n,
            "passes": n,
            "alpha": m.alpha_for(d / devices),
            "host_part_bytes_per_s": host_part if np.isfinite(host_part) else None,
            "host_only_bytes_per_s": m.host_only_bytes_per_s * scale,
            # timed on data in memory: the models add the transfer a CNS run waits for
            "host_only_in_memory": True,
            "engine_bytes_per_s": rates,
            "cycles_per_byte": m.cycles_per_byte,
        },
        context={"si": True},
    )


def _cpb_origin(m: Measurement) -> str:
    if m.cpb_source == "perf":
        return f"perf counters (effective clock {m.cpb_frequency_hz / 1e9:.2f} GHz)"
    return f"the clock at {m.cpb_frequency_hz / 1e9:.2f} GHz"


def save(measurements: Sequence[Measurement], path: str | Path) -> None:
    """Write measurements as JSON (a list of `Measurement.as_dict`), atomically (temporary
    name, then rename). They are raw measurements, not a profile set: a profile needs a D
    and a target (`to_profile`); `ndpkit.profile.save_profiles` writes profiles. `load`
    reads them back. A `path` inside a data set is a SpecError: the file would stop the data
    set's next `--overwrite`."""
    # A str path ended in "'str' object has no attribute 'name'", and one Measurement in
    # "'Measurement' object is not iterable" (a dict's keys, or a string, were worse).
    if isinstance(measurements, Measurement):
        raise SpecError(
            "must be a list of measurements: save([m], path) for one", field="measurements"
        )
    if not isinstance(measurements, (list, tuple)) or not all(
        isinstance(m, Measurement) for m in measurements
    ):
        raise SpecError(
            f"must be a list of Measurement (measure(…)), got {measurements!r}",
            field="measurements",
        )
    path = as_path(path, "path")  # a number was pathlib's TypeError
    refuse_a_file_inside_a_data_set(path, "the measurements", field="path")
    # Strict JSON: +inf (a host part that took no time) as the string "inf", as
    # `ndpkit evaluate --format json` writes it, not the bare Infinity of Python's default.
    document = [{k: _finite_or_text(v) for k, v in m.as_dict().items()} for m in measurements]
    write_atomic(path, json.dumps(document, indent=2, allow_nan=False))


def _finite_or_text(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def load(path: str | Path) -> list[Measurement]:
    """The measurements `save` wrote, exactly as they were (`to_profile` then maps them onto
    any platform without measuring again). Each is checked as `Measurement` checks one built
    by hand; the figures derived from its fields (`alpha`, the rates, CPB, …) must be the
    ones it gives, so that a file edited in one of them is refused, not silently used with
    the old value: edit the field it comes from. Every problem is a SpecError naming the
    file and the field (`[0].device_s`)."""
    path = as_path(path, "path")  # a number was pathlib's TypeError
    source = str(path)
    text = read_spec_file(path, source)
    try:
        document = parse_nested(json_loads, text, source)
    except json.JSONDecodeError as exc:
        raise SpecError(f"malformed JSON: {exc}", source=source) from None
    if not isinstance(document, list):
        raise SpecError(
            "expected a list of measurements (runtime.profiling.save), got "
            + (
                _TABLES[table_kind(document)]
                if isinstance(document, dict)
                else type(document).__name__
            ),
            source=source,
        )
    return [_measurement(item, source, f"[{i}]") for i, item in enumerate(document)]


_TABLES: dict[TableKind | None, str] = {
    "manifest": "a data set's manifest (ndpkit data), which holds no measurements",
    "report": (
        "the report of `ndpkit evaluate -f json` (its measurements are each app's "
        "`measurement`, not a list `profiling.save` wrote)"
    ),
    "profile set": (
        "a profile set (`ndpkit evaluate --save-profiles`), which is read with --profiles "
        "(ndpkit.profile.load_profiles)"
    ),
    None: "a table",
}
"""What a JSON table given to `load` is, by its kind: every one was called "a profile set,
read with --profiles", and --profiles then refused a data set's manifest or an evaluate
report."""


_FIELDS = {f.name: f for f in fields(Measurement)}
_DERIVED_KEYS = {
    "data_bytes": "input_bytes, passes",
    "alpha": "device_output_bytes, part_input_bytes, part_output_bytes (without them, "
    "output_bytes and input_bytes), device_output_limit_bytes",
    "device_bytes_per_s": "input_bytes, device_s",
    "host_part_bytes_per_s": "input_bytes, host_s",
    "host_only_bytes_per_s": "input_bytes, device_s, host_s",
    "cycles_per_byte": "device_cycles, host_cycles, input_bytes (without the cycles, "
    "host_frequency_hz and the times)",
    "device_cycles_per_byte": "device_cycles, input_bytes (without them, host_frequency_hz, "
    "device_s)",
    "device_instructions_per_byte": "device_instructions, input_bytes",
    "cpb_source": "device_cycles, host_cycles",
    "cpb_frequency_hz": "host_frequency_hz (with perf, the cycles and the times)",
}
"""What `Measurement.as_dict` adds to the fields, figures derived from them: the fields
each comes from."""


def _measurement(item: Any, source: str, where: str) -> Measurement:
    if not isinstance(item, dict):
        raise SpecError(
            f"expected a measurement (a table of keys), got {item!r}", source=source, field=where
        )
    unknown = sorted(set(item) - set(_FIELDS) - set(_DERIVED_KEYS))
    if unknown:
        guess = closest(unknown[0], [*_FIELDS, *_DERIVED_KEYS])
        hint = f"; did you mean {guess!r}?" if guess else ""
        raise SpecError(f"unknown field{hint}", source=source, field=f"{where}.{unknown[0]}")
    missing = [name for name, f in _FIELDS.items() if _required(f) and name not in item]
    if missing:
        raise SpecError("required field is missing", source=source, field=f"{where}.{missing[0]}")
    notes = item.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise SpecError(
            f"expected a list of strings, got {notes!r}", source=source, field=f"{where}.notes"
        )
    if not isinstance(item["app"], str) or not item["app"]:
        raise SpecError(
            f"expected an app's name, got {item['app']!r}", source=source, field=f"{where}.app"
        )
    try:
        m = Measurement(**{name: item[name] for name in _FIELDS if name in item})
    except SpecError as exc:
        raise SpecError(exc.detail, source=source, field=f"{where}.{exc.field}") from None
    derived = {k: _finite_or_text(v) for k, v in m.as_dict().items() if k in _DERIVED_KEYS}
    for key, value in derived.items():
        if key in item and item[key] != value:
            raise SpecError(
                f"is {item[key]!r}, but the fields it is derived from give {value!r}: edit "
                f"those ({_DERIVED_KEYS[key]}), not it",
                source=source,
                field=f"{where}.{key}",
            )
    return m


def _required(f: Any) -> bool:
    return f.default is MISSING and f.default_factory is MISSING
