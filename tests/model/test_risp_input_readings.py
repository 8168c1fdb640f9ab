"""R2's binary reading applies to every host interface RISP's tables compare, not only the
preset's SATA link (PCIe's bandwidth was reloaded in decimal GB/s)."""

from __future__ import annotations

import pytest

from ndpkit.reproduce.risp import _at, load_inputs

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
