"""NASCENT2 beside its baselines: the ratio columns the experiments share and the row fields
that fill them, declared once so that every experiment computes a ratio the same way.

Speedups are T_baseline / T_NASCENT2; energy ratios are E_baseline / E_NASCENT2 with
E = P·T (spec §10.7)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ndpkit.nascent.system import compare
from ndpkit.report import Column, Table
from ndpkit.reproduce.nascent2.context import Basis, Context


def vs_cpu_row(ctx: Context, nascent2_s: float, cpu_s: float, basis: Basis) -> dict[str, Any]:
    """One SmartSSD against the CPU: both times, the speedup and the energy ratio."""
    return {
        "nascent2_s": nascent2_s,
        "cpu_s": cpu_s,
        "speedup_vs_cpu": cpu_s / nascent2_s,
        "energy_vs_cpu": ctx.cpu.power_w * cpu_s / (ctx.smartssd.power_w * nascent2_s),
        "cpu_basis": basis,
    }


def breakdown_table(
    name: str,
    title: str,
    *,
    keys: Sequence[Column],
    phases: Sequence[Column],
    cpu: str,
    rows: list[dict[str, Any]],
    note: str = "",
) -> Table:
    """A table of NASCENT2 phase times against the CPU (E3, E5): the row's `keys`, its
    `phases` (their sum is NASCENT2's time), then the `vs_cpu_row` fields; `cpu` says what
    the CPU time covers."""
    return Table(
        name,
        title,
        [
            *keys,
            *phases,
            Column("nascent2_s", "NASCENT2 (s)", 6),
            Column("cpu_s", "CPU (s)", 6, cpu),
            Column("speedup_vs_cpu", "× CPU", 2),
            Column("energy_vs_cpu", "E CPU / E N2", 2, "E_CPU / E_NASCENT2"),
            Column("cpu_basis", "CPU", None, "measured here, or extrapolated from the largest run"),
        ],
        rows,
        note=note,
    )


def three_way_row(
    ctx: Context, nascent2_s: float, fpga_s: float, cpu_s: float, devices: int
) -> dict[str, Any]:
    """`devices` SSDs with the same job each: SmartSSDs in parallel against one U250 and one
    CPU serving the SSDs one after another (`ndpkit.nascent.system.compare`)."""
    c = compare(
        [nascent2_s] * devices,
        [fpga_s] * devices,
        [cpu_s] * devices,
        smartssd=ctx.smartssd,
        fpga=ctx.fpga,
        cpu=ctx.cpu,
    )
    return {
        "nascent2_s": c.nascent2_s,
        "fpga_s": c.fpga_s,
        "cpu_s": c.cpu_s,
        "speedup_vs_fpga": c.speedup_vs_fpga,
        "speedup_vs_cpu": c.speedup_vs_cpu,
        "energy_vs_fpga": c.energy_vs_fpga,
        "energy_vs_cpu": c.energy_vs_cpu,
    }


THREE_WAY_RATIOS = (
    Column("speedup_vs_fpga", "× U250", 2, "T_FPGA(𝓜) / T_NASCENT2(𝓜)"),
    Column("speedup_vs_cpu", "× CPU", 2, "T_CPU(𝓜) / T_NASCENT2(𝓜)"),
    Column("energy_vs_fpga", "E U250 / E N2", 2, "E_FPGA / E_NASCENT2"),
    Column("energy_vs_cpu", "E CPU / E N2", 2, "E_CPU / E_NASCENT2"),
)
"""The `three_way_row` ratios, after each table's own time columns."""
