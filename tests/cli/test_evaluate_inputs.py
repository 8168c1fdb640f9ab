"""`ndpkit evaluate`'s inputs through the installed command: shards checked against their
CRC-32s, apps against a data set's record layout, every numeric flag, and a stderr that holds
nothing but the one error line."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_errors import one_error_line
from typer.testing import CliRunner

from ndpkit import evaluate as ev
from ndpkit.cli.commands import app
from ndpkit.runtime import Dataset, generate_dataset
from ndpkit.runtime.transfer import available_memory_bytes

Run = Callable[..., subprocess.CompletedProcess[str]]


def _lc_data(tmp_path: Path, size_bytes: int = 2 << 20) -> Dataset:
    return generate_dataset("lc", size_bytes, 4, tmp_path / "lc", seed=3, shard_bytes=300_000)


def _error(result: subprocess.CompletedProcess[str]) -> str:
    """The one error line, which must also be stderr's first (no empty line before it)."""
    line = one_error_line(result)
    assert result.stderr.startswith("error: "), repr(result.stderr)
    return line


def test_a_changed_shard_is_an_error_naming_it(ndpkit: Run, tmp_path: Path) -> None:
    """64 bytes overwritten in place (same size; still valid floats, so the kernel and its
    reference agree on the changed data): only the CRC-32 can tell."""
    data = _lc_data(tmp_path)
    victim = data.shard_path(data.shards_of(1)[0])
    size_bytes = victim.stat().st_size
    with victim.open("r+b") as f:
        f.seek(size_bytes // 2)
        f.write(bytes(range(64)))
    assert victim.stat().st_size == size_bytes
    line = _error(ndpkit("evaluate", "lc", "--data", str(data.path), "--platforms", "cns"))
    assert line.startswith(f"error: {victim}: CRC-32 is ") and line.endswith("corrupt")
    # The documented opt-out: the change then goes unnoticed.
    skipped = ndpkit(
        "evaluate",
        "--data",
        str(data.path),
        "--no-verify-shards",
        "--platforms",
        "cns",
        "-f",
        "json",
    )
    assert skipped.returncode == 0, skipped.stderr
    assert json.loads(skipped.stdout)["apps"][0]["verified"] is True


def test_an_app_with_the_data_sets_layout_runs_on_it(ndpkit: Run, tmp_path: Path) -> None:
    """k-NN_8 reads LC's 8 float32 features; any --workers count is capped at the devices."""
    data = _lc_data(tmp_path)
    result = ndpkit(
        "evaluate", "knn8", "--data", str(data.path), "--workers", str(10**21),
        "--platforms", "cns", "-f", "json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (run,) = json.loads(result.stdout)["apps"]
    assert run["app"] == "knn8" and run["verified"] is True
    assert run["verification"]["method"] == "merged top-k"
    assert [o["app"] for o in run["other_splits"]] == ["knn8-topk"]


def test_a_group_on_a_data_set_runs_its_members_that_read_it(ndpkit: Run, tmp_path: Path) -> None:
    """`knn` is knn2, knn6 and knn8; on 8-feature data only knn8 can run (it used to fail
    on knn2, the group's first member: the evaluate audit)."""
    data = _lc_data(tmp_path)
    args = ("--data", str(data.path), "--platforms", "cns", "-f", "json")
    result = ndpkit("evaluate", "knn", *args)
    assert result.returncode == 0, result.stderr
    assert [run["app"] for run in json.loads(result.stdout)["apps"]] == ["knn8"]


def test_an_app_of_another_layout_is_an_error_naming_both(ndpkit: Run, tmp_path: Path) -> None:
    data = _lc_data(tmp_path)
    line = _error(ndpkit("evaluate", "knn2", "--data", str(data.path)))
    assert line.startswith(f"error: {data.path}: holds 'lc' data")
    assert "float32 records of shape (8,)" in line
    assert "app 'knn2' needs float32 records of shape (2,)" in line
    images = generate_dataset("he", 2 << 20, 2, tmp_path / "he", seed=3)
    line = _error(ndpkit("evaluate", "knn", "--data", str(images.path)))  # no member fits
    assert "app 'knn2' needs float32 records of shape (2,)" in line


def test_a_data_set_under_a_mib_is_measured_with_a_warning(ndpkit: Run, tmp_path: Path) -> None:
    data = _lc_data(tmp_path, 256 << 10)
    result = ndpkit("evaluate", "--data", str(data.path), "--platforms", "cns", "-f", "json")
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith(f"warning: {data.path} holds only 256 KiB")
    (warning,) = json.loads(result.stdout)["warnings"]  # a reader of the JSON sees it too
    assert warning.startswith(f"{data.path} holds only 256 KiB")


def test_a_data_set_just_under_a_mib_is_not_said_to_hold_one(ndpkit: Run, tmp_path: Path) -> None:
    """32 bytes short of 1 MiB rounds to "1024 KiB", which is not below the 1 MiB the
    warning says it is below; nor is "2 MiB" less than a --size of 2 MiB: the exact bytes
    are given instead."""
    data = _lc_data(tmp_path, (1 << 20) - 32)
    args = ("evaluate", "--data", str(data.path), "--platforms", "cns", "-f", "json")
    result = ndpkit(*args)
    assert result.returncode == 0, result.stderr
    (warning,) = json.loads(result.stdout)["warnings"]
    assert warning.startswith(f"{data.path} holds only 1,048,544 bytes: "), warning
    assert "below 1 MiB" in warning
    # So is one just short of the --size asked for ("all of its 2 MiB" of a 2 MiB --size).
    short = _lc_data(tmp_path / "short", (2 << 20) - 32)
    asked = ndpkit("evaluate", "--data", str(short.path), "--size", "2 MiB", *args[3:])
    assert asked.returncode == 0, asked.stderr
    (warning,) = json.loads(asked.stdout)["warnings"]
    assert warning.endswith("holds: all of its 2,097,120 bytes is profiled"), warning


def test_a_size_and_a_data_set_that_round_alike_are_given_to_the_byte(
    ndpkit: Run, tmp_path: Path
) -> None:
    """A --size of 3 MB and a data set 992 bytes short of it both round to "2.86 MiB":
    compared with the exact --size rather than its rounded figure, the data set's size was
    kept rounded, and the warning read "--size 2.86 MiB is more than DIR holds: all of its
    2.86 MiB is profiled". Both are given to the byte."""
    data = _lc_data(tmp_path, 3_000_000 - 992)
    args = ("--platforms", "cns", "-f", "json")
    result = ndpkit("evaluate", "--data", str(data.path), "--size", "3 MB", *args)
    assert result.returncode == 0, result.stderr
    (warning,) = json.loads(result.stdout)["warnings"]
    assert warning == (
        f"--size 3,000,000 bytes is more than {data.path} holds: all of its 2,999,008 bytes "
        "is profiled"
    )


def test_a_size_beyond_the_data_set_is_said(ndpkit: Run, tmp_path: Path) -> None:
    data = _lc_data(tmp_path)
    args = ("evaluate", "--data", str(data.path), "--platforms", "cns", "-f", "json")
    asked = ndpkit(*args, "--size", "1 GiB")
    assert asked.returncode == 0, asked.stderr
    (warning,) = json.loads(asked.stdout)["warnings"]
    assert warning.startswith("--size 1 GiB is more than") and "all of its" in warning
    default = ndpkit(*args)  # the default size says nothing
    assert default.returncode == 0 and json.loads(default.stdout)["warnings"] == []


def test_workers_below_one_with_data(ndpkit: Run, tmp_path: Path) -> None:
    data = _lc_data(tmp_path)
    assert "--workers: must be ≥ 1, got 0" in _error(
        ndpkit("evaluate", "--data", str(data.path), "--workers", "0")
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--seed", "-5"), "--seed: must be ≥ 0, got -5"),
        (("--workers", "2"), "--workers: only applies to --data"),
        (("--no-verify-shards",), "--no-verify-shards: only applies to --data"),
        (("--stall-timeout", "2 min"), "--stall-timeout: only applies to --data"),
        (("--stall-timeout", "0 s"), "--stall-timeout: must be a time > 0 (e.g. '2 min')"),
        (("--stall-timeout", "-3 s"), "--stall-timeout: must be a time > 0"),
        (("--stall-timeout", "5"), "--stall-timeout: '5' has no unit"),
        (("--stall-timeout", "5 parsecs"), "'5 parsecs' is not a time"),
        (("--size", "0B"), "--size: must be at least 1 MiB, got '0B'"),  # evaluate's least
        (("--size", "-1MiB"), "--size: must be at least 1 MiB, got '-1MiB'"),
        (("--size", "1B"), "--size: '1B' is too small to measure"),
        (("--size", "1023KiB"), "give at least 1 MiB"),
        (("--size", "1e400B"), "'1e400B'"),
        (("--size", "1PiB"), "--size: 1 PiB is held in memory and lc needs about 8 PiB for it"),
        (("--model-size", "0B"), "--model-size: must be at least 1 byte"),
        (("--model-size", "1e400B"), "'1e400B'"),
        (("--model-size", "2EiB"), "--model-size: must be at most 1 EiB, got '2EiB'"),
        (("--split-tolerance", "-0.5"), "--split-tolerance: must be a finite fraction ≥ 0"),
        (("--split-tolerance", "nan"), "--split-tolerance: must be a finite fraction ≥ 0"),
        (("--split-tolerance", "inf"), "--split-tolerance: must be a finite fraction ≥ 0"),
        (("--platforms", ""), "--platforms: names no platform, got ''"),
        (("--platforms", " , "), "--platforms: names no platform"),
        (("--platforms", "rans,,rfns"), "--platforms: 'rans,,rfns' has an empty value"),
        (("--platforms", ",rans"), "--platforms: ',rans' has an empty value"),
    ],
)
def test_bad_numbers_and_lists_exit_2(ndpkit: Run, args: tuple[str, ...], needle: str) -> None:
    line = _error(ndpkit("evaluate", "lc", *args))
    assert f"error: command line: {args[0]}: " in line and needle in line


def test_the_sample_check_counts_the_app_that_needs_the_most(ndpkit: Run) -> None:
    """FFT2D's spectra take about 48 bytes per byte of images: a size that fits LC's eightfold
    need can still be refused for fft2d, naming it."""
    available = available_memory_bytes()
    if available is None:
        pytest.skip("this system does not say how much memory is available")
    size = f"{available // 16 // 2**20}MiB"  # 8x fits, 56x does not
    line = _error(ndpkit("evaluate", "lc", "fft2d", "--size", size, "--platforms", "cns"))
    assert "--size: " in line and "fft2d needs about" in line


def test_a_table_run_writes_nothing_to_stderr(ndpkit: Run) -> None:
    result = ndpkit("evaluate", "lc", "--size", "1MiB", "--platforms", "cns")
    assert result.returncode == 0 and result.stderr == "", repr(result.stderr)


def test_running_out_of_memory_is_an_error_naming_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """The memory check before the run is an estimate; a failed allocation is still exit 2."""

    def no_memory(*_: object, **__: object) -> list[ev.AppRun]:
        raise MemoryError

    monkeypatch.setattr(ev, "evaluate", no_memory)
    result = CliRunner().invoke(app, ["evaluate", "lc", "--platforms", "cns"])
    assert result.exit_code == 2, result.output
    assert "--size: ran out of memory" in result.output
    assert "run on a data set with --data" in result.output


def test_running_out_of_memory_on_a_data_set_does_not_suggest_data(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With --data, --size is only the profiled sample: the advice says so."""
    generate_dataset("lc", 1 << 20, 2, tmp_path / "ds")

    def no_memory(*_: object, **__: object) -> list[ev.AppRun]:
        raise MemoryError

    monkeypatch.setattr(ev, "evaluate", no_memory)
    args = ["evaluate", "--data", str(tmp_path / "ds"), "--platforms", "cns"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "--size: ran out of memory: give a smaller --size (the sample profiled)" in " ".join(
        result.output.split()
    )
    assert "with --data" not in result.output


@pytest.mark.parametrize(
    ("given", "seconds"), [(None, 600.0), ("2 min", 120.0), ("1.5s", 1.5), ("never", None)]
)
def test_the_stall_timeout_reaches_the_executor(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, given: str | None, seconds: float | None
) -> None:
    generate_dataset("lc", 1 << 20, 2, tmp_path / "ds")
    seen: list[object] = []

    def record(*_: object, **kwargs: object) -> list[ev.AppRun]:
        seen.append(kwargs["stall_timeout_s"])
        return []

    monkeypatch.setattr(ev, "evaluate", record)
    args = ["evaluate", "--data", str(tmp_path / "ds"), "--platforms", "cns"]
    result = CliRunner().invoke(app, args + ([] if given is None else ["--stall-timeout", given]))
    assert result.exit_code == 0, result.output
    assert seen == [seconds]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ("lc", "sobel", "--split-tolerance", "0.5"),
            "picks between an app's splits (k-NN's: knn2, knn6, knn8 and their -topk splits), "
            "and lc, sobel have no other split",
        ),
        # 0 too: given, it is not the default taken without a word
        (("lc", "--split-tolerance", "0"), "and lc has no other split"),
        (
            ("knn2", "--platforms", "cns,risp-baseline", "--split-tolerance", "0.5"),
            "picks a split on a platform with engines, and cns, risp-baseline have none",
        ),
    ],
)
def test_a_split_tolerance_with_no_split_to_pick_is_an_error(
    ndpkit: Run, args: tuple[str, ...], needle: str
) -> None:
    """It changed nothing without a word (`evaluate lc --split-tolerance 0.5`), where `plan
    --tolerance` without --optimal is refused."""
    line = _error(ndpkit("evaluate", "--size", "1 MiB", *args))
    assert "error: command line: --split-tolerance: " in line and needle in line
