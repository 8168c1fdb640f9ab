"""The simulator's Rust core against SimPy running the same RFNS pipeline model (issue 5).

    .venv/bin/python benchmarks/sim_vs_simpy.py [--quick]

Both sides simulate one `PipelineSpec` (the dict `ndpkit.sim.spec.build_spec` hands the
Rust core), so they see the same SSDs, routes, rates, slot counts and uplink:

- an SSD process per SSD takes an input slot of its engine (a `simpy.Resource` with 2
  slots per SSD the engine serves), reads a chunk for bytes / read_bps and puts it in the
  engine's inbox (a `simpy.Store`); the slot is freed when the engine has computed it;
- an engine process takes the oldest chunk, takes one of its 2 output slots (a Resource),
  computes for bytes / engine_bps and puts the partial in its outbox (a Store);
- a DMA process per engine sends one partial at a time: it takes a host DRAM slot (a
  Resource, only when a streaming host part has work), moves raw / alpha bytes over the
  shared uplink, then frees the output slot and hands the partial to the host;
- the uplink is processor sharing with water-filling (max-min fair, a flow capped by its
  own port leaves the rest to the others), the same algorithm as
  crates/ndp-sim/src/link.rs: every time a flow joins or leaves, the link advances every
  flow's remaining bytes, recomputes the rates and schedules a `Timeout` for the earliest
  completion, stamped with an epoch; a timeout whose epoch is no longer current is stale
  and does nothing. Nothing here is approximated by FIFO;
- the host part: `cores` worker processes take partials from a Store (a streaming host
  part; each frees the DRAM slot when done), or one timeout of pending_raw / host_bps
  after the last partial lands (k-NN's global top-k, `after_all`).

Makespan is the time of the last arrival / host completion, as the Rust core reports it
(a stale uplink timeout may fire later and does not count). Jitter (service_cv) is not
modelled (the benchmark runs with 0) and neither are engine power states, which cost
energy but no time on RFNS (wake time 0).

Events are counted in two ways, both printed:

- each kernel's own count of the events it popped off its queue and handled. Ours is
  `Simulation.events` (the Rust scheduler's reads, computes, uplink wake-ups including
  stale ones, host completions); SimPy's is the number of `Environment.step` calls, i.e.
  every event it processed: timeouts, and the zero-delay events of resource requests and
  releases, store puts and gets and process starts. SimPy needs about four of its events
  for one of ours (a read is a request, a timeout and a put), so this events/s ratio
  credits SimPy with the extra bookkeeping;
- the timed events: the SimPy model creates a `Timeout` exactly where the Rust model
  schedules an event (read, compute, uplink wake-up, host part), and the benchmark checks
  that the two counts are equal. With one count for both, the events/s ratio is the ratio
  of wall times for the same simulated work.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import dataclass
from importlib import import_module
from typing import Any

import simpy

from ndpkit.hw import load_platform
from ndpkit.model import FULL_GEAR, HOST_ONLY, Options
from ndpkit.profile import load_profile
from ndpkit.sim import SimOptions, simulate
from ndpkit.sim.spec import build_spec
from ndpkit.sim.sweep import configuration

_core: Any = import_module("ndpkit._core")

GIB = 2**30


class CountingEnvironment(simpy.Environment):
    """An Environment that counts the events it processes (one per `step`)."""

    def __init__(self) -> None:
        super().__init__()
        self.steps = 0

    def step(self) -> None:
        self.steps += 1
        super().step()


class SharedLink:
    """Max-min fair processor sharing; the algorithm of crates/ndp-sim/src/link.rs."""

    def __init__(self, env: simpy.Environment, capacity_bps: float) -> None:
        self.env = env
        self.capacity = capacity_bps
        self.flows: list[list[Any]] = []  # [remaining, cap, rate, done event]
        self.last = 0.0
        self.epoch = 0
        self.wakeups = 0

    def transfer(self, nbytes: float, cap_bps: float) -> simpy.Event:
        """An event that succeeds when `nbytes` have crossed the link."""
        self._advance()
        done = self.env.event()
        self.flows.append([nbytes, cap_bps, 0.0, done])
        self._reshare()
        return done

    def _advance(self) -> None:
        now = self.env.now
        dt = now - self.last
        if dt > 0:
            for flow in self.flows:
                flow[0] = max(flow[0] - flow[2] * dt, 0.0)
        self.last = now

    def _reshare(self) -> None:
        self.epoch += 1
        if not self.flows:
            return
        left, sharing = self.capacity, len(self.flows)
        for flow in sorted(self.flows, key=lambda f: f[1]):
            flow[2] = min(flow[1], left / sharing)
            left -= flow[2]
            sharing -= 1
        first = min(self.flows, key=lambda f: f[0] / f[2])
        wake = self.env.timeout(first[0] / first[2], self.epoch)
        wake.callbacks.append(self._due)
        self.wakeups += 1

    def _due(self, wake: simpy.Event) -> None:
        if wake.value != self.epoch:
            return  # predicted before the last change of rates
        self._advance()
        first = min(self.flows, key=lambda f: f[0] / f[2])
        ending = [f for f in self.flows if f is first or f[0] <= f[2] * 1e-12]
        self.flows = [f for f in self.flows if not (f is first or f[0] <= f[2] * 1e-12)]
        self._reshare()
        for flow in ending:
            flow[3].succeed()


@dataclass
class SimPyResult:
    makespan_s: float
    events: int
    timeouts: int
    """Every Timeout created: reads, computes, host parts and uplink wake-ups."""
    uplink_wakeups: int
    wall_s: float


class Pipeline:
    """The RFNS pipeline of crates/ndp-sim/src/pipeline.rs, as SimPy processes."""

    def __init__(self, env: simpy.Environment, spec: dict[str, Any]) -> None:
        if spec["service_cv"] != 0 or spec["uplink"]["latency_s"] != 0:
            raise ValueError("the SimPy model has no jitter and no uplink latency")
        self.env = env
        self.spec = spec
        buffer = spec["engine_buffer_chunks"]
        ssds = spec["ssds"]
        host_split = ssds[0]["engine"] is None
        n_engines = len(ssds) if host_split else len(spec["engines"])
        ports = [0] * n_engines
        for i, ssd in enumerate(ssds):
            ports[i if host_split else ssd["engine"]] += 1
        self.slots_in = [simpy.Resource(env, buffer * max(p, 1)) for p in ports]
        self.slots_out = [simpy.Resource(env, buffer) for _ in range(n_engines)]
        self.inbox = [simpy.Store(env) for _ in range(n_engines)]
        self.outbox = [simpy.Store(env) for _ in range(n_engines)]
        self.link = SharedLink(env, spec["uplink"]["bps"])
        host = spec["host"]
        self.host_bps = host["bps"]
        self.cores = host["cores"]
        self.after_all = host["after_all"]
        streaming = self.host_bps is not None and not self.after_all
        self.dram = simpy.Resource(env, host["buffer_chunks"]) if streaming else None
        self.host_queue = simpy.Store(env)
        self.chunks_total = 0
        self.arrived = 0
        self.pending_raw = 0.0
        self.end = 0.0
        self.timeouts = 0
        chunk = spec["chunk_bytes"]
        for i, ssd in enumerate(ssds):
            e = i if host_split else ssd["engine"]
            count = math.ceil(ssd["bytes"] / chunk)
            self.chunks_total += count
            env.process(self.ssd(e, count, ssd["bytes"], ssd["read_bps"]))
        for e in range(n_engines):
            if host_split:
                bps, alpha, cap, wake = math.inf, 1.0, math.inf, 0.0
            else:
                spec_e = spec["engines"][e]
                if not spec_e["active"]:
                    continue
                bps, alpha = spec_e["bps"], spec_e["alpha"]
                cap = spec_e["link_bps"] or math.inf
                wake = spec_e["wake_s"]
            env.process(self.engine(e, bps, wake))
            env.process(self.dma(e, alpha, cap))
        if streaming:
            for _ in range(self.cores):
                env.process(self.host_core())

    def ssd(self, e: int, count: int, nbytes: float, read_bps: float) -> Any:
        chunk = self.spec["chunk_bytes"]
        last = nbytes - (count - 1) * chunk
        for left in range(count - 1, -1, -1):
            slot = self.slots_in[e].request()
            yield slot
            raw = last if left == 0 else chunk
            self.timeouts += 1
            yield self.env.timeout(raw / read_bps)
            self.inbox[e].put((raw, slot))

    def engine(self, e: int, bps: float, wake_s: float) -> Any:
        if wake_s > 0:
            self.timeouts += 1
            yield self.env.timeout(wake_s)
        inbox, outbox, slots_in, slots_out = (
            self.inbox[e],
            self.outbox[e],
            self.slots_in[e],
            self.slots_out[e],
        )
        while True:
            raw, slot_in = yield inbox.get()
            slot_out = slots_out.request()
            yield slot_out
            self.timeouts += 1
            yield self.env.timeout(raw / bps if math.isfinite(bps) else 0.0)
            slots_in.release(slot_in)
            outbox.put((raw, slot_out))

    def dma(self, e: int, alpha: float, cap: float) -> Any:
        outbox, slots_out = self.outbox[e], self.slots_out[e]
        while True:
            raw, slot_out = yield outbox.get()
            dram = None
            if self.dram is not None:
                dram = self.dram.request()
                yield dram
            yield self.link.transfer(raw / alpha, cap)
            self.arrive(raw, dram)
            slots_out.release(slot_out)

    def arrive(self, raw: float, dram: Any) -> None:
        now = self.env.now
        self.arrived += 1
        self.end = now
        if self.host_bps is None:
            return
        if self.after_all:
            self.pending_raw += raw
            if self.arrived == self.chunks_total:
                self.timeouts += 1
                done = self.env.timeout(self.pending_raw / self.host_bps)
                done.callbacks.append(self._host_phase_done)
            return
        self.host_queue.put((raw, dram))

    def _host_phase_done(self, _: simpy.Event) -> None:
        self.end = self.env.now

    def host_core(self) -> Any:
        assert self.dram is not None and self.host_bps is not None
        per_core = self.cores / self.host_bps
        while True:
            raw, dram = yield self.host_queue.get()
            self.timeouts += 1
            yield self.env.timeout(raw * per_core)
            self.end = self.env.now
            self.dram.release(dram)


def run_simpy(spec: dict[str, Any], count: bool = False) -> SimPyResult:
    """Build and run the SimPy model; `count` wraps `step` to count events (a little slower)."""
    start = time.perf_counter()
    env = CountingEnvironment() if count else simpy.Environment()
    model = Pipeline(env, spec)
    env.run()
    wall = time.perf_counter() - start
    assert model.arrived == model.chunks_total, "some chunks never reached the host"
    steps = env.steps if isinstance(env, CountingEnvironment) else -1
    timed = model.timeouts + model.link.wakeups
    return SimPyResult(model.end, steps, timed, model.link.wakeups, wall)


def run_core(spec: dict[str, Any]) -> tuple[float, int, float]:
    """(makespan, events, wall) of the Rust core on `spec` (JSON in, JSON out)."""
    text = json.dumps(spec)
    start = time.perf_counter()
    raw, _ = _core.simulate_pipeline(text)
    wall = time.perf_counter() - start
    result = json.loads(raw)
    return result["makespan_s"], result["events"], wall


def spec_for(app: str, data_bytes: float | None) -> dict[str, Any]:
    platform, profile = load_platform("rfns"), load_profile(app)
    return build_spec(platform, profile, FULL_GEAR, Options(), SimOptions(data_bytes=data_bytes))


CASES: list[tuple[str, str, int | str | None, str]] = [
    # (label, app, engines on / "host" / None = all, host mode)
    ("HE, 36 engines", "he", None, "auto"),
    ("HE, 18 engines (mux-2)", "he", 18, "auto"),
    ("k-NN_8, 36 engines, top-k after all", "knn8", None, "auto"),
    ("k-NN_8, 18 engines (mux-2)", "knn8", 18, "auto"),
    ("k-NN_8, 36 engines, host streaming", "knn8", None, "stream"),
    ("k-NN_8, host only (36 cores)", "knn8", "host", "auto"),
]


def equivalence(data_bytes: float) -> list[dict[str, Any]]:
    """`ndpkit.sim.simulate` against the SimPy model on RFNS: full gear and mux-2 (an
    engine serving two SSDs, the uplink shared unevenly), the host part after all partials
    and streaming (host DRAM slots and cores), and a host split (no engines)."""
    platform = load_platform("rfns")
    rows = []
    for label, app, engines_on, host_mode in CASES:
        if engines_on == "host":
            config = HOST_ONLY
        else:
            config = FULL_GEAR if engines_on is None else configuration(platform, int(engines_on))
        sim = SimOptions(data_bytes=data_bytes, host_mode=host_mode)  # type: ignore[arg-type]
        ours = simulate(platform, load_profile(app), config, Options(), sim)
        spec = build_spec(platform, load_profile(app), config, Options(), sim)
        theirs = run_simpy(spec, count=True)
        rows.append(
            {
                "case": label,
                "chunks": ours.chunks,
                "ndpkit_s": ours.time_s,
                "simpy_s": theirs.makespan_s,
                "difference": (theirs.makespan_s - ours.time_s) / ours.time_s,
                "events_core": ours.events,
                "events_simpy": theirs.events,
                "timed_simpy": theirs.timeouts,
            }
        )
    return rows


def rate(spec: dict[str, Any], repeat: int) -> dict[str, float]:
    """Events/s of both kernels on one spec: best wall of `repeat` SimPy runs and of
    10 x `repeat` runs of the core (milliseconds each, so more of them to see past noise)."""
    core = [run_core(spec) for _ in range(10 * repeat + 1)][1:]
    makespan, events, _ = core[0]
    t_core = min(w for _, _, w in core)
    counted = run_simpy(spec, count=True)
    t_simpy = min(run_simpy(spec).wall_s for _ in range(repeat))
    if abs(counted.makespan_s - makespan) > 1e-3 * makespan:
        raise AssertionError(f"makespans differ: core {makespan} s, SimPy {counted.makespan_s} s")
    # The core batches the uplink's changes of one instant into one prediction, so it
    # handles fewer timed events than SimPy's model for the same work (equal when no two
    # transfers change at one instant); the wall-time ratio compares the same work.
    return {
        "makespan_core_s": makespan,
        "makespan_simpy_s": counted.makespan_s,
        "events_core": events,
        "events_simpy": counted.events,
        "timeouts_simpy": counted.timeouts,
        "wall_core_s": t_core,
        "wall_simpy_s": t_simpy,
        "rate_core": events / t_core,
        "rate_simpy": counted.events / t_simpy,
        "rate_ratio": (events / t_core) / (counted.events / t_simpy),
        "rate_simpy_timed": counted.timeouts / t_simpy,
        "wall_ratio": t_simpy / t_core,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    repeat = 1 if args.quick else args.repeat
    check_bytes = (1 if args.quick else 4) * GIB
    print(f"equivalence on RFNS, {check_bytes / GIB:.0f} GiB in 1 MiB chunks:")
    print(
        f"  {'case':<38} {'ndpkit s':>10} {'SimPy s':>10} {'diff %':>8} {'events ours':>12}"
        f" {'SimPy timed':>12} {'SimPy all':>10}"
    )
    for r in equivalence(check_bytes):
        print(
            f"  {r['case']:<38} {r['ndpkit_s']:>10.6f} {r['simpy_s']:>10.6f}"
            f" {r['difference'] * 100:>+8.4f} {r['events_core']:>12,} {r['timed_simpy']:>12,}"
            f" {r['events_simpy']:>10,}"
        )
    cases = [("knn8", (8 if args.quick else 130) * GIB), ("he", (4 if args.quick else 32) * GIB)]
    for app, size in cases:
        r = rate(spec_for(app, size), repeat)
        print(
            f"rate: RFNS {app}, {size / GIB:.0f} GiB, 1 MiB chunks, best of {repeat} "
            f"(SimPy) and {10 * repeat} (core)"
        )
        print(f"  makespan: core {r['makespan_core_s']:.6f} s, SimPy {r['makespan_simpy_s']:.6f} s")
        print(
            f"  core : {r['events_core']:>10,} events in {r['wall_core_s']:.3f} s = "
            f"{r['rate_core'] / 1e6:.2f} M events/s"
        )
        print(
            f"  SimPy: {r['events_simpy']:>10,} events in {r['wall_simpy_s']:.2f} s = "
            f"{r['rate_simpy'] / 1e6:.3f} M events/s; {r['timeouts_simpy']:,} timed events = "
            f"{r['rate_simpy_timed'] / 1e6:.4f} M/s"
        )
        print(
            f"  core / SimPy, each kernel's own event count: {r['rate_ratio']:.0f}x; "
            f"same (timed) events, i.e. wall time for the same work: {r['wall_ratio']:.0f}x"
        )


if __name__ == "__main__":
    main()
