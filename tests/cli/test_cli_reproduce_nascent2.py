"""`ndpkit reproduce nascent2` through typer's CliRunner: JSON shape, flag checks, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ndpkit.cli import app

runner = CliRunner()


def test_json_e6() -> None:
    result = runner.invoke(app, ["reproduce", "nascent2", "--tables", "E6", "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert list(doc) == ["E6"]
    assert [r["devices"] for r in doc["E6"]] == list(range(1, 13))
    assert {"speedup_vs_fpga", "speedup_vs_cpu", "energy_vs_fpga", "energy_vs_cpu"} <= set(
        doc["E6"][0]
    )


def test_table_output() -> None:
    result = runner.invoke(app, ["reproduce", "nascent2", "--tables", "E6"])
    assert result.exit_code == 0
    assert "E6 (Fig. 16)" in result.stdout


def test_device_override_changes_the_model() -> None:
    args = ["reproduce", "nascent2", "--tables", "E6", "--format", "json"]
    base = json.loads(runner.invoke(app, args).stdout)["E6"][0]["nascent2_s"]
    slow = runner.invoke(app, [*args, "-o", "smartssd.s2f_bandwidth=1 GB/s"])
    assert slow.exit_code == 0
    assert json.loads(slow.stdout)["E6"][0]["nascent2_s"] > base


def test_other_papers_flags_are_errors() -> None:
    for args, flag in (
        (["reproduce", "nascent2", "--inputs", "binary"], "--inputs"),
        (["reproduce", "nascent2", "--energy-form", "B"], "--energy-form"),
        (["reproduce", "risp", "--full"], "--full"),
        (["reproduce", "rans-rfns", "--devices", "x.toml"], "--devices"),
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2
        assert flag in result.output


def test_bad_inputs_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "d.toml"
    bad.write_text('version = 1\n[smartssd]\nextends = "smartssd"\nd2f_bandwidth = 3\n')
    for args, needle in (
        (["--tables", "E9"], "unknown table 'E9'"),
        (["-o", "staging=tape"], "staging=tape"),
        (["-o", "smartssd.d2f_bandwidth=-1 GB/s", "--tables", "E6"], "d2f_bandwidth"),
        (["--devices", str(bad), "--tables", "E6"], "smartssd.d2f_bandwidth"),
        (["--devices", str(tmp_path / "none.toml"), "--tables", "E6"], "none.toml: file not found"),
        # was "'1.5' has no unit", though a whole number needs none
        (
            ["--tables", "E6", "--simulate", "-o", "des.chunk_bytes=1.5"],
            "des.chunk_bytes=1.5: '1.5' has no unit and is not written as a whole number of bytes",
        ),
    ):
        result = runner.invoke(app, ["reproduce", "nascent2", *args])
        assert result.exit_code == 2, args
        assert needle in result.output
        assert "Traceback" not in result.output


def test_device_file_replaces_one_device(tmp_path: Path) -> None:
    path = tmp_path / "d.toml"
    path.write_text(
        'version = 1\n[smartssd]\nextends = "smartssd"\n'
        'power = { value = "15 W", source = "[choice] test" }\n'
    )
    args = ["reproduce", "nascent2", "--tables", "E6", "--format", "json"]
    base = json.loads(runner.invoke(app, args).stdout)["E6"][0]
    hot = runner.invoke(app, [*args, "--devices", str(path)])
    assert hot.exit_code == 0, hot.output
    row = json.loads(hot.stdout)["E6"][0]
    assert row["energy_vs_fpga"] == pytest.approx(base["energy_vs_fpga"] / 2)


def test_sorter_width_below_two_is_a_device_error() -> None:
    # A 1-wide 𝒫-sorter has no comparator: the device loader refuses it before any run.
    for width in ("1", "6"):
        result = runner.invoke(
            app, ["reproduce", "nascent2", "--tables", "E6", "-o", f"smartssd.sorter_width={width}"]
        )
        assert result.exit_code == 2
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1, result.output
        assert "smartssd.sorter_width" in lines[0]
        assert f"must be a power of two ≥ 2, got {width}" in lines[0]


@pytest.mark.parametrize(
    "command",
    [
        ["reproduce", "nascent2", "--tables", "E6", "--devices"],
        ["simulate", "nascent2", "--device-file"],
    ],
)
def test_a_device_file_whose_devices_the_command_would_ignore_is_refused(
    tmp_path: Path, command: list[str]
) -> None:
    """A misspelt table (`[smartsd]`) or a file of no device used to run on the shipped
    devices, exit 0, the file's values silently unused. A device the command takes may
    still extend one of the file's own (a parent table is used)."""
    typo = tmp_path / "typo.toml"
    typo.write_text(
        'version = 1\n[smartsd]\nextends = "smartssd"\n'
        'power = { value = "15 W", source = "[choice] test" }\n'
    )
    result = runner.invoke(app, [*command, str(typo)])
    assert result.exit_code == 2, result.output
    assert f"{typo}: unknown device 'smartsd'" in result.output
    assert "did you mean 'smartssd'?" in result.output and "ignored" in result.output
    assert "Traceback" not in result.output
    empty = tmp_path / "empty.toml"
    empty.write_text("version = 1\n")
    result = runner.invoke(app, [*command, str(empty)])
    assert result.exit_code == 2 and f"{empty}: defines no device" in result.output


@pytest.mark.parametrize("tables", ["E1", "headline", "E5,E8"])
def test_simulate_without_e6_or_e7_is_refused(tables: str) -> None:
    """--simulate adds simulated columns to E6 and E7 only: with neither asked for it printed
    nothing simulated (for the headline, after simulating E6 and E7 for nothing), exit 0."""
    args = ["reproduce", "nascent2", "--tables", tables, "--simulate", "-o", "des.seed=1"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "--simulate: simulates E6 and E7 only" in result.output
    assert "Traceback" not in result.output


def test_simulate_with_e7_among_the_tables_is_taken() -> None:
    args = ["reproduce", "nascent2", "--tables", "E2,E7", "--simulate", "--format", "json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert list(doc) == ["E2", "E7"] and "sim_nascent2_s" in doc["E7"][0]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        # merge_ways is the k of merge_tree: under the default bitonic_dram it was ignored
        (["-o", "merge_ways=4"], "--option merge_ways=4: changes nothing: merge_ways is read"),
        # no model reads onchip_memory: the sort capacity is 𝒫·ℒ (Eq. 3)
        (["-o", "u250.onchip_memory=100 MB"], "u250.onchip_memory=100 MB: changes nothing"),
        (["-o", "smartssd.onchip_memory=20 MB"], "changes nothing: no model reads it"),
        # the CPU baseline is measured here: its device entries threads and clock are unread
        (["-o", "cpu.threads=1"], "--option cpu.threads=1: changes nothing: the CPU baseline"),
        (["-o", "cpu.clock=1 GHz"], "--option cpu.clock=1 GHz: changes nothing"),
        # only the simulation has a decoder pool
        (["-o", "smartssd.decoder_kernels=4"], "only the simulation reads it (--simulate)"),
        # the flag's --no- form is a rans-rfns convention too
        (["--no-mux-port-cap"], "--no-mux-port-cap: applies to `ndpkit reproduce rans-rfns`"),
    ],
)
def test_an_option_that_changes_nothing_is_refused(args: list[str], needle: str) -> None:
    """Each of these ran, exit 0, with every printed value as without it."""
    result = runner.invoke(app, ["reproduce", "nascent2", "--tables", "E6", *args])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: command line: "), result.output
    assert needle in lines[0]


def test_options_read_in_their_context_are_taken() -> None:
    """merge_ways with merge_tree, decoder_kernels with --simulate: both are read."""
    base = ["reproduce", "nascent2", "--tables", "E6", "--format", "json"]
    tree = runner.invoke(app, [*base, "-o", "dram_merge=merge_tree", "-o", "merge_ways=4"])
    assert tree.exit_code == 0, tree.output
    sim = runner.invoke(app, [*base, "--simulate", "-o", "smartssd.decoder_kernels=2"])
    assert sim.exit_code == 0, sim.output
    assert "sim_nascent2_s" in json.loads(sim.stdout)["E6"][0]
