"""The discrete-event simulation (`ndpkit.nascent.des`) beside the model: the `--simulate`
columns of E6 and E7, and the simulated-against-modelled rows of `ndpkit simulate nascent2`.

Both call `simulate_devices` with the inputs the analytic row uses (the run's devices,
`ModelOptions`, CPU phases and host sort), so the simulation's own `model` is that row's
model and a difference is the simulation's alone: pipeline fill and drain, chunk
granularity, kernels sharing DRAM, jobs sharing the baselines' PCIe path
(docs/nascent2-simulation.md).

Example (E6's table on 12 SSDs, the CPU baseline reading only):
    >>> from ndpkit.nascent.devices import load_devices
    >>> from ndpkit.nascent.model import CpuPhases, ModelOptions, TableJob
    >>> from ndpkit.nascent.des import DesOptions
    >>> job = TableJob(rows=1024, row_bytes=4096.0, encoded_key_bytes=2, dict_values=1024)
    >>> sim = simulate(load_devices(), 12, job, ModelOptions(), DesOptions(), CpuPhases())
    >>> row = simulated_fields(sim)
    >>> row["sim_vs_model_pct"] > 0   # one chunk of fill on a table of four
    True
"""

from __future__ import annotations

from typing import Any

from ndpkit.nascent.des import (
    DesOptions,
    DevicesSimulation,
    Difference,
    JobRun,
    MachineRun,
    compare_with_model,
    simulate_devices,
)
from ndpkit.nascent.devices import DeviceSet
from ndpkit.nascent.system import CpuPhases, HostSort, ModelOptions, TableJob
from ndpkit.report import Column


def simulate(
    devices: DeviceSet,
    m: int,
    job: TableJob,
    options: ModelOptions,
    des: DesOptions,
    cpu_phases: CpuPhases,
    host_sort: HostSort = 0.0,
) -> DevicesSimulation:
    """`m` SSDs with `job` each on the shipped device names (smartssd, u250, cpu)."""
    return simulate_devices(
        m,
        job,
        devices=devices,
        cpu_phases=cpu_phases,
        options=options,
        host_sort=host_sort,
        des=des,
    )


def simulated_fields(sim: DevicesSimulation) -> dict[str, Any]:
    """The `--simulate` fields of an E6/E7 row."""
    n2 = Difference("nascent2_s", sim.result.nascent2_s, sim.model.nascent2_s)
    return {
        "sim_nascent2_s": sim.result.nascent2_s,
        "sim_fpga_s": sim.result.fpga_s,
        "sim_cpu_s": sim.result.cpu_s,
        "sim_speedup_vs_fpga": sim.result.speedup_vs_fpga,
        "sim_vs_model_pct": n2.difference_pct,
    }


def sim_columns(digits: int) -> tuple[Column, ...]:
    """The `simulated_fields` columns, times with `digits` decimals."""
    return (
        Column("sim_nascent2_s", "DES N2 (s)", digits, "simulated: the last SmartSSD to finish"),
        Column("sim_fpga_s", "DES U250 (s)", digits, "simulated: the U250's whole run"),
        Column("sim_cpu_s", "DES CPU (s)", digits, "simulated: the CPU's whole run"),
        Column("sim_speedup_vs_fpga", "DES × U250", 2, "simulated T_FPGA / T_NASCENT2"),
        Column(
            "sim_vs_model_pct",
            "DES vs model (%)",
            2,
            "NASCENT2: 100 × (simulated − modelled) / modelled",
        ),
    )


SIM_NOTE = (
    " DES columns: the discrete-event simulation (ndpkit.nascent.des) of the same inputs; "
    "see docs/nascent2-simulation.md."
)


# `ndpkit simulate nascent2`: one run, figure by figure -----------------------------------


def comparison_rows(sim: DevicesSimulation) -> list[dict[str, Any]]:
    """Per-phase times of one job on each machine, the whole run's times, energies and
    ratios, then link and kernel-pool utilisation and the event count; each row is
    {machine, quantity, simulated, model, difference_pct} (model None where the model
    has no such figure)."""
    n2_model, fpga_model, cpu_model = sim.job_models
    rows = [
        *_phase_rows("smartssd", sim.nascent2[0].jobs[:1], n2_model.phases_s()),
        *_phase_rows(sim.fpga.name, sim.fpga.jobs, fpga_model.phases_s()),
        *_phase_rows(sim.cpu.name, sim.cpu.jobs, cpu_model.phases_s()),
        *(_row("all", d) for d in compare_with_model(sim)),
    ]
    for ratio in ("speedup_vs_fpga", "speedup_vs_cpu", "energy_vs_fpga", "energy_vs_cpu"):
        d = Difference(ratio, getattr(sim.result, ratio), getattr(sim.model, ratio))
        rows.append(_row("all", d))
    for machine in (sim.nascent2[0], sim.fpga, sim.cpu):
        rows += _use_rows("smartssd" if machine is sim.nascent2[0] else machine.name, machine)
    rows.append(_only_simulated("all", "events", sim.events))
    return rows


def _phase_rows(
    machine: str, jobs: tuple[JobRun, ...], modelled: dict[str, float]
) -> list[dict[str, Any]]:
    """Each phase's mean over `jobs` (one job per SSD) against the model's one job."""
    per_job = [job.phases_s() for job in jobs]
    rows = []
    for phase, model_s in modelled.items():
        simulated = sum(p.get(phase, 0.0) for p in per_job) / len(per_job)
        rows.append(_row(machine, Difference(f"{phase}_s", simulated, model_s)))
    job_s = sum(job.total_s for job in jobs) / len(jobs)
    rows.append(_row(machine, Difference("job_s", job_s, sum(modelled.values()))))
    return rows


def _use_rows(machine: str, run: MachineRun) -> list[dict[str, Any]]:
    links = [
        _only_simulated(machine, f"{name} link utilisation", use.utilisation)
        for name, use in run.links.items()
        if use.bytes > 0
    ]
    pools = [
        _only_simulated(machine, f"{name} pool utilisation", use.utilisation)
        for name, use in run.pools.items()
        if use.busy_s > 0
    ]
    return [*links, *pools]


def _row(machine: str, d: Difference) -> dict[str, Any]:
    return {
        "machine": machine,
        "quantity": d.quantity,
        "simulated": d.simulated,
        "model": d.model,
        "difference_pct": d.difference_pct,
    }


def _only_simulated(machine: str, quantity: str, value: float) -> dict[str, Any]:
    return {
        "machine": machine,
        "quantity": quantity,
        "simulated": value,
        "model": None,
        "difference_pct": None,
    }


COMPARISON_COLUMNS = (
    Column("machine", "machine", None),
    Column("quantity", "quantity", None),
    Column("simulated", "simulated", 6),
    Column("model", "model", 6),
    Column("difference_pct", "diff (%)", 3, "100 × (simulated − model) / model"),
)
