"""Numbers on the command line: ASCII digits, no '_', for every option alike (sizes and
quantities already refused the rest). The option parser took '0_05' as 5 and int() takes
'１２' as 12, so a typo silently became another number."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import typer

from ndpkit.cli.common import real_arg, whole_arg
from ndpkit.numerals import ascii_digits, plain_number, signed_whole

Run = Callable[..., subprocess.CompletedProcess[str]]


def test_the_checks_take_ascii_digits_only() -> None:
    assert ascii_digits("0123456789") and not ascii_digits("")
    for text in ("１２", "١٨", "²", "1_0", "-1", " 1"):
        assert not ascii_digits(text), text
    assert plain_number("1e3") and plain_number("-0.5") and plain_number("inf")
    assert not plain_number("0_05") and not plain_number("１２")
    assert whole_arg("36") == 36 and whole_arg(" -3 ") == -3 and whole_arg("+4") == 4
    assert whole_arg(7) == 7  # a default, handed over as it is
    assert real_arg("0.05") == 0.05 and real_arg("1e3") == 1000.0 and real_arg(0) == 0.0
    assert signed_whole("-5") and signed_whole("+5") and signed_whole("0")
    for text in ("+-5", "-+5", "--5", "5-", " 5", "５", "5_0", ""):
        assert not signed_whole(text), text
    for bad in ("3_6", "３６", "3.0", "", "--1", "-+1", "0x10"):
        with pytest.raises(typer.BadParameter, match="not a whole number"):
            whole_arg(bad)
    for bad in ("0_05", "０.５", "", "1,5", "five"):
        with pytest.raises(typer.BadParameter, match="not a number"):
            real_arg(bad)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("plan", "-p", "rans", "-a", "lc", "--optimal", "--tolerance", "0_05"), "'0_05'"),
        (("estimate", "-p", "rans", "-a", "lc", "-n", "3_6"), "'3_6'"),
        (("data", "tpch", "--sf", "0_0_1", "-o", "OUT", "--tables", "region"), "'0_0_1'"),
        (("simulate", "nascent2", "--sf", "1_0"), "'1_0'"),
        (("simulate", "nascent2", "-m", "１２"), "'１２'"),
        (("reproduce", "risp", "--measured", "kmeans=2_1", "--tables", "V0"), "kmeans=2_1"),
        (("reproduce", "nascent2", "-o", "smartssd.sorter_width=１６"), "１６"),
        (("sort", "--devices", "99999", "--by", "x", "--out", "y.parquet", "x.parquet"), "4096"),
        (("simulate", "nascent2", "-o", "des.chunk_bytes=+-5"), "+-5"),  # was a traceback
        (("estimate", "-p", "rans", "-a", "he", "-n", "-+5"), "'-+5' is not a whole number"),
    ],
)
def test_an_odd_number_is_refused(
    ndpkit: Run, tmp_path: Path, args: tuple[str, ...], needle: str
) -> None:
    result = ndpkit(*(str(tmp_path / "out") if a == "OUT" else a for a in args))
    assert result.returncode == 2, (result.stdout[-300:], result.stderr[-300:])
    assert needle in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""
    assert not (tmp_path / "out").exists()
