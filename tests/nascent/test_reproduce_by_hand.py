"""`ndpkit reproduce nascent2`'s model columns recomputed by hand from the spec's equations
(§5.8 sort, §6.5 shuffle, §7.4 decoder, §10.2 table sort, §10.6–10.7 scaling and energy)
with the shipped device values, independently of `ndpkit.nascent.timing`.

Only the model's columns are checked: the CPU's are measured. No published result appears
here; every expected value is computed below from the spec's inputs."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ndpkit.nascent.devices import load_devices
from ndpkit.reproduce.nascent2 import Settings, document, reproduce

F = 300e6  # O1 clock
S2F, D2F_SMARTSSD, D2F_U250 = 3e9, 19e9, 77e9
AXI = 64  # bytes per beat
P = 8  # O2 sorter width
T_RAND = 150e-9
DRAM_SMARTSSD = 4 * 2**30  # O15: 4 GB read as GiB
REL = 1e-12


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return document(reproduce(Settings(), tables=["E2", "E4", "E6"]))


def _one_chunk_sort_cycles(n: int, e: int = 4) -> float:
    """§5.8 for n ≤ N_c (padded to a power of two): T_load + T_PCS + T_MRG + T_store + D_pipe."""
    padded = 1 << (max(n, P) - 1).bit_length()
    arrays = padded // P
    s_a = int(math.log2(arrays))
    n_pcs = arrays / 2 * s_a * (s_a - 1) / 2
    n_mrg = arrays / 2 * s_a
    s = math.log2(P)
    d_pipe = s * (s + 1) / 2 + math.log2(2 * P)
    return padded * e / AXI + n_pcs / 2 + n_mrg / 1 + padded * (e + 4) / AXI + d_pipe


def test_e2_bandwidths_by_hand(doc: dict[str, Any]) -> None:
    """Fixed: T = max(N/(lanes·f), N·k/S2F, N·(k+w)/D2F), lanes = ⌈S2F/(f·k)⌉ (O7);
    variable: one key per cycle, so the input is f·k whatever the strings (B ≥ ℓ̄)."""
    rows = doc["E2"]
    n = 2**26
    for r in rows:
        k = r["key_bytes"]
        out = r["mean_output_bytes"]
        if r["output"].startswith("fixed"):
            lanes = math.ceil(S2F / (F * k))
            t = max(n / (lanes * F), n * k / S2F, n * (k + out) / D2F_SMARTSSD)
            assert r["lanes"] == lanes
        else:
            l_max = int(r["output"].split("≤ ")[1].split(" ")[0])
            t = max(n / F, n * k / S2F, n * (k + out) / D2F_SMARTSSD, n * out / (F * l_max))
        assert r["input_gb_per_s"] == pytest.approx(n * k / t / 1e9, rel=REL), r
        assert r["total_gb_per_s"] == pytest.approx(n * (k + out) / t / 1e9, rel=REL), r


def test_e4_shuffle_and_staging_by_hand(doc: dict[str, Any]) -> None:
    """§6.5: staged, max(table/S2F, table/min(6·b_sh, D2F/2)); past the 4 GiB DRAM, rows
    come from the SSD in 4 KiB pages, 80 µs each, six kernels, at most S2F of useful bytes."""
    for r in doc["E4"]:
        n, row = r["rows"], 4 * r["columns"]
        table = n * row
        reserved = n * (4 + 4)  # keys and indices
        if table + reserved <= DRAM_SMARTSSD:
            staging = "stage_in_dram"
            b_sh = row / (T_RAND + row / (AXI * F))
            shuffle = max(table / S2F, table / min(6 * b_sh, D2F_SMARTSSD / 2))
            sink = "fpga_dram" if 2 * table + reserved <= DRAM_SMARTSSD else "ssd"
        else:
            staging, sink = "ssd_direct", "ssd"
            fetched = math.ceil(row / 4096) * 4096
            per_kernel = row / (80e-6 + fetched / S2F)
            shuffle = table / min(6 * per_kernel, S2F * row / fetched, D2F_SMARTSSD)
        assert (r["staging"], r["output_sink"]) == (staging, sink), r
        assert r["table_gb"] == pytest.approx(table / 1e9, rel=REL)
        assert r["shuffle_s"] == pytest.approx(shuffle, rel=REL), r
        if n <= 131_072:  # one chunk: the key column streams in from the SSD (O10)
            cycles = _one_chunk_sort_cycles(n)
            padded = 1 << (n - 1).bit_length()
            first = max(n * 4 / S2F, padded * 4 / AXI / F)
            sort = first + (cycles - padded * 4 / AXI) / F
            assert r["sort_s"] == pytest.approx(sort, rel=REL), r
        assert r["nascent2_s"] == pytest.approx(r["sort_s"] + r["shuffle_s"], rel=REL)


def test_e6_by_hand(doc: dict[str, Any]) -> None:
    """§10.2 on a 1,024 × 4,096 B table with 16-bit keys over 1,024 values decoded to 32 bits:
    T_dict + T_dec + T_sort + T_shuffle; both FPGAs are bound by the 3 GB/s SSD link."""
    n, row, values = 1024, 4096, 1024

    def table_sort(d2f: float, shuffle_kernels: int) -> float:
        t_dict = values * 4 / S2F + values / F
        lanes = math.ceil(S2F / (F * 2))
        t_dec = max(n / (lanes * F), n * 2 / S2F, n * (2 + 4) / d2f)
        t_sort = _one_chunk_sort_cycles(n) / F
        b_sh = row / (T_RAND + row / (AXI * F))
        t_shuffle = max(n * row / S2F, n * row / min(shuffle_kernels * b_sh, d2f / 2))
        return t_dict + t_dec + t_sort + t_shuffle

    smartssd, u250 = table_sort(D2F_SMARTSSD, 6), table_sort(D2F_U250, 12)
    for r in doc["E6"]:
        m = r["devices"]
        assert r["nascent2_s"] == pytest.approx(smartssd, rel=REL)
        assert r["fpga_s"] == pytest.approx(m * u250, rel=REL)
        # §10.7: E_N2 = Σ_m 7.5 W · T_N,m; E_U250 = 40 W · T_U250(𝓜); E_CPU = 65 W · T_CPU(𝓜)
        assert r["energy_vs_fpga"] == pytest.approx(40 * m * u250 / (7.5 * m * smartssd), rel=REL)
        assert r["energy_vs_cpu"] == pytest.approx(65 * r["cpu_s"] / (7.5 * m * smartssd), rel=REL)


def test_table_1_capacities_in_the_device_file() -> None:
    """Spec §1.2 Table 1 and §1.4: the decoder's table memory is the 128 URAM of 288 Kb; the
    on-chip total adds the 984 BRAM of 36 Kb (9.25 MB, "9.3 MB"); the U250's ℒ is O11's
    131,072 × (57 MB / 9.3 MB) / 2 replicas, floored to a power of two (2,048·𝒫·ℒ)."""
    devices = load_devices()
    smartssd, u250 = devices.fpga("smartssd"), devices.fpga("u250")
    uram, bram = 128 * 288 * 1024 // 8, 984 * 36 * 1024 // 8
    assert smartssd.dictionary_memory_bytes == uram
    assert smartssd.onchip_bytes == pytest.approx(uram + bram, rel=0.01)
    assert 2048 * smartssd.p * smartssd.l == 131_072
    scaled = 131_072 * u250.onchip_bytes / smartssd.onchip_bytes / u250.sort_kernels
    assert 2048 * u250.p * u250.l == 1 << int(math.log2(scaled))
