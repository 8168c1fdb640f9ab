"""NASCENT2's discrete-event simulation against its analytic model (spec §9, §10).

Agreement: where the model's assumptions hold (steady state: every streamed phase moves at
least ~100 chunks; phases one after another), the simulation is within TOLERANCE of the
model for the table sort, the generic sort and 1 … 12 devices. Where they do not (a table
of a few chunks, an Eq. 4 gather in output order), the difference is computed by hand.
Properties (Hypothesis): never faster than the model or any link's bound, bytes conserved
through the shuffle, more SmartSSDs never slower, serial baselines linear in 𝓜, and a
shared PCIe path that sets the concurrent baselines' growth; energy never negative.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpkit.cli.simulate_nascent2 import _check_size
from ndpkit.errors import SpecError
from ndpkit.nascent import des
from ndpkit.nascent.des import (
    DesOptions,
    DevicesSimulation,
    Difference,
    TableSortSimulation,
    compare_with_model,
    shuffle_split,
    simulate_devices,
    simulate_generic_sort,
    simulate_table_sort,
)
from ndpkit.nascent.model import (
    CpuPhases,
    ModelOptions,
    TableJob,
    load_devices,
    table_sort_time,
)

DEVICES = load_devices()
SMARTSSD = DEVICES.fpga("smartssd")
U250 = DEVICES.fpga("u250")
CPU = DEVICES.cpu("cpu")
MIB = 2**20
TOLERANCE = 0.01
"""Relative agreement where the model's assumptions hold (≥ ~100 chunks per stream)."""
REL = 1e-9

E6_JOB = TableJob(rows=1024, row_bytes=4096.0, encoded_key_bytes=2, dict_values=1024)
# About lineitem at SF 1: 6M rows of ~130 B; a date key through the generic sort (Flow C).
LINEITEM_SF1 = TableJob(
    rows=6_000_000,
    row_bytes=130.0,
    encoded_key_bytes=2,
    dict_values=2526,
    key_kind="generic",
)
PLAIN_KEYS = TableJob(rows=6_000_000, row_bytes=130.0)
CPU_WORK = CpuPhases(decode_s=0.01, sort_s=0.5, shuffle_s=0.2)
# Small enough chunks that even the decoder's 12 MB of keys stream in ~190 chunks.
FINE = DesOptions(chunk_bytes=64 * 1024)


def within(sim: float, model: float, rel: float = TOLERANCE) -> bool:
    return abs(sim - model) <= rel * model


# Worked example: a table of four chunks, where the fill shows ---------------------------


def test_e6_table_by_hand_one_chunk_of_fill_per_stream() -> None:
    s = simulate_table_sort(SMARTSSD, E6_JOB)
    f, s2f, d2f = 300e6, 3e9, 19e9
    # Decoder: dictionary (1,024 × 4 B over P2P, then one cycle per value), then the only
    # chunk (all 2 KiB of keys) is read, then decoded at 5 lanes × f; the model overlaps
    # the read with the decode.
    dictionary = 1024 * 4 / s2f + 1024 / f
    read = 1024 * 2 / s2f
    decode = 1024 / (5 * f)
    assert s.phases_s()["decode"] == pytest.approx(dictionary + read + decode, rel=REL)
    assert s.model.phases_s()["decode"] == pytest.approx(dictionary + max(read, decode), rel=REL)
    # Shuffle: 4 MiB staged in 1 MiB chunks (256 rows); the six instances gather the last
    # chunk after it lands: 2 MiB (read + write) through DRAM at 19 GB/s, since six at their
    # own pace (2 × 11.3 GB/s each) would exceed it.
    copy = 4 * MIB / s2f
    last_gather = 2 * MIB / d2f
    assert s.phases_s()["shuffle"] == pytest.approx(copy + last_gather, rel=REL)
    assert s.model.phases_s()["shuffle"] == pytest.approx(copy, rel=REL)
    diff = {d.quantity: d.difference_pct for d in compare_with_model(s)}
    assert diff["shuffle_s"] == pytest.approx(100 * last_gather / copy, rel=REL)
    assert 7.5 < diff["total_s"] < 8.5


def test_the_fill_shrinks_with_the_chunk() -> None:
    coarse = simulate_table_sort(SMARTSSD, E6_JOB, des=DesOptions(chunk_bytes=4 * MIB))
    fine = simulate_table_sort(SMARTSSD, E6_JOB, des=DesOptions(chunk_bytes=64 * 1024))
    model = coarse.model.total_s
    assert coarse.total_s > fine.total_s > model
    assert within(fine.total_s, model)


# Agreement where the model's assumptions hold ------------------------------------------


@pytest.mark.parametrize("device", [SMARTSSD, U250], ids=["smartssd", "u250"])
@pytest.mark.parametrize("job", [LINEITEM_SF1, PLAIN_KEYS], ids=["generic_key", "plain_key"])
@pytest.mark.parametrize("overlap", ["overlap", "serial"])
def test_table_sort_agrees_with_the_model_phase_by_phase(
    device: object, job: TableJob, overlap: str
) -> None:
    assert device is SMARTSSD or device is U250
    options = ModelOptions(overlap=overlap)  # type: ignore[arg-type]
    s = simulate_table_sort(device, job, options, des=FINE)
    for d in compare_with_model(s):
        assert within(d.simulated, d.model), d
    assert s.total_s >= s.model.total_s * (1 - REL)


def test_merge_tree_and_ssd_direct_agree_too() -> None:
    options = ModelOptions(dram_merge="merge_tree", merge_ways=4, staging="ssd_direct")
    s = simulate_table_sort(SMARTSSD, TableJob(rows=3_000_000, row_bytes=64.0), options)
    assert s.model.sort.merge_tree_passes == 3
    assert s.model.shuffle.staging == "ssd_direct"
    for d in compare_with_model(s):
        assert within(d.simulated, d.model), d


@pytest.mark.parametrize("kernels", [2, 3, 4])
@pytest.mark.parametrize("key", ["ssd", "dram"])
def test_sort_kernel_replicas_share_the_dram_as_simulated(kernels: int, key: str) -> None:
    # Replicas of the SmartSSD's sort kernel split its 19 GB/s of DRAM: the simulation
    # moves their loads and stores over the one link, and the model charges the same.
    device = SMARTSSD.with_(sort_kernels=kernels)
    if key == "ssd":
        s = simulate_table_sort(device, PLAIN_KEYS)
        simulated, modelled = s.phases_s()["sort"], s.model.sort.total_s
    else:
        g = simulate_generic_sort(device, 3_000_000, dict_values=2526, width=4)
        simulated, modelled = g.phases_s()["sort"], g.model.sort.total_s
    assert within(simulated, modelled), (simulated, modelled)


@pytest.mark.parametrize(
    "values",
    [{"width": 4}, {"mean_length": 12.0, "l_max": 16}],
    ids=["fixed", "variable"],
)
def test_generic_sort_agrees_with_the_model(values: dict[str, float]) -> None:
    s = simulate_generic_sort(
        SMARTSSD, 4_000_000, dict_values=64_000, host_sort=0.002, des=FINE, **values
    )
    assert set(s.phases_s()) == {"host", "map", "sort", "decode"}
    for d in compare_with_model(s):
        assert within(d.simulated, d.model), d


def test_generic_sort_host_fallback_decodes_on_the_host() -> None:
    # 64,000 values of 100 B exceed the SmartSSD's 4.5 MB table memory (§8.3 fallback).
    s = simulate_generic_sort(
        SMARTSSD, 1_000_000, dict_values=64_000, width=100, host_decode_s=0.25, des=FINE
    )
    assert s.model.decode is None
    assert s.machine.jobs[0].steps_s()["decode:host"] == pytest.approx(0.25, rel=REL)


@pytest.mark.parametrize("m", range(1, 13))
def test_devices_agree_with_the_model_for_1_to_12(m: int) -> None:
    s = simulate_devices(m, LINEITEM_SF1, cpu_phases=CPU_WORK, des=FINE)
    for d in compare_with_model(s):
        assert within(d.simulated, d.model), d
    assert s.devices == m and len(s.nascent2) == m
    assert s.result.speedup_vs_fpga == pytest.approx(s.model.speedup_vs_fpga, rel=TOLERANCE)


# Where simulation and model differ -------------------------------------------------------


def test_a_gather_in_output_order_cannot_overlap_the_copy() -> None:
    # Eq. 4 in output order over a random permutation: every output chunk has a row in the
    # last input chunk, so the gather follows the copy, as the model's O10 `serial` says.
    job = TableJob(rows=2_000_000, row_bytes=512.0)
    gather = simulate_table_sort(SMARTSSD, job, des=DesOptions(shuffle_order="gather", seed=3))
    serial = table_sort_time(SMARTSSD, job, ModelOptions(overlap="serial")).shuffle
    overlap = gather.model.shuffle
    assert within(gather.phases_s()["shuffle"], serial.copy_s + serial.gather_s)
    assert gather.phases_s()["shuffle"] > 1.2 * overlap.total_s


def test_same_seed_same_run() -> None:
    job = TableJob(rows=200_000, row_bytes=256.0)
    runs = [
        simulate_table_sort(SMARTSSD, job, des=DesOptions(shuffle_order="gather", seed=s))
        for s in (5, 5)
    ]
    assert runs[0].total_s == runs[1].total_s
    assert runs[0].events == runs[1].events


def test_identical_jobs_draw_the_same_gather_permutation_on_every_smartssd() -> None:
    # §10.6: each SmartSSD runs its own identical job, so T_NASCENT2 is one job's time for
    # any 𝓜. With Eq. 4 in output order every SmartSSD draws the same permutation from the
    # seed; drawing one per device made the slowest of 𝓜 draws grow with 𝓜.
    des = DesOptions(shuffle_order="gather", chunk_bytes=64 * 1024, seed=0)
    one = simulate_devices(1, E6_JOB, des=des)
    twelve = simulate_devices(12, E6_JOB, des=des)
    assert twelve.device_busy_s == one.device_busy_s * 12
    assert twelve.result.nascent2_s == one.result.nascent2_s
    assert twelve.result.nascent2_j == pytest.approx(12 * one.result.nascent2_j, rel=REL)
    assert [m.name for m in twelve.nascent2] == [f"smartssd[{i}]" for i in range(12)]
    # Still a random permutation, drawn from the seed: another seed draws another one.
    times = {
        simulate_devices(2, E6_JOB, des=replace(des, seed=seed)).result.nascent2_s
        for seed in range(6)
    }
    assert len(times) > 1
    again = simulate_devices(12, E6_JOB, des=des)
    assert (again.result, again.events) == (twelve.result, twelve.events)


def test_concurrent_baselines_share_one_path_fairly_so_no_job_finishes_early() -> None:
    # All reads start together and share the path equally, so they all end at 𝓜 × read;
    # the CPU then works through the jobs one by one: the same as one after another.
    m = 6
    serial = simulate_devices(m, E6_JOB, cpu_phases=CPU_WORK)
    shared = simulate_devices(
        m, E6_JOB, cpu_phases=CPU_WORK, des=DesOptions(baseline_schedule="concurrent")
    )
    read = E6_JOB.table_bytes / CPU.ssd_read_bytes_per_s
    first = [j.phases_s()["read"] for j in shared.cpu.jobs]
    assert all(r == pytest.approx(m * read, rel=REL) for r in first)
    assert shared.result.cpu_s == pytest.approx(serial.result.cpu_s, rel=REL)
    # The board overlaps one job's sort with another's reads: a little faster than Σ.
    assert shared.result.fpga_s < serial.result.fpga_s
    assert shared.fpga.links["s2f"].utilisation > 0.9


# Properties ------------------------------------------------------------------------------

# A 1-byte key indexes at most 256 dictionary values (§3.2).
jobs = st.sampled_from([None, 1, 2]).flatmap(
    lambda encoded: st.builds(
        TableJob,
        rows=st.integers(1, 400_000),
        row_bytes=st.floats(16.0, 8192.0),
        key_bits=st.sampled_from([32, 64]),
        encoded_key_bytes=st.just(encoded),
        dict_values=st.integers(1, 256 if encoded == 1 else 4096),
    )
)
des_options = st.builds(
    DesOptions,
    chunk_bytes=st.sampled_from([64 * 1024, 256 * 1024, MIB, 4 * MIB]),
    shuffle_order=st.sampled_from(["scatter", "gather"]),
    seed=st.integers(0, 2**32),
)
model_options = st.builds(
    ModelOptions,
    dram_merge=st.sampled_from(["bitonic_dram", "merge_tree"]),
    overlap=st.sampled_from(["overlap", "serial"]),
    staging=st.sampled_from(["auto", "ssd_direct"]),
)


def _link_bounds_hold(s: TableSortSimulation) -> None:
    for name, link in s.machine.links.items():
        assert link.bytes / link.capacity_bytes_per_s <= s.total_s * (1 + REL), name
        assert link.busy_s <= s.total_s * (1 + REL), name


@settings(max_examples=60, deadline=None)
@given(
    device=st.sampled_from([SMARTSSD, U250]),
    job=jobs,
    options=model_options,
    des=des_options,
)
def test_never_faster_than_the_model_or_the_slowest_stage(
    device: object, job: TableJob, options: ModelOptions, des: DesOptions
) -> None:
    assert device is SMARTSSD or device is U250
    s = simulate_table_sort(device, job, options, des=des)
    _link_bounds_hold(s)
    # The model prices every stage at its bandwidth bound and overlaps them perfectly.
    assert s.total_s >= s.model.total_s * (1 - REL)
    decode = s.model.decode
    if decode is not None:
        assert s.phases_s()["decode"] >= decode.total_s * (1 - REL)
    if s.model.shuffle.staging == "stage_in_dram":
        copy_s = s.model.shuffle.table_bytes / device.s2f_bytes_per_s
        assert s.phases_s()["shuffle"] >= copy_s * (1 - REL)
    assert s.energy_j == pytest.approx(device.power_w * s.total_s, rel=REL)
    assert s.energy_j >= 0


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(1, 300_000),
    row_bytes=st.floats(8.0, 16384.0),
    des=des_options,
    staging=st.sampled_from(["auto", "ssd_direct"]),
)
def test_bytes_are_conserved_through_the_shuffle(
    rows: int, row_bytes: float, des: DesOptions, staging: str
) -> None:
    options = ModelOptions(staging=staging)  # type: ignore[arg-type]
    s = simulate_table_sort(SMARTSSD, TableJob(rows=rows, row_bytes=row_bytes), options, des=des)
    job = s.machine.jobs[0]
    (shuffle,) = [p for p in job.phases if p.name.startswith("shuffle:")]
    table = rows * row_bytes
    assert shuffle.units_done == pytest.approx(rows, rel=REL)
    moved = job.phase_bytes("shuffle")
    if s.model.shuffle.staging == "stage_in_dram":
        assert shuffle.units_read == pytest.approx(rows, rel=REL)
        assert moved["s2f"] == pytest.approx(table, rel=REL)
        assert moved["d2f"] == pytest.approx(2 * table, rel=REL)
    else:
        page = SMARTSSD.ssd_page_bytes
        assert moved["s2f"] == pytest.approx(rows * math.ceil(row_bytes / page) * page, rel=REL)
        assert moved["d2f"] == pytest.approx(table, rel=REL)


def test_a_chunk_is_shared_by_no_more_shuffle_instances_than_it_has_rows() -> None:
    """Each instance took 1/k of every chunk: 10^7 instances cut a 600-row table into 10^7
    fractions of a row on the DRAM link (18 s, 1.3 GB). A row is one instance's."""
    job = TableJob(rows=600, row_bytes=100.0)  # one 1 MiB chunk holds all 600 rows
    many = simulate_table_sort(SMARTSSD.with_(shuffle_kernels=5000), job)
    as_many_as_rows = simulate_table_sort(SMARTSSD.with_(shuffle_kernels=600), job)
    assert many.machine.pools["shuffle"].sub_items == 600
    assert many.total_s == as_many_as_rows.total_s
    # Six instances share each of six chunks of 10,485 rows, as before.
    six = simulate_table_sort(SMARTSSD, TableJob(rows=60_000, row_bytes=100.0))
    assert six.machine.pools["shuffle"].sub_items == 6 * 6


@settings(max_examples=25, deadline=None)
@given(
    rows=st.integers(1_000, 2_000_000),
    row_bytes=st.floats(32.0, 1024.0),
    encoded=st.sampled_from([None, 2]),
    m=st.integers(1, 11),
)
def test_more_smartssds_are_never_slower(
    rows: int, row_bytes: float, encoded: int | None, m: int
) -> None:
    def run(devices: int, per_device: int) -> DevicesSimulation:
        job = TableJob(rows=per_device, row_bytes=row_bytes, encoded_key_bytes=encoded)
        return simulate_devices(devices, job)

    # The same table on every SSD: the time does not depend on 𝓜 (§13.10) ...
    assert run(m + 1, rows).result.nascent2_s == pytest.approx(run(m, rows).result.nascent2_s)
    # ... and one table spread over more SmartSSDs is done no later.
    fewer = run(m, math.ceil(rows / m)).result.nascent2_s
    more = run(m + 1, math.ceil(rows / (m + 1))).result.nascent2_s
    assert more <= fewer * (1 + REL)


@settings(max_examples=20, deadline=None)
@given(job=jobs, m=st.integers(2, 12), cpu=st.floats(0.0, 0.1))
def test_serial_baselines_grow_linearly_and_a_shared_path_bounds_the_concurrent_ones(
    job: TableJob, m: int, cpu: float
) -> None:
    work = CpuPhases(decode_s=cpu, sort_s=cpu, shuffle_s=cpu)
    one = simulate_devices(1, job, cpu_phases=work)
    serial = simulate_devices(m, job, cpu_phases=work)
    assert serial.result.fpga_s == pytest.approx(m * one.result.fpga_s, rel=1e-6)
    assert serial.result.cpu_s == pytest.approx(m * one.result.cpu_s, rel=1e-6)
    shared = simulate_devices(
        m, job, cpu_phases=work, des=DesOptions(baseline_schedule="concurrent")
    )
    for run, alone in ((shared.fpga, one.fpga), (shared.cpu, one.cpu)):
        path = run.links["s2f"]
        # Every job's reads cross the one path: it alone needs 𝓜 × a job's bytes / BW.
        assert path.bytes == pytest.approx(m * alone.links["s2f"].bytes, rel=1e-6)
        assert run.busy_s >= path.bytes / path.capacity_bytes_per_s * (1 - REL)
    # A chunk of fewer rows than the U250 has shuffle instances is split among as many
    # instances as rows (a row is one instance's): alone, a job leaves instances idle; run
    # together, the jobs' pieces are scheduled on the pool in rounds, which can end a round
    # later by a fraction of a piece (0.1% at 5 rows on 5 SSDs). Otherwise no slower.
    rows_per_chunk = min(job.rows, DesOptions().chunk_bytes / job.row_bytes)
    whole = shuffle_split(U250.shuffle_kernels, rows_per_chunk) == U250.shuffle_kernels
    slack = 1e-6 if whole else 1e-2
    assert shared.result.fpga_s <= serial.result.fpga_s * (1 + slack)
    assert shared.result.cpu_s <= serial.result.cpu_s * (1 + 1e-6)


@settings(max_examples=20, deadline=None)
@given(job=jobs, m=st.integers(1, 12), schedule=st.sampled_from(["serial", "concurrent"]))
def test_energy_is_power_times_time_and_never_negative(
    job: TableJob, m: int, schedule: str
) -> None:
    des = DesOptions(baseline_schedule=schedule)  # type: ignore[arg-type]
    s = simulate_devices(m, job, cpu_phases=CPU_WORK, des=des)
    r = s.result
    assert min(r.nascent2_j, r.fpga_j, r.cpu_j) >= 0
    assert r.nascent2_j == pytest.approx(SMARTSSD.power_w * sum(s.device_busy_s), rel=REL)
    assert r.fpga_j == pytest.approx(U250.power_w * r.fpga_s, rel=REL)
    assert r.cpu_j == pytest.approx(CPU.power_w * r.cpu_s, rel=REL)
    for machine in (*s.nascent2, s.fpga, s.cpu):
        for pool in machine.pools.values():
            assert 0 <= pool.utilisation <= 1 + REL
        for link in machine.links.values():
            assert 0 <= link.utilisation <= 1 + REL


# Bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "field"),
    [
        (DesOptions(chunk_bytes=0), "chunk_bytes"),
        (DesOptions(chunk_bytes=math.inf), "chunk_bytes"),
        # "1 MiB" was a TypeError ('>' between str and int), True ran as 1-byte chunks.
        (DesOptions(chunk_bytes="1 MiB"), "chunk_bytes"),  # type: ignore[arg-type]
        (DesOptions(chunk_bytes=True), "chunk_bytes"),
        # An int past float's range was an OverflowError from math.isfinite.
        pytest.param(DesOptions(chunk_bytes=10**400), "chunk_bytes", id="int-past-float"),
        (DesOptions(baseline_schedule="sometimes"), "baseline_schedule"),  # type: ignore[arg-type]
        (DesOptions(shuffle_order="random"), "shuffle_order"),  # type: ignore[arg-type]
        (DesOptions(seed=-1), "seed"),
    ],
)
def test_bad_options_name_their_field(options: DesOptions, field: str) -> None:
    with pytest.raises(SpecError) as err:
        simulate_table_sort(SMARTSSD, E6_JOB, des=options)
    assert err.value.field == field


_WRONG_KINDS: list[tuple[str, object]] = [
    # The third positional argument is the model's options: DesOptions there ended in
    # "'DesOptions' object has no attribute 'dram_merge'".
    ("options", lambda: simulate_table_sort(SMARTSSD, E6_JOB, DesOptions())),
    ("device", lambda: simulate_table_sort("smartssd", E6_JOB)),  # type: ignore[arg-type]
    ("device", lambda: simulate_table_sort(DEVICES, E6_JOB)),  # type: ignore[arg-type]
    ("job", lambda: simulate_table_sort(SMARTSSD, {"rows": 1024})),  # type: ignore[arg-type]
    ("des", lambda: simulate_table_sort(SMARTSSD, E6_JOB, des=ModelOptions())),  # type: ignore[arg-type]
    ("des", lambda: simulate_table_sort(SMARTSSD, E6_JOB, des=None)),  # type: ignore[arg-type]
    ("device", lambda: simulate_generic_sort("u250", 100, dict_values=10, width=4)),  # type: ignore[arg-type]
    (
        "options",
        lambda: simulate_generic_sort(SMARTSSD, 100, dict_values=10, width=4, options=FINE),
    ),  # type: ignore[arg-type]
    ("job", lambda: simulate_devices(2, "lineitem")),  # type: ignore[arg-type]
    ("devices", lambda: simulate_devices(2, E6_JOB, devices="devices.toml")),  # type: ignore[arg-type]
    ("cpu_phases", lambda: simulate_devices(2, E6_JOB, cpu_phases={"sort_s": 1.0})),  # type: ignore[arg-type]
    ("des", lambda: simulate_devices(2, E6_JOB, des={"chunk_bytes": MIB})),  # type: ignore[arg-type]
    ("sim", lambda: compare_with_model("E6")),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("field", "call"), _WRONG_KINDS, ids=[f for f, _ in _WRONG_KINDS])
def test_an_argument_of_the_wrong_kind_names_its_field(field: str, call: Any) -> None:
    """Each was an AttributeError from deep inside ('str' object has no attribute
    'clock_hz', 'dict' object has no attribute 'check', …)."""
    with pytest.raises(SpecError) as err:
        call()
    assert err.value.field == field


@pytest.mark.parametrize("m", [0, -3, 1.5, True])
def test_device_count_must_be_a_whole_number(m: object) -> None:
    with pytest.raises(SpecError) as err:
        simulate_devices(m, E6_JOB)  # type: ignore[arg-type]
    assert err.value.field == "devices"


_TOO_LONG: list[tuple[str, str, Any]] = [
    # 1,000,000 SSDs of E6: 3.2e9 events, minutes (10,000 took 3 s); the CLI refused such a
    # run, Python ran it.
    ("m/job/des.chunk_bytes", "SSDs", lambda: simulate_devices(10**6, E6_JOB)),
    (
        "job/des.chunk_bytes",
        "SSDs",
        lambda: simulate_table_sort(SMARTSSD, E6_JOB, des=DesOptions(chunk_bytes=0.01)),
    ),
    (
        "n/des.chunk_bytes",
        "chunks of pairs",
        lambda: simulate_generic_sort(SMARTSSD, 10**13, dict_values=2526, width=10),
    ),
]


@pytest.mark.parametrize(("field", "detail", "call"), _TOO_LONG, ids=[f for f, _, _ in _TOO_LONG])
def test_a_run_past_the_event_limit_is_refused_before_it_starts(
    monkeypatch: pytest.MonkeyPatch, field: str, detail: str, call: Any
) -> None:
    """The CLI refused a run estimated past MAX_EVENTS events; the Python API had no limit,
    and ran for minutes or hours. Now the same limit, naming the arguments and the time."""

    def run(*_: object) -> None:
        raise AssertionError("the simulation started")

    monkeypatch.setattr(des, "_run", run)
    with pytest.raises(SpecError) as err:
        call()
    assert err.value.field == field
    message = str(err.value)
    assert f"more than {des.MAX_EVENTS:.3g} (about 30 s): it would run for about " in message
    assert detail in message and " at 10 million events a second; lower " in message


def test_the_command_line_refuses_by_the_python_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """One limit: `ndpkit simulate nascent2` refuses by des.MAX_EVENTS, not a copy."""
    job = replace(E6_JOB, rows=1)
    _check_size(job, 100, MIB, DEVICES)  # 100 SSDs: about 300,000 events
    monkeypatch.setattr(des, "MAX_EVENTS", 1000)
    with pytest.raises(SpecError, match=r"more than 1e\+03"):
        _check_size(job, 100, MIB, DEVICES)


def test_difference_of_one_figure_summed_in_another_order_is_zero() -> None:
    model = 0.1 + 0.2 + 0.3  # 0.6000000000000001
    simulated = 0.3 + 0.2 + 0.1  # 0.6
    assert simulated != model
    assert Difference("job_s", simulated, model).difference_pct == 0.0
    real = Difference("job_s", 0.6006, 0.6).difference_pct
    assert real == pytest.approx(0.1)


def test_a_seed_that_is_not_a_whole_number_names_the_field() -> None:
    # 1.5 passed the range check and reached the Rust core, which refused its spec with
    # "invalid type: floating point `1.5`, expected u64 at line 1 column 2161".
    for seed in (1.5, True):
        with pytest.raises(SpecError, match="seed: must be a whole number"):
            DesOptions(seed=seed).check()  # type: ignore[arg-type]


def test_a_numpy_integer_device_count_is_a_count() -> None:
    """np.int64(2) (a count from an array) was refused as no whole number."""
    sim = simulate_devices(np.int64(2), E6_JOB)  # type: ignore[arg-type]
    assert sim.devices == 2 and type(sim.devices) is int
    assert sim.result.fpga_s == simulate_devices(2, E6_JOB).result.fpga_s


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("row_bytes", np.float32(4096.0)),
        ("row_bytes", np.int64(4096)),
        ("encoded_key_bytes", np.int64(2)),
    ],
)
def test_a_job_of_numpy_numbers_is_simulated_as_of_python_ones(field: str, value: object) -> None:
    """Each was "Object of type float32 (int64) is not JSON serializable" from the spec."""
    job = replace(E6_JOB, **{field: value})
    sim = simulate_table_sort(SMARTSSD, job)
    assert sim.total_s == simulate_table_sort(SMARTSSD, E6_JOB).total_s


def test_a_numpy_integer_seed_is_a_seed() -> None:
    # np.int64(3) failed in json.dumps ("Object of type int64 is not JSON serializable"),
    # then was refused as "not a whole number"; it is one.
    job = TableJob(rows=1024, row_bytes=4096.0, encoded_key_bytes=2, dict_values=1024)
    seeded = simulate_table_sort(SMARTSSD, job, des=DesOptions(seed=np.int64(3)))  # type: ignore[arg-type]
    assert seeded.events == simulate_table_sort(SMARTSSD, job, des=DesOptions(seed=3)).events
