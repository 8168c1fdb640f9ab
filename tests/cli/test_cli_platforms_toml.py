"""`ndpkit platforms show NAME -f toml`: a platform written as a file of its own, which
`platforms check` and every command load back."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from cli_errors import one_error_line

from ndpkit.hw import load_platform


def test_a_preset_is_copied_under_a_name_of_its_own(ndpkit, tmp_path: Path) -> None:
    result = ndpkit("platforms", "show", "rfns", "-f", "toml")
    assert result.returncode == 0, result.stderr
    assert "copy of preset 'rfns' is named 'rfns-copy'" in result.stderr
    path = tmp_path / "copy.toml"
    path.write_text(result.stdout, encoding="utf-8")
    assert tomllib.loads(result.stdout)["name"] == "rfns-copy"
    check = ndpkit("platforms", "check", str(path))
    assert check.returncode == 0, check.stderr
    assert check.stdout.startswith(f"ok: {path}: platform 'rfns-copy', 36 SSDs")
    copy = load_platform(path)
    assert copy.model_dump() == {**load_platform("rfns").model_dump(), "name": "rfns-copy"}


def test_name_sets_the_copys_name(ndpkit) -> None:
    result = ndpkit("platforms", "show", "cns", "-f", "toml", "--name", "my-server")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert tomllib.loads(result.stdout)["name"] == "my-server"


def test_a_files_platform_keeps_its_name(ndpkit, tmp_path: Path) -> None:
    child = tmp_path / "mine.toml"
    child.write_text('extends = "sans"\nname = "mine"\n', encoding="utf-8")
    result = ndpkit("platforms", "show", str(child), "-f", "toml")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    table = tomllib.loads(result.stdout)
    assert table["name"] == "mine" and "extends" not in table


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--name", "x"), "--name: names the copy that -f toml writes; add -f toml"),
        (("-f", "toml", "--name", "rans"), "--name: 'rans' is the name of a preset"),
        (("-f", "toml", "--name", " x"), "--name: has spaces at its start or end"),
        (("-f", "toml", "--name", ""), "--name: is empty or blank"),
    ],
)
def test_a_bad_name_is_refused(ndpkit, args: tuple[str, ...], message: str) -> None:
    result = ndpkit("platforms", "show", "rans", *args)
    assert result.stdout == ""
    assert one_error_line(result).startswith(f"error: command line: {message}")
