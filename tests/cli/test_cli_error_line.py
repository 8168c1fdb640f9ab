"""An input error is one line on stderr, whatever the library that raised it wrote."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
import typer

from ndpkit.cli.common import user_errors
from ndpkit.runtime import ShardError


def test_a_message_of_several_lines_is_printed_as_one(capsys: pytest.CaptureFixture[str]) -> None:
    thrift = (
        "Couldn't deserialize thrift: TProtocolException: Invalid data\n"
        "Deserializing page header failed.\n"
    )
    with pytest.raises(typer.Exit) as info, user_errors():
        raise ShardError("device-00/shard-0000.parquet", f"not a readable Parquet shard ({thrift})")
    assert info.value.exit_code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    assert "Invalid data Deserializing page header failed." in lines[0]


@pytest.mark.parametrize(
    "args",
    [
        ("data", "show", "TOO_LONG"),
        ("data", "generate", "lc", "--size", "1MiB", "--devices", "2", "--out", "TOO_LONG"),
        ("sweep", "--out", "TOO_LONG.csv"),
    ],
)
def test_a_path_the_system_refuses_is_one_line_and_exit_2(
    ndpkit, tmp_path: Path, args: tuple[str, ...]
) -> None:
    too_long = str(tmp_path / ("n" * 300))
    result = ndpkit(*(a.replace("TOO_LONG", too_long) for a in args))
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert "File name too long" in result.stderr and "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_path_refused_by_the_system_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit) as info, user_errors():
        raise PermissionError(errno.EACCES, "Permission denied", "/root/out.json")
    assert info.value.exit_code == 2
    assert capsys.readouterr().err == "error: /root/out.json: Permission denied\n"


def test_a_system_failure_that_is_not_about_a_path_keeps_its_traceback() -> None:
    with pytest.raises(BrokenPipeError), user_errors():
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")


@pytest.mark.parametrize(
    ("code", "says"),
    [
        (errno.EMFILE, "this process may open "),
        (errno.ENFILE, "the system's table of open files is full (fs.file-max)"),
    ],
)
def test_running_out_of_open_files_is_one_line_saying_whose_limit(
    capsys: pytest.CaptureFixture[str], code: int, says: str
) -> None:
    """A low `ulimit -n` is the user's setting, not a bug: one line that says what to do."""
    with pytest.raises(typer.Exit) as info, user_errors():
        raise OSError(code, "Too many open files")
    assert info.value.exit_code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: Too many open files: ") and says in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("code", "strerror"),
    [(errno.ENOSPC, "No space left on device"), (errno.EDQUOT, "Disk quota exceeded")],
)
def test_a_full_file_system_is_one_line_naming_the_file(
    capsys: pytest.CaptureFixture[str], code: int, strerror: str
) -> None:
    """Where no check named it first (Python's multiprocessing making its shared memory in a
    /dev/shm out of inodes): the file and why, not a traceback."""
    with pytest.raises(typer.Exit) as info, user_errors():
        raise OSError(code, strerror, "/dev/shm/pym-1-abc")
    assert info.value.exit_code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: /dev/shm/pym-1-abc: {strerror}: its file system is full")
    assert err.count("\n") == 1
