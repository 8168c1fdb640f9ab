"""RISP's cells take a profile's measured engine rate for their kind when nothing better
describes them, in the server model's order: the platform's own tables first, then the
profile's cell design, then its measured rate (`ndpkit evaluate`'s mapped measurement).

D = 2 GB over 64 cells, β = 4: t_ch2RU = 2e9 / (64 x 4e8) = 0.078125 s, so a measured
0.2 GB/s per cell gives t_RUComp = 2e9 / (64 x 2e8) = 0.15625 s, compute-bound."""

from __future__ import annotations

from pathlib import Path

import pytest

from ndpkit.errors import ModelError
from ndpkit.hw import Platform, load_platform
from ndpkit.model import FULL_GEAR, Options, estimate
from ndpkit.model.in_storage import cell_design
from ndpkit.profile import FpgaCell, Profile, load_profile

REL = 1e-9
F_RU = 1e8


def risp() -> Platform:
    return load_platform("risp-64ch")


def measured(app: str = "fir", **rates: str) -> Profile:
    return Profile(app=app, data_size="2 GB", alpha=4, cycles_per_byte=50, engine=rates)


def test_a_measured_fpga_rate_clocks_the_cells() -> None:
    e = estimate(risp(), measured(fpga="0.2 GB/s"), FULL_GEAR, Options(units="decimal"))
    assert e.stage_times_s["cell"] == pytest.approx(2e9 / (64 * 2e8), rel=REL)
    assert e.time_s == pytest.approx(0.15625, rel=REL) and e.bottleneck == "cell"
    assert cell_design(risp(), measured(fpga="0.2 GB/s")) == (2e8, 0.0)


def test_a_rate_for_another_kind_is_not_used() -> None:
    with pytest.raises(ModelError, match=r"no engine rate for app 'fir'.* no fpga measurement"):
        cell_design(risp(), measured(arm="0.2 GB/s"))


def test_the_platforms_throughput_wins_over_the_measurement() -> None:
    data = risp().model_dump()
    data["engines"]["throughput"] = {"fir": 3e8}
    listed = Platform.model_validate(data, context={"si": True})
    assert cell_design(listed, measured(fpga="0.2 GB/s")) == (3e8, 0.0)


def test_the_platforms_design_wins_over_the_measurement() -> None:
    """Sobel is 1 B/cycle at 100 MHz with a 4-cycle fill on RISP, whatever was measured."""
    sobel = load_profile("sobel", "risp").with_changes(engine_bytes_per_s={"fpga": 5e9})
    assert cell_design(risp(), sobel) == (1 * F_RU, 4 / F_RU)


def test_the_profiles_cell_design_wins_over_its_measurement() -> None:
    """A design describes the cell itself; a measured rate comes from another machine."""
    mine = measured(fpga="0.2 GB/s").with_changes(
        fpga_cell=FpgaCell(bytes_per_cycle=2, pipeline_delay=10)
    )
    assert cell_design(risp(), mine) == (2 * F_RU, 10 / F_RU)


def test_the_server_model_has_the_same_order() -> None:
    """On RFNS (no design tables) a profile's FPGA rate is used where the paper has none,
    and the paper's throughput where it has one."""
    rfns = load_platform("rfns")
    mine = measured(fpga="2 GB/s")
    assert estimate(rfns, mine).pipeline.engine_bytes_per_s == pytest.approx(2e9, rel=REL)
    lc = load_profile("lc").with_changes(engine_bytes_per_s={"fpga": 1.0})
    paper = rfns.engines.throughput["lc"] if rfns.engines else 0.0
    assert estimate(rfns, lc).pipeline.engine_bytes_per_s == pytest.approx(paper, rel=REL)


def test_a_pipeline_delay_counts_beside_a_throughput_entry(tmp_path: Path) -> None:
    """Eq. (6) adds n_delay / f_RU whatever gives the cell's rate: with a `throughput` entry
    the delay was dropped without a word (found by an audit of RISP). 8 channels at 400 MB/s,
    cells at 100 MB/s and 100 MHz with a 10^8-cycle delay: 0.5 GB / (8 x 1e8) + 1 s."""
    path = tmp_path / "pd.toml"
    path.write_text(
        'version = 1\nname = "pd"\nhost_link = "sata-3.2"\n'
        '[host]\ncores_per_socket = 4\nfrequency = "3.1 GHz"\n'
        '[storage]\ncount = 1\nchannels = 8\nchannel_bandwidth = "400 MB/s"\n'
        '[engines]\nkind = "fpga"\nplacement = "channel"\ncount = 8\nfrequency = "100 MHz"\n'
        'power_active = "2 mW"\nthroughput = { sobel = "100 MB/s" }\n'
        "pipeline_delay = { sobel = 100000000 }\n"
        '[storage.dram]\nbandwidth = "15 GB/s"\n'
    )
    platform = load_platform(path)
    profile = load_profile("sobel", "risp")
    assert cell_design(platform, profile) == (pytest.approx(1e8), pytest.approx(1.0))
    e = estimate(platform, profile, FULL_GEAR, Options(units="decimal"))
    assert e.time_s == pytest.approx(0.5e9 / (8 * 1e8) + 1.0, rel=REL)
