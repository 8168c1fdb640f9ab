"""`ndpkit.sim.sweep`: each row's derived columns, recomputed from the row's own figures."""

from __future__ import annotations

import time
from typing import Any

import pytest

from ndpkit.errors import SpecError
from ndpkit.hw import load_platform
from ndpkit.model import Options
from ndpkit.profile import load_profile
from ndpkit.sim import SimOptions, simulate, simulation
from ndpkit.sim.sweep import configuration, grid, sweep


@pytest.mark.parametrize("units", ["binary", "decimal"])
def test_sweep_rows_derive_their_differences_and_efficiency_from_the_simulation(
    units: str,
) -> None:
    """time/energy differences are (simulated − modelled) / modelled x 100, and MB/J is the
    simulated run's D over its simulated joules, in the options' MB (2^20 or 10^6 bytes):
    not the model's figures, which differ from the simulation's on these rows."""
    profile = load_profile("lc")
    platforms = [load_platform("rfns"), load_platform("cns")]
    points = grid(platforms, [profile], [18, 36], [profile.data_bytes / 36 / 20])
    options = Options(units=units)  # type: ignore[arg-type]
    rows = sweep(points, options, SimOptions(), workers=1)
    assert len(rows) == 3  # rfns at 18 and 36 engines; cns once
    mb = 2**20 if units == "binary" else 1e6
    differ = 0
    for r in rows:
        assert r["time_difference_pct"] == pytest.approx(
            (r["time_s"] - r["model_time_s"]) / r["model_time_s"] * 100, rel=1e-9, abs=1e-9
        )
        assert r["energy_difference_pct"] == pytest.approx(
            (r["energy_j"] - r["model_energy_j"]) / r["model_energy_j"] * 100, rel=1e-9, abs=1e-9
        )
        assert r["ee_mb_per_j"] == pytest.approx(r["data_bytes"] / mb / r["energy_j"], rel=1e-6)
        differ += r["energy_j"] != pytest.approx(r["model_energy_j"], rel=1e-6)
    assert differ, (
        "the simulation and the model agree exactly here: the test cannot tell them apart"
    )


def test_a_sweep_is_the_same_for_the_same_seed_whatever_the_workers() -> None:
    """Every column but `wall_s` (the point's own run time, documented as varying) is the
    same for the same inputs and seed, on one thread or several; another seed draws other
    jitter."""
    points = grid(
        [load_platform("rans"), load_platform("cns")],
        [load_profile("he"), load_profile("lc")],
        [18, 27, 36],
        [2**20],
    )

    def rows(seed: int, workers: int) -> list[dict[str, object]]:
        sim = SimOptions(service_cv=0.3, seed=seed)
        return [
            # not the seed column either: another seed must change the figures themselves
            {k: v for k, v in r.items() if k not in ("wall_s", "seed")}
            for r in sweep(points, sim=sim, workers=workers)
        ]

    one = rows(7, 1)
    assert len(one) == 8 and one == rows(7, 2)
    assert one != rows(8, 2)


def test_a_jittered_sweep_runs_each_point_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`simulate` runs a jittered point far off the model again without jitter, for a note;
    a sweep, whose rows carry no notes, ran every such point twice (twice as long) for
    nothing. Its rows are the figures `simulate` gives, and record the options."""
    calls = []
    real = simulation._core.simulate_pipeline

    class Counting:
        @staticmethod
        def simulate_pipeline(spec: str) -> object:
            calls.append(spec)
            return real(spec)

    platform, profile = load_platform("sfns"), load_profile("he")
    sim = SimOptions(service_cv=0.3, seed=5, buffer_chunks=3)
    alone = simulate(platform, profile, sim=sim)
    assert any(n.startswith("jitter") for n in alone.notes), alone.notes  # a second run
    monkeypatch.setattr(simulation, "_core", Counting)
    (row,) = sweep(grid([platform], [profile], None, [sim.chunk_bytes]), sim=sim, workers=1)
    assert len(calls) == 1
    assert (row["time_s"], row["energy_j"]) == (alone.time_s, alone.energy_j)
    assert (row["service_cv"], row["seed"], row["buffer_chunks"]) == (0.3, 5, 3)
    assert alone.host_mode == "stream"  # HE's host part has no work
    assert (row["host_mode"], row["engine_power_off"]) == ("stream", "end")


def test_a_sweep_runs_one_thread_per_cpu_this_process_may_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under `taskset -c 0` (or a container's cpuset) the default was os.cpu_count(): every
    CPU of the machine, as threads on the one the process may use."""
    import ndpkit.sim.sweep as sweep_module  # noqa: PLC0415 (only here)

    seen: list[int] = []
    real = sweep_module._run_all

    def counting(points: Any, run: Any, workers: int, progress: Any) -> Any:
        seen.append(workers)
        return real(points, run, workers, progress)

    monkeypatch.setattr(sweep_module, "_run_all", counting)
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0}, raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 64)
    platform, profile = load_platform("sfns"), load_profile("he")
    sweep(grid([platform], [profile], None, [SimOptions().chunk_bytes]))
    assert seen == [1]


@pytest.mark.parametrize("workers", [0, -1, 1.5, "2", True])
def test_sweep_refuses_a_worker_count_by_name(workers: Any) -> None:
    """0 ran with one worker per CPU, -1 was ThreadPoolExecutor's ValueError."""
    profile = load_profile("lc")
    points = grid([load_platform("rfns")], [profile], [36], [64 * 2**20])
    with pytest.raises(SpecError) as e:
        sweep(points, workers=workers)
    assert e.value.field == "workers"


@pytest.mark.parametrize("engines", [18.5, "18", 18.0])
def test_configuration_refuses_an_engine_count_that_is_no_integer(engines: Any) -> None:
    with pytest.raises(SpecError) as e:
        configuration(load_platform("rans"), engines)
    assert e.value.field == "engines_on"


def test_sweep_refuses_a_progress_that_is_no_function_before_it_runs() -> None:
    """It was called only once the first point was done: "'int' object is not callable"."""
    profile = load_profile("lc")
    points = grid([load_platform("rfns")], [profile], [36], [64 * 2**20])
    with pytest.raises(SpecError) as e:
        sweep(points, progress=5)  # type: ignore[arg-type]
    assert e.value.field == "progress"


def test_a_sweep_keeps_the_grid_order_and_raises_a_point_s_error() -> None:
    """The points run on daemon threads (`_run_all`), not a ThreadPoolExecutor, whose
    threads a stopped sweep waited for: the rows still come back in the points' order when
    later points finish first, and a point's error reaches the caller."""
    import ndpkit.sim.sweep as sweep_module  # noqa: PLC0415 (only here)

    points: Any = [0.03, 0.02, 0.01, 0.0]  # each point's run time: the last ends first

    def run(seconds: float) -> dict[str, Any]:
        time.sleep(seconds)
        return {"seconds": seconds}

    seen: list[tuple[int, int]] = []
    rows = sweep_module._run_all(points, run, 4, lambda done, total: seen.append((done, total)))
    assert [row["seconds"] for row in rows] == points
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]

    def failing(seconds: float) -> dict[str, Any]:
        if seconds == 0.01:
            raise ZeroDivisionError("point 2")
        return run(seconds)

    with pytest.raises(ZeroDivisionError, match="point 2"):
        sweep_module._run_all(points, failing, 2, None)


@pytest.mark.parametrize("workers", [1, 2, 4])
def test_a_sweep_raises_the_first_failing_point_in_grid_order(workers: int) -> None:
    """With points on threads, the error raised was that of the point that failed first in
    time (here the last, which fails at once), so the message varied from run to run; it is
    the first in grid order, as ThreadPoolExecutor.map raised it."""
    import ndpkit.sim.sweep as sweep_module  # noqa: PLC0415 (only here)

    points: Any = [0.0, 0.05, 0.0, 0.0]  # point 1 fails late, points 2 and 3 at once

    def run(seconds: float) -> dict[str, Any]:
        index = points.index(seconds) if seconds else None
        time.sleep(seconds)
        if seconds:
            raise ValueError(f"point {index}")
        return {"seconds": seconds}

    calls: list[float] = []

    def failing(seconds: float) -> dict[str, Any]:
        calls.append(seconds)
        if len(calls) > 2 and not seconds:
            raise ZeroDivisionError("a later point")
        return run(seconds)

    with pytest.raises(ValueError, match="point 1"):
        sweep_module._run_all(points, failing, workers, None)
