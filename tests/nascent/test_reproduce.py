"""`ndpkit.reproduce.nascent2`: E1–E8 run once (default, scaled sizes) and checked for their
documented fields and the model's invariants; no published result appears here."""

from __future__ import annotations

from itertools import count, pairwise
from types import SimpleNamespace
from typing import Any

import pytest

from ndpkit.errors import SpecError
from ndpkit.nascent.devices import load_devices
from ndpkit.reproduce import REPRODUCTIONS
from ndpkit.reproduce.nascent2 import (
    TABLE_NAMES,
    Settings,
    cpu,
    document,
    e8_available,
    reproduce,
    settings_from_flags,
)
from ndpkit.reproduce.nascent2.tables import E7_DEVICES

COMPARISON = ("speedup_vs_fpga", "speedup_vs_cpu", "energy_vs_fpga", "energy_vs_cpu")
FAST = ("E1", "E2", "E3", "E4", "E5", "E6", "E7")


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return document(reproduce(Settings(), tables=[*FAST, "headline"]))


def test_registered() -> None:
    assert REPRODUCTIONS["nascent2"] == "ndpkit.reproduce.nascent2"


def test_top_level_keys(doc: dict[str, Any]) -> None:
    assert list(doc) == [*FAST, "headline"]
    assert all(isinstance(rows, list) and rows for rows in doc.values())


def test_e6_fields_and_scaling(doc: dict[str, Any]) -> None:
    rows = doc["E6"]
    assert [r["devices"] for r in rows] == list(range(1, 13))
    for r in rows:
        assert {"devices", *COMPARISON} <= set(r)
    # NASCENT2 stays flat with 𝓜; the serial baselines grow, so the ratios grow.
    assert len({r["nascent2_s"] for r in rows}) == 1
    for a, b in pairwise(rows):
        assert b["speedup_vs_fpga"] > a["speedup_vs_fpga"]
        assert b["speedup_vs_cpu"] > a["speedup_vs_cpu"]
        assert b["cpu_s"] == pytest.approx(a["cpu_s"] * b["devices"] / a["devices"])
    # Energy charges each baseline over its serial runtime, so the ratio does not depend on 𝓜.
    assert rows[0]["energy_vs_fpga"] == pytest.approx(rows[-1]["energy_vs_fpga"])


def test_e7_fields(doc: dict[str, Any]) -> None:
    rows = doc["E7"]
    assert {r["table"] for r in rows} == {"lineitem", "order_line"}
    assert sorted({r["sf"] for r in rows}) == [0.1, 1.0, 2.0, 5.0]
    assert {r["key"] for r in rows} == {"l_orderkey", "l_shipdate", "ol_o_id", "ol_delivery_d"}
    for r in rows:
        assert {"table", "sf", "key", *COMPARISON} <= set(r)
        assert all(r[k] > 0 for k in COMPARISON)
    lineitem = {r["sf"]: r["rows"] for r in rows if r["key"] == "l_orderkey"}
    assert lineitem[5.0] == pytest.approx(50 * lineitem[0.1], rel=1e-3)


def test_e1_cases_and_chunks(doc: dict[str, Any]) -> None:
    rows = doc["E1"]
    assert {r["case"] for r in rows} == {"dram", "ssd"}
    by = {(r["n"], r["case"]): r for r in rows}
    assert by[131_072, "dram"]["chunks"] == 1
    assert by[262_144, "dram"]["chunks"] == 2
    assert by[131_072, "dram"]["dram_merge_s"] == 0 < by[262_144, "dram"]["dram_merge_s"]
    for n in {r["n"] for r in rows}:
        assert by[n, "ssd"]["nascent2_s"] >= by[n, "dram"]["nascent2_s"]
        assert by[n, "ssd"]["cpu_single_s"] > by[n, "dram"]["cpu_single_s"]
    assert {r["cpu_basis"] for r in rows} <= {"measured", "extrapolated"}


def test_e2_bandwidth_caps(doc: dict[str, Any]) -> None:
    rows = doc["E2"]
    assert len(rows) == 12
    for r in rows:
        assert r["input_gb_per_s"] <= 3.0 + 1e-9
        assert r["total_gb_per_s"] <= 19.0 + 1e-9
        assert r["cpu_input_gb_per_s"] > 0
    variable = [r for r in rows if r["output"].startswith("variable")]
    assert variable, "E2 has rows with variable-length output"
    # The functional decoder's mean length for lengths uniform in 1..L_Max is near (L+1)/2.
    for r in variable:
        l_max = int(r["output"].split("≤ ")[1].split(" ")[0])
        assert r["mean_output_bytes"] == pytest.approx((l_max + 1) / 2, rel=0.1)
        assert r["input_gb_per_s"] == pytest.approx(0.3 * r["key_bytes"])


def test_e3_and_e4_breakdowns(doc: dict[str, Any]) -> None:
    for r in doc["E3"]:
        assert r["nascent2_s"] == pytest.approx(r["decode_s"] + r["sort_s"])
    rows = doc["E4"]
    assert len(rows) == 12
    assert not [r for r in rows if r["rows"] >= 100_000 and r["columns"] > 10_000]
    for r in rows:
        assert r["nascent2_s"] >= r["shuffle_s"] + r["sort_s"] - 1e-12
        # 4 GiB of FPGA DRAM: tables that do not fit run ssd_direct.
        assert (r["staging"] == "ssd_direct") == (r["table_gb"] > 4.29)


def test_e5_generic(doc: dict[str, Any]) -> None:
    rows = doc["E5"]
    assert {r["type"] for r in rows} == {"float32", "string ≤ 16 B", "string ≤ 32 B"}
    for r in rows:
        parts = r["host_s"] + r["map_s"] + r["sort_s"] + r["decode_s"]
        assert r["nascent2_s"] == pytest.approx(parts)
        assert r["cpu_basis"] == "measured"


@pytest.mark.skipif(not e8_available(), reason="ndpkit.tpc.analysis not installed")
def test_e8_listed() -> None:
    assert "E8" in TABLE_NAMES


def test_settings_from_flags() -> None:
    s = settings_from_flags(
        full=True,
        options=[
            "staging=ssd_direct",
            "smartssd.dram_random_latency=200 ns",
            "seed=7",
            "dram_merge=merge_tree",
            "merge_ways=4",
        ],
    )
    assert s.full and s.seed == 7
    assert (s.options.staging, s.options.merge_ways) == ("ssd_direct", 4)
    assert s.overrides == {"smartssd": {"dram_random_latency": "200 ns"}}
    for bad, field in (("x", "--option x"), ("overlap=never", "--option overlap=never")):
        with pytest.raises(SpecError) as info:
            settings_from_flags(options=[bad])
        assert info.value.field == field
    with pytest.raises(SpecError, match="unknown option"):
        settings_from_flags(options=["speed=3"])
    with pytest.raises(SpecError, match="≥ 2"):  # a merge of one run is no merge
        settings_from_flags(options=["merge_ways=1"])
    # Seeds are whole numbers in [0, 2^64), for the run (`seed`) as for the simulation.
    both = settings_from_flags(options=["seed=0", "des.seed=0"], simulate=True)
    assert (both.seed, both.des.seed) == (0, 0)
    top = str(2**64 - 1)
    assert settings_from_flags(options=[f"seed={top}"]).seed == 2**64 - 1
    for key in ("seed", "des.seed"):
        with pytest.raises(SpecError, match="from 0 to 18446744073709551615"):
            settings_from_flags(options=[f"{key}={2**64}"], simulate=True)
    with pytest.raises(SpecError, match="from 1 to 256"):
        settings_from_flags(options=["threads=257"])
    assert settings_from_flags(options=["threads=256"]).threads == 256


def test_e8_scale_factor() -> None:
    assert (Settings().e8_sf, Settings(full=True).e8_sf) == (0.1, 1.0)
    assert Settings(full=True, e8_scale_factor=0.05).e8_sf == 0.05


def test_unknown_experiment() -> None:
    with pytest.raises(SpecError, match="unknown experiment"):
        reproduce(Settings(), tables=["E9"])


def test_headline_is_the_largest_ratio_of_its_rows(doc: dict[str, Any]) -> None:
    claims = {r["claim"]: r for r in doc["headline"]}
    e5, e7 = doc["E5"], doc["E7"]
    (e6,) = [r for r in doc["E6"] if r["devices"] == 12]
    expected = {
        "generic sort: speedup vs CPU": max(r["speedup_vs_cpu"] for r in e5),
        "generic sort: energy efficiency vs CPU": max(r["energy_vs_cpu"] for r in e5),
    }
    for what, key in (
        ("speedup vs U250", "speedup_vs_fpga"),
        ("speedup vs CPU", "speedup_vs_cpu"),
        ("energy efficiency vs U250", "energy_vs_fpga"),
        ("energy efficiency vs CPU", "energy_vs_cpu"),
    ):
        expected[f"12 SmartSSDs: {what}"] = e6[key]
        expected[f"12 SmartSSDs, TPC tables: {what}"] = max(r[key] for r in e7)
    assert {c: r["value"] for c, r in claims.items()} == expected
    best = max(e5, key=lambda r: r["speedup_vs_cpu"])
    assert claims["generic sort: speedup vs CPU"]["source"] == (
        f"E5, largest of {len(e5)} rows: {best['type']}, n = {best['n']:,}"
    )
    assert claims["12 SmartSSDs: speedup vs U250"]["source"] == "E6: 𝓜 = 12"


@pytest.fixture
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every CPU measurement takes 2^-10 s (exactly, however many ticks went before), so a
    row depends only on the run's inputs."""
    ticks = count()
    monkeypatch.setattr(cpu, "time", SimpleNamespace(perf_counter=lambda: next(ticks) / 1024))


@pytest.mark.usefixtures("fixed_clock")
def test_a_table_does_not_depend_on_the_tables_before_it() -> None:
    # E2's variable-length means and E5's string lengths come from the run's RNG: each
    # experiment has its own stream, so running E1 (or E2) first changes nothing.
    together = document(reproduce(Settings(), tables=["E1", "E2", "E5"]))
    for name in ("E2", "E5"):
        assert document(reproduce(Settings(), tables=[name]))[name] == together[name], name


@pytest.mark.usefixtures("fixed_clock")
def test_headline_alone_runs_its_inputs_and_returns_only_itself() -> None:
    progress: list[str] = []
    alone = document(reproduce(Settings(), tables=["headline"], progress=progress.append))
    assert list(alone) == ["headline"]
    assert len(alone["headline"]) == 10
    ran = list(dict.fromkeys(m.split(":")[0] for m in progress))
    assert ran == ["E5", "E6", "E7", "headline"]


def test_every_ratio_against_the_baselines_is_the_baselines_over_nascent2(
    doc: dict[str, Any],
) -> None:
    """The ratio columns, recomputed from the rows' own times and the devices' powers:
    speedup = T_baseline / T_NASCENT2, energy = P_baseline·T_baseline / (P_SmartSSD·T per
    SmartSSD, summed over the SmartSSDs), as the module's docs state (spec §10.7)."""
    shipped = load_devices(None, {})  # the package's devices, as Settings() loads them
    p_ssd, p_fpga = shipped.fpga("smartssd").power_w, shipped.fpga("u250").power_w
    p_cpu = shipped.cpu("cpu").power_w
    assert len({p_ssd, p_fpga, p_cpu}) == 3  # else a swapped power would go unseen
    for r in doc["E1"]:
        n2 = r["nascent2_s"]
        assert r["speedup_vs_cpu_single"] == pytest.approx(r["cpu_single_s"] / n2, rel=1e-12)
        assert r["speedup_vs_cpu_multi"] == pytest.approx(r["cpu_multi_s"] / n2, rel=1e-12)
        assert r["energy_vs_cpu_multi"] == pytest.approx(
            p_cpu * r["cpu_multi_s"] / (p_ssd * n2), rel=1e-12
        )
    for r in doc["E2"]:
        assert r["speedup_vs_cpu"] == pytest.approx(
            r["input_gb_per_s"] / r["cpu_input_gb_per_s"], rel=1e-12
        )
        per_key = (r["key_bytes"] + r["mean_output_bytes"]) / r["key_bytes"]
        assert r["cpu_total_gb_per_s"] == pytest.approx(
            r["cpu_input_gb_per_s"] * per_key, rel=1e-12
        )
    for name in ("E3", "E4", "E5"):
        for r in doc[name]:
            assert r["speedup_vs_cpu"] == pytest.approx(r["cpu_s"] / r["nascent2_s"], rel=1e-12)
            if name != "E4":  # E4 reports no energy
                assert r["energy_vs_cpu"] == pytest.approx(
                    p_cpu * r["cpu_s"] / (p_ssd * r["nascent2_s"]), rel=1e-12
                )
    for r in [*doc["E6"], *doc["E7"]]:
        # 𝓜 SmartSSDs in parallel, each with the same job (E6: the row's; E7: 12 of them)
        smartssds = r.get("devices", E7_DEVICES)
        n2_j = p_ssd * r["nascent2_s"] * smartssds
        assert r["speedup_vs_cpu"] == pytest.approx(r["cpu_s"] / r["nascent2_s"], rel=1e-12)
        assert r["speedup_vs_fpga"] == pytest.approx(r["fpga_s"] / r["nascent2_s"], rel=1e-12)
        assert r["energy_vs_cpu"] == pytest.approx(p_cpu * r["cpu_s"] / n2_j, rel=1e-12)
        assert r["energy_vs_fpga"] == pytest.approx(p_fpga * r["fpga_s"] / n2_j, rel=1e-12)


def test_the_default_threads_are_the_cpus_this_process_may_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Was os.cpu_count(): the machine's CPUs, under `taskset -c 0` too.
    from ndpkit.reproduce.nascent2.settings import Settings  # noqa: PLC0415

    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 64)
    assert Settings().threads == 3
