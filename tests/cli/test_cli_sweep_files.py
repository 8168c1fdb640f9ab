"""`ndpkit sweep --out`: CSV and Parquet hold the same table, whatever mix of platforms
(issue 5 audit, findings 2 and 7)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

MIXED = (
    "sweep", "--platforms", "cns,rfns", "--apps", "he", "--engines", "36",
    "--chunks", "1 MiB", "--size", "1 GiB",
)  # fmt: skip


def test_parquet_has_every_column_of_the_csv_with_the_same_values(ndpkit, tmp_path: Path) -> None:
    """CNS rows have no ndp or ndp2cpu stage (the first row), RFNS rows have: the Parquet
    file keeps those columns, null where the CSV leaves the cell empty."""
    written = {}
    for suffix in ("csv", "parquet"):
        out = tmp_path / f"sweep.{suffix}"
        result = ndpkit(*MIXED, "--out", str(out))
        assert result.returncode == 0, result.stderr
        written[suffix] = out
    with written["csv"].open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        csv_rows = list(reader)
        csv_columns = list(reader.fieldnames or [])
    table = pq.read_table(written["parquet"])
    assert table.column_names == csv_columns
    assert {"utilisation_ndp", "utilisation_ndp2cpu", "utilisation_link"} <= set(csv_columns)
    parquet_rows = table.to_pylist()
    assert [r["platform"] for r in parquet_rows] == ["cns", "rfns"]
    for got, expected in zip(parquet_rows, csv_rows, strict=True):
        for column in csv_columns:
            if column == "wall_s":
                continue  # each run's own wall time
            text, value = expected[column], got[column]
            if text == "":
                assert value is None, column
            elif isinstance(value, float):
                assert math.isclose(value, float(text), rel_tol=1e-15), column
            else:
                assert str(value) == text, column
    assert parquet_rows[0]["utilisation_ndp"] is None
    assert parquet_rows[1]["utilisation_link"] is None


def test_data_bytes_is_a_whole_number_of_bytes(ndpkit, tmp_path: Path) -> None:
    """1 GiB over 36 SSDs is 29826161.78 B a shard; their sum is not 2^30 in binary floats,
    but the file reports the data set as given."""
    out = tmp_path / "sweep.csv"
    result = ndpkit(*MIXED, "--out", str(out))
    assert result.returncode == 0, result.stderr
    with out.open(encoding="utf-8", newline="") as f:
        assert [row["data_bytes"] for row in csv.DictReader(f)] == ["1073741824"] * 2
    parquet = tmp_path / "sweep.parquet"
    assert ndpkit(*MIXED, "--out", str(parquet)).returncode == 0
    assert pq.read_table(parquet).column("data_bytes").to_pylist() == [2**30] * 2


def test_an_output_in_a_missing_directory_fails_before_the_sweep(ndpkit, tmp_path: Path) -> None:
    """The directory is checked first: an engine count the switch layer cannot route (a
    later check, made just before the sweep) is not reached, and nothing is written."""
    out = tmp_path / "missing" / "x.csv"
    result = ndpkit("sweep", "--platforms", "rfns", "--engines", "5", "--out", str(out))
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"--out: cannot write '{out}': no directory '{out.parent}'" in result.stderr
    assert "--engines" not in result.stderr and "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--engines", "18,18"), "--engines: 18 is given more than once"),
        (("--engines", "18,,36"), "--engines: '18,,36' has an empty value"),
        (("--apps", "lc,,he"), "--apps: 'lc,,he' has an empty value"),
        (("--platforms", ",rans"), "--platforms: ',rans' has an empty value"),
        (("--chunks", "4MiB, ,8MiB"), "--chunks: '4MiB, ,8MiB' has an empty value"),
        (("--engines", "1:1000000000"), "--engines: '1:1000000000' gives 1,000,000,000 engine"),
        (("--engines", "1_8"), "--engines: expected '18,27,36'"),
        (("--engines", "\u0661\u0668"), "--engines: expected '18,27,36'"),  # Arabic-Indic 18
        (("--engines", "1:99999999999999999999"), "gives 99,999,999,999,999,999,999 engine"),
        # Repeats are caught before anything is loaded: not "unknown platform 'nosuch'".
        (("--platforms", "rans,rans,nosuch"), "--platforms: rans is given more than once"),
        (("--apps", "he,he,nosuch"), "--apps: he is given more than once"),
        (("--chunks", "4MiB,4096 KiB"), "--chunks: 4 MiB is given more than once"),
        (("--platforms", "rans,rans"), "--platforms: rans is given more than once"),
        (("--apps", "he,he"), "--apps: he is given more than once"),
    ],
)
def test_a_grid_value_given_twice_or_left_empty_is_refused(
    ndpkit, args: tuple[str, ...], message: str
) -> None:
    result = ndpkit("sweep", *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_two_files_of_one_name_are_named_in_the_error(ndpkit, tmp_path: Path) -> None:
    twin, other = tmp_path / "r.toml", tmp_path / "s.toml"
    twin.write_text('extends = "rans"\nname = "lab"\n')
    other.write_text('extends = "rfns"\nname = "lab"\n')
    result = ndpkit("sweep", "--platforms", f"{twin},{other}")
    assert result.returncode == 2
    assert f"--platforms: '{twin}' and '{other}' are both named 'lab'" in result.stderr
    again = ndpkit("sweep", "--platforms", f"{twin},{tmp_path}/./r.toml")  # one file, twice
    assert again.returncode == 2
    assert "--platforms: names platform 'lab' twice; give each platform once" in again.stderr


def test_a_file_under_its_presets_name_is_refused(ndpkit, tmp_path: Path) -> None:
    twin = tmp_path / "r.toml"
    twin.write_text('extends = "rans"\nname = "rans"\n')
    result = ndpkit("sweep", "--platforms", f"rans,{twin}")
    assert result.returncode == 2
    assert f"{twin}: name: 'rans' is the name of preset rans, which this file" in result.stderr


def test_a_trailing_comma_in_engines_is_taken_like_the_other_lists(ndpkit) -> None:
    args = ("--apps", "he,", "--platforms", "rans,", "--engines", "18,36,", "-f", "json")
    result = ndpkit("sweep", *args)
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)["sweep"]
    assert {(r["platform"], r["app"], r["engines_on"]) for r in rows} == {
        ("rans", "he", 18),
        ("rans", "he", 36),
    }


def test_csv_on_stdout_has_the_columns_and_values_of_the_out_file(ndpkit, tmp_path: Path) -> None:
    """`-f csv` printed the table's nine columns (and a `table` column) where --out and
    `-f json` have every field."""
    out = tmp_path / "sweep.csv"
    result = ndpkit(*MIXED, "-f", "csv", "--out", str(out))
    assert result.returncode == 0, result.stderr
    printed = list(csv.DictReader(result.stdout.splitlines()))
    with out.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        written = list(reader)
        columns = list(reader.fieldnames or [])
    assert list(printed[0]) == columns
    assert printed == written  # the same rows, wall_s included: one sweep wrote both
    as_json = ndpkit(*MIXED, "-f", "json")
    assert as_json.returncode == 0, as_json.stderr
    json_columns: dict[str, None] = {}
    for row in json.loads(as_json.stdout)["sweep"]:
        json_columns.update(dict.fromkeys(row))
    assert columns == list(json_columns)


def test_engine_counts_for_platforms_without_engines_are_refused(ndpkit) -> None:
    """CNS has no engines: --engines was ignored, and the sweep ran one row at 0 engines."""
    result = ndpkit("sweep", "--platforms", "cns", "--apps", "he", "--engines", "5")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert result.stderr == (
        "error: command line: --engines: platform 'cns' has no engines; give engine counts "
        "with a platform that has engines, or leave them out\n"
    )


def test_a_platform_without_engines_is_the_baseline_of_a_mixed_sweep(ndpkit) -> None:
    """With a platform that has engines, CNS runs once per app and chunk size, at 0."""
    args = ("--platforms", "cns,rfns", "--apps", "he", "--engines", "18,36", "--size", "1 GiB")
    result = ndpkit("sweep", *args, "--chunks", "1 MiB", "-f", "json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)["sweep"]
    assert [(r["platform"], r["engines_on"]) for r in rows] == [
        ("cns", 0),
        ("rfns", 18),
        ("rfns", 36),
    ]


def test_one_row_is_said_so_and_whole_chunk_sizes_are_integers(ndpkit, tmp_path: Path) -> None:
    out = tmp_path / "one.csv"
    args = ("--platforms", "rans", "--apps", "he", "--engines", "36", "--chunks", "1 MiB")
    result = ndpkit("sweep", *args, "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert f"wrote 1 row to {out}" in result.stderr
    with out.open(encoding="utf-8", newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert row["chunk_bytes"] == "1048576"


@pytest.mark.parametrize("units, mb", [(None, 2**20), ("decimal", 10**6)])
def test_a_sweep_file_says_which_mb_its_efficiency_uses(ndpkit, tmp_path: Path, units, mb) -> None:
    """`-o units=decimal` changes every row's ee_mb_per_j (2^20 → 10^6 bytes a MB); the file
    names the unit in a `units` column, or a reader could not tell which it got."""
    out = tmp_path / "sweep.csv"
    option = ["-o", f"units={units}"] if units else []
    result = ndpkit(*MIXED, *option, "--out", str(out))
    assert result.returncode == 0, result.stderr
    with out.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["units"] for r in rows] == [units or "binary"] * 2
    for r in rows:
        expected = float(r["data_bytes"]) / mb / float(r["energy_j"])
        assert float(r["ee_mb_per_j"]) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(
    "flags",
    [
        ("--buffer", "1"),
        ("--cv", "0.2", "--seed", "3"),
        ("--host-mode", "stream"),
        ("--engine-power-off", "end"),
    ],
)
def test_a_sweep_takes_the_simulators_options_as_simulate_does(ndpkit, flags) -> None:
    """`sweep` had no --buffer, --cv, --seed, --host-mode or --engine-power-off (only the
    Python API had them): a point of the grid is the `simulate` run with the same flags."""
    swept = ndpkit(
        "sweep", "--platforms", "sfns", "--apps", "knn8", "--chunks", "4 MiB", "--size", "4 GiB",
        *flags, "-f", "json",
    )  # fmt: skip
    assert swept.returncode == 0, swept.stderr
    (row,) = json.loads(swept.stdout)["sweep"]
    alone = ndpkit(
        "simulate", "-p", "sfns", "-a", "knn8", "--chunk", "4 MiB", "--size", "4 GiB",
        *flags, "-f", "json",
    )  # fmt: skip
    assert alone.returncode == 0, alone.stderr
    simulated = json.loads(alone.stdout)["simulation"]
    assert row["time_s"] == simulated["time_s"]
    assert row["energy_j"] == simulated["energy_j"]
    plain = ndpkit(
        "sweep", "--platforms", "sfns", "--apps", "knn8", "--chunks", "4 MiB", "--size", "4 GiB",
        "-f", "json",
    )  # fmt: skip
    default = json.loads(plain.stdout)["sweep"][0]
    # the flags count: each changes the run's time or (powering off) its energy
    assert (default["time_s"], default["energy_j"]) != (row["time_s"], row["energy_j"])


@pytest.mark.parametrize(
    ("flags", "field"),
    [
        (("--cv", "0.7"), "--cv"),
        (("--host-mode", "later"), "--host-mode"),
        (("--buffer", "0"), "--buffer"),
    ],
)
def test_a_bad_simulator_option_stops_a_sweep_naming_its_flag(ndpkit, flags, field) -> None:
    result = ndpkit("sweep", "--platforms", "sfns", "--apps", "he", *flags)
    assert result.returncode == 2
    assert f"error: command line: {field}:" in result.stderr
    assert result.stdout == ""


def test_a_sweep_file_records_the_simulators_options_as_run(ndpkit, tmp_path: Path) -> None:
    """A sweep with --cv, --seed, --buffer or --host-mode wrote a file with nothing of them:
    a jittered sweep's rows could not be told from a steady one's. The host mode and power-off
    are as run: CNS's host split streams whatever --host-mode says (simulate's note), and it
    has no engines to power off, so its power-off is empty: it said "end", a policy no engine
    of it ran (and `simulate -p cns` refuses --engine-power-off)."""
    flags = ("--host-mode", "after", "--cv", "0.2", "--seed", "3", "--buffer", "4")
    for suffix in ("csv", "parquet"):
        out = tmp_path / f"sweep.{suffix}"
        result = ndpkit(*MIXED, *flags, "--out", str(out))
        assert result.returncode == 0, result.stderr
        if suffix == "csv":
            with out.open(encoding="utf-8", newline="") as f:
                rows = list(csv.DictReader(f))
        else:
            rows = [{k: str(v) for k, v in r.items()} for r in pq.read_table(out).to_pylist()]
        cns, rfns = rows
        empty = "" if suffix == "csv" else "None"  # a CSV's empty cell, Parquet's null
        assert (cns["host_mode"], cns["engine_power_off"]) == ("stream", empty)
        assert (rfns["host_mode"], rfns["engine_power_off"]) == ("after", "phase")
        for row in rows:
            assert (row["buffer_chunks"], row["service_cv"], row["seed"]) == ("4", "0.2", "3")
        # the note `simulate` gives, for the point it applies to only
        assert "note: --host-mode after not applied to cns he:" in result.stderr
        assert "rfns" not in result.stderr.split("not applied to")[1].split(":")[0]


def test_a_point_without_engines_records_no_power_off_whatever_was_asked(
    ndpkit, tmp_path: Path
) -> None:
    """CNS's row recorded `--engine-power-off done` (or auto's "end") for a run with no engine
    to power off; it is null, and a sweep of CNS alone still writes the column as text."""
    mixed = ndpkit(*MIXED, "--engine-power-off", "done", "-f", "json")
    assert mixed.returncode == 0, mixed.stderr
    cns, rfns = json.loads(mixed.stdout)["sweep"]
    assert (cns["engine_power_off"], rfns["engine_power_off"]) == (None, "done")
    out = tmp_path / "cns.parquet"
    only = ("sweep", "--platforms", "cns", "--apps", "he", "--chunks", "1 MiB", "--size", "1 GiB")
    alone = ndpkit(*only, "--out", str(out), "-f", "csv")
    assert alone.returncode == 0, alone.stderr
    table = pq.read_table(out)
    assert table.schema.field("engine_power_off").type == pa.string()
    assert table.column("engine_power_off").to_pylist() == [None]


def test_a_host_only_point_streams_with_host_mode_after_as_simulate_does(ndpkit) -> None:
    swept = ndpkit(*MIXED, "--host-mode", "after", "-f", "json")
    assert swept.returncode == 0, swept.stderr
    document = json.loads(swept.stdout)
    cns = document["sweep"][0]
    alone = ndpkit(
        "simulate", "-p", "cns", "-a", "he", "--chunk", "1 MiB", "--size", "1 GiB",
        "--host-mode", "after", "-f", "json",
    )  # fmt: skip
    simulated = json.loads(alone.stdout)["simulation"]
    assert (cns["time_s"], cns["host_mode"]) == (simulated["time_s"], simulated["host_mode"])
    (note,) = document["notes"]  # JSON carries the note, as simulate's document does
    assert note.startswith("--host-mode after not applied to cns he:")
    plain = json.loads(ndpkit(*MIXED, "-f", "json").stdout)
    assert plain["notes"] == []


def test_a_seed_past_int64_is_written_to_parquet(ndpkit, tmp_path: Path) -> None:
    """--seed takes [0, 2^64): 2^64 - 1 was an OverflowError traceback from pyarrow (Parquet
    inferred int64) after the whole sweep had run, and no file."""
    seed = 2**64 - 1
    out = tmp_path / "sweep.parquet"
    args = (*MIXED, "--cv", "0.1", "--seed", str(seed), "--out", str(out))
    result = ndpkit(*args)
    assert result.returncode == 0, result.stderr
    table = pq.read_table(out)
    assert table.column("seed").to_pylist() == [seed, seed]
    csv_out = tmp_path / "sweep.csv"
    assert ndpkit(*args[:-1], str(csv_out)).returncode == 0
    with csv_out.open(encoding="utf-8", newline="") as f:
        assert [row["seed"] for row in csv.DictReader(f)] == [str(seed)] * 2


def test_byte_counts_past_int64_are_written_to_parquet(ndpkit, tmp_path: Path) -> None:
    """1e20 B (--size '1e20 B') is past int64: pyarrow's inference ended the run in an
    OverflowError traceback; the column is float64 then, holding the size as given."""
    out = tmp_path / "sweep.parquet"
    args = ("sweep", "--platforms", "rfns", "--apps", "he", "--engines", "36")
    result = ndpkit(*args, "--chunks", "1e18 B", "--size", "1e20 B", "--out", str(out))
    assert result.returncode == 0, result.stderr
    (row,) = pq.read_table(out).to_pylist()
    assert (row["data_bytes"], row["chunk_bytes"]) == (1e20, 1e18)
