"""Platform files: values that cannot be right are rejected, and every error names the
file that holds the bad value."""

import math
from collections.abc import Callable
from pathlib import Path

import pytest

from ndpkit.errors import SpecError, UnknownNameError
from ndpkit.hw import load_platform, preset_names
from ndpkit.hw.loader import MAX_EXTENDS, MAX_NESTING
from ndpkit.hw.quantity import MAX_COUNT
from ndpkit.profile import load_profiles


@pytest.mark.parametrize(
    ("table", "key", "value", "message"),
    [
        ("storage", "read_bandwidth", '"inf GB/s"', "not a finite number"),
        ("storage", "read_bandwidth", '"3e400 GB/s"', "not a finite number"),
        ("storage", "read_bandwidth", '"nan GB/s"', "not a finite number"),
        ("storage", "read_bandwidth", '"GB/s"', "'GB/s' has no number"),
        ("storage", "read_bandwidth", '"1e-400 GB/s"', "greater than zero"),  # underflows to 0
        ("storage", "read_bandwidth", '"1e-320 GB/s"', "out of range"),  # would divide to 0
        ("host_link", "bandwidth", '"inf GB/s"', "not a finite number"),
        ("host_link", "bandwidth", '"0 GB/s"', "greater than zero"),
        ("engines.throughput", "lc", '"inf GB/s"', "not a finite number"),
        ("engines.throughput", "lc", '{ size = "37 GiB", time = "0 s" }', "positive"),
        # a misspelt key of a measured rate got no hint, where every other key gets one
        ("engines.throughput", "he", '{ size = "3 GiB", tme = "1 s" }', "'time' for 'tme'?"),
        ("engines.throughput", "lc", '{ tme = "1 s" }', "did you mean 'time' for 'tme'?"),
        ("engines.throughput", "lc", '{ SIZE = "1 GB", time = "1 s" }', "'size' for 'SIZE'?"),
        ("engines.throughput", "lc", '{ size = "inf GiB", time = "1 s" }', "not a finite"),
        ("engines", "power_active", '"inf W"', "not a finite number"),
        ("engines", "power_active", '"W"', "has no number"),
        ("engines.bytes_per_cycle", "lc", "inf", "finite number"),  # TOML's inf is a float
        ("engines.bytes_per_cycle", "lc", "nan", "finite number"),
        ("engines.bytes_per_cycle", "lc", "0.0", "greater than 0"),
        ("engines.bytes_per_cycle", "lc", "1e300", "between"),
        # 0 is refused too, so the range must not offer it
        ("engines.bytes_per_cycle", "lc", "1e-300", "must be between 1e-24 and 1e+24, got 1e-300"),
        ("engines.pipeline_delay", "lc", "1_000_000_000_000_000_000", "less than or equal"),
        ("host", "frequency", '"0 GHz"', "greater than zero"),
        ("host", "cores_per_socket", "0", "greater than or equal to 1"),
        ("host", "cores_per_socket", "1_000_000_000_000_000_000_000", "less than or equal"),
        ("storage", "capacity", '"1e30 GB"', "out of range"),
        ("storage", "read_bandwidth", '"3 mB/s"', "did you mean '3 MB/s'?"),  # millibytes
        ("host_link", "bandwidth", '"20 mbps"', "did you mean '20 Mbps'?"),  # millibits
        ("storage", "read_bandwidth", '"3*2 GB/s"', "never numbers"),
        ("storage", "read_bandwidth", '"3 GB/s/2"', "never numbers"),
        ("engines", "power_active", '"10 dBm"', "logarithmic units (dB, dBm, Np)"),
        # pydantic's "Input should be 'arm', 'fpga' or 'cpu'" named neither the value nor
        # the choice meant, where a profile's engine table says "did you mean 'arm'?"
        (
            "engines",
            "kind",
            '"ARM"',
            "must be 'arm', 'fpga' or 'cpu', got 'ARM'; did you mean 'arm'?",
        ),
        ("engines", "kind", '"fgpa"', "got 'fgpa'; did you mean 'fpga'?"),
        ("engines", "kind", '"gpu"', "must be 'arm', 'fpga' or 'cpu', got 'gpu'"),
        ("engines", "placement", '"channels"', "got 'channels'; did you mean 'channel'?"),
        # as the file spells it: "got True" was Python's spelling
        ("engines", "kind", "true", "must be 'arm', 'fpga' or 'cpu', got true"),
        # pydantic's "Input should be a valid string", "… greater than or equal to 1" and
        # "… a finite number" named no value given
        ("switch_layer", "scheme", "2", "expected a string (in quotes), got 2"),
        ("host_link", "description", "5", "expected a string (in quotes), got 5"),
        ("host_link", "lanes", "0", "greater than or equal to 1, got 0"),
        ("engines.pipeline_delay", "lc", "-1", "greater than or equal to 0, got -1"),
        ("engines.bytes_per_cycle", "lc", "nan", "should be a finite number, got nan"),
    ],
)
def test_a_value_that_cannot_be_right_is_an_error(
    tmp_path: Path,
    table: str,
    key: str,
    value: str,
    message: str,
    platform_error: Callable[..., SpecError],
) -> None:
    error = platform_error(f'extends = "rans"\n[{table}]\n{key} = {value}\n')
    assert error.source == str(tmp_path / "mine.toml")
    assert error.field == f"{table}.{key}"
    assert message in error.detail


def test_a_count_beyond_the_limit_is_an_error(platform_error: Callable[..., SpecError]) -> None:
    count = MAX_COUNT + 1
    body = f'extends = "rans"\n[storage]\ncount = {count}\n[engines]\ncount = {count}\n'
    error = platform_error(body)
    assert error.field in ("storage.count", "engines.count")
    assert f"less than or equal to {MAX_COUNT}" in error.detail


def test_a_count_at_the_limit_loads(tmp_path: Path) -> None:
    path = tmp_path / "big.toml"
    path.write_text(
        f'extends = "rans"\nname = "big"\n[storage]\ncount = {MAX_COUNT}\n'
        f"[engines]\ncount = {MAX_COUNT}\n"
    )
    assert load_platform(path).devices == MAX_COUNT


def test_an_error_in_the_parent_names_the_parent(
    tmp_path: Path, platform_error: Callable[..., SpecError]
) -> None:
    (tmp_path / "bad-unit.toml").write_text(
        'extends = "rans"\n[storage]\nread_bandwidth = "3 GHz"\n'
    )
    error = platform_error('extends = "bad-unit.toml"\nname = "child"\n', "child.toml")
    assert error.source == str(tmp_path / "bad-unit.toml")
    assert error.field == "storage.read_bandwidth"
    assert "not a bandwidth" in error.detail


def test_an_error_in_the_child_names_the_child_even_if_the_parent_sets_the_key(
    tmp_path: Path, platform_error: Callable[..., SpecError]
) -> None:
    (tmp_path / "parent.toml").write_text('extends = "rans"\n[host_link]\nbandwidth = "1 GB/s"\n')
    error = platform_error(
        'extends = "parent.toml"\n[host_link]\nbandwidth = "inf GB/s"\n', "child.toml"
    )
    assert error.source == str(tmp_path / "child.toml")
    assert error.field == "host_link.bandwidth"


def test_an_error_in_a_grandparent_names_it(
    tmp_path: Path, platform_error: Callable[..., SpecError]
) -> None:
    (tmp_path / "a.toml").write_text('extends = "rans"\n[engines]\npower_idle = "-1 W"\n')
    (tmp_path / "b.toml").write_text('extends = "a.toml"\nname = "b"\n')
    error = platform_error('extends = "b.toml"\nname = "c"\n', "c.toml")
    assert error.source == str(tmp_path / "a.toml")


def test_a_missing_field_names_the_file_that_was_loaded(
    tmp_path: Path, platform_error: Callable[..., SpecError]
) -> None:
    (tmp_path / "parent.toml").write_text('name = "p"\n[storage]\ncount = 1\n')
    error = platform_error('extends = "parent.toml"\n', "child.toml")
    assert error.source == str(tmp_path / "child.toml")
    assert "required field is missing" in error.detail


def test_an_unknown_extends_names_the_file_and_lists_every_preset(
    tmp_path: Path, platform_error: Callable[..., SpecError]
) -> None:
    error = platform_error('extends = "ransx"\n', "bad-extends.toml")
    assert error.source == str(tmp_path / "bad-extends.toml")
    assert error.field == "extends"
    assert "unknown platform 'ransx'" in error.detail
    assert f"known: {', '.join(preset_names())}" in error.detail
    assert {"risp-64ch", "risp-baseline"} <= set(preset_names())


def test_an_unknown_preset_on_the_command_line_is_still_an_unknown_name() -> None:
    with pytest.raises(UnknownNameError, match="risp-64ch, risp-baseline"):
        load_platform("ransx")


def test_a_missing_parent_file_names_the_file_that_extends_it(
    tmp_path: Path, platform_error: Callable[..., SpecError]
) -> None:
    error = platform_error('extends = "nope.toml"\n', "child.toml")
    assert error.source == str(tmp_path / "child.toml")
    assert error.field == "extends"
    assert "file not found" in error.detail and "nope.toml" in error.detail


def test_a_cycle_names_the_file_that_closes_it(
    tmp_path: Path, platform_error: Callable[..., SpecError]
) -> None:
    (tmp_path / "b.toml").write_text('extends = "a.toml"\n')
    error = platform_error('extends = "b.toml"\n', "a.toml")
    assert error.source == str(tmp_path / "b.toml")
    assert error.field == "extends"
    assert "a.toml -> " in error.detail and "b.toml -> " in error.detail


def test_a_cycle_through_another_spelling_of_the_path_is_found(
    tmp_path: Path, platform_error: Callable[..., SpecError]
) -> None:
    (tmp_path / "d").mkdir()
    error = platform_error('extends = "../d/a.toml"\n', "d/a.toml")
    assert error.field == "extends"
    assert error.detail.startswith("forms a cycle")


def _chain(tmp_path: Path, files: int) -> Path:
    """c0.toml extends rans (3 presets), c1.toml extends c0.toml, …; the last one's path."""
    for i in range(files):
        parent = "rans" if i == 0 else f"c{i - 1}.toml"
        (tmp_path / f"c{i}.toml").write_text(f'extends = "{parent}"\nname = "c{i}"\n')
    return tmp_path / f"c{files - 1}.toml"


def test_an_extends_chain_at_the_limit_loads(tmp_path: Path) -> None:
    assert load_platform(_chain(tmp_path, MAX_EXTENDS - 3)).name == f"c{MAX_EXTENDS - 4}"


@pytest.mark.parametrize("files", [MAX_EXTENDS - 2, 1000])  # 1000 was a RecursionError
def test_an_extends_chain_beyond_the_limit_names_the_file_loaded(
    tmp_path: Path, files: int
) -> None:
    top = _chain(tmp_path, files)
    with pytest.raises(SpecError) as info:
        load_platform(top)
    assert info.value.source == str(top)
    assert info.value.field == "extends"
    assert f"longer than {MAX_EXTENDS} files" in info.value.detail


@pytest.mark.parametrize(
    "body",
    [
        "description = " + "[" * 100_000 + "]" * 100_000,  # RecursionError in tomllib
        "description = " + "{a=" * 3000 + "1" + "}" * 3000,
        "description = " + "[" * (MAX_NESTING) + "]" * (MAX_NESTING),  # one level too deep
        "[engines.throughput]\nhe." + ".".join(["a"] * 3000) + " = 1",
    ],
    ids=["arrays-100k", "inline-tables-3000", "arrays-limit", "dotted-keys-3000"],
)
def test_a_file_nested_too_deeply_is_one_error(
    tmp_path: Path, body: str, platform_error: Callable[..., SpecError]
) -> None:
    error = platform_error(f'extends = "rans"\nname = "x"\n{body}\n')
    assert error.source == str(tmp_path / "mine.toml")
    assert error.detail == (
        f"nested too deeply: arrays and tables may be at most {MAX_NESTING} levels deep"
    )


def test_deep_tables_in_a_parent_and_a_child_are_refused_before_merging(
    tmp_path: Path, platform_error: Callable[..., SpecError]
) -> None:
    """Merging two 3000-deep tables key by key recursed 3000 times."""
    deep = "description." + ".".join(["a"] * 3000) + " = 1\n"
    (tmp_path / "parent.toml").write_text(f'extends = "rans"\nname = "p"\n{deep}')
    error = platform_error(f'extends = "parent.toml"\nname = "c"\n{deep}', "child.toml")
    assert error.source == str(tmp_path / "child.toml")
    assert error.detail.startswith("nested too deeply")


def test_nesting_at_the_limit_is_read(platform_error: Callable[..., SpecError]) -> None:
    """The top table is level 1: a list MAX_NESTING - 1 deep inside it is read (and then
    refused for what it is, not for its depth)."""
    depth = MAX_NESTING - 1
    error = platform_error(f'extends = "rans"\ndescription = {"[" * depth}{"]" * depth}\n')
    assert error.field == "description"
    assert "nested" not in error.detail


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.toml"
    path.write_bytes(b'\xef\xbb\xbfextends = "rans"\nname = "bom"\n')
    assert load_platform(path).name == "bom"


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        (
            'extends = "rans"\n[engines]\npower_activ = "5 W"\n',
            "engines.power_activ",
            "'power_active'",
        ),
        ('extends = "rans"\n[host]\nfrequency_hz = "5 GHz"\n', "host.frequency_hz", "'frequency'"),
        ('extends = "rans"\nturbo = 1\n', "turbo", "valid keys here: description, engines"),
        (
            'extends = "rans"\n[storage.link]\nbandwith = "1 GB/s"\n',
            "storage.link.bandwith",
            "'bandwidth'",
        ),
    ],
)
def test_an_unknown_key_gets_the_valid_ones(
    body: str, field: str, message: str, platform_error: Callable[..., SpecError]
) -> None:
    error = platform_error(body)
    assert error.field == field
    assert error.detail.startswith("unknown field")
    assert message in error.detail
    assert "platforms show" not in error.detail


def test_a_derived_platform_refuses_an_infinite_value() -> None:
    """Values computed by code (here a cell clock) are checked too: no inf reaches the
    models or the simulator's JSON spec."""
    with pytest.raises(SpecError, match="finite number"):
        load_platform("risp-64ch").with_cell_clock(math.inf)


def test_a_value_where_a_table_goes_says_so_without_class_names(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('extends = "rans"\nname = "mine"\nstorage = 5\n')
    with pytest.raises(SpecError, match="storage: expected a table of keys, got 5") as caught:
        load_platform(path)
    assert "StorageDevice" not in str(caught.value)


def test_a_misspelt_key_is_reported_before_the_key_it_leaves_missing(tmp_path: Path) -> None:
    path = tmp_path / "profiles.toml"
    path.write_text("[apps.lc]\nalpah = 8\n")
    with pytest.raises(SpecError, match=r"apps\.lc\.alpah: unknown field; did you mean 'alpha'"):
        load_profiles(path)


def test_a_misspelt_key_blames_the_file_that_wrote_it(tmp_path: Path) -> None:
    (tmp_path / "base.toml").write_text(
        'extends = "rans"\nname = "base"\n[storage]\nread_bandwidth = "-3 GB/s"\n'
    )
    child = tmp_path / "child.toml"
    child.write_text('extends = "base.toml"\nname = "child"\n[engines]\npower_activ = "5 W"\n')
    with pytest.raises(SpecError, match=r"child\.toml: engines\.power_activ: unknown field"):
        load_platform(child)


@pytest.mark.parametrize(
    ("base", "table", "body", "key"),
    [
        ("rans", "host", 'power_active = "10 W"\npower_idle = "95 W"', "power_active"),
        ("rans", "engines", 'power_active = "1 W"\npower_idle = "2 W"', "power_active"),
        (
            "rans",
            "engines",
            'power_idle = "5 W"\n[engines.power_active_by_app]\nhe = "1 W"',
            "power_active_by_app.he",
        ),
        ("rans", "storage", 'power_active = "1 W"\npower_idle = "5 W"', "power_active"),
        (
            "risp-64ch",
            "storage",
            'channel_power_active = "1 mW"\nchannel_power_idle = "5 mW"',
            "channel_power_active",
        ),
        (
            "risp-64ch",
            "storage.controller",
            'power_active = "1 mW"\npower_idle = "5 mW"',
            "power_active",
        ),
    ],
)
def test_a_busy_power_below_the_idle_one_is_an_error(
    tmp_path: Path,
    base: str,
    table: str,
    body: str,
    key: str,
    platform_error: Callable[..., SpecError],
) -> None:
    """Form B charges the host P_active - P_idle: with the two swapped, a run's energy came
    out negative (and its MB/J infinite)."""
    error = platform_error(f'extends = "{base}"\n[{table}]\n{body}\n')
    assert error.source == str(tmp_path / "mine.toml")
    assert error.field == f"{table}.{key}"  # it named the table alone
    assert error.detail.startswith(f"{key} (")
    # the channel's idle power by its own key: it said "is below power_idle"
    idle = "channel_power_idle" if key.startswith("channel_") else "power_idle"
    assert f"is below {idle} (" in error.detail


@pytest.mark.parametrize(
    ("table", "body", "field"),
    [
        ("host", 'power_idle = "700 W"', "host.power_idle"),
        ("host", 'power_active = "20 W"', "host.power_active"),
        ("engines", 'power_idle = "9 W"', "engines.power_idle"),
        ("engines", 'power_off = "9 W"', "engines.power_off"),
    ],
)
def test_a_power_check_names_the_power_the_file_changed(
    table: str, body: str, field: str, platform_error: Callable[..., SpecError]
) -> None:
    """rans's host draws 613.7 W busy and 30.33 W idle, its engines 5.76 W: a file that
    raises one idle power past them is blamed for that power, not the other it compares."""
    error = platform_error(f'extends = "rans"\nname = "x"\n[{table}]\n{body}\n')
    assert error.field == field


@pytest.mark.parametrize(
    "body",
    ['power_off = "100 W"', 'power_idle = "5 W"\npower_off = "6 W"'],
    ids=["above active", "above idle"],
)
def test_an_off_power_above_the_on_power_is_an_error(
    tmp_path: Path, body: str, platform_error: Callable[..., SpecError]
) -> None:
    """100 W off beside 5.76 W on was accepted, and `plan --optimal` priced every engine it
    switched off at 100 W."""
    error = platform_error(f'extends = "rans"\n[engines]\n{body}\n')
    assert error.source == str(tmp_path / "mine.toml") and error.field == "engines.power_off"
    assert error.detail.startswith("power_off (") and "above the engine's power while on" in (
        error.detail
    )


def test_equal_busy_and_idle_powers_load(tmp_path: Path) -> None:
    path = tmp_path / "flat.toml"
    path.write_text(
        'extends = "rans"\nname = "flat"\n[host]\npower_active = "95 W"\npower_idle = "95 W"\n'
    )
    assert load_platform(path).host.power_active_w == 95


def test_ru_calibration_works_where_cells_draw_a_little_while_off(tmp_path: Path) -> None:
    """Calibration probes per-app cell powers at 0 W; the off-power rule must not refuse the
    probe on a platform whose cells draw 1 mW while off."""
    from ndpkit.model import Options  # noqa: PLC0415
    from ndpkit.plan.channels import LinearFit, calibrate_ru_power  # noqa: PLC0415
    from ndpkit.profile import load_profile  # noqa: PLC0415

    path = tmp_path / "off.toml"
    path.write_text('extends = "risp-64ch"\nname = "off"\n[engines]\npower_off = "1 mW"\n')
    platform = load_platform(path).with_interface("sata-3.2").with_cell_clock(1e8)
    fixed_w, cell_w = calibrate_ru_power(
        platform, load_profile("sobel", "risp"), LinearFit(1.858, 0.032), Options(units="decimal")
    )
    assert fixed_w > 0 and cell_w > 0


def test_ru_calibration_works_where_cells_declare_an_idle_power(tmp_path: Path) -> None:
    """The 0 W probe was refused as a cell busy below its idle power. The in-storage model
    prices no cell idle power of its own, so the fit is the same as without one."""
    from ndpkit.model import Options  # noqa: PLC0415
    from ndpkit.plan.channels import LinearFit, calibrate_ru_power  # noqa: PLC0415
    from ndpkit.profile import load_profile  # noqa: PLC0415

    fits = []
    for idle in ("0 W", "1 mW"):
        path = tmp_path / "idle.toml"
        path.write_text(f'extends = "risp-64ch"\nname = "idle"\n[engines]\npower_idle = "{idle}"\n')
        platform = load_platform(path).with_interface("sata-3.2").with_cell_clock(1e8)
        options = Options(units="decimal")
        target = LinearFit(1.858, 0.032)
        fits.append(calibrate_ru_power(platform, load_profile("sobel", "risp"), target, options))
    assert fits[1] == fits[0]
    assert fits[0][0] > 0 and fits[0][1] > 0


def test_a_profiles_engine_power_below_the_off_power_is_refused(tmp_path: Path) -> None:
    """The profile's engine power was copied in without the platform's checks, so engines
    drawing 0.5 W on and 1 W off were priced."""
    from ndpkit.model import estimate  # noqa: PLC0415
    from ndpkit.profile import load_profile  # noqa: PLC0415

    path = tmp_path / "off.toml"
    path.write_text('extends = "rans"\nname = "off"\n[engines]\npower_off = "1 W"\n')
    profile = load_profile("lc").with_changes(engine_power_active_w={"arm": 0.5})
    with pytest.raises(SpecError, match=r"0\.5 W is below the power_off of the engines"):
        estimate(load_platform(path), profile)
