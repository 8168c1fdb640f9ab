"""`ndpkit.evaluate` in process: data sets are verified by streaming (never read whole),
profiled on a bounded sample, and a wrong answer fails."""

from __future__ import annotations

import csv
import gc
import io
import json
import os
import re
import shutil
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rich.console import Console

from ndpkit import evaluate as ev
from ndpkit.errors import NdpkitError, SpecError
from ndpkit.hw import load_platform
from ndpkit.kernels import KernelMismatchError
from ndpkit.kernels.lc import LinearClassifier
from ndpkit.model import Estimate, estimate
from ndpkit.model.pipeline import engine_bandwidth
from ndpkit.profile import load_profiles
from ndpkit.report.table import to_csv, to_rich
from ndpkit.runtime import Dataset, generate_dataset, profiling
from ndpkit.runtime.dataset import ShardError
from ndpkit.runtime.profiling import to_profile


@pytest.fixture
def lc_data(tmp_path: Path) -> Dataset:
    return generate_dataset(
        "lc", 1 << 20, 2, tmp_path / "lc", seed=9, shard_bytes=300_000, shard_format="parquet"
    )


def test_a_data_set_is_verified_without_reading_it_whole(
    lc_data: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(self: Dataset) -> np.ndarray:
        raise AssertionError("read the whole data set into memory")

    monkeypatch.setattr(Dataset, "read_all", refuse)
    (run,) = ev.evaluate(data=lc_data.path, platforms=["cns"], workers=1, size_bytes=100_000)
    assert run.verified and run.verification.method == "per chunk"
    assert run.verification.records == lc_data.records
    assert run.input_bytes == lc_data.total_bytes
    # Profiling measured a bounded sample, not the data set.
    assert run.measurement.input_bytes <= 100_000 < lc_data.total_bytes


def test_a_wrong_answer_on_a_data_set_fails(
    lc_data: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host part runs in this process: flip one label of its answer."""
    host = LinearClassifier.host

    def wrong_host(self: LinearClassifier, merged: Any, state: Any) -> tuple[np.ndarray, bool]:
        labels, done = host(self, merged, state)
        labels = labels.copy()
        labels[len(labels) // 2 + 1] ^= 1
        return labels, done

    monkeypatch.setattr(LinearClassifier, "host", wrong_host)
    with pytest.raises(KernelMismatchError, match="lc: 1 labels differ"):
        ev.evaluate(data=lc_data.path, platforms=["cns"], workers=1, size_bytes=100_000)


def test_a_data_set_replaced_while_it_is_read_is_said_to_be(
    lc_data: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`data generate --overwrite` onto the data set mid-run: the answer then differs from
    the new data's reference, and the error says the data set changed, not the kernel."""
    real_verify = ev.verify_streaming

    def replaced_first(*args: Any) -> Any:
        generate_dataset("lc", 1 << 20, 2, lc_data.path, seed=10, overwrite=True)
        return real_verify(*args)

    monkeypatch.setattr(ev, "verify_streaming", replaced_first)
    with pytest.raises(SpecError, match="was replaced while it was read") as info:
        ev.evaluate(data=lc_data.path, platforms=["cns"], workers=1, size_bytes=100_000)
    assert info.value.source == str(lc_data.path)
    # Without a change, a wrong answer is still the kernel's (test_a_wrong_answer_…).


def test_only_a_changed_manifest_counts_as_replaced(lc_data: Dataset) -> None:
    """`touch` or `chmod` of the manifest leaves an error as it was; a new data set at the
    path (or none) is named as the cause, at any step (here: a shard error)."""
    manifest = lc_data.path / "manifest.json"
    failure = ShardError("device-00/shard-0000.npy", "shard is 1 bytes, the manifest says 2")
    os.utime(manifest)
    manifest.chmod(0o600)
    with pytest.raises(ShardError) as kept, ev.unchanged(lc_data):
        raise failure
    assert kept.value is failure  # as it was: any ShardError passed
    generate_dataset("lc", 1 << 20, 2, lc_data.path, seed=10, overwrite=True)
    with pytest.raises(SpecError, match="was replaced while it was read"), ev.unchanged(lc_data):
        raise failure
    shutil.rmtree(lc_data.path)
    gone = rf"was removed or moved while it was read \({re.escape(str(failure))}\); no result"
    with pytest.raises(SpecError, match=gone), ev.unchanged(lc_data):
        raise failure


def _first_shard(dataset: Dataset) -> Path:
    return dataset.shard_path(dataset.shards[0])


def test_a_shard_rewritten_in_place_mid_run_is_named_not_the_kernel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same size, same manifest, other records: the reference of the new records differs
    from the answer of the old ones (a KernelMismatchError). The error names the shard."""
    data = generate_dataset("lc", 1 << 20, 2, tmp_path / "lc", seed=9, shard_bytes=300_000)
    real_verify = ev.verify_streaming
    shard = _first_shard(data)

    def rewritten_first(*args: Any) -> Any:
        with shard.open("r+b") as f:
            f.seek(-32 * 100, os.SEEK_END)
            f.write(np.where(np.arange(800) % 2, 5.0, -5.0).astype(np.float32).tobytes())
        with pytest.raises(KernelMismatchError):  # what the check alone would say
            real_verify(*args)
        return real_verify(*args)

    monkeypatch.setattr(ev, "verify_streaming", rewritten_first)
    with pytest.raises(ShardError, match="was written to while the data set was read") as info:
        ev.evaluate(data=data.path, platforms=["cns"], workers=1, size_bytes=100_000)
    assert info.value.source == str(shard)


def test_a_shard_written_to_after_it_was_read_fails_the_run_even_if_all_matches(
    lc_data: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that kept the bytes (or came after both the run and the reference read them)
    fails nothing by itself: the run is still refused rather than called verified."""
    real_verify = ev.verify_streaming
    shard = _first_shard(lc_data)

    def touched_after(*args: Any) -> Any:
        result = real_verify(*args)
        stat = shard.stat()
        os.utime(shard, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
        return result

    monkeypatch.setattr(ev, "verify_streaming", touched_after)
    with pytest.raises(ShardError, match="was written to while the data set was read"):
        ev.evaluate(data=lc_data.path, platforms=["cns"], workers=1, size_bytes=100_000)


def test_a_shard_replaced_by_another_file_is_named(lc_data: Dataset) -> None:
    stamps = lc_data.stamps()
    shard = _first_shard(lc_data)
    shutil.copy(shard, shard.with_suffix(".new"))
    shard.with_suffix(".new").rename(shard)
    with (
        pytest.raises(ShardError, match="was replaced by another file"),
        ev.unchanged(lc_data, stamps),
    ):
        raise ShardError(shard, "anything")
    assert lc_data.changed_shard(lc_data.stamps()) is None


def test_knn_runs_and_compares_both_splits() -> None:
    (run,) = ev.evaluate(["knn2"], ["rfns", "cns"], size_bytes=1 << 19)
    assert [o.app for o in run.other_splits] == ["knn2-topk"]
    assert set(run.splits) == {"rfns", "cns"}
    assert run.splits["rfns"].chosen in ("knn2", "knn2-topk")
    tables = {t.name: t for t in ev.tables([run])}
    rows = tables["splits"].rows
    assert [(r["platform"], r["split"]) for r in rows] == [
        ("rfns", "knn2"),
        ("rfns", "knn2-topk"),
        ("cns", "knn2"),
        ("cns", "knn2-topk"),
    ]
    assert sum(r["picked"] for r in rows) == 1  # one on RFNS, none on CNS
    assert [r["app"] for r in tables["measured"].rows] == ["knn2", "knn2-topk"]
    doc = ev.document([run])["apps"][0]
    assert doc["splits"]["rfns"]["chosen"] == run.splits["rfns"].chosen


def test_a_split_asked_for_as_an_app_too_is_run_once(
    monkeypatch: pytest.MonkeyPatch, lc_data: Dataset
) -> None:
    """`evaluate knn2 knn2-topk`: knn2-topk is knn2's other split and an app of its own; it
    runs once on the same data and is one row of the measured table."""
    ran: list[str] = []
    real_run = ev._run

    def counted(kernel: Any, *args: Any) -> Any:
        ran.append(kernel.name)
        return real_run(kernel, *args)

    monkeypatch.setattr(ev, "_run", counted)
    runs = ev.evaluate(["knn2", "knn2-topk"], ["cns"], size_bytes=1 << 19)
    assert ran == ["knn2", "knn2-topk"]
    assert runs[1].measurement is runs[0].other_splits[0].measurement
    assert [r["app"] for r in {t.name: t for t in ev.tables(runs)}["measured"].rows] == [
        "knn2",
        "knn2-topk",
    ]
    # Different data is run again: another seed's points are not the same records.
    assert not ev._same_data(
        ev._InMemory(np.zeros((4, 2), np.float32)), ev._InMemory(np.ones((4, 2), np.float32))
    )
    ran.clear()
    ev.evaluate(["lc"], ["cns"], data=lc_data.path, workers=1, size_bytes=100_000)
    ev.evaluate(["lc"], ["cns"], data=lc_data.path, workers=1, size_bytes=100_000)
    assert ran == ["lc", "lc"]  # each call measures afresh


def test_an_apps_data_is_let_go_once_no_later_app_needs_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs are kept for later apps that share them, but no longer: each app's generated data
    is freed before the next app's is made (`_check_sample` allows for one at a time)."""
    alive: list[weakref.ref[np.ndarray]] = []
    real_run = ev._run

    def watched(kernel: Any, source: Any, *args: Any) -> Any:
        gc.collect()
        if kernel.name == "binarize":
            assert alive and alive[0]() is None, "lc's data is still held"
        if kernel.name == "lc":
            alive.append(weakref.ref(source.values))
        return real_run(kernel, source, *args)

    monkeypatch.setattr(ev, "_run", watched)
    ev.evaluate(["lc", "binarize"], ["cns"], size_bytes=1 << 20)
    assert len(alive) == 1


def test_a_top_k_split_on_its_own_takes_its_engine_rate_from_the_papers_split() -> None:
    """`evaluate knn2-topk` runs knn2 beside it, as `evaluate knn2` runs knn2-topk: its
    engine rate is the platform's knn2 entry times the measured ratio, not a rate scaled
    from this host alone (which the papers' entries are not comparable with)."""
    (run,) = ev.evaluate(["knn2-topk"], ["rans"], size_bytes=1 << 19)
    assert [o.app for o in run.other_splits] == ["knn2"]
    comparison = run.splits["rans"]
    assert [s.app for s in comparison.splits] == ["knn2", "knn2-topk"]  # the paper's first
    ratio = comparison.carried["knn2-topk"]
    measured = {k.app: k.measurement.device_bytes_per_s for k in run.kernel_runs()}
    assert ratio == pytest.approx(measured["knn2-topk"] / measured["knn2"], rel=1e-9)
    rans = load_platform("rans")
    assert rans.engines is not None
    entry = rans.engines.throughput["knn2"]
    assert run.profiles["rans"][0].engine_bytes_per_s[rans.engines.kind] == pytest.approx(
        entry * ratio, rel=1e-12
    )
    assert run.notes["rans"] == f"engine rate: rans's knn2 entry x {ratio:.3g}"
    (row,) = ev.predicted_rows(run)
    assert row["note"] == run.notes["rans"]
    # The predicted time is the one the splits table gives the same split (same engine rate;
    # the paper's time basis on the predicted row, the staged one in the splits table).
    split = next(s for s in comparison.splits if s.app == "knn2-topk")
    estimate = run.estimates["rans"]
    assert isinstance(estimate, Estimate) and split.estimate is not None
    assert estimate.performance_bytes_per_s == pytest.approx(
        split.estimate.performance_bytes_per_s, rel=1e-9
    )


def test_the_split_the_papers_measured_gets_their_rate_power_and_d() -> None:
    """`he-remap` is the HE the papers ran (the engine equalises, α = 1): on RFNS it takes the
    platform's HE rate and power (a file that overrides `he` changes both) and the papers'
    D, so it is bound by the 36 GB/s to the host and half the engines go off, as in the
    paper's HE example (nane_mux2 = 18). `he` sends
    histograms (α = 32) and is bound by the same engine rate instead. A top-k split run
    alone is modelled at its paper app's D too."""
    he, remap, topk = ev.evaluate(["he", "he-remap", "knn2-topk"], ["rfns"], size_bytes=1 << 20)
    d_he, d_knn2 = ev.published_size("he"), ev.published_size("knn2")
    assert d_he is not None and d_knn2 is not None
    assert he.model_bytes == remap.model_bytes == d_he and topk.model_bytes == d_knn2
    rfns = load_platform("rfns")
    assert rfns.engines is not None
    paper_rate = rfns.engines.throughput["he"]
    for run in (he, remap):
        assert engine_bandwidth(rfns, run.profiles["rfns"][0]) == paper_rate
    given = ev.with_papers_entries(rfns, ["he-remap", "knn2-topk"])
    assert given.engines is not None and "knn2-topk" not in given.engines.throughput
    assert given.engines.throughput["he-remap"] == paper_rate
    assert given.engines.power_on_w("he-remap") == given.engines.power_on_w("he") == 20.65
    faster = rfns.engines.model_copy(update={"throughput": {"he": 2 * paper_rate}})
    mine = ev.with_papers_entries(rfns.model_copy(update={"engines": faster}), ["he-remap"])
    assert mine.engines is not None and mine.engines.throughput["he-remap"] == 2 * paper_rate
    remap_estimate, he_estimate = remap.estimates["rfns"], he.estimates["rfns"]
    assert isinstance(remap_estimate, Estimate) and isinstance(he_estimate, Estimate)
    assert (remap_estimate.bottleneck, he_estimate.bottleneck) == ("ndp2cpu", "ndp")
    assert remap.plans["rfns"]["engines_on"] == 18


def test_on_risp_the_splits_are_compared_with_the_host_link() -> None:
    """Eq. (8) alone never sees the SATA link that the paper split's distances cross, so both
    splits tied at the channels' time; with the host stage (R11) the paper split is
    link-bound and the top-k split wins on time. The predicted table keeps Eq. (8)."""
    (run,) = ev.evaluate(["knn2"], ["risp-64ch"], size_bytes=1 << 20)
    comparison = run.splits["risp-64ch"]
    paper, topk = (s.estimate for s in comparison.splits)
    assert paper is not None and topk is not None
    assert paper.bottleneck == "host_link" and topk.time_s < paper.time_s / 3
    assert comparison.chosen == "knn2-topk"
    predicted = run.estimates["risp-64ch"]
    assert isinstance(predicted, Estimate) and predicted.bottleneck != "host_link"


def test_apps_without_other_splits_have_no_split_table() -> None:
    (run,) = ev.evaluate(["lc"], ["cns"], size_bytes=1 << 16)
    assert run.other_splits == [] and run.splits == {}
    assert [t.name for t in ev.tables([run])] == ["measured", "predicted"]
    assert "splits" not in ev.document([run])["apps"][0]


def test_shards_are_checked_before_anything_runs(
    lc_data: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each step is reported; the CRC-32 check comes first, and `verify_shards=False` skips
    it (a changed shard then goes unnoticed: the reference reads the same data)."""
    victim = lc_data.shard_path(lc_data.shards[1])
    raw = bytearray(victim.read_bytes())
    raw[len(raw) // 2] ^= 0x01
    steps: list[str] = []
    kwargs: dict[str, Any] = {"platforms": ["cns"], "workers": 1, "size_bytes": 100_000}
    ev.evaluate(data=lc_data.path, progress=steps.append, **kwargs)
    checks = steps[: steps.index("lc: running")]
    mib = f"{lc_data.file_bytes / 2**20:,.1f} MiB"
    assert checks[0] == f"checking shard CRC-32s: 0% of {mib}"
    assert checks[-1] == f"checking shard CRC-32s: 100% of {mib}"
    steps.clear()
    ev.evaluate(data=lc_data.path, progress=steps.append, verify_shards=False, **kwargs)
    assert steps[0] == "lc: running"
    victim.write_bytes(raw)
    with pytest.raises(ShardError, match=r"CRC-32 is .*: corrupt"):
        ev.evaluate(data=lc_data.path, **kwargs)


def test_apps_other_than_the_data_sets_need_its_layout(lc_data: Dataset) -> None:
    (run,) = ev.evaluate(["kmeans"], ["cns"], data=lc_data, workers=1, verify_shards=False)
    assert run.app == "kmeans" and run.verification.method == "streamed Lloyd"
    with pytest.raises(SpecError, match=r"holds 'lc' data .*app 'he' needs uint8"):
        ev.evaluate(["lc", "he"], ["cns"], data=lc_data)


def test_the_seed_given_wins_over_the_data_sets(lc_data: Dataset) -> None:
    assert lc_data.seed == 9
    assert ev._params_seed(None, lc_data) == 9
    assert ev._params_seed(0, lc_data) == 0  # an explicit 0 is not "no seed"
    assert ev._params_seed(None, None) == 0


def test_the_predicted_table_says_which_time_it_shows() -> None:
    """CNS is link-bound, yet the paper's time (T_NDP + T_CPU) leaves the link out: the
    table must name that time and show D at the bottleneck's rate beside it."""
    (run,) = ev.evaluate(["lc"], ["cns", "rfns"], size_bytes=1 << 20)
    predicted = {t.name: t for t in ev.tables([run])}["predicted"]
    headers = {c.key: c.header for c in predicted.columns}
    assert headers["time_s"] == "paper time (s)" and headers["stream_s"] == "D/perf (s)"
    assert "T_NDP + T_CPU" in predicted.note and "D/perf" in predicted.note
    rows = {r["platform"]: r for r in predicted.rows}
    cns = run.estimates["cns"]
    assert isinstance(cns, Estimate) and cns.bottleneck == "link"
    assert rows["cns"]["time_s"] == cns.t_ndp_s + cns.t_cpu_s
    assert rows["cns"]["stream_s"] == pytest.approx(run.model_bytes / (36 * 2**30))
    assert rows["cns"]["model_gb"] == pytest.approx(cns.data_bytes / 1e9)


def test_mb_per_j_is_one_unit_and_the_gain_over_cns_is_the_energy_ratio() -> None:
    """RISP's model reports decimal MB, CNS's binary: the table recomputes MB/J from D and
    joules in one unit, and the gain is CNS's energy over the platform's for the same D (the
    speedup, CNS's time over the platform's)."""
    (run,) = ev.evaluate(["sobel"], ["risp-64ch", "cns"], size_bytes=1 << 20)
    risp, cns = run.estimates["risp-64ch"], run.estimates["cns"]
    assert isinstance(risp, Estimate) and isinstance(cns, Estimate)
    assert (risp.options.units, cns.options.units) == ("decimal", "binary")
    predicted = {t.name: t for t in ev.tables([run])}["predicted"]
    assert "MB = 10^6 bytes on every row" in predicted.title
    rows = {r["platform"]: r for r in predicted.rows}
    assert rows["risp-64ch"]["ee_vs_cns"] == pytest.approx(cns.energy_j / risp.energy_j)
    assert rows["risp-64ch"]["speedup_vs_cns"] == pytest.approx(cns.time_s / risp.time_s)
    assert rows["cns"]["speedup_vs_cns"] == 1
    assert cns.time_s != pytest.approx(risp.time_s)  # else an inverted ratio would pass
    for name, e in (("risp-64ch", risp), ("cns", cns)):
        assert rows[name]["ee_mb_per_j"] == pytest.approx(0.5e9 / 1e6 / e.energy_j)
    doc = ev.document([run])["apps"][0]
    assert doc["predicted"]["risp-64ch"]["ee_vs_cns"] == rows["risp-64ch"]["ee_vs_cns"]
    assert doc["estimates"]["cns"]["units"] == "binary"


def test_a_host_only_run_takes_at_least_the_time_its_data_needs_to_arrive() -> None:
    """The papers' T_CPU,CNS is a CNS run's wall time, reading its data over the link; this
    host's rate is measured with the data in memory. At that rate LC on CNS took about 0.1 s
    and 43 J, so RANS's MB/J came out a third of CNS's, against the papers' 5.5x."""
    (run,) = ev.evaluate(["lc"], ["cns", "rans"], size_bytes=1 << 20)
    cns = load_platform("cns")
    link = cns.host_link.bandwidth_bytes_per_s
    est = run.estimates["cns"]
    assert isinstance(est, Estimate)
    assert est.bottleneck == "link"
    assert est.time_s == pytest.approx(run.model_bytes / link)
    assert est.energy_j == pytest.approx(cns.host.power_active_w * run.model_bytes / link)
    saved = run.profiles["cns"][0]
    assert saved.host_only_in_memory
    assert saved.host_only_bytes_per_s is not None and saved.host_only_bytes_per_s > link
    # the measured rate is reported as it is; the link sets the time
    assert est.pipeline.stages["cpu"] == saved.host_only_bytes_per_s
    rows = {r["platform"]: r for r in {t.name: t for t in ev.tables([run])}["predicted"].rows}
    assert rows["rans"]["ee_vs_cns"] > 1  # the papers' Finding 5: RANS is the more efficient


def test_a_host_only_rate_slower_than_the_link_is_kept() -> None:
    """FFT2D on CNS computes slower than its data arrives: its measured rate sets the time."""
    (run,) = ev.evaluate(["fft2d"], ["cns"], size_bytes=1 << 20)
    cns = load_platform("cns")
    saved = run.profiles["cns"][0]
    assert saved.host_only_bytes_per_s is not None
    assert saved.host_only_bytes_per_s < cns.host_link.bandwidth_bytes_per_s
    est = run.estimates["cns"]
    assert isinstance(est, Estimate) and est.bottleneck == "cpu"
    assert est.time_s == pytest.approx(run.model_bytes / saved.host_only_bytes_per_s)


def test_the_splits_table_times_a_host_only_runs_transfer_once() -> None:
    """The splits table's staged basis times the transfer to the host, then the host part:
    with a host-only rate already held to the link (the first form of the fix) knn2 on CNS
    took twice D over the link (7.2 s against the predicted table's 3.6 s) and both splits
    came out alike, whatever their host parts measured (found by a review)."""
    (run,) = ev.evaluate(["knn2"], ["cns"], size_bytes=1 << 20)
    cns = load_platform("cns")
    link = cns.host_link.bandwidth_bytes_per_s
    transfer_s = run.model_bytes / link
    predicted = run.estimates["cns"]
    assert isinstance(predicted, Estimate)
    assert predicted.time_s == pytest.approx(transfer_s)  # the paper basis: at least D / link
    times = {s.app: s.estimate.time_s for s in run.splits["cns"].splits if s.estimate}
    for k in run.kernel_runs():
        measured = to_profile(
            k.measurement, data_bytes=run.model_bytes, passes=k.passes, target_host=cns.host
        ).host_only_bytes_per_s
        assert measured is not None and measured > link  # the case the bound applies to
        assert times[k.app] == pytest.approx(transfer_s + run.model_bytes / measured)


@pytest.mark.parametrize("where", ["profiles.json", "device-00/p.json", "link.json"])
def test_profiles_and_measurements_are_not_saved_inside_a_data_set(
    tmp_path: Path, where: str
) -> None:
    """From Python as `--save-profiles` is: a file inside a data set (any, through a link
    too) was written there, and the data set's next `--overwrite` was refused ("holds
    profiles.json, which ndpkit did not write")."""
    ds = generate_dataset("lc", 1 << 16, 1, tmp_path / "ds", seed=1)
    (tmp_path / "link.json").symlink_to(ds.path / "linked.json")
    path = (tmp_path / where) if where == "link.json" else (ds.path / where)
    (run,) = ev.evaluate(["lc"], ["cns"], size_bytes=1 << 16)
    before = sorted(p.relative_to(ds.path) for p in ds.path.rglob("*"))
    with pytest.raises(SpecError, match=r"is inside the data set .*: write the profiles") as e:
        ev.save_profiles([run], "cns", path)
    assert e.value.field == "path"
    with pytest.raises(SpecError, match=r"is inside the data set .*: write the measurements"):
        profiling.save([run.kernel_runs()[0].measurement], path)
    assert sorted(p.relative_to(ds.path) for p in ds.path.rglob("*")) == before
    generate_dataset("lc", 1 << 16, 1, ds.path, seed=2, overwrite=True)  # still replaceable


def test_a_saved_host_only_profile_estimates_as_evaluate_did(tmp_path: Path) -> None:
    """The flag goes into the saved set, so `estimate` on it times the transfer as evaluate
    did (a set saved with the rate alone would give CNS its 0.1 s again)."""
    (run,) = ev.evaluate(["lc"], ["cns"], size_bytes=1 << 20)
    path = tmp_path / "p.json"
    ev.save_profiles([run], "cns", path)
    loaded = load_profiles(path).apps["lc"]
    assert loaded.host_only_in_memory
    again = estimate(load_platform("cns"), loaded)
    before = run.estimates["cns"]
    assert isinstance(before, Estimate)
    assert again.time_s == pytest.approx(before.time_s, rel=1e-12)
    assert again.energy_j == pytest.approx(before.energy_j, rel=1e-12)
    link = load_platform("cns").host_link.bandwidth_bytes_per_s
    assert again.time_s == pytest.approx(run.model_bytes / link)  # not LC's 0.1 s in memory


def test_the_improvement_over_cns_is_also_the_papers_performance_ratio() -> None:
    """The papers' improvement over CNS (Table 9) is the Eq. (1) performance ratio. The paper
    time on CNS is its host part alone, without the link that bounds it, so the time ratio
    put LC on RANS below CNS (0.3x), against the papers' finding that RANS wins (2.2x)."""
    (run,) = ev.evaluate(["lc"], ["cns", "rans"], size_bytes=1 << 20)
    cns, rans = run.estimates["cns"], run.estimates["rans"]
    assert isinstance(cns, Estimate) and isinstance(rans, Estimate)
    assert cns.bottleneck == "link" and rans.bottleneck == "ndp"
    predicted = {t.name: t for t in ev.tables([run])}["predicted"]
    assert "performance_vs_cns" in {c.key for c in predicted.columns}
    rows = {r["platform"]: r for r in predicted.rows}
    ratio = rans.performance_bytes_per_s / cns.performance_bytes_per_s
    assert rows["rans"]["performance_vs_cns"] == pytest.approx(ratio)
    # RANS's engines (the paper's 37 GiB in 16.67 s, x 36) against CNS's 36 GiB/s link
    assert ratio == pytest.approx(36 * (37 / 16.67) / 36)
    assert rows["cns"]["performance_vs_cns"] == 1
    assert ev.document([run])["apps"][0]["predicted"]["rans"]["performance_vs_cns"] == ratio


def test_without_cns_the_table_says_why_its_cns_columns_are_empty() -> None:
    (run,) = ev.evaluate(["lc"], ["rans"], size_bytes=1 << 19)
    predicted = {t.name: t for t in ev.tables([run])}["predicted"]
    assert all(row["speedup_vs_cns"] is None for row in predicted.rows)
    assert predicted.note is not None and "cns is not among the platforms" in predicted.note
    (run,) = ev.evaluate(["lc"], ["cns", "rans"], size_bytes=1 << 19)
    predicted = {t.name: t for t in ev.tables([run])}["predicted"]
    assert predicted.note is not None and "cns is not among" not in predicted.note


def test_the_splits_table_has_one_unit_per_column() -> None:
    (run,) = ev.evaluate(["knn2"], ["rfns"], size_bytes=1 << 19)
    splits = {t.name: t for t in ev.tables([run])}["splits"]
    assert "GiB = 2^30 and MB = 10^6 bytes on every row" in splits.title
    estimates = {s.app: s.estimate for s in run.splits["rfns"].splits}
    for row in splits.rows:
        e = estimates[row["split"]]
        assert e is not None
        assert row["ee_mb_per_j"] == pytest.approx(run.model_bytes / 1e6 / e.energy_j)
        assert row["performance_gib_per_s"] == pytest.approx(e.performance_bytes_per_s / 2**30)


def test_a_data_set_of_an_app_ndpkit_does_not_have_needs_the_app_named(tmp_path: Path) -> None:
    # A custom Kernel (Python API) names its own app in the manifest.
    custom = LinearClassifier()
    custom.name = "mine"
    data = generate_dataset(custom, 1 << 20, 2, tmp_path / "mine", seed=0)
    with pytest.raises(SpecError, match=r"manifest\.json: app: app 'mine' is not one of"):
        ev.evaluate(data=data.path, platforms=["cns"], workers=1)
    (run,) = ev.evaluate(["lc"], data=data.path, platforms=["cns"], workers=1)
    assert run.verified and run.app == "lc"


@pytest.mark.parametrize(
    ("argument", "value"),
    [
        ("model_bytes", 0),  # was taken for "not given": the paper's D was modelled
        ("model_bytes", -1.0),
        ("model_bytes", float("nan")),
        ("model_bytes", True),
        ("size_bytes", 2.5e6),  # a TypeError in the generator
        ("size_bytes", 0),
        ("seed", -1),  # numpy's ValueError, after the shards were checked
        ("seed", 1.5),
        ("split_tolerance", -0.1),  # accepted for apps without splits, refused after k-NN ran
        ("split_tolerance", float("inf")),
    ],
)
def test_bad_arguments_are_refused_by_name_before_any_work(
    monkeypatch: pytest.MonkeyPatch, argument: str, value: object
) -> None:
    def no_work(*_: object) -> None:
        raise AssertionError("an app ran")

    monkeypatch.setattr(ev, "_run", no_work)
    kwargs: dict[str, Any] = {"size_bytes": 1 << 20, argument: value}
    with pytest.raises(SpecError, match=rf"^{argument}: must be"):
        ev.evaluate(["lc", "knn2"], ["rans"], **kwargs)


@pytest.mark.parametrize(
    ("argument", "value", "message"),
    [
        ("apps", "lc", "apps: must be a list of app names (['lc'] for one)"),  # "unknown app 'l'"
        ("apps", [], "apps: names no app"),  # ran nothing without a word
        ("apps", 5, "apps: must be a list of app names, got 5"),
        ("apps", b"lc", "apps: must be a list of app names, got b'lc'"),  # "unknown app 108"
        ("platforms", b"cns", "platforms: must be a list of platform names, got b'cns'"),
        ("platforms", "cns", "platforms: must be a list of platform names"),  # "… 'c'"
        ("platforms", [], "platforms: names no platform"),  # modelled nothing
        ("platforms", [5], "platforms[0]: must be a preset's name"),  # pathlib's TypeError
        ("platforms", {"cns": "cns"}, "platforms['cns']: must be a Platform"),
        ("data", 5, "data: must be a data set's path, a Dataset, or None"),  # AttributeError
        ("options", 5, "options: must be model Options, or None"),  # after lc had run
        ("progress", 5, "progress: must be a function"),  # "'int' object is not callable"
        ("verify_shards", "no", "verify_shards: must be True or False"),  # truthy
        # Silently unused: generated data runs in this process (the CLI refused --workers).
        ("workers", 2, "workers: only applies with data"),
    ],
)
def test_arguments_of_another_kind_are_refused_by_name_before_any_work(
    monkeypatch: pytest.MonkeyPatch, argument: str, value: object, message: str
) -> None:
    def no_work(*_: object) -> None:
        raise AssertionError("an app ran")

    monkeypatch.setattr(ev, "_run", no_work)
    kwargs: dict[str, Any] = {"apps": ["lc"], "platforms": ["cns"], argument: value}
    with pytest.raises(SpecError) as caught:
        ev.evaluate(size_bytes=1 << 20, **kwargs)
    assert str(caught.value).startswith(message)


def test_a_data_set_may_be_given_by_a_str_path(lc_data: Dataset) -> None:
    """`open_dataset` takes a str; `evaluate(data="dir")` ended in "'str' object has no
    attribute 'dtype'"."""
    (run,) = ev.evaluate(data=str(lc_data.path), platforms=["cns"], workers=1)
    assert run.verified and run.input_bytes == lc_data.total_bytes


def test_the_json_predicted_rows_say_their_units() -> None:
    """`predicted` counts GB and MB in 10^9 and 10^6 bytes whatever the platform, beside
    `estimates` whose `units` are binary on the servers (MB/J 315.9 against 301.3 for one
    run): without a unit of their own a program could read either as the other's."""
    (run,) = ev.evaluate(["lc"], ["rans"], size_bytes=1 << 20)
    doc = ev.document([run])["apps"][0]
    predicted, est = doc["predicted"]["rans"], doc["estimates"]["rans"]
    assert est["units"] == "binary"
    assert predicted["units"] == "decimal"
    assert predicted["model_gb"] == pytest.approx(run.model_bytes / 1e9)
    assert predicted["ee_mb_per_j"] == pytest.approx(run.model_bytes / 1e6 / est["energy_j"])
    assert est["ee_mb_per_j"] == pytest.approx(run.model_bytes / 2**20 / est["energy_j"])


@pytest.mark.parametrize(
    ("workers", "environment", "message"),
    [
        (0, None, "workers: must be ≥ 1, got 0"),
        (None, "lots", "NDPKIT_MAPPED_BYTES: 'lots'"),
    ],
)
def test_bad_executor_settings_are_refused_before_the_shards_are_read(
    lc_data: Dataset,
    monkeypatch: pytest.MonkeyPatch,
    workers: int | None,
    environment: str | None,
    message: str,
) -> None:
    # They were refused only once every shard's CRC-32 had been checked: a whole pass over
    # the data set (minutes on a large one) before a typo was reported.
    if environment is not None:
        monkeypatch.setenv("NDPKIT_MAPPED_BYTES", environment)

    def not_yet(*_: Any, **__: Any) -> None:
        raise AssertionError("the shards were read before the executor's settings were checked")

    monkeypatch.setattr(ev, "check_shards", not_yet)
    with pytest.raises(SpecError, match=message):
        ev.evaluate(["lc"], ["cns"], data=lc_data, workers=workers)


def test_the_json_gives_the_input_the_table_shows(lc_data: Dataset) -> None:
    """The measured table's input (MiB) is the data set run on; the JSON gave its records
    only, and the measurement's data_bytes, the profiled sample (100 KB of 1 MiB here)."""
    runs = ev.evaluate(data=lc_data.path, platforms=["cns"], workers=1, size_bytes=100_000)
    (app,) = ev.document(runs)["apps"]
    (row,) = next(t for t in ev.tables(runs) if t.name == "measured").rows
    assert app["input_bytes"] == lc_data.total_bytes == row["input_mib"] * 2**20
    assert app["input_bytes"] == app["input_records"] * 32  # LC's 8 float32 features
    assert app["measurement"]["data_bytes"] < app["input_bytes"]
    # the rates in decimal GB/s, as their columns say (no test read them: GiB/s passed)
    m = runs[0].measurement
    assert row["device_gb_per_s"] == pytest.approx(m.device_bytes_per_s / 1e9, rel=1e-12)
    assert row["host_part_gb_per_s"] == pytest.approx(m.host_part_bytes_per_s / 1e9, rel=1e-12)


def test_k_means_names_a_non_finite_start_point_by_its_shard_and_record(tmp_path: Path) -> None:
    """K-Means' starting sample (taken from the start of every shard) refused a NaN point as
    "sample point 27968", its place in the sample, not its record in the data set (200000),
    and named no file; with --no-verify-shards nothing else did (found by an audit)."""
    data = generate_dataset("lc", 8 << 20, 4, tmp_path / "lc", seed=3)
    last = data.shards[-1]
    record = last.offset + 3392
    points = np.load(data.shard_path(last), mmap_mode="r+")
    points[record - last.offset, 3] = np.inf
    points.flush()
    del points
    with pytest.raises(NdpkitError) as caught:
        ev.evaluate(
            ["kmeans"], ["cns"], data=data.path, workers=1, size_bytes=1 << 20, verify_shards=False
        )
    message = str(caught.value)
    assert message.startswith(f"{data.shard_path(last)} (records {last.offset} to ")
    assert f"kmeans: point {record} has a non-finite coordinate" in message


def test_lc_names_the_shard_of_a_point_whose_score_is_not_finite(tmp_path: Path) -> None:
    """LC's host part refuses a NaN score by the point's number in the data set, but named
    no file, as the device parts' refusals do (k-NN's, `executor._in_shard`): with
    --no-verify-shards nothing else did (found by an audit)."""
    data = generate_dataset("lc", 2 << 20, 4, tmp_path / "lc", seed=3)
    shard = data.shards[2]
    record = shard.offset + 5
    points = np.load(data.shard_path(shard), mmap_mode="r+")
    points[5, 3] = np.nan
    points.flush()
    del points
    with pytest.raises(NdpkitError) as caught:
        ev.evaluate(["lc"], ["cns"], data=data.path, workers=1, verify_shards=False)
    message = str(caught.value)
    assert message.startswith(f"{data.shard_path(shard)} (records {shard.offset} to ")
    assert f"lc: the score of point {record} is NaN" in message


def test_the_crc_check_names_every_corrupt_shard_in_one_error(tmp_path: Path) -> None:
    """It stopped at the first: a copy with several corrupt shards took a run per shard,
    each reading the data set again, where `data show --verify` names them all."""
    data = generate_dataset("lc", 2 << 20, 4, tmp_path / "lc", seed=3)
    corrupt = [data.shard_path(s) for s in (data.shards[0], data.shards[2])]
    for path in corrupt:
        raw = bytearray(path.read_bytes())
        raw[9000] ^= 0xFF
        path.write_bytes(raw)
    with pytest.raises(ShardError) as caught:
        ev.evaluate(["lc"], ["cns"], data=data.path, workers=1)
    message = str(caught.value)
    assert message.startswith(f"{corrupt[0]}: CRC-32 is ")
    assert f"2 of the 4 shards are bad, also: {corrupt[1]} (CRC-32 is " in message


def test_the_predicted_table_says_why_a_platform_has_no_plan(tmp_path: Path) -> None:
    """A plan the planner refuses (a channel plan over more than 4096 channels) showed "–"
    for the plan and its saving, with no word of why outside the JSON's `plans`."""
    path = tmp_path / "risp5k.toml"
    path.write_text(
        'extends = "risp-64ch"\nname = "risp-5k"\n[storage]\nchannels = 5000\n'
        "[engines]\ncount = 5000\n"
    )
    (run,) = ev.evaluate(["sobel"], [str(path)], size_bytes=1 << 20)
    error = run.plans["risp-5k"]["error"]
    assert "a channel plan takes at most 4096 channels" in error
    (row,) = ev.predicted_rows(run)
    assert "plan" not in row and row["note"].endswith(f"; no plan: {error}")
    (table_row,) = next(t for t in ev.tables([run]) if t.name == "predicted").rows
    assert table_row["note"] == row["note"]


def test_the_json_gives_each_other_splits_passes_as_the_table_does() -> None:
    """The measured table has a passes column for k-NN's top-k row; its JSON entry under
    `other_splits` had none (only its measurement's, the profiled sample's)."""
    (run,) = ev.evaluate(["knn2"], ["cns"], size_bytes=1 << 20)
    (other,) = ev.document([run])["apps"][0]["other_splits"]
    rows = next(t for t in ev.tables([run]) if t.name == "measured").rows
    (row,) = [r for r in rows if r["app"] == "knn2-topk"]
    assert other["app"] == "knn2-topk" and other["passes"] == row["passes"] == 1


def test_the_csv_says_which_split_was_picked_as_the_json_does() -> None:
    """`evaluate -f csv` wrote the terminal's mark, `✓` or nothing, in `picked`, where the
    JSON says true/false and every other yes/no in a CSV is JSON text (README)."""
    (run,) = ev.evaluate(["knn2"], ["rfns"], size_bytes=1 << 20)
    tables = ev.tables([run])
    rows = [r for r in csv.DictReader(io.StringIO(to_csv(tables))) if r["table"] == "splits"]
    given = ev.document([run])["apps"][0]["splits"]["rfns"]["rows"]
    assert [json.loads(r["picked"]) for r in rows] == [g["picked"] for g in given]
    assert sorted(g["picked"] for g in given) == [False, True]
    console = Console(width=400, file=io.StringIO(), force_terminal=False)
    console.print(*to_rich(next(t for t in tables if t.name == "splits")))
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert shown.count("✓") == 1 and "True" not in shown and "yes" not in shown


def test_the_json_gives_the_splits_table_as_the_table_shows_it() -> None:
    """The splits table's GiB/s, MB/J (D in 10^6 bytes) and note were in the JSON nowhere:
    its estimates give MB/J in binary MB on the servers and GB/s on RISP."""
    (run,) = ev.evaluate(["knn2"], ["rans", "risp-64ch"], size_bytes=1 << 20)
    splits = ev.document([run])["apps"][0]["splits"]
    table = next(t for t in ev.tables([run]) if t.name == "splits")
    assert len(table.rows) == 4
    for row in table.rows:
        (given,) = [g for g in splits[row["platform"]]["rows"] if g["split"] == row["split"]]
        for key in ("alpha", "performance_gib_per_s", "bottleneck", "time_s", "energy_j"):
            assert given[key] == row[key]
        assert given["ee_mb_per_j"] == row["ee_mb_per_j"] == run.model_bytes / 1e6 / row["energy_j"]
        assert given["note"] == row["note"] and given["picked"] is row["picked"]
        assert given["units"] == "decimal"


def test_an_app_run_s_repr_is_one_line_not_every_platform_s_profiles() -> None:
    """The dataclass's repr held the measurement, every platform's estimate, profiles and
    plans: 19,258 characters for one k-NN app over cns, rans and rfns."""
    (run,) = ev.evaluate(["knn2"], size_bytes=1 << 16)
    text = repr(run)
    assert "\n" not in text and len(text) < 80, text
    assert text == f"AppRun(app='knn2', run_s={float(f'{run.run_s:.4g}')!r}, verified=True)"
    assert run.verified
