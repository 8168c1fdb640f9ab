"""Unit strings parse to SI floats; wrong kinds and typos are errors."""

import pytest

from ndpkit.units import Kind, UnitError, format_si, parse


@pytest.mark.parametrize(
    ("text", "kind", "expected"),
    [
        ("3 GB/s", Kind.BANDWIDTH, 3e9),
        ("3 GiB/s", Kind.BANDWIDTH, 3 * 2**30),
        ("20 Gbps", Kind.BANDWIDTH, 2.5e9),
        ("37 GiB", Kind.SIZE, 37 * 2**30),
        ("500 GB", Kind.SIZE, 500e9),
        ("5.76 W", Kind.POWER, 5.76),
        ("0.99 mW", Kind.POWER, 0.99e-3),
        ("1.1 GHz", Kind.FREQUENCY, 1.1e9),
        ("16.67 s", Kind.TIME, 16.67),
        ("10 ms", Kind.TIME, 0.01),
        ("4 mJ", Kind.ENERGY, 0.004),
    ],
)
def test_parses_to_si(text: str, kind: Kind, expected: float) -> None:
    assert parse(text, kind) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("text", "kind", "fragment"),
    [
        ("3 GHz", Kind.BANDWIDTH, "not a bandwidth"),  # pint calls bits dimensionless
        ("3 GB", Kind.BANDWIDTH, "not a bandwidth"),
        ("3 GB/s", Kind.SIZE, "not a size"),
        ("3 GBs", Kind.BANDWIDTH, "unknown unit"),
        ("5 Watt-ish", Kind.POWER, "unknown unit"),
        ("3", Kind.BANDWIDTH, "no unit"),
        (3, Kind.POWER, "expected a quantity with a unit"),
        (True, Kind.POWER, "expected a quantity with a unit"),
        ("5 W/", Kind.POWER, "not a quantity"),
    ],
)
def test_rejects_with_a_reason(text: object, kind: Kind, fragment: str) -> None:
    with pytest.raises(UnitError, match=fragment):
        parse(text, kind)


def test_format_si_decimal_and_binary() -> None:
    assert format_si(3e9, Kind.BANDWIDTH) == "3 GB/s"
    assert format_si(3 * 2**30, Kind.BANDWIDTH, binary=True) == "3 GiB/s"
    assert format_si(0.018, Kind.POWER) == "18 mW"


@pytest.mark.parametrize(
    ("value", "kind", "text"),
    [(9e-10, Kind.ENERGY, "0.9 nJ"), (4e-3, Kind.ENERGY, "4 mJ"), (2.4e-5, Kind.POWER, "24 µW")],
)
def test_format_si_small_values(value: float, kind: Kind, text: str) -> None:
    assert format_si(value, kind) == text
