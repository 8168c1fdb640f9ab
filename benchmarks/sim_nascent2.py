"""The NASCENT2 discrete-event simulation at full size (issue 6): 12 SSDs, each holding
TPC-H lineitem at SF 100, sorted on 12 SmartSSDs, on the U250 baseline and on the CPU.

    .venv/bin/python benchmarks/sim_nascent2.py [--sf 100] [--repeat 3] [--json]

For each sort key of E7 (O14: `l_orderkey`, a plain integer key; `l_shipdate`, a date
through the generic sort with 2-byte dictionary keys over its 2,526 values), one call of
`ndpkit.nascent.des.simulate_devices(12, job)` simulates all 14 machines together: 12
SmartSSDs, the U250 board with its 12 jobs one after another, and the CPU with its 12
jobs. The lineitem shape (rows, mean row bytes) comes from `ndpkit.tpc.table_shape`.
The CPU's own phases are given as zero (the CPU baseline adds 4 phases per job and no
chunks, so measured phases would not change the event count).

Printed per key: events, the best wall time of the whole Python call (model, spec, JSON,
Rust, results) and of the Rust core alone (`_core.simulate_nascent2` on the captured
spec), events per second for each, and the simulated makespans against the model's
(`compare_with_model`). Wall times are the best of `--repeat` runs after a warm-up; the
machine's load (`/proc/loadavg`) is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import time
from importlib import import_module
from pathlib import Path
from typing import Any

from ndpkit.nascent import des
from ndpkit.nascent.des import compare_with_model, simulate_devices
from ndpkit.nascent.model import TableJob
from ndpkit.tpc import table_shape
from timing import best_of as best

_core: Any = import_module("ndpkit._core")

DEVICES = 12
SHIPDATE_VALUES = 2526
"""TPC-H 4.2.3: l_shipdate spans 1992-01-02 … 1998-12-01, 2,526 dates (as E7)."""


def jobs(sf: float) -> dict[str, TableJob]:
    shape = table_shape("lineitem", sf)
    rows, row_bytes = int(shape.rows), float(shape.row_bytes)
    return {
        "l_orderkey": TableJob(rows=rows, row_bytes=row_bytes),
        "l_shipdate": TableJob(
            rows=rows,
            row_bytes=row_bytes,
            encoded_key_bytes=2,
            dict_values=SHIPDATE_VALUES,
            key_kind="generic",
        ),
    }


def captured_spec(job: TableJob) -> str:
    """The JSON spec `simulate_devices` hands the Rust core."""
    seen: list[str] = []
    real = des._core

    class Spy:
        def simulate_nascent2(self, spec: str) -> str:
            seen.append(spec)
            return str(real.simulate_nascent2(spec))

    des._core = Spy()
    try:
        simulate_devices(DEVICES, job)
    finally:
        des._core = real
    return seen[0]


def measure(key: str, job: TableJob, repeat: int) -> dict[str, Any]:
    sim = simulate_devices(DEVICES, job)
    whole_s = best(lambda: simulate_devices(DEVICES, job), repeat, warm_up=False)
    spec = captured_spec(job)
    core_s = best(lambda: _core.simulate_nascent2(spec), repeat, warm_up=False)
    differences = {d.quantity: d.difference_pct for d in compare_with_model(sim)}
    return {
        "key": key,
        "rows": job.rows,
        "table_gb": job.table_bytes / 1e9,
        "events": sim.events,
        "whole_wall_s": whole_s,
        "core_wall_s": core_s,
        "whole_events_per_s": sim.events / whole_s,
        "core_events_per_s": sim.events / core_s,
        "spec_kib": len(spec) / 1024,
        "nascent2_s": sim.result.nascent2_s,
        "fpga_s": sim.result.fpga_s,
        "nascent2_vs_model_pct": differences["nascent2_s"],
        "fpga_vs_model_pct": differences["fpga_s"],
        "shuffle": " / ".join(m.jobs[0].phases[-1].name for m in (sim.nascent2[0], sim.fpga)),
    }


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=100.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="one JSON object per key")
    args = parser.parse_args()
    print(f"load before: {load()}")
    started = time.perf_counter()
    rows = [measure(k, j, args.repeat) for k, j in jobs(args.sf).items()]
    print(f"load after: {load()} ({time.perf_counter() - started:.0f} s)")
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return
    print(f"lineitem SF {args.sf:g} on {DEVICES} SSDs; best of {args.repeat}")
    header = (
        f"{'key':<11} {'GB/SSD':>7} {'events':>11} {'call s':>7} {'core s':>7} "
        f"{'Mev/s call':>10} {'Mev/s core':>10} {'N2 Δ%':>7} {'U250 Δ%':>8}"
        "  shuffle (SmartSSD / U250)"
    )
    print(header)
    for r in rows:
        print(
            f"{r['key']:<11} {r['table_gb']:>7.1f} {r['events']:>11,} "
            f"{r['whole_wall_s']:>7.2f} {r['core_wall_s']:>7.2f} "
            f"{r['whole_events_per_s'] / 1e6:>10.2f} {r['core_events_per_s'] / 1e6:>10.2f} "
            f"{r['nascent2_vs_model_pct']:>7.3f} {r['fpga_vs_model_pct']:>8.3f}  {r['shuffle']}"
        )


if __name__ == "__main__":
    main()
