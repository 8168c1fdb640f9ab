"""`ndpkit evaluate`: run real kernels, verify them, profile them, and model them on platforms.

For each app: generate (or load) data, run the device part chunk by chunk and the host part
on the merged partials, check the answer against the kernel's independent reference,
measure the device and host parts on one core of this machine (`runtime.profiling`), and
feed that `Profile` to the models of every requested platform: predicted time, bottleneck,
energy, MB/J, the improvement over CNS, and the reconfiguration plan.

The modelled data size is the paper's D for the paper's apps (so predictions are at the
scale the platforms were built for), or `model_bytes` when given. A platform's own
per-engine throughput table wins over the scaled measurement (see `EngineScaling`), so on
the RANS/RFNS presets the paper's apps use the paper's engine rates.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ndpkit.errors import ModelError
from ndpkit.hw import Platform, load_platform
from ndpkit.kernels import Kernel, get_kernel, run_in_memory
from ndpkit.model import FULL_GEAR, HOST_ONLY, Estimate, Options, estimate
from ndpkit.plan import plan
from ndpkit.profile import load_profiles
from ndpkit.report import Column, Table
from ndpkit.runtime import LocalExecutor, open_dataset
from ndpkit.runtime.profiling import EngineScaling, Measurement, measure, to_profile

DEFAULT_APPS = ("lc", "he", "knn2", "knn6", "knn8", "fft2d", "kmeans", "binarize", "sobel")
DEFAULT_PLATFORMS = ("cns", "rans", "rfns")
DEFAULT_SIZE_BYTES = 8 * 2**20
"""Per app: keeps `ndpkit evaluate` (all apps) well under a minute on two cores."""
Progress = Callable[[str], None]


@dataclass(frozen=True)
class AppRun:
    """One app: what ran, whether it matched its reference, and what was measured."""

    app: str
    input_bytes: int
    run_s: float
    verified: bool
    measurement: Measurement
    model_bytes: float
    estimates: dict[str, Estimate | str] = field(default_factory=dict)
    plans: dict[str, dict[str, Any]] = field(default_factory=dict)


@cache
def published_size(app: str) -> float | None:
    """The paper's D for an app of the shipped profile sets (None if not a paper app)."""
    for name in ("rans-rfns", "risp"):
        apps = load_profiles(name).apps
        if app in apps:
            return apps[app].data_bytes
    return None


def evaluate(
    apps: Sequence[str] = DEFAULT_APPS,
    platforms: Sequence[str] = DEFAULT_PLATFORMS,
    *,
    size_bytes: int = DEFAULT_SIZE_BYTES,
    seed: int = 0,
    data: Path | None = None,
    workers: int | None = None,
    model_bytes: float | None = None,
    options: Options | None = None,
    scaling: EngineScaling | None = None,
    progress: Progress | None = None,
) -> list[AppRun]:
    """Run, verify, profile and model each app (or the app of the data set at `data`)."""
    report = progress or (lambda _: None)
    specs = {name: load_platform(name) for name in platforms}
    runs = []
    if data is not None:
        dataset = open_dataset(data)
        apps = [dataset.app]
    for app in apps:
        kernel = get_kernel(app)
        report(f"{app}: running and verifying")
        if data is None:
            values = kernel.generate(size_bytes, seed)
            params = kernel.params(seed)
            start = time.perf_counter()
            result = run_in_memory(kernel, values, params, _chunk_records(kernel))
            run_s = time.perf_counter() - start
        else:
            params = kernel.params(dataset.seed or seed)
            out = LocalExecutor(workers).run(kernel, dataset, params)
            result, run_s = out.result, out.wall_s
            # The references are in-memory libraries: verifying reads the data set back whole.
            values = dataset.read_all()
        kernel.check(result, kernel.reference(values, params))
        report(f"{app}: profiling")
        m = measure(kernel, values, params, repeat=2)
        d = model_bytes or published_size(app) or float(values.nbytes)
        app_run = AppRun(app, int(values.nbytes), run_s, True, m, d)
        for spec in specs.values():
            _model(app_run, spec, m, d, options, scaling)
        runs.append(app_run)
    return runs


def _chunk_records(kernel: Kernel) -> int:
    return max(1, (4 << 20) // max(kernel.record_bytes, 1))


def _model(
    run: AppRun,
    spec: Platform,
    m: Measurement,
    d: float,
    options: Options | None,
    scaling: EngineScaling | None,
) -> None:
    opts = options or (Options(units="decimal") if spec.is_in_storage else Options())
    profile = to_profile(m, data_bytes=d, scaling=scaling, target_host=spec.host)
    config = FULL_GEAR if spec.engines is not None else HOST_ONLY
    try:
        run.estimates[spec.name] = estimate(spec, profile, config, opts)
    except ModelError as exc:
        run.estimates[spec.name] = str(exc)
        return
    if spec.engines is None:
        return
    try:
        p = plan(spec, profile, opts)
    except ModelError as exc:
        run.plans[spec.name] = {"error": str(exc)}
        return
    run.plans[spec.name] = {
        "engines_on": p.engines_on,
        "engines_total": p.engines_total,
        "saving_pct": p.improvement_pct,
        "performance_loss_pct": p.performance_loss_pct,
    }


def tables(runs: list[AppRun]) -> list[Table]:
    """A verification/profile table and a per-platform prediction table."""
    measured = [
        {
            "app": r.app,
            "input_mib": r.input_bytes / 2**20,
            "verified": r.verified,
            "passes": r.measurement.passes,
            "alpha": r.measurement.alpha,
            "device_gb_per_s": r.measurement.device_bytes_per_s / 1e9,
            "host_part_gb_per_s": r.measurement.host_part_bytes_per_s / 1e9,
            "cycles_per_byte": r.measurement.cycles_per_byte,
            "run_s": r.run_s,
        }
        for r in runs
    ]
    predicted = []
    for r in runs:
        cns = r.estimates.get("cns")
        for name, e in r.estimates.items():
            row: dict[str, Any] = {"app": r.app, "platform": name, "model_gb": r.model_bytes / 1e9}
            if isinstance(e, str):
                row["note"] = e
            else:
                row.update(
                    time_s=e.time_s,
                    bottleneck=e.bottleneck,
                    energy_j=e.energy_j,
                    ee_mb_per_j=e.ee_mb_per_j,
                    speedup_vs_cns=cns.time_s / e.time_s if isinstance(cns, Estimate) else None,
                    ee_vs_cns=e.ee_mb_per_j / cns.ee_mb_per_j
                    if isinstance(cns, Estimate)
                    else None,
                )
                plan_row = r.plans.get(name, {})
                if "engines_on" in plan_row:
                    row["plan"] = f"{plan_row['engines_on']}/{plan_row['engines_total']} on"
                    row["plan_saving_pct"] = plan_row["saving_pct"] + 0.0  # no "-0.0"
            predicted.append(row)
    return [
        Table(
            "measured",
            "Measured on this machine (one core): verified against the reference",
            [
                Column("app", "app", None),
                Column("input_mib", "input (MiB)", 1),
                Column("verified", "verified", None),
                Column("passes", "passes", 0),
                Column("alpha", "α", 2, "device input / device output"),
                Column("device_gb_per_s", "device (GB/s)", 3, "device part, one core"),
                Column("host_part_gb_per_s", "host part (GB/s)", 3, "over the raw input"),
                Column("cycles_per_byte", "CPB", 2, "whole kernel, this host's clock"),
                Column("run_s", "run (s)", 3),
            ],
            measured,
        ),
        Table(
            "predicted",
            "Predicted on each platform (the paper's D for the paper's apps)",
            [
                Column("app", "app", None),
                Column("platform", "platform", None),
                Column("model_gb", "D (GB)", 2),
                Column("time_s", "time (s)", 3),
                Column("bottleneck", "bottleneck", None),
                Column("energy_j", "energy (J)", 1),
                Column("ee_mb_per_j", "MB/J", 2),
                Column("speedup_vs_cns", "× CNS (time)", 2),
                Column("ee_vs_cns", "× CNS (MB/J)", 2),
                Column("plan", "plan", None, "engines on after reconfiguration"),
                Column("plan_saving_pct", "saving (%)", 1),
                Column("note", "note", None),
            ],
            predicted,
        ),
    ]


def document(runs: list[AppRun]) -> dict[str, Any]:
    return {
        "apps": [
            {
                "app": r.app,
                "verified": r.verified,
                "run_s": r.run_s,
                "measurement": r.measurement.as_dict(),
                "model_bytes": r.model_bytes,
                "estimates": {
                    k: (v if isinstance(v, str) else v.as_dict()) for k, v in r.estimates.items()
                },
                "plans": r.plans,
            }
            for r in runs
        ]
    }
