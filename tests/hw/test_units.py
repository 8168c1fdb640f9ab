"""Unit strings parse to SI floats; wrong kinds and typos are errors."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ndpkit.units import _SPELLINGS, Kind, UnitError, format_si, parse


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


@pytest.mark.parametrize(
    ("text", "kind", "suggestion"),
    [
        ("1GIB", Kind.SIZE, "'1 GiB'"),
        ("4mb", Kind.SIZE, "'4 MB'"),  # pint reads millibarns: the wrong kind
        ("3 gb/s", Kind.BANDWIDTH, "'3 GB/s'"),
        ("20 GBPS", Kind.BANDWIDTH, "'20 Gbps'"),
        ("5 w", Kind.POWER, "'5 W'"),
        ("1.1 ghz", Kind.FREQUENCY, "'1.1 GHz'"),
        ("10 MS", Kind.TIME, "'10 ms'"),
    ],
)
def test_a_unit_in_the_wrong_case_gets_a_suggestion(text: str, kind: Kind, suggestion: str) -> None:
    with pytest.raises(UnitError, match=f"did you mean {suggestion}"):
        parse(text, kind)


def test_no_suggestion_for_a_unit_that_is_no_spelling_of_the_kind() -> None:
    with pytest.raises(UnitError) as info:
        parse("2 xyz", Kind.SIZE)
    assert "did you mean" not in str(info.value)


@pytest.mark.parametrize("kind", list(Kind))
def test_every_suggested_spelling_parses_as_its_kind(kind: Kind) -> None:
    for spelling in _SPELLINGS[kind]:
        assert parse(f"1 {spelling}", kind) > 0


@given(
    kind=st.sampled_from(list(Kind)),
    data=st.data(),
)
def test_a_case_typo_is_an_error_that_suggests_the_same_quantity(
    kind: Kind, data: st.DataObject
) -> None:
    spelling = data.draw(st.sampled_from(_SPELLINGS[kind]))
    flips = data.draw(st.lists(st.booleans(), min_size=len(spelling), max_size=len(spelling)))
    typed = "".join(c.swapcase() if f else c for c, f in zip(spelling, flips, strict=True))
    text = f"7{typed}"
    try:
        value = parse(text, kind)
    except UnitError as exc:
        suggested = re.search(r"did you mean '([^']*)'", str(exc))
        assert suggested is not None, str(exc)
        assert parse(suggested.group(1), kind) > 0
        # the suggestion is the one spelling that matches regardless of case
        assert suggested.group(1).split()[1].casefold() == typed.casefold()
    else:  # the typo is itself a unit of this kind ("4 MJ" is a megajoule)
        assert value > 0
