"""R2's binary reading applies to every host interface RISP's tables compare, not only the
preset's SATA link (PCIe's bandwidth was reloaded in decimal GB/s)."""

from __future__ import annotations

import pytest

from ndpkit.reproduce.risp import DEFAULT_OPTIONS, _at, load_inputs, table_e8

GIB_PER_GB = 2**30 / 10**9


@pytest.mark.parametrize("interface", ["sata-3.2", "pcie3-x4", "pcie3-x16"])
@pytest.mark.parametrize("channels", [8, 64])
def test_binary_inputs_read_every_interface_as_gib(interface: str, channels: int) -> None:
    decimal, _ = load_inputs("decimal")
    binary, _ = load_inputs("binary")
    dec = _at(decimal, channels, interface).host_link.bandwidth_bytes_per_s
    gib = _at(binary, channels, interface).host_link.bandwidth_bytes_per_s
    assert gib == pytest.approx(dec * GIB_PER_GB, rel=1e-12)


def test_the_decimal_reading_keeps_the_interface_files_numbers() -> None:
    decimal, _ = load_inputs("decimal")
    assert _at(decimal, 64, "pcie3-x4").host_link.bandwidth_bytes_per_s == pytest.approx(3.938e9)


@pytest.mark.parametrize(
    ("reading", "gb_per_s"), [("decimal", 1.97), ("binary", 1.97 * GIB_PER_GB)]
)
def test_e8_s_title_gives_the_link_bandwidth_the_table_used(reading: str, gb_per_s: float) -> None:
    """E8's title said "SATA 3.2 (1.97 GB/s)" under `--inputs binary` too, where its rows
    use 1.97 GiB/s, which the reports (decimal GB) give as 2.115 GB/s."""
    platform, profiles = load_inputs(reading)  # type: ignore[arg-type]
    table = table_e8(platform, profiles, DEFAULT_OPTIONS, "floor", "balanced")
    assert f"SATA 3.2 ({gb_per_s:.4g} GB/s)" in table.title
