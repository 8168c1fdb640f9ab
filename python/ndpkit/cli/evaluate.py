"""`ndpkit evaluate`: run real kernels, verify, profile, and predict them on platforms."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from ndpkit import evaluate as ev
from ndpkit.cli.common import (
    COMMAND_LINE,
    Format,
    FormatOption,
    bar_shown,
    bars_wanted,
    check_fraction,
    check_output_file,
    comma_list,
    emit,
    given_path,
    real_arg,
    size_flag,
    stderr,
    user_errors,
    whole_arg,
)
from ndpkit.cli.platforms import unpriced_host, unshipped_apps
from ndpkit.errors import SpecError
from ndpkit.hw import Platform
from ndpkit.kernels import expand, get_kernel
from ndpkit.runtime import Dataset, open_dataset
from ndpkit.runtime.dataset import MANIFEST, refuse_a_file_inside_a_data_set
from ndpkit.runtime.executor import STALL_TIMEOUT_S
from ndpkit.runtime.profiling import ByteProgress
from ndpkit.runtime.transfer import available_memory_bytes
from ndpkit.units import Kind, UnitError, format_si, parse

MIN_SIZE_BYTES = 2**20
"""Smallest --size: below it a kernel's measured rates are mostly fixed per-call costs (LC's
device part measures 0.004 GB/s on one record, 8 GB/s on 64 KiB, 29 GB/s on 1 MiB), and the
predictions extrapolate them to the paper's D (37 GiB for LC)."""
MAX_MODEL_BYTES = 2**60
"""Largest --model-size (1 EiB): beyond any server these models describe, and an infinite
one would make every figure inf or nan."""


def evaluate_cmd(
    apps: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="APPS",
            help="Apps (default: all nine; with --data, the data set's app): lc he knn2 knn6 "
            "knn8 (or knn) fft2d kmeans binarize sobel; also the other splits he-remap (the "
            "papers' HE) and knn2-topk knn6-topk knn8-topk. With --data, any app whose records "
            "have the data set's dtype and shape (knn8 and kmeans on lc's 8 float32 features) "
            "runs on it; any other is an error.",
        ),
    ] = None,
    platforms: Annotated[
        str,
        typer.Option(
            "--platforms", help="Comma-separated presets or platform files to model (one or more)."
        ),
    ] = ",".join(ev.DEFAULT_PLATFORMS),
    size: Annotated[
        str | None,
        typer.Option(
            "--size",
            help="Generated data per app, e.g. '8 MiB', '4 GiB' (with --data: the part of the "
            "data set that is profiled). At least 1 MiB: smaller samples measure fixed costs, "
            "not the kernel; at most an eighth of the free memory (K-Means a tenth, FFT2D a "
            "56th), as it is held in memory.  [default: 8 MiB]",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            help="Seed (≥ 0) of the generated data and the apps' parameters (default 0; with "
            "--data only the parameters, default: the data set's seed).",
            parser=whole_arg,
        ),
    ] = None,
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            parser=given_path,
            help="A data set from `ndpkit data generate/import` instead (.npy or Parquet "
            "shards); its shards' CRC-32s are checked, then it runs and is verified out of "
            "core, in bounded memory.",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            help="Worker processes for --data (≥ 1; at most one per device is used).",
            parser=whole_arg,
        ),
    ] = None,
    stall_timeout: Annotated[
        str | None,
        typer.Option(
            "--stall-timeout",
            help="With --data: how long a worker may read no chunk (stopped, or its storage "
            "not answering) before the run stops with an error naming the engine and shard "
            "(a time, e.g. '2 min'; default 10 min; 'never' waits for ever).",
        ),
    ] = None,
    verify_shards: Annotated[
        bool | None,
        typer.Option(
            "--verify-shards/--no-verify-shards",
            help="With --data: check every shard's CRC-32 against the manifest before running "
            "(default; reads the data set once more). With --no-verify-shards a shard changed "
            "since it was written goes unnoticed: the reference is computed from the same data.",
        ),
    ] = None,
    model_size: Annotated[
        str | None,
        typer.Option(
            "--model-size",
            help="D to model, up to 1 EiB (default: the paper's D for its apps); an iterative "
            "app (kmeans) is modelled reading it once per pass.",
        ),
    ] = None,
    split_tolerance: Annotated[
        float | None,
        typer.Option(
            "--split-tolerance",
            help="k-NN's splits: how much longer (a fraction ≥ 0, e.g. 0.05) the picked split "
            "may take than the fastest, for less energy (default 0), on a platform with "
            "engines.",
            parser=real_arg,
            show_default=False,
        ),
    ] = None,
    save_profiles: Annotated[
        Path | None,
        typer.Option(
            "--save-profiles",
            help="Write the measured profiles, as mapped onto the one platform given with "
            "--platforms, to this JSON file (a profile set for `ndpkit estimate/plan "
            "--profiles PATH`).",
        ),
    ] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Run, verify and profile each app on real data, then predict it on each platform.

    Each app's kernel runs on real data and is checked against an independent reference;
    its profile on this machine then predicts time, energy and plans on each platform.
    k-NN apps also run the device-side top-k split, and each platform says which split the
    planner picks."""
    with user_errors():
        names = expand(apps) if apps else None
        for name in names or ():
            get_kernel(name, source=f"{COMMAND_LINE}: APPS")  # fails here, before any work
        ev.check_each_app_once(names or [], source=COMMAND_LINE, field="APPS")
        arguments = _platforms(platforms)
        specs = ev.load_platforms(arguments, source=COMMAND_LINE, flag="--platforms")
        size_bytes = ev.DEFAULT_SIZE_BYTES if size is None else _size_bytes(size)
        model_bytes = None if model_size is None else _model_bytes(model_size)
        _check_seed(seed)
        tolerance = 0.0 if split_tolerance is None else split_tolerance
        check_fraction("--split-tolerance", tolerance, "e.g. 0.05")
        stall_timeout_s = _stall_timeout_s(stall_timeout)
        dataset = _dataset(data, workers, verify_shards, stall_timeout)
        if apps and dataset is not None:  # a group: its members that read the data set
            names = ev.expand_for(apps, dataset)
        apps_run = ev.apps_to_run(names, dataset)
        if split_tolerance is not None:
            _check_splits_picked(apps_run, specs)
        early = _unused_entries(arguments, list(specs.values()))
        early += _check_sample(size_bytes, dataset, apps_run, asked=size is not None)
        profiles_platform = _profiles_target(save_profiles, list(specs))
        if save_profiles is not None:
            if dataset is not None:
                _not_the_manifest(save_profiles, dataset)
            refuse_a_file_inside_a_data_set(
                save_profiles, "the profiles", source=COMMAND_LINE, field="--save-profiles"
            )
        with _progress(fmt) as (report, on_bytes), _out_of_memory(data is not None):
            runs = ev.evaluate(
                names,
                specs,
                size_bytes=size_bytes,
                seed=seed,
                data=dataset,
                workers=workers,
                stall_timeout_s=stall_timeout_s,
                model_bytes=model_bytes,
                progress=report,
                byte_progress=on_bytes,
                split_tolerance=tolerance,
                verify_shards=verify_shards is not False,
            )
        if save_profiles is not None and profiles_platform is not None:
            ev.save_profiles(runs, profiles_platform, save_profiles)
    clock = ev.clock_warnings(runs)
    for warning in (*clock, *(w for run in runs for w in run.warnings)):
        stderr().print(f"warning: {warning}", style="bold yellow", highlight=False, markup=False)
    # The run's own warnings (each app's are under it), for a reader of the JSON too.
    emit(ev.tables(runs), fmt, ev.document(runs) | {"warnings": [*early, *clock]})


def _check_splits_picked(apps: list[str], specs: dict[str, Platform]) -> None:
    """--split-tolerance changes which split is picked, so it must have one to pick: an app
    with other splits (k-NN's) on a platform with engines (without, the host runs every
    split whole). `evaluate lc --split-tolerance 0.5` changed nothing without a word, where
    `plan --tolerance` without --optimal is refused."""
    flag = "--split-tolerance"
    if not any(ev.split_variants(app) for app in apps):
        has = "has" if len(apps) == 1 else "have"
        raise SpecError(
            f"picks between an app's splits (k-NN's: knn2, knn6, knn8 and their -topk "
            f"splits), and {', '.join(apps)} {has} no other split",
            source=COMMAND_LINE,
            field=flag,
        )
    if all(spec.engines is None for spec in specs.values()):
        names = ", ".join(specs)
        has = "has" if len(specs) == 1 else "have"
        raise SpecError(
            f"picks a split on a platform with engines, and {names} {has} none (the host "
            "runs every split whole)",
            source=COMMAND_LINE,
            field=flag,
        )


def _unused_entries(arguments: list[str], specs: list[Platform]) -> list[str]:
    """A warning (printed at once, and returned) for each per-app engine entry of a
    platform file whose app ndpkit does not ship: evaluate runs only ndpkit's apps, so
    such an entry is never used, and `throughput.sobell` left Sobel at the scaled host rate
    without a word (only `platforms check` said so)."""
    used = "evaluate runs ndpkit's apps alone, so it is not used"
    # `load_platforms` keeps the arguments' order, one platform each
    warnings = [
        f"{argument}: {note}"
        for argument, spec in zip(arguments, specs, strict=True)
        for note in [*unshipped_apps(spec, used), *unpriced_host(spec)]
    ]
    for warning in warnings:
        stderr().print(f"warning: {warning}", style="bold yellow", highlight=False, markup=False)
    return warnings


def _profiles_target(path: Path | None, platforms: list[str]) -> str | None:
    """The platform whose profiles --save-profiles writes, checked before any work: the
    profiles are scaled to one platform's host and engines (α too, over its engines), so
    one platform must be given; and PATH must be a file in a directory that exists. (A
    split two apps share, as in `knn8 knn8-topk`, is one run and is saved once.)"""
    if path is None:
        return None
    flag = "--save-profiles"
    if len(platforms) != 1:
        raise SpecError(
            f"the profiles are mapped onto one platform's host and engines, and "
            f"{len(platforms)} are given ({', '.join(platforms)}); give one with --platforms",
            source=COMMAND_LINE,
            field=flag,
        )
    check_output_file(flag, path)
    if path.suffix.lower() != ".json":
        # `estimate --profiles` reads a file by its suffix: JSON under .toml would not load
        raise SpecError(
            f"profiles are saved as JSON: give a file name ending in .json, got {str(path)!r}",
            source=COMMAND_LINE,
            field=flag,
        )
    return platforms[0]


def _not_the_manifest(path: Path, dataset: Dataset) -> None:
    """--save-profiles onto the manifest of the data set --data reads (or a link to it)
    replaced it with a profile set after the run: the data set could no longer be opened."""
    manifest = dataset.path / MANIFEST
    if os.path.realpath(path) == os.path.realpath(manifest):
        raise SpecError(
            f"{str(path)!r} is the manifest of the data set {str(dataset.path)!r} (--data): "
            "the profiles would replace it, and the data set could no longer be read; give "
            "another file",
            source=COMMAND_LINE,
            field="--save-profiles",
        )


@contextmanager
def _out_of_memory(on_data: bool) -> Iterator[None]:
    """The memory check before the run is an estimate: an allocation that fails anyway is
    an error naming --size, not a traceback. On a data set (`on_data`), --size is only the
    profiled sample, and the rest is the apps' own working memory or their partials."""
    try:
        yield
    except MemoryError:
        advice = (
            "give a smaller --size (the sample profiled), or more memory: the apps' "
            "partials and references for a data set are held in memory"
            if on_data
            else "give a smaller --size (or run on a data set with --data)"
        )
        raise SpecError(
            f"ran out of memory: {advice}", source=COMMAND_LINE, field="--size"
        ) from None


def _platforms(text: str) -> list[str]:
    wanted = comma_list("--platforms", text)
    if not wanted:
        raise SpecError(
            f"names no platform, got {text!r}; give one or more, e.g. "
            f"{','.join(ev.DEFAULT_PLATFORMS)}",
            source=COMMAND_LINE,
            field="--platforms",
        )
    return wanted


def _size_bytes(text: str) -> int:
    # finite: the unit parser refuses inf and nan
    value = size_flag("--size", text, least=_si(MIN_SIZE_BYTES))
    if value < MIN_SIZE_BYTES:
        raise SpecError(
            f"{text!r} is too small to measure: below {_si(MIN_SIZE_BYTES)} the measured "
            "rates are mostly fixed per-call costs, which the predictions would extrapolate "
            f"to the paper's D; give at least {_si(MIN_SIZE_BYTES)}",
            source=COMMAND_LINE,
            field="--size",
        )
    return int(value)


def _model_bytes(text: str) -> float:
    value = size_flag("--model-size", text)
    if value > MAX_MODEL_BYTES:
        raise SpecError(
            f"must be at most 1 EiB, got {text!r}",
            source=COMMAND_LINE,
            field="--model-size",
        )
    return value


def _check_seed(seed: int | None) -> None:
    if seed is not None and seed < 0:
        raise SpecError(f"must be ≥ 0, got {seed}", source=COMMAND_LINE, field="--seed")


def _stall_timeout_s(text: str | None) -> float | None:
    """--stall-timeout in seconds (None: never); a bad one is an exit-2 error naming it."""
    if text is None:
        return STALL_TIMEOUT_S
    if text.strip().lower() == "never":
        return None
    try:
        seconds = parse(text, Kind.TIME)
    except UnitError as exc:
        flag = "--stall-timeout"
        raise SpecError(f"{exc}, or 'never'", source=COMMAND_LINE, field=flag) from None
    if seconds <= 0:
        raise SpecError(
            f"must be a time > 0 (e.g. '2 min'), or 'never'; got {text!r}",
            source=COMMAND_LINE,
            field="--stall-timeout",
        )
    return seconds


def _dataset(
    data: Path | None,
    workers: int | None,
    verify_shards: bool | None,
    stall_timeout: str | None = None,
) -> Dataset | None:
    """The data set (its manifest and shard sizes checked), after the flags that need one."""
    if data is None:
        shards_flag = "--verify-shards" if verify_shards else "--no-verify-shards"
        flags = {"--workers": workers, "--stall-timeout": stall_timeout, shards_flag: verify_shards}
        given = [flag for flag, value in flags.items() if value is not None]
        if given:
            raise SpecError(
                "only applies to --data (generated data runs in this process)",
                source=COMMAND_LINE,
                field=given[0],
            )
        return None
    if workers is not None and workers < 1:
        raise SpecError(f"must be ≥ 1, got {workers}", source=COMMAND_LINE, field="--workers")
    return open_dataset(data)


def _check_sample(
    size_bytes: int, dataset: Dataset | None, apps: list[str], *, asked: bool = True
) -> list[str]:
    """The measured sample must fit in memory, for the app that needs the most per byte
    (`Kernel.memory_per_input_byte`); one under MIN_SIZE_BYTES (a small data set) or below
    --size (a data set smaller than asked for) is measured anyway, with a warning (printed
    at once, and returned)."""
    sample_bytes = size_bytes if dataset is None else min(size_bytes, dataset.total_bytes)
    kernels = [get_kernel(n) for app in apps for n in (app, *ev.split_variants(app))]
    worst = max(kernels, key=lambda k: k.memory_per_input_byte)
    needed = sample_bytes * worst.memory_per_input_byte
    available = available_memory_bytes()
    if available is not None and needed > available:
        raise SpecError(
            f"{_si(sample_bytes)} is held in memory and {worst.name} needs about "
            f"{_si(needed)} for it; {_si(available)} is available. Give a smaller --size"
            + ("" if dataset else ", or make a data set (`ndpkit data generate`) for --data"),
            source=COMMAND_LINE,
            field="--size",
        )
    warnings = []
    if dataset is not None and sample_bytes < MIN_SIZE_BYTES:
        held, limit = _si_apart(sample_bytes, MIN_SIZE_BYTES)
        warnings.append(
            f"{dataset.path} holds only {held}: the profile measures mostly fixed costs "
            f"below {limit}, so the predictions are unreliable"
        )
    elif dataset is not None and size_bytes > dataset.total_bytes and asked:
        held, asked_for = _si_apart(dataset.total_bytes, size_bytes)
        warnings.append(
            f"--size {asked_for} is more than {dataset.path} holds: all of its {held} is profiled"
        )
    for warning in warnings:
        stderr().print(f"warning: {warning}", style="bold yellow", highlight=False, markup=False)
    return warnings


@contextmanager
def _progress(fmt: Format) -> Iterator[tuple[Callable[[str], None], ByteProgress | None]]:
    """A progress bar on stderr naming the step, with its bytes done of the total where the
    step streams data (a spinner otherwise), for a person at a terminal only: Rich ends a
    display on any other console with an empty line, which would come before an error."""
    console = stderr()
    if fmt is not Format.table or not bars_wanted(console):
        yield (lambda _: None), None
        return
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(binary_units=True),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        tasks = [bar.add_task("evaluating", total=None)]

        def step(message: str) -> None:
            # A new task: its bytes unknown until told (reset keeps the last total) and its
            # own elapsed time.
            bar.remove_task(tasks.pop())
            tasks.append(bar.add_task(message, total=None))

        def done(done_bytes: int, total_bytes: int) -> None:
            bar.update(tasks[-1], completed=done_bytes, total=total_bytes)

        with bar_shown(console):  # warnings said meanwhile go above the bar
            yield step, done


def _si(size_bytes: float) -> str:
    return format_si(size_bytes, Kind.SIZE, binary=True)


def _si_apart(smaller_bytes: int, larger_bytes: int) -> tuple[str, str]:
    """Both sizes as `_si` gives them, or to the byte where the rounded figures do not read
    as the smaller below the larger: 1,048,544 bytes is "1024 KiB", not below 1 MiB, and a
    --size of 3 MB and a data set 992 bytes short of it both read "2.86 MiB". The larger
    keeps its rounded figure where that is exact (1 MiB)."""
    smaller, larger = _si(smaller_bytes), _si(larger_bytes)
    if parse(smaller, Kind.SIZE) < parse(larger, Kind.SIZE):
        return smaller, larger
    if parse(larger, Kind.SIZE) != larger_bytes:
        larger = f"{larger_bytes:,} bytes"
    return f"{smaller_bytes:,} bytes", larger
