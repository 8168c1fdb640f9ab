"""Unit strings parse to SI floats; wrong kinds and typos are errors."""

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pint
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ndpkit import units
from ndpkit.errors import SpecError
from ndpkit.units import _ALIASES, _SPELLINGS, Kind, UnitError, _case_key, format_si, parse


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
        ("1e-3 s", Kind.TIME, 1e-3),  # an exponent's sign is not a sum
        ("1E+3 B/s", Kind.BANDWIDTH, 1e3),
        ("100 s^-1", Kind.FREQUENCY, 100.0),
        ("-5 W", Kind.POWER, -5.0),
        ("3 s**-1", Kind.FREQUENCY, 3.0),
        ("3.e-3 GB/s", Kind.BANDWIDTH, 3e6),
        ("3 s⁻¹", Kind.FREQUENCY, 3.0),
        ("3 GB s**-1", Kind.BANDWIDTH, 3e9),
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
        # pint's own words for these (tokenizer states) are not repeated.
        ("8 MiB)", Kind.SIZE, r"^'8 MiB\)' is not a quantity: its operators or parentheses"),
        ("(3 W", Kind.POWER, r"parentheses do not join a number and units; write it like"),
        ("3 GB·/s", Kind.BANDWIDTH, r"^'3 GB·/s' is not a quantity: its operators"),
        # pint's parser drops or acts on these: "3,5 GB/s" would be 35 GB/s.
        (
            "3,5 GB/s",
            Kind.BANDWIDTH,
            r"',' has no place in a quantity \(the decimal mark is '\.'\)",
        ),
        ("3 GB/s;", Kind.BANDWIDTH, "';' has no place"),
        ("3 GB/s # peak", Kind.BANDWIDTH, "'#' has no place"),
        ("3 GB/s + 1 GB/s", Kind.BANDWIDTH, "not a sum"),
        ("3 GB/s-1 GB/s", Kind.BANDWIDTH, "not a sum"),
        ("3 byte - 1 byte", Kind.SIZE, "not a sum"),
        ("3 degC", Kind.POWER, "a temperature is not a power"),
        ("5 W", Kind.ENERGY, r"'5 W' is not an energy \(expected"),  # was "a energy"
        ("5 J", Kind.TIME, r"'5 J' is not a time \(expected"),
        ("", Kind.POWER, "is empty"),
        # not echoed whole (a 5,000-digit number filled the screen)
        ("9" * 5000 + " GB/s", Kind.BANDWIDTH, r"^is 5,005 characters long \(starts '9{20}'\)"),
    ],
)
def test_rejects_with_a_reason(text: object, kind: Kind, fragment: str) -> None:
    with pytest.raises(UnitError, match=fragment):
        parse(text, kind)


@pytest.mark.parametrize(
    ("value", "binary", "text"),
    [(2.0**60, True, "1 EiB"), (3 * 2.0**70, True, "3 ZiB"), (2e18, False, "2 EB")],
)
def test_format_si_goes_past_peta_as_parse_does(value: float, binary: bool, text: str) -> None:
    """1 EiB printed as "1024 PiB"; each reads back as the value it stands for."""
    assert format_si(value, Kind.SIZE, binary=binary) == text
    assert parse(text, Kind.SIZE) == value


def test_format_si_decimal_and_binary() -> None:
    assert format_si(3e9, Kind.BANDWIDTH) == "3 GB/s"
    assert format_si(3 * 2**30, Kind.BANDWIDTH, binary=True) == "3 GiB/s"
    assert format_si(0.018, Kind.POWER) == "18 mW"


@pytest.mark.parametrize(
    ("value", "text"),
    [(1000 * 1024, "1000 KiB"), (1_047_552, "1023 KiB"), (1023, "1023 B"), (1000, "1000 B")],
)
def test_format_si_binary_sizes_of_1000_to_1023_are_not_in_exponent_form(
    value: int, text: str
) -> None:
    """They read "1e+03 KiB" (three digits of 1000 need an exponent; found by an audit)."""
    assert format_si(value, Kind.SIZE, binary=True) == text


@given(st.just(0.0) | st.floats(min_value=1, max_value=2.0**70))
def test_format_si_never_writes_an_exponent_for_a_size(value: float) -> None:
    assert "e" not in format_si(value, Kind.SIZE, binary=True).split()[0]
    assert "e" not in format_si(value, Kind.SIZE).split()[0]


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
        ("4MB ", Kind.BANDWIDTH, None),  # a size, not a bandwidth: no spelling of it fits
        ("3 kb", Kind.SIZE, "'3 kbit' or '3 kB'"),
        ("3 KB", Kind.SIZE, "'3 kB'"),
        ("4mb", Kind.SIZE, "'4 Mbit' or '4 MB'"),  # pint reads millibarns; bits first
        ("3 gb/s", Kind.BANDWIDTH, "'3 Gbit/s' or '3 GB/s'"),
        ("3 Gb/s", Kind.BANDWIDTH, "'3 Gbit/s' or '3 GB/s'"),  # pint reads gilberts/s
        ("3 Mb/s", Kind.BANDWIDTH, "'3 Mbit/s' or '3 MB/s'"),  # and megabarns
        ("3GBps", Kind.BANDWIDTH, "'3 GB/s'"),
        ("3 MBps", Kind.BANDWIDTH, "'3 MB/s'"),
        ("3 kBps", Kind.BANDWIDTH, "'3 kB/s'"),
        ("3 TBps", Kind.BANDWIDTH, "'3 TB/s'"),
        ("3 GiBps", Kind.BANDWIDTH, "'3 GiB/s'"),
        ("20 GBPS", Kind.BANDWIDTH, "'20 GB/s'"),
        ("20 gbps", Kind.BANDWIDTH, "'20 Gbps'"),  # bps typed: bits, no bytes offered
        ("5 w", Kind.POWER, "'5 W'"),
        ("1.1 ghz", Kind.FREQUENCY, "'1.1 GHz'"),
        ("10 MS", Kind.TIME, "'10 ms'"),
        # a plural unit (got no suggestion): a size as it is, a bandwidth per second
        ("3 GBs", Kind.SIZE, "'3 GB'"),
        ("3 MiBs", Kind.SIZE, "'3 MiB'"),
        ("3 GBs", Kind.BANDWIDTH, "'3 GB/s'"),
        ("3 ms", Kind.SIZE, None),  # milliseconds are no plural of a size
        # bits and bytes kept; the s of a spelled-out "bits" is a plural, never a "/s"
        ("3 gbs", Kind.BANDWIDTH, "'3 Gbit/s' or '3 GB/s'"),
        ("3 Mbs", Kind.BANDWIDTH, "'3 Mbit/s' or '3 MB/s'"),
        ("3 Gbits", Kind.BANDWIDTH, None),
        ("3 bits", Kind.BANDWIDTH, None),
        ("3 gbits", Kind.BANDWIDTH, None),
        ("3 gbits", Kind.SIZE, "'3 Gbit'"),  # bits typed: no bytes offered
        # a plural per second (got no suggestion): the singular's
        ("3 gbits/s", Kind.BANDWIDTH, "'3 Gbit/s'"),
        ("3 MBs/s", Kind.BANDWIDTH, "'3 MB/s'"),
        ("3 gbs/s", Kind.BANDWIDTH, "'3 Gbit/s' or '3 GB/s'"),
        # spelled out in a datasheet's case, which pint reads only in lower case
        ("5.5 Watt", Kind.POWER, "'5.5 W'"),
        ("5 Milliwatts", Kind.POWER, "'5 mW'"),
        ("2 Gigahertz", Kind.FREQUENCY, "'2 GHz'"),
        ("2 Seconds", Kind.TIME, "'2 s'"),
        ("4 Joules", Kind.ENERGY, "'4 J'"),
        ("5.5 Watt", Kind.BANDWIDTH, None),  # a power is no spelling of a bandwidth
    ],
)
def test_a_unit_in_the_wrong_case_gets_a_suggestion(
    text: str, kind: Kind, suggestion: str | None
) -> None:
    with pytest.raises(UnitError) as info:
        parse(text, kind)
    if suggestion is None:
        assert "did you mean" not in str(info.value)
    else:
        assert f"did you mean {suggestion}?" in str(info.value)


def test_a_suggestion_in_bits_says_so() -> None:
    with pytest.raises(UnitError, match=r"'3 Gbit/s' or '3 GB/s'\? \(b is a bit, B a byte\)"):
        parse("3 Gb/s", Kind.BANDWIDTH)


def test_no_suggestion_for_a_unit_that_is_no_spelling_of_the_kind() -> None:
    with pytest.raises(UnitError) as info:
        parse("2 xyz", Kind.SIZE)
    assert "did you mean" not in str(info.value)


@pytest.mark.parametrize("kind", list(Kind))
def test_every_suggested_spelling_parses_as_its_kind(kind: Kind) -> None:
    for spelling in (*_SPELLINGS[kind], *_ALIASES.get(kind, {}).values()):
        assert parse(f"1 {spelling}", kind) > 0


@pytest.mark.parametrize("kind", list(Kind))
def test_no_two_spellings_differ_only_in_case_other_than_b(kind: Kind) -> None:
    """Else which one a typo gets would depend on the order of the table."""
    typed = [*_SPELLINGS[kind], *_ALIASES.get(kind, {})]
    assert len({_case_key(unit) for unit in typed}) == len(typed)


def _bits_and_bytes(unit: str) -> tuple[bool, bool]:
    """Whether `unit` names bits (a b) and bytes (a B)."""
    return "b" in unit, "B" in unit


@given(
    kind=st.sampled_from(list(Kind)),
    data=st.data(),
)
def test_a_case_typo_is_an_error_that_suggests_the_same_quantity(
    kind: Kind, data: st.DataObject
) -> None:
    """Any letter may be typed in the wrong case. The author plausibly meant the
    spelling with their own b and B (a bit is a b, a byte a B: "GBps" is gigabytes per
    second even if "Gbps" was drawn), so a suggestion is worth exactly that: flipping a
    b to B means 8 times as much, B to b an eighth."""
    spelling = data.draw(st.sampled_from((*_SPELLINGS[kind], *_ALIASES.get(kind, {}))))
    flips = data.draw(st.lists(st.booleans(), min_size=len(spelling), max_size=len(spelling)))
    typed = "".join(c.swapcase() if f else c for c, f in zip(spelling, flips, strict=True))
    meant_unit = _ALIASES.get(kind, {}).get(spelling, spelling)
    meant = parse(f"7 {meant_unit}", kind) * 8.0 ** (
        sum(c == "b" and t == "B" for c, t in zip(spelling, typed, strict=True))
        - sum(c == "B" and t == "b" for c, t in zip(spelling, typed, strict=True))
    )
    text = f"7{typed}"
    try:
        value = parse(text, kind)
    except UnitError as exc:
        suggested = re.search(r"did you mean '([^']*)'", str(exc))
        if suggested is None:
            # Only a b/B typo may go without a suggestion ("GBit": bits or bytes?).
            assert _bits_and_bytes(typed) != _bits_and_bytes(spelling), str(exc)
            return
        assert parse(suggested.group(1), kind) == pytest.approx(meant, rel=1e-12)
        assert _bits_and_bytes(suggested.group(1)) == _bits_and_bytes(typed)
    else:  # the typo is itself a unit of this kind ("4 MJ" is a megajoule)
        assert value > 0


@pytest.mark.parametrize(
    ("text", "kind", "fragment"),
    [
        ("inf GB/s", Kind.BANDWIDTH, "not a finite number"),
        ("-inf W", Kind.POWER, "not a finite number"),
        ("nan GB/s", Kind.BANDWIDTH, "not a finite number"),
        ("3e400 GB/s", Kind.BANDWIDTH, "not a finite number"),
        ("1e300 TB/s", Kind.BANDWIDTH, "not a finite number"),  # finite until in bits
        ("1" + "0" * 400 + " GB", Kind.SIZE, "not a finite number"),  # an integer
        ("1e25 B", Kind.SIZE, "out of range"),
        ("1e-320 GB/s", Kind.BANDWIDTH, "out of range"),  # divides to inf, or to 0
        ("GB/s", Kind.BANDWIDTH, "'GB/s' has no number; write it like '3 GB/s'"),
        ("W", Kind.POWER, "has no number"),
        (" s", Kind.TIME, "has no number"),
    ],
)
def test_rejects_what_cannot_be_right(text: str, kind: Kind, fragment: str) -> None:
    with pytest.raises(UnitError) as info:
        parse(text, kind)
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    ("text", "kind", "expected"),
    [
        ("0 W", Kind.POWER, 0.0),
        (".5 W", Kind.POWER, 0.5),
        ("(3) GB", Kind.SIZE, 3e9),
        ("1e24 B", Kind.SIZE, 1e24),
        ("1 ys", Kind.TIME, 1e-24),
        ("-3 W", Kind.POWER, -3.0),  # a sign is the field's business (Power is >= 0)
    ],
)
def test_accepts_the_edges(text: str, kind: Kind, expected: float) -> None:
    assert parse(text, kind) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("text", "kind", "suggestion"),
    [
        ("3 mB/s", Kind.BANDWIDTH, "'3 MB/s'"),  # pint: millibytes per second, 0.003 B/s
        ("3 mbps", Kind.BANDWIDTH, "'3 Mbps'"),  # millibits per second
        ("3 mbit/s", Kind.BANDWIDTH, "'3 Mbit/s'"),
        ("3 mB", Kind.SIZE, "'3 MB'"),
        ("3 pB", Kind.SIZE, "'3 PB'"),  # picobytes
        ("3 µB", Kind.SIZE, None),
        ("3 ubit/s", Kind.BANDWIDTH, None),
        ("3 cB", Kind.SIZE, None),
    ],
)
def test_a_fraction_of_a_byte_or_bit_is_refused(
    text: str, kind: Kind, suggestion: str | None
) -> None:
    with pytest.raises(UnitError) as info:
        parse(text, kind)
    message = str(info.value)
    assert "divides a bit or byte" in message
    if suggestion is None:
        assert "did you mean" not in message
    else:
        assert f"did you mean {suggestion}?" in message


@pytest.mark.parametrize(
    ("text", "suggestion"),
    [
        ("3 mHz", "'3 MHz'"),  # pint: millihertz, accepted as a core clock 10^9 times off
        ("100 mHz", "'100 MHz'"),
        ("3 µHz", None),
        ("3 nHz", None),
    ],
)
def test_a_fraction_of_a_hertz_is_refused(text: str, suggestion: str | None) -> None:
    with pytest.raises(UnitError) as info:
        parse(text, Kind.FREQUENCY)
    message = str(info.value)
    assert "divides a hertz" in message
    if suggestion is None:
        assert "did you mean" not in message
    else:
        assert f"did you mean {suggestion}?" in message


def test_a_milli_clock_in_a_platform_names_the_file_and_field(
    platform_error: Callable[..., SpecError],
) -> None:
    error = platform_error('extends = "rans"\nname = "x"\n[host]\nfrequency = "3 mHz"\n')
    assert error.field == "host.frequency"
    assert "did you mean '3 MHz'?" in error.detail


@pytest.mark.parametrize(
    ("text", "kind", "expected"),
    [
        ("66 mW", Kind.POWER, 0.066),  # milli stays a prefix where it means something
        ("3 kHz", Kind.FREQUENCY, 3e3),
        ("1 Hz", Kind.FREQUENCY, 1.0),
        ("10 ms", Kind.TIME, 0.01),
        ("1 mJ", Kind.ENERGY, 0.001),
        ("1.5e9 B/s", Kind.BANDWIDTH, 1.5e9),
        ("3 kB", Kind.SIZE, 3e3),
        ("1 Gibit", Kind.SIZE, 2**30 / 8),
        ("3 W*s", Kind.ENERGY, 3.0),  # an operator between units
        ("3 GB s^-1", Kind.BANDWIDTH, 3e9),
        ("3 (GB/s)", Kind.BANDWIDTH, 3e9),
    ],
)
def test_prefixes_and_unit_operators_that_stay_valid(
    text: str, kind: Kind, expected: float
) -> None:
    assert parse(text, kind) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    "text",
    [
        "3*2 GB/s",
        "2**3 GB/s",
        "2^3 GB/s",
        "3 GB/s/2",
        "3/2 GB/s",
        "3 GB*2/s",
        "3 2 GB/s",  # pint multiplies numbers side by side
        "(3)*2 GB/s",
        "3 *GB/s",
        "3 GB^2^2/s",
        "0x10 GB/s",  # a hexadecimal literal to Python's tokenizer
    ],
)
def test_arithmetic_is_refused(text: str) -> None:
    with pytest.raises(UnitError, match="never numbers"):
        parse(text, Kind.BANDWIDTH)


def test_an_underscore_in_the_number_is_refused() -> None:
    with pytest.raises(UnitError, match="'_' has no place in a number"):
        parse("1_0 MiB", Kind.SIZE)  # Python's tokenizer: 10


def test_a_digit_other_than_0_to_9_is_not_a_size() -> None:
    with pytest.raises(UnitError) as info:
        parse("２ MiB", Kind.SIZE)  # full-width 2
    assert str(info.value) == (
        "'２ MiB' is not a size: write its number in the digits 0-9, like '500 GB'"
    )


@pytest.mark.parametrize(
    ("text", "kind", "suggestion"),
    [
        ("4Gib", Kind.SIZE, "did you mean '4 Gibit' or '4 GiB'?"),  # pint: gibibarns
        ("4 Mib", Kind.SIZE, "did you mean '4 Mibit' or '4 MiB'?"),
        ("3 Gib/s", Kind.BANDWIDTH, "did you mean '3 Gibit/s' or '3 GiB/s'?"),
    ],
)
def test_a_binary_prefix_on_b_suggests_bits_and_bytes(
    text: str, kind: Kind, suggestion: str
) -> None:
    with pytest.raises(UnitError, match=re.escape(suggestion)):
        parse(text, kind)


@pytest.mark.parametrize(
    ("text", "kind"),
    [("10 dBm", Kind.POWER), ("3 dB", Kind.POWER), ("3 Np", Kind.SIZE)],
)
def test_a_logarithmic_unit_is_not_called_a_temperature(text: str, kind: Kind) -> None:
    with pytest.raises(UnitError) as info:
        parse(text, kind)
    assert "logarithmic units (dB, dBm, Np) are not supported" in str(info.value)
    assert "temperature" not in str(info.value)


def _fresh_registry_in(folder: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("NDPKIT_CACHE_DIR", folder)
    units.registry.cache_clear()
    try:
        return units.registry()
    finally:
        units.registry.cache_clear()


def test_the_registry_cache_is_where_the_environment_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NDPKIT_CACHE_DIR", "")
    assert units.registry_cache_dir() is None
    monkeypatch.delenv("NDPKIT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert units.registry_cache_dir() == tmp_path / "ndpkit" / f"pint-{pint.__version__}"


def test_a_half_written_cache_file_gives_the_registry_and_is_written_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process killed while pint wrote its cache left a truncated pickle: every later
    command would have failed to load it. It is parsed afresh, and the file removed so that
    the next registry writes it whole."""
    folder = tmp_path / "cache"
    first = _fresh_registry_in(str(folder), monkeypatch)
    pickles = sorted((folder / f"pint-{pint.__version__}").glob("*.pickle"))
    assert pickles, "pint wrote no cache"
    assert first.Quantity("3 GB/s").to_base_units().magnitude == 24e9
    whole = pickles[0].read_bytes()
    pickles[0].write_bytes(whole[: len(whole) // 2])
    again = _fresh_registry_in(str(folder), monkeypatch)
    assert again.Quantity("3 GB/s").to_base_units().magnitude == 24e9
    assert not pickles[0].exists() or pickles[0].read_bytes() == whole
    third = _fresh_registry_in(str(folder), monkeypatch)  # written whole again
    assert third.Quantity("5.76 W").to_base_units().magnitude == 5.76
    assert pickles[0].read_bytes() == whole


def test_a_cache_that_cannot_be_written_still_gives_the_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    found = _fresh_registry_in(str(blocker / "cache"), monkeypatch)
    assert found.Quantity("1.1 GHz").to_base_units().magnitude == pytest.approx(1.1e9)
