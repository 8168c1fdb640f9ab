"""A loaded platform written back as a file (`platform_toml`, `platforms show -f toml`)
loads to the same platform: every preset, the sweeps' variants of them, and a file that
extends a preset."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ndpkit.errors import SpecError
from ndpkit.hw import Platform, load_platform, platform_toml, preset_names
from ndpkit.hw.writer import quantity_text
from ndpkit.units import MAX_SI, MIN_SI, Kind, parse


def _variants() -> list[tuple[str, Platform]]:
    out = []
    for name in preset_names():
        platform = load_platform(name)
        out.append((name, platform))
        if platform.is_in_storage:
            out.append((f"{name} with 16 channels", platform.with_channels(16)))
            out.append((f"{name} behind pcie3-x4", platform.with_interface("pcie3-x4")))
            if platform.engines is not None:
                out.append((f"{name} cells at 200 MHz", platform.with_cell_clock(200e6)))
        elif platform.engines is not None and platform.devices > 1:
            for scheme in ("mux1", "mux3", "muxn"):
                out.append((f"{name} {scheme}", platform.with_scheme(scheme)))
            out.append((f"{name} x7", platform.with_engine_count(7)))
            out.append((f"{name} x7 mux1 mux2", platform.with_engine_count(7).with_scheme("mux1")))
    return out


VARIANTS = _variants()


def _reloaded(platform: Platform, folder: Path) -> Platform:
    path = folder / "copy.toml"
    path.write_text(platform_toml(platform, name="copy"), encoding="utf-8")
    return load_platform(path)


@pytest.mark.parametrize(("label", "platform"), VARIANTS, ids=[label for label, _ in VARIANTS])
def test_a_written_platform_loads_to_the_same_fields(
    label: str, platform: Platform, tmp_path: Path
) -> None:
    again = _reloaded(platform, tmp_path)
    assert again.name == "copy"
    assert again.model_dump() == {**platform.model_dump(), "name": "copy"}, label
    # what the energy model charges for the switch layer, kept totals included
    devices = platform.devices
    assert again.switch_layer.power_w(devices) == platform.switch_layer.power_w(devices)


@pytest.mark.parametrize("scheme", ["mux2", "mux3", "muxn"])
def test_a_layer_rewired_to_mux1_and_back_charges_as_the_original(
    scheme: str, tmp_path: Path
) -> None:
    """The total a mux1 layer keeps is written with the element count it is for, so the
    copy rewired again is charged per element as the original is (18 mW over 18 mux2
    elements: 1 mW for muxn's one, 6 mW for mux3's 12), not the whole total."""
    platform = load_platform("rfns").with_scheme("mux1")
    assert (
        tomllib.loads(platform_toml(platform, name="copy"))["switch_layer"]["power_total_elements"]
        == 18
    )
    copy = _reloaded(platform, tmp_path)
    assert copy.switch_layer.power_w(36) == 0.0
    original = platform.with_scheme(scheme).switch_layer.power_w(36)
    assert copy.with_scheme(scheme).switch_layer.power_w(36) == original
    assert original == pytest.approx(
        0.018 * load_platform("rfns").with_scheme(scheme).switch_layer.elements(36) / 18
    )


def test_a_file_that_extends_a_mux1_copy_charges_as_one_that_extends_the_preset(
    tmp_path: Path,
) -> None:
    (tmp_path / "mux1.toml").write_text(
        'extends = "rfns"\nname = "rfns-mux1"\n[switch_layer]\nscheme = "mux1"\n'
    )
    copy = tmp_path / "copy.toml"
    copy.write_text(platform_toml(load_platform(tmp_path / "mux1.toml"), name="copy"))
    for parent in ("mux1.toml", "copy.toml"):
        (tmp_path / f"child-{parent}").write_text(
            f'extends = "{parent}"\nname = "child"\n[switch_layer]\nscheme = "mux3"\n'
        )
    by_preset = load_platform(tmp_path / "child-mux1.toml").switch_layer.power_w(36)
    by_copy = load_platform(tmp_path / "child-copy.toml").switch_layer.power_w(36)
    assert by_copy == by_preset == pytest.approx(0.018 * 12 / 18)


def test_a_file_that_extends_a_preset_is_written_flat(tmp_path: Path) -> None:
    child = tmp_path / "mine.toml"
    child.write_text(
        'extends = "rans"\nname = "mine"\n[engines]\nfrequency = "2 GHz"\n'
        '[engines.throughput]\nhe = { size = "3.4 GiB", time = "0.99 s" }\n',
        encoding="utf-8",
    )
    platform = load_platform(child)
    text = platform_toml(platform)
    table = tomllib.loads(text)
    assert "extends" not in table
    assert table["name"] == "mine"
    assert table["engines"]["frequency"] == "2 GHz"
    assert table["storage"]["count"] == 36  # from rans, which no longer needs to be read
    flat = tmp_path / "flat.toml"
    flat.write_text(text, encoding="utf-8")
    assert load_platform(flat) == platform


def test_a_copy_can_be_edited_like_any_platform_file(tmp_path: Path) -> None:
    text = platform_toml(load_platform("rans"), name="rans-wide")
    assert 'bandwidth = "36 GiB/s"' in text  # readable where exact
    path = tmp_path / "wide.toml"
    path.write_text(text.replace('bandwidth = "36 GiB/s"', 'bandwidth = "72 GiB/s"', 1))
    assert load_platform(path).host_link.bandwidth_bytes_per_s == 72 * 2**30


def test_defaults_are_left_out() -> None:
    table = tomllib.loads(platform_toml(load_platform("risp-64ch"), name="copy"))
    assert "latency" not in table["host_link"]  # the interface's own default
    assert table["version"] == 1


_KINDS = st.sampled_from(list(Kind))
_SI = st.floats(min_value=MIN_SI, max_value=MAX_SI, allow_nan=False, allow_infinity=False)


@given(value=_SI, kind=_KINDS)
def test_a_quantity_is_written_exactly(value: float, kind: Kind) -> None:
    text = quantity_text(value, kind)
    assert parse(text, kind) == value, text


@given(value=_SI, kind=_KINDS)
def test_a_quantity_is_written_in_at_most_17_significant_digits(value: float, kind: Kind) -> None:
    number = quantity_text(value, kind).split()[0]
    digits = number.split("e")[0].replace(".", "").replace("-", "").lstrip("0")
    assert 1 <= len(digits) <= 17 or math.isclose(float(number), 0.0)


def test_a_total_declared_over_a_mux1_copy_is_for_the_files_own_layer(tmp_path: Path) -> None:
    """A file that declares its own power_total is charged it, whether it extends the
    preset or a -f toml copy of it rewired to mux1 (whose power_total_elements is for the
    copy's total, not for the new one)."""
    (tmp_path / "mux1.toml").write_text(
        'extends = "rfns"\nname = "rfns-mux1"\n[switch_layer]\nscheme = "mux1"\n'
    )
    (tmp_path / "copy.toml").write_text(
        platform_toml(load_platform(tmp_path / "mux1.toml"), name="copy")
    )
    charged = {}
    for parent in ("rfns", "mux1.toml", "copy.toml"):
        child = tmp_path / "child.toml"
        child.write_text(
            f'extends = "{parent}"\nname = "child"\n'
            '[switch_layer]\nscheme = "mux3"\npower_total = "36 mW"\n'
        )
        charged[parent] = load_platform(child).switch_layer.power_w(36)
    assert charged["copy.toml"] == charged["mux1.toml"] == charged["rfns"]
    assert charged["rfns"] == pytest.approx(0.036)


@pytest.mark.parametrize("text", ["del \u007f", 'quote " backslash \\ \n tab \t é ソ \u0001'])
def test_any_description_or_app_name_is_written_as_a_loadable_string(
    text: str, tmp_path: Path
) -> None:
    """JSON's string escapes are TOML's but for DEL, which JSON leaves bare and TOML
    refuses: a description or app name holding one made a copy that did not load."""
    rans = load_platform("rans")
    assert rans.engines is not None
    engines = rans.engines.model_copy(update={"throughput": {**rans.engines.throughput, text: 3e9}})
    platform = rans.model_copy(update={"description": text, "engines": engines})
    again = _reloaded(platform, tmp_path)
    assert again.description == text
    assert again.engines is not None and again.engines.throughput[text] == 3e9


def test_a_preset_written_without_a_name_loads_as_its_copy(tmp_path: Path) -> None:
    """A file may not take a preset's name: `platform_toml(load_platform("rans"))` wrote
    `name = "rans"`, which load_platform then refused. It is named as the command line
    names it, rans-copy."""
    path = tmp_path / "copy.toml"
    path.write_text(platform_toml(load_platform("rans")), encoding="utf-8")
    copy = load_platform(path)
    assert copy.name == "rans-copy"
    assert copy.model_dump() == {**load_platform("rans").model_dump(), "name": "rans-copy"}


@pytest.mark.parametrize("name", ["rfns", "", " x"])
def test_a_name_the_file_could_not_load_with_is_refused(name: str) -> None:
    with pytest.raises(SpecError) as caught:
        platform_toml(load_platform("rans"), name=name)
    assert caught.value.field == "name"
