"""An unknown platform named by --platform (or `platforms show NAME`, `check FILE`) is
refused naming the flag, as every other refusal of a command's arguments is, with the
preset it most likely meant."""

from __future__ import annotations

import pytest
from cli_errors import one_error_line


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("estimate", "-p", "CNS", "-a", "lc"), "--platform"),
        (("plan", "--platform", "CNS", "-a", "lc"), "--platform"),
        (("simulate", "-p", "CNS", "-a", "lc"), "--platform"),
        (("platforms", "show", "CNS"), "NAME"),
        (("platforms", "check", "CNS"), "FILE"),
    ],
)
def test_an_unknown_platform_names_its_flag(ndpkit, args: tuple[str, ...], flag: str) -> None:
    line = one_error_line(ndpkit(*args))
    assert line.startswith(f"error: command line: {flag}: unknown platform 'CNS'; known: cns")
    assert line.endswith("did you mean 'cns'?")
