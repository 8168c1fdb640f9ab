"""A key or table given twice in a platform or profile file names its field, as a JSON
file's does: tomllib says only "Cannot overwrite a value" (with a line, or "at end of
document" with none), which named no field."""

from __future__ import annotations

from pathlib import Path

import pytest

from ndpkit.errors import SpecError
from ndpkit.hw import load_platform
from ndpkit.profile import load_profiles

PLATFORM = """\
extends = "rans"
name = "mine"

[host_link]
bandwidth = "32 GB/s"
lanes = 16
"""


@pytest.mark.parametrize(
    ("tail", "field"),
    [
        ("lanes = 17\n", "host_link.lanes"),
        ("lanes = 17", "host_link.lanes"),  # no newline: "at end of document", no line
        ("# the lanes again\nlanes = 17  # x16\n\n\n", "host_link.lanes"),
        ("\n[host_link]\nlanes = 8\n", "host_link"),
        (
            "\n[engines]\nthroughput.lc = '1 GB/s'\nthroughput.lc = '2 GB/s'\n",
            "engines.throughput.lc",
        ),
        (
            "\n[engines]\nthroughput = { he = '1 GB/s' }\n[engines.throughput]\n",
            "engines.throughput",
        ),
        (
            '\n["engines"]\n"power_active" = "9 W"\npower_active = [\n  1,\n  2]\n',
            "engines.power_active",
        ),
    ],
)
def test_a_platform_key_given_twice_names_its_field(tmp_path: Path, tail: str, field: str) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(PLATFORM + tail, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_platform(path)
    error = caught.value
    assert (error.source, error.field) == (str(path), field)
    assert error.detail.startswith("malformed TOML: given twice (")
    assert "\n" not in str(error)


@pytest.mark.parametrize(
    ("tail", "field"),
    [
        # a line of a multi-line string is text, though it reads as a header or a key
        (
            '\n[engines]\ndescription = """\nas the vendor\'s file:\n[switch_layer]\n"""\n'
            'power_idle = "4 W"\npower_idle = "5 W"\n',
            "engines.power_idle",
        ),
        (
            '\n[engines]\ndescription = "ARM"\ndescription = """\ncount = 16\n"""\n'
            '\n[switch_layer]\ndescription = """\nmux2\n"""\n',
            "engines.description",
        ),
    ],
)
def test_a_key_given_twice_is_named_by_its_table_not_text_in_a_string(
    tmp_path: Path, tail: str, field: str
) -> None:
    """The table was the last line that looked like a header, and the statement the last
    line that looked like a key: text in a multi-line description ("[switch_layer]",
    "count = 16") named switch_layer.power_idle and engines.count, fields given once."""
    path = tmp_path / "mine.toml"
    path.write_text(PLATFORM + tail, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_platform(path)
    assert (caught.value.source, caught.value.field) == (str(path), field)


def test_a_profile_key_given_twice_names_its_field(tmp_path: Path) -> None:
    path = tmp_path / "mine-profiles.toml"
    path.write_text('[apps.scan]\ndata_size = "1 GB"\nalpha = 2\nalpha = 3\n', encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_profiles(path)
    assert (caught.value.source, caught.value.field) == (str(path), "apps.scan.alpha")


def test_a_table_given_twice_whose_name_quotes_an_apostrophe_is_named_whole(
    tmp_path: Path,
) -> None:
    """tomllib names the table as a Python tuple, ('apps', "bob's scan"), whose keys were
    read in single quotes only: the field was "apps", not the app's table."""
    path = tmp_path / "mine-profiles.toml"
    table = '[apps."bob\'s scan"]\ndata_size = "1 GB"\n'
    path.write_text(table + "alpha = 2\n" + table, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_profiles(path)
    assert (caught.value.source, caught.value.field) == (str(path), "apps.bob's scan")


@pytest.mark.parametrize(
    "text",
    [
        "name = \n",  # not given twice: tomllib's own words, no field
        "a = { b = 1, b = 2 }\n",  # tomllib names the key itself
        "a = { b = 1 }\na.c = 2\n",  # an inline table extended: not given twice
    ],
)
def test_other_toml_errors_keep_tomllibs_words(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_platform(path)
    assert caught.value.field is None
    assert caught.value.detail.startswith("malformed TOML: ")
    assert "given twice" not in caught.value.detail
