"""RISP's analytic models by hand: CPB (Table I), Baseline Eqs. (1)-(5), RISP Eqs. (6)-(8),
energy Eqs. (9)-(10) with the §5.2 attribution, and the R-options.

Every expected value is computed in the test from the paper's parameters (Tables I-III,
spec §8), in decimal units (R2): 400 MB/s = 4e8 B/s, 1.4 GB = 1.4e9 B. Tolerances are
relative 1e-9 unless stated: the model and the hand arithmetic differ only by float
rounding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ndpkit.errors import ModelError, SpecError
from ndpkit.hw import Platform, load_platform
from ndpkit.model import (
    FULL_GEAR,
    HOST_ONLY,
    Configuration,
    Estimate,
    Options,
    estimate,
    in_storage,
)
from ndpkit.profile import FpgaCell, Profile, load_profile, load_profiles

REL = 1e-9

# Table II / III, SI.
B_CH = 4e8
B_DRAM = 15e9
B_SATA = 1.97e9
F_HOST, N_CPU = 3.1e9, 4
F_RU = 1e8
EPC = 0.9e-9
P_NVM_A, P_NVM_I = 0.066, 0.0165
P_DRAM_A, P_DRAM_I = 0.5, 0.35
P_CTRL_A, P_CTRL_I = 0.15, 0.075
P_DDR, P_CHIPSET, P_SATA = 0.3604, 6.0, 7.0
P_RU_IDLE = 0.024
P_FIXED = 1.358  # public cell + static power (R6, calibrated to Eq. 13)
P_CELL = {"sobel": 2.125e-3, "binarize": 2.125e-3, "kmeans": 19.125e-3}
# Table I/II per app: D, β, α, n_delay, CPB.
APP = {
    "kmeans": {"D": 0.3e9, "beta": 3.6466, "alpha": 9, "delay": 15, "cpb": 72.3757},
    "binarize": {"D": 1.4e9, "beta": 3.0, "alpha": 1, "delay": 2, "cpb": 16.4822},
    "sobel": {"D": 0.5e9, "beta": 1.0, "alpha": 1, "delay": 4, "cpb": 106.5680},
}


def risp(channels: int = 64) -> Platform:
    p = load_platform("risp-64ch")
    return p if channels == 64 else p.with_channels(channels)


def baseline(channels: int = 64) -> Platform:
    p = load_platform("risp-baseline")
    return p if channels == 64 else p.with_channels(channels)


def profile(app: str) -> Profile:
    return load_profile(app, "risp")


def run(
    platform: Platform, app: str | Profile, config: Configuration = FULL_GEAR, **opts: Any
) -> Estimate:
    prof = profile(app) if isinstance(app, str) else app
    return estimate(platform, prof, config, Options(units="decimal", **opts))


def parts(e: Estimate) -> dict[str, float]:
    return e.energy.by_component_j


# --- CPB, Table I ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("app", "cpi", "ipb", "ratio", "unrounded", "cpb"),
    [
        ("kmeans", 0.502, 131.5462, 1.096, 72.375667, 72.3757),
        ("binarize", 0.601, 24.8411, 1.104, 16.482169, 16.4822),
        ("sobel", 0.438, 224.2452, 1.085, 106.568046, 106.5680),
    ],
)
def test_cpb_is_cpi_x_ipb_x_frequency_ratio(app, cpi, ipb, ratio, unrounded, cpb):
    """§6: CPB = CPI x IPB x frequency ratio, rounded to 4 decimals like Table I."""
    p = profile(app)
    assert (p.cpi, p.ipb, p.frequency_ratio) == (cpi, ipb, ratio)
    assert cpi * ipb * ratio == pytest.approx(unrounded, abs=5e-7)
    assert p.host_cycles_per_byte == pytest.approx(cpb, abs=1e-12)
    assert p.instructions_per_byte == ipb


def test_cpb_order_and_table_ii_sizes():
    cpb = {app: profile(app).host_cycles_per_byte for app in APP}
    assert cpb["sobel"] > cpb["kmeans"] > cpb["binarize"]
    for app, row in APP.items():
        p = profile(app)
        assert p.data_bytes == pytest.approx(row["D"], rel=1e-12), app
        assert p.alpha == pytest.approx(row["beta"], rel=1e-12), app  # ndpkit alpha = β


def test_cpb_given_directly_wins_and_absent_is_none():
    p = Profile(app="x", data_size="1 GB", alpha=1, cycles_per_byte=12.5)
    assert p.host_cycles_per_byte == 12.5
    assert Profile(app="x", data_size="1 GB", alpha=1).host_cycles_per_byte is None


@pytest.mark.parametrize(
    "metrics",
    [{"cpi": 0.5}, {"ipb": 3.0}, {"cpi": 0.5, "ipb": 3.0}, {"ipb": 3.0, "frequency_ratio": 1.1}],
)
def test_partial_profiler_metrics_are_rejected(metrics):
    with pytest.raises(
        SpecError, match=r"^Profile: \(top level\): give all three of cpi, ipb and frequency_ratio"
    ):
        Profile(app="x", data_size="1 GB", alpha=1, **metrics)


def test_partial_profiler_metrics_in_a_file_name_the_app(tmp_path: Path):
    path = tmp_path / "mine.toml"
    path.write_text('[apps.x]\ndata_size = "1 GB"\nalpha = 2\ncpi = 0.5\nipb = 10\n')
    with pytest.raises(SpecError) as info:
        load_profiles(path)
    assert info.value.field == "apps.x"
    assert "give all three" in info.value.detail


# --- Baseline, Eqs. (1)-(5) ------------------------------------------------------------------


def test_baseline_binarization_16_channels_sata_by_hand():
    """Binarization, 16 channels, SATA 3.2, 4 cores at 3.1 GHz:

    t_ch2DRAM   = 1.4e9 / (16 x 4e8)               = 0.21875 s          (1)
    t_DRAM2host = 1.4e9 / 1.97e9                   = 0.710660 s         (2)
    t_transfer  = max(0.21875, 0.710660)           = 0.710660 s         (3)
    t_hostComp  = 16.4822 x 1.4e9 / (3.1e9 x 4)    = 1.860894 s         (4)
    T           = 0.710660 + 1.860894              = 2.571553 s         (5)
    """
    e = run(baseline(16), "binarize")
    t_ch = 1.4e9 / (16 * B_CH)
    t_link = 1.4e9 / B_SATA
    t_cpu = 16.4822 * 1.4e9 / (F_HOST * N_CPU)
    total = max(t_ch, t_link) + t_cpu
    assert e.stage_times_s["channel"] == pytest.approx(0.21875, rel=REL)
    assert e.stage_times_s["link"] == pytest.approx(t_link, rel=REL)
    assert e.stage_times_s["cpu"] == pytest.approx(t_cpu, rel=REL)
    assert e.t_cpu_s == pytest.approx(t_cpu, rel=REL)
    assert e.time_s == pytest.approx(total, rel=REL)
    assert e.time_s == pytest.approx(2.571553, abs=1e-6)
    # Processing bandwidth D / T (§4.4) and the channel count.
    assert e.performance_bytes_per_s == pytest.approx(1.4e9 / total, rel=REL)
    assert e.channels_on == 16
    assert e.pipeline.engines_active == 0


def test_baseline_with_few_channels_is_channel_bound():
    """Binarization, 2 channels: t_ch2DRAM = 1.4e9 / 8e8 = 1.75 s > t_DRAM2host,
    so T = 1.75 + 1.860894 s."""
    e = run(baseline(2), "binarize")
    t_cpu = 16.4822 * 1.4e9 / (F_HOST * N_CPU)
    assert e.time_s == pytest.approx(1.75 + t_cpu, rel=REL)


def test_baseline_on_the_risp_ssd_equals_the_baseline_platform():
    """split=host on risp-64ch is the Baseline of Eqs. (1)-(5) on the same SSD."""
    for app in APP:
        on_risp = run(risp(16), app, HOST_ONLY)
        on_base = run(baseline(16), app)
        assert on_risp.time_s == pytest.approx(on_base.time_s, rel=REL), app
        assert parts(on_risp) == pytest.approx(parts(on_base), rel=REL), app
        # Without cells, full gear on risp-baseline is the Baseline too.
        assert run(baseline(16), app, FULL_GEAR).time_s == pytest.approx(on_base.time_s)


def test_baseline_energy_binarization_16_channels_by_hand():
    """Eq. (9)-(10) with the §5.2 attribution, T = 2.571553 s, t_link = 0.710660 s:

    NVM            16 x (66 mW x 0.21875 + 16.5 mW x (T - 0.21875))
    on-device DRAM 500 mW x t_transfer + 350 mW x (T - t_transfer)
    controller     150 mW x t_transfer +  75 mW x (T - t_transfer)
    host interface 7 W x t_DRAM2host (idle 0 W, R14)
    host DDR       360.4 mW x T
    host chipset   6 W x T
    host CPUs      EPC x CPB x D = 0.9 nJ x 16.4822 x 1.4e9 = 20.767572 J
    """
    e = run(baseline(16), "binarize")
    t_ch = 1.4e9 / (16 * B_CH)
    t_link = 1.4e9 / B_SATA
    t_transfer = max(t_ch, t_link)
    total = t_transfer + 16.4822 * 1.4e9 / (F_HOST * N_CPU)
    expected = {
        "nvm": 16 * (P_NVM_A * t_ch + P_NVM_I * (total - t_ch)),
        "device_dram": P_DRAM_A * t_transfer + P_DRAM_I * (total - t_transfer),
        "controller": P_CTRL_A * t_transfer + P_CTRL_I * (total - t_transfer),
        "host_interface": P_SATA * t_link,
        "host_dram": P_DDR * total,
        "host_chipset": P_CHIPSET * total,
        "host_cpu": EPC * 16.4822 * 1.4e9,
    }
    assert set(parts(e)) == set(expected)
    for name, joules in expected.items():
        assert parts(e)[name] == pytest.approx(joules, rel=REL), name
    assert parts(e)["host_cpu"] == pytest.approx(20.767572, abs=1e-6)
    assert e.energy_j == pytest.approx(sum(expected.values()), rel=REL)


@pytest.mark.parametrize("app", list(APP))
def test_host_cpu_is_the_largest_baseline_consumer(app):
    """§12: on the Baseline the host CPUs take the largest share, for all three apps."""
    e = run(baseline(16), app)
    assert max(parts(e), key=parts(e).__getitem__) == "host_cpu"


# --- RISP, Eqs. (6)-(8) ----------------------------------------------------------------------


def test_risp_sobel_16_channels_by_hand_is_compute_bound():
    """Sobel, 16 channels, f_RU = 100 MHz, α = 1, n_delay = 4, β = 1:

    t_ch2RU   = 0.5e9 / (16 x 4e8)          = 0.078125 s
    t_RUComp  = (0.5e9 / (1 x 16) + 4) / 1e8 = 0.31250004 s     (6)
    t_RU2DRAM = 0.5e9 / (1 x 15e9)           = 0.033333 s       (7)
    T_RISP    = max(...)                     = 0.31250004 s     (8)
    """
    e = run(risp(16), "sobel")
    t = e.stage_times_s
    assert t["channel"] == pytest.approx(0.5e9 / (16 * B_CH), rel=REL)
    assert t["cell"] == pytest.approx((0.5e9 / 16 + 4) / F_RU, rel=REL)
    assert t["cell"] == pytest.approx(0.31250004, rel=1e-12)
    assert t["dram"] == pytest.approx(0.5e9 / (1 * B_DRAM), rel=REL)
    assert set(t) == {"channel", "cell", "dram"}  # Eq. (8): no host stage by default
    assert e.time_s == pytest.approx(0.31250004, rel=1e-12)
    assert e.t_ndp_s == pytest.approx(e.time_s, rel=REL) and e.t_cpu_s == 0.0
    assert e.bottleneck == "cell"
    assert e.pipeline.engines_active == 16 and e.channels_on == 16


def test_risp_kmeans_16_channels_by_hand_is_transfer_bound():
    """K-Means, 16 channels, α = 9, n_delay = 15, β = 3.6466:

    t_ch2RU   = 0.3e9 / 6.4e9                   = 0.046875 s
    t_RUComp  = (0.3e9 / (9 x 16) + 15) / 1e8   = 0.0208335 s
    t_RU2DRAM = 0.3e9 / (3.6466 x 15e9)         = 0.0054846 s
    T_RISP    = t_ch2RU: the NVM channels are the bottleneck.
    """
    e = run(risp(16), "kmeans")
    t = e.stage_times_s
    assert t["channel"] == pytest.approx(0.046875, rel=REL)
    assert t["cell"] == pytest.approx((0.3e9 / (9 * 16) + 15) / F_RU, rel=REL)
    assert t["dram"] == pytest.approx(0.3e9 / (3.6466 * B_DRAM), rel=REL)
    assert e.time_s == pytest.approx(0.046875, rel=REL)
    assert e.bottleneck == "channel"


def test_binarization_saturates_once_alpha_f_ru_reaches_b_ch():
    """R16: with 16 channels, t_RUComp = (1.4e9/16 + 2)/f_RU falls below
    t_ch2RU = 0.21875 s once α f_RU ≥ b_ch, i.e. f_RU ≥ 400 MHz; then T stays 0.21875 s."""
    t = {f: run(risp(16).with_cell_clock(f), "binarize").time_s for f in (2e8, 4e8, 5e8)}
    assert t[2e8] == pytest.approx((1.4e9 / 16 + 2) / 2e8, rel=REL)
    assert t[5e8] == pytest.approx(0.21875, rel=REL)
    assert t[4e8] == pytest.approx(t[5e8], rel=1e-7)


def test_risp_energy_kmeans_16_channels_by_hand():
    """§5.2 for RISP, K-Means at 16 channels (T = t_ch2RU = 0.046875 s, RU idles part):

    NVM         16 x 66 mW x T                               (read the whole run)
    RU          (1.358 + 16 x 19.125 mW) x t_RUComp + 24 mW x (T - t_RUComp)
    device DRAM 500 mW x t_RU2DRAM + 350 mW x (T - t_RU2DRAM)
    controller  150 mW x T                                   (R13: SSD chipset)
    No host components: E_RISP = E_sys.
    """
    e = run(risp(16), "kmeans")
    total = 0.046875
    t_cell = (0.3e9 / (9 * 16) + 15) / F_RU
    t_dram = 0.3e9 / (3.6466 * B_DRAM)
    p_ru = P_FIXED + 16 * P_CELL["kmeans"]
    expected = {
        "nvm": 16 * P_NVM_A * total,
        "ru": p_ru * t_cell + P_RU_IDLE * (total - t_cell),
        "device_dram": P_DRAM_A * t_dram + P_DRAM_I * (total - t_dram),
        "controller": P_CTRL_A * total,
    }
    assert p_ru == pytest.approx(1.664, rel=1e-12)
    assert set(parts(e)) == set(expected)
    for name, joules in expected.items():
        assert parts(e)[name] == pytest.approx(joules, rel=REL), name
    assert e.energy_j == pytest.approx(sum(expected.values()), rel=REL)
    # State times per §5.2: the RU computes for t_RUComp, then idles.
    ru = e.state_times.of("ru")
    assert ru["active"] == pytest.approx(t_cell, rel=REL)
    assert ru["idle"] == pytest.approx(total - t_cell, rel=REL)


def test_risp_energy_sobel_16_channels_by_hand_matches_eq_13():
    """Sobel at 16 channels, compute-bound (T = t_RUComp): the NVM channels idle after
    t_ch2RU, the RU is active all run. Power E/T = 1.858 + 0.032 x 16 = 2.370 W (Eq. 13):
    the preset's RU powers are calibrated to Eq. (13) (R6), so that last line checks the
    energy sum against the calibration, not the model against the paper."""
    e = run(risp(16), "sobel")
    total = (0.5e9 / 16 + 4) / F_RU
    t_ch = 0.078125
    t_dram = 0.5e9 / B_DRAM
    expected = {
        "nvm": 16 * (P_NVM_A * t_ch + P_NVM_I * (total - t_ch)),
        "ru": (P_FIXED + 16 * P_CELL["sobel"]) * total,
        "device_dram": P_DRAM_A * t_dram + P_DRAM_I * (total - t_dram),
        "controller": P_CTRL_A * total,
    }
    assert parts(e) == pytest.approx(expected, rel=REL)
    assert e.energy_j / e.time_s == pytest.approx(1.858 + 0.032 * 16, rel=1e-6)


# --- options ---------------------------------------------------------------------------------


def test_cpu_energy_instructions_uses_ipb():
    """R3 `instructions`: E_hostCPU = EPC x IPB x D = 0.9 nJ x 24.8411 x 1.4e9 = 31.2998 J."""
    cycles = run(baseline(16), "binarize")
    instr = run(baseline(16), "binarize", cpu_energy="instructions")
    assert parts(instr)["host_cpu"] == pytest.approx(EPC * 24.8411 * 1.4e9, rel=REL)
    assert parts(instr)["host_cpu"] == pytest.approx(31.299786, abs=1e-6)
    others = {k: v for k, v in parts(instr).items() if k != "host_cpu"}
    assert others == pytest.approx({k: v for k, v in parts(cycles).items() if k != "host_cpu"})
    assert instr.time_s == cycles.time_s


def test_cpu_energy_instructions_without_ipb_is_an_error():
    p = Profile(app="x", data_size="1 GB", alpha=1, cycles_per_byte=10)
    assert parts(run(baseline(16), p))["host_cpu"] == pytest.approx(EPC * 10 * 1e9, rel=REL)
    with pytest.raises(ModelError, match="no ipb"):
        run(baseline(16), p, cpu_energy="instructions")


def test_host_stage_adds_the_result_transfer():
    """R11, Binarization at 64 channels: t_RUComp = (1.4e9/64 + 2)/1e8 = 0.21875002 s,
    t_host = D / (β b_hostIO) = 1.4e9 / (3 x 1.97e9) = 0.236887 s, which now bounds T."""
    plain = run(risp(), "binarize")
    host = run(risp(), "binarize", host_stage="with_host_stage")
    t_host = 1.4e9 / (3 * B_SATA)
    assert "host_link" not in plain.stage_times_s
    assert host.stage_times_s["host_link"] == pytest.approx(t_host, rel=REL)
    assert plain.time_s == pytest.approx((1.4e9 / 64 + 2) / F_RU, rel=REL)
    assert host.time_s == pytest.approx(t_host, rel=REL)
    assert host.bottleneck == "host_link"
    # The RU now idles for T - t_RUComp at 24 mW.
    ru = host.state_times.of("ru")
    assert ru["idle"] == pytest.approx(t_host - (1.4e9 / 64 + 2) / F_RU, rel=REL)
    # Behind PCIe x16 the link is no longer the bound: T is Eq. (8)'s again.
    fast = run(risp().with_interface("pcie3-x16"), "binarize", host_stage="with_host_stage")
    assert fast.time_s == pytest.approx(plain.time_s, rel=REL)


@pytest.mark.parametrize("app", list(APP))
def test_reconfiguration_include_adds_10_ms_and_4_mj(app):
    """R15: loading a 4 MB bitstream adds 4 MB / (4 B x 100 MHz) = 10 ms and 400 mW x 10 ms;
    over the load the other components wait (spec §5.2: idle over T minus their active time,
    the SSD chipset over all of T), and the processing bandwidth is D / T with the load."""
    ignore = run(risp(16), app)
    include = run(risp(16), app, reconfiguration="include")
    assert include.time_s - ignore.time_s == pytest.approx(0.010, abs=1e-12)
    assert parts(include)["reconfiguration"] == pytest.approx(0.004, rel=1e-9)
    waiting = {
        "nvm": 16 * 0.0165 * 0.010,  # 16 powered channels idle at 16.5 mW
        "device_dram": 0.350 * 0.010,  # idle at 350 mW
        "controller": 0.150 * 0.010,  # the SSD chipset, active over T (R13)
        "ru": 0.0,  # the RU draws the reconfiguration power meanwhile, not its idle power
    }
    for component, joules in waiting.items():
        assert parts(include)[component] - parts(ignore)[component] == pytest.approx(
            joules, abs=1e-12
        ), component
    assert include.energy_j - ignore.energy_j == pytest.approx(
        0.004 + sum(waiting.values()), abs=1e-12
    )
    assert include.performance_bytes_per_s == pytest.approx(
        include.data_bytes / include.time_s, rel=1e-12
    )
    assert include.stage_times_s == ignore.stage_times_s  # Eq. (8)'s stages themselves
    assert "reconfiguration" not in parts(ignore)
    assert any("10 ms" in note and "4 mJ" in note for note in include.notes)
    # The Baseline loads no bitstream.
    assert run(risp(16), app, HOST_ONLY, reconfiguration="include").energy_j == pytest.approx(
        run(risp(16), app, HOST_ONLY).energy_j, rel=REL
    )


def test_reconfiguration_include_needs_a_declared_bitstream():
    data = risp(16).model_dump()
    data["engines"]["reconfiguration"] = None
    bare = Platform.model_validate(data, context={"si": True})
    assert run(bare, "sobel").energy_j > 0  # ignored by default
    with pytest.raises(ModelError, match="reconfiguration"):
        run(bare, "sobel", reconfiguration="include")


def test_nvm_power_per_device():
    """R5 `per_device`: one NVM figure for the whole device, Sobel 16 channels:
    66 mW x t_ch2RU + 16.5 mW x (T - t_ch2RU) (not x 16)."""
    e = run(risp(16), "sobel", nvm_power="per_device")
    total, t_ch = (0.5e9 / 16 + 4) / F_RU, 0.078125
    assert parts(e)["nvm"] == pytest.approx(P_NVM_A * t_ch + P_NVM_I * (total - t_ch), rel=REL)
    per_channel = run(risp(16), "sobel")
    assert parts(per_channel)["nvm"] == pytest.approx(16 * parts(e)["nvm"], rel=REL)
    assert parts(e)["ru"] == pytest.approx(parts(per_channel)["ru"], rel=REL)


def test_ru_power_proportional():
    """R6 `proportional`: P_RU(k) = P_RU(16) x k / 16, with P_RU(16) = 1.358 + 16 x 2.125 mW
    = 1.392 W. Sobel at 64 cells (compute-bound, T = t_RUComp): 5.568 W x T.
    At k = 16 the two scalings agree."""
    p16 = P_FIXED + 16 * P_CELL["sobel"]
    prof = profile("sobel")
    prop = Options(ru_power="proportional")
    assert in_storage.ru_power_w(risp(), prof, 64, prop) == pytest.approx(p16 * 4, rel=REL)
    assert in_storage.ru_power_w(risp(), prof, 16, prop) == pytest.approx(p16, rel=REL)
    assert in_storage.ru_power_w(risp(), prof, 64, Options()) == pytest.approx(
        P_FIXED + 64 * P_CELL["sobel"], rel=REL
    )
    e = run(risp(), "sobel", ru_power="proportional")
    assert parts(e)["ru"] == pytest.approx(5.568 * (0.5e9 / 64 + 4) / F_RU, rel=REL)
    assert parts(run(risp(16), "sobel", ru_power="proportional")) == pytest.approx(
        parts(run(risp(16), "sobel")), rel=REL
    )


def test_ru_time_configured_keeps_the_ru_active():
    """ru_time=configured, K-Means 16 channels: RU at 1.664 W for all of T = 0.046875 s."""
    e = run(risp(16), "kmeans", ru_time="configured")
    assert parts(e)["ru"] == pytest.approx(1.664 * 0.046875, rel=REL)
    assert e.state_times.of("ru")["idle"] == 0.0
    assert e.time_s == run(risp(16), "kmeans").time_s


def test_attribution_all_active_risp():
    """R4 `all_active_whole_run`, K-Means 16 channels: every component active for T."""
    e = run(risp(16), "kmeans", attribution="all_active")
    total = 0.046875
    expected = {
        "nvm": 16 * P_NVM_A * total,
        "ru": 1.664 * total,
        "device_dram": P_DRAM_A * total,
        "controller": P_CTRL_A * total,
    }
    assert parts(e) == pytest.approx(expected, rel=REL)


def test_attribution_all_active_baseline():
    """Binarization 16 channels, T = 2.571553 s: NVM 16 x 66 mW, DRAM 500 mW, controller
    150 mW, SATA 7 W, DDR 360.4 mW, chipset 6 W, all for T; CPUs EPC x CPB x D."""
    e = run(baseline(16), "binarize", attribution="all_active")
    total = 1.4e9 / B_SATA + 16.4822 * 1.4e9 / (F_HOST * N_CPU)
    expected = {
        "nvm": 16 * P_NVM_A * total,
        "device_dram": P_DRAM_A * total,
        "controller": P_CTRL_A * total,
        "host_interface": P_SATA * total,
        "host_dram": P_DDR * total,
        "host_chipset": P_CHIPSET * total,
        "host_cpu": EPC * 16.4822 * 1.4e9,
    }
    assert parts(e) == pytest.approx(expected, rel=REL)


# --- powered-off channels, configurations ----------------------------------------------------


@pytest.mark.parametrize("app", list(APP))
@pytest.mark.parametrize("split", ["device", "host"])
def test_powered_off_channels_cost_nothing(app, split):
    """16 of 64 channels powered (R12 data_on_active_only): the same time and energy as a
    16-channel SSD; the 48 others spend T in the off state at 0 J."""
    on = Configuration(split=split, channels=tuple(range(16)))
    e = run(risp(), app, on)
    small = run(risp(16), app, Configuration(split=split))
    assert e.time_s == pytest.approx(small.time_s, rel=REL)
    assert parts(e) == pytest.approx(parts(small), rel=REL)
    assert e.state_times.of("nvm")["off"] == pytest.approx(48 * e.time_s, rel=REL)
    assert e.channels_on == 16


def test_powered_channels_need_not_be_the_first_ones():
    a = run(risp(), "sobel", Configuration(channels=tuple(range(16))))
    b = run(risp(), "sobel", Configuration(channels=tuple(range(48, 64))))
    assert a.time_s == pytest.approx(b.time_s, rel=REL)
    assert a.energy_j == pytest.approx(b.energy_j, rel=REL)


def test_reduced_cells_read_all_channels():
    """§7.4, R10 `reduced_cells`: 4 cells, each serving 16 channels: t_ch2RU = D/(64 b_ch),
    t_RUComp = (D/(α x 4) + n_delay) / f_RU; the RU draws 1.358 + 4 x 2.125 mW."""
    route = tuple(16 * (ch // 16) for ch in range(64))
    config = Configuration(active=(0, 16, 32, 48), route=route)
    e = run(risp(), "sobel", config)
    assert e.stage_times_s["channel"] == pytest.approx(0.5e9 / (64 * B_CH), rel=REL)
    assert e.stage_times_s["cell"] == pytest.approx((0.5e9 / 4 + 4) / F_RU, rel=REL)
    assert e.pipeline.engines_active == 4 and e.channels_on == 64
    assert e.pipeline.max_shards_per_engine == 16
    assert parts(e)["ru"] == pytest.approx((P_FIXED + 4 * 2.125e-3) * e.time_s, rel=REL)


def test_cell_load_max_group_charges_the_largest_group():
    """R9/R10: groups of 22, 21, 21 channels on 3 cells: ideal = D/(α x 3); max_group =
    D x 22/64 / α."""
    route = tuple(0 if ch < 22 else 22 if ch < 43 else 43 for ch in range(64))
    config = Configuration(active=(0, 22, 43), route=route)
    ideal = run(risp(), "sobel", config)
    worst = run(risp(), "sobel", config, cell_load="max_group")
    assert ideal.stage_times_s["cell"] == pytest.approx((0.5e9 / 3 + 4) / F_RU, rel=REL)
    assert worst.stage_times_s["cell"] == pytest.approx((0.5e9 * 22 / 64 + 4) / F_RU, rel=REL)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (Configuration(active=(0,), route=(1,) * 64), "routed to cells that are off"),
        (Configuration(active=(0, 1), route=(0,) * 63 + (2,)), "routed to cells that are off"),
        (Configuration(channels=(64,)), "distinct ids in 0..63"),
        (Configuration(channels=(-1,)), "distinct ids in 0..63"),
        (Configuration(channels=(3, 3)), "distinct ids"),
        (Configuration(channels=()), "distinct ids"),
        (Configuration(split="host", channels=(0, 99)), "distinct ids"),
        (Configuration(route=(0,) * 10), "route must name a cell for each of the 64"),
        (Configuration(active=(64,), route=(64,) * 64), "cell ids must be in 0..63"),
        (Configuration(active=()), "at least one processing cell"),
    ],
)
def test_bad_configurations_are_model_errors(config, message):
    with pytest.raises(ModelError, match=message):
        run(risp(), "sobel", config)


def test_models_refuse_what_they_cannot_answer():
    with pytest.raises(ModelError, match="not described per flash channel"):
        in_storage.run(load_platform("rans"), profile("sobel"), FULL_GEAR, Options())
    # A kernel with neither a cell design nor a throughput on the cells.
    bare = Profile(app="mystery", data_size="1 GB", alpha=2, cycles_per_byte=5)
    with pytest.raises(ModelError, match="platform 'risp-64ch': no engine rate for app 'mystery'"):
        run(risp(), bare)
    # ... and one the host cannot run (no CPB, no host rate).
    with pytest.raises(ModelError, match="host cannot run it"):
        run(baseline(), Profile(app="y", data_size="1 GB", alpha=2))
    # RISP needs the on-device DRAM of Eq. (7): now refused when the platform is read.
    data = risp().model_dump()
    data["storage"]["dram"] = None
    with pytest.raises(ValueError, match=r"needs \[storage\.dram\]"):
        Platform.model_validate(data, context={"si": True})


def test_estimate_dispatch_reports_channels_only_in_storage():
    e = run(risp(16), "sobel")
    assert e.channels_on == 16
    row = e.as_dict()
    assert row["channels_on"] == 16
    assert row["t_cell_s"] == pytest.approx((0.5e9 / 16 + 4) / F_RU, rel=REL)
    assert row["energy_ru_j"] == pytest.approx(parts(e)["ru"], rel=REL)
    assert row["performance_gb_per_s"] == pytest.approx(0.5 / row["t_cell_s"], rel=REL)
    rans = estimate(load_platform("rans"), load_profile("lc"))
    assert rans.channels_on is None and not rans.stage_times_s


# --- a user's kernel -------------------------------------------------------------------------


def test_user_kernel_with_its_own_fpga_cell():
    """A kernel the platform does not know, with its cell design in the profile:
    D = 2 GB, β = 4, α = 2 B/cycle, n_delay = 10, 5 mW per cell, 1 W fixed, 64 channels:

    t_ch2RU  = 2e9 / (64 x 4e8)           = 0.078125 s
    t_RUComp = (2e9 / (2 x 64) + 10) / 1e8 = 0.1562501 s  -> T
    t_RU2DRAM = 2e9 / (4 x 15e9)          = 0.033333 s
    E_RU     = (1 W + 64 x 5 mW) x T      = 1.32 W x T
    """
    cell = FpgaCell(bytes_per_cycle=2, pipeline_delay=10, power="5 mW", power_fixed="1 W")
    mine = Profile(app="fir", data_size="2 GB", alpha=4, cycles_per_byte=50, fpga_cell=cell)
    e = run(risp(), mine)
    total = (2e9 / (2 * 64) + 10) / F_RU
    assert e.stage_times_s["channel"] == pytest.approx(2e9 / (64 * B_CH), rel=REL)
    assert e.stage_times_s["cell"] == pytest.approx(total, rel=REL)
    assert e.stage_times_s["dram"] == pytest.approx(2e9 / (4 * B_DRAM), rel=REL)
    assert e.time_s == pytest.approx(total, rel=REL)
    assert parts(e)["ru"] == pytest.approx(1.32 * total, rel=REL)
    # The cell follows f_RU; the Baseline uses the kernel's CPB.
    assert run(risp().with_cell_clock(2e8), mine).stage_times_s["cell"] == pytest.approx(
        (2e9 / 128 + 10) / 2e8, rel=REL
    )
    host = run(risp(), mine, HOST_ONLY)
    assert host.t_cpu_s == pytest.approx(50 * 2e9 / (F_HOST * N_CPU), rel=REL)


def test_user_kernel_without_powers_uses_the_platforms():
    mine = Profile(app="fir", data_size="2 GB", alpha=4, fpga_cell=FpgaCell(bytes_per_cycle=2))
    e = run(risp(), mine)
    assert e.stage_times_s["cell"] == pytest.approx(2e9 / (2 * 64) / F_RU, rel=REL)
    assert parts(e)["ru"] == pytest.approx((P_FIXED + 64 * 2.125e-3) * e.time_s, rel=REL)


def test_platform_design_table_wins_over_the_profiles_cell():
    """Sobel is in the platform's α table (1 B/cycle); a profile cell claiming 4 is ignored."""
    claimed = profile("sobel").with_changes(fpga_cell=FpgaCell(bytes_per_cycle=4))
    e = run(risp(16), claimed)
    assert e.stage_times_s["cell"] == pytest.approx((0.5e9 / 16 + 4) / F_RU, rel=REL)


def test_host_cpu_energy_of_a_measured_host_rate_without_cpb():
    """Eq. (10), E_hostCPU = EPC x n_cycle, with n_cycle the cycles of all n_cpu CPUs (R3
    `cycles`). A kernel with only a measured host rate r = 1 GB/s (no CPB) keeps the host's
    4 cores at 3.1 GHz busy for D / r = 1 s: n_cycle = 3.1e9 x 4 x 1 s = 12.4e9, i.e. CPB =
    f_host n_cpu / r = 12.4 cycles/B; E = 0.9 nJ x 12.4 x 1e9 B = 11.16 J."""
    mine = Profile(app="mine", data_size="1 GB", alpha=2, host_only="1 GB/s")
    assert mine.host_cycles_per_byte is None
    e = run(baseline(), mine, HOST_ONLY)
    assert e.t_cpu_s == pytest.approx(1e9 / 1e9, rel=REL)  # D / r
    assert parts(e)["host_cpu"] == pytest.approx(EPC * (F_HOST * N_CPU / 1e9) * 1e9, rel=REL)
    assert parts(e)["host_cpu"] == pytest.approx(11.16, rel=REL)


def test_platform_throughput_table_wins_over_the_profiles_cell():
    """A kernel in the platform's engines.throughput (0.3 GB/s per cell, no pipeline fill) and
    with its own FPGA cell in the profile (2 B/cycle x 100 MHz = 0.2 GB/s, 10 cycles): the
    platform's table is used (docs/reproducing-risp.md, "Your own kernel"). D = 2 GB, β = 4,
    64 cells: t_RUComp = 2e9 / (64 x 3e8) = 0.1041667 s (T), not (2e9 / 128 + 10) / 1e8 =
    0.1562501 s; t_ch2RU = 2e9 / 25.6e9 = 0.078125 s, t_RU2DRAM = 2e9 / 6e10 = 0.0333 s."""
    data = risp().model_dump()
    data["engines"]["throughput"] = {"fir": 3e8}
    listed = Platform.model_validate(data, context={"si": True})
    cell = FpgaCell(bytes_per_cycle=2, pipeline_delay=10)
    mine = Profile(app="fir", data_size="2 GB", alpha=4, cycles_per_byte=50, fpga_cell=cell)
    e = run(listed, mine)
    assert e.stage_times_s["cell"] == pytest.approx(2e9 / (64 * 3e8), rel=REL)
    assert e.time_s == pytest.approx(2e9 / (64 * 3e8), rel=REL)
    # Without the table entry, the profile's cell is used: the two designs really differ.
    alone = run(risp(), mine)
    assert alone.stage_times_s["cell"] == pytest.approx((2e9 / 128 + 10) / F_RU, rel=REL)


def test_user_kernel_on_an_unclocked_platform_is_an_error():
    data = risp().model_dump()
    data["engines"]["frequency_hz"] = None
    data["engines"]["bytes_per_cycle"] = {}
    unclocked = Platform.model_validate(data, context={"si": True})
    mine = Profile(app="fir", data_size="2 GB", alpha=4, fpga_cell=FpgaCell(bytes_per_cycle=2))
    with pytest.raises(ModelError, match=r"engines\.frequency"):
        run(unclocked, mine)


# --- bugs ------------------------------------------------------------------------------------


def test_cells_without_data_do_not_speed_up_compute():
    """Only channel 0 is powered and routed to cell 0; cells 1..63 are on but get no data.
    Expected t_RUComp = (D/(α x 1) + n_delay)/f_RU = 5.00000004 s, as with cell 0 alone."""
    lonely = run(risp(), "sobel", Configuration(channels=(0,), active=tuple(range(64))))
    alone = run(risp(), "sobel", Configuration(channels=(0,)))
    assert alone.stage_times_s["cell"] == pytest.approx((0.5e9 + 4) / F_RU, rel=REL)
    assert lonely.stage_times_s["cell"] == pytest.approx(alone.stage_times_s["cell"], rel=REL)


def test_an_in_storage_platform_is_one_ssd():
    """The in-storage models price one on-device DRAM, one controller and one RU, so a
    channel-level platform with two SSDs is rejected rather than modelled as one."""
    data = risp().model_dump()
    data["storage"]["count"] = 2
    data["engines"]["count"] = 128
    with pytest.raises(ValidationError, match="models one SSD"):
        Platform.model_validate(data, context={"si": True})
    baseline = load_platform("risp-baseline").model_dump()
    baseline["storage"]["count"] = 2
    with pytest.raises(ValidationError, match="models one SSD"):
        Platform.model_validate(baseline, context={"si": True})


def test_a_declared_read_or_link_bandwidth_caps_the_channels(tmp_path: Path) -> None:
    """n_ch x b_ch was used alone: a 0.5 GB/s device link or a 1 GB/s read_bandwidth on a
    64-channel RISP SSD (25.6 GB/s of channels) changed nothing."""
    path = tmp_path / "capped.toml"
    path.write_text(
        'version = 1\nextends = "risp-64ch"\nname = "capped"\n[storage]\n'
        'read_bandwidth = "1 GB/s"\n[storage.link]\nbandwidth = "0.5 GB/s"\n'
    )
    capped, base = load_platform(path), load_platform("risp-64ch")
    profile = load_profiles("risp").apps["sobel"]
    device = estimate(capped, profile, FULL_GEAR, Options())
    assert device.bottleneck == "channel"
    assert device.time_s == pytest.approx(profile.data_bytes / 1e9)  # the device's 1 GB/s
    host, host_base = (estimate(p, profile, HOST_ONLY, Options()) for p in (capped, base))
    assert host.time_s > host_base.time_s  # the Baseline's data crosses the 0.5 GB/s link
    assert estimate(base, profile, FULL_GEAR, Options()).time_s < device.time_s


def test_profiler_metrics_whose_cpb_rounds_to_zero_are_refused(tmp_path: Path):
    # CPB = CPI x IPB x ratio is rounded to Table I's 4 decimals: 0.1 x 0.0001 x 1 = 1e-5
    # became 0 cycles per byte, and the Baseline's host rate f x cores / CPB raised
    # ZeroDivisionError (a traceback from `ndpkit estimate --split host`).
    path = tmp_path / "tiny.toml"
    path.write_text(
        '[apps.x]\ndata_size = "1 GB"\nalpha = 2\ncpi = 0.1\nipb = 0.0001\nfrequency_ratio = 1\n'
    )
    with pytest.raises(SpecError) as info:
        load_profiles(path)
    assert info.value.field == "apps.x"
    assert "rounds to 0" in info.value.detail and "cycles_per_byte" in info.value.detail
    # The product is shown whole: at 3 significant digits 4.99999999e-5 read as 5e-05, which
    # is no product "below 0.00005" (found by a review).
    with pytest.raises(SpecError, match=r"= 4\.99999999e-05 cycles per byte rounds to 0"):
        Profile(app="x", data_size="1 GB", alpha=1, cpi=0.499999999, ipb=0.0001, frequency_ratio=1)
    # The smallest product that rounds to a positive CPB is kept, rounded as before.
    p = Profile(app="x", data_size="1 GB", alpha=1, cpi=0.1, ipb=0.0006, frequency_ratio=1)
    assert p.host_cycles_per_byte == 0.0001
