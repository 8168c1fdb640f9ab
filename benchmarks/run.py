"""ndpkit benchmarks: ratios against what a user would pick instead, in one run.

    make bench            # or: .venv/bin/python benchmarks/run.py [--quick]

Groups: kernel-throughput (the Rust histogram vs numpy.bincount), model (estimates
per second; the whole RANS/RFNS reproduction, in process and through the CLI),
in-storage (RISP: estimates per second, channel selection, the RISP reproduction),
sim (the discrete-event simulator: events/s against SimPy on the same RFNS model, the
full RFNS k-NN_8 case, memory against events, `ndpkit sweep` on 1 and 2 workers; the
scripts sim_vs_simpy.py and sim_scale.py print more detail).
Figures are recorded by hand in benchmarks/README.md with the machine they came from.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np

import sim_scale
import sim_vs_simpy
from ndpkit import _core
from ndpkit.hw import load_platform
from ndpkit.model import estimate
from ndpkit.plan import optimise
from ndpkit.plan.channels import plan_channels
from ndpkit.profile import load_profile
from ndpkit.reproduce import risp
from ndpkit.reproduce.rans_rfns import reproduce
from timing import best_of


def histogram(size_bytes: int, repeat: int) -> list[tuple[str, str]]:
    data = np.random.default_rng(0).integers(0, 256, size_bytes, dtype=np.uint8)
    t_numpy = best_of(lambda: np.bincount(data, minlength=256), repeat)
    t_rust = best_of(lambda: _core.histogram_u8(data), repeat)
    t_sum = best_of(lambda: data.sum(dtype=np.uint64), repeat)
    gb = size_bytes / 1e9
    return [
        ("histogram u8: numpy.bincount", f"{gb / t_numpy:.2f} GB/s"),
        ("histogram u8: ndpkit._core (Rust)", f"{gb / t_rust:.2f} GB/s"),
        ("histogram u8: Rust / numpy", f"{t_numpy / t_rust:.1f}x"),
        ("read bandwidth (numpy u8 sum, 1 thread)", f"{gb / t_sum:.2f} GB/s"),
    ]


def model(repeat: int) -> list[tuple[str, str]]:
    rfns, knn8 = load_platform("rfns"), load_profile("knn8")
    calls = 2000
    t_est = best_of(lambda: [estimate(rfns, knn8) for _ in range(calls)], repeat)
    t_opt = best_of(lambda: optimise(rfns, knn8), repeat)
    t_rep = best_of(reproduce, repeat)
    ndpkit = Path(sys.executable).parent / "ndpkit"
    cli = [str(ndpkit), "reproduce", "rans-rfns", "--format", "json"]
    t_cli = best_of(lambda: subprocess.run(cli, capture_output=True, check=True), repeat)
    return [
        ("estimate (RFNS, k-NN_8)", f"{calls / t_est:,.0f} per s"),
        ("optimise (RFNS, k-NN_8, 19 configurations + host)", f"{t_opt * 1e3:.1f} ms"),
        ("reproduce rans-rfns, in process (all tables)", f"{t_rep * 1e3:.1f} ms"),
        ("ndpkit reproduce rans-rfns --format json (CLI)", f"{t_cli:.2f} s"),
    ]


def in_storage(repeat: int) -> list[tuple[str, str]]:
    ssd, sobel = load_platform("risp-64ch"), load_profile("sobel", "risp")
    calls = 2000
    t_est = best_of(lambda: [estimate(ssd, sobel) for _ in range(calls)], repeat)
    t_plan = best_of(lambda: plan_channels(ssd, sobel, policy="host", rounding="floor"), repeat)
    t_budget = best_of(lambda: plan_channels(ssd, sobel, policy="both", budget_w=3.0), repeat)
    t_rep = best_of(risp.reproduce, repeat)
    ndpkit = Path(sys.executable).parent / "ndpkit"
    cli = [str(ndpkit), "reproduce", "risp", "--format", "json"]
    t_cli = best_of(lambda: subprocess.run(cli, capture_output=True, check=True), repeat)
    return [
        ("estimate (risp-64ch, Sobel, Eqs. 6-9)", f"{calls / t_est:,.0f} per s"),
        ("plan_channels host policy (fit + 64-cell search)", f"{t_plan * 1e3:.1f} ms"),
        ("plan_channels both, 3 W budget", f"{t_budget * 1e3:.1f} ms"),
        ("reproduce risp, in process (all tables)", f"{t_rep * 1e3:.1f} ms"),
        ("ndpkit reproduce risp --format json (CLI)", f"{t_cli:.2f} s"),
    ]


def sim(repeat: int, quick: bool) -> list[tuple[str, str]]:
    slow = min(repeat, 2)  # SimPy and the sweep take seconds per run
    rows = []
    for app, gib in (("knn8", 8 if quick else 130), ("he", 4 if quick else 32)):
        r = sim_vs_simpy.rate(sim_vs_simpy.spec_for(app, gib * 2**30), slow)
        rows += [
            (f"RFNS {app} {gib} GiB: core events/s", f"{r['rate_core'] / 1e6:.2f} M/s"),
            (f"RFNS {app}: SimPy events/s (all its events)", f"{r['rate_simpy'] / 1e6:.3f} M/s"),
            (f"RFNS {app}: core / SimPy, own event counts", f"{r['rate_ratio']:.0f}x"),
            (f"RFNS {app}: core / SimPy, same work (wall)", f"{r['wall_ratio']:.0f}x"),
        ]
    full = sim_scale.full_case(repeat)
    rows += [
        ("RFNS k-NN_8 130 GiB, simulate()", f"{full['wall_simulate_s']:.3f} s"),
        ("RFNS k-NN_8 130 GiB, events", f"{full['events']:,}"),
    ]
    for m in sim_scale.memory((0.25, 4.0)):
        rows.append(
            (
                f"RFNS k-NN_8 x{m['factor']}: RSS growth, pending events",
                f"{m['growth_kib']} KiB, {m['peak_pending_events']}",
            )
        )
    one, two = sim_scale.sweep_throughput((1, 2), slow, quick)
    rows += [
        (f"sweep {one['points']} points, 1 worker", f"{one['points_per_s']:.1f} per s"),
        (f"sweep {two['points']} points, 2 workers", f"{two['points_per_s']:.1f} per s"),
    ]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    args = parser.parse_args()
    repeat = 1 if args.quick else 5
    size = 16 * 2**20 if args.quick else 256 * 2**20
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    print(f"machine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"histogram input: {size / 2**20:.0f} MiB of random bytes; best of {repeat}")
    results = histogram(size, repeat) + model(repeat) + in_storage(repeat)
    for name, value in results + sim(repeat, args.quick):
        print(f"  {name:<52} {value:>14}")


if __name__ == "__main__":
    main()
