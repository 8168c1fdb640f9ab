"""`ndpkit simulate nascent2`: the NASCENT2 discrete-event simulation of one E7-style table
on 𝓜 SSDs (each SmartSSD, the U250 and the CPU baselines), figure by figure against the
analytic model (`ndpkit.nascent.des`, docs/nascent2-simulation.md)."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Annotated

import typer

from ndpkit.cli.common import Format, FormatOption, emit, print_notes, stderr, user_errors
from ndpkit.errors import SpecError
from ndpkit.nascent.des import DevicesSimulation, check_size
from ndpkit.nascent.devices import DeviceSet, load_devices
from ndpkit.nascent.system import CpuPhases, TableJob
from ndpkit.numerals import ascii_digits, plain_number
from ndpkit.report import Table
from ndpkit.reproduce.nascent2 import settings_from_flags
from ndpkit.reproduce.nascent2.context import USED_DEVICES, new_context
from ndpkit.reproduce.nascent2.cpu import CpuSorts
from ndpkit.reproduce.nascent2.settings import Settings
from ndpkit.reproduce.nascent2.simulated import COMPARISON_COLUMNS, comparison_rows, simulate
from ndpkit.reproduce.nascent2.tables import E7_KEYS, KeySpec, e7_cpu, e7_job
from ndpkit.tpc.shape import LINEITEM_ROWS_AT_SF1
from ndpkit.tpc.tpcc import ORDERS_PER_WAREHOUSE as ORDERS

_SOURCE = "command line"


def nascent2_cmd(
    devices: Annotated[
        str, typer.Option("--devices", "-m", help="𝓜: SSDs, each with a copy of the table.")
    ] = "12",
    table: Annotated[
        str, typer.Option("--table", help="lineitem (TPC-H) or order_line (TPC-C).")
    ] = "lineitem",
    sf: Annotated[
        str, typer.Option("--sf", help="Scale factor (order_line: warehouses, O14).")
    ] = "1",
    key: Annotated[
        str | None,
        typer.Option(
            "--key",
            help="Sort key (O14): l_orderkey or l_shipdate (lineitem), ol_o_id or "
            "ol_delivery_d (order_line); default the table's first.",
        ),
    ] = None,
    device_file: Annotated[
        str | None,
        typer.Option("--device-file", help="A NASCENT2 device file (see docs/nascent2.md)."),
    ] = None,
    measure_cpu: Annotated[
        bool,
        typer.Option(
            "--measure-cpu/--read-only-cpu",
            help="Measure the CPU baseline's decode, sort and shuffle and the host sort here, "
            "as E7 does (the default; about 0.5 s at SF 1), or let the CPU only read its "
            "tables (--read-only-cpu: a lower bound of the CPU's time).",
        ),
    ] = True,
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            "-o",
            help="KEY=VALUE, repeatable: des.chunk_bytes='64 KiB', des.baseline_schedule="
            "serial|concurrent, des.shuffle_order=scatter|gather, des.seed; a model option "
            "(dram_merge, merge_ways, overlap, staging); DEVICE.ENTRY (smartssd.clock='250 MHz').",
        ),
    ] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Simulate NASCENT2 on 𝓜 SmartSSDs against the U250 and CPU baselines.

    One TPC table per SSD; every figure is compared with the analytic model (E7's inputs)."""
    with user_errors():
        m = _devices(devices)
        scale = _scale_factor(sf)
        spec = _key(table, key)
        _check_rows(table, scale)
        settings = settings_from_flags(
            devices=device_file, options=option, simulate=True, devices_flag="--device-file"
        )
        if not measure_cpu:
            _check_cpu_options(option or [])
        # The devices first: a typo in -o smartssd.… is said at once, not after the table's
        # row size is sampled (tpchgen-cli, about 2 s).
        found = load_devices(settings.devices_file, settings.overrides, used=USED_DEVICES)
        job = e7_job(table, scale, spec)
        _check_size(job, m, settings.des.chunk_bytes, found)
        cpu_phases, host_sort = _cpu(settings, job) if measure_cpu else (CpuPhases(), 0.0)
        sim = simulate(found, m, job, settings.options, settings.des, cpu_phases, host_sort)
    title = (
        f"NASCENT2 simulated vs modelled — {table} SF {scale:g} by {spec.column}, "
        f"{job.rows:,} rows of {job.row_bytes:.2f} B on each of {m} SSD{'s' * (m > 1)}"
    )
    rows = comparison_rows(sim)
    result = Table("nascent2_simulation", title, COMPARISON_COLUMNS, rows, note=_note(sim))
    document = _document(sim, settings, table, scale, spec, job, measure_cpu) | {"rows": rows}
    emit([result], fmt, {"nascent2_simulation": document})
    if not measure_cpu:
        lower = "the CPU baseline reads only (--read-only-cpu), so its times and the speedups"
        print_notes([f"{lower} over it are lower bounds"], fmt)


def _check_size(job: TableJob, devices: int, chunk_bytes: float, found: DeviceSet) -> None:
    """Refuse, before it starts, a simulation that would run for minutes or hours, as
    `simulate_devices` does (`des.check_size`), said by the flags that size it."""
    check_size(
        devices,
        job,
        chunk_bytes,
        {name: found.fpga(name) for name in ("smartssd", "u250")},
        source="command line",
        field="--devices/--sf/-o des.chunk_bytes",
        remedy="lower --devices, --sf or a device's shuffle_kernels, or raise -o des.chunk_bytes",
    )


def _devices(text: str) -> int:
    if not ascii_digits(text.strip()) or int(text) < 1:
        raise SpecError(
            f"must be a whole number ≥ 1, got {text!r}", source=_SOURCE, field="--devices"
        )
    return int(text)


def _scale_factor(text: str) -> float:
    try:
        value = float(text) if plain_number(text) else math.nan
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise SpecError(f"must be a finite number > 0, got {text!r}", source=_SOURCE, field="--sf")
    return value


def _check_rows(table: str, sf: float) -> None:
    """Refuse a scale factor too small for one row (lineitem) or one order (order_line),
    which `table_shape` would round up to one and the title would still call SF `sf`."""
    unit, per_sf = ("row", LINEITEM_ROWS_AT_SF1) if table == "lineitem" else ("order", ORDERS)
    # Not round(sf * per_sf) < 1, which `table_shape` rounds: half a row is no row either.
    if sf * per_sf < 1:
        raise SpecError(
            f"SF {sf:g} gives no {table} {unit} (SF {_least_sf(per_sf):.2g} gives one)",
            source=_SOURCE,
            field="--sf",
        )
    if sf * per_sf >= MAX_ROWS:
        # SF 1e300 was an OverflowError from the chunk count (its bytes are inf), SF 1e308
        # one from the table's row count; nothing that large fits the sort's counters.
        raise SpecError(
            f"SF {sf:g} gives 2^64 {table} {unit}s per SSD or more, past the simulation's "
            f"64-bit counts (SF {_most_sf(per_sf):.2g} gives fewer)",
            source=_SOURCE,
            field="--sf",
        )


MAX_ROWS = 2**64
"""Rows (orders) per SSD past which no simulation runs: the sort's counts are 64-bit."""


def _most_sf(per_sf: int) -> float:
    """(2^64 - 1) / `per_sf` rounded down to two significant digits: accepted, as printed."""
    most = (MAX_ROWS - 1) / per_sf
    exponent = math.floor(math.log10(most)) - 1
    return math.floor(most / 10.0**exponent) * 10.0**exponent


def _least_sf(per_sf: int) -> float:
    """1 / `per_sf` rounded up to two significant digits, so that the SF the message
    suggests (printed with two) is itself accepted."""
    exponent = math.floor(math.log10(1 / per_sf)) - 1
    hint = math.ceil(10.0**-exponent / per_sf) * 10.0**exponent
    return hint if hint * per_sf >= 1 else hint + 10.0**exponent


_CPU_SETTINGS = ("seed", "threads")
"""What only the measured CPU baseline reads (its data's seed, its sort's threads)."""


def _check_cpu_options(options: list[str]) -> None:
    """Refuse -o seed/threads with --read-only-cpu: nothing would read them, yet the run
    would look as if they had been used."""
    for pair in options:
        key = pair.partition("=")[0].strip()
        if key in _CPU_SETTINGS:
            also = "; the simulation's seed is des.seed" if key == "seed" else ""
            raise SpecError(
                "applies to the measured CPU baseline only, which --read-only-cpu does not "
                f"measure{also}",
                source=_SOURCE,
                field=f"--option {pair}",
            )


def _key(table: str, column: str | None) -> KeySpec:
    if table not in E7_KEYS:
        known = ", ".join(E7_KEYS)
        raise SpecError(f"unknown table {table!r}; known: {known}", source=_SOURCE, field="--table")
    keys = E7_KEYS[table]
    for spec in keys:
        if column in (None, spec.column):
            return spec
    known = ", ".join(k.column for k in keys)
    raise SpecError(
        f"unknown key {column!r} of {table}; known: {known}", source=_SOURCE, field="--key"
    )


def _cpu(settings: Settings, job: TableJob) -> tuple[CpuPhases, float]:
    """The CPU phases and host sort measured as E7 measures them (seeded by -o seed)."""
    ctx = new_context(settings, lambda msg: stderr().print(f"[dim]{msg}…[/]", highlight=False))
    ctx.report("measuring the CPU baseline")
    return e7_cpu(ctx, job, CpuSorts(ctx))


def _note(sim: DevicesSimulation) -> str:
    return (
        f"smartssd: one of the {sim.devices} SmartSSDs (each runs the same job alone); "
        f"{sim.fpga.name}, {sim.cpu.name}: a phase's mean over the {sim.devices} jobs on the one "
        f"machine (baseline schedule {sim.schedule}); all: the whole run (§10.6–10.7). "
        "Utilisation: bytes / (bandwidth × the machine's run time), busy unit-seconds / "
        "(units × run time)."
    )


def _document(
    sim: DevicesSimulation,
    settings: Settings,
    table: str,
    sf: float,
    spec: KeySpec,
    job: TableJob,
    cpu_measured: bool,
) -> dict[str, object]:
    """What was simulated: the inputs, the simulation's and the model's options."""
    return {
        "table": table,
        "cpu_measured": cpu_measured,
        "sf": sf,
        "key": spec.column,
        "rows_per_ssd": job.rows,
        "row_bytes": job.row_bytes,
        "devices": sim.devices,
        "des": asdict(settings.des),
        "model_options": asdict(settings.options),
        "events": sim.events,
    }
