"""The simulator at full size (issue 5): the RFNS k-NN_8 case, memory against events, sweeps.

    .venv/bin/python benchmarks/sim_scale.py [--quick]

- full case: `ndpkit.sim.simulate(load_platform('rfns'), load_profile('knn8'))`, 130 GiB
  over 36 SSDs in 1 MiB chunks, every stage (SSD reads, engines, shared uplink, host part
  after the last partial): best wall of the whole call, of the Rust core alone
  (`_core.simulate_pipeline` on the same spec), and of the CLI as a process;
- memory: the same case at 1/4 … 4x the data, each in a fresh process. The high-water mark
  of the process (VmHWM) is reset through /proc/self/clear_refs right before the call, so
  "peak - before" is what the run itself added; the ru_maxrss delta is given beside it
  (it is 0 when the run stays under the peak that imports already set);
- sweep: `ndpkit.sim.sweep.sweep` (what `ndpkit sweep` calls) over rans,rfns x he,knn8 x
  every routable engine count x 256 KiB, 1 MiB, 4 MiB, on 1 and on 2 worker threads, and
  the CLI itself as a process. The process's CPU time over its wall time says how many
  cores the sweep kept busy, which shows whether the threads ran in parallel even when
  another program holds a core.

A last memory row runs 1/4 of the data with a Chrome trace on, which keeps every span
and so grows with the events: it shows the measurement sees growth when there is some.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from importlib import import_module
from pathlib import Path
from typing import Any

from ndpkit.hw import load_platform
from ndpkit.model import FULL_GEAR, Options
from ndpkit.profile import load_profile
from ndpkit.sim import SimOptions, simulate
from ndpkit.sim.spec import build_spec
from ndpkit.sim.sweep import grid, sweep
from timing import best_of as best

_core: Any = import_module("ndpkit._core")

MIB = 2**20
CHUNKS = (256 * 1024, MIB, 4 * MIB)
NDPKIT = Path(sys.executable).parent / "ndpkit"

CHILD = r"""
import json, resource, sys, time
from ndpkit.hw import load_platform
from ndpkit.profile import load_profile
from ndpkit.sim import SimOptions, simulate

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])  # KiB
    raise KeyError(key)

factor, trace = float(sys.argv[1]), sys.argv[2] == "trace"
rfns, knn8 = load_platform("rfns"), load_profile("knn8")
simulate(rfns, knn8, sim=SimOptions(data_bytes=2**30))  # imports and first call
before_rss, before_max = status("VmRSS"), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset VmHWM to the current RSS
start = time.perf_counter()
s = simulate(rfns, knn8, sim=SimOptions(data_bytes=knn8.data_bytes * factor, trace=trace))
wall = time.perf_counter() - start
print(json.dumps({
    "factor": factor,
    "trace": trace,
    "data_gib": s.data_bytes / 2**30,
    "chunks": s.chunks,
    "events": s.events,
    "peak_pending_events": s.peak_pending_events,
    "makespan_s": s.time_s,
    "wall_s": wall,
    "rss_before_kib": before_rss,
    "hwm_kib": status("VmHWM"),
    "maxrss_delta_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before_max,
}))
"""


def full_case(repeat: int) -> dict[str, Any]:
    rfns, knn8 = load_platform("rfns"), load_profile("knn8")
    s = simulate(rfns, knn8)
    spec = json.dumps(build_spec(rfns, knn8, FULL_GEAR, Options(), SimOptions()))
    cli = [str(NDPKIT), "simulate", "--platform", "rfns", "--app", "knn8", "--format", "json"]
    return {
        "data_gib": s.data_bytes / 2**30,
        "chunks": s.chunks,
        "events": s.events,
        "peak_pending_events": s.peak_pending_events,
        "makespan_s": s.time_s,
        "model_time_s": s.model.time_s,
        "wall_simulate_s": best(lambda: simulate(rfns, knn8), repeat),
        "wall_core_s": best(lambda: _core.simulate_pipeline(spec), repeat),
        "wall_cli_s": best(lambda: subprocess.run(cli, capture_output=True, check=True), repeat),
    }


def memory(factors: Sequence[float], trace: bool = False) -> list[dict[str, Any]]:
    """One fresh process per factor; `trace` records a Chrome trace, which does grow with
    the events (a check that the measurement sees growth when there is some)."""
    rows = []
    for factor in factors:
        args = [sys.executable, "-c", CHILD, str(factor), "trace" if trace else "-"]
        out = subprocess.run(args, capture_output=True, check=True, text=True)
        row = json.loads(out.stdout)
        row["growth_kib"] = row["hwm_kib"] - row["rss_before_kib"]
        rows.append(row)
    return rows


def sweep_throughput(
    workers: Sequence[int], repeat: int, quick: bool = False
) -> list[dict[str, Any]]:
    platforms = [load_platform("rans"), load_platform("rfns")]
    apps = [load_profile("he"), load_profile("knn8")]
    chunks = CHUNKS[-1:] if quick else CHUNKS
    points = grid(platforms, apps, [18, 36] if quick else None, chunks)
    sizes = ",".join(f"{c // 1024} KiB" for c in chunks)
    rows = []
    for w in workers:
        walls, cpus = [], []
        for _ in range(repeat):
            cpu0, start = time.process_time(), time.perf_counter()
            sweep(points, workers=w)
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu0)
        wall = min(walls)
        cpu = cpus[walls.index(wall)]
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "sweep.csv"
            cli = [str(NDPKIT), "sweep", "--workers", str(w), "--chunks", sizes, "--out", str(out)]
            if quick:
                cli += ["--engines", "18,36"]
            start = time.perf_counter()
            subprocess.run(cli, capture_output=True, check=True)
            cli_wall = time.perf_counter() - start
        rows.append(
            {
                "workers": w,
                "points": len(points),
                "wall_s": wall,
                "points_per_s": len(points) / wall,
                "cpu_s": cpu,
                "cores_busy": cpu / wall,
                "cli_wall_s": cli_wall,
            }
        )
    return rows


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    repeat = 1 if args.quick else args.repeat
    print(f"{os.cpu_count()} cores; {load()}")
    f = full_case(repeat)
    print(
        f"full RFNS k-NN_8: {f['data_gib']:.0f} GiB, {f['chunks']:,} chunks, "
        f"{f['events']:,} events, makespan {f['makespan_s']:.4f} s (model {f['model_time_s']:.4f})"
    )
    print(
        f"  best of {repeat}: simulate() {f['wall_simulate_s']:.3f} s, Rust core "
        f"{f['wall_core_s']:.3f} s, CLI process {f['wall_cli_s']:.2f} s"
    )
    factors = (0.25, 1.0) if args.quick else (0.25, 0.5, 1.0, 2.0, 4.0)
    print("memory (fresh process each; KiB):")
    print(
        "  factor       data GiB     chunks      events  pending  wall s   before   growth  maxrss+"
    )
    for r in [*memory(factors), *memory(factors[:1], trace=True)]:
        print(
            f"  {r['factor']:>6}{'+trace' if r['trace'] else '      '} {r['data_gib']:>10.1f}"
            f" {r['chunks']:>10,} {r['events']:>11,}"
            f" {r['peak_pending_events']:>8} {r['wall_s']:>7.3f} {r['rss_before_kib']:>8}"
            f" {r['growth_kib']:>8} {r['maxrss_delta_kib']:>8}"
        )
    print(f"sweep ({load()}):")
    rows = sweep_throughput((1, 2), repeat=1 if args.quick else 3, quick=args.quick)
    for r in rows:
        print(
            f"  --workers {r['workers']}: {r['points']} points in {r['wall_s']:.2f} s = "
            f"{r['points_per_s']:.1f} points/s, {r['cpu_s']:.2f} CPU s = {r['cores_busy']:.2f} "
            f"cores busy (CLI process {r['cli_wall_s']:.2f} s)"
        )
    print(f"  speedup 2 workers / 1: {rows[0]['wall_s'] / rows[1]['wall_s']:.2f}x; {load()}")


if __name__ == "__main__":
    main()
