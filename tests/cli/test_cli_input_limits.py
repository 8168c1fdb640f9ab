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
