"""A switch-layer `power_total` inherited through `extends` fits the file's own layer: it
was declared for the parent's mux elements, and a child with another scheme, device count
or element power was charged the parent's total (rfns's 18 mW) without a word."""

from __future__ import annotations

import csv
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from ndpkit.hw import load_platform
from ndpkit.hw.loader import load_platform_noted

RFNS_36 = load_platform("rfns")


def _write(tmp_path: Path, body: str, name: str = "mine.toml") -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def _switch_w(path: Path) -> float:
    platform = load_platform(path)
    return platform.switch_layer.power_w(platform.devices)


@pytest.mark.parametrize("scheme", ["mux3", "mux4", "mux6", "muxn"])
def test_another_scheme_is_charged_as_with_scheme_charges_it(tmp_path: Path, scheme: str) -> None:
    path = _write(
        tmp_path, f'extends = "rfns"\nname = "mine"\n[switch_layer]\nscheme = "{scheme}"\n'
    )
    expected = RFNS_36.with_scheme(scheme)
    assert _switch_w(path) == pytest.approx(expected.switch_layer.power_w(36), rel=1e-12)
    # per element, the preset's declared 18 mW over its 18 elements
    elements = expected.switch_layer.elements(36)
    assert _switch_w(path) == pytest.approx(0.018 / 18 * elements, rel=1e-12)


@pytest.mark.parametrize("count", [2, 7, 18, 35])
def test_another_count_is_charged_as_with_engine_count_charges_it(
    tmp_path: Path, count: int
) -> None:
    path = _write(
        tmp_path,
        f'extends = "rfns"\nname = "mine"\n'
        f"[storage]\ncount = {count}\n[engines]\ncount = {count}\n",
    )
    expected = RFNS_36.with_engine_count(count).switch_layer.power_w(count)
    assert _switch_w(path) == pytest.approx(expected, rel=1e-12)
    assert _switch_w(path) < 0.018


def test_a_grandchild_scales_the_total_from_the_file_that_declared_it(tmp_path: Path) -> None:
    _write(
        tmp_path,
        'extends = "rfns"\nname = "r7"\n[storage]\ncount = 7\n[engines]\ncount = 7\n',
        "r7.toml",
    )
    path = _write(tmp_path, 'extends = "r7.toml"\nname = "r7m4"\n[switch_layer]\nscheme = "mux4"\n')
    expected = RFNS_36.with_engine_count(7).with_scheme("mux4").switch_layer.power_w(7)
    assert _switch_w(path) == pytest.approx(expected, rel=1e-12)


def test_another_element_power_drops_the_inherited_total(tmp_path: Path) -> None:
    path = _write(
        tmp_path, 'extends = "rfns"\nname = "mine"\n[switch_layer]\nelement_power = "5 mW"\n'
    )
    platform = load_platform(path)
    assert platform.switch_layer.power_total_w is None
    assert _switch_w(path) == pytest.approx(18 * 0.005, rel=1e-12)


def test_the_same_element_power_spelt_otherwise_keeps_the_total(tmp_path: Path) -> None:
    path = _write(
        tmp_path, 'extends = "rfns"\nname = "mine"\n[switch_layer]\nelement_power = "990 uW"\n'
    )
    assert load_platform(path).switch_layer == RFNS_36.switch_layer


def test_a_total_the_file_declares_itself_is_kept(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        'extends = "rfns"\nname = "mine"\n[switch_layer]\nscheme = "mux4"\npower_total = "5 mW"\n',
    )
    assert _switch_w(path) == pytest.approx(0.005)
    platform, notes = load_platform_noted(path)
    assert notes == []
    assert platform.switch_layer.description == RFNS_36.switch_layer.description


def test_an_unchanged_layer_is_left_alone(tmp_path: Path) -> None:
    path = _write(tmp_path, 'extends = "rfns"\nname = "mine"\n[host]\npower_idle = "31 W"\n')
    platform, notes = load_platform_noted(path)
    assert platform.switch_layer == RFNS_36.switch_layer
    assert notes == []


def test_check_notes_the_fitted_total_and_show_says_it(
    tmp_path: Path, ndpkit: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    path = _write(tmp_path, 'extends = "rfns"\nname = "mine"\n[switch_layer]\nscheme = "muxn"\n')
    checked = ndpkit("platforms", "check", str(path))
    assert checked.returncode == 0, checked.stderr
    assert checked.stderr.startswith(f"note: {path}: switch_layer.power_total: preset rfns ")
    assert "1 mW" in checked.stderr
    shown = ndpkit("platforms", "show", "-f", "csv", str(path))
    rows = {row[1]: row[2:] for row in csv.reader(shown.stdout.splitlines())}
    assert rows["switch_layer.power_total_w"] == ["0.001", "W"]
    assert "scaled per element" in rows["switch_layer.description"][0]


@pytest.mark.parametrize("count", [7, 20, 36])
def test_a_mux1_child_rewired_to_mux2_pays_per_element(tmp_path: Path, count: int) -> None:
    """A mux1 child draws nothing, but keeps the total with the count it was declared for:
    rewired by with_scheme (plan --scheme mux2) it pays what the preset's mux1 view pays,
    where it was charged the parent's whole 18 mW for 3 elements (7 SSDs)."""
    path = _write(
        tmp_path,
        f'extends = "rfns"\nname = "mine"\n[storage]\ncount = {count}\n'
        f'[engines]\ncount = {count}\n[switch_layer]\nscheme = "mux1"\n',
    )
    mine = load_platform(path)
    assert mine.switch_layer.power_w(count) == 0.0
    view = RFNS_36.with_engine_count(count).with_scheme("mux1")
    for rewire in (
        lambda p: p.with_scheme("mux2"),
        lambda p: p.with_scheme("mux4"),
        lambda p: p.with_engine_count(12).with_scheme("mux2"),
    ):
        got, expected = rewire(mine), rewire(view)
        assert got.switch_layer.power_w(got.devices) == pytest.approx(
            expected.switch_layer.power_w(expected.devices), rel=1e-12
        )
        elements = got.switch_layer.elements(got.devices)
        assert got.switch_layer.power_w(got.devices) == pytest.approx(
            0.018 / 18 * elements, rel=1e-12
        )


def test_a_mux1_child_with_another_element_power_is_charged_per_element(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        'extends = "rfns"\nname = "mine"\n'
        '[switch_layer]\nscheme = "mux1"\nelement_power = "5 mW"\n',
    )
    rewired = load_platform(path).with_scheme("mux2")
    assert rewired.switch_layer.power_w(36) == pytest.approx(18 * 0.005, rel=1e-12)
