"""A flag that would change nothing for the platform or mode asked for is an error, not
silently ignored."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_errors import one_error_line

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (
            ("plan", "-p", "rfns", "-a", "he", "--power-budget", "3W"),
            "--power-budget: for in-storage",
        ),
        (("plan", "-p", "rans", "-a", "lc", "--policy", "power"), "--policy: for in-storage"),
        (("plan", "-p", "rfns", "-a", "he", "--time-model", "channels_off"), "--time-model"),
        (
            ("plan", "-p", "rfns", "-a", "he", "--tolerance", "0.5"),
            "error: command line: --tolerance: applies to the --optimal search; add --optimal",
        ),
        # 0 too: it was taken as not given, where 0.5 was refused.
        (("plan", "-p", "rfns", "-a", "he", "--tolerance", "0"), "add --optimal"),
        # not "add --optimal", which is then refused there too ("is for NDP servers")
        (
            ("plan", "-p", "risp-64ch", "-a", "sobel", "--tolerance", "0.1"),
            "--tolerance: applies to the --optimal search of NDP servers; in-storage plans use",
        ),
        (
            ("plan", "-p", "risp-64ch", "-a", "sobel", "--optimal", "--tolerance", "0.1"),
            "--tolerance: applies to the --optimal search of NDP servers",
        ),
        (("estimate", "-p", "cns", "-a", "he", "--split", "device"), "its only split is host"),
        # Each said as the other flag errors are, `command line: --flag: …`.
        (
            ("estimate", "-p", "rans", "-a", "lc", "--split", "foo"),
            "error: command line: --split: must be device or host, got 'foo'",
        ),
        (
            ("estimate", "-p", "rans", "-a", "lc", "--interface", "pcie3"),
            "error: command line: --interface: applies to in-storage platforms",
        ),
        (
            ("plan", "-p", "risp-64ch", "-a", "sobel", "--scheme", "mux"),
            "error: command line: --scheme: is for NDP servers",
        ),
        # The simulator's engine flags on a run without engines: a sweep's rows recorded
        # the policy as used.
        (
            ("simulate", "-p", "cns", "-a", "he", "--engine-power-off", "end"),
            "error: command line: --engine-power-off: changes nothing: platform 'cns' has no "
            "engines",
        ),
        (
            ("simulate", "-p", "rans", "-a", "he", "--plan", "host", "--engine-power-off", "done"),
            "error: command line: --engine-power-off: changes nothing: under --plan host no "
            "engine runs",
        ),
        # The engines' model conventions, as estimate refuses them there: they ran as
        # without them and were recorded as used.
        (
            ("simulate", "-p", "cns", "-a", "he", "--energy-form", "B"),
            "error: command line: --energy-form: changes nothing: platform 'cns' has no engines",
        ),
        (
            (
                "simulate",
                "-p",
                "rfns",
                "-a",
                "he",
                "--plan",
                "host",
                "--switch-power",
                "per_element",
            ),
            "error: command line: --switch-power: changes nothing: under --plan host no engine "
            "runs",
        ),
        (
            ("sweep", "--platforms", "cns", "--apps", "he", "--placement", "static_shards"),
            "error: command line: --placement: changes nothing: platform 'cns' has no engines",
        ),
        (
            ("sweep", "--platforms", "cns", "--apps", "he", "--engine-power-off", "phase"),
            "error: command line: --engine-power-off: changes nothing: platform 'cns' has no "
            "engines",
        ),
    ],
)
def test_a_flag_that_does_not_apply_is_an_error(
    ndpkit: Run, args: tuple[str, ...], fragment: str
) -> None:
    assert fragment in one_error_line(ndpkit(*args))


def test_without_split_a_platform_without_engines_estimates_the_host_split(ndpkit: Run) -> None:
    result = ndpkit("estimate", "-p", "cns", "-a", "he", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert '"split": "host"' in result.stdout


@pytest.mark.parametrize("command", ["generate", "import"])
@pytest.mark.parametrize("devices", ["0", "65537"])
def test_a_bad_device_count_names_the_flag(
    ndpkit: Run, command: str, devices: str, tmp_path: Path
) -> None:
    source = "lc" if command == "generate" else str(tmp_path / "missing.npy")
    args = ("data", command, source, "--devices", devices, "-o", str(tmp_path / "ds"))
    extra = ("--size", "1MiB") if command == "generate" else ("--app", "lc")
    line = one_error_line(ndpkit(*args, *extra))
    wanted = "--devices: must be from 1 to 65,536 (a platform's largest SSD count), got "
    assert f"{wanted}{int(devices):,}" in line
    assert not (tmp_path / "ds").exists()


def test_a_platform_without_engines_suggests_optimal_only_where_it_can_plan(
    ndpkit: Run, tmp_path: Path
) -> None:
    """`plan -p cns` said "try --optimal" for a profile without a host-only rate, and
    --optimal then said the profile cannot run without engines."""
    profiles = tmp_path / "p.toml"
    profiles.write_text(
        '[apps.scan]\ndata_size = "2 TB"\nalpha = 20\nengine = { arm = "12 GB/s" }\n'
    )
    line = one_error_line(ndpkit("plan", "-p", "cns", "-a", "scan", "--profiles", str(profiles)))
    assert "has no engines to plan; nor can profile 'scan' run without them" in line
    assert "try --optimal" in one_error_line(ndpkit("plan", "-p", "cns", "-a", "lc"))


@pytest.mark.parametrize("run", [("-p", "cns"), ("-p", "rfns", "--plan", "host")])
def test_buffer_applies_to_a_run_without_engines(ndpkit: Run, run: tuple[str, ...]) -> None:
    """Each SSD stages its reads in --buffer slots with or without engines: with jitter one
    slot makes a host split slower, where --buffer was refused as changing nothing."""
    args = ("simulate", *run, "-a", "lc", "--size", "256 MiB", "--cv", "0.5", "-f", "json")
    times = []
    for slots in ("1", "2"):
        result = ndpkit(*args, "--buffer", slots)
        assert result.returncode == 0, result.stderr
        times.append(json.loads(result.stdout)["simulation"]["time_s"])
    assert times[0] > times[1]


@pytest.mark.parametrize(
    "flags", [("--engine-power-off", "phase"), ("--placement", "static_shards")]
)
def test_engine_flags_apply_to_a_sweep_with_a_platform_that_has_engines(
    ndpkit: Run, flags: tuple[str, str]
) -> None:
    """CNS beside RFNS is the sweep's baseline: the engines' flags apply to the RFNS points."""
    args = ("sweep", "--platforms", "cns,rfns", "--apps", "he", "--engines", "36")
    result = ndpkit(*args, "--chunks", "4 MiB", *flags, "-f", "csv")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("args", "flag", "why"),
    [
        (
            ("estimate", "-p", "cns", "-a", "lc", "--placement", "static_shards"),
            "--placement",
            "cns",
        ),
        (("estimate", "-p", "cns", "-a", "knn2", "--energy-form", "B"), "--energy-form", "cns"),
        (("estimate", "-p", "cns", "-a", "he", "--wall-times", "printed"), "--wall-times", "cns"),
        (
            ("estimate", "-p", "rfns", "-a", "knn2", "--split", "host", "--switch-time", "ndp_cpu"),
            "--switch-time",
            "split",
        ),
        (
            (
                "estimate",
                "-p",
                "rans",
                "-a",
                "lc",
                "--split",
                "host",
                "-o",
                "switch_power=per_element",
            ),
            "--option switch_power",
            "split",
        ),
        (
            ("plan", "-p", "cns", "-a", "lc", "--optimal", "--eq-rounding", "rounded_2dp"),
            "--eq-rounding",
            "cns",
        ),
        (
            (
                "estimate",
                "-p",
                "risp-64ch",
                "-a",
                "sobel",
                "--split",
                "host",
                "-o",
                "ru_time=configured",
            ),
            "--option ru_time",
            "split",
        ),
        (
            (
                "estimate",
                "-p",
                "risp-64ch",
                "-a",
                "sobel",
                "--split",
                "host",
                "--cell-clock-mhz",
                "200",
            ),
            "--cell-clock-mhz",
            "split",
        ),
        (
            ("estimate", "-p", "risp-baseline", "-a", "sobel", "-o", "reconfiguration=include"),
            "--option reconfiguration",
            "risp-baseline",
        ),
    ],
)
def test_a_convention_of_engines_on_a_run_without_them_is_an_error(
    ndpkit: Run, args: tuple[str, ...], flag: str, why: str
) -> None:
    """These changed nothing and were accepted without a word (a host split reads no
    placement, energy form B, printed NDP time, switch layer or cell convention), where
    --mux-port-cap there is refused."""
    line = one_error_line(ndpkit(*args))
    assert f"error: command line: {flag}: changes nothing: " in line
    said = "under --split host" if why == "split" else f"platform '{why}' has no engines"
    assert said in line


@pytest.mark.parametrize("command", ["estimate", "plan"])
def test_the_host_cpu_energy_where_the_cells_compute_is_an_error(ndpkit: Run, command: str) -> None:
    """R3 prices the Baseline's host CPU; RISP's cells price none (E_RISP has no host CPU),
    so -o cpu_energy=instructions changed nothing on the device split or a channel plan."""
    line = one_error_line(
        ndpkit(command, "-p", "risp-64ch", "-a", "sobel", "-o", "cpu_energy=instructions")
    )
    assert "--option cpu_energy: changes nothing: the cells compute" in line


@pytest.mark.parametrize(
    "args",
    [
        (
            "estimate",
            "-p",
            "risp-64ch",
            "-a",
            "sobel",
            "--split",
            "host",
            "-o",
            "cpu_energy=instructions",
        ),
        ("estimate", "-p", "risp-baseline", "-a", "sobel", "-o", "cpu_energy=instructions"),
        # read by the host split, or by the device candidates of --optimal
        (
            "estimate",
            "-p",
            "risp-64ch",
            "-a",
            "sobel",
            "--split",
            "host",
            "-o",
            "attribution=all_active",
        ),
        ("estimate", "-p", "cns", "-a", "lc", "--units", "decimal"),
        ("plan", "-p", "rfns", "-a", "knn2", "--optimal", "--placement", "static_shards"),
        ("plan", "-p", "cns", "-a", "lc", "--optimal", "--improvement", "ee_gain"),
    ],
)
def test_a_convention_the_run_reads_is_taken(ndpkit: Run, args: tuple[str, ...]) -> None:
    result = ndpkit(*args, "--format", "json")
    assert result.returncode == 0, result.stderr


def test_a_bad_split_is_named_before_the_conventions_it_would_make_unread(ndpkit: Run) -> None:
    """`--split banana` on cns was reported as `--placement: changes nothing`."""
    args = (
        "estimate",
        "-p",
        "cns",
        "-a",
        "lc",
        "--split",
        "banana",
        "--placement",
        "static_shards",
    )
    line = one_error_line(ndpkit(*args))
    assert line == "error: command line: --split: must be device or host, got 'banana'"
