"""E7, FPGA feasibility (RANS/RFNS spec §8.3, §9.3, O15): Table 6 reproduced from its counts.

Expected values are the spec's: the per-NDPE footprints of §8.3 and the recomputed
percentages of §9.3 (where the paper's printed ones disagree with count / capacity).
"""

from __future__ import annotations

from typing import Any

import pytest

from ndpkit.errors import SpecError
from ndpkit.reproduce.rans_rfns import reproduce, table6

# Spec §8.3: per-NDPE footprint (LUT, REG, BRAM, DSP) = Table 6 / 36.
FOOTPRINT = {
    "lc": (3_003, 3_488, 2, 5),
    "he": (46_482, 54_489, 175, 0),
    "knn2": (3_606, 4_792, 2, 12),
    "knn6": (6_306, 10_115, 8, 40),
    "knn8": (7_581, 12_360, 8, 54),
    "fft2d": (13_387, 17_878, 5, 96),
}
# Spec §9.3: the cells whose printed percentage disagrees with count / capacity, recomputed.
RECOMPUTED_PCT = {
    ("he", "lut"): 141.54,
    ("he", "bram"): 291.67,
    ("knn6", "dsp"): 21.05,
    ("knn8", "reg"): 18.82,
    ("fft2d", "lut"): 40.76,
    ("fft2d", "reg"): 27.22,
    ("fft2d", "bram"): 8.33,
    ("fft2d", "dsp"): 50.53,
}


@pytest.fixture(scope="module")
def rows() -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["app"], r["resource"]): r for r in table6().rows}


@pytest.mark.parametrize("app", sorted(FOOTPRINT))
def test_per_ndpe_footprint(rows: dict[tuple[str, str], dict[str, Any]], app: str) -> None:
    got = tuple(rows[app, r]["per_ndpe"] for r in ("lut", "reg", "bram", "dsp"))
    assert got == pytest.approx(FOOTPRINT[app], abs=1e-9), f"§8.3 footprint of {app}"


@pytest.mark.parametrize(("cell", "pct"), sorted(RECOMPUTED_PCT.items()))
def test_recomputed_percentages(
    rows: dict[tuple[str, str], dict[str, Any]], cell: tuple[str, str], pct: float
) -> None:
    assert rows[cell]["utilisation_pct"] == pytest.approx(pct, abs=0.005), f"§9.3 {cell}"


def test_chips_needed() -> None:
    """§8.3: HE's LUTs are 141.54 % of one chip, so it needs two; its BRAM overflow goes
    off-chip and does not count. Every other app fits one VCU1525."""
    rows = table6().rows
    chips = {r["app"]: r["chips"] for r in rows}
    assert chips == {"lc": 1, "he": 2, "fft2d": 1, "knn2": 1, "knn6": 1, "knn8": 1}
    off_chip = {(r["app"], r["resource"]) for r in rows if r["off_chip"]}
    assert off_chip == {("he", "bram")}


def test_chips_scale_with_the_engines() -> None:
    """Half the NDPEs of HE fit one chip (70.8 % of its LUTs); 72 need three."""
    assert {r["chips"] for r in table6(18).rows if r["app"] == "he"} == {1}
    assert {r["chips"] for r in table6(72).rows if r["app"] == "he"} == {3}


def test_reproduction_includes_table_6() -> None:
    names = [t.name for t in reproduce()]
    assert names.index("6") == names.index("5") + 1


@pytest.mark.parametrize("engines", [0, -36, 2.5, "36", True, None])
def test_chips_for_no_whole_number_of_engines_is_refused(engines: object) -> None:
    """`table6(engines)` (docs/reproducing-rans-rfns.md) gave "1 chip" for 0 or -36 NDPEs,
    kept 2.5, and ended in a TypeError on "36": each is one SpecError naming the argument."""
    with pytest.raises(SpecError, match=r"^table6: engines: must be a whole number of NDPEs"):
        table6(engines)  # type: ignore[arg-type]
