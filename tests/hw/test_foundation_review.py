"""Review fixes in platform and profile files: a file that extends another needs its own
name, a bad scheme is a SpecError (not a crash), engine kinds in profiles are checked,
range errors quote the value as written, and booleans or strings are not counts."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path

import pytest

from ndpkit.errors import SpecError
from ndpkit.hw import load_platform
from ndpkit.profile import load_profiles


def test_a_file_that_extends_a_preset_without_a_name_is_refused(
    tmp_path: Path, platform_error: Callable[..., SpecError]
) -> None:
    body = 'extends = "rans"\n[storage]\ncount = 18\n[engines]\ncount = 18\n'
    error = platform_error(body, "rans18.toml")
    assert error.source == str(tmp_path / "rans18.toml")
    assert error.field == "name"
    assert error.detail.startswith("required: a file that extends 'rans' needs a name of its own")


def test_with_a_name_of_its_own_it_loads_under_that_name(tmp_path: Path) -> None:
    path = tmp_path / "rans18.toml"
    path.write_text(
        'extends = "rans"\nname = "rans18"\n[storage]\ncount = 18\n[engines]\ncount = 18\n'
    )
    assert load_platform(path).name == "rans18"


def test_an_unnamed_parent_is_fine_when_the_loaded_file_has_a_name(
    tmp_path: Path, platform_error: Callable[..., SpecError]
) -> None:
    (tmp_path / "parent.toml").write_text('extends = "rans"\n[host]\npower_idle = "40 W"\n')
    (tmp_path / "child.toml").write_text('extends = "parent.toml"\nname = "child"\n')
    assert load_platform(tmp_path / "child.toml").name == "child"
    error = platform_error('extends = "parent.toml"\n', "orphan.toml")
    assert error.field == "name"
    assert "a file that extends 'parent.toml' needs a name of its own" in error.detail


@pytest.mark.parametrize(
    ("body", "owner"),
    [
        ('extends = "rfns"\nname = "rfns"\n[storage]\ncount = 18\n[engines]\ncount = 18\n', "rfns"),
        ('extends = "rfns"\nname = "sfns"\n', "sfns"),  # rfns extends sfns
        ('extends = "rans"\nname = "cns"\n', "cns"),  # rans extends sans, which extends cns
    ],
)
def test_a_name_that_a_file_it_extends_has_is_refused(
    platform_error: Callable[..., SpecError], body: str, owner: str
) -> None:
    """Under its parent's name an 18-SSD rfns got the 36-SSD server's published times from
    `--wall-times printed` (the docs-audit finding)."""
    error = platform_error(body, "mine.toml")
    assert error.field == "name"
    assert error.detail.startswith(f"{owner!r} is the name of preset {owner}, which this file")
    assert f"or it would pass for {owner!r}" in error.detail


def test_a_presets_name_is_refused_on_any_users_file(
    platform_error: Callable[..., SpecError],
) -> None:
    """A copy of presets/rfns.toml (extends sfns, named rfns) with its counts edited passed
    for the 36-SSD RFNS (the review of the first fix); so did a file without `extends`."""
    copy = (resources.files("ndpkit.hw.presets") / "rfns.toml").read_text("utf-8")
    error = platform_error(copy.replace("count = 36", "count = 18"), "rfns18.toml")
    assert error.field == "name"
    assert error.detail.startswith("'rfns' is the name of preset rfns: a platform file needs")
    standalone = (resources.files("ndpkit.hw.presets") / "cns.toml").read_text("utf-8")
    assert "extends" not in standalone
    error = platform_error(standalone, "mycns.toml")
    assert error.detail.startswith("'cns' is the name of preset cns: ")


def test_a_name_that_a_users_parent_file_has_is_refused(
    tmp_path: Path, platform_error: Callable[..., SpecError]
) -> None:
    (tmp_path / "parent.toml").write_text('extends = "rans"\nname = "lab"\n')
    assert load_platform(tmp_path / "parent.toml").name == "lab"
    error = platform_error('extends = "parent.toml"\nname = "lab"\n', "child.toml")
    assert error.detail.startswith(f"'lab' is the name of {tmp_path / 'parent.toml'}")


def test_other_problems_are_reported_before_the_missing_name(
    platform_error: Callable[..., SpecError],
) -> None:
    error = platform_error('extends = "rans"\n[storage]\nread_bandwidth = "3 GHz"\n')
    assert error.field == "storage.read_bandwidth"


def test_presets_extend_presets_without_a_name_check() -> None:
    assert load_platform("rans").name == "rans"  # rans extends sans, which extends cns


@pytest.mark.parametrize("scheme", ["foo", "mux1x", "muxN", " mux2", "mux2\n", "mux0", "mux-2"])
def test_with_scheme_refuses_a_bad_scheme_before_rescaling_power(scheme: str) -> None:
    with pytest.raises(SpecError) as info:
        load_platform("rans").with_scheme(scheme)
    assert info.value.field == "switch_layer.scheme"
    assert "mux1, mux2, …, muxk or muxn" in info.value.detail


def test_with_scheme_still_rescales_a_declared_total() -> None:
    assert load_platform("rans").with_scheme("mux4").switch_layer.power_total_w == pytest.approx(
        0.009
    )


@pytest.mark.parametrize(
    ("kind", "hint"),
    [("amr", "did you mean 'arm'?"), ("FPGA", "did you mean 'fpga'?"), ("gpu", "'cpu'")],
)
def test_an_unknown_engine_kind_in_a_profile_names_file_and_field(
    tmp_path: Path, kind: str, hint: str
) -> None:
    path = tmp_path / "prof.toml"
    path.write_text(
        f'[apps.scan]\ndata_size = "2 TB"\nalpha = 20\nengine = {{ {kind} = "12 GB/s" }}\n'
    )
    with pytest.raises(SpecError) as info:
        load_profiles(path)
    assert info.value.source == str(path)
    assert info.value.field == "apps.scan.engine"
    assert f"unknown engine kind {kind!r}" in info.value.detail and hint in info.value.detail


def test_every_engine_kind_is_accepted_in_a_profile(tmp_path: Path) -> None:
    path = tmp_path / "prof.toml"
    rates = 'arm = "1 GB/s", fpga = "2 GB/s", cpu = "3 GB/s"'
    path.write_text(f'[apps.scan]\ndata_size = "2 TB"\nalpha = 20\nengine = {{ {rates} }}\n')
    assert load_profiles(path).apps["scan"].engine_bytes_per_s["cpu"] == 3e9


@pytest.mark.parametrize(
    ("table", "key", "value", "message"),
    [
        ("storage", "read_bandwidth", '"-3 GB/s"', "must be greater than zero, got '-3 GB/s'"),
        ("storage", "read_bandwidth", '"0 Gbps"', "must be greater than zero, got '0 Gbps'"),
        ("engines", "power_active", '"-5 mW"', "must not be negative, got '-5 mW'"),
        ("host", "frequency", '"-2 GHz"', "must be greater than zero, got '-2 GHz'"),
        ("engines", "wake_time", '"-1 ms"', "must not be negative, got '-1 ms'"),
    ],
)
def test_a_range_error_quotes_the_value_as_written(
    table: str, key: str, value: str, message: str, platform_error: Callable[..., SpecError]
) -> None:
    error = platform_error(f'extends = "rans"\nname = "x"\n[{table}]\n{key} = {value}\n')
    assert (error.field, error.detail) == (f"{table}.{key}", message)


@pytest.mark.parametrize(
    ("body", "field", "got"),
    [
        ("[storage]\ncount = true\n[engines]\ncount = true\n", "storage.count", "got true"),
        ('[storage]\ncount = "36"\n', "storage.count", "got '36'"),
        ("[storage]\ncount = 36.0\n", "storage.count", "got 36.0"),
        ("[engines]\ncores = false\n", "engines.cores", "got false"),
        ("[host]\nsockets = true\n", "host.sockets", "got true"),
        ("version = true\n", "version", "got true"),
    ],
)
def test_a_count_is_a_toml_integer(
    body: str, field: str, got: str, platform_error: Callable[..., SpecError]
) -> None:
    error = platform_error(f'extends = "rans"\nname = "x"\n{body}')
    assert error.field == field
    assert error.detail.startswith(f"expected a whole number, {got}")


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("alpha = true", "apps.x.alpha"),
        ('alpha = "8"', "apps.x.alpha"),
        ("cycles_per_byte = true", "apps.x.cycles_per_byte"),
    ],
)
def test_a_plain_number_in_a_profile_is_a_toml_number(
    tmp_path: Path, line: str, field: str
) -> None:
    path = tmp_path / "prof.toml"
    extra = "" if line.startswith("alpha") else "alpha = 2\n"
    path.write_text(f'[apps.x]\ndata_size = "1 GB"\n{extra}{line}\n')
    with pytest.raises(SpecError) as info:
        load_profiles(path)
    assert info.value.field == field
    assert info.value.detail.startswith("expected a number, got ")


def test_a_profile_cycle_count_is_a_whole_number(tmp_path: Path) -> None:
    path = tmp_path / "prof.toml"
    body = '[apps.x]\ndata_size = "1 GB"\nalpha = 2\n[apps.x.fpga_cell]\nbytes_per_cycle = 1\n'
    path.write_text(body + "pipeline_delay = true\n")
    with pytest.raises(SpecError) as info:
        load_profiles(path)
    assert (info.value.field, info.value.detail) == (
        "apps.x.fpga_cell.pipeline_delay",
        "expected a whole number, got true",
    )


def test_extends_is_among_the_valid_top_level_keys(
    platform_error: Callable[..., SpecError],
) -> None:
    """The loader takes `extends` out before validation; the hints still offer it."""
    error = platform_error('extnds = "rans"\nname = "x"\n')
    assert error.detail.startswith("unknown field; did you mean 'extends'?")
    error = platform_error('extends = "rans"\nname = "x"\n[foo]\na = 1\n')
    assert "valid keys here: description, engines, extends, host," in error.detail
    error = platform_error('extends = "rans"\nname = "x"\n[engines]\nextends = 1\n')
    assert "extends" not in error.detail.split("valid keys here:")[-1]
