"""A bad value of a model convention is said of the flag typed, as every other flag's is
(found by following the docs: `--placement static` was named `placement:`)."""

from __future__ import annotations

import pytest

from ndpkit.cli.common import build_options
from ndpkit.errors import SpecError
from ndpkit.model import Options


@pytest.mark.parametrize(
    ("flags", "field"),
    [
        ({"placement": "static"}, "--placement"),
        ({"time_basis": "foo"}, "--time-basis"),
        ({"energy_form": "b"}, "--energy-form"),
        ({"option": ["placement=static"]}, "--option placement"),
    ],
)
def test_build_options_names_the_flag(flags: dict[str, object], field: str) -> None:
    with pytest.raises(SpecError, match="must be one of") as caught:
        build_options(Options(), flags)
    assert caught.value.source == "command line" and caught.value.field == field


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("plan", "-p", "rfns", "-a", "he", "--placement", "static"), "--placement"),
        (("plan", "-p", "rfns", "-a", "he", "--time-basis", "foo"), "--time-basis"),
        (("estimate", "-p", "rfns", "-a", "he", "--energy-form", "b"), "--energy-form"),
    ],
)
def test_the_command_line_names_the_flag(ndpkit, args: tuple[str, ...], flag: str) -> None:
    out = ndpkit(*args)
    assert out.returncode == 2
    assert out.stderr.startswith(f"error: command line: {flag}: must be one of"), out.stderr
