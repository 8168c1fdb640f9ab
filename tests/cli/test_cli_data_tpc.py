"""`ndpkit data tpch` and `ndpkit data tpcc` end to end: files, summary, errors as exit 2."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from cli_errors import one_error_line
from typer.testing import CliRunner

from ndpkit.cli.commands import app


def test_tpch_writes_tables_and_a_summary(ndpkit, tmp_path: Path) -> None:
    out = tmp_path / "tpch"
    result = ndpkit("data", "tpch", "--sf", "0.01", "--tables", "nation,orders", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "generating TPC-H nation, orders at SF 0.01" in result.stderr  # progress on stderr
    assert "orders" in result.stdout and "15000" in result.stdout
    assert sorted(os.listdir(out)) == ["nation.parquet", "orders.parquet"]
    again = ndpkit("data", "tpch", "--sf", "0.01", "--tables", "nation", "--out", str(out))
    assert "already exists" in one_error_line(again)
    doc = json.loads(
        ndpkit(
            "data", "tpch", "--sf", "0.01", "--tables", "nation", "--out", str(out),
            "--overwrite", "-f", "json",
        ).stdout
    )  # fmt: skip
    assert doc["sf"] == 0.01
    assert doc["tables"][0]["rows"] == 25
    assert doc["tables"][0]["file_bytes"] == (out / "nation.parquet").stat().st_size


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--sf", "0"), "error: command line: --sf: must be a finite number > 0"),
        (("--sf", "-2"), "error: command line: --sf: must be a finite number > 0"),
        (
            ("--sf", "1", "--tables", "lineitem,items"),
            "error: command line: --tables: unknown TPC-H table 'items'",
        ),
        (
            ("--sf", "1", "--tables", "lineitem,,orders"),
            "error: command line: --tables: 'lineitem,,orders' has an empty value",
        ),
        (("--sf", "1", "--tables", ","), "error: command line: --tables: names no table"),
        (("--sf", "1", "--tables", ""), "error: command line: --tables: names no table"),
    ],
)
def test_tpch_bad_input_names_the_flag(
    ndpkit, tmp_path: Path, args: tuple[str, ...], expected: str
) -> None:
    line = one_error_line(ndpkit("data", "tpch", *args, "--out", str(tmp_path / "x")))
    assert expected in line
    assert not (tmp_path / "x").exists()


def test_tpcc_writes_order_line(ndpkit, tmp_path: Path) -> None:
    args = ("data", "tpcc", "--sf", "0.1", "--out", str(tmp_path), "--seed", "3", "-f", "json")
    result = ndpkit(*args)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    table = pq.read_table(tmp_path / "order_line.parquet")
    assert doc["tables"][0]["table"] == "order_line"
    assert doc["tables"][0]["rows"] == table.num_rows
    assert table.num_rows == pytest.approx(30_000, rel=0.03)
    assert os.listdir(tmp_path) == ["order_line.parquet"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--sf", "0"), "error: command line: --sf: must be a finite number > 0"),
        (("--sf", "1", "--seed", "-1"), "error: command line: --seed: must be ≥ 0"),
    ],
)
def test_tpcc_bad_input_names_the_flag(
    ndpkit, tmp_path: Path, args: tuple[str, ...], expected: str
) -> None:
    assert expected in one_error_line(ndpkit("data", "tpcc", *args, "--out", str(tmp_path)))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(("command", "sf"), [("tpch", "1e9"), ("tpch", "1e-9"), ("tpcc", "5000")])
def test_a_scale_factor_out_of_range_is_refused_before_generating(
    ndpkit, tmp_path: Path, command: str, sf: str
) -> None:
    result = ndpkit("data", command, "--sf", sf, "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert "--sf: must be from 0.001 to 1000" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_tpcc_into_a_file_is_refused(ndpkit, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("keep")
    result = ndpkit("data", "tpcc", "--sf", "0.001", "--out", str(tmp_path / "file"))
    assert result.returncode == 2 and "exists and is not a directory" in result.stderr
    assert (tmp_path / "file").read_text() == "keep"


def test_tpch_into_a_file_is_refused(ndpkit, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("keep")
    result = ndpkit("data", "tpch", "--sf", "0.01", "--out", str(tmp_path / "file"))
    assert result.returncode == 2 and "exists and is not a directory" in result.stderr
    assert (tmp_path / "file").read_text() == "keep"


@pytest.mark.parametrize("command", ["tpch", "tpcc"])
@pytest.mark.parametrize("below", ["", "sub"])
def test_out_through_a_link_to_nothing_is_refused_naming_the_link(
    ndpkit, tmp_path: Path, command: str, below: str
) -> None:
    """A symbolic link to a missing directory at --out (or above it): `data tpcc` ended in
    a FileExistsError traceback (exit 1) and `data tpch` said "cannot create the directory
    (File exists)"; both now name the link and where it points, before generating."""
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "gone")
    out = link / below if below else link
    line = one_error_line(ndpkit("data", command, "--sf", "0.01", "--out", str(out)))
    flag = "" if below else "--out: "  # the flag where the link is --out itself
    assert (
        f"{link}: {flag}is a symbolic link to '{tmp_path / 'gone'}', which does not exist" in line
    )
    assert os.listdir(tmp_path) == ["link"] and not (tmp_path / "gone").exists()


def test_tpch_into_a_directory_it_may_not_write_says_so(ndpkit, read_only_dir: Path) -> None:
    """The directory exists: "cannot create the directory" was said of it when the hidden
    staging directory inside it could not be made."""
    line = one_error_line(ndpkit("data", "tpch", "--sf", "0.01", "--out", str(read_only_dir)))
    assert f"{read_only_dir}: --out: cannot write into the directory (" in line
    assert os.listdir(read_only_dir) == []


@pytest.mark.parametrize("command", ["tpch", "tpcc"])
def test_the_help_gives_the_sf_range_and_what_overwrite_replaces(ndpkit, command: str) -> None:
    """The help said "> 0" of --sf (0.0001 and 2000 are refused) and "Replace an existing
    data set at --out" of --overwrite, which replaces table files only."""
    text = " ".join(ndpkit("data", command, "-h").stdout.split())
    assert "Scale factor, from 0.001 to 1000" in text
    assert "Replace this run's table files in --out if they exist (other files stay)" in text
    assert "data set" not in text


@pytest.mark.parametrize(
    ("command", "left"), [("tpch", ".tpch-k1ll3d00"), ("tpcc", ".order_line.parquet.tmp-99999")]
)
def test_what_a_killed_run_left_in_out_is_named_on_stderr(
    ndpkit, tmp_path: Path, command: str, left: str
) -> None:
    """A run killed with SIGKILL leaves its staging directory (tpch) or temporary file (tpcc),
    as big as its tables, hidden in OUT; later runs said nothing of it."""
    if command == "tpch":
        (tmp_path / left).mkdir()
        (tmp_path / left / "lineitem.parquet").write_bytes(b"half")
    else:
        (tmp_path / left).write_bytes(b"half")
    args = ("--tables", "nation") if command == "tpch" else ()
    result = ndpkit("data", command, "--sf", "0.01", *args, "--out", str(tmp_path), "-f", "json")
    assert result.returncode == 0, result.stderr
    assert f"note: {tmp_path / left} was left by another `ndpkit data` run" in result.stderr
    assert (tmp_path / left).exists()  # named, not removed: a run may still be going
    assert json.loads(result.stdout)["tables"]  # stdout stays the summary
    clean = tmp_path / "clean"
    again = ndpkit("data", command, "--sf", "0.01", *args, "--out", str(clean))
    assert again.returncode == 0 and "note:" not in again.stderr  # nothing left, nothing said


def test_an_old_table_a_killed_overwrite_kept_is_named_on_stderr(ndpkit, tmp_path: Path) -> None:
    """--overwrite keeps each old table as OUT/.NAME.parquet.old-PID until all are
    replaced; a run killed with SIGKILL then left it (as big as the table), unmentioned."""
    left = tmp_path / ".customer.parquet.old-4242"
    left.write_bytes(b"old table")
    result = ndpkit("data", "tpch", "--sf", "0.01", "--tables", "nation", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert f"note: {left} was left by another `ndpkit data` run" in result.stderr
    assert left.exists()


@pytest.mark.parametrize(
    ("command", "left", "table"),
    [("tpch", ".tpch-k1ll3d00", "nation"), ("tpcc", ".order_line.parquet.tmp-99999", "order_line")],
)
def test_what_a_killed_run_left_is_named_when_this_run_fails_too(
    ndpkit, tmp_path: Path, command: str, left: str, table: str
) -> None:
    """Leftovers were named only after a run that succeeded; one that failed (for want of
    the space they hold, say) said nothing of them."""
    (tmp_path / left).mkdir() if command == "tpch" else (tmp_path / left).write_bytes(b"half")
    (tmp_path / f"{table}.parquet").write_bytes(b"mine")  # refused without --overwrite
    args = ("--tables", "nation") if command == "tpch" else ()
    result = ndpkit("data", command, "--sf", "0.01", *args, "--out", str(tmp_path))
    assert result.returncode == 2, result.stderr
    assert f"note: {tmp_path / left} was left by another `ndpkit data` run" in result.stderr


def test_the_bad_input_examples_in_docs_tpc_md_print_what_it_says(ndpkit, tmp_path: Path) -> None:
    """docs/tpc.md's `$ ndpkit data tpch …` examples that fail print the error line it shows
    (it showed them without the `command line:` they begin with)."""
    doc = (Path(__file__).parents[2] / "docs" / "tpc.md").read_text(encoding="utf-8")
    examples = re.findall(r"^\$ ndpkit (data tpch .*)\n(error: .*)$", doc, flags=re.MULTILINE)
    assert len(examples) == 3, examples
    for command, said in examples:
        args = [tmp_path / "x" if a == "x" else a for a in command.split()]
        assert one_error_line(ndpkit(*map(str, args))) == said


@pytest.mark.parametrize("command", ["tpch", "tpcc"])
def test_the_scale_factor_is_said_in_full(ndpkit, tmp_path: Path, command: str) -> None:
    """The progress line and the summary's title give the SF the tables were made at, not
    its six digits (SF 0.0012345678 was said as 0.00123457); a short SF stays short."""
    for sf in ("0.0012345678", "0.002"):
        args = ["data", command, "--sf", sf, "--out", str(tmp_path / sf)]
        result = ndpkit(*args, *(["--tables", "nation"] if command == "tpch" else []))
        assert result.returncode == 0, result.stderr
        assert f"Tables written at SF {sf}\n" in result.stdout
        if command == "tpch":
            assert f"generating TPC-H nation at SF {sf} with" in result.stderr


def test_tpch_tables_take_a_trailing_comma_as_every_list_flag_does(ndpkit, tmp_path: Path) -> None:
    """`--tables nation,` was refused here ("an empty table name") and accepted by
    `reproduce --tables` and every other list flag (`comma_list`)."""
    result = ndpkit("data", "tpch", "--sf", "0.01", "--tables", "nation,", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.glob("*.parquet")) == ["nation.parquet"]


@pytest.mark.parametrize("command", ["tpch", "tpcc"])
def test_tables_that_cannot_fit_on_the_disk_are_refused_naming_sf(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """In-process, under a disk with 1 MB free: SF 500 started tpchgen-cli on a disk with a
    quarter of the space it needed."""
    usage = shutil.disk_usage("/")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: type(usage)(usage.total, 0, 10**6))
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["data", command, "--sf", "10", "--out", str(out)])
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: command line: --sf: SF 10 needs at least ")
    assert f"but {str(tmp_path)!r} has 1 MB free" in line
    assert list(tmp_path.iterdir()) == []
