"""`ndpkit simulate` and `ndpkit sweep` input checks, run in-process through typer's CliRunner
(so that they test this checkout's code, not the installed command's): what is refused
exits 2 with one `error:` line naming the flag and writes nothing."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import typer.main
from typer.testing import CliRunner

import ndpkit
from ndpkit.cli.commands import app
from ndpkit.model import Options

runner = CliRunner()


def _run(*args: str) -> Any:
    return runner.invoke(app, list(args), terminal_width=200)


def _error(*args: str) -> str:
    """The one `error: …` line of a refused run."""
    result = _run(*args)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return str(lines[0])


NASCENT2 = ("simulate", "nascent2", "--devices", "1", "--read-only-cpu")


@pytest.mark.parametrize(
    ("table", "sf", "hint"),
    [
        # 0.6 of a row was rounded up to one row and run as "SF 1e-07, 1 rows".
        ("lineitem", "1e-7", "SF 1.7e-07 gives one"),
        ("lineitem", "8.4e-8", "SF 1.7e-07 gives one"),
        # 1/30,000 is 3.33e-05: a hint of 3.3e-05 would itself be refused.
        ("order_line", "3.3e-5", "SF 3.4e-05 gives one"),
    ],
)
def test_an_sf_below_one_row_is_refused_and_the_hint_runs(table: str, sf: str, hint: str) -> None:
    line = _error(*NASCENT2, "--table", table, "--sf", sf)
    assert line.startswith(f"error: command line: --sf: SF {float(sf):g} gives no")
    assert line.endswith(f"({hint})")
    least = hint.split()[1]
    result = _run(*NASCENT2, "--table", table, "--sf", least, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["nascent2_simulation"]["rows_per_ssd"] >= 1


@pytest.mark.parametrize(
    ("table", "sf"), [("lineitem", "1e300"), ("lineitem", "1e308"), ("order_line", "1e308")]
)
def test_an_sf_past_64_bit_row_counts_is_refused_and_the_hint_is_not(table: str, sf: str) -> None:
    """SF 1e300 was an OverflowError traceback (the table's bytes are inf), SF 1e308 one
    from its row count; the hint's SF passes that check (the run's size check refuses it)."""
    line = _error(*NASCENT2, "--table", table, "--sf", sf)
    assert line.startswith(f"error: command line: --sf: SF {float(sf):g} gives 2^64 ")
    hint = line.rsplit("(SF ", 1)[1].split()[0]
    assert "--sf:" not in _error(*NASCENT2, "--table", table, "--sf", hint)


SWEEP = (
    "sweep", "--platforms", "rfns", "--apps", "he", "--engines", "36",
    "--chunks", "1 MiB", "--size", "1 GiB",
)  # fmt: skip


def test_sweep_out_takes_its_suffix_in_any_case(tmp_path: Path) -> None:
    """X.CSV was refused as "must end in .csv or .parquet"."""
    for name in ("X.CSV", "X.Parquet"):
        out = tmp_path / name
        result = _run(*SWEEP, "--out", str(out), "--format", "json")
        assert result.exit_code == 0, result.stderr
        rows = json.loads(result.stdout)["sweep"]
        if name.endswith("CSV"):
            with out.open(encoding="utf-8", newline="") as f:
                assert [r["platform"] for r in csv.DictReader(f)] == ["rfns"] * len(rows)
        else:
            assert pq.read_table(out).column("platform").to_pylist() == ["rfns"] * len(rows)


def test_sweep_out_names_a_directory_as_one(tmp_path: Path) -> None:
    """`--out DIR/` was told "got 'DIR'", as if its suffix were the fault."""
    line = _error(*SWEEP, "--out", f"{tmp_path}/")
    assert line.endswith("is a directory; give a file name"), line
    assert "--out" in line
    assert "must end in" in _error(*SWEEP, "--out", str(tmp_path / "x.txt"))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # Accepted, and the JSON was byte-identical with and without them.
        (("simulate", "-p", "rans", "-a", "he", "-o", "rounding=paper"), "savings"),
        (("simulate", "-p", "rans", "-a", "he", "-o", "improvement=ee_gain"), "savings"),
        (
            ("simulate", "-p", "rans", "-a", "he", "-o", "eq_rounding=rounded_2dp"),
            "with --plan planned only",
        ),
        (
            ("sweep", "--platforms", "rans", "--apps", "he", "-o", "eq_rounding=rounded_2dp"),
            "which a sweep does not run",
        ),
        (("sweep", "--platforms", "rans", "--apps", "he", "-o", "rounding=paper"), "savings"),
        # Nothing reads the CPU baseline's seed or threads when it is not measured.
        ((*NASCENT2, "-o", "seed=3"), "the simulation's seed is des.seed"),
        ((*NASCENT2, "-o", "threads=2"), "--read-only-cpu does not measure"),
    ],
)
def test_options_the_simulator_does_not_read_are_refused(
    args: tuple[str, ...], message: str
) -> None:
    line = _error(*args)
    assert f"--option {args[-1].partition('=')[0]}" in line
    assert message in line


def test_the_options_it_reads_still_run() -> None:
    planned = ("simulate", "-p", "rans", "-a", "he", "--plan", "planned", "-f", "json")
    assert _run(*planned, "-o", "eq_rounding=rounded_2dp").exit_code == 0
    measured = ("simulate", "nascent2", "--devices", "1", "--sf", "0.001", "-f", "json")
    result = _run(*measured, "-o", "seed=3", "-o", "threads=1", "-o", "des.seed=4")
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # 12 × 60,010 chunks × 1,024 shuffle pieces on the U250: 737 M pieces the estimate
        # of 32 events per chunk did not count (SF 10, a tenth of it, ran 12 s here).
        (
            ("--sf", "100", "--devices", "12", "-o", "u250.shuffle_kernels=1024"),
            "61,453,312 shuffle pieces",
        ),
        # 100,000 SSDs of one row: 3.2 M events, but 26 s and 1.3 GB of per-SSD JSON.
        (("--sf", "1.7e-7", "--devices", "100000"), "100,000 SSDs × 1 chunks"),
    ],
)
def test_runs_of_half_a_minute_or_more_are_refused_before_they_start(
    args: tuple[str, ...], message: str
) -> None:
    line = _error("simulate", "nascent2", "--read-only-cpu", *args)
    assert "--devices/--sf/-o des.chunk_bytes: would simulate about" in line
    assert message in line


def test_kernel_counts_past_any_fpga_are_refused() -> None:
    line = _error(*NASCENT2, "--sf", "1e-4", "-o", "smartssd.shuffle_kernels=10000000")
    assert line.endswith(
        "--option smartssd.shuffle_kernels=10000000: must be at most 1,024, got 10,000,000"
    )


def test_the_read_only_baselines_note_is_given_with_csv_too() -> None:
    """A CSV row has no place for it: it went with the table only, so a CSV's CPU times read
    as measured sorts."""
    result = _run(*NASCENT2, "--sf", "0.001", "-f", "csv")
    assert result.exit_code == 0, result.stderr
    assert "note: the CPU baseline reads only (--read-only-cpu)" in result.stderr
    assert "note:" not in result.stdout


SHIPPED_PROFILES = Path(ndpkit.__file__).parent / "profiles" / "rans-rfns.toml"


@pytest.mark.parametrize(
    ("args", "flag", "reads"),
    [
        (("simulate", "-p", "@in@", "-a", "he", "--trace", "@in@"), "--trace", "--platform"),
        (
            ("simulate", "-p", "rans", "-a", "he", "--profiles", "@in@", "--trace", "@link@"),
            "--trace",
            "--profiles",
        ),
        (
            (
                "sweep",
                "--platforms",
                "rans,@in@",
                "--apps",
                "he",
                "--engines",
                "18",
                "--out",
                "@in@",
            ),
            "--out",
            "--platforms",
        ),
    ],
    ids=["trace-onto-platform", "trace-onto-profiles-by-a-link", "sweep-out-onto-platform"],
)
def test_an_output_onto_a_file_the_command_reads_is_refused(
    tmp_path: Path, args: tuple[str, ...], flag: str, reads: str
) -> None:
    """`simulate -p my.toml --trace my.toml` replaced the platform file with the trace (the
    next run: "malformed TOML"); a profile set measured by `ndpkit evaluate` would go the
    same way. Refused before the run, the file untouched. (A platform file is read as TOML
    whatever its suffix when its name has a directory in it, so a sweep's .csv can be one.)"""
    if reads == "--profiles":
        text = SHIPPED_PROFILES.read_text(encoding="utf-8")
        given = tmp_path / "profiles.toml"
    else:
        text = 'extends = "rans"\nname = "mine"\n'
        given = tmp_path / ("mine.csv" if args[0] == "sweep" else "mine.toml")
    given.write_text(text, encoding="utf-8")
    (tmp_path / "link.json").symlink_to(given)
    link = tmp_path / "link.json"
    line = _error(*(a.replace("@in@", str(given)).replace("@link@", str(link)) for a in args))
    assert line.startswith(f"error: command line: {flag}: "), line
    assert f"is the file {reads} reads, and the output would replace it" in line
    assert given.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("command", ["simulate", "sweep"])
def test_an_output_onto_a_file_the_platform_extends_is_refused(
    tmp_path: Path, command: str
) -> None:
    """A platform file is read with the files up its `extends` chain: `simulate -p
    child.toml --trace parent.toml` replaced the parent with the trace, and the child no
    longer loaded ("parent.toml: malformed TOML")."""
    parent = tmp_path / "parent.csv"  # "./parent.csv", with a directory, is a platform file
    text = 'extends = "rans"\nname = "parent"\n'
    parent.write_text(text, encoding="utf-8")
    child = tmp_path / "child.toml"
    child.write_text('extends = "./parent.csv"\nname = "child"\n', encoding="utf-8")
    if command == "simulate":
        args = ("simulate", "-p", str(child), "-a", "he", "--trace", str(parent))
    else:
        args = ("sweep", "--platforms", f"rans,{child}", "--apps", "he", "--engines", "18")
        args = (*args, "--out", str(parent))
    flag = "--trace" if command == "simulate" else "--out"
    line = _error(*args)
    assert line.startswith(f"error: command line: {flag}: "), line
    assert "extends, and the output would replace it" in line
    assert parent.read_text(encoding="utf-8") == text


def test_a_plan_for_a_platform_without_engines_blames_the_flag() -> None:
    """`--plan planned` on CNS said "error: --plan planned: platform 'cns' has no engines":
    no source, and a field that was a flag and its value, unlike every other refused flag."""
    line = _error("simulate", "-p", "cns", "-a", "he", "--plan", "planned")
    assert line.startswith("error: command line: --plan: platform 'cns' has no engines to plan")
    # The way out it names runs.
    way_out = _run("simulate", "-p", "cns", "-a", "he", "--plan", "host", "--size", "1 MiB")
    assert way_out.exit_code == 0, way_out.stderr


_SIMULATE = ("simulate", "-p", "rans", "-a", "he", "--size", "1 GiB")
_SWEEP = ("sweep", "--platforms", "rans", "--apps", "he", "--engines", "36", "--size", "1 GiB")


@pytest.mark.parametrize("command", [_SIMULATE, _SWEEP], ids=["simulate", "sweep"])
def test_the_options_o_help_lists_are_the_ones_it_takes(command: tuple[str, ...]) -> None:
    """`-o`'s help said "e.g. -o ru_time=configured; see docs/reproducing-risp.md", options
    the simulator refuses: each model option it lists runs, and each other one is refused
    (eq_rounding, listed for --plan planned, with it)."""
    cmd = getattr(typer.main.get_command(app), "commands", {})[command[0]]
    (param,) = [p for p in cmd.params if p.name == "option"]
    help_text = str(getattr(param, "help", ""))
    assert "reproducing-risp.md (" not in help_text and "docs/simulator.md" in help_text
    for name, default in Options().as_dict().items():
        given = ("-o", f"{name}={str(default).lower() if default is False else default}")
        listed = re.search(rf"\b{name}\b", help_text) is not None
        if name == "eq_rounding" and "eq_rounding with --plan planned" in help_text:
            assert _run(*command, "--plan", "planned", *given).exit_code == 0
        result = _run(*command, *given)
        assert (result.exit_code == 0) == (listed and name != "eq_rounding"), (name, result)
