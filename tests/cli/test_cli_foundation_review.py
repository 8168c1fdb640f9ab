"""Review fixes in `estimate`, `plan` and `platforms` through the installed command: bad
input is one exit-2 line, flags that would change nothing are refused, and CSV carries the
JSON's tables and machine values."""

from __future__ import annotations

import csv
import io
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_errors import one_error_line

Run = Callable[..., subprocess.CompletedProcess[str]]
RANS18 = 'extends = "rans"\n[storage]\ncount = 18\n[engines]\ncount = 18\n'


def _ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, result.stderr
    return result


def _csv(result: subprocess.CompletedProcess[str]) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(_ok(result).stdout)))


def _same(text: str, value: Any) -> bool:
    """A CSV cell holds the JSON's value: numbers exactly, lists as JSON, null as empty."""
    if value is None:
        return text == ""
    if isinstance(value, bool):
        return text == str(value)
    if isinstance(value, list):
        return bool(json.loads(text) == value)
    if isinstance(value, int | float):
        return float(text) == float(value)
    return text == value


# --- a file that extends a preset needs a name of its own -------------------------------


def test_extending_a_preset_without_a_name_is_one_error_line(ndpkit: Run, tmp_path: Path) -> None:
    path = tmp_path / "rans18.toml"
    path.write_text(RANS18)
    line = one_error_line(
        ndpkit("estimate", "-p", str(path), "-a", "lc", "--wall-times", "printed")
    )
    assert line.startswith(
        f"error: {path}: name: required: a file that extends 'rans' needs a name of its own"
    )


def test_a_named_file_does_not_get_the_presets_printed_times(ndpkit: Run, tmp_path: Path) -> None:
    path = tmp_path / "rans18.toml"
    path.write_text(RANS18.replace("\n", '\nname = "rans18"\n', 1))
    args = ("estimate", "-p", str(path), "-a", "lc", "--wall-times", "printed", "-f", "json")
    e = json.loads(_ok(ndpkit(*args)).stdout)["estimate"]
    # 18 engines at the single-engine rate, not the paper's 36-engine 80.43 GB/s
    assert e["ndp_bw_gb_per_s"] == pytest.approx(18 * e["engine_bw_gb_per_s"], rel=1e-12)
    assert e["ndp_bw_gb_per_s"] == pytest.approx(39.952, abs=1e-3)


# --- plan --scheme and --tolerance -----------------------------------------------------


@pytest.mark.parametrize("scheme", ["foo", "mux1x", "muxN", " mux2", "mux0", "mux2 "])
def test_a_bad_scheme_is_one_error_line_naming_the_flag(ndpkit: Run, scheme: str) -> None:
    line = one_error_line(ndpkit("plan", "-p", "rans", "-a", "lc", "--scheme", scheme))
    assert line == (
        f"error: command line: --scheme: scheme must be mux1, mux2, …, muxk or muxn, got {scheme!r}"
    )


def test_a_scheme_wider_than_the_server_names_the_flag(ndpkit: Run) -> None:
    line = one_error_line(ndpkit("plan", "-p", "rans", "-a", "lc", "--scheme", "mux40"))
    assert line.startswith("error: command line: --scheme: ") and "spans 40 devices" in line


@pytest.mark.parametrize("tolerance", ["nan", "inf", "-inf", "-0.1"])
def test_a_tolerance_that_is_not_a_finite_fraction_is_refused(ndpkit: Run, tolerance: str) -> None:
    args = ("plan", "-p", "rans", "-a", "lc", "--optimal", f"--tolerance={tolerance}")
    line = one_error_line(ndpkit(*args))
    assert line.startswith("error: command line: --tolerance: must be a finite fraction ≥ 0")


# --- flags that would change nothing ---------------------------------------------------


def test_engines_with_a_host_split_is_refused(ndpkit: Run) -> None:
    line = one_error_line(
        ndpkit("estimate", "-p", "rans", "-a", "lc", "-n", "18", "--split", "host")
    )
    assert line.startswith(
        "error: command line: --engines: --split host runs the whole kernel on the host"
    )


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (("estimate", "-p", "sans", "-a", "lc"), "'sans' declares no switch_layer.port_bandwidth"),
        (("estimate", "-p", "cns", "-a", "lc"), "'cns' declares no switch_layer.port_bandwidth"),
        (("estimate", "-p", "rans", "-a", "lc", "--split", "host"), "under --split host"),
        (("simulate", "-p", "rans", "-a", "he", "--plan", "host"), "under --plan host no data"),
        (("plan", "-p", "rans", "-a", "lc", "--scheme", "mux1"), "switch layer mux1 on 'rans'"),
        (("estimate", "-p", "rans", "-a", "lc", "-o", "mux_port_cap=true", "--split", "host"), ""),
    ],
)
def test_mux_port_cap_where_no_port_is_capped_is_refused(
    ndpkit: Run, args: tuple[str, ...], why: str
) -> None:
    extra = () if "-o" in args else ("--mux-port-cap",)
    line = one_error_line(ndpkit(*args, *extra))
    assert line.startswith("error: command line: --mux-port-cap: changes nothing: ")
    assert why in line


def test_mux_port_cap_still_caps_a_switched_layer(ndpkit: Run) -> None:
    def ssd_bw(*flags: str) -> float:
        out = _ok(ndpkit("estimate", "-p", "rans", "-a", "lc", "-f", "json", *flags)).stdout
        return float(json.loads(out)["estimate"]["ssd_bw_gb_per_s"])

    assert ssd_bw("--mux-port-cap") < ssd_bw()


@pytest.mark.parametrize("command", ["estimate", "plan"])
def test_help_gives_switch_figures_as_the_presets(ndpkit: Run, command: str) -> None:
    text = " ".join(_ok(ndpkit(command, "--help")).stdout.replace("│", " ").split())
    assert "the RANS/RFNS presets': 18 mW" in text
    assert "the presets': 18 x 0.99 mW" in text
    assert "the RANS/RFNS presets': 20 Gbps" in text


# --- profile engine kinds and counts ---------------------------------------------------


def test_a_misspelt_engine_kind_in_a_profile_is_one_error_line(ndpkit: Run, tmp_path: Path) -> None:
    path = tmp_path / "prof.toml"
    path.write_text('[apps.scan]\ndata_size = "2 TB"\nalpha = 20\nengine = { amr = "12 GB/s" }\n')
    line = one_error_line(ndpkit("estimate", "-p", "rans", "-a", "scan", "--profiles", str(path)))
    assert line == (
        f"error: {path}: apps.scan.engine: unknown engine kind 'amr'; did you mean 'arm'? "
        "(the kinds are arm, fpga, cpu)"
    )


def test_a_boolean_count_is_one_error_line(ndpkit: Run, tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        'extends = "sans"\nname = "c"\n[storage]\ncount = true\n[engines]\ncount = true\n'
    )
    line = one_error_line(ndpkit("platforms", "check", str(path)))
    assert line.startswith(f"error: {path}: storage.count: expected a whole number, got true")


def test_a_range_error_shows_the_value_as_written(ndpkit: Run, tmp_path: Path) -> None:
    path = tmp_path / "neg.toml"
    path.write_text('extends = "rans"\nname = "n"\n[storage]\nread_bandwidth = "-3 GB/s"\n')
    line = one_error_line(ndpkit("platforms", "check", str(path)))
    assert line == (
        f"error: {path}: storage.read_bandwidth: must be greater than zero, got '-3 GB/s'"
    )


# --- CSV carries what the JSON has -----------------------------------------------------


def test_estimate_csv_has_the_json_values_and_notes_on_stderr(ndpkit: Run) -> None:
    args = ("estimate", "-p", "rans", "-a", "he", "-n", "20")
    result = ndpkit(*args, "-f", "csv")
    rows = _csv(result)
    doc = json.loads(_ok(ndpkit(*args, "-f", "json")).stdout)
    assert {r["table"] for r in rows} == {"estimate"}
    expected = {**doc["estimate"], "units": doc["units"]}  # the JSON's units: the last row
    assert [r["quantity"] for r in rows] == list(expected)
    for row in rows:
        assert _same(row["value"], expected[row["quantity"]]), row
    assert [f"note: {n}" for n in doc["notes"]] == result.stderr.splitlines()
    assert doc["notes"]


@pytest.mark.parametrize(
    "args",
    [
        ("plan", "-p", "rfns", "-a", "he"),
        ("plan", "-p", "rfns", "-a", "knn2", "--optimal", "--placement", "static_shards"),
        ("plan", "-p", "cns", "-a", "lc", "--optimal"),
        ("plan", "-p", "risp-64ch", "-a", "sobel"),
    ],
)
def test_plan_csv_has_every_json_table_with_machine_values(
    ndpkit: Run, args: tuple[str, ...]
) -> None:
    result = ndpkit(*args, "-f", "csv")
    rows = _csv(result)
    doc = json.loads(_ok(ndpkit(*args, "-f", "json")).stdout)
    plan_rows = [r for r in rows if r["table"] == "plan"]
    expected = {k: v for k, v in doc["plan"].items() if k != "notes"} | {"units": doc["units"]}
    assert [r["quantity"] for r in plan_rows] == list(expected)
    for row in plan_rows:
        assert _same(row["value"], expected[row["quantity"]]), row
    candidates = [r for r in rows if r["table"] == "candidates"]
    assert len(candidates) == len(doc["candidates"])
    for row, candidate in zip(candidates, doc["candidates"], strict=True):
        for key, value in candidate.items():
            assert _same(row[key], value), (key, row[key], value)
    assert {r["table"] for r in rows} == {"plan"} | ({"candidates"} if candidates else set())
    assert [f"note: {n}" for n in doc["plan"]["notes"]] == result.stderr.splitlines()


def test_plan_optimal_csv_lists_the_candidates(ndpkit: Run) -> None:
    rows = _csv(ndpkit("plan", "-p", "rfns", "-a", "knn2", "--optimal", "-f", "csv"))
    candidates = [r for r in rows if r["table"] == "candidates"]
    assert len(candidates) == 36 - 18 + 1 + 1  # 18..36 engines and the host split
    assert {r["split"] for r in candidates} == {"device", "host"}


@pytest.mark.parametrize("name", ["rans", "risp-64ch"])
def test_platforms_show_csv_has_the_json_numbers_and_their_units(ndpkit: Run, name: str) -> None:
    rows = _csv(ndpkit("platforms", "show", name, "-f", "csv"))
    doc = json.loads(_ok(ndpkit("platforms", "show", name, "-f", "json")).stdout)
    for row in rows:
        value: Any = doc
        for part in row["field"].split("."):
            value = value[part]
        assert _same(row["value"], value), row
    units = {r["field"]: r["unit"] for r in rows}
    assert units["host_link.bandwidth_bytes_per_s"] == "bytes/s"
    assert units["host.power_active_w"] == "W"
    assert units["storage.count"] == ""
    assert all(units[f] == "bytes/s" for f in units if f.startswith("engines.throughput."))


def test_platforms_show_csv_bandwidth_is_a_number(ndpkit: Run, tmp_path: Path) -> None:
    path = tmp_path / "fast.toml"
    path.write_text('extends = "rans"\nname = "fast"\n[host_link]\nbandwidth = "32 GB/s"\n')
    rows = _csv(ndpkit("platforms", "show", str(path), "-f", "csv"))
    row = next(r for r in rows if r["field"] == "host_link.bandwidth_bytes_per_s")
    assert (float(row["value"]), row["unit"]) == (32e9, "bytes/s")


@pytest.mark.parametrize("pair", ["improvement=ee_gain", "eq_rounding=rounded_2dp"])
def test_estimate_refuses_the_planner_s_conventions(ndpkit: Run, pair: str) -> None:
    # estimate reads neither (it runs no Eq. 2 and reports no saving): both were accepted
    # and the output was the same as without them.
    result = ndpkit("estimate", "-p", "rans", "-a", "he", "-o", pair, "-f", "json")
    line = one_error_line(result)
    assert f"--option {pair.partition('=')[0]}" in line
    assert "ndpkit plan" in line
    assert result.stdout == ""
    planned = _ok(ndpkit("plan", "-p", "rans", "-a", "he", "-o", pair, "-f", "json"))
    assert json.loads(planned.stdout)["plan"]["engines_on"] == 21
