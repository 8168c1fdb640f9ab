"""NASCENT2's performance and energy model (spec §5.8, §6.5, §7.4, §8.4, §10, §13.10).

Worked examples are computed by hand from the spec's formulas with the shipped SmartSSD
parameters (f = 300 MHz, AXI 64 B, 𝒫 = ℒ = 8, u_PCS = 2, u_MRG = 1, BW_S2F = 3 GB/s,
BW_D2F = 19 GB/s); the bandwidth caps are Hypothesis properties.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpkit.errors import ModelError, SpecError, UnknownNameError
from ndpkit.nascent.bitonic import argsort, expected_counts
from ndpkit.nascent.devices import BUILTIN, entry_origin
from ndpkit.nascent.model import (
    CpuPhases,
    FpgaDevice,
    ModelOptions,
    TableJob,
    compare,
    cpu_time,
    decode_time,
    generic_sort_time,
    load_devices,
    shuffle_time,
    sort_time,
    table_sort_time,
)

DEVICES = load_devices()
SMARTSSD = DEVICES.fpga("smartssd")
U250 = DEVICES.fpga("u250")
CPU = DEVICES.cpu("cpu")
F_HZ = 300e6
S2F = 3e9
D2F = 19e9
REL = 1e-12


def test_one_chunk_by_hand() -> None:
    # N = 131,072 32-bit keys = one chunk: A = N/𝒫 = 16,384 arrays, s_A = 14 (§5.4).
    n, e, p = 131_072, 4, 8
    arrays = n // p
    s_a = int(math.log2(arrays))
    n_pcs = (arrays / 2) * s_a * (s_a - 1) / 2
    n_mrg = (arrays / 2) * s_a
    t_load = n * e / 64
    t_pcs = n_pcs / 2
    t_mrg = n_mrg / 1
    t_store = n * (e + 4) / 64
    d_pipe = 3 * 4 / 2 + 4  # log₂𝒫(log₂𝒫 + 1)/2 + log₂(2𝒫)
    t_chunk = (t_load + t_pcs + t_mrg + t_store + d_pipe) / F_HZ
    t = sort_time(SMARTSSD, n)
    assert (t.chunks, t.streaming_passes, t.onchip_passes) == (1, 0, 0)
    assert (t.chunk.load, t.chunk.pcs, t.chunk.merge, t.chunk.store, t.chunk.pipe) == (
        t_load,
        t_pcs,
        t_mrg,
        t_store,
        d_pipe,
    )
    assert t.total_s == pytest.approx(t_chunk, rel=REL)
    assert t.total_s == pytest.approx(512_010 / F_HZ, rel=REL)


def test_one_more_element_needs_two_chunks_and_a_dram_merge() -> None:
    one, two = sort_time(SMARTSSD, 131_072), sort_time(SMARTSSD, 131_073)
    assert two.chunks == 2
    # n − c = 1: one streaming pass over the padded 2·N_c keys and indices, one on-chip pass.
    assert (two.streaming_passes, two.onchip_passes) == (1, 1)
    assert two.streaming_s == pytest.approx(2 * 262_144 * 8 / D2F, rel=REL)
    assert two.chunk_phase_s == pytest.approx(2 * one.total_s, rel=REL)
    assert two.total_s > 2 * one.total_s


def test_streaming_passes_follow_the_closed_form() -> None:
    for n_log in range(18, 24):
        t = sort_time(SMARTSSD, 1 << n_log)
        d = n_log - 17
        assert t.streaming_passes == d * (d + 1) // 2
        assert t.onchip_passes == d


def test_64_bit_capacity_is_half() -> None:
    assert sort_time(SMARTSSD, 65_536, 64).chunks == 1
    assert sort_time(SMARTSSD, 65_537, 64).chunks == 2
    assert sort_time(SMARTSSD, 131_072, 64).chunks == 2
    assert SMARTSSD.sort_capacity == 131_072


def test_merge_tree_passes() -> None:
    t = sort_time(SMARTSSD, 8 * 131_072, dram_merge="merge_tree", merge_ways=2)
    assert (t.chunks, t.merge_tree_passes, t.streaming_passes) == (8, 3, 0)
    four = sort_time(SMARTSSD, 8 * 131_072, dram_merge="merge_tree", merge_ways=4)
    assert four.merge_tree_passes == 2
    assert four.total_s < t.total_s


@pytest.mark.parametrize("kernels", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("source", ["dram", "ssd"])
def test_sort_replicas_never_beat_the_shared_dram(kernels: int, source: str) -> None:
    # 2^23 keys: 64 chunks, 6 on-chip passes. Whatever the number of sort kernels, a
    # phase is never faster than its DRAM bytes over the one BW_D2F that they share.
    n, e, index = 1 << 23, 4, 4
    t = sort_time(SMARTSSD.with_(sort_kernels=kernels), n, source=source)  # type: ignore[arg-type]
    chunk_bytes = t.chunks * t.chunk.elements * (e + e + index)
    onchip_bytes = t.onchip_passes * t.chunks * 2 * t.chunk.elements * (e + index)
    assert t.chunk_phase_s >= chunk_bytes / D2F
    assert t.onchip_merge_s >= onchip_bytes / D2F  # 805 MB: 42.4 ms
    if kernels >= 4:
        # The kernels of a wave reload and store together, so the DRAM sets the pace:
        # per wave 2 × kernels × 1 MiB over BW_D2F, plus a chunk's merge compute.
        alone = t.onchip_pass_s - 2 * t.chunk.elements * (e + index) / (64 * F_HZ)
        waves = t.chunks // kernels
        wave = 2 * kernels * t.chunk.elements * (e + index) / D2F + alone
        assert t.onchip_merge_s == pytest.approx(t.onchip_passes * waves * wave, rel=REL)
    one = sort_time(SMARTSSD, n, source=source)  # type: ignore[arg-type]
    assert t.total_s <= one.total_s * (1 + REL)


def test_the_paper_sort_kernel_counts_are_unchanged_by_sharing_dram() -> None:
    # One SmartSSD kernel is charged at its AXI port alone; the U250's two kernels at
    # 2 × 19.2 GB/s stay within its 77 GB/s, so both are still waves × one chunk's time.
    for device in (SMARTSSD, U250):
        t = sort_time(device, 1 << 23)
        waves = math.ceil(t.chunks / device.sort_kernels)
        assert t.chunk_phase_s == pytest.approx(waves * t.chunk_s, rel=REL)
        assert t.onchip_merge_s == pytest.approx(t.onchip_passes * waves * t.onchip_pass_s, rel=REL)


def test_sort_time_is_data_independent() -> None:
    # The model prices counts that the functional kernel reproduces for any data of size n.
    n = 3000
    runs = [
        argsort(np.random.default_rng(seed).integers(0, 2**32, n, dtype=np.uint32)).counts
        for seed in (1, 2)
    ]
    runs.append(argsort(np.zeros(n, dtype=np.uint32)).counts)
    assert runs[0] == runs[1] == runs[2] == expected_counts(n)
    # One chunk (3,000 keys padded to 4,096): §5.8's terms priced from the kernel's own counts.
    c = runs[0]
    assert c.chunks == 1
    cycles = (
        c.chunk_elements * 4 / 64  # T_load
        + c.pcs_ops / 2  # T_PCS, u_PCS = 2
        + c.merge_ops / 1  # T_MRG, u_MRG = 1
        + c.chunk_elements * (4 + 4) / 64  # T_store: keys and indices
        + (3 * 4 / 2 + 4)  # D_pipe
    )
    assert sort_time(SMARTSSD, n).total_s == pytest.approx(cycles / F_HZ, rel=REL)


def test_ssd_input_adds_the_p2p_read() -> None:
    n = 1 << 20
    dram, serial = sort_time(SMARTSSD, n), sort_time(SMARTSSD, n, source="ssd", overlap="serial")
    overlap = sort_time(SMARTSSD, n, source="ssd")
    assert serial.total_s == pytest.approx(dram.total_s + n * 4 / S2F, rel=REL)
    assert dram.total_s <= overlap.total_s <= serial.total_s


def test_u250_capacity_is_the_on_chip_ratio_split_over_replicas() -> None:
    scaled = 131_072 * U250.onchip_bytes / SMARTSSD.onchip_bytes / U250.sort_kernels
    assert U250.sort_capacity == 2 ** math.floor(math.log2(scaled))


def test_decoder_lanes_and_worked_bandwidths() -> None:
    # O7: ⌈3 GB/s / (300 MHz · k)⌉ = 10 lanes for 1-byte keys, 5 for 2-byte keys.
    one = decode_time(SMARTSSD, 1 << 20, 1, width=4, dict_values=256)
    two = decode_time(SMARTSSD, 1 << 20, 2, width=4, dict_values=64_000)
    assert (one.lanes, two.lanes) == (10, 5)
    # Variable length, 1-byte keys: one key per cycle → 300 MB/s input.
    var = decode_time(SMARTSSD, 1 << 20, 1, mean_length=8.5, l_max=16)
    assert var.bottleneck == "key_rate"
    assert var.input_bytes_per_s == pytest.approx(F_HZ, rel=REL)
    assert var.total_bytes_per_s == pytest.approx(F_HZ * (1 + 8.5), rel=REL)
    full = decode_time(SMARTSSD, 1 << 20, 1, mean_length=8.5, l_max=16, accounting="full")
    assert full.total_bytes_per_s == pytest.approx(F_HZ * (2 + 8.5), rel=REL)
    assert one.dict_s == pytest.approx(256 / F_HZ, rel=REL)  # no page bytes given
    loaded = decode_time(SMARTSSD, 1, 1, width=4, dict_values=256, dict_bytes=1024)
    assert loaded.dict_s == pytest.approx(1024 / S2F + 256 / F_HZ, rel=REL)


def test_decoder_lanes_shrink_to_fit_the_table_memory() -> None:
    small = SMARTSSD.with_(dictionary_memory_bytes=3 * 64_000 * 8.0)
    assert decode_time(small, 100, 2, width=8, dict_values=64_000).lanes == 3
    with pytest.raises(ModelError, match="table memory"):
        decode_time(SMARTSSD.with_(dictionary_memory_bytes=10.0), 100, 2, width=8, dict_values=64)


devices = st.builds(
    lambda dev, s2f, d2f, f: dev.with_(s2f_bytes_per_s=s2f, d2f_bytes_per_s=d2f, clock_hz=f),
    st.sampled_from([SMARTSSD, U250]),
    st.floats(1e8, 1e11),
    st.floats(1e8, 1e11),
    st.floats(1e7, 1e9),
)


@settings(max_examples=200, deadline=None)
@given(
    device=st.sampled_from([SMARTSSD, U250]),
    keys=st.integers(1, 1 << 30),
    key_bytes=st.sampled_from([1, 2, 4]),
    width=st.one_of(st.none(), st.integers(1, 64)),
    mean=st.floats(0.5, 64.0),
    lanes=st.one_of(st.none(), st.integers(1, 64)),
    accounting=st.sampled_from(["paper", "full"]),
)
def test_decoder_never_exceeds_its_links(
    device: FpgaDevice,
    keys: int,
    key_bytes: int,
    width: int | None,
    mean: float,
    lanes: int | None,
    accounting: str,
) -> None:
    kw = {"width": width} if width is not None else {"mean_length": mean, "l_max": 64}
    t = decode_time(device, keys, key_bytes, lanes=lanes, accounting=accounting, **kw)  # type: ignore[arg-type]
    assert t.input_bytes_per_s <= device.s2f_bytes_per_s * (1 + 1e-12)
    assert t.total_bytes_per_s <= device.d2f_bytes_per_s * (1 + 1e-12)
    assert t.decode_s == pytest.approx(keys / t.input_bytes_per_s * key_bytes, rel=1e-9)


@settings(max_examples=100, deadline=None)
@given(device=devices, keys=st.integers(1, 1 << 28), key_bytes=st.sampled_from([1, 2]))
def test_decoder_caps_hold_for_any_link_speeds(
    device: FpgaDevice, keys: int, key_bytes: int
) -> None:
    t = decode_time(device, keys, key_bytes, width=8)
    assert t.input_bytes_per_s <= device.s2f_bytes_per_s * (1 + 1e-12)
    assert t.total_bytes_per_s <= device.d2f_bytes_per_s * (1 + 1e-12)


@settings(max_examples=200, deadline=None)
@given(
    device=st.sampled_from([SMARTSSD, U250]),
    rows=st.integers(1, 10**7),
    row_bytes=st.floats(1.0, 4e6),
    staging=st.sampled_from(["auto", "ssd_direct"]),
    overlap=st.sampled_from(["serial", "overlap"]),
)
def test_shuffle_is_never_faster_than_the_ssd_link(
    device: FpgaDevice, rows: int, row_bytes: float, staging: str, overlap: str
) -> None:
    t = shuffle_time(device, rows, row_bytes, staging=staging, overlap=overlap)  # type: ignore[arg-type]
    assert t.total_s >= rows * row_bytes / device.s2f_bytes_per_s * (1 - 1e-12)
    assert t.staging in ("stage_in_dram", "ssd_direct")


def test_shuffle_staging_follows_dram_capacity() -> None:
    small = shuffle_time(SMARTSSD, 1024, 4096)
    assert (small.staging, small.output_sink) == ("stage_in_dram", "fpga_dram")
    # 10k rows × 1M 4-byte columns = 40 GB: beyond the SmartSSD's 4 GiB DRAM.
    big = shuffle_time(SMARTSSD, 10_000, 4e6)
    assert (big.staging, big.output_sink) == ("ssd_direct", "ssd")
    # 1 GB fits once but not twice: staged, output streamed to the SSD (O6).
    mid = shuffle_time(SMARTSSD, 1000, 3e6)
    assert (mid.staging, mid.output_sink) == ("stage_in_dram", "ssd")
    with pytest.raises(SpecError, match="nascent2 model: staging: stage_in_dram needs"):
        shuffle_time(SMARTSSD, 10_000, 4e6, staging="stage_in_dram")


def test_shuffle_worked_example() -> None:
    # 1,024 rows of 4 KiB: gather at min(6 · b_sh, 19/2 GB/s), overlapped with the 3 GB/s copy.
    t = shuffle_time(SMARTSSD, 1024, 4096)
    b_sh = 4096 / (150e-9 + 4096 / (64 * F_HZ))
    assert t.gather_bytes_per_s == pytest.approx(min(6 * b_sh, D2F / 2), rel=1e-9)
    assert t.total_s == pytest.approx(1024 * 4096 / S2F, rel=REL)
    serial = shuffle_time(SMARTSSD, 1024, 4096, overlap="serial")
    assert serial.total_s == pytest.approx(t.copy_s + t.gather_s, rel=REL)


JOB = TableJob(rows=1024, row_bytes=4096.0, encoded_key_bytes=2, dict_values=1024)


def _jobs() -> tuple[float, float, float]:
    n = table_sort_time(SMARTSSD, JOB).total_s
    f = table_sort_time(U250, JOB).total_s
    c = cpu_time(CPU, JOB.table_bytes, CpuPhases(0.001, 0.002, 0.003)).total_s
    return n, f, c


@settings(max_examples=50, deadline=None)
@given(m=st.integers(1, 64))
def test_multi_device_scaling(m: int) -> None:
    n, f, c = _jobs()
    r = compare([n] * m, [f] * m, [c] * m, smartssd=SMARTSSD, fpga=U250, cpu=CPU)
    assert r.nascent2_s == n  # independent of 𝓜 for identical jobs
    assert r.fpga_s == pytest.approx(m * f, rel=1e-12)
    assert r.cpu_s == pytest.approx(m * c, rel=1e-12)
    assert r.nascent2_j == pytest.approx(m * 7.5 * n, rel=1e-12)
    assert r.fpga_j == pytest.approx(U250.power_w * m * f, rel=1e-12)
    assert r.speedup_vs_cpu == pytest.approx(m * c / n, rel=1e-12)
    assert r.energy_vs_cpu == pytest.approx(CPU.power_w * c / (7.5 * n), rel=1e-9)


def test_table_sort_phases() -> None:
    t = table_sort_time(SMARTSSD, JOB)
    phases = t.phases_s()
    assert t.total_s == pytest.approx(sum(phases.values()), rel=REL)
    assert phases["host"] == 0.0
    assert t.decode is not None and t.decode.mode == "fixed"
    assert t.sort.source == "dram"
    # Shuffle dominates a realistic table (§10.5): 4 MiB of rows against 2 KiB of keys.
    assert phases["shuffle"] == max(phases.values())
    plain = table_sort_time(SMARTSSD, TableJob(rows=1024, row_bytes=4096.0))
    assert plain.decode is None and plain.sort.source == "ssd"
    generic = table_sort_time(
        SMARTSSD,
        TableJob(
            rows=1024, row_bytes=100.0, encoded_key_bytes=2, dict_values=2526, key_kind="generic"
        ),
        host_sort=lambda u: 1e-8 * u,
    )
    assert generic.host.host_sort_s == pytest.approx(2526e-8)
    assert generic.phases_s()["host"] > 0
    with pytest.raises(ModelError, match="dictionary encoded"):
        table_sort_time(SMARTSSD, TableJob(rows=10, row_bytes=8.0, key_kind="generic"))
    merged = table_sort_time(SMARTSSD, JOB, ModelOptions(dram_merge="merge_tree"))
    assert merged.sort.dram_merge == "merge_tree"


def test_generic_sort_host_terms_depend_on_u_not_n() -> None:
    a = generic_sort_time(SMARTSSD, 1000, dict_values=64_000, width=4, host_sort=0.01)
    b = generic_sort_time(SMARTSSD, 1_000_000, dict_values=64_000, width=4, host_sort=0.01)
    assert a.host == b.host
    assert a.host.h2d_s == pytest.approx((64_000 * 4 + 2 * 64_000) / SMARTSSD.host_bytes_per_s)
    assert b.total_s > a.total_s
    s = generic_sort_time(SMARTSSD, 1000, dict_values=64_000, mean_length=8.5, l_max=16)
    assert s.decode is not None and s.decode.mode == "variable"
    tiny = SMARTSSD.with_(dictionary_memory_bytes=200_000.0)  # the 128 kB mapping fits, not 544 kB
    with pytest.raises(ModelError, match="host_decode_s"):
        generic_sort_time(tiny, 1000, dict_values=64_000, mean_length=8.5, l_max=16)
    fallback = generic_sort_time(
        tiny, 1000, dict_values=64_000, mean_length=8.5, l_max=16, host_decode_s=0.5
    )
    assert fallback.decode is None and fallback.phases_s()["decode"] == 0.5


def test_cpu_time_reads_the_table_at_the_ssd_rate() -> None:
    t = cpu_time(CPU, 3e9, CpuPhases(sort_s=2.0, basis="measured"))
    assert t.phases_s() == {"read": 1.0, "decode": 0.0, "sort": 2.0, "shuffle": 0.0}
    with pytest.raises(SpecError, match="basis"):
        cpu_time(CPU, 1.0, CpuPhases(basis="guessed"))  # type: ignore[arg-type]


def test_bad_options_name_the_field() -> None:
    with pytest.raises(SpecError, match="dram_merge"):
        sort_time(SMARTSSD, 10, dram_merge="quick")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="key_bits"):
        sort_time(SMARTSSD, 10, 16)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="width"):
        decode_time(SMARTSSD, 10, 1)
    with pytest.raises(SpecError, match="staging"):
        shuffle_time(SMARTSSD, 10, 8, staging="tape")  # type: ignore[arg-type]


# Device files -------------------------------------------------------------------------


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "devices.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_devices_carry_units_and_sources() -> None:
    assert DEVICES.names() == ["cpu", "smartssd", "u250"]
    assert (SMARTSSD.s2f_bytes_per_s, SMARTSSD.d2f_bytes_per_s) == (3e9, 19e9)
    assert (SMARTSSD.dram_bytes, SMARTSSD.clock_hz, SMARTSSD.power_w) == (4 * 2**30, 300e6, 7.5)
    assert (SMARTSSD.decoder_kernels, SMARTSSD.sort_kernels, SMARTSSD.shuffle_kernels) == (1, 1, 6)
    assert (U250.d2f_bytes_per_s, U250.sort_kernels, U250.shuffle_kernels) == (77e9, 2, 12)
    assert CPU.threads == 12
    for device in (SMARTSSD, U250, CPU):
        assert device.sources
        for note in device.sources.values():
            assert note.split("]")[0] + "]" in ("[paper]", "[derived]", "[choice]", "[external]")


def test_user_file_extends_a_shipped_device(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        'version = 1\n[fast]\nextends = "smartssd"\n'
        's2f_bandwidth = { value = "6 GB/s", source = "[choice] a Gen4 link" }\n',
    )
    devices = load_devices(path)
    assert devices.names() == ["cpu", "fast", "smartssd", "u250"]
    fast = devices.fpga("fast")
    assert fast.s2f_bytes_per_s == 6e9
    assert fast.d2f_bytes_per_s == SMARTSSD.d2f_bytes_per_s
    assert fast.sources["s2f_bytes_per_s"] == "[choice] a Gen4 link"


def test_a_command_refuses_file_devices_it_would_not_take(tmp_path: Path) -> None:
    """With `used`, a device of the file that is none of them and no parent of one is
    refused (its values would be ignored); a parent through `extends` within the file is
    taken; without `used` (the Python API) the file may add any device."""
    used = ("smartssd", "u250", "cpu")
    chain = _write(
        tmp_path,
        'version = 1\n[hot]\nextends = "u250"\n'
        'power = { value = "15 W", source = "[choice] test" }\n'
        '[smartssd]\nextends = "hot"\n',
    )
    assert load_devices(chain, used=used).fpga("smartssd").power_w == 15.0
    extra = _write(tmp_path, 'version = 1\n[fast]\nextends = "smartssd"\n')
    assert "fast" in load_devices(extra).names()
    with pytest.raises(UnknownNameError, match=r"unknown device 'fast'.*ignored"):
        load_devices(extra, used=used)
    with pytest.raises(SpecError, match="defines no device"):
        load_devices(_write(tmp_path, "version = 1\n"), used=used)


# A dictionary in the spec's bounds (2^16 values, §3.2) that overflows a decoder's table.
_TOO_BIG = {"dict_values": 2**16, "dict_bytes": 2**16 * 1024.0}


def test_an_inherited_entry_is_blamed_on_the_device_that_set_it(tmp_path: Path) -> None:
    """Through a chain (smartssd → base → shipped u250): the clock is base's, in the file;
    the table memory the shipped u250's. A kind that cannot take an inherited key is the
    device's own fault (its kind line), not the parent file's."""
    chain = _write(
        tmp_path,
        'version = 1\n[smartssd]\nextends = "base"\n[base]\nextends = "u250"\n'
        'clock = { value = "250 MHz", source = "[choice] test" }\n',
    )
    smartssd = load_devices(chain).fpga("smartssd")
    assert entry_origin(smartssd, "clock") == f"{chain}: base.clock (inherited by smartssd)"
    assert entry_origin(smartssd, "dictionary_memory") == (
        f"{BUILTIN}: u250.dictionary_memory (inherited by smartssd)"
    )
    with pytest.raises(ModelError, match=re.escape("u250.dictionary_memory (inherited by")):
        decode_time(smartssd, 10, 2, mean_length=1024.0, l_max=1024, **_TOO_BIG)
    recast = _write(tmp_path, 'version = 1\n[mycpu]\nextends = "cpu"\nkind = "fpga"\n')
    with pytest.raises(SpecError) as error:
        load_devices(recast)
    assert str(error.value).startswith(f"{recast}: mycpu.kind: kind 'fpga' does not take ")
    assert f"inherits from cpu ({BUILTIN}) through extends" in str(error.value)


def test_overrides_replace_single_entries() -> None:
    d = load_devices(
        overrides={"smartssd": {"dram_random_latency": "200 ns", "shuffle_kernels": 8}}
    )
    dev = d.fpga("smartssd")
    assert dev.t_rand_s == pytest.approx(200e-9)
    assert dev.shuffle_kernels == 8
    assert dev.sources["t_rand_s"] == "[override]"
    with pytest.raises(UnknownNameError, match="known: cpu, smartssd, u250"):
        load_devices(overrides={"smartsd": {"power": "1 W"}})


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ('s2f_bandwidth = { value = "-3 GB/s", source = "x" }', "bad.s2f_bandwidth", "positive"),
        ('s2f_bandwidth = { value = "3 GHz", source = "x" }', "bad.s2f_bandwidth", "bandwidth"),
        ('s2f_bandwidth = "3 GB/s"', "bad.s2f_bandwidth", "value = "),
        ('s2f_bandwidth = { value = "3 GB/s" }', "bad.s2f_bandwidth.source", "source note"),
        ('sorter_width = { value = 6, source = "x" }', "bad.sorter_width", "power of two"),
        ('sorter_width = { value = 1, source = "x" }', "bad.sorter_width", "power of two ≥ 2"),
        ('bram_rows = { value = 12, source = "x" }', "bad.bram_rows", "power of two ≥ 1"),
        ('shuffle_kernels = { value = 0, source = "x" }', "bad.shuffle_kernels", "≥ 1"),
        # 10^7 ran the simulation for minutes; no FPGA holds a thousand shuffle kernels.
        (
            'shuffle_kernels = { value = 1025, source = "x" }',
            "bad.shuffle_kernels",
            "at most 1,024, got 1,025",
        ),
        ('sort_kernels = { value = 10000000, source = "x" }', "bad.sort_kernels", "at most"),
        ('decoder_kernels = { value = 2000, source = "x" }', "bad.decoder_kernels", "at most"),
        ('speed = { value = "1 GB/s", source = "x" }', "bad.speed", "unknown key"),
    ],
)
def test_bad_device_entries_name_file_and_field(
    tmp_path: Path, body: str, field: str, message: str
) -> None:
    path = _write(tmp_path, f'version = 1\n[bad]\nextends = "smartssd"\n{body}\n')
    with pytest.raises(SpecError, match=message) as info:
        load_devices(path)
    assert info.value.source == str(path)
    assert info.value.field == field


def test_bad_device_files(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="missing") as info:
        load_devices(_write(tmp_path, 'version = 1\n[x]\nkind = "cpu"\n'))
    assert info.value.field == "x.threads"
    with pytest.raises(SpecError, match="malformed TOML: "):
        load_devices(_write(tmp_path, "version = = 1"))
    with pytest.raises(SpecError) as info:
        load_devices(_write(tmp_path, "version = 2"))
    assert info.value.field == "version"
    with pytest.raises(SpecError, match="extends unknown device 'ssd'"):
        load_devices(_write(tmp_path, 'version = 1\n[x]\nextends = "ssd"\n'))
    with pytest.raises(SpecError, match="'fpga' or 'cpu'"):
        load_devices(_write(tmp_path, 'version = 1\n[x]\nkind = "gpu"\n'))
    with pytest.raises(SpecError, match=r"missing\.toml: file not found$"):
        load_devices(tmp_path / "missing.toml")
    with pytest.raises(SpecError, match="cannot read: Is a directory"):
        load_devices(tmp_path)


def test_unknown_device_lists_the_known_ones() -> None:
    with pytest.raises(UnknownNameError, match="known: smartssd, u250"):
        DEVICES.fpga("cpu")
    with pytest.raises(UnknownNameError, match="known: cpu"):
        DEVICES.cpu("xeon")


def test_a_device_file_nested_too_deeply_is_one_error(tmp_path: Path) -> None:
    """tomllib raised RecursionError on arrays 100,000 deep."""
    path = _write(tmp_path, "version = 1\n[x]\nkind = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(SpecError) as info:
        load_devices(path)
    assert info.value.source == str(path)
    assert info.value.detail.startswith("nested too deeply")


def test_device_errors_name_the_source_and_the_field(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as info:
        load_devices(overrides={"smartssd": {"kind": "cpu"}})
    assert str(info.value) == (
        "command line: --option smartssd.kind=cpu: a device's kind is set in its device "
        "file (--devices), not overridden"
    )
    with pytest.raises(UnknownNameError) as unknown:
        load_devices(overrides={"nosuch": {"clock": 1}})
    assert str(unknown.value).startswith("command line: --option nosuch.clock=1: unknown device")
    path = tmp_path / "d.toml"
    path.write_text('version = 1\n[smartssd]\nextends = "cpu"\n')
    with pytest.raises(UnknownNameError) as kind:
        load_devices(path).fpga("smartssd")
    assert str(kind.value) == (
        f"{path}: unknown FPGA device 'smartssd'; known: u250; smartssd has kind cpu"
    )


def test_a_file_device_may_extend_one_that_extends(tmp_path: Path) -> None:
    path = tmp_path / "d.toml"
    path.write_text(
        'version = 1\n[b]\nextends = "a"\nclock = { value = "200 MHz", source = "t" }\n'
        '[a]\nextends = "smartssd"\npower = { value = "9 W", source = "t" }\n'
    )
    found = load_devices(path)
    assert (found.fpga("b").clock_hz, found.fpga("b").power_w) == (200e6, 9.0)
    assert found.fpga("a").clock_hz == SMARTSSD.clock_hz
    path.write_text('version = 1\n[a]\nextends = "b"\n[b]\nextends = "a"\n')
    with pytest.raises(SpecError, match="extends in a cycle: a → b → a"):
        load_devices(path)


def test_the_decoder_table_memory_is_named_and_checked_in_both_modes() -> None:
    small = SMARTSSD.with_(dictionary_memory_bytes=1000.0)
    with pytest.raises(ModelError) as fixed:
        decode_time(small, 10, 2, width=4, dict_values=1024)
    assert str(fixed.value) == (
        "smartssd.dictionary_memory (overridden): a 1024-value × 4 B dictionary exceeds "
        "the decoder's 1000 B table memory"
    )
    with pytest.raises(
        ModelError, match=r"smartssd\.dictionary_memory \(overridden\): a 100-value, 1200 B"
    ):
        decode_time(small, 10, 2, mean_length=12.0, l_max=16, dict_values=100, dict_bytes=1200)
    fits = decode_time(small, 10, 2, mean_length=12.0, l_max=16, dict_values=80, dict_bytes=960)
    assert fits.mode == "variable"


def test_a_device_entry_at_fault_is_named_with_its_file(tmp_path: Path) -> None:
    """An entry read from a device file is blamed on the file and field, as a load error
    would be (it said "nascent2 model" whatever the file)."""
    path = _write(
        tmp_path,
        'version = 1\n[smartssd]\nextends = "smartssd"\n'
        'dictionary_memory = { value = "1 kB", source = "[choice] test" }\n',
    )
    device = load_devices(path).fpga("smartssd")
    with pytest.raises(ModelError) as error:
        decode_time(device, 10, 2, width=4, dict_values=1024)
    assert str(error.value).startswith(f"{path}: smartssd.dictionary_memory: a 1024-value")


def test_each_entry_is_blamed_on_where_it_was_set(tmp_path: Path) -> None:
    """Per entry, not per device: what a file's device inherits from a shipped one, and
    the shipped devices merged beside it, are the package's; an --option override is the
    command line's; `with_` says overridden."""
    path = _write(
        tmp_path,
        'version = 1\n[smartssd]\nextends = "smartssd"\n'
        'power = { value = "9 W", source = "[choice] test" }\n',
    )
    found = load_devices(path, {"smartssd": {"clock": "250 MHz"}})
    smartssd, u250 = found.fpga("smartssd"), found.fpga("u250")
    assert entry_origin(smartssd, "power") == f"{path}: smartssd.power"
    assert entry_origin(smartssd, "dictionary_memory") == f"{BUILTIN}: smartssd.dictionary_memory"
    assert entry_origin(u250, "dictionary_memory") == f"{BUILTIN}: u250.dictionary_memory"
    assert entry_origin(smartssd, "clock") == "command line: --option smartssd.clock=250 MHz"
    assert entry_origin(smartssd.with_(power_w=3.0), "power") == "smartssd.power (overridden)"
    with pytest.raises(ModelError, match=rf"^{re.escape(BUILTIN)}: smartssd.dictionary_memory"):
        decode_time(smartssd, 10, 2, mean_length=1024.0, l_max=1024, **_TOO_BIG)


def test_impossible_generic_sort_inputs_are_refused_not_turned_into_times() -> None:
    # A negative or NaN host time gave a negative or NaN T_gs; a mean value length above
    # l_max (the longest value) or NaN, and more dictionary values than the keys can
    # index (U > 2^16 for 2-byte keys, §3.2), were accepted and timed.
    fixed = {"dict_values": 10, "width": 4}
    for bad in (-1.0, math.nan, lambda u: -3.0):
        with pytest.raises(SpecError, match="host_sort: must be a finite number of seconds"):
            generic_sort_time(SMARTSSD, 1000, host_sort=bad, **fixed)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="host_decode_s"):
        generic_sort_time(SMARTSSD, 1000, host_decode_s=math.nan, **fixed)  # type: ignore[arg-type]
    for length in (math.nan, -5.0):
        with pytest.raises(SpecError, match="mean_length"):
            generic_sort_time(SMARTSSD, 1000, dict_values=10, mean_length=length, l_max=16)
    with pytest.raises(SpecError, match="mean_length: must be a number from 0 to l_max"):
        decode_time(SMARTSSD, 1000, 2, mean_length=40.0, l_max=16, dict_values=10)
    with pytest.raises(SpecError, match="dict_values: 70000 dictionary values cannot be"):
        generic_sort_time(SMARTSSD, 1000, dict_values=70_000, width=4)
    with pytest.raises(SpecError, match="dict_values"):
        decode_time(SMARTSSD, 1000, 1, width=4, dict_values=257)
    # The bounds themselves are accepted: 2^16 values of 2-byte keys, mean length = l_max.
    assert generic_sort_time(SMARTSSD, 1000, dict_values=2**16, width=2).total_s > 0
    assert decode_time(SMARTSSD, 1000, 2, mean_length=16.0, l_max=16).total_s > 0


def test_cpu_phases_that_are_not_times_are_refused() -> None:
    # docs/nascent2-simulation.md's example passed CpuPhases(decode_s=..., ...), which
    # failed deep in total_s ("unsupported operand type(s) for +: 'float' and
    # 'ellipsis'"); a negative or NaN phase gave a negative or NaN T_CPU.
    for bad in (..., -1.0, math.nan, "0.1"):
        with pytest.raises(SpecError, match="nascent2 model: sort_s: must be a"):
            cpu_time(CPU, 3e9, CpuPhases(sort_s=bad))  # type: ignore[arg-type]
    assert cpu_time(CPU, 3e9, CpuPhases(sort_s=np.float32(2.0))).total_s == 3.0  # type: ignore[arg-type]


def test_a_dictionary_of_no_real_size_is_refused() -> None:
    # TableJob(dict_value_bytes=nan) gave T_N = nan; dict_values=-5 was reported as a
    # dictionary that "exceeds the decoder's table memory".
    nan_values = TableJob(10, 4.0, encoded_key_bytes=2, dict_values=10, dict_value_bytes=math.nan)
    with pytest.raises(SpecError, match="nascent2 model: dict_bytes: must be a finite number"):
        table_sort_time(SMARTSSD, nan_values)
    with pytest.raises(SpecError, match="nascent2 model: dict_values: must be ≥ 0, got -5"):
        table_sort_time(SMARTSSD, TableJob(10, 4.0, encoded_key_bytes=2, dict_values=-5))


@pytest.mark.parametrize(
    ("rows", "row_bytes", "message"),
    [
        (10, math.inf, "row_bytes: must be a finite number of bytes > 0, got inf"),
        (10, 0.0, "row_bytes: must be a finite number of bytes > 0, got 0.0"),
        (1.5, 8.0, "rows: must be a whole number of rows ≥ 0, got 1.5"),
        (-1, 8.0, "rows: must be a whole number of rows ≥ 0, got -1"),
    ],
)
def test_a_table_of_no_real_shape_is_refused(rows: Any, row_bytes: float, message: str) -> None:
    # row_bytes=inf was an OverflowError from the shuffle, rows=1.5 a TypeError
    with pytest.raises(SpecError, match=re.escape(f"nascent2 model: {message}")):
        table_sort_time(SMARTSSD, TableJob(rows, row_bytes))


def test_no_dictionary_holds_more_than_2_16_values_whatever_the_key_width() -> None:
    # §3.2: a column with more than 2^16 unique values is stored plain; §3.4: NKeys are
    # u16. 4-byte keys let decode_time and generic_sort_time take 70,000 or 10^8 values.
    for u in (2**16 + 1, 70_000, 10**8):
        with pytest.raises(SpecError, match=r"dict_values: .*\(at most 65536"):
            decode_time(SMARTSSD, 1000, 4, width=4, dict_values=u)
        with pytest.raises(SpecError, match=r"dict_values: .*\(at most 65536"):
            generic_sort_time(SMARTSSD, 1000, dict_values=u, key_bytes=4, width=4)
    assert generic_sort_time(SMARTSSD, 1000, dict_values=2**16, key_bytes=4, width=4).total_s > 0
