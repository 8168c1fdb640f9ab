"""`ndpkit evaluate`: run real kernels, verify them, profile them, and model them on platforms.

For each app: generate (or load) data, run the device part chunk by chunk and the host part
on the merged partials, check the answer against the kernel's independent reference,
measure the device and host parts on one core of this machine (`runtime.profiling`), and
feed that `Profile` to the models of every requested platform: predicted time, bottleneck,
energy, MB/J, the improvement over CNS, and the reconfiguration plan.

The modelled data size is the paper's D for the paper's apps (so predictions are at the
scale the platforms were built for), or `model_bytes` when given. An iterative app (K-Means)
reads its data once per pass, and its measured rates are per byte streamed, so the models see
D x passes bytes (`AppRun.modelled_bytes`, the passes its run took); MB/J counts D once, in
decimal MB on every row (the models' own MB follow each platform's units: binary on the
servers, decimal on RISP), and the gain over CNS in MB/J is CNS's energy over the
platform's, for the same D. A platform's own
per-engine throughput table wins over the scaled measurement (see `EngineScaling`), so on
the RANS/RFNS presets the paper's apps use the paper's engine rates; elsewhere the
measurement is mapped onto the platform's engines (their clock and cores where its file
gives them), RISP's cells included. α is that of the run modelled: D spread over the
platform's engines, each sending its merged partials (`Measurement.alpha_for`). The
profiles each platform's models were given are kept (`AppRun.profiles`) and
`save_profiles` writes them as a profile set for `--profiles`.

**Splits.** An app with another split (k-NN's device-side top-k, `knn8-topk`) runs that split
too, on the same data, verified and profiled the same way; on every platform
`plan.compare_splits` then estimates both at the app's D and says which the planner picks
(least energy without a longer time), under the staged time basis unless `options` are
given (the paper's basis does not see the link to the host, which the splits change).

**Data sets.** With `data`, every shard's CRC-32 is first checked against the manifest
(`verify_shards`): the reference is computed from the same data, so without this check a
shard changed since it was written would go unnoticed. The kernels then run out of core
through `LocalExecutor`, verification streams the data set (`runtime.verify`: exact per chunk
for the per-record kernels, a merged per-chunk reference for k-NN, a streamed Lloyd for
K-Means), and profiling measures the first `size_bytes` of it, so memory stays bounded
whatever the data set's size. The apps default to the data set's own; any app whose records
have the data set's layout (dtype and record shape: k-NN_8 and K-Means on LC's 8 float32
features) may run on it instead, and any other is an error naming both layouts. A kernel
that can start from the data (K-Means' initial centres, `DataSeeded`) takes its parameters
from a sample of every shard (`Dataset.spread`), not from the seed's generated points. The
run time is the passes alone: starting the worker processes is timed apart (`startup_s`).

**Verified** means the check read every record the kernel ran on (`Verification.records`
against the input's); the method and what it read are reported beside it.

**Time.** `Estimate.time_s` follows the time basis of the options (the paper's by default:
the NDP and host stage times added, T_NDP + T_CPU). That basis leaves out the stages it does
not time, such as CNS's SSDs and link, so it can be shorter than D at the bottleneck's rate;
the predicted table shows that rate's time (D / Eq. (1) performance) beside it.
"""

from __future__ import annotations

import math
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ndpkit.errors import (
    ModelError,
    NdpkitError,
    SpecError,
    as_path,
    check_kinds,
    finite_number,
    function_or_none,
    true_or_false,
    whole_number,
)
from ndpkit.hw import Platform, load_platform
from ndpkit.hw.engine import Engine
from ndpkit.hw.loader import names_a_file
from ndpkit.kernels import GROUPS, Kernel, expand, get_kernel, kernel_names, run_in_memory
from ndpkit.model import FULL_GEAR, HOST_ONLY, Estimate, Options, estimate
from ndpkit.plan import plan
from ndpkit.plan.splits import (
    RULE,
    SPLIT_OPTIONS,
    SplitComparison,
    carry_engine_entries,
    compare_splits,
)
from ndpkit.profile import Profile, load_profiles
from ndpkit.profile import save_profiles as save_profile_set
from ndpkit.report import Column, Table
from ndpkit.runtime import Dataset, LocalExecutor, open_dataset
from ndpkit.runtime.dataset import (
    MANIFEST,
    ShardStamp,
    refuse_a_file_inside_a_data_set,
    unchanged,
)
from ndpkit.runtime.executor import STALL_TIMEOUT_S
from ndpkit.runtime.profiling import (
    DEFAULT_FREQUENCY_HZ,
    NO_CLOCK_NOTE,
    ByteProgress,
    EngineScaling,
    Measurement,
    measure,
    to_profile,
)
from ndpkit.runtime.verify import Chunks, Verification, verify_streaming
from ndpkit.summary import summary

DEFAULT_APPS = ("lc", "he", "knn2", "knn6", "knn8", "fft2d", "kmeans", "binarize", "sobel")
DEFAULT_PLATFORMS = ("cns", "rans", "rfns")
DEFAULT_SIZE_BYTES = 8 * 2**20
"""Per app: keeps `ndpkit evaluate` (all apps) well under a minute on two cores."""
Progress = Callable[[str], None]


@dataclass(frozen=True)
class KernelRun:
    """One kernel run on an app's data: how long, how it was verified, what was measured."""

    app: str
    run_s: float
    verification: Verification
    measurement: Measurement
    passes: int
    """How many times the run read the data (the profiled sample's, on generated data)."""
    input_records: int
    startup_s: float | None = None
    """Starting the worker processes (with `data`), left out of `run_s`."""
    warnings: tuple[str, ...] = ()
    """What a verified answer may still hide (K-Means clusters that ended empty)."""

    @property
    def verified(self) -> bool:
        """The reference was checked against the answer for every record the run read."""
        return self.verification.records == self.input_records


@dataclass(frozen=True)
class AppRun:
    """One app: what ran, whether it matched its reference, and what was measured."""

    app: str
    input_bytes: int
    run_s: float
    measurement: Measurement
    model_bytes: float
    """D: the data set modelled, read once per pass."""
    passes: int
    verification: Verification
    input_records: int
    startup_s: float | None = None
    """Starting the worker processes (with `data`), left out of `run_s`."""
    warnings: tuple[str, ...] = ()
    """What a verified answer may still hide (K-Means clusters that ended empty)."""
    estimates: dict[str, Estimate | str] = field(default_factory=dict)
    profiles: dict[str, list[Profile]] = field(default_factory=dict)
    """Per platform, the profiles its models were given: the app's, then its other splits'."""
    plans: dict[str, dict[str, Any]] = field(default_factory=dict)
    other_splits: list[KernelRun] = field(default_factory=list)
    """The app's other splits (k-NN's device-side top-k), run on the same data."""
    splits: dict[str, SplitComparison] = field(default_factory=dict)
    """Per platform, when the app has other splits: every split's estimate and the choice."""
    notes: dict[str, str] = field(default_factory=dict)
    """Per platform with engines, how the app's engine rate was derived: the platform's
    entry (which wins), another split's entry carried over (a top-k split's, from its paper
    split's), or this host's measurement scaled (`EngineScaling`, the rule named)."""
    engine_rate_from: dict[str, str] = field(default_factory=dict)
    """Per platform with engines: "platform", "carried" or "scaled" (see `notes`)."""

    def __repr__(self) -> str:  # the dataclass's: every platform's profiles, 19,000 characters
        return summary("AppRun", app=self.app, run_s=self.run_s, verified=self.verified)

    @property
    def modelled_bytes(self) -> float:
        """The bytes the models see: D once per pass."""
        return self.model_bytes * self.passes

    @property
    def verified(self) -> bool:
        """The reference was checked against the answer for every record the run read."""
        return self.verification.records == self.input_records

    def kernel_runs(self) -> list[KernelRun]:
        """The app's own split, then its other splits."""
        main = KernelRun(
            self.app,
            self.run_s,
            self.verification,
            self.measurement,
            self.passes,
            self.input_records,
            self.startup_s,
            self.warnings,
        )
        return [main, *self.other_splits]


@cache
def published_size(app: str) -> float | None:
    """The paper's D for an app of the shipped profile sets (None if not a paper app)."""
    for name in ("rans-rfns", "risp"):
        apps = load_profiles(name).apps
        if app in apps:
            return apps[app].data_bytes
    return None


def split_variants(app: str) -> list[str]:
    """The other splits `evaluate` compares an app with: knn8 → [knn8-topk], and
    knn8-topk → [knn8], the paper's split, whose platform entry its engine rate is carried
    from (`carry_engine_entries`): a rate scaled from this host alone is not comparable with
    the papers' entries, so a top-k split asked for on its own is modelled as it is beside
    its paper split.

    Only k-NN's splits: `compare_splits` gives a split without a platform entry the paper
    split's entry scaled by the measured ratio, which assumes the entry measured that split.
    HE's `he-remap` is the other way round (the papers measured it: it takes the `he` entry
    as it is, `with_papers_entries`), so it is left out."""
    kernel = get_kernel(app)
    if kernel.paper_app and not kernel.papers_split:
        return [kernel.paper_app]
    name = f"{app}-topk"
    return [name] if name in kernel_names() else []


def load_platforms(
    arguments: Sequence[str], *, source: str | None = None, flag: str = "platforms"
) -> dict[str, Platform]:
    """The platforms by name. Two arguments for one name (a preset and a file that names
    itself after it, or one platform given twice) are refused: results are keyed by name,
    so one platform's would silently replace the other's."""
    found: dict[str, tuple[str, Platform]] = {}
    for i, argument in enumerate(arguments):
        # [5] was a TypeError from pathlib
        what = "a preset's name or a platform file's path"
        check_kinds((f"{flag}[{i}]", argument, (str, os.PathLike), what), source=source)
        # "unknown platform 'CNS'" named no flag, where every other refusal of the
        # command's (`APPS: unknown app …`, `--platforms: names platform … twice`) does.
        spec = load_platform(argument, source=f"{source}: {flag}" if source else None)
        if spec.name in found:
            first = found[spec.name][0]
            if first == argument or _same_file(first, argument):
                why = f"names platform {spec.name!r} twice; give each platform once"
            else:
                why = (
                    f"{first!r} and {argument!r} are both named {spec.name!r}; give each "
                    "file a `name` of its own"
                )
            raise SpecError(why, source=source, field=flag)
        found[spec.name] = (argument, spec)
    return {name: spec for name, (_, spec) in found.items()}


def _same_file(a: str, b: str) -> bool:
    """Whether two platform arguments name one file ("a.toml" and "./a.toml")."""
    if not (names_a_file(a) and names_a_file(b)):
        return False
    return os.path.realpath(a) == os.path.realpath(b)


def evaluate(
    apps: Sequence[str] | None = None,
    platforms: Sequence[str] | Mapping[str, Platform] = DEFAULT_PLATFORMS,
    *,
    size_bytes: int = DEFAULT_SIZE_BYTES,
    seed: int | None = None,
    data: str | Path | Dataset | None = None,
    workers: int | None = None,
    stall_timeout_s: float | None = STALL_TIMEOUT_S,
    model_bytes: float | None = None,
    options: Options | None = None,
    scaling: EngineScaling | None = None,
    progress: Progress | None = None,
    byte_progress: ByteProgress | None = None,
    split_tolerance: float = 0.0,
    verify_shards: bool = True,
) -> list[AppRun]:
    """Run, verify, profile and model each app (default: all nine, or the data set's app).

    Without `data`, `size_bytes` of each app's data are generated in memory from `seed`
    (default 0). With `data`, the apps run out of core on it (each must have the data set's
    record layout), `size_bytes` is the sample that is profiled, and `seed` (default: the
    data set's) only makes the apps' parameters; a kernel that can start from the data
    (`DataSeeded`: K-Means' k-means++ centres) takes them from that sample. `verify_shards`
    checks every shard's CRC-32 against the manifest first. `platforms` are names or files
    (`load_platforms`), or platforms already loaded, each keyed by its name (the results
    are; another key is a SpecError). `progress` hears each step's name, `byte_progress`
    (bytes done, bytes total) how far a step that streams data
    has got: the CRC-32 check, the run and verification on `data`, and the profiling.
    `stall_timeout_s` is the executor's (`LocalExecutor`): how long a worker may make no
    progress on `data` before the run fails naming its shard. Bad numbers (a `model_bytes`
    of 0, a float `size_bytes`, a negative `seed`) and arguments of another kind (one app's
    name as `apps`, a number as `data`, `workers` without `data`) are a SpecError naming the
    argument, before any work."""
    _check_arguments(size_bytes, seed, model_bytes, split_tolerance)
    _check_kinds_of(apps, platforms, data, options, progress, verify_shards)
    if data is None and workers is not None:  # was silently unused, where the CLI refuses it
        raise SpecError(
            "only applies with data (generated data runs in this process)", field="workers"
        )
    report = _Reporter(progress or (lambda _: None), byte_progress)
    specs = dict(platforms) if isinstance(platforms, Mapping) else load_platforms(platforms)
    runs = []
    dataset = data if data is None or isinstance(data, Dataset) else open_dataset(data)
    names = apps_to_run(apps, dataset)
    # Made (not started) before the shards' CRC pass: a bad `workers` or
    # NDPKIT_MAPPED_BYTES was refused only after reading the whole data set.
    executor = LocalExecutor(workers, stall_timeout_s=stall_timeout_s)
    stamps = dataset.stamps() if dataset is not None else {}
    if dataset is not None and verify_shards:
        with unchanged(dataset, stamps):
            check_shards(dataset, report.step, report.bytes)
    # Each split is run once on the same data: `evaluate knn8 knn8-topk` measures knn8-topk
    # as knn8's other split and reuses that run as the app's own.
    done: dict[str, tuple[_Source, KernelRun]] = {}

    def run_once(name: str, source: _Source) -> KernelRun:
        earlier = done.get(name)
        if earlier is not None and _same_data(earlier[0], source):
            return earlier[1]
        k_run = _run(get_kernel(name), source, _params_seed(seed, dataset), report)
        done[name] = (source, k_run)
        return k_run

    with executor:
        for i, app in enumerate(names):
            # Only runs a later app will ask for are kept: each holds its data (generated,
            # or the profiled sample). Usually one app's at a time; a split asked for after
            # other apps (`knn2 lc knn2-topk`) keeps its data meanwhile.
            later = {n for a in names[i:] for n in (a, *split_variants(a))}
            done = {name: kept for name, kept in done.items() if name in later}
            kernel = get_kernel(app)
            if dataset is None:
                source: _Source = _InMemory(kernel.generate(size_bytes, seed or 0))
            else:
                source = _OnDisk(dataset, executor, size_bytes, stamps)
            main = run_once(app, source)
            others = [run_once(name, source) for name in split_variants(app)]
            d = (
                model_bytes
                if model_bytes is not None
                else published_size(kernel.paper_app or app) or float(source.input_bytes)
            )
            app_run = AppRun(
                app,
                source.input_bytes,
                main.run_s,
                main.measurement,
                d,
                main.passes,
                main.verification,
                main.input_records,
                main.startup_s,
                main.warnings,
                other_splits=others,
            )
            for spec in specs.values():
                _model_on(app_run, [main, *others], spec, options, scaling, split_tolerance)
            runs.append(app_run)
    if dataset is not None:  # the profiled sample is read after the last verification
        changed = dataset.changed_shard(stamps)
        if changed is not None:
            raise changed
    return runs


def _check_arguments(
    size_bytes: int, seed: int | None, model_bytes: float | None, split_tolerance: float
) -> None:
    """`evaluate`'s numbers, checked before any work, each refusal a SpecError naming the
    argument (as the command line's flags are): a `model_bytes` of 0 was taken for "not
    given" and modelled the paper's D, a float `size_bytes` ended in a TypeError, and a
    negative `seed` or `split_tolerance` failed only once an app had run."""
    whole_number(size_bytes, "size_bytes", "a whole number of bytes ≥ 1", least=1)
    if seed is not None:
        whole_number(seed, "seed", "an integer ≥ 0", least=0)
    if model_bytes is not None:
        what = "a finite number of bytes > 0 (None: the paper's D)"
        finite_number(model_bytes, "model_bytes", what, above=0)
    what = "a finite fraction ≥ 0 (e.g. 0.05)"
    finite_number(split_tolerance, "split_tolerance", what, least=0)


def _check_kinds_of(
    apps: object,
    platforms: object,
    data: object,
    options: object,
    progress: object,
    verify_shards: object,
) -> None:
    """`evaluate`'s other arguments, each of its kind, before any work: `apps="lc"` ran
    "unknown app 'l'" and `platforms="cns"` "unknown platform 'c'" (a str is a sequence of
    letters); a str path as `data` (or a number) ended in "'str' object has no attribute
    'dtype'"; `options=5` and `progress=5` failed only once an app had run, and
    `verify_shards="no"` was truthy. No apps, or no platforms, ran or modelled nothing
    without a word."""
    for name, given, what in (("apps", apps, "app"), ("platforms", platforms, "platform")):
        if given is None and name == "apps":
            continue
        # A collection (a list, a tuple, a set, a mapping of platforms): a generator would
        # be spent by the first look at it, and bytes are a collection of numbers.
        if isinstance(given, (str, bytes)) or not isinstance(given, Collection):
            one = f" ([{given!r}] for one)" if isinstance(given, str) else ""
            raise SpecError(f"must be a list of {what} names{one}, got {given!r}", field=name)
        if not given:
            default = "; None for the default" if name == "apps" else ""
            raise SpecError(f"names no {what}: give one or more{default}", field=name)
    if isinstance(platforms, Mapping):
        for name, spec in platforms.items():
            check_kinds((f"platforms[{name!r}]", spec, Platform, "a Platform (load_platform)"))
            # The results are keyed by the platform's own name: under another key, one
            # platform's were silently replaced by another's of that name (an rfns renamed
            # "cns" became the × CNS baseline), and {"mine": cns} reported "cns".
            if name != spec.name:
                raise SpecError(
                    f"is platform {spec.name!r}: key each platform by its name "
                    f"({{{spec.name!r}: …}}), which its results are reported under",
                    field=f"platforms[{name!r}]",
                )
    check_kinds(
        (
            "data",
            data,
            (str, os.PathLike, Dataset, type(None)),
            "a data set's path, a Dataset, or None",
        ),
        ("options", options, (Options, type(None)), "model Options, or None"),
    )
    function_or_none(progress, "progress", "a function progress(step_name)")
    true_or_false(verify_shards, "verify_shards")


def _same_data(a: _Source, b: _Source) -> bool:
    """Whether two sources hold the same records (one data set, or equal generated arrays:
    k-NN's splits generate the same points from one seed)."""
    if isinstance(a, _OnDisk) and isinstance(b, _OnDisk):
        return a.dataset is b.dataset and a.sample_bytes == b.sample_bytes
    if isinstance(a, _InMemory) and isinstance(b, _InMemory):
        return a.values is b.values or _equal_arrays(a.values, b.values)
    return False


def _equal_arrays(a: np.ndarray, b: np.ndarray, step_bytes: int = 8 * 2**20) -> bool:
    """Same dtype, shape and values, compared a slice at a time (`np.array_equal` makes a
    boolean array of the whole, a quarter of float32 data)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    flat_a, flat_b = a.reshape(-1), b.reshape(-1)
    step = max(1, step_bytes // max(a.itemsize, 1))
    return all(
        np.array_equal(flat_a[i : i + step], flat_b[i : i + step])
        for i in range(0, len(flat_a), step)
    )


def _model_on(
    app_run: AppRun,
    kernel_runs: list[KernelRun],
    spec: Platform,
    options: Options | None,
    scaling: EngineScaling | None,
    split_tolerance: float,
) -> None:
    """The app's estimate and plan on one platform, and its splits compared there."""
    opts = options or (Options(units="decimal") if spec.is_in_storage else Options())
    own_engines = spec.engines  # before the papers' entries are given to their splits
    spec = with_papers_entries(spec, [k.app for k in kernel_runs])
    profiles = [
        to_profile(
            k.measurement,
            data_bytes=app_run.model_bytes,
            passes=k.passes,
            scaling=scaling,
            target_host=spec.host,
            target_engine=spec.engines,
        )
        for k in kernel_runs
    ]
    engines = spec.engines
    for i, k in enumerate(kernel_runs):
        if engines is not None and get_kernel(k.app).papers_split and engines.has_rate_for(k.app):
            profiles[i] = _engine_entry(profiles[i], engines, engines.bandwidth_bytes_per_s(k.app))
    # The paper's split first: the others' engine rates are carried from its entry.
    paper = get_kernel(app_run.app).paper_app
    compared = sorted(profiles, key=lambda p: p.app != paper)  # a copy: profiles change below
    wired, carried = carry_engine_entries(spec, compared)
    if engines is not None and wired.engines is not None:
        for i, profile in enumerate(profiles):
            if profile.app in carried:
                rate = engines.bandwidth_bytes_per_s(compared[0].app) * carried[profile.app]
                profiles[i] = _engine_entry(profile, wired.engines, rate)
            elif carried and profile.app == compared[0].app:
                # The entry the others were carried from, which the models use for it
                # anyway: saved beside their carried rates, it gives `compare_splits` over
                # the saved set the measured ratio again (with the mapped host rate, the
                # ratio came out carried / mapped and the top-k split ~90x too slow). Its
                # power stays the platform's, as its own entry prices it (not
                # `_engine_entry`, which would save that power beside it).
                entry = engines.bandwidth_bytes_per_s(profile.app)
                rates = {**profile.engine_bytes_per_s, engines.kind: entry}
                profiles[i] = profile.with_changes(engine_bytes_per_s=rates)
    _model(app_run, wired, profiles[0], opts)
    if profiles[0].app in carried:
        app_run.engine_rate_from[spec.name] = "carried"
        app_run.notes[spec.name] = (
            f"engine rate: {spec.name}'s {compared[0].app} entry x {carried[profiles[0].app]:.3g}"
        )
    elif own_engines is not None:
        clock = kernel_runs[0].measurement.cpb_frequency_hz
        source, note = _engine_rate_source(spec.name, own_engines, app_run.app, scaling, clock)
        app_run.engine_rate_from[spec.name] = source
        app_run.notes[spec.name] = note
    if len(profiles) > 1:
        # The splits differ in what crosses the link to the host: on RISP that link is
        # only in the time with the host stage (R11), which Eq. (8) alone leaves out.
        host_stage = "with_host_stage" if spec.is_in_storage else opts.host_stage
        split_opts = options or replace(
            opts, time_basis=SPLIT_OPTIONS.time_basis, host_stage=host_stage
        )
        app_run.splits[spec.name] = compare_splits(
            spec, compared, split_opts, tolerance=split_tolerance
        )
    app_run.profiles[spec.name] = profiles


def _engine_rate_source(
    platform: str, engines: Engine, app: str, scaling: EngineScaling | None, clock_hz: float
) -> tuple[str, str]:
    """Where the models took `app`'s engine rate from on `platform` ("platform": its own
    entry, which wins; "scaled": this host's measurement through `EngineScaling`), and a
    note that says so and names the entry or the rule."""
    kernel = get_kernel(app)
    # A split the papers measured under another app's name (he-remap) has that app's entry
    # (`with_papers_entries`); any other split, only its own.
    papers = kernel.paper_app if kernel.papers_split else None
    entry = app if engines.has_rate_for(app) or papers is None else papers
    if engines.has_rate_for(entry):
        if entry not in engines.throughput:
            return "platform", f"engine rate: {platform}'s {entry} design (bytes_per_cycle)"
        return "platform", f"engine rate: {platform}'s {entry} entry"
    rule = (scaling or EngineScaling()).describe(engines, clock_hz)
    return "scaled", f"engine rate: this host's measurement, scaled: {rule}"


def _engine_entry(profile: Profile, engines: Engine, rate_bytes_per_s: float) -> Profile:
    """`profile` with the engine rate the models were given on a platform with `engines` (a
    platform entry, or one carried over to another split), and the per-app power they were
    given if the platform has one for the app, so that a saved profile set gives `estimate`,
    `plan` and `simulate` the same time and energy (`model.energy.with_profile_power`)."""
    kind = engines.kind
    changes: dict[str, Any] = {
        "engine_bytes_per_s": {**profile.engine_bytes_per_s, kind: rate_bytes_per_s}
    }
    watts = engines.power_active_by_app.get(profile.app)
    if watts is not None:
        changes["engine_power_active_w"] = {**profile.engine_power_active_w, kind: watts}
    return profile.with_changes(**changes)


def with_papers_entries(spec: Platform, apps: Sequence[str]) -> Platform:
    """`spec` with its engine entries for a papers' app (its rate, per-app power) given to
    the kernels that are the split the papers measured for it, where it has none of their
    own: the presets' `he` entry measured HE with the engine equalising the images, which
    is ndpkit's `he-remap`. Read from the platform, so that a file that overrides `he`
    changes both."""
    engines = spec.engines
    if engines is None:
        return spec
    throughput, power = dict(engines.throughput), dict(engines.power_active_by_app)
    for app in apps:
        kernel = get_kernel(app)
        entry = kernel.paper_app
        if not kernel.papers_split or engines.has_rate_for(app) or not engines.has_rate_for(entry):
            continue
        # As a throughput entry, a cell design's rate alone (bytes per cycle x clock, no
        # pipeline fill), as a top-k split is carried (`carry_engine_entries`): the rate is
        # what a saved profile holds, so `estimate --profiles` gives the same time.
        throughput[app] = engines.bandwidth_bytes_per_s(entry)
        if entry in power:
            power.setdefault(app, power[entry])
    if throughput == engines.throughput:
        return spec
    engines = engines.model_copy(update={"throughput": throughput, "power_active_by_app": power})
    return spec.model_copy(update={"engines": engines})


def save_profiles(runs: Sequence[AppRun], platform: str, path: str | Path) -> None:
    """The profiles the models were given on `platform` (every app and split), as a profile
    set file that `ndpkit estimate/plan --profiles PATH` reads: the host rates scaled to
    its host, the engine rates mapped onto its engines, α for D over them. A `platform` some
    run was not modelled on (a KeyError), or no runs (a set of no profiles, which no command
    could use), is a SpecError naming it, and nothing is written; so is a `path` inside a
    data set (the file would stop the data set's next `--overwrite`), and an argument of
    another kind (one AppRun for `runs`)."""
    # One AppRun was "'AppRun' object is not iterable", an app's name "'str' object has no
    # attribute 'profiles'", and a number as the platform "not modelled on platform 5".
    if isinstance(runs, AppRun):
        raise SpecError("must be a list of runs: save_profiles([run], …) for one", field="runs")
    if not isinstance(runs, (list, tuple)):
        raise SpecError(f"must be a list of AppRun (evaluate(…)), got {runs!r}", field="runs")
    others = [r for r in runs if not isinstance(r, AppRun)]
    if others:
        raise SpecError(
            f"must be a list of AppRun (evaluate(…)); it holds {others[0]!r}", field="runs"
        )
    check_kinds(("platform", platform, str, "a platform's name"))
    if not runs:
        raise SpecError("no runs to save: a profile set of no apps", field="runs")
    refuse_a_file_inside_a_data_set(as_path(path, "path"), "the profiles", field="path")
    missing = [r.app for r in runs if platform not in r.profiles]
    if missing:
        modelled = ", ".join(sorted({name for r in runs for name in r.profiles})) or "none"
        raise SpecError(
            f"{', '.join(missing)} {'was' if len(missing) == 1 else 'were'} not modelled on "
            f"platform {platform!r} (modelled on: {modelled}); evaluate on it to save its "
            "profiles",
            field="platform",
        )
    profiles: dict[str, Profile] = {}
    for profile in (p for r in runs for p in r.profiles[platform]):
        # A split two apps share (`knn8 knn8-topk`) was run once and mapped alike for both.
        earlier = profiles.setdefault(profile.app, profile)
        if earlier != profile:
            raise RuntimeError(f"two different profiles of {profile.app!r} for {platform!r}")
    source = f"ndpkit evaluate, measured on this machine and mapped onto platform {platform!r}"
    save_profile_set(list(profiles.values()), path, source=source, platform=platform)


@dataclass(frozen=True)
class _Reporter:
    """Where progress goes: each step's name, and the bytes a streaming step has done."""

    step: Progress
    bytes: ByteProgress | None = None

    def starting(self, message: str) -> ByteProgress | None:
        self.step(message)
        return self.bytes


def check_each_app_once(apps: Sequence[str], *, source: str = "apps", field: str = "") -> None:
    """Refuse an app named twice (also through a group: knn is knn2, knn6 and knn8): it
    would run twice and print two rows of the same results."""
    twice = sorted({app for app in apps if list(apps).count(app) > 1})
    if not twice:
        return
    groups = [
        f"the group {group} is {', '.join(members)}"
        for group, members in GROUPS.items()
        if set(members) & set(twice)
    ]
    hint = f" ({'; '.join(groups)})" if groups else ""
    raise SpecError(
        f"names {', '.join(map(repr, twice))} more than once{hint}; give each app once",
        source=source,
        field=field or None,
    )


def expand_for(names: Sequence[str], dataset: Dataset | None) -> list[str]:
    """App names with groups expanded (`kernels.expand`); with a data set, a group gives
    only its members that read the data set's records (`knn` on k-NN_8 data is knn8), or
    all of them if none does, so that the refusal (`apps_to_run`) names one."""
    out: list[str] = []
    for name in names:
        members = expand([name])
        if dataset is not None and name in GROUPS:
            members = [m for m in members if _reads(get_kernel(m), dataset)] or members
        out.extend(members)
    return out


def _reads(kernel: Kernel, dataset: Dataset) -> bool:
    """Whether `kernel` reads the data set's records as they are stored."""
    return kernel.dtype == dataset.dtype and tuple(kernel.record_shape) == dataset.record_shape


def apps_to_run(apps: Sequence[str] | None, dataset: Dataset | None) -> list[str]:
    """The apps to run: the default ones, or the data set's; a requested app must read the
    data set's records as they are stored, or its answer (and profile) would be garbage."""
    if apps is None:
        if dataset is None:
            return list(DEFAULT_APPS)
        if dataset.app not in kernel_names():  # a data set made through the Python API
            raise SpecError(
                f"app {dataset.app!r} is not one of ndpkit's ({', '.join(kernel_names())}); "
                "name the app to run on it",
                source=str(dataset.path / MANIFEST),
                field="app",
            )
        return [dataset.app]
    check_each_app_once(apps)
    if dataset is None:
        return list(apps)
    layout = f"{dataset.dtype} records of shape {dataset.record_shape}"
    for app in apps:
        kernel = get_kernel(app)
        if not _reads(kernel, dataset):
            raise SpecError(
                f"holds {dataset.app!r} data ({layout}); app {app!r} needs {kernel.dtype} "
                f"records of shape {tuple(kernel.record_shape)}, so it cannot run on it",
                source=str(dataset.path),
            )
    return list(apps)


def _params_seed(seed: int | None, dataset: Dataset | None) -> int:
    """The seed of the apps' parameters: the one given, else the data set's, else 0."""
    if seed is not None:
        return seed
    if dataset is not None and dataset.seed is not None:
        return dataset.seed
    return 0


def check_shards(
    dataset: Dataset, report: Progress, byte_progress: ByteProgress | None = None
) -> None:
    """Every shard's CRC-32 against the manifest (one `ShardError` naming every corrupt
    shard, as `data show --verify` does: stopped at the first, a copy with several needed a
    run, each reading the data set again, per shard). Reads the whole data set once, which
    takes a while on a big one: how far it got is told at the start and then every
    `PROGRESS_BYTES` or so, to `byte_progress` in bytes if given (`report` then hears the
    step once), else to `report` in per cent."""
    if byte_progress is not None:
        report("checking shard CRC-32s")
        dataset.verify(progress=byte_progress, every=True)
        return

    def step(checked_bytes: int, total_bytes: int) -> None:
        percent = 100 * checked_bytes / max(total_bytes, 1)
        report(f"checking shard CRC-32s: {percent:.0f}% of {total_bytes / 2**20:,.1f} MiB")

    dataset.verify(progress=step, every=True)


@runtime_checkable
class DataSeeded(Protocol):
    """A kernel whose parameters can start from the data (K-Means: k-means++ centres over a
    sample), rather than from the seed alone."""

    def params_for_data(self, sample: np.ndarray, seed: int) -> dict[str, Any]: ...


class _Source(ABC):
    """Where an app's data is: generated in memory, or a data set on disk."""

    input_bytes: int
    input_records: int

    @abstractmethod
    def params(self, kernel: Kernel, seed: int) -> dict[str, Any]:
        """The kernel's parameters for this data."""

    @abstractmethod
    def run(
        self, kernel: Kernel, params: dict[str, Any], progress: ByteProgress | None
    ) -> tuple[Any, float, int | None, float | None]:
        """(result, seconds of the run, passes (None: as many as profiling the sample
        takes), seconds starting worker processes, left out of the run's (None: none))."""

    @abstractmethod
    def verify(
        self, kernel: Kernel, params: dict[str, Any], result: Any, progress: ByteProgress | None
    ) -> Verification:
        """Check `result` against the kernel's reference; raises KernelMismatchError."""

    @abstractmethod
    def sample(self) -> np.ndarray:
        """The data that is profiled (on one core, in memory)."""


@dataclass
class _InMemory(_Source):
    values: np.ndarray

    def __post_init__(self) -> None:
        self.input_bytes = int(self.values.nbytes)
        self.input_records = len(self.values)

    def params(self, kernel: Kernel, seed: int) -> dict[str, Any]:
        """The generated data comes from the same seed: the seed's parameters fit it."""
        return kernel.params(seed)

    def run(
        self, kernel: Kernel, params: dict[str, Any], progress: ByteProgress | None
    ) -> tuple[Any, float, int | None, float | None]:
        """The profiled sample is this data, with the same parameters: the same passes."""
        start = time.perf_counter()
        result = run_in_memory(kernel, self.values, params, _chunk_records(kernel))
        return result, time.perf_counter() - start, None, None

    def verify(
        self, kernel: Kernel, params: dict[str, Any], result: Any, progress: ByteProgress | None
    ) -> Verification:
        """The data is in memory anyway: the reference runs on all of it at once."""
        kernel.check(result, kernel.reference(self.values, params))
        return Verification("whole", 1, 1, len(self.values))

    def sample(self) -> np.ndarray:
        return self.values


@dataclass
class _OnDisk(_Source):
    dataset: Dataset
    executor: LocalExecutor
    sample_bytes: int
    stamps: dict[Path, ShardStamp] = field(default_factory=dict)
    """The shards as they were before the first read (`Dataset.stamps`)."""
    _sample: np.ndarray | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.input_bytes = self.dataset.total_bytes
        self.input_records = self.dataset.records

    def params(self, kernel: Kernel, seed: int) -> dict[str, Any]:
        """A kernel that can start from the data does, from a sample of every shard: the
        data set was not made from the seed (an imported one least of all)."""
        if isinstance(kernel, DataSeeded):
            with unchanged(self.dataset, self.stamps):
                sample, records = self.dataset.spread_with_records(self.sample_bytes)
                try:
                    return kernel.params_for_data(sample, seed)
                except NdpkitError as exc:
                    named = _non_finite_named(kernel, self.dataset, sample, records)
                    if named is None:
                        raise
                    raise named from exc
        return kernel.params(seed)

    def run(
        self, kernel: Kernel, params: dict[str, Any], progress: ByteProgress | None
    ) -> tuple[Any, float, int | None, float | None]:
        """The passes over the whole data set, which its first bytes may not need. The time
        outside the passes (starting the worker processes, for the first app) is reported
        apart, so a first run compares with a warm one; the first pass in a new worker
        still imports the kernel's module."""
        with unchanged(self.dataset, self.stamps):
            out = self.executor.run(kernel, self.dataset, params, progress=progress)
        passes_s = sum(p.wall_s for p in out.pass_stats)
        return out.result, passes_s, out.passes, max(out.wall_s - passes_s, 0.0)

    def verify(
        self, kernel: Kernel, params: dict[str, Any], result: Any, progress: ByteProgress | None
    ) -> Verification:
        with unchanged(self.dataset, self.stamps):
            verification = verify_streaming(
                kernel, _counted(self.dataset, progress), params, result
            )
        # A shard rewritten in place after it was read (or before) changes no manifest and
        # may fail nothing: the answer and its reference would be of different data.
        changed = self.dataset.changed_shard(self.stamps)
        if changed is not None:
            raise changed
        return verification

    def sample(self) -> np.ndarray:
        if self._sample is None:
            with unchanged(self.dataset, self.stamps):
                self._sample = self.dataset.head(self.sample_bytes)
        return self._sample


def _non_finite_named(
    kernel: Kernel, dataset: Dataset, sample: np.ndarray, records: np.ndarray
) -> NdpkitError | None:
    """The first record of `sample` (`records`: their numbers in `dataset`) that holds a
    NaN or infinity, named by its shard and number in the data set, as the run names one
    (`executor._in_shard`); None if every value is finite. K-Means refused such a point of
    its starting sample as "sample point 27968", its place in the sample (taken from the
    start of every shard), not in the data set, and named no file: with
    --no-verify-shards nothing else did."""
    if not np.issubdtype(sample.dtype, np.floating) or not len(sample):
        return None
    bad_rows = np.flatnonzero(~np.isfinite(sample.reshape(len(sample), -1)).all(axis=1))
    if not bad_rows.size:
        return None
    row = int(bad_rows[0])
    record = int(records[row])
    return NdpkitError(
        f"{dataset.place_of(record)}: {kernel.name}: point {record} has a non-finite "
        f"coordinate ({sample[row].tolist()}); {kernel.name} needs finite points"
    )


def _counted(dataset: Dataset, progress: ByteProgress | None) -> Chunks:
    """`dataset.chunks`, telling `progress` the bytes walked; each new walk (a streamed
    Lloyd pass) adds the data set to the total."""
    if progress is None:
        return dataset.chunks
    tell = progress
    walked = [0, 0]  # bytes done, walks started

    def walk() -> Iterator[tuple[int, np.ndarray]]:
        walked[1] += 1
        total = dataset.total_bytes * walked[1]
        for offset, chunk in dataset.chunks():
            yield offset, chunk
            walked[0] += int(chunk.nbytes)
            tell(walked[0], total)

    return walk


def _run(kernel: Kernel, source: _Source, seed: int, report: _Reporter) -> KernelRun:
    """Run, verify (raises KernelMismatchError on a wrong answer) and profile one kernel."""
    params = source.params(kernel, seed)
    on_bytes = report.starting(f"{kernel.name}: running")
    result, run_s, passes, startup_s = source.run(kernel, params, on_bytes)
    on_bytes = report.starting(f"{kernel.name}: verifying")
    verification = source.verify(kernel, params, result, on_bytes)
    on_bytes = report.starting(f"{kernel.name}: profiling")
    m = measure(kernel, source.sample(), params, repeat=2, progress=on_bytes)
    return KernelRun(
        kernel.name,
        run_s,
        verification,
        m,
        m.passes if passes is None else passes,
        source.input_records,
        startup_s,
        _warnings(kernel, result),
    )


def clock_warnings(runs: Sequence[AppRun]) -> list[str]:
    """One warning if any measurement assumed this host's clock (it states none, and no
    perf counter counted cycles): the CPB, and every host and ARM/CPU engine rate mapped
    onto a platform (x f_target / f_here), then rest on `DEFAULT_FREQUENCY_HZ`, which only
    the JSON's measurement notes said."""
    assumed = sorted(
        {k.app for r in runs for k in r.kernel_runs() if _assumed_clock(k.measurement)}
    )
    if not assumed:
        return []
    return [
        f"this host states no clock (no cpufreq base_frequency, no '@ … GHz' in the "
        f"processor's name, no 'cpu MHz' in /proc/cpuinfo) and perf counted no cycles: "
        f"{DEFAULT_FREQUENCY_HZ / 1e9:.1f} GHz is assumed for the cycles per byte and for "
        f"scaling the measurements onto the platforms' hosts and engines "
        f"({', '.join(assumed)}), so those predictions are off by the ratio of this host's "
        f"real clock to {DEFAULT_FREQUENCY_HZ / 1e9:.1f} GHz"
    ]


def _assumed_clock(m: Measurement) -> bool:
    return any(note.startswith(NO_CLOCK_NOTE) for note in m.notes)


def _warnings(kernel: Kernel, result: Any) -> tuple[str, ...]:
    """A K-Means run can match its reference and still be a poor clustering: a cluster that
    ends empty keeps the centre it last had, and the pass count the models get comes from
    fewer clusters than asked for. (It said the centres were the starting ones: a cluster
    can also empty after earlier passes moved it, and keeps where it was moved to.)"""
    empty = getattr(result, "empty_clusters", None)
    if not empty:
        return ()
    return (
        f"{kernel.name}: {len(empty)} of the clusters ended empty (cluster"
        f"{'s' * (len(empty) > 1)} {', '.join(map(str, empty))}); an empty cluster keeps "
        "the centre it had before it emptied (its starting one if it never held a point)",
    )


def _chunk_records(kernel: Kernel) -> int:
    return max(1, (4 << 20) // max(kernel.record_bytes, 1))


def _model(run: AppRun, spec: Platform, profile: Profile, opts: Options) -> None:
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


PAPER_TIME = "the NDP and host stage times added (T_NDP + T_CPU), the models' time basis"
MB_BYTES = 10**6
GB_BYTES = 10**9
"""The evaluate tables' MB and GB on every row; each model reports in its platform's units
(binary MB on the servers, decimal on RISP), so the tables recompute from bytes and joules."""
GIB_BYTES = 2**30
"""The splits table's GB/s: the server presets' rates are the papers' binary GB/s."""
PREDICTED_NOTE = (
    "paper time: the papers' convention, the NDP and host stage times added (T_NDP + T_CPU; "
    "RISP: its own stages); the × CNS (time) column compares it. It leaves out the stages "
    "it does not time (the SSDs and the link), so it can be shorter than D/perf, the time at "
    "the Eq. (1) performance of the bottleneck stage; but a host-only (CNS) run, whose rate "
    "is measured here with its data in memory, takes at least the time its data needs to "
    "reach the host (the papers' T_CPU,CNS is such a run's wall time). The splits table "
    "times the device side at its slowest stage, so its times differ. × CNS (perf) is the "
    "papers' improvement (Table 9): the Eq. (1) performance over CNS's, i.e. CNS's D/perf "
    "over the platform's. An iterative app reads D once per pass: the models see "
    "D × passes (modelled), and D/perf is that at the Eq. (1) "
    "performance. MB/J is D (10^6 bytes) per joule on every row; × CNS (MB/J) is CNS's "
    "energy over the platform's."
)
"""Says which time the predicted table shows: without it, a link bottleneck beside a time
shorter than D over the link reads as an error."""


def predicted_rows(r: AppRun) -> list[dict[str, Any]]:
    """The predicted table's rows for one app: per platform, the model's time and energy
    for D x passes, MB/J for D in decimal MB, and the ratios to CNS at the same D."""
    cns = r.estimates.get("cns")
    base = cns if isinstance(cns, Estimate) else None
    rows = []
    for name, e in r.estimates.items():
        row: dict[str, Any] = {
            "app": r.app,
            "platform": name,
            "model_gb": r.model_bytes / GB_BYTES,
            "passes": r.passes,
            "modelled_gb": r.modelled_bytes / GB_BYTES,
        }
        if name in r.profiles:
            row["alpha"] = r.profiles[name][0].alpha
        if name in r.engine_rate_from:
            row["engine_rate_from"] = r.engine_rate_from[name]
        if isinstance(e, str):
            row["note"] = e
        elif name in r.notes:
            row["note"] = r.notes[name]
        if not isinstance(e, str):
            row.update(
                time_s=e.time_s,
                stream_s=_stream_s(e),
                bottleneck=e.bottleneck,
                energy_j=e.energy_j,
                ee_mb_per_j=_mb_per_j(r.model_bytes, e.energy_j),
                speedup_vs_cns=base.time_s / e.time_s if base else None,
                # The papers' Table 9 ratio: the paper time on CNS is its host part alone
                # (the link it is bound by is untimed), so the time ratio can invert it.
                performance_vs_cns=_stream_s(base) / _stream_s(e) if base else None,
                ee_vs_cns=_ratio(base.energy_j, e.energy_j) if base else None,
            )
            plan_row = r.plans.get(name, {})
            if "engines_on" in plan_row:
                row["plan"] = f"{plan_row['engines_on']}/{plan_row['engines_total']} on"
                row["plan_saving_pct"] = round(plan_row["saving_pct"], 9) + 0.0  # no "-0.0"
            elif "error" in plan_row:
                # The table showed "–" for the plan and its saving, and said nothing of why
                # (a channel plan over more than 4096 channels): only the JSON's plans did.
                why = f"no plan: {plan_row['error']}"
                row["note"] = f"{row['note']}; {why}" if row.get("note") else why
        rows.append(row)
    return rows


def _no_cns_note(runs: list[AppRun]) -> str:
    """Why the × CNS columns are empty, where they are: the columns showed "–" alone."""
    if any("cns" in r.estimates for r in runs):
        return ""
    return " The × CNS columns are empty: cns is not among the platforms; add it to compare."


def _ratio(numerator: float, denominator: float) -> float | None:
    """numerator / denominator; a platform whose powers are all 0 W prices its run at
    0 J: then infinitely better than a run that costs anything, and not comparable with
    another free one (None)."""
    if denominator > 0:
        return numerator / denominator
    return math.inf if numerator > 0 else None


def _mb_per_j(data_bytes: float, energy_j: float) -> float:
    return data_bytes / MB_BYTES / energy_j if energy_j > 0 else float("inf")


def tables(runs: list[AppRun]) -> list[Table]:
    """A verification/profile table, a per-platform prediction table, and (for apps with
    other splits) the comparison of the splits per platform."""
    # A split run once for two apps (knn8's other split and knn8-topk itself) is one row.
    listed: set[tuple[str, int]] = set()
    measured = []
    for r in runs:
        for k in r.kernel_runs():
            if (k.app, id(k.measurement)) not in listed:
                listed.add((k.app, id(k.measurement)))
                measured.append(_measured_row(k, r.input_bytes))
    predicted = [row for r in runs for row in predicted_rows(r)]
    found = [
        Table(
            "measured",
            "Measured on this machine (one core): verified against the reference",
            [
                Column("app", "app", None),
                Column("input_mib", "input (MiB)", 1),
                Column("verified", "verified", None, "the check covered every record run"),
                Column("check", "check", None, "how the reference was applied"),
                Column("checked_records", "records checked", 0, "what the check read"),
                Column("passes", "passes", 0),
                Column(
                    "alpha",
                    "α",
                    2,
                    "the profiled sample as one device: bytes read / bytes sent (merged)",
                ),
                Column("device_gb_per_s", "device (GB/s)", 3, "device part, one core"),
                Column("host_part_gb_per_s", "host part (GB/s)", 3, "over the raw input"),
                Column("cycles_per_byte", "CPB", 2, "whole kernel"),
                Column(
                    "cpb_source",
                    "CPB from",
                    None,
                    "perf: counted cycles; clock: seconds × the documented frequency",
                ),
                Column("run_s", "run (s)", 3, "the passes, worker processes already started"),
                Column("startup_s", "start-up (s)", 3, "starting the worker processes (--data)"),
            ],
            measured,
        ),
        Table(
            "predicted",
            "Predicted on each platform (the paper's D for the paper's apps; GB = 10^9 and "
            "MB = 10^6 bytes on every row)",
            [
                Column("app", "app", None),
                Column("platform", "platform", None),
                Column("model_gb", "D (GB)", 2, "the data set, 10^9 bytes"),
                Column("passes", "passes", 0, "reads of D the run took"),
                Column("modelled_gb", "modelled (GB)", 2, "D × passes: the bytes modelled"),
                Column("alpha", "α", 2, "device input / output, D over this platform's engines"),
                Column("time_s", "paper time (s)", 3, PAPER_TIME),
                Column("stream_s", "D/perf (s)", 3, "modelled bytes at the Eq. (1) performance"),
                Column("bottleneck", "bottleneck", None),
                Column("energy_j", "energy (J)", 1),
                Column("ee_mb_per_j", "MB/J", 2, "D in 10^6 bytes per joule"),
                Column("speedup_vs_cns", "× CNS (time)", 2),
                Column(
                    "performance_vs_cns",
                    "× CNS (perf)",
                    2,
                    "Eq. (1) performance over CNS's (the papers' Table 9 ratio)",
                ),
                Column("ee_vs_cns", "× CNS (MB/J)", 2, "CNS's energy / this platform's"),
                Column("plan", "plan", None, "engines on after reconfiguration"),
                Column("plan_saving_pct", "saving (%)", 2),
                Column("note", "note", None),
            ],
            predicted,
            note=PREDICTED_NOTE + _no_cns_note(runs),
        ),
    ]
    # knn8 and knn8-topk asked for together compare the same two runs: listed once.
    compared: set[tuple[str, frozenset[str]]] = set()
    split_rows = []
    for r in runs:
        for c in r.splits.values():
            key = (c.platform, frozenset(s.app for s in c.splits))
            if key not in compared:
                compared.add(key)
                split_rows.append(_split_row(r, c))
    if split_rows:
        found.append(
            Table(
                "splits",
                f"Splits compared on each platform at full gear (time basis: the device side at "
                f"its slowest stage, then the host part; GiB = 2^30 and MB = 10^6 bytes on every "
                f"row); the planner picks the {RULE}",
                [
                    Column("app", "app", None),
                    Column("platform", "platform", None),
                    Column("split", "split", None),
                    Column("alpha", "α", 1, "device input / device output"),
                    Column("performance_gib_per_s", "GiB/s", 2, "Eq. (1) performance"),
                    Column("bottleneck", "bottleneck", None),
                    Column("time_s", "time (s)", 3),
                    Column("energy_j", "energy (J)", 1),
                    Column("ee_mb_per_j", "MB/J", 2, "D in 10^6 bytes per joule"),
                    Column("picked", "picked", None, marks=("✓", "")),
                    Column("note", "note", None),
                ],
                [row for rows in split_rows for row in rows],
            )
        )
    return found


def _stream_s(e: Estimate) -> float:
    """D at the Eq. (1) performance: the bottleneck stage's time for the whole data."""
    rate = e.performance_bytes_per_s
    return e.data_bytes / rate if rate > 0 else float("inf")


def _measured_row(k: KernelRun, input_bytes: int) -> dict[str, Any]:
    m = k.measurement
    return {
        "app": k.app,
        "input_mib": input_bytes / 2**20,
        "verified": k.verified,
        "check": k.verification.method,
        "checked_records": k.verification.records,
        "passes": k.passes,  # the run's, which `run_s` covers (a --data sample may converge sooner)
        "alpha": m.alpha,
        "device_gb_per_s": m.device_bytes_per_s / 1e9,
        "host_part_gb_per_s": m.host_part_bytes_per_s / 1e9,
        "cycles_per_byte": m.cycles_per_byte,
        "cpb_source": m.cpb_source,
        "run_s": k.run_s,
        "startup_s": k.startup_s,
    }


def _split_row(r: AppRun, comparison: SplitComparison) -> list[dict[str, Any]]:
    """The comparison's rows, in the table's units; the note says why a split was picked
    (or none was), an error, or how a split's engine rate was derived."""
    estimates = {s.app: s.estimate for s in comparison.splits}
    rows = []
    for row in comparison.rows():
        picked = row.pop("chosen")
        notes = [row.pop("note", None)]
        if picked or comparison.chosen is None:
            notes.append(comparison.reason)
        notes.append(comparison.note(row["split"]))
        note = "; ".join(n for n in notes if n)
        e = estimates[row["split"]]
        if e is not None:
            del row["performance_gb_per_s"]  # in the platform's units
            row["performance_gib_per_s"] = e.performance_bytes_per_s / GIB_BYTES
            row["ee_mb_per_j"] = _mb_per_j(r.model_bytes, e.energy_j)
        rows.append({"app": r.app, **row, "picked": bool(picked), "note": note})
    return rows


def _split_json_rows(r: AppRun, comparison: SplitComparison) -> list[dict[str, Any]]:
    """The splits table's rows for one platform, as the JSON gives them (`units` "decimal":
    MB of 10^6 bytes; GiB/s says its own)."""
    return [
        {k: v for k, v in row.items() if k not in ("app", "platform")} | {"units": "decimal"}
        for row in _split_row(r, comparison)
    ]


def document(runs: list[AppRun]) -> dict[str, Any]:
    """Everything, per app. `predicted` is the predicted table's rows (`units` decimal: GB
    and MB of 10^9 and 10^6 bytes of D);
    `estimates` are the models' own answers for the bytes modelled, GB and MB in each
    platform's `units`."""
    return {
        "apps": [
            {
                "app": r.app,
                "verified": r.verified,
                "verification": r.verification.as_dict(),
                # the table's input (MiB): with --data the whole data set run on, which the
                # measurement's data_bytes (the profiled sample) is not
                "input_bytes": r.input_bytes,
                "input_records": r.input_records,
                "run_s": r.run_s,
                "startup_s": r.startup_s,
                "warnings": list(r.warnings),
                "measurement": r.measurement.as_dict(),
                "model_bytes": r.model_bytes,
                "passes": r.passes,
                "modelled_bytes": r.modelled_bytes,
                # GB and MB of 10^9 and 10^6 bytes on every row, said as `estimates` say
                # theirs: beside them (binary on the servers) a bare model_gb read as either
                "predicted": {
                    row["platform"]: {k: v for k, v in row.items() if k not in ("app", "platform")}
                    | {"units": "decimal"}
                    for row in predicted_rows(r)
                },
                "estimates": {
                    k: (v if isinstance(v, str) else v.as_dict() | {"units": v.options.units})
                    for k, v in r.estimates.items()
                },
                "plans": r.plans,
                **(
                    {
                        "other_splits": [
                            {
                                "app": o.app,
                                "verified": o.verified,
                                "verification": o.verification.as_dict(),
                                # the measured table's passes: the run's, which on a data
                                # set need not be the profiled sample's (measurement.passes)
                                "passes": o.passes,
                                "run_s": o.run_s,
                                "startup_s": o.startup_s,
                                "measurement": o.measurement.as_dict(),
                            }
                            for o in r.other_splits
                        ],
                        # The splits table's rows too: its GiB/s, and its MB/J of D in
                        # 10^6 bytes, were in no unit the estimates give (binary MB on the
                        # servers, GB/s on RISP), nor was its note.
                        "splits": {
                            k: v.as_dict() | {"rows": _split_json_rows(r, v)}
                            for k, v in r.splits.items()
                        },
                    }
                    if r.other_splits
                    else {}
                ),
            }
            for r in runs
        ]
    }
