"""`ndpkit reproduce nascent2 --simulate`: E6 and E7 rows with the discrete-event simulation
beside the model (`Settings.simulate`, `-o des.…`).

The simulated columns must come from the row's own inputs (so the simulation's model is the
row's model), agree with it within test_des's TOLERANCE where a table streams in ≥ ~100
chunks, show E6's fill as worked out by hand, and be absent without the flag.
"""

from __future__ import annotations

from typing import Any

import pytest

from ndpkit.errors import SpecError
from ndpkit.nascent.des import DesOptions
from ndpkit.nascent.devices import load_devices
from ndpkit.reproduce.nascent2 import Settings, document, reproduce, settings_from_flags
from ndpkit.reproduce.nascent2.tables import E6_JOB

SIM_FIELDS = (
    "sim_nascent2_s",
    "sim_fpga_s",
    "sim_cpu_s",
    "sim_speedup_vs_fpga",
    "sim_vs_model_pct",
)
TOLERANCE = 0.01
"""As tests/nascent/test_des.py: relative agreement where every stream has ≥ ~100 chunks."""
REL = 1e-9
SMARTSSD = load_devices().fpga("smartssd")


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return document(reproduce(Settings(simulate=True), tables=["E6", "E7"]))


def _e6(**settings: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = document(reproduce(Settings(**settings), tables=["E6"]))["E6"]
    return rows


def test_the_simulated_columns_follow_the_model_columns(doc: dict[str, Any]) -> None:
    plain = _e6()
    assert not set(SIM_FIELDS) & set(plain[0])
    for name in ("E6", "E7"):
        for row in doc[name]:
            assert list(row)[-len(SIM_FIELDS) :] == list(SIM_FIELDS)
            assert all(isinstance(row[f], float) for f in SIM_FIELDS)
    assert list(doc["E6"][0])[: -len(SIM_FIELDS)] == list(plain[0])


def test_the_simulation_runs_on_the_rows_own_inputs(doc: dict[str, Any]) -> None:
    # sim_vs_model_pct is taken against the simulation's own model; it equals the difference
    # from the row's analytic time only if both priced the same job, devices and options.
    for row in [*doc["E6"], *doc["E7"]]:
        pct = 100 * (row["sim_nascent2_s"] - row["nascent2_s"]) / row["nascent2_s"]
        assert row["sim_vs_model_pct"] == pytest.approx(pct, rel=1e-6, abs=1e-9), row
        assert row["sim_speedup_vs_fpga"] == pytest.approx(
            row["sim_fpga_s"] / row["sim_nascent2_s"], rel=REL
        )
        # The serial CPU baseline has nothing to overlap: read, then its measured phases.
        assert row["sim_cpu_s"] == pytest.approx(row["cpu_s"], rel=REL)


def test_large_e7_tables_agree_with_the_model(doc: dict[str, Any]) -> None:
    chunk_bytes = DesOptions().chunk_bytes
    large = [r for r in doc["E7"] if r["table_gb"] * 1e9 >= 100 * chunk_bytes]
    assert {(r["table"], r["sf"]) for r in large} >= {("lineitem", 1.0), ("lineitem", 5.0)}
    for r in large:
        assert abs(r["sim_vs_model_pct"]) <= 100 * TOLERANCE, r
        assert r["sim_fpga_s"] == pytest.approx(r["fpga_s"], rel=TOLERANCE)
        assert r["sim_speedup_vs_fpga"] == pytest.approx(r["speedup_vs_fpga"], rel=2 * TOLERANCE)


def test_the_simulation_is_never_faster_than_the_model(doc: dict[str, Any]) -> None:
    for r in [*doc["E6"], *doc["E7"]]:
        assert r["sim_nascent2_s"] >= r["nascent2_s"] * (1 - REL), r
        assert r["sim_fpga_s"] >= r["fpga_s"] * (1 - REL), r


def test_e6_fill_by_hand(doc: dict[str, Any]) -> None:
    """E6's table is four 1 MiB chunks: the simulation adds, over the model, the decoder's
    one chunk read before its decode (the model overlaps them), the last staged chunk's
    gather (2 MiB through DRAM) and the sort chunk's 12 B per key moved at BW_D2F instead
    of the AXI port's 64 B × f."""
    f, d2f = SMARTSSD.clock_hz, SMARTSSD.d2f_bytes_per_s
    keys = E6_JOB.rows
    decode_fill = min(keys * 2 / SMARTSSD.s2f_bytes_per_s, keys / (5 * f))
    last_gather = 2 * 2**20 / d2f
    sort_moves = keys * (4 + 8) * (1 / d2f - 1 / (SMARTSSD.axi_bytes * f))
    rows = doc["E6"]
    for r in rows:
        excess = r["sim_nascent2_s"] - r["nascent2_s"]
        assert excess == pytest.approx(decode_fill + last_gather + sort_moves, rel=1e-6)
    # Serial baselines: the U250 runs its 𝓜 jobs one after another.
    for r in rows:
        assert r["sim_fpga_s"] == pytest.approx(r["devices"] * rows[0]["sim_fpga_s"], rel=1e-6)


def test_des_options_reach_the_simulation() -> None:
    fine = _e6(simulate=True, des=DesOptions(chunk_bytes=64 * 1024))
    coarse = _e6(simulate=True)
    for a, b in zip(fine, coarse, strict=True):
        assert 0 < a["sim_vs_model_pct"] < 1 < b["sim_vs_model_pct"]
    concurrent = _e6(simulate=True, des=DesOptions(baseline_schedule="concurrent"))
    for c, s in zip(concurrent, coarse, strict=True):
        # All jobs at once on the one PCIe path: never slower than one after another, never
        # faster than every table's bytes over that path.
        bytes_bound = (
            c["devices"] * E6_JOB.table_bytes / load_devices().fpga("u250").s2f_bytes_per_s
        )
        assert bytes_bound <= c["sim_fpga_s"] <= s["sim_fpga_s"] * (1 + REL)
        assert c["fpga_s"] == s["fpga_s"]


def test_des_flags() -> None:
    s = settings_from_flags(
        simulate=True,
        options=[
            "des.chunk_bytes=64 KiB",
            "des.baseline_schedule=concurrent",
            "des.shuffle_order=gather",
            "des.seed=7",
            "overlap=serial",
        ],
    )
    assert s.simulate
    assert s.des == DesOptions(65536, "concurrent", "gather", 7)
    assert s.options.overlap == "serial"
    assert (
        settings_from_flags(simulate=True, options=["des.chunk_bytes=4096"]).des.chunk_bytes == 4096
    )
    assert settings_from_flags().des == DesOptions() and not settings_from_flags().simulate


@pytest.mark.parametrize(
    ("pair", "needle"),
    [
        ("des.chunk_bytes=abc", "unknown unit"),
        ("des.chunk_bytes=0", "at least 1 byte"),
        ("des.chunk_bytes=0.5 B", "at least 1 byte"),
        ("des.chunk_bytes=-1", "at least 1 byte, got '-1'"),
        ("des.baseline_schedule=parallel", "must be one of serial, concurrent"),
        ("des.shuffle_order=random", "must be one of scatter, gather"),
        ("des.seed=-1", "whole number"),
        ("des.speed=3", "known: des.chunk_bytes"),
    ],
)
def test_bad_des_flags_name_the_field(pair: str, needle: str) -> None:
    with pytest.raises(SpecError, match=needle) as info:
        settings_from_flags(simulate=True, options=[pair])
    assert info.value.field == f"--option {pair}"


def test_des_flags_need_simulate() -> None:
    with pytest.raises(SpecError, match="--simulate") as info:
        settings_from_flags(options=["des.chunk_bytes=64 KiB"])
    assert info.value.field == "--option des.chunk_bytes=64 KiB"
