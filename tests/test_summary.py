"""Result objects' reprs are one short line of headline figures (`ndpkit.summary`), whatever
the size of what they hold: a dataclass's own repr of an `optimise` plan ran to 40,000
characters, a simulation's to 17,000, a data set's and a run's grew with their shards and
engines."""

from __future__ import annotations

import ast
import math
from pathlib import Path
from typing import Any

import pytest

from ndpkit.hw import load_platform
from ndpkit.kernels import get_kernel, kernel_names
from ndpkit.model import estimate
from ndpkit.nascent.des import simulate_devices, simulate_generic_sort, simulate_table_sort
from ndpkit.nascent.model import CpuPhases, TableJob, load_devices
from ndpkit.plan import compare_splits, optimise, plan
from ndpkit.profile import load_profile
from ndpkit.runtime import LocalExecutor, generate_dataset
from ndpkit.sim import simulate
from ndpkit.summary import DIGITS, summary

SHORT = 200
"""Characters: a line or two of a notebook."""


def shown(obj: object) -> tuple[str, dict[str, Any]]:
    """The class name and keyword values a summary repr reads back as (it is call syntax)."""
    text = repr(obj)
    assert "\n" not in text and len(text) <= SHORT, text
    call = ast.parse(text, mode="eval").body
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Name), text
    values = {}
    for keyword in call.keywords:
        assert keyword.arg is not None, text
        node = keyword.value
        # inf and nan are names in a repr, not literals
        values[keyword.arg] = (
            float(node.id) if isinstance(node, ast.Name) else ast.literal_eval(node)
        )
    return call.func.id, values


def agrees(values: dict[str, Any], expected: dict[str, Any]) -> None:
    """Floats to the summary's significant digits, everything else exactly."""
    assert values.keys() == expected.keys()
    for key, want in expected.items():
        got = values[key]
        if isinstance(want, float):
            assert isinstance(got, float), (key, got)
            assert got == pytest.approx(want, rel=10 ** (1 - DIGITS)) or (
                math.isnan(got) and math.isnan(want)
            ), (key, got, want)
        else:
            assert got == want, (key, got, want)


def test_a_summary_rounds_floats_and_keeps_them_floats() -> None:
    text = summary("Thing", name="x", count=3, ratio=2.0, time_s=1 / 3, rate=math.inf)
    assert text == "Thing(name='x', count=3, ratio=2.0, time_s=0.3333, rate=inf)"


def test_estimate_simulation_and_plans_show_their_headline_figures() -> None:
    rfns, he = load_platform("rfns"), load_profile("he")
    e = estimate(rfns, he)
    name, values = shown(e)
    assert name == "Estimate"
    agrees(
        values,
        {
            "platform": "rfns",
            "app": "he",
            "split": e.config.split,
            "engines_active": e.pipeline.engines_active,
            "bottleneck": e.bottleneck,
            "time_s": e.time_s,
            "energy_j": e.energy_j,
            "ee_mb_per_j": e.ee_mb_per_j,
        },
    )
    s = simulate(rfns, he)
    name, values = shown(s)
    assert name == "Simulation"
    facts = s.as_dict()
    agrees(
        values,
        {
            key: facts[key]
            for key in ("platform", "app", "split", "engines_active", "bottleneck", "time_s")
        }
        | {"energy_j": s.energy_j, "ee_mb_per_j": s.ee_mb_per_j, "model_time_s": s.model.time_s},
    )
    for p in (plan(rfns, he), optimise(rfns, he)):  # optimise's holds every candidate
        name, values = shown(p)
        assert name == "Plan"
        agrees(
            values,
            {
                "platform": "rfns",
                "app": "he",
                "method": p.method,
                "scheme": p.scheme,
                "engines_on": p.engines_on,
                "engines_total": p.engines_total,
                "net_saving_j": p.net_saving_j,
                "improvement_pct": p.improvement_pct,
            },
        )
    comparison = compare_splits(rfns, [load_profile("knn8"), he])
    name, values = shown(comparison)
    assert name == "SplitComparison"
    agrees(values, {"platform": "rfns", "chosen": comparison.chosen, "splits": ("knn8", "he")})


def test_a_data_set_and_a_run_show_their_size_not_every_shard_and_engine(
    tmp_path: Path,
) -> None:
    knn = get_kernel("knn2")
    ds = generate_dataset(knn, 40_000, 8, tmp_path / "knn2", shard_bytes=400)
    assert len(ds.shards) >= 80  # the dataclass's repr: 150 characters a shard
    name, values = shown(ds)
    assert name == "Dataset"
    agrees(
        values,
        {
            "path": str(ds.path),
            "app": "knn2",
            "devices": 8,
            "records": ds.records,
            "total_bytes": ds.total_bytes,
            "shards": len(ds.shards),
        },
    )
    run = LocalExecutor(workers=1).run(knn, ds, knn.params(seed=0))
    name, values = shown(run)
    assert name == "RunResult"
    agrees(
        values,
        {
            "passes": run.passes,
            "workers": 1,
            "bytes_in": run.bytes_in,
            "bytes_out": run.bytes_out,
            "alpha": run.alpha,
            "wall_s": run.wall_s,
        },
    )


def test_nascent2_simulations_show_their_times_not_every_machine_s_jobs() -> None:
    smartssd = load_devices().fpga("smartssd")
    job = TableJob(rows=1024, row_bytes=4096.0, encoded_key_bytes=2, dict_values=1024)
    one = simulate_table_sort(smartssd, job)
    generic = simulate_generic_sort(smartssd, 10_000, dict_values=100, width=8)
    for s, name in ((one, "TableSortSimulation"), (generic, "GenericSortSimulation")):
        shown_name, values = shown(s)
        assert shown_name == name
        agrees(
            values,
            {
                "device": "smartssd",
                "total_s": s.total_s,
                "energy_j": s.energy_j,
                "model_total_s": s.model.total_s,
            },
        )
    phases = CpuPhases(decode_s=0.0002, sort_s=0.0001, shuffle_s=0.0003)
    many = simulate_devices(12, job, cpu_phases=phases)  # docs/nascent2-simulation.md's
    name, values = shown(many)
    assert name == "DevicesSimulation"
    r = many.result
    agrees(
        values,
        {
            "devices": 12,
            "schedule": many.schedule,
            "nascent2_s": r.nascent2_s,
            "fpga_s": r.fpga_s,
            "cpu_s": r.cpu_s,
            "speedup_vs_fpga": r.speedup_vs_fpga,
            "speedup_vs_cpu": r.speedup_vs_cpu,
        },
    )


def test_a_kernel_shows_its_app_and_records() -> None:
    """Object's repr named the class and an address ('<ndpkit.kernels.knn.KnnRows object at
    0x…>', in an error about params too), not the app or the records it takes."""
    for app in kernel_names():
        kernel = get_kernel(app)
        name, values = shown(kernel)
        assert name == type(kernel).__name__
        agrees(
            values,
            {"name": app, "dtype": str(kernel.dtype), "record_shape": kernel.record_shape},
        )
