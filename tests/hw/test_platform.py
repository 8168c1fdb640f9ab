"""Presets load with the paper's values; bad specs fail naming file and field."""

from pathlib import Path

import pytest

from ndpkit.errors import SpecError, UnknownNameError
from ndpkit.hw import load_platform, preset_names

GIB = 2**30


def test_every_seed_platform_is_shipped() -> None:
    assert {"cns", "sans", "sfns", "rans", "rfns"} <= set(preset_names())


def test_rans_has_the_papers_parameters() -> None:
    rans = load_platform("rans")
    assert rans.devices == 36
    assert rans.engines is not None and rans.engines.kind == "arm"
    assert rans.engines.count == 36
    assert rans.engines.power_on_w("lc") == pytest.approx(5.76)
    assert rans.storage.device_bandwidth_bytes_per_s == 3 * GIB
    assert rans.devices * rans.storage.device_bandwidth_bytes_per_s == 108 * GIB
    assert rans.host_link.bandwidth_bytes_per_s == 36 * GIB
    assert rans.host_link.lanes == 48
    assert rans.pcie_switch.lanes_device_side == 144
    assert rans.host.power_active_w == pytest.approx(613.70)
    assert rans.host.power_idle_w == pytest.approx(30.33)
    assert rans.host.cores == 36
    assert rans.switch_layer.scheme == "mux2"
    assert rans.switch_layer.elements(36) == 18
    assert rans.switch_layer.power_w(36) == pytest.approx(0.018)
    assert rans.switch_layer.power_w(36, declared_total=False) == pytest.approx(0.01782)
    assert rans.switch_layer.port_bandwidth_bytes_per_s == pytest.approx(2.5e9)


def test_rfns_fpga_power_per_app_matches_section_5_1() -> None:
    engines = load_platform("rfns").engines
    assert engines is not None
    expected = {
        "lc": 421.20,
        "he": 743.40,
        "fft2d": 652.68,
        "knn2": 420.48,
        "knn6": 429.84,
        "knn8": 432.00,
    }
    for app, total_w in expected.items():
        assert 36 * engines.power_on_w(app) == pytest.approx(total_w), app


def test_engine_throughput_is_single_engine_measurement() -> None:
    sfns = load_platform("sfns")
    assert sfns.engines is not None
    assert sfns.engines.bandwidth_bytes_per_s("lc") == pytest.approx(37 * GIB / 13.45)


def test_cns_has_no_engines_and_sans_one_ssd() -> None:
    assert load_platform("cns").engines is None
    assert load_platform("sans").devices == 1


def test_with_scheme_and_engine_count_revalidate() -> None:
    rfns = load_platform("rfns")
    assert rfns.with_scheme("mux1").switch_layer.power_w(36) == 0.0
    assert rfns.with_engine_count(8).devices == 8
    with pytest.raises(SpecError, match="spans 40 devices"):
        rfns.with_scheme("mux40")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mine.toml"
    path.write_text(text)
    return path


def test_user_file_extends_a_preset(tmp_path: Path) -> None:
    path = _write(
        tmp_path, 'extends = "rfns"\nname = "mine"\n[storage]\ncount = 8\n[engines]\ncount = 8\n'
    )
    mine = load_platform(path)
    assert mine.name == "mine" and mine.devices == 8
    assert mine.host.power_active_w == pytest.approx(613.70)


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        (
            'extends = "rans"\n[storage]\nread_bandwidth = "-3 GB/s"\n',
            "storage.read_bandwidth",
            "greater than zero",
        ),
        (
            'extends = "rans"\n[storage]\nread_bandwidth = "0 GB/s"\n',
            "storage.read_bandwidth",
            "greater than zero",
        ),
        (
            'extends = "rans"\n[host_link]\nbandwidth = "36 GBs"\n',
            "host_link.bandwidth",
            "unknown unit",
        ),
        ('extends = "rans"\n[host]\npower_idle = "30 GHz"\n', "host.power_idle", "not a power"),
        (
            'extends = "rans"\n[switch_layer]\nscheme = "mux64"\n',
            "switch_layer.scheme",
            "spans 64 devices but storage.count is 36",
        ),
        (
            'extends = "rans"\n[switch_layer]\nscheme = "crossbar"\n',
            "switch_layer.scheme",
            "mux1, mux2",
        ),
        ('extends = "rans"\n[engines]\ncount = 12\n', "engines.count", "must equal storage.count"),
        # a check across fields blames the one the file wrote: it said "(top level)"
        ('extends = "rans"\n[storage]\ncount = 12\n', "storage.count", "must equal storage.count"),
        ('extends = "rans"\n[engines]\nkind = "gpu"\n', "engines.kind", "arm"),
        ('extends = "rans"\n[engines]\nturbo = true\n', "engines.turbo", "unknown field"),
        (
            'name = "x"\n[host]\ncores_per_socket = 1\nfrequency = "1 GHz"\npower_active = "1 W"\n'
            'power_idle = "1 W"\n',
            "host_link",
            "required field is missing",
        ),
        (
            'extends = "rans"\n[engines.throughput]\nxyz = { size = "1 GB" }\n',
            "engines.throughput.xyz",
            "size' and 'time'",
        ),
    ],
)
def test_bad_spec_names_file_and_field(tmp_path: Path, body: str, field: str, message: str) -> None:
    path = _write(tmp_path, body)
    with pytest.raises(SpecError) as info:
        load_platform(path)
    assert info.value.source == str(path)
    assert info.value.field == field
    assert message in info.value.detail


def test_malformed_toml(tmp_path: Path) -> None:
    path = _write(tmp_path, "name = \n")
    with pytest.raises(SpecError, match="malformed TOML"):
        load_platform(path)


def test_missing_file_and_unknown_preset(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="file not found"):
        load_platform(tmp_path / "nope.toml")
    with pytest.raises(UnknownNameError, match="unknown platform 'rfnz'"):
        load_platform("rfnz")


def test_extends_cycle_is_reported(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('extends = "b.toml"\n')
    (tmp_path / "b.toml").write_text('extends = "a.toml"\n')
    with pytest.raises(SpecError, match="cycle"):
        load_platform(tmp_path / "a.toml")


def test_a_child_gives_an_inherited_apps_rate_in_the_other_form(tmp_path: Path) -> None:
    """`bytes_per_cycle.lc` in a file that extends `rans` replaces the preset's
    `throughput.lc` (and the reverse on risp-64ch's Sobel design): before, the two were
    refused as "in both throughput and bytes_per_cycle; give one", though the file gave one
    and TOML cannot unset the other."""
    design = tmp_path / "design.toml"
    design.write_text('extends = "rans"\nname = "design"\n[engines.bytes_per_cycle]\nlc = 2\n')
    engines = load_platform(design).engines
    assert engines is not None and "lc" not in engines.throughput
    assert engines.bandwidth_bytes_per_s("lc") == 2 * 1.1e9
    rans = load_platform("rans").engines
    assert rans is not None and engines.throughput["he"] == rans.throughput["he"]
    rate = tmp_path / "rate.toml"
    rate.write_text(
        'extends = "risp-64ch"\nname = "rate"\n[engines.throughput]\nsobel = "1 GB/s"\n'
    )
    cells = load_platform(rate).engines
    assert cells is not None and "sobel" not in cells.bytes_per_cycle
    assert cells.bandwidth_bytes_per_s("sobel") == 1e9
    assert cells.bytes_per_cycle["kmeans"] == 9
    grandchild = tmp_path / "back.toml"  # and back again, one level down
    grandchild.write_text(
        'extends = "design.toml"\nname = "back"\n[engines.throughput]\nlc = "3 GB/s"\n'
    )
    engines = load_platform(grandchild).engines
    assert engines is not None and engines.bandwidth_bytes_per_s("lc") == 3e9
    assert "lc" not in engines.bytes_per_cycle


def test_both_rate_forms_in_one_file_are_still_refused(tmp_path: Path) -> None:
    both = tmp_path / "both.toml"
    both.write_text(
        'extends = "rans"\nname = "both"\n[engines]\nbytes_per_cycle = { lc = 2 }\n'
        '[engines.throughput]\nlc = "1 GB/s"\n'
    )
    with pytest.raises(SpecError, match="lc: in both throughput and bytes_per_cycle"):
        load_platform(both)


def test_a_check_across_fields_names_the_parent_that_wrote_the_field(tmp_path: Path) -> None:
    """rans37.toml sets storage.count = 37 (its engines stay 36); a file extending it that
    changes nothing of either is not to blame: the error names rans37.toml's storage.count,
    where it named the loaded file's "(top level)"."""
    (tmp_path / "rans37.toml").write_text('extends = "rans"\nname = "r37"\n[storage]\ncount = 37\n')
    child = _write(tmp_path, 'extends = "rans37.toml"\nname = "c"\n[host]\npower_idle = "1 W"\n')
    with pytest.raises(SpecError) as info:
        load_platform(child)
    assert info.value.source == str(tmp_path / "rans37.toml")
    assert info.value.field == "storage.count"
