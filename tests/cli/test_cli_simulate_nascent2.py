"""`ndpkit simulate nascent2` and `ndpkit reproduce nascent2 --simulate` through the installed
command: the rows against a job and devices built here, the DES options, and exit 2 with one
error line naming the flag; `ndpkit simulate -p … -a …` keeps working beside the subcommand."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cli_errors import one_error_line

from ndpkit.nascent.devices import load_devices
from ndpkit.nascent.system import TableJob, table_sort_time
from ndpkit.tpc import table_shape

LINEITEM = (
    "simulate",
    "nascent2",
    "--table",
    "lineitem",
    "--sf",
    "1",
    "--key",
    "l_shipdate",
    "--read-only-cpu",
)
TOLERANCE = 0.01
"""As tests/nascent/test_des.py, for a table of ~600 chunks."""
DEVICES = load_devices()


def _rows(result: Any) -> dict[tuple[str, str], dict[str, Any]]:
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)["nascent2_simulation"]
    return {(r["machine"], r["quantity"]): r for r in doc["rows"]}


def test_lineitem_on_12_ssds_against_the_model(ndpkit: Any) -> None:
    result = ndpkit(*LINEITEM, "--devices", "12", "--format", "json")
    rows = _rows(result)
    doc = json.loads(result.stdout)["nascent2_simulation"]
    assert (doc["devices"], doc["key"], doc["sf"], doc["events"] > 0) == (12, "l_shipdate", 1, True)
    assert doc["des"]["chunk_bytes"] == 2**20 and doc["des"]["baseline_schedule"] == "serial"
    # The model row is the analytic model of the job built here from the TPC-H shape and the
    # key's dictionary (2,526 ship dates as 16-bit keys, through the generic sort).
    shape = table_shape("lineitem", 1.0)
    job = TableJob(
        rows=shape.rows,
        row_bytes=shape.row_bytes,
        encoded_key_bytes=2,
        dict_values=2526,
        dict_value_bytes=4.0,
        key_kind="generic",
    )
    n2 = table_sort_time(DEVICES.fpga("smartssd"), job)
    assert doc["rows_per_ssd"] == job.rows
    for phase, seconds in n2.phases_s().items():
        assert rows["smartssd", f"{phase}_s"]["model"] == pytest.approx(seconds, rel=1e-12)
    assert rows["all", "nascent2_s"]["model"] == pytest.approx(n2.total_s, rel=1e-12)
    for quantity in ("nascent2_s", "fpga_s", "cpu_s", "nascent2_j", "speedup_vs_fpga"):
        r = rows["all", quantity]
        assert abs(r["difference_pct"]) <= 100 * TOLERANCE, r
        assert r["difference_pct"] == pytest.approx(
            100 * (r["simulated"] - r["model"]) / r["model"], abs=1e-9
        )
    # Every SmartSSD runs the same job alone: the run is one job; energy is 12 × P × T.
    job_s = rows["smartssd", "job_s"]["simulated"]
    assert rows["all", "nascent2_s"]["simulated"] == pytest.approx(job_s, rel=1e-12)
    power_w = DEVICES.fpga("smartssd").power_w
    assert rows["all", "nascent2_j"]["simulated"] == pytest.approx(12 * power_w * job_s)
    _utilisation_rows_are_fractions(rows)


def _utilisation_rows_are_fractions(rows: dict[tuple[str, str], dict[str, Any]]) -> None:
    use = {k: r for k, r in rows.items() if k[1].endswith("utilisation")}
    assert ("smartssd", "s2f link utilisation") in use
    assert ("smartssd", "sort pool utilisation") in use
    for r in use.values():
        assert 0 < r["simulated"] <= 1 + 1e-9 and r["model"] is None
    # The CPU baseline only reads here: its one path is busy the whole run.
    assert use["cpu", "s2f link utilisation"]["simulated"] == pytest.approx(1.0)


def test_serial_baselines_grow_with_the_devices(ndpkit: Any) -> None:
    one = _rows(ndpkit(*LINEITEM, "--devices", "1", "--format", "json"))
    three = _rows(ndpkit(*LINEITEM, "--devices", "3", "--format", "json"))
    n2 = ("all", "nascent2_s")
    assert three[n2]["simulated"] == pytest.approx(one[n2]["simulated"], rel=1e-12)
    fpga = ("all", "fpga_s")
    assert three[fpga]["simulated"] == pytest.approx(3 * one[fpga]["simulated"], rel=1e-9)


def test_des_options_and_model_options_apply(ndpkit: Any) -> None:
    args = ("--table", "order_line", "--sf", "1", "--devices", "4", "--format", "json")
    base = _rows(ndpkit("simulate", "nascent2", *args))
    fine = ndpkit(
        "simulate", "nascent2", *args, "-o", "des.chunk_bytes=64 KiB", "-o", "overlap=serial"
    )
    doc = json.loads(fine.stdout)["nascent2_simulation"]
    assert doc["des"]["chunk_bytes"] == 65536 and doc["model_options"]["overlap"] == "serial"
    assert doc["key"] == "ol_o_id"  # the table's first key by default
    together = _rows(
        ndpkit("simulate", "nascent2", *args, "-o", "des.baseline_schedule=concurrent")
    )
    fpga = ("all", "fpga_s")
    assert together[fpga]["simulated"] <= base[fpga]["simulated"] * (1 + 1e-9)
    assert together[fpga]["model"] == base[fpga]["model"]


def test_table_output(ndpkit: Any) -> None:
    result = ndpkit(*LINEITEM, "--devices", "2")
    assert result.returncode == 0, result.stderr
    assert "NASCENT2 simulated vs modelled — lineitem SF 1 by l_shipdate" in result.stdout
    assert "s2f link utilisation" in result.stdout
    assert "--read-only-cpu" in result.stderr


def test_the_cpu_baseline_is_measured_by_default(ndpkit: Any) -> None:
    args = ("simulate", "nascent2", "--table", "order_line", "--sf", "0.1", "--devices", "2")
    result = ndpkit(*args, "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["nascent2_simulation"]["cpu_measured"] is True
    rows = _rows(result)
    assert rows["cpu", "sort_s"]["simulated"] > 0
    assert rows["cpu", "shuffle_s"]["simulated"] > 0
    assert rows["cpu", "job_s"]["simulated"] > rows["cpu", "read_s"]["simulated"]


def test_the_rans_rfns_simulator_is_still_simulate(ndpkit: Any) -> None:
    result = ndpkit("simulate", "--platform", "rfns", "--app", "knn8", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["simulation"]["platform"] == "rfns"


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("nascent2", "--devices", "0"), "--devices"),
        (("nascent2", "--devices", "two"), "--devices"),
        (("nascent2", "--table", "orders"), "--table"),
        (("nascent2", "--table", "order_line", "--key", "l_shipdate"), "--key"),
        (("nascent2", "--sf", "0"), "--sf"),
        (("nascent2", "--sf", "inf"), "--sf"),
        (("nascent2", "--sf", "big"), "--sf"),
        # An SF below one row is refused, not run as one row under the title "SF 1e-30".
        (("nascent2", "--sf", "1e-30"), "--sf: SF 1e-30 gives no lineitem row (SF 1.7e-07"),
        (("nascent2", "--table", "order_line", "--sf", "1e-5"), "--sf: SF 1e-05 gives no"),
        (("nascent2", "--device-file", ""), "command line: --device-file: must name a device"),
        (("nascent2", "--device-file", " "), "command line: --device-file: must name a device"),
        (("nascent2", "-o", "des.chunk_bytes=abc"), "--option des.chunk_bytes=abc"),
        (("nascent2", "-o", "des.chunk_bytes=-1 KiB"), "--option des.chunk_bytes=-1 KiB"),
        (
            ("nascent2", "-o", "des.baseline_schedule=parallel"),
            "--option des.baseline_schedule=parallel",
        ),
        (("nascent2", "-o", "des.nosuch=1"), "--option des.nosuch=1"),
        (
            ("nascent2", "-o", "smartssd.clock=-1 MHz"),
            "command line: --option smartssd.clock=-1 MHz: must be positive",
        ),
        (("nascent2", "-o", "smartssd.p=3"), "command line: --option smartssd.p=3: unknown key"),
        # Which of two values would win is not the command line's guess to make.
        (
            ("nascent2", "-o", "smartssd.clock=5MHz", "-o", "smartssd.clock=250MHz"),
            "--option smartssd.clock=250MHz: smartssd.clock is given twice",
        ),
        (("nascent2", "-o", "merge_ways=4", "-o", "merge_ways=8"), "merge_ways is given twice"),
        # Runs that would take hours are refused before they start.
        (("nascent2", "--devices", "99999999", "--read-only-cpu"), "--devices/--sf"),
        (("nascent2", "--sf", "1e9", "--read-only-cpu"), "--devices/--sf"),
        (("nascent2", "-o", "des.chunk_bytes=1", "--read-only-cpu"), "/-o des.chunk_bytes"),
        (("-p", "rfns", "nascent2"), "--platform"),
        ((), "--platform"),
        (("-p", "rfns"), "--app"),
    ],
)
def test_bad_input_names_the_flag(ndpkit: Any, args: tuple[str, ...], field: str) -> None:
    result = ndpkit("simulate", *args)
    assert field in one_error_line(result)
    assert result.stdout == ""


def test_reproduce_simulate_adds_the_columns(ndpkit: Any) -> None:
    args = ("reproduce", "nascent2", "--tables", "E6", "--format", "json")
    plain = json.loads(ndpkit(*args).stdout)["E6"][0]
    result = ndpkit(*args, "--simulate", "-o", "des.chunk_bytes=64 KiB")
    assert result.returncode == 0, result.stderr
    row = json.loads(result.stdout)["E6"][0]
    assert set(row) - set(plain) == {
        "sim_nascent2_s",
        "sim_fpga_s",
        "sim_cpu_s",
        "sim_speedup_vs_fpga",
        "sim_vs_model_pct",
    }
    assert 0 < row["sim_vs_model_pct"] < 1  # 64 KiB chunks: the fill is small


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("-o", "des.chunk_bytes=64 KiB"), "--option des.chunk_bytes=64 KiB"),
        (("--simulate", "-o", "des.chunk_bytes=1 furlong"), "--option des.chunk_bytes=1 furlong"),
        (("--simulate", "-o", "des.baseline_schedule=x"), "--option des.baseline_schedule=x"),
        # A million threads would hang in the thread pool; they are refused at once.
        (
            ("-o", "threads=1000000"),
            "error: command line: --option threads=1000000: must be a whole number from 1 to 256",
        ),
        (("-o", "threads=0"), "--option threads=0: must be a whole number from 1 to 256"),
        (("-o", "seed=18446744073709551616"), "--option seed=18446744073709551616: must be"),
        (
            ("--simulate", "-o", "des.seed=18446744073709551616"),
            "--option des.seed=18446744073709551616: must be",
        ),
        (("--devices", ""), "error: command line: --devices: must name a device file"),
    ],
)
def test_reproduce_bad_des_options(ndpkit: Any, args: tuple[str, ...], field: str) -> None:
    result = ndpkit("reproduce", "nascent2", "--tables", "E6", *args)
    assert field in one_error_line(result)


def test_simulate_is_nascent2_only(ndpkit: Any) -> None:
    assert "--simulate" in one_error_line(ndpkit("reproduce", "risp", "--simulate"))
