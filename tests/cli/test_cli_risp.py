"""The `ndpkit` command on RISP (in-storage processing): `reproduce risp`, `estimate` and `plan`
on in-storage platforms, a user's own kernel and SSD, and every bad input (exit 2, one line).

Anchors are hand-derived from the presets (risp-64ch, risp-baseline) and the `risp` profiles:
b_ch = 400 MB/s, SATA 3.2 = 1.97 GB/s, f_RU = 100 MHz, host 4 cores at 3.1 GHz, decimal GB.
"""

import csv
import io
import json
import subprocess
from collections import defaultdict
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest

APPS = ("kmeans", "binarize", "sobel")
INTERFACES = ("sata-3.2", "pcie3-x4", "pcie3-x16")
TABLES = ("I", "V0", "E1", "E2", "E3", "E4", "E4b", "E5", "E6", "E7", "E8", "R1")
DATA_BYTES = {"kmeans": 0.3e9, "binarize": 1.4e9, "sobel": 0.5e9}  # profiles/risp.toml, D
SATA = 1.97e9  # bytes/s
B_CH = 400e6  # bytes/s per NVM channel
F_RU = 100e6  # Hz
HOST_HZ = 3.1e9 * 4  # f_hostcpu x n_cpu
REL = 1e-9

Run = Callable[..., subprocess.CompletedProcess[str]]

# A command's output depends only on its arguments, so each distinct command runs once per
# module (`reproduce risp` alone takes about a second).
_RESULTS: dict[tuple[str, ...], subprocess.CompletedProcess[str]] = {}


@pytest.fixture
def run(ndpkit) -> Run:
    def go(*args: str) -> subprocess.CompletedProcess[str]:
        if args not in _RESULTS:
            _RESULTS[args] = ndpkit(*args)
        return _RESULTS[args]

    return go


def ok_json(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return json.loads(result.stdout)


def assert_usage_error(result: subprocess.CompletedProcess[str], *needles: str) -> str:
    """Exit 2, nothing on stdout, and exactly one stderr line: `error: …` naming the input."""
    assert result.returncode == 2, (result.returncode, result.stdout[:300], result.stderr)
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("error:"), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


@pytest.fixture
def risp_doc(run) -> dict[str, Any]:
    return ok_json(run("reproduce", "risp", "--format", "json"))


def reproduce_table(run: Run, table: str, *args: str) -> list[dict[str, Any]]:
    return ok_json(run("reproduce", "risp", "-f", "json", "--tables", table, *args))["tables"][
        table
    ]


def estimate(run: Run, *args: str) -> dict[str, Any]:
    return ok_json(run("estimate", *args, "-f", "json"))["estimate"]


def plan(run: Run, *args: str) -> dict[str, Any]:
    return ok_json(run("plan", *args, "-f", "json"))["plan"]


# --- ndpkit reproduce risp ---------------------------------------------------------------------


def test_reproduce_json_top_level_keys(risp_doc) -> None:
    keys = ["paper", "options", "units", "interfaces", "columns", "speedup", "energy"]
    assert set([*keys, "reconfiguration", "tables"]) <= set(risp_doc)
    assert "RISP" in risp_doc["paper"] and "CCGRID 2018" in risp_doc["paper"]
    assert risp_doc["units"] == {"gb_bytes": 1e9, "mb_bytes": 1e6}  # R2 decimal
    assert set(risp_doc["interfaces"]) == set(INTERFACES)
    assert list(risp_doc["tables"]) == list(TABLES)
    assert risp_doc["options"]["units"] == "decimal"
    assert risp_doc["columns"]["saving_pct"]  # every column key is described


def test_reproduce_json_describes_each_tables_columns_as_its_own(risp_doc) -> None:
    """`columns` is one map, so a key several tables print took the last table's words (E2's
    `time_s` read "Eq. (8)"; an audit found it): `table_columns` holds each table's own."""
    own = risp_doc["table_columns"]
    assert list(own) == list(risp_doc["tables"])
    for name, described in own.items():
        rows = risp_doc["tables"][name]
        assert described and all(key in rows[0] for key in described), name
    assert (own["E2"]["time_s"], own["E3"]["time_s"]) == ("Eq. (5)", "Eq. (8)")


def test_reproduce_speedup_grid_and_monotonic(risp_doc) -> None:
    rows = risp_doc["speedup"]
    assert len(rows) == 36
    assert all(set(r) == {"app", "channels", "interface", "value"} for r in rows)
    assert all(r["value"] > 0 for r in rows)
    grid = {(r["app"], r["interface"], r["channels"]) for r in rows}
    assert grid == {(a, i, n) for a in APPS for i in INTERFACES for n in (8, 16, 32, 64)}
    curves: dict[tuple[str, str], list[tuple[int, float]]] = defaultdict(list)
    for r in rows:
        curves[r["app"], r["interface"]].append((r["channels"], r["value"]))
    for key, points in curves.items():
        values = [v for _, v in sorted(points)]
        assert all(b > a for a, b in pairwise(values)), (key, values)


def test_reproduce_reconfiguration_spec_default_floors(risp_doc) -> None:
    rows = risp_doc["reconfiguration"]
    assert len(rows) == 12  # 4 variants x 3 apps
    for r in rows:
        assert {"app", "channels_enabled", "saving_pct"} <= set(r)
        assert r["saving_pct"] <= 100
        assert 1 <= r["channels_enabled"] <= 64
    # n_host = β x b_hostIO / s, with s the model's f_pb slope per channel:
    # K-Means min(α f_RU, b_ch) = min(9 x 0.1, 0.4) = 0.4 GB/s: 3.6466 x 1.97 / 0.4 = 17.96 → 17;
    # Binarization 1 x 0.1 = 0.1 GB/s: 3 x 1.97 / 0.1 = 59.1 → 59;
    # Sobel 1 x 0.1 = 0.1 GB/s: 1 x 1.97 / 0.1 = 19.7 → 19 (R8 floor).
    first = rows[:3]
    assert [r["app"] for r in first] == ["kmeans", "binarize", "sobel"]
    assert [r["channels_enabled"] for r in first] == [17, 59, 19]
    assert first[0]["n_exact"] == pytest.approx(3.6466 * 1.97 / 0.4, rel=1e-5)
    assert first[1]["n_exact"] == pytest.approx(3 * 1.97 / 0.1, rel=1e-5)
    assert first[2]["n_exact"] == pytest.approx(1.97 / 0.1, rel=1e-5)
    assert all(r["ru_time"] == "computing" and r["time_model"] == "reduced_cells" for r in first)


def test_reproduce_energy_totals_are_component_sums(risp_doc) -> None:
    sums: dict[tuple[str, str], float] = defaultdict(float)
    totals: dict[tuple[str, str], float] = {}
    for r in risp_doc["energy"]:
        key = (r["app"], r["system"])
        if r["component"] == "total":
            assert key not in totals
            totals[key] = r["energy_j"]
        else:
            assert r["energy_j"] >= 0
            sums[key] += r["energy_j"]
    assert set(totals) == {(a, s) for a in APPS for s in ("baseline", "risp")}
    assert set(sums) == set(totals)
    for key, total in totals.items():
        assert total == pytest.approx(sums[key], rel=1e-12), key
    for r in risp_doc["energy"]:
        if r["component"] == "total" and r["system"] == "risp":
            ratio = totals[r["app"], "baseline"] / totals[r["app"], "risp"]
            assert r["reduction_factor"] == pytest.approx(ratio)
            assert ratio > 1  # RISP saves energy at 16 channels for every app


def test_reproduce_table_i_cpb(risp_doc) -> None:
    rows = {r["app"]: r for r in risp_doc["tables"]["I"]}
    assert [rows[a]["cpb"] for a in APPS] == [72.3757, 16.4822, 106.5680]
    for r in rows.values():
        assert r["cpb_unrounded"] == pytest.approx(r["cpi"] * r["ipb"] * r["frequency_ratio"])
        assert round(r["cpb_unrounded"], 4) == r["cpb"]


# Hand-derived RISP inputs for the reproduction rows below (spec risp.md §8.1 Table II, §6 Table I).
CPB = {"kmeans": 72.3757, "binarize": 16.4822, "sobel": 106.5680}  # Table I, 4 dp
CELL_BYTES_PER_CYCLE = {"kmeans": 9, "binarize": 1, "sobel": 1}  # Table II: α
DELAY_CYCLES = {"kmeans": 15, "binarize": 2, "sobel": 4}  # Table II: n_delay
BETA = {"kmeans": 3.6466, "binarize": 3, "sobel": 1}  # Table II: β
B_DRAM = 15e9  # Table II: b_DRAM, bytes/s
HOST_IO = {"sata-3.2": 1.97e9, "pcie3-x4": 3.938e9, "pcie3-x16": 15.754e9}  # Table II: b_hostIO
EPC_J = 0.9e-9  # Table III: EPC


def baseline_s(app: str, channels: int, host_io_bps: float, host_cores: int = 4) -> float:
    """Eqs. (1)-(5): max(D / (n b_ch), D / b_hostIO) + CPB D / (f_hostcpu n_cpu)."""
    d = DATA_BYTES[app]
    host_hz = HOST_HZ / 4 * host_cores
    return max(d / (channels * B_CH), d / host_io_bps) + CPB[app] * d / host_hz


def risp_s(app: str, channels: int) -> float:
    """Eqs. (6)-(8), eq8_only: max(D / (n b_ch), (D / (α n) + n_delay) / f_RU, D / (β b_DRAM))."""
    d = DATA_BYTES[app]
    compute = (d / (CELL_BYTES_PER_CYCLE[app] * channels) + DELAY_CYCLES[app]) / F_RU
    return max(d / (channels * B_CH), compute, d / (BETA[app] * B_DRAM))


def test_reproduce_e1_binarize_at_64_channels_per_interface(run) -> None:
    """Fig. 3: at 64 channels n b_ch = 25.6 GB/s exceeds every interface, so the transfer is
    D / b_hostIO; D / T = 1.4e9 / (1.4e9 / b + 16.4822 x 1.4e9 / 12.4e9) GB/s. At 2 channels
    n b_ch = 0.8 GB/s is below every interface: 1.4 / (1.4 / 0.8 + 1.8609), the same for all."""
    rows = {(r["app"], r["channels"]): r for r in reproduce_table(run, "E1")}
    hosts = {"sata_3_2": 1.97e9, "pcie3_x4": 3.938e9, "pcie3_x16": 15.754e9}
    compute_s = 16.4822 * 1.4e9 / 12.4e9  # CPB D / (3.1 GHz x 4)
    for key, b in hosts.items():
        want = 1.4e9 / (1.4e9 / b + compute_s) / 1e9
        assert rows["binarize", 64][f"{key}_gb_per_s"] == pytest.approx(want, rel=REL), key
        slow = 1.4e9 / (1.4e9 / (2 * B_CH) + compute_s) / 1e9
        assert rows["binarize", 2][f"{key}_gb_per_s"] == pytest.approx(slow, rel=REL), key
    for (app, n), row in rows.items():
        for interface, b in HOST_IO.items():
            key = interface.replace("-", "_").replace(".", "_") + "_gb_per_s"
            want = DATA_BYTES[app] / baseline_s(app, n, b) / 1e9
            assert row[key] == pytest.approx(want, rel=REL), (app, n, interface)


def test_reproduce_e2_external_bandwidth_is_capped_by_sata(run) -> None:
    """Fig. 4b: internal n x 0.4 GB/s, external min(n x 0.4, 1.97) GB/s on SATA 3.2."""
    rows = reproduce_table(run, "E2")
    assert {r["channels"] for r in rows} == set(range(2, 65, 2))  # R19 `even`
    for r in rows:
        n = r["channels"]
        assert r["internal_gb_per_s"] == pytest.approx(n * 0.4, rel=REL), r
        assert r["external_gb_per_s"] == pytest.approx(min(n * 0.4, 1.97), rel=REL), r
        assert r["saturated"] == (n * 0.4 >= 1.97), r
        assert r["time_s"] == pytest.approx(baseline_s(r["app"], n, SATA), rel=REL), r
    capped = [r for r in rows if r["channels"] == 64]
    assert all(r["external_gb_per_s"] == pytest.approx(1.97, rel=REL) for r in capped)


def test_reproduce_e4_times_per_interface(run) -> None:
    """Fig. 6a: T_Baseline from Eq. (5) over each interface's own b_hostIO; T_RISP from Eq. (8)
    (no host stage, so the same for every interface). E.g. Binarization at 64 channels over
    PCIe x16: 1.4 / 15.754 + 16.4822 x 1.4 / 12.4 = 0.08887 + 1.86089 s."""
    rows = reproduce_table(run, "E4")
    grid = {(r["app"], r["interface"], r["channels"]) for r in rows}
    assert grid == {(a, i, n) for a in APPS for i in INTERFACES for n in (8, 16, 32, 64)}
    for r in rows:
        app, n, b = r["app"], r["channels"], HOST_IO[r["interface"]]
        assert r["baseline_s"] == pytest.approx(baseline_s(app, n, b), rel=REL), r
        assert r["risp_s"] == pytest.approx(risp_s(app, n), rel=REL), r
        assert r["value"] == pytest.approx(baseline_s(app, n, b) / risp_s(app, n), rel=REL), r
    x16 = next(
        r
        for r in rows
        if (r["app"], r["interface"], r["channels"]) == ("binarize", "pcie3-x16", 64)
    )
    assert x16["baseline_s"] == pytest.approx(1.4 / 15.754 + 16.4822 * 1.4 / 12.4, rel=REL)


def test_reproduce_e5_shares_sum_to_100_per_system(run) -> None:
    """Fig. 7: each system's component shares are of that system's own total; the Baseline's
    host CPU is EPC x CPB x D (R3 `cycles`), e.g. K-Means 0.9 nJ x 72.3757 x 0.3e9 = 19.54 J."""
    rows = reproduce_table(run, "E5")
    shares: dict[tuple[str, str], float] = defaultdict(float)
    for r in rows:
        if r["component"] != "total":
            shares[r["app"], r["system"]] += r["share_pct"]
    assert set(shares) == {(a, s) for a in APPS for s in ("baseline", "risp")}
    for key, total_pct in shares.items():
        assert total_pct == pytest.approx(100.0, rel=1e-9), key
    for app in APPS:
        cpu = next(
            r
            for r in rows
            if (r["app"], r["system"], r["component"]) == (app, "baseline", "host_cpu")
        )
        assert cpu["energy_j"] == pytest.approx(EPC_J * CPB[app] * DATA_BYTES[app], rel=REL)


def test_reproduce_tables_filter(run) -> None:
    doc = ok_json(run("reproduce", "risp", "-f", "json", "--tables", "E7,I"))
    assert set(doc["tables"]) == {"I", "E7"}
    assert not {"speedup", "energy", "reconfiguration"} & set(doc)  # their tables were not asked
    # §7.2: Sobel under 3 W keeps 35 of 64 channels (floor of f_power⁻¹(3) = 35.69).
    model = next(r for r in doc["tables"]["E7"] if r["fit"] == "model")
    assert (model["channels_active"], model["channels_off"]) == (35, 29)
    assert model["model_power_w"] <= 3.0


def test_reproduce_unknown_table(run) -> None:
    result = run("reproduce", "risp", "--tables", "Z9")
    assert result.returncode == 2 and result.stdout == ""
    assert (
        "error: command line: --tables: unknown table 'Z9'" in result.stderr
        and "E4b" in result.stderr
    )
    assert "Traceback" not in result.stderr


def test_reproduce_unknown_table_is_one_line(run) -> None:
    assert_usage_error(run("reproduce", "risp", "--tables", "Z9"), "Z9")


def test_reproduce_csv(run) -> None:
    result = run("reproduce", "risp", "--format", "csv")
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert {r["table"] for r in rows} == set(TABLES)
    e4 = [r for r in rows if r["table"] == "E4"]
    assert len(e4) == 36 and all(float(r["value"]) > 0 for r in e4)
    cpb = {r["app"]: r["cpb"] for r in rows if r["table"] == "I"}
    assert float(cpb["sobel"]) == pytest.approx(106.568)


def test_reproduce_channel_rounding_ceil(run) -> None:
    rows = reproduce_table(run, "E8", "--channel-rounding", "ceil")
    assert len(rows) == 12
    assert {r["app"]: r["channels_enabled"] for r in rows} == {
        "kmeans": 18,
        "binarize": 60,
        "sobel": 20,
    }
    assert all(r["channels_enabled"] == r["cells_by_rounding"][1] for r in rows)  # ceil column


def test_reproduce_e8_reports_every_rounding(risp_doc) -> None:
    """R8 "always report all three": floor, ceil, nearest (and search). nearest(17.96) = 18,
    nearest(59.10) = 59, nearest(19.70) = 20."""
    first = risp_doc["reconfiguration"][:3]
    assert [r["cells_by_rounding"][:3] for r in first] == [[17, 18, 18], [59, 60, 59], [19, 20, 20]]
    assert first[0]["cells_by_rounding"][3] == 8  # K-Means: 8 cells of 900 MB/s keep up


@pytest.mark.parametrize(
    ("rounding", "raw"), [("floor", 35), ("ceil", 36), ("nearest", 36), ("search", 35)]
)
def test_reproduce_e7_obeys_the_budget_whatever_the_rounding(run, rounding: str, raw: int) -> None:
    """§7.2 with Eq. (8) alone: n = (3 - 1.858) / 0.032 = 35.69. ceil and nearest give 36
    channels at 1.858 + 0.032 x 36 = 3.010 W, over 3 W: E7 steps down to 35 (2.978 W) and its
    note names the rounding and the budget; every rounding is still reported."""
    result = run("reproduce", "risp", "--tables", "E7", "--channel-rounding", rounding)
    assert result.returncode == 0, result.stderr
    rows = reproduce_table(run, "E7", "--channel-rounding", rounding)
    for r in rows:
        assert r["channels_by_rounding"] == [35, 36, 36, 35]
        assert (r["channels_active"], r["channels_off"]) == (35, 29)
        assert r["model_power_w"] <= 3.0
    stepped = raw != 35
    assert (f"R8 rounding {rounding}" in result.stdout) is stepped
    assert ("3 W power budget" in result.stdout) is stepped


def test_reproduce_e4b_reports_both_readings(run) -> None:
    """R2's default: decimal, and binary for the f_RU experiments (E3, E4b), in the
    default run. R16: b_ch / α = 400 MB/s / 1 B = 400 MHz; binary MB: 400 x 1.048576 =
    419.4 MHz, so under the binary reading the speedup still rises from 400 to 500 MHz."""
    result = run("reproduce", "risp", "--tables", "E4b")
    assert result.returncode == 0, result.stderr
    assert "400.0 MHz (decimal)" in result.stdout and "419.4 MHz (binary)" in result.stdout
    rows = reproduce_table(run, "E4b")
    assert [r["inputs"] for r in rows] == ["decimal"] * 5 + ["binary"] * 5
    speedup = {(r["inputs"], r["f_ru_mhz"]): r["value"] for r in rows}
    assert speedup["decimal", 500] == pytest.approx(speedup["decimal", 400], rel=1e-6)
    assert speedup["binary", 500] > speedup["binary", 400]
    # --inputs sets the other tables' reading; E4b prints both either way (and with only
    # E4b selected, --inputs is refused as changing none of the tables).
    both = ok_json(
        run("reproduce", "risp", "-f", "json", "--tables", "E4,E4b", "--inputs", "binary")
    )
    assert both["tables"]["E4b"] == rows


def test_reproduce_e3_reports_both_readings_and_its_note(run) -> None:
    """Binarization, 4 channels: at 200 MHz compute binds, t_RUComp = D / (α n f) =
    1.4e9 / (4 x 2e8) = 1.75 s; at 500 MHz the channels bind, D / (n b_ch) = 1.4e9 / 1.6e9
    = 0.875 s: 50.0 % less. Binary: D = 1.4 x 1.073741824 GB, b_ch = 400 x 1.048576 MB/s,
    so 1 - (1 / 419.4304e6) / (1 / 200e6) = 52.3 % less."""
    result = run("reproduce", "risp", "--tables", "E3")
    assert result.returncode == 0, result.stderr
    assert "50.0% (decimal) and 52.3% (binary) less time" in result.stdout
    rows = reproduce_table(run, "E3")
    assert len(rows) == 2 * 2 * 3 * 16  # readings x clocks x apps x channel counts
    t = {
        (r["inputs"], r["f_ru_mhz"]): r["time_s"]
        for r in rows
        if (r["app"], r["channels"]) == ("binarize", 4)
    }
    assert t["decimal", 200] == pytest.approx(1.4e9 / (4 * 2e8), rel=1e-6)
    assert t["decimal", 500] == pytest.approx(1.4e9 / (4 * B_CH), rel=1e-6)
    assert 1 - t["binary", 500] / t["binary", 200] == pytest.approx(
        1 - 200e6 / (400 * 2**20), rel=1e-6
    )


def test_reproduce_e2_note_is_computed(run) -> None:
    """Fig. 4: b_hostIO / b_ch = 1.97 / 0.4 = 4.925 → 4.92 channels, no gain beyond 5.
    Binarization at 16 channels: transfer D / 1.97 GB/s = 0.7107 s of T = 0.7107 +
    CPB D / (f n_cpu) = 16.4822 x 1.4e9 / 12.4e9 = 1.8609 s: 27.6 %."""
    result = run("reproduce", "risp", "--tables", "E2")
    assert result.returncode == 0, result.stderr
    transfer = 1.4e9 / SATA
    share = transfer / (transfer + 16.4822 * 1.4e9 / HOST_HZ) * 100
    assert f"{share:.1f}" == "27.6"
    assert "= 4.92 channels: no further improvement beyond 5" in result.stdout
    assert "Binarization's transfer share at 16 channels: 27.6%" in result.stdout


def test_reproduce_n_cpu_shortens_the_baseline(run) -> None:
    four = {r["app"]: r["model_time_s"] for r in reproduce_table(run, "V0")}
    eight = {r["app"]: r["model_time_s"] for r in reproduce_table(run, "V0", "--n-cpu", "8")}
    for app in APPS:
        # Eq. (5) at 16 channels on SATA: 6.4 GB/s internal > 1.97, so t_xfer = D / 1.97 GB/s;
        # twice the CPUs halve only t_hostComp.
        transfer = DATA_BYTES[app] / SATA
        assert eight[app] < four[app]
        assert four[app] - transfer == pytest.approx(2 * (eight[app] - transfer), rel=1e-9)
    base4 = {
        (r["app"], r["interface"], r["channels"]): r["baseline_s"]
        for r in reproduce_table(run, "E4")
    }
    base8 = {
        (r["app"], r["interface"], r["channels"]): r["baseline_s"]
        for r in reproduce_table(run, "E4", "--n-cpu", "8")
    }
    assert all(base8[k] < base4[k] for k in base4)


def test_reproduce_v0_derives_sobels_error(run) -> None:
    """§10.1: if the published 5.68 % is the arithmetic mean of three errors,
    Sobel's is 3 x 5.68 - 9.39 - 0.66 = 6.99 %."""
    rows = {r["app"]: r for r in reproduce_table(run, "V0")}
    assert rows["sobel"]["derived_error_pct"] == pytest.approx(6.99, abs=1e-9)
    assert rows["kmeans"]["published_error_pct"] == 9.39
    assert rows["binarize"]["published_error_pct"] == 0.66
    assert rows["kmeans"]["derived_error_pct"] is None
    assert rows["binarize"]["derived_error_pct"] is None


def test_reproduce_json_records_the_n_cpu_used(run) -> None:
    assert (
        ok_json(run("reproduce", "risp", "-f", "json", "--tables", "I"))["settings"]["n_cpu"] == 4
    )  # the preset's (R1)
    doc = ok_json(run("reproduce", "risp", "-f", "json", "--tables", "V0", "--n-cpu", "8"))
    assert doc["settings"]["n_cpu"] == 8


def test_reproduce_v0_calibrates_n_cpu(run) -> None:
    """R1's calibration mode. Times made by Eq. (5) with 2 CPUs: T = D / 1.97 GB/s +
    CPB D / (3.1 GHz x 2). The fit recovers n_cpu = 2 with no error left."""
    cpb = {"kmeans": 72.3757, "binarize": 16.4822, "sobel": 106.5680}
    times = {a: DATA_BYTES[a] / SATA + cpb[a] * DATA_BYTES[a] / (3.1e9 * 2) for a in APPS}
    measured = ",".join(f"{a}={t!r}" for a, t in times.items())
    result = run("reproduce", "risp", "--tables", "V0", "--measured", measured)
    assert result.returncode == 0, result.stderr
    assert "R1 calibration: n_cpu = 2 fits them best" in result.stdout
    rows = reproduce_table(run, "V0", "--measured", measured)
    for r in rows:
        assert r["fit_n_cpu"] == 2
        assert r["fit_error_pct"] == pytest.approx(0, abs=1e-6)
        assert r["error_pct"] < -40  # the preset's 4 CPUs are about twice as fast
    # One app measured at 3 CPUs' time is fitted exactly too.
    three = DATA_BYTES["sobel"] / SATA + cpb["sobel"] * DATA_BYTES["sobel"] / (3.1e9 * 3)
    only = reproduce_table(run, "V0", "--measured", f"sobel={three!r}")
    assert [r["fit_n_cpu"] for r in only] == [None, None, 3]
    # Faster than the transfer alone: no CPU count fits, and the note says so.
    fast = run("reproduce", "risp", "--tables", "V0", "--measured", "sobel=0.1")
    assert fast.returncode == 0, fast.stderr
    assert "no CPU count fits" in fast.stdout
    assert all(
        r["fit_n_cpu"] is None for r in reproduce_table(run, "V0", "--measured", "sobel=0.1")
    )


def test_reproduce_measured_fills_error_pct(run) -> None:
    rows = {r["app"]: r for r in reproduce_table(run, "V0", "--measured", "kmeans=2.0")}
    kmeans = rows["kmeans"]
    assert kmeans["measured_time_s"] == 2.0
    assert kmeans["error_pct"] == pytest.approx((kmeans["model_time_s"] - 2.0) / 2.0 * 100)
    assert rows["sobel"]["error_pct"] is None and rows["binarize"]["measured_time_s"] is None


@pytest.mark.parametrize(("args", "hint"), [((), True), (("--measured", "kmeans=2.0"), False)])
def test_the_validation_note_asks_for_measured_times_only_without_them(
    run, args: tuple[str, ...], hint: bool
) -> None:
    result = run("reproduce", "risp", "--tables", "V0", *args)
    assert result.returncode == 0, result.stderr
    assert ("pass --measured" in result.stdout) is hint


@pytest.mark.parametrize(
    ("measured", "needles"),
    [
        ("foo=2", ("unknown app 'foo'",)),
        ("kmeans=-1", ("--measured", "kmeans=-1")),
        ("kmeans", ("--measured", "'kmeans'")),
        ("kmeans=abc", ("--measured",)),
        ("kmeans=inf", ("--measured", "finite", "kmeans=inf")),
        ("kmeans=nan", ("--measured", "finite", "kmeans=nan")),
        ("kmeans=1e400", ("--measured", "finite")),
        ("kmeans=inf s", ("--measured", "finite")),
        ("kmeans=1,kmeans=2", ("--measured", "kmeans is given twice")),
        ("", ("--measured", "is empty")),  # an unset shell variable, not the flag left out
        ("kmeans=2_1", ("--measured", "kmeans=2_1")),  # float() would read 21
    ],
)
def test_reproduce_bad_measured(run, measured: str, needles: tuple[str, ...]) -> None:
    assert_usage_error(run("reproduce", "risp", "--measured", measured), *needles)


@pytest.mark.parametrize("n_cpu", ["65537", "0", "-1"])
def test_reproduce_bad_n_cpu_is_one_line(run, n_cpu: str) -> None:
    """A count a platform file cannot hold (1..65536) names the flag, before anything runs
    (65537 gave a pydantic traceback, exit 1)."""
    line = assert_usage_error(
        run("reproduce", "risp", "--tables", "I", "--n-cpu", n_cpu), "--n-cpu"
    )
    assert "65536" in line and n_cpu in line


def test_reproduce_risp_rejects_units(run) -> None:
    assert_usage_error(run("reproduce", "risp", "--units", "decimal"), "--units")


def test_reproduce_risp_rejects_units_as_option(run) -> None:
    line = assert_usage_error(run("reproduce", "risp", "--tables", "I", "-o", "units=binary"))
    # named as the flag the user typed, as every other -o error is ("units:" named nothing)
    assert line.startswith("error: command line: --option units: risp reports decimal GB"), line


def test_reproduce_option_ru_time_reaches_the_model(run, risp_doc) -> None:
    doc = ok_json(run("reproduce", "risp", "-f", "json", "-o", "ru_time=configured"))
    assert doc["options"]["ru_time"] == "configured"

    def risp_total(d: dict[str, Any], app: str) -> float:
        return next(
            r["energy_j"]
            for r in d["energy"]
            if (r["app"], r["system"], r["component"]) == (app, "risp", "total")
        )

    # K-Means is channel-bound (0.4 < 0.9 GB/s per channel): its RU idles part of the run,
    # which `configured` charges at active power.
    assert risp_total(doc, "kmeans") > risp_total(risp_doc, "kmeans")


def test_reproduce_e8_prints_both_ru_time_variants(run, risp_doc) -> None:
    rows = risp_doc["reconfiguration"]
    by_variant = {(r["app"], r["ru_time"], r["time_model"]): r for r in rows}
    assert len(by_variant) == 12
    # ru_time=configured charges the RU's active power for the whole run, so E with every
    # cell on grows for every app (K-Means most: it is channel-bound, its RU waits).
    for app in APPS:
        computing = by_variant[app, "computing", "reduced_cells"]
        configured = by_variant[app, "configured", "reduced_cells"]
        assert configured["energy_all_j"] > computing["energy_all_j"]
    # E8 sets ru_time per row (docs/reproducing-risp.md), so `-o ru_time` leaves it unchanged.
    doc = ok_json(run("reproduce", "risp", "-f", "json", "-o", "ru_time=configured"))
    assert doc["reconfiguration"] == rows


@pytest.mark.parametrize(
    ("option", "needle"),
    [
        ("bogus=1", "bogus: unknown option"),
        ("ru_time=nope", "ru_time: must be one of computing, configured"),
        ("noequals", "expected KEY=VALUE"),
    ],
)
def test_reproduce_bad_option(run, option: str, needle: str) -> None:
    assert_usage_error(run("reproduce", "risp", "-o", option), needle)


# --- ndpkit estimate on in-storage platforms ---------------------------------------------------


def test_estimate_risp_device_split(run) -> None:
    e = estimate(run, "-p", "risp-64ch", "-a", "sobel", "--channels", "16")
    # Eq. (6): (D / (α n_ch) + n_delay) / f_RU with α = 1 B/cycle, n_delay = 4 cycles.
    assert e["t_cell_s"] == pytest.approx((0.5e9 / 16 + 4) / F_RU, rel=REL)
    assert e["t_channel_s"] == pytest.approx(0.5e9 / (16 * B_CH), rel=REL)
    assert e["bottleneck"] == "cell"
    assert e["time_s"] == pytest.approx(max(e["t_channel_s"], e["t_cell_s"], e["t_dram_s"]))
    assert (e["engines_active"], e["channels_on"]) == (16, 16)


def test_estimate_risp_host_split_is_the_baseline(run) -> None:
    e = estimate(run, "-p", "risp-64ch", "-a", "sobel", "--channels", "16", "--split", "host")
    assert {"t_channel_s", "t_link_s", "t_cpu_s"} <= set(e)
    assert e["engines_active"] == 0 and e["split"] == "host"
    # Eq. (5): max(t_ch2DRAM, t_DRAM2host) + t_hostComp, t_hostComp = CPB D / (f n_cpu).
    assert e["time_s"] == pytest.approx(max(e["t_channel_s"], e["t_link_s"]) + e["t_cpu_s"])
    assert e["t_link_s"] == pytest.approx(0.5e9 / SATA, rel=REL)
    assert e["t_cpu_s"] == pytest.approx(106.5680 * 0.5e9 / HOST_HZ, rel=REL)


def test_estimate_faster_interface_helps_the_baseline(run) -> None:
    sata = estimate(run, "-p", "risp-64ch", "-a", "binarize", "--split", "host")
    x4 = estimate(
        run, "-p", "risp-64ch", "-a", "binarize", "--split", "host", "--interface", "pcie3-x4"
    )
    assert x4["time_s"] < sata["time_s"]
    assert x4["t_link_s"] == pytest.approx(1.4e9 / 3.938e9, rel=REL)
    assert x4["t_cpu_s"] == pytest.approx(sata["t_cpu_s"])


def test_estimate_cell_clock_makes_binarize_channel_bound(run) -> None:
    at100 = estimate(run, "-p", "risp-64ch", "-a", "binarize", "--channels", "16")
    at500 = estimate(
        run, "-p", "risp-64ch", "-a", "binarize", "--channels", "16", "--cell-clock-mhz", "500"
    )
    assert at100["bottleneck"] == "cell"
    # α f_RU = 1 B x 500 MHz = 500 MB/s > b_ch = 400 MB/s.
    assert at500["bottleneck"] == "channel"
    assert at500["time_s"] == pytest.approx(1.4e9 / (16 * B_CH), rel=REL)
    assert at500["t_cell_s"] == pytest.approx((1.4e9 / 16 + 2) / 500e6, rel=REL)


def test_estimate_fewer_cells_serve_groups_of_channels(run) -> None:
    e = estimate(run, "-p", "risp-64ch", "-a", "sobel", "--engines", "20")
    assert (e["engines_active"], e["channels_on"], e["engines_total"]) == (20, 64, 64)
    assert e["max_shards_per_engine"] == 4  # 64 = 4 x 4 + 16 x 3, balanced groups
    assert e["t_cell_s"] == pytest.approx((0.5e9 / 20 + 4) / F_RU, rel=REL)  # cell_load ideal
    worst = estimate(
        run, "-p", "risp-64ch", "-a", "sobel", "--engines", "20", "-o", "cell_load=max_group"
    )
    assert worst["t_cell_s"] == pytest.approx((4 * 0.5e9 / 64 + 4) / F_RU, rel=REL)


def test_estimate_risp_baseline_host_split(run) -> None:
    e = estimate(run, "-p", "risp-baseline", "-a", "sobel", "--split", "host")
    assert e["engines_total"] == 0 and e["bottleneck"] == "cpu"
    assert e["time_s"] == pytest.approx(
        max(0.5e9 / (64 * B_CH), 0.5e9 / SATA) + 106.5680 * 0.5e9 / HOST_HZ, rel=REL
    )
    same = estimate(run, "-p", "risp-64ch", "-a", "sobel", "--split", "host")
    assert e["energy_j"] == pytest.approx(same["energy_j"])  # the RU plays no part


def test_estimate_risp_baseline_runs_on_the_host(run) -> None:
    """A platform with nothing beside the storage runs the whole kernel on the host (as CNS
    does), and says so: the split is reported as host, and --engines is an error."""
    doc = ok_json(run("estimate", "-p", "risp-baseline", "-a", "sobel", "-f", "json"))
    assert doc["estimate"]["split"] == "host"
    assert doc["estimate"]["engines_active"] == 0
    assert_usage_error(
        run("estimate", "-p", "risp-baseline", "-a", "sobel", "--engines", "4"), "--engines"
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ("-p", "risp-64ch", "-a", "sobel", "--channels", "0"),
            "command line: --channels: must be at least 1",
        ),
        (("-p", "risp-64ch", "-a", "sobel", "--interface", "usb9"), "unknown interface 'usb9'"),
        (("-p", "risp-64ch", "-a", "sobel", "--cell-clock-mhz", "-5"), "--cell-clock-mhz"),
        (("-p", "rans", "-a", "lc", "--channels", "16"), "in-storage"),
        (("-p", "risp-64ch", "-a", "lc"), "unknown app 'lc'"),
        (("-p", "risp-64ch", "-a", "sobel", "--engines", "65"), "1..64"),
    ],
)
def test_estimate_bad_in_storage_input(run, args: tuple[str, ...], needle: str) -> None:
    assert_usage_error(run("estimate", *args), needle)


# --- ndpkit plan on in-storage platforms -------------------------------------------------------


def test_plan_risp_default_keeps_all_cells_with_a_note(run) -> None:
    p = plan(run, "-p", "risp-64ch", "-a", "sobel")
    assert p["method"] == "host (model fit, search)"
    assert p["performance_loss_pct"] == 0
    assert p["n_host_exact"] == pytest.approx(19.7, rel=1e-5)
    assert p["n_host_search"] == 20
    # 20 reduced cells cost more energy than all on (ru_time=computing), so all stay on.
    assert p["cells_on"] == p["channels_on"] == p["engines_total"] == 64
    assert p["improvement_pct"] == 0
    assert any("every cell stays on" in note for note in p["notes"])


@pytest.mark.parametrize("fit", ["model", "paper"])
def test_plan_power_budget_default_search(run, fit: str) -> None:
    p = plan(
        run,
        "-p",
        "risp-64ch",
        "-a",
        "sobel",
        "--power-budget",
        "3W",
        "--policy",
        "power",
        "--fit",
        fit,
    )
    # f_power(n) = 1.858 + 0.032 n (Eq. 13, and the model's own fit) = 3 W at n = 35.69.
    assert p["n_power_exact"] == pytest.approx((3 - 1.858) / 0.032, rel=1e-6)
    assert (p["n_power_floor"], p["n_power_ceil"]) == (35, 36)
    assert p["binding_policy"] == "power" and p["power_budget_w"] == 3.0
    # plan adds the host stage (R11): all 64 channels are host-bound and average 2.30 W, so
    # the model's search keeps every channel on (docs/reproducing-risp.md, (h)).
    assert p["n_power_search"] == p["channels_on"] == 64
    assert p["planned_power_w"] <= 3.0


@pytest.mark.parametrize(
    "extra",
    [
        ("--channel-rounding", "floor"),
        ("--fit", "paper", "--channel-rounding", "floor"),
        ("-o", "host_stage=eq8_only"),
    ],
    ids=str,
)
def test_plan_power_budget_35_channels(run, extra: tuple[str, ...]) -> None:
    p = plan(
        run, "-p", "risp-64ch", "-a", "sobel", "--power-budget", "3W", "--policy", "power", *extra
    )
    # §7.2: floor(35.69) = 35 channels on, 29 off; or, without the host stage, the most
    # channels whose modelled power stays within 3 W (64 channels draw 3.906 W).
    assert p["time_model"] == "channels_off"
    assert p["channels_on"] == p["cells_on"] == 35
    assert p["planned_power_w"] <= 3.0


@pytest.mark.parametrize("rounding", ["ceil", "nearest"])
def test_plan_power_budget_is_hard_whatever_the_rounding(run, rounding: str) -> None:
    """The audit's command: without the host stage, ceil/nearest of 35.69 = 36 channels draw
    3.010 W; the plan steps down to 35 (2.978 W) with a note naming rounding and budget."""
    args = ("-p", "risp-64ch", "-a", "sobel", "--power-budget", "3W", "--policy", "power")
    extra = ("--channel-rounding", rounding, "-o", "host_stage=eq8_only")
    p = plan(run, *args, *extra)
    assert p["channels_on"] == 35 and p[f"n_power_{rounding}"] == 36
    assert p["planned_power_w"] <= 3.0
    assert any(f"R8 rounding {rounding}" in n and "3 W power budget" in n for n in p["notes"])
    table = run("plan", *args, *extra)
    assert table.returncode == 0, table.stderr
    assert "36 channels, which draw 3.010 W" in table.stderr


def test_plan_note_names_the_cells_configured(run) -> None:
    """--grouping ceil: 19 cells make groups of ceil(64/19) = 4 channels, so 16 cells."""
    result = run(
        "plan",
        "-p",
        "risp-64ch",
        "-a",
        "sobel",
        "--grouping",
        "ceil",
        "--channel-rounding",
        "floor",
    )
    assert result.returncode == 0, result.stderr
    assert "the host policy's 16 cells" in result.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--time-model", "channels_off"), "--time-model channels_off"),
        (("--policy", "power", "--power-budget", "3W"), "--policy power (channels_off)"),
    ],
)
def test_plan_grouping_under_channels_off_is_refused(run, args, needle) -> None:
    """No channels share a cell under channels_off: --grouping ceil was accepted, and the plan
    (and its JSON's grouping, null) was the one without it."""
    result = run("plan", "-p", "risp-64ch", "-a", "sobel", *args, "--grouping", "ceil")
    assert_usage_error(result, "--grouping: changes nothing", needle)


def test_plan_grouping_is_read_by_the_host_policy_of_both(run) -> None:
    """Under `both` the host policy groups channels (reduced_cells), so --grouping is read."""
    args = ("-p", "risp-64ch", "-a", "sobel", "--power-budget", "3W", "--grouping", "ceil")
    assert plan(run, *args)["policy"] == "both"


def test_plan_note_under_channels_off_counts_channels(run) -> None:
    """Under channels_off the host policy's 20 are channels with their cells, the other 44
    off: the note said '20 cells', as if every channel still read."""
    p = plan(run, "-p", "risp-64ch", "-a", "sobel", "--time-model", "channels_off")
    assert p["n_host_search"] == 20 and p["channels_on"] == 64
    assert p["notes"][0].startswith("the host policy's 20 channels with their cells (channels_off)")


def test_plan_ru_time_configured_channels_off_saves(run) -> None:
    p = plan(
        run,
        "-p",
        "risp-64ch",
        "-a",
        "sobel",
        "-o",
        "ru_time=configured",
        "--time-model",
        "channels_off",
    )
    assert p["improvement_pct"] > 0
    assert p["planned_energy_j"] < p["baseline_energy_j"]
    assert p["channels_on"] == 20 and p["performance_loss_pct"] == 0


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--policy", "power"), "needs a power budget"),
        (("--power-budget", "-1 W"), "power budget must be positive"),
        (("--fit", "bogus"), "--fit: must be one of model, paper"),
        (("--grouping", "x"), "--grouping: must be one of"),
        (("--time-model", "x"), "--time-model: must be one of"),
        (("--optimal",), "command line: --optimal: is for NDP servers"),
    ],
)
def test_plan_bad_in_storage_input(run, args: tuple[str, ...], needle: str) -> None:
    assert_usage_error(run("plan", "-p", "risp-64ch", "-a", "sobel", *args), needle)


@pytest.mark.parametrize("budget", ["3Wz", "3", "3 ms"])
def test_plan_unparsable_power_budget(run, budget: str) -> None:
    assert_usage_error(
        run("plan", "-p", "risp-64ch", "-a", "sobel", "--power-budget", budget), "--power-budget"
    )


def test_plan_risp_baseline_has_nothing_to_plan(run) -> None:
    assert_usage_error(run("plan", "-p", "risp-baseline", "-a", "sobel"), "no processing cells")


def test_plan_risp_baseline_error_gives_usable_advice(run) -> None:
    line = assert_usage_error(run("plan", "-p", "risp-baseline", "-a", "sobel"))
    assert "--optimal" not in line


# --- beyond the paper: a user's own kernel and SSD ---------------------------------------------

MY_KERNEL = """\
[apps.mykernel]
data_size = "2 GB"
alpha = 4
cycles_per_byte = 30

[apps.mykernel.fpga_cell]
bytes_per_cycle = 2
pipeline_delay = 10
power = "5 mW"
"""


def test_user_kernel_plan_and_estimate(run, tmp_path: Path) -> None:
    profiles = tmp_path / "mine.toml"
    profiles.write_text(MY_KERNEL)
    p = plan(run, "-p", "risp-64ch", "-a", "mykernel", "--profiles", str(profiles))
    assert p["app"] == "mykernel" and p["engines_total"] == 64
    # f_pb slope: min(α f_RU, b_ch) = min(2 x 0.1, 0.4) = 0.2 GB/s; n_host = 4 x 1.97 / 0.2.
    assert p["bandwidth_fit_gb_per_s_per_channel"] == pytest.approx(0.2, rel=1e-5)
    assert p["n_host_exact"] == pytest.approx(39.4, rel=1e-5)

    host = estimate(
        run, "-p", "risp-64ch", "-a", "mykernel", "--profiles", str(profiles), "--split", "host"
    )
    t_cpu = 30 * 2e9 / HOST_HZ
    assert host["t_cpu_s"] == pytest.approx(t_cpu, rel=REL)
    assert host["time_s"] == pytest.approx(max(2e9 / (64 * B_CH), 2e9 / SATA) + t_cpu, rel=REL)

    device = estimate(run, "-p", "risp-64ch", "-a", "mykernel", "--profiles", str(profiles))
    t_cell = (2e9 / 64 / 2 + 10) / F_RU
    assert device["t_cell_s"] == pytest.approx(t_cell, rel=REL)
    # RU power, linear_per_cell: the public cell's 1.358 W + 64 cells x 5 mW, active all run.
    assert device["energy_ru_j"] == pytest.approx((1.358 + 64 * 0.005) * t_cell, rel=1e-9)


def test_estimate_host_cpu_energy_of_a_measured_host_rate(run, tmp_path: Path) -> None:
    """Eq. (10) for a kernel with only a measured host rate (no CPB): D / r = 1 GB / 1 GB/s =
    1 s of the 4 cores at 3.1 GHz, n_cycle = 12.4e9 (R3 `cycles`), E = 0.9 nJ x 12.4e9 J."""
    profiles = tmp_path / "mine.toml"
    profiles.write_text('[apps.mine]\ndata_size = "1 GB"\nalpha = 2\nhost_only = "1 GB/s"\n')
    e = estimate(run, "-p", "risp-baseline", "-a", "mine", "--profiles", str(profiles))
    assert e["t_cpu_s"] == pytest.approx(1e9 / 1e9, rel=REL)
    assert e["energy_host_cpu_j"] == pytest.approx(EPC_J * (HOST_HZ / 1e9) * 1e9, rel=REL)
    assert e["energy_host_cpu_j"] == pytest.approx(11.16, rel=REL)


def test_user_in_storage_platform_plans(run, tmp_path: Path) -> None:
    path = tmp_path / "my32.toml"
    path.write_text(
        'extends = "risp-64ch"\nname = "my32"\n[storage]\nchannels = 32\n[engines]\ncount = 32\n'
    )
    p = plan(run, "-p", str(path), "-a", "sobel")
    assert p["platform"] == "my32"
    assert p["engines_total"] == 32 and len(p["route"]) == 32
    assert p["n_host_exact"] == pytest.approx(19.7, rel=1e-5)


@pytest.mark.parametrize(
    ("flag", "body", "needles"),
    [
        ("-p", 'extends = "risp-64ch"\n[engines]\ncount = 48\n', ("engines.count (48)",)),
        ("-p", 'extends = "risp-64ch"\n[storage]\nchannels = 32\n', ("engines.count (64)",)),
        ("-p", 'extends = "risp-64ch"\n[storage\nchannels = 32\n', ("malformed TOML",)),
        ("--profiles", "[apps.sobel\n", ("malformed TOML",)),
        (
            "--profiles",
            '[apps.sobel]\ndata_size = "1 GB"\nalpha = 2\ncpi = 0.5\n',
            ("apps.sobel", "cpi, ipb and frequency_ratio"),
        ),
        (  # CPB 7 beside cpi x ipb x ratio = 5.5: the time used 7, R3's energy IPB 10
            "--profiles",
            '[apps.sobel]\ndata_size = "1 GB"\nalpha = 2\ncycles_per_byte = 7\n'
            "cpi = 0.5\nipb = 10\nfrequency_ratio = 1.1\n",
            ("apps.sobel", "cycles_per_byte (7) disagrees", "(5.5 cycles per byte)"),
        ),
    ],
)
def test_bad_user_files_exit_2(
    run, tmp_path: Path, flag: str, body: str, needles: tuple[str, ...]
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(body)
    other = ("--profiles", "risp") if flag == "-p" else ("-p", "risp-64ch")
    result = run("plan", flag, str(path), *other, "-a", "sobel")
    assert_usage_error(result, str(path), *needles)


def test_cycles_per_byte_beside_the_metrics_it_rounds_is_accepted(run, tmp_path: Path) -> None:
    """Table I's K-Means: CPB 72.38 (the unrounded product 72.375667, printed to 2 dp) given
    with its cpi, ipb and frequency ratio is the same kernel; the host runs at the CPB given."""
    path = tmp_path / "mine.toml"
    path.write_text(
        '[apps.km]\ndata_size = "0.3 GB"\nalpha = 3.6466\ncycles_per_byte = 72.38\n'
        "cpi = 0.502\nipb = 131.5462\nfrequency_ratio = 1.096\n"
    )
    e = estimate(run, "-p", "risp-baseline", "-a", "km", "--profiles", str(path))
    assert e["t_cpu_s"] == pytest.approx(72.38 * 0.3e9 / HOST_HZ, rel=REL)


def test_instruction_energy_without_ipb_names_the_profile_file(run, tmp_path: Path) -> None:
    """R3 `instructions` on a profile that gives cycles_per_byte only: the error names the
    file and the app's table, as every other bad profile does (it named the app only)."""
    path = tmp_path / "mine.toml"
    path.write_text('[apps.mine]\ndata_size = "1 GB"\nalpha = 2\ncycles_per_byte = 6.5\n')
    args = ("-p", "risp-baseline", "-a", "mine", "--profiles", str(path))
    result = run("estimate", *args, "-o", "cpu_energy=instructions")
    line = assert_usage_error(result, "cpu_energy=instructions", "cycles")
    assert line.startswith(f"error: {path}: apps.mine.ipb: no ipb"), line


NO_BITSTREAM_SSD = """version = 1
name = "norc"
host_link = "sata-3.2"
[host]
cores_per_socket = 4
frequency = "3.1 GHz"
[storage]
count = 1
channels = 8
channel_bandwidth = "400 MB/s"
[storage.dram]
bandwidth = "15 GB/s"
[engines]
kind = "fpga"
placement = "channel"
count = 8
frequency = "100 MHz"
power_active = "2 mW"
bytes_per_cycle = { sobel = 1 }
"""


@pytest.mark.parametrize("command", ["estimate", "plan"])
def test_reconfiguration_without_a_bitstream_names_the_file(run, tmp_path: Path, command) -> None:
    """R15 on an SSD file with no [engines.reconfiguration]: the file and the field, as any
    other bad platform file (it named "platform 'norc-4ch'" under --channels 4, no file)."""
    path = tmp_path / "norc.toml"
    path.write_text(NO_BITSTREAM_SSD)
    args = ("-p", str(path), "-a", "sobel", "--channels", "4", "-o", "reconfiguration=include")
    line = assert_usage_error(run(command, *args), "reconfiguration=include")
    assert line.startswith(f"error: {path}: engines.reconfiguration: is not declared"), line


# --- ndpkit platforms --------------------------------------------------------------------------


def test_platforms_list_and_show_risp(run) -> None:
    listing = run("platforms", "list")
    assert listing.returncode == 0
    assert "risp-64ch" in listing.stdout and "risp-baseline" in listing.stdout
    listed = ok_json(run("platforms", "list", "-f", "json"))["tables"]["platforms"]
    rows = {r["name"]: r for r in listed}
    assert (rows["risp-64ch"]["engines"], rows["risp-baseline"]["engines"]) == (64, 0)
    shown = run("platforms", "show", "risp-64ch")
    assert shown.returncode == 0, shown.stderr
    assert "public_cell.power_active_w" in shown.stdout and "1.358 W" in shown.stdout
    spec = ok_json(run("platforms", "show", "risp-64ch", "-f", "json"))
    assert spec["name"] == "risp-64ch" and spec["storage"]["channels"] == 64


@pytest.mark.parametrize(
    ("paper", "pair", "owner"),
    [
        ("rans-rfns", "cpu_energy=instructions", "risp"),
        ("rans-rfns", "cell_load=max_group", "risp"),
        ("risp", "energy_form=B", "rans-rfns"),
        ("risp", "time_basis=pipeline", "rans-rfns"),
    ],
)
def test_option_of_the_other_paper_is_refused_not_recorded(run, paper, pair, owner) -> None:
    """Accepted, it would appear in the output's `options` although no model read it."""
    key = pair.partition("=")[0]
    assert_usage_error(run("reproduce", paper, "-o", pair), f"--option {key}", owner)


def test_units_option_is_read_by_both_papers(run) -> None:
    assert ok_json(run("reproduce", "risp", "-o", "units=decimal", "--format", "json"))


@pytest.mark.parametrize(
    ("args", "prefix"),
    [
        (("plan", "-p", "risp-64ch", "-a", "sobel", "--channels", "0"), "--channels"),
        (("plan", "-p", "risp-64ch", "-a", "sobel", "--cell-clock-mhz", "0"), "--cell-clock-mhz"),
        (("plan", "-p", "risp-64ch", "-a", "sobel", "--policy", "power"), "--policy"),
        (("plan", "-p", "risp-64ch", "-a", "kmeans", "--fit", "paper"), "--fit"),
        (("plan", "-p", "risp-64ch", "-a", "sobel", "--power-budget", "1W"), "--power-budget"),
        (("plan", "-p", "rans", "-a", "lc", "--power-budget", "3W"), "--power-budget"),
        (("plan", "-p", "rans", "-a", "lc", "--fit", "x"), "--fit"),
        (("plan", "-p", "rans", "-a", "lc", "--channel-rounding", "x"), "--channel-rounding"),
        (("plan", "-p", "rans", "-a", "lc", "--grouping", "balanced"), "--grouping"),
        (("plan", "-p", "risp-64ch", "-a", "sobel", "--grouping", "x"), "--grouping"),
        (("plan", "-p", "risp-baseline", "-a", "sobel"), "--platform"),
        (("reproduce", "risp", "--measured", "foo=1"), "--measured"),
        (
            ("plan", "-p", "risp-64ch", "-a", "sobel", "--policy", "host", "--power-budget", "2W"),
            "--power-budget",
        ),
        (
            ("plan", "-p", "risp-64ch", "-a", "sobel", "--fit", "paper", "--cell-clock-mhz", "200"),
            "--fit",
        ),
        (("plan", "-p", "risp-64ch", "-a", "sobel", "--channels", "4097"), "--channels"),
    ],
)
def test_channel_plan_input_errors_name_their_flag(run: Run, args, prefix):
    """Every refusal is `error: command line: --flag: …`, one line, exit 2."""
    line = assert_usage_error(run(*args))
    assert line.startswith(f"error: command line: {prefix}: "), line


def test_plan_power_budget_under_reduced_cells_is_met_by_more_cells(run: Run):
    """One cell fed by all 64 channels draws 2.93 W but all 64 cells 2.296 W: a 2.5 W budget
    is met (it was refused with 'even one channel draws 2.93 W')."""
    plan = ok_json(
        run(
            "plan",
            "-p",
            "risp-64ch",
            "-a",
            "sobel",
            "--policy",
            "power",
            "--power-budget",
            "2.5W",
            "--time-model",
            "reduced_cells",
            "-f",
            "json",
        )
    )["plan"]
    assert plan["engines_on"] == 64
    assert plan["planned_power_w"] <= 2.5


def test_reproduce_r1_speedup_per_host_cpu_count(run) -> None:
    """R1: at 16 channels over SATA 3.2, T_Baseline with n_cpu cores over T_RISP (which no
    host core count changes), by hand from Eqs. (1)-(8); e.g. Binarization on 1 core:
    (max(1.4 / 6.4, 1.4 / 1.97) + 16.4822 x 1.4 / 3.1) / max(1.4 / 6.4, (1.4e9 / 16 + 2) /
    1e8, 1.4 / 45) = (0.71066 + 7.44356) / 0.875 = 9.3191."""
    rows = reproduce_table(run, "R1")
    assert [r["n_cpu"] for r in rows] == [1, 2, 4, 8, 16]
    for r in rows:
        for app in APPS:
            want = baseline_s(app, 16, SATA, r["n_cpu"]) / risp_s(app, 16)
            assert r[app] == pytest.approx(want, rel=REL), (r["n_cpu"], app)
    assert rows[0]["binarize"] == pytest.approx(9.3191, abs=1e-4)
    # The preset's own 4 cores give E4's speedup at the same point.
    e4 = {(r["app"], r["interface"], r["channels"]): r["value"] for r in reproduce_table(run, "E4")}
    at4 = next(r for r in rows if r["n_cpu"] == 4)
    for app in APPS:
        assert at4[app] == pytest.approx(e4[app, "sata-3.2", 16], rel=REL)


def test_reproduce_e6_model_fits_are_the_regression_of_their_points(run) -> None:
    """E6 (Fig. 8), the model rows: a and b are the least-squares line through the model's
    (n, P(n)) points, s the least-squares slope through the origin of its (n, bandwidth)
    points (numpy's fits, not the code's), P min / max the points' extremes; Sobel's slope is
    about α f_RU = 1 x 100 MHz = 0.1 GB/s per channel (R7)."""
    rows = reproduce_table(run, "E6")
    model = {r["app"]: r for r in rows if r["fit"] == "model"}
    assert set(model) == set(APPS)
    for app, r in model.items():
        n, power, bandwidth = np.array(r["points"], dtype=float).T
        assert n.min() == 4 and n.max() == 64
        slope, intercept = np.polyfit(n, power, 1)
        assert r["power_slope_w"] == pytest.approx(slope, rel=1e-9), app
        assert r["power_intercept_w"] == pytest.approx(intercept, rel=1e-9), app
        through_origin = float(n @ bandwidth / (n @ n))
        assert r["bandwidth_slope_gb_per_s"] == pytest.approx(through_origin, rel=1e-9), app
        assert (r["power_min_w"], r["power_max_w"]) == (power.min(), power.max())
    # (n_delay's 4 cycles per run bend the points a hair below the line: 0.09999996.)
    assert model["sobel"]["bandwidth_slope_gb_per_s"] == pytest.approx(0.1, rel=1e-6)


def test_plan_names_the_platform_file_whose_channels_are_too_many(ndpkit, tmp_path) -> None:
    """A file's 5000 channels were reported on "platform 'big'", its name inside the file,
    not on big.toml, the file the user passed and must edit."""
    big = tmp_path / "big.toml"
    big.write_text(
        'extends = "risp-64ch"\nname = "big"\n[storage]\nchannels = 5000\n[engines]\ncount = 5000\n'
    )
    line = assert_usage_error(ndpkit("plan", "-p", str(big), "-a", "sobel"))
    assert line.startswith(f"error: {big}: storage.channels: a channel plan takes at most 4096")
