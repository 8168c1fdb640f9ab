"""Inputs past a limit (a file nested too deeply, an endless `extends` chain) are one error
line naming the file, and the error lines the docs quote are the real ones."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_errors import one_error_line

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize(
    "description",
    ["[" * 100_000 + "]" * 100_000, "{a=" * 3000 + "1" + "}" * 3000],
    ids=["arrays", "inline-tables"],
)
def test_a_platform_nested_too_deeply_is_one_error_line(
    ndpkit, tmp_path: Path, description: str
) -> None:
    path = tmp_path / "deep.toml"
    path.write_text(f'extends = "rans"\nname = "deep"\ndescription = {description}\n')
    line = one_error_line(ndpkit("platforms", "check", str(path)))
    assert line.startswith(f"error: {path}: nested too deeply")


def test_a_long_extends_chain_is_one_error_line(ndpkit, tmp_path: Path) -> None:
    for i in range(1000):
        parent = "rans" if i == 0 else f"c{i - 1}.toml"
        (tmp_path / f"c{i}.toml").write_text(f'extends = "{parent}"\nname = "c{i}"\n')
    top = tmp_path / "c999.toml"
    line = one_error_line(ndpkit("platforms", "check", str(top)))
    assert line.startswith(f"error: {top}: extends: the chain from {top} is longer than 64")


def test_a_profile_set_nested_too_deeply_is_one_error_line(ndpkit, tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"apps": ' + "[" * 100_000 + "]" * 100_000 + "}")
    line = one_error_line(ndpkit("estimate", "-p", "rans", "-a", "he", "--profiles", str(path)))
    assert line.startswith(f"error: {path}: nested too deeply")


@pytest.mark.parametrize("doc", ["planning.md", "reproducing-rans-rfns.md"])
def test_the_quoted_odd_n_error_is_the_real_one(ndpkit, tmp_path: Path, doc: str) -> None:
    """Both docs quote `ndpkit estimate -p rfns7.toml -a he -n 3` and its error line."""
    text = (DOCS / doc).read_text(encoding="utf-8")
    quoted = re.search(r"\$ ndpkit estimate -p rfns7\.toml -a he -n 3\n\s*(error: .*)\n", text)
    assert quoted is not None
    (tmp_path / "rfns7.toml").write_text(
        'extends = "rfns"\nname = "rfns7"\n[storage]\ncount = 7\n[engines]\ncount = 7\n'
    )
    result = ndpkit("estimate", "-p", str(tmp_path / "rfns7.toml"), "-a", "he", "-n", "3")
    assert one_error_line(result) == quoted.group(1)


LONG_NUMBER = "9" * 5000
"""More digits than Python converts to an int (4300 by default): a plain ValueError inside
the TOML and JSON parsers, not their syntax error."""


@pytest.mark.parametrize(
    ("name", "text", "command"),
    [
        (
            "long.toml",
            f'extends = "rfns"\nname = "long"\n[storage]\ncount = {LONG_NUMBER}\n',
            ("platforms", "check"),
        ),
        (
            "long.json",
            f'{{"version": {LONG_NUMBER}}}',
            ("estimate", "-p", "cns", "-a", "lc", "--profiles"),
        ),
        (
            "long-p.toml",
            f"version = {LONG_NUMBER}\n",
            ("estimate", "-p", "cns", "-a", "lc", "--profiles"),
        ),
    ],
    ids=["platform", "profiles-json", "profiles-toml"],
)
def test_a_number_too_long_to_read_is_one_error_line(
    ndpkit, tmp_path: Path, name: str, text: str, command: tuple[str, ...]
) -> None:
    path = tmp_path / name
    path.write_text(text)
    line = one_error_line(ndpkit(*command, str(path)))
    assert line.startswith(f"error: {path}: a number too long to read")
    assert LONG_NUMBER not in line


@pytest.fixture
def small_data_set(ndpkit, tmp_path: Path) -> Path:
    out = tmp_path / "lc"
    result = ndpkit("data", "generate", "lc", "--size", "1MiB", "--devices", "2", "--out", str(out))
    assert result.returncode == 0, result.stderr
    return out


@pytest.mark.parametrize(
    "manifest",
    ["[" * 1000 + "]" * 1000, '{"format": "x", "seed": ' + LONG_NUMBER + "}"],
    ids=["nested", "long-number"],
)
@pytest.mark.parametrize(
    "command", [("data", "show"), ("evaluate", "--platforms", "cns", "--data")]
)
def test_a_data_set_manifest_past_a_limit_is_one_error_line(
    ndpkit, small_data_set: Path, manifest: str, command: tuple[str, ...]
) -> None:
    path = small_data_set / "manifest.json"
    path.write_text(manifest)
    line = one_error_line(ndpkit(*command, str(small_data_set)))
    assert line.startswith(f"error: {path}: ")
    assert "nested too deeply" in line or "a number too long to read" in line
