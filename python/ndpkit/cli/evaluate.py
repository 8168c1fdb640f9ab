"""`ndpkit evaluate`: run real kernels, verify, profile, and predict them on platforms."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from ndpkit import evaluate as ev
from ndpkit.cli.common import Format, FormatOption, emit, size_flag, stderr, user_errors
from ndpkit.kernels import expand, get_kernel


def evaluate_cmd(
    apps: Annotated[
        list[str] | None,
        typer.Argument(help="Apps (default: all nine): lc he knn2 knn6 knn8 (or knn) fft2d ..."),
    ] = None,
    platforms: Annotated[
        str,
        typer.Option("--platforms", help="Comma-separated presets or platform files to model."),
    ] = ",".join(ev.DEFAULT_PLATFORMS),
    size: Annotated[
        str,
        typer.Option(
            "--size",
            help="Generated data per app, e.g. '8 MiB', '4 GiB' (with --data: the part of the "
            "data set that is profiled).",
        ),
    ] = "8 MiB",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the generated data.")] = 0,
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="A data set from `ndpkit data generate/import` instead (.npy or Parquet "
            "shards); it runs and is verified out of core, in bounded memory.",
        ),
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", min=1, help="Worker processes for --data.")
    ] = None,
    model_size: Annotated[
        str | None,
        typer.Option("--model-size", help="D to model (default: the paper's D for its apps)."),
    ] = None,
    split_tolerance: Annotated[
        float,
        typer.Option(
            "--split-tolerance",
            min=0.0,
            help="k-NN's splits: how much longer (a fraction, e.g. 0.05) the picked split may "
            "take than the fastest, for less energy (default 0).",
        ),
    ] = 0.0,
    fmt: FormatOption = Format.table,
) -> None:
    """Run each app's kernel on real data, verify it against an independent reference,
    profile it on this machine, and predict time, energy and plans on each platform.
    k-NN apps also run the device-side top-k split, and each platform says which split the
    planner picks."""
    with user_errors():
        names = expand(apps or list(ev.DEFAULT_APPS))
        for name in names:
            get_kernel(name)  # an unknown app fails here, before any work
        size_bytes = int(size_flag("--size", size))
        model_bytes = None if model_size is None else size_flag("--model-size", model_size)
        wanted = [p.strip() for p in platforms.split(",") if p.strip()]
        with Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=stderr(),
            transient=True,
            disable=fmt is not Format.table,
        ) as bar:
            task = bar.add_task("evaluating", total=None)
            runs = ev.evaluate(
                names,
                wanted,
                size_bytes=size_bytes,
                seed=seed,
                data=data,
                workers=workers,
                model_bytes=model_bytes,
                progress=lambda msg: bar.update(task, description=msg),
                split_tolerance=split_tolerance,
            )
    emit(ev.tables(runs), fmt, ev.document(runs))
