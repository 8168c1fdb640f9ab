"""E6–E8 of spec §12, whole tables: 𝓜 SSDs with a table each (E6), TPC-H lineitem and TPC-C
order-line on 12 SSDs (E7), and which TPC-H columns and sort keys could be dictionary
encoded (E8, computed by `ndpkit.tpc.analysis` on generated TPC-H data)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from importlib.util import find_spec
from typing import Any, Literal

import numpy as np

from ndpkit.nascent.system import CpuPhases, TableJob, cpu_time, table_sort_time
from ndpkit.report import Column, Table
from ndpkit.reproduce.nascent2.comparison import THREE_WAY_RATIOS, three_way_row
from ndpkit.reproduce.nascent2.context import Context
from ndpkit.reproduce.nascent2.cpu import (
    CpuSorts,
    decode_fixed_s,
    host_sort_s,
    key_dtype,
    shuffle_s,
)
from ndpkit.reproduce.nascent2.simulated import (
    SIM_NOTE,
    sim_columns,
    simulate,
    simulated_fields,
)


def _cpu_table_phases(ctx: Context, job: TableJob, sort_s: float) -> CpuPhases:
    """The CPU's decode (measured on up to `cpu_decode_keys` keys, scaled by keys) and
    shuffle of one table sort, beside the given sort time."""
    n = job.rows
    if job.encoded_key_bytes is None:
        decode_s = 0.0
    else:
        m = min(n, ctx.settings.cpu_decode_keys)
        page = ctx.rng.integers(0, max(job.dict_values, 1), m).astype(
            key_dtype(job.encoded_key_bytes)
        )
        dictionary = ctx.rng.integers(0, 2**32, max(job.dict_values, 1), dtype=np.uint32)
        decode_s = decode_fixed_s(dictionary, page, ctx.settings.threads) * n / m
    shuffle, basis = shuffle_s(ctx, n, job.row_bytes)
    if n > ctx.settings.cpu_decode_keys or n > ctx.settings.cpu_sort_cap:
        basis = "extrapolated"
    return CpuPhases(decode_s=decode_s, sort_s=sort_s, shuffle_s=shuffle, basis=basis)


# E6: scaling over devices ---------------------------------------------------------------

E6_JOB = TableJob(rows=1024, row_bytes=4096.0, key_bits=32, encoded_key_bytes=2, dict_values=1024)
"""A 1,024-row table of 4 KB rows; 32-bit keys stored as 16-bit dictionary keys."""


def e6(ctx: Context) -> Table:
    job = E6_JOB
    n2 = table_sort_time(ctx.smartssd, job, ctx.settings.options)
    fpga = table_sort_time(ctx.fpga, job, ctx.settings.options)
    sort_single = CpuSorts(ctx)(job.rows).argsort_s
    cpu = cpu_time(ctx.cpu, job.table_bytes, _cpu_table_phases(ctx, job, sort_single))
    rows = [
        {
            "devices": m,
            **three_way_row(ctx, n2.total_s, fpga.total_s, cpu.total_s, m),
            "cpu_basis": cpu.phases.basis,
            **_simulated(ctx, m, job, cpu.phases),
        }
        for m in range(1, 13)
    ]
    return Table(
        "E6",
        "E6 (Fig. 16) — 𝓜 SSDs, each with a 1,024 × 4 KiB table (16-bit dictionary keys)",
        [
            Column("devices", "𝓜", 0),
            Column("nascent2_s", "NASCENT2 (s)", 5, "max over SmartSSDs"),
            Column("fpga_s", "U250 (s)", 5, "sum over SSDs, one PCIe attachment"),
            Column("cpu_s", "CPU (s)", 5, "sum over SSDs"),
            *THREE_WAY_RATIOS,
            Column("cpu_basis", "CPU", None),
            *_sim_columns(ctx, 5),
        ],
        rows,
        note="CPU per SSD: read 4 MiB at 3 GB/s, decode, quicksort argsort (one thread), "
        "row gather; measured here." + _sim_note(ctx),
    )


def _simulated(
    ctx: Context, m: int, job: TableJob, cpu_phases: CpuPhases, host_sort: float = 0.0
) -> dict[str, Any]:
    """The row's `--simulate` fields: `m` SSDs simulated with the row's own inputs."""
    if not ctx.settings.simulate:
        return {}
    s = ctx.settings
    return simulated_fields(
        simulate(ctx.devices, m, job, s.options, s.des, cpu_phases, host_sort=host_sort)
    )


def _sim_columns(ctx: Context, digits: int) -> tuple[Column, ...]:
    return sim_columns(digits) if ctx.settings.simulate else ()


def _sim_note(ctx: Context) -> str:
    return SIM_NOTE if ctx.settings.simulate else ""


# E7: TPC-H lineitem and TPC-C order-line on 12 SSDs -------------------------------------

E7_SF = (0.1, 1.0, 2.0, 5.0)
E7_DEVICES = 12


@dataclass(frozen=True)
class KeySpec:
    """A sort-key choice of O14 and what its column looks like."""

    column: str
    key_kind: Literal["integer", "generic"]
    encoded_key_bytes: int | None
    dict_values: Callable[[float], int]
    dict_value_bytes: float
    source: str


E7_KEYS: dict[str, tuple[KeySpec, ...]] = {
    "lineitem": (
        KeySpec(
            "l_orderkey",
            "integer",
            None,
            lambda sf: round(1_500_000 * sf),
            4.0,
            "TPC-H 4.2.3: 1.5M·SF orders ≥ 2^16, stored plain",
        ),
        KeySpec(
            "l_shipdate",
            "generic",
            2,
            lambda sf: 2526,
            4.0,
            "TPC-H 4.2.3: o_orderdate + 1..121 days spans 1992-01-02..1998-12-01, 2,526 dates",
        ),
    ),
    "order_line": (
        KeySpec(
            "ol_o_id",
            "integer",
            2,
            lambda sf: 3000,
            4.0,
            "TPC-C 4.3.3.1: 3,000 orders per district",
        ),
        KeySpec(
            "ol_delivery_d",
            "generic",
            2,
            lambda sf: 2,
            8.0,
            "TPC-C 4.3.3.1: the load time or null (2 values in ndpkit.tpc.tpcc data)",
        ),
    ),
}


def table_shape(name: str, sf: float) -> tuple[int, float]:
    """(rows, bytes per row) of lineitem or order_line at `sf`, from `ndpkit.tpc`."""
    shape = import_module("ndpkit.tpc").table_shape(name, sf)
    return int(shape.rows), float(shape.row_bytes)


def e7_job(name: str, sf: float, key: KeySpec) -> TableJob:
    """The table sort of `name` at `sf` on `key`, as E7 prices it."""
    n, row_bytes = table_shape(name, sf)
    return TableJob(
        rows=n,
        row_bytes=row_bytes,
        encoded_key_bytes=key.encoded_key_bytes,
        dict_values=key.dict_values(sf) if key.encoded_key_bytes else 0,
        dict_value_bytes=key.dict_value_bytes,
        key_kind=key.key_kind,
    )


def e7_cpu(ctx: Context, job: TableJob, sorts: CpuSorts) -> tuple[CpuPhases, float]:
    """E7's measured CPU phases of `job` (multi-thread sort) and its host sort of the
    dictionary (T_hostsort(U), for generic keys)."""
    host_sort = host_sort_s(ctx, job.dict_values)
    return _cpu_table_phases(ctx, job, sorts(job.rows).multi_s), host_sort


def e7(ctx: Context) -> Table:
    sorts = CpuSorts(ctx)
    rows = []
    for name, keys in E7_KEYS.items():
        for sf in E7_SF:
            for key in keys:
                ctx.report(f"E7: {name} SF {sf:g}, key {key.column}")
                job = e7_job(name, sf, key)
                phases, host_sort = e7_cpu(ctx, job, sorts)
                n2 = table_sort_time(ctx.smartssd, job, ctx.settings.options, host_sort=host_sort)
                fpga = table_sort_time(ctx.fpga, job, ctx.settings.options, host_sort=host_sort)
                cpu = cpu_time(ctx.cpu, job.table_bytes, phases)
                rows.append(
                    {
                        "table": name,
                        "sf": sf,
                        "key": key.column,
                        "rows": job.rows,
                        "table_gb": job.table_bytes / 1e9,
                        **three_way_row(ctx, n2.total_s, fpga.total_s, cpu.total_s, E7_DEVICES),
                        "staging": n2.shuffle.staging,
                        "cpu_basis": phases.basis,
                        **_simulated(ctx, E7_DEVICES, job, phases, host_sort),
                    }
                )
    return Table(
        "E7",
        f"E7 (Fig. 17) — TPC-H lineitem and TPC-C order-line, a copy on each of {E7_DEVICES} SSDs",
        [
            Column("table", "table", None),
            Column("sf", "SF", 1),
            Column("key", "key (O14)", None),
            Column("rows", "rows", 0),
            Column("table_gb", "GB", 3),
            Column("nascent2_s", "NASCENT2 (s)", 4),
            Column("fpga_s", "U250 (s)", 4),
            Column("cpu_s", "CPU (s)", 4),
            *THREE_WAY_RATIOS,
            Column("staging", "staging", None),
            Column("cpu_basis", "CPU", None),
            *_sim_columns(ctx, 4),
        ],
        rows,
        note="Rows and bytes per row from ndpkit.tpc.table_shape; TPC-C SF s = s × one warehouse "
        "(O14). CPU: multi-thread sort; generic keys use the host sort of the dictionary."
        + _sim_note(ctx),
    )


# E8: TPC-H column analysis (ndpkit.tpc.analysis) ----------------------------------------


def e8_available() -> bool:
    return find_spec("ndpkit.tpc") is not None and find_spec("ndpkit.tpc.analysis") is not None


def e8(ctx: Context) -> Table:
    sf = ctx.settings.e8_sf
    data_dir = ctx.settings.e8_data_dir
    if data_dir is None:
        ctx.report(f"E8: generating TPC-H at SF {sf:g} and counting distinct values")
    else:
        ctx.report(f"E8: counting distinct values in {data_dir} (TPC-H SF {sf:g})")
    analysis = import_module("ndpkit.tpc.analysis").analyse(sf, data_dir)
    return Table(
        "E8",
        f"E8 (Fig. 4) — TPC-H columns and sort keys with < 2^16 distinct values, SF {sf:g}",
        [
            Column("statistic", "statistic", None),
            Column("ours", "ours", 3),
            Column("paper", "paper", 3),
            Column("note", "note", None),
        ],
        analysis.rows(),
        note="Distinct counts grow with SF (e.g. l_orderkey); the default run uses SF 0.1, "
        "--full SF 1. Computed by ndpkit.tpc.analysis.",
    )
