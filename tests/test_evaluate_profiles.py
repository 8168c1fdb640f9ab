"""Issue 4 audit, in process: measured engine rates reach RISP's cells, profiles save and load
back, the target engine's clock and cores scale the mapping, α is the modelled run's,
verification reports what it read, start-up is timed apart, byte progress, and K-Means starts
from the data set's own points."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from measurements import measurement
from ndpkit import evaluate as ev
from ndpkit.errors import SpecError
from ndpkit.hw import load_platform
from ndpkit.kernels import get_kernel
from ndpkit.kernels.kmeans import KMeansKernel
from ndpkit.model import FULL_GEAR, Estimate, estimate
from ndpkit.plan.splits import SPLIT_OPTIONS, compare_splits
from ndpkit.profile import FpgaCell, Profile, PublishedFit, load_profiles, save_profiles
from ndpkit.runtime import Dataset, LocalExecutor, RunResult, generate_dataset
from ndpkit.runtime.profiling import EngineScaling, measure, save, to_profile
from ndpkit.runtime.verify import Verification

RANS_FAST = """\
extends = "rans"
name = "rans-fast"
[engines]
cores = 16
frequency = "3.0 GHz"
"""


@pytest.fixture
def lc_data(tmp_path: Path) -> Dataset:
    return generate_dataset("lc", 1 << 20, 2, tmp_path / "lc", seed=9, shard_bytes=300_000)


# -- 2: profiles save and load back -----------------------------------------------------------


def test_every_profile_field_saves_and_loads_back_bit_for_bit(tmp_path: Path) -> None:
    """Unit strings with Python's shortest exact floats: the same numbers come back."""
    full = Profile.model_validate(
        {
            "app": "mine",
            "description": "every field",
            "data_bytes": 39728447488.123,
            "passes": 3,
            "alpha": 7281.777777777777,
            "host_part_bytes_per_s": 60601259278.292725,
            "host_only_bytes_per_s": 1.0697544702792761e10,
            "engine_bytes_per_s": {"arm": 8394003638.518274, "fpga": 1.0392567939114398e11},
            "published_ndp_time_s": {"rans": 16.67 / 3},
            "cpi": 0.502,
            "ipb": 131.5462,
            "frequency_ratio": 1.096,
            "fpga_cell": FpgaCell.model_validate(
                {"bytes_per_cycle": 9, "pipeline_delay": 15, "power": 0.019125},
                context={"si": True},
            ),
            "published_fit": PublishedFit.model_validate(
                {
                    "power_intercept": 1.858,
                    "power_slope": 0.032,
                    "bandwidth_slope": 1e8 / 3,
                    "cell_clock": 1e8,
                },
                context={"si": True},
            ),
        },
        context={"si": True},
    )
    path = tmp_path / "set.json"
    save_profiles([full], path, source="a test")
    loaded = load_profiles(path)
    assert loaded.apps["mine"] == full and loaded.source == "a test"
    assert [p.name for p in tmp_path.iterdir()] == ["set.json"]  # no temporary left


def test_a_measured_profile_round_trips(tmp_path: Path) -> None:
    kernel = get_kernel("kmeans")
    m = measure(kernel, kernel.generate(1 << 20, 0), kernel.params(0), repeat=1, counters=None)
    rans = load_platform("rans")
    profile = to_profile(m, data_bytes=0.3e9, target_host=rans.host, target_engine=rans.engines)
    save_profiles([profile], tmp_path / "p.json")
    assert load_profiles(tmp_path / "p.json").apps["kmeans"] == profile


def test_evaluate_saves_the_profiles_it_modelled(tmp_path: Path) -> None:
    (run,) = ev.evaluate(["knn2"], ["rans"], size_bytes=1 << 19)
    path = tmp_path / "knn.json"
    ev.save_profiles([run], "rans", path)
    apps = load_profiles(path).apps
    assert list(apps) == ["knn2", "knn2-topk"]
    assert [apps["knn2"], apps["knn2-topk"]] == run.profiles["rans"]


def test_saved_split_profiles_give_estimate_the_time_evaluate_predicted(tmp_path: Path) -> None:
    """The top-k split's engine rate is the platform's knn2 entry carried over by the measured
    ratio, and he-remap's is the platform's he entry: both are what a saved profile holds,
    so `estimate` from the file gives the splits table's (and the predicted table's) time.
    Before, the file held the host measurement mapped onto the engine: 26× faster on RANS."""
    knn, remap = ev.evaluate(["knn2", "he-remap"], ["rans"], size_bytes=1 << 20)
    path = tmp_path / "saved.json"
    ev.save_profiles([knn, remap], "rans", path)
    saved = load_profiles(path).apps
    rans = load_platform("rans")
    comparison = knn.splits["rans"]
    topk = next(s for s in comparison.splits if s.app == "knn2-topk")
    assert topk.estimate is not None and "knn2-topk" in comparison.carried
    again = estimate(rans, saved["knn2-topk"], FULL_GEAR, SPLIT_OPTIONS)
    assert again.time_s == pytest.approx(topk.estimate.time_s, rel=1e-12)
    assert again.energy_j == pytest.approx(topk.estimate.energy_j, rel=1e-12)  # one ARM power
    predicted = remap.estimates["rans"]
    assert isinstance(predicted, Estimate)
    assert estimate(rans, saved["he-remap"]).time_s == pytest.approx(predicted.time_s, rel=1e-12)


def test_a_saved_kmeans_profile_holds_its_passes_and_gives_evaluates_mb_per_j(
    tmp_path: Path,
) -> None:
    """K-Means reads D once per pass: its profile's data_size is D x passes, and without the
    passes `estimate` from the saved file counted every pass's bytes in MB/J (evaluate counts
    D once), and `simulate --size D` simulated one pass."""
    (run,) = ev.evaluate(["kmeans"], ["rans"], size_bytes=1 << 20)
    assert run.passes > 1
    path = tmp_path / "saved.json"
    ev.save_profiles([run], "rans", path)
    saved = load_profiles(path).apps["kmeans"]
    assert saved.passes == run.passes
    assert saved.data_bytes == pytest.approx(run.model_bytes * run.passes, rel=1e-12)
    rans = load_platform("rans")
    predicted = run.estimates["rans"]
    assert isinstance(predicted, Estimate)
    again = estimate(rans, saved, predicted.config, predicted.options)
    assert again.energy_j == pytest.approx(predicted.energy_j, rel=1e-12)
    mb = predicted.options.mb
    assert again.ee_mb_per_j == pytest.approx(run.model_bytes / mb / again.energy_j, rel=1e-12)
    one_pass = estimate(rans, saved.with_changes(passes=1), predicted.config, predicted.options)
    assert one_pass.time_s == again.time_s
    assert one_pass.ee_mb_per_j == pytest.approx(again.ee_mb_per_j * run.passes, rel=1e-12)


@pytest.mark.parametrize("platform", ["rans", "rfns"])
def test_compare_splits_over_a_saved_set_carries_the_rates_evaluate_did(
    tmp_path: Path, platform: str
) -> None:
    """A saved set's top-k split holds its carried rate (the knn2 entry x the measured
    ratio), so its knn2 must hold the entry it was carried from: `compare_splits` over the
    set then finds the measured ratio again. Before, knn2 held the host measurement mapped
    onto an ARM engine, and the ratio (carried / mapped) made the top-k split about 90x
    slower on RANS, so it lost a comparison evaluate's splits table gave it."""
    (knn,) = ev.evaluate(["knn2"], [platform], size_bytes=1 << 20)
    path = tmp_path / "saved.json"
    ev.save_profiles([knn], platform, path)
    saved = load_profiles(path).apps
    spec = load_platform(platform)
    again = compare_splits(spec, [saved["knn2"], saved["knn2-topk"]])
    evaluated = knn.splits[platform]
    assert again.carried == pytest.approx(evaluated.carried, rel=1e-12)
    assert again.chosen == evaluated.chosen
    for mine, theirs in zip(again.splits, evaluated.splits, strict=True):
        assert mine.estimate is not None and theirs.estimate is not None
        assert mine.estimate.time_s == pytest.approx(theirs.estimate.time_s, rel=1e-12)
        assert mine.estimate.energy_j == pytest.approx(theirs.estimate.energy_j, rel=1e-12)
    # The paper split's own estimate does not move: the platform's entry was its rate already.
    predicted = knn.estimates[platform]
    assert isinstance(predicted, Estimate)
    assert estimate(spec, saved["knn2"]).time_s == pytest.approx(predicted.time_s, rel=1e-12)
    assert estimate(spec, saved["knn2"]).energy_j == pytest.approx(predicted.energy_j, rel=1e-12)


def test_a_list_of_measurements_is_not_a_profile_set(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    save([measurement()], path)
    with pytest.raises(SpecError, match=r"got a list; measurements .* are not profiles"):
        load_profiles(path)


# -- 3: the target engine's clock and cores ---------------------------------------------------


def test_the_mapping_follows_the_target_engines_cores_and_clock(tmp_path: Path) -> None:
    m = measurement(app="kmeans")
    rans = load_platform("rans")
    (tmp_path / "fast.toml").write_text(RANS_FAST)
    fast = load_platform(str(tmp_path / "fast.toml"))
    on_rans = to_profile(m, target_engine=rans.engines).engine_bytes_per_s["arm"]
    on_fast = to_profile(m, target_engine=fast.engines).engine_bytes_per_s["arm"]
    assert on_rans == pytest.approx(1e8 / 2e9 * 1.1e9 * 0.35 * 4)  # RANS: 4 cores at 1.1 GHz
    assert on_fast / on_rans == pytest.approx(16 * 3.0 / (4 * 1.1))
    # Overridable: the documented defaults whatever the platform says.
    fixed = EngineScaling(follow_platform=False)
    assert to_profile(m, target_engine=fast.engines, scaling=fixed).engine_bytes_per_s[
        "arm"
    ] == pytest.approx(1e8 / 2e9 * 1.2e9 * 0.35 * 4)


def test_the_models_see_the_faster_engines_but_the_papers_tables_still_win(
    tmp_path: Path,
) -> None:
    (tmp_path / "fast.toml").write_text(RANS_FAST)
    specs = {"rans": load_platform("rans"), "rans-fast": load_platform(str(tmp_path / "fast.toml"))}
    runs = ev.evaluate(["kmeans", "lc"], specs, size_bytes=1 << 20)
    engine = {
        (r.app, name): e.pipeline.engine_bytes_per_s
        for r in runs
        for name, e in r.estimates.items()
        if isinstance(e, Estimate)
    }
    assert engine["kmeans", "rans-fast"] / engine["kmeans", "rans"] == pytest.approx(48 / 4.4)
    assert engine["lc", "rans-fast"] == engine["lc", "rans"]  # the paper's LC rate


def test_an_fpga_scales_with_its_clock_not_cores() -> None:
    s = EngineScaling()
    assert s.rate("fpga", 1e9, 2e9) == pytest.approx(8e9)
    assert s.rate("fpga", 1e9, 2e9, frequency_hz=100e6) == pytest.approx(8e9 * 100 / 250)
    risp = load_platform("risp-64ch")
    rates = s.rates(1e9, 2e9, risp.engines)
    assert rates["fpga"] == pytest.approx(8e9 * 0.4) and rates["arm"] == s.rates(1e9, 2e9)["arm"]


# -- 5: α of the run modelled ----------------------------------------------------------------


def test_kmeans_alpha_is_a_devices_data_over_one_table_of_sums() -> None:
    """Each engine sends one 576-byte table of sums per pass, however much it reads: α is
    not the profiler's 4 MiB chunk over 576 B."""
    kernel = get_kernel("kmeans")
    data = kernel.generate(8 << 20, 0)
    m = measure(kernel, data, kernel.params(0), repeat=1, counters=None)
    assert m.device_output_bytes == 576
    assert m.alpha == pytest.approx(data.nbytes / 576)  # the sample as one device
    rans = load_platform("rans")
    profile = to_profile(m, data_bytes=0.3e9, target_engine=rans.engines)
    assert profile.alpha == pytest.approx(0.3e9 / 36 / 576)
    assert to_profile(m, data_bytes=0.3e9).alpha == pytest.approx(0.3e9 / 576)


@pytest.mark.parametrize(("app", "alpha"), [("lc", 8.0), ("sobel", 1.0)])
def test_a_per_record_kernels_alpha_does_not_depend_on_the_size(app: str, alpha: float) -> None:
    kernel = get_kernel(app)
    m = measure(kernel, kernel.generate(1 << 20, 0), kernel.params(0), repeat=1, counters=None)
    assert m.alpha == pytest.approx(alpha)
    # Down to less than a record per device (`--model-size "1 B"`): LC's was 0.03 at 1 byte,
    # a device's average under a byte sent floored at one (found by an audit of evaluate).
    for device_bytes in (37 * 2**30 / 36, 288.0, 100.0, 1.0, 0.01):
        assert m.alpha_for(device_bytes) == pytest.approx(alpha), device_bytes


def test_knn_topk_sends_k_neighbours_per_device() -> None:
    kernel = get_kernel("knn6-topk")  # 3 chunks at 8 MiB, the last of one record
    m = measure(kernel, kernel.generate(8 << 20, 0), kernel.params(0), repeat=1, counters=None)
    assert m.device_sends_bytes(1e12) == pytest.approx(m.device_output_bytes)


@pytest.mark.parametrize(
    ("app", "records", "limit"),
    [("knn2-topk", 6, 10 * 12), ("knn2-topk", 1, 10 * 12), ("kmeans", 1, 8 * 9 * 8)],
)
def test_a_sample_smaller_than_what_a_device_sends_does_not_grow_it_for_ever(
    app: str, records: int, limit: int
) -> None:
    """Six points, fewer than k = 10, all sent: the line through the sample's two points
    made a device that reads the paper's D send 12 bytes a point (α 0.667 for knn2-topk,
    where a device sends its 10 best, 120 bytes); one K-Means point, whose sample has no
    half to draw that line from, made a device's table of sums grow with its input."""
    kernel = get_kernel(app)
    data = kernel.generate(records * kernel.record_bytes, 0)
    m = measure(kernel, data, kernel.params(0), repeat=1, counters=None)
    assert m.device_output_limit_bytes == limit
    assert m.device_output_bytes is not None and m.device_output_bytes <= limit
    d = 37 * 2**30 / 36
    assert m.device_sends_bytes(d) == limit
    assert m.alpha_for(d) == pytest.approx(d / limit)
    assert m.device_sends_bytes(m.data_bytes) == pytest.approx(m.device_output_bytes)


# -- 7: verified says what the check read -----------------------------------------------------


def test_verified_means_the_check_read_every_record() -> None:
    (run,) = ev.evaluate(["lc"], ["cns"], size_bytes=1 << 20)
    assert run.verified and run.verification.records == run.input_records == (1 << 20) // 32
    short = replace(run, verification=Verification("per chunk", 1, 1, run.input_records - 1))
    assert not short.verified
    (row,) = {t.name: t for t in ev.tables([short])}["measured"].rows
    assert row["verified"] is False and row["checked_records"] == run.input_records - 1
    assert ev.document([short])["apps"][0]["verified"] is False


# -- 8: worker start-up apart from the run ----------------------------------------------------


def test_worker_start_up_is_left_out_of_the_run_time(
    lc_data: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[RunResult] = []
    run_real = LocalExecutor.run

    def spy(self: LocalExecutor, *args: Any, **kwargs: Any) -> RunResult:
        seen.append(run_real(self, *args, **kwargs))
        return seen[-1]

    monkeypatch.setattr(LocalExecutor, "run", spy)
    (run,) = ev.evaluate(data=lc_data, platforms=["cns"], workers=1, verify_shards=False)
    (out,) = seen
    assert run.run_s == sum(p.wall_s for p in out.pass_stats)
    assert run.startup_s == pytest.approx(out.wall_s - run.run_s) and run.startup_s > 0
    # and the measured table shows each in its own column (its start-up was not checked)
    (row,) = {t.name: t for t in ev.tables([run])}["measured"].rows
    assert (row["run_s"], row["startup_s"]) == (run.run_s, run.startup_s)
    (generated,) = ev.evaluate(["lc"], ["cns"], size_bytes=1 << 20)
    assert generated.startup_s is None


# -- 4: byte progress -------------------------------------------------------------------------


def test_streaming_steps_report_their_bytes(lc_data: Dataset) -> None:
    events: list[tuple[Any, ...]] = []
    ev.evaluate(
        data=lc_data,
        platforms=["cns"],
        workers=1,
        size_bytes=1 << 19,
        progress=lambda step: events.append((step,)),
        byte_progress=lambda done, total: events.append((done, total)),
    )
    steps = [e[0] for e in events if len(e) == 1]
    assert steps == ["checking shard CRC-32s", "lc: running", "lc: verifying", "lc: profiling"]
    last = {}
    for event in events:
        if len(event) == 1:
            step = event[0]
        else:
            last[step] = event
    assert last["checking shard CRC-32s"] == (lc_data.file_bytes, lc_data.file_bytes)
    total = lc_data.total_bytes
    assert last["lc: running"] == last["lc: verifying"] == (total, total)
    assert last["lc: profiling"] == (2 << 19, 2 << 19)  # the sample, twice


# -- 9: K-Means starts from the data set's points ---------------------------------------------


def test_kmeans_on_a_data_set_starts_from_its_sample(
    lc_data: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`params_for_data` over a sample of every shard, never the seed's generated points."""
    given: list[tuple[np.ndarray, dict[str, Any]]] = []
    seeded = KMeansKernel.params_for_data

    def spy(self: KMeansKernel, sample: np.ndarray, seed: int) -> dict[str, Any]:
        given.append((sample, seeded(self, sample, seed)))
        return given[-1][1]

    def refuse(self: KMeansKernel, seed: int) -> dict[str, Any]:
        raise AssertionError("the seed's centres on a data set")

    monkeypatch.setattr(KMeansKernel, "params_for_data", spy)
    monkeypatch.setattr(KMeansKernel, "params", refuse)
    ev.evaluate(["kmeans"], ["cns"], data=lc_data, workers=1, size_bytes=1 << 18)
    ((sample, params),) = given
    assert np.array_equal(sample, lc_data.spread(1 << 18))
    points = {tuple(p) for p in np.asarray(sample, dtype=np.float64)}
    assert all(tuple(c) in points for c in params["init_centres"])


def test_the_spread_sample_takes_the_start_of_every_shard(lc_data: Dataset) -> None:
    """A data set whose shards hold different regions (imported sorted, say) is sampled in
    every one, not only in its first shards as `head` would be."""
    whole = lc_data.read_all()
    shards = lc_data.shards
    assert len(shards) > 2
    per_shard = (1 << 14) // lc_data.record_bytes // len(shards)
    sample = lc_data.spread(1 << 14)
    assert len(sample) == per_shard * len(shards)
    starts = np.cumsum([0] + [s.records for s in shards[:-1]])
    expected = np.concatenate([whole[start : start + per_shard] for start in starts])
    assert np.array_equal(sample, expected)
    assert not np.array_equal(sample, lc_data.head(1 << 14))


def test_a_rebuilt_platform_maps_like_the_loaded_one() -> None:
    """Engines whose file leaves `cores` unset are mapped with the scaling's default (4 ARM
    cores); a platform rebuilt by `with_scheme` or `with_engine_count` must not turn that
    into 1 (it did, when "unset" was read from pydantic's fields-set)."""
    m = measurement(app="kmeans")
    loaded_rans = load_platform("rans")
    assert loaded_rans.engines is not None
    bare = loaded_rans.engines.model_copy(update={"cores": None, "frequency_hz": None})
    rans = loaded_rans.model_copy(update={"engines": bare})
    loaded = to_profile(m, target_engine=bare).engine_bytes_per_s["arm"]
    assert loaded == pytest.approx(1e8 / 2e9 * 1.2e9 * 0.35 * 4)  # the documented defaults
    for rebuilt in (rans.with_engine_count(bare.count), rans.with_scheme("mux1")):
        assert rebuilt.engines is not None and rebuilt.engines.cores is None
        assert to_profile(m, target_engine=rebuilt.engines).engine_bytes_per_s["arm"] == loaded


def test_saving_for_a_platform_not_modelled_or_no_runs_is_a_spec_error(tmp_path: Path) -> None:
    """A KeyError 'rfns' from `save_profiles(runs, "rfns", …)` after a run on rans, and an
    empty profile set written for no runs, which no command could use."""
    runs = ev.evaluate(["lc"], ["rans"], size_bytes=1 << 20)
    path = tmp_path / "p.json"
    with pytest.raises(SpecError, match="lc was not modelled on platform 'rfns'") as caught:
        ev.save_profiles(runs, "rfns", path)
    assert caught.value.field == "platform" and "(modelled on: rans)" in str(caught.value)
    with pytest.raises(SpecError, match="no runs to save"):
        ev.save_profiles([], "rans", path)
    assert not path.exists()


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("one run", "runs: must be a list of runs: save_profiles([run], …) for one"),
        ("an app's name", "runs: must be a list of AppRun (evaluate(…)), got 'lc'"),
        ("a list of names", "runs: must be a list of AppRun (evaluate(…)); it holds 'lc'"),
        ("a number as platform", "platform: must be a platform's name, got int"),
    ],
)
def test_saving_arguments_of_another_kind_are_refused_by_name(
    tmp_path: Path, case: str, message: str
) -> None:
    """One AppRun was "'AppRun' object is not iterable", an app's name "'str' object has no
    attribute 'profiles'", and a platform's number "lc was not modelled on platform 5"."""
    runs = ev.evaluate(["lc"], ["rans"], size_bytes=1 << 20)
    given: dict[str, tuple[object, object]] = {
        "one run": (runs[0], "rans"),
        "an app's name": ("lc", "rans"),
        "a list of names": (["lc"], "rans"),
        "a number as platform": (runs, 5),
    }
    path = tmp_path / "p.json"
    with pytest.raises(SpecError) as caught:
        ev.save_profiles(*given[case], path)  # type: ignore[arg-type]
    assert str(caught.value) == message
    assert not path.exists()
