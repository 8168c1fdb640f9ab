"""What the SSDs are charged (docs/platforms.md, `[storage]`): `power_active` for D / SSD_BW
device-seconds, `power_idle` for the rest of the run, and never longer than the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from ndpkit.hw import load_platform
from ndpkit.model import Options, estimate
from ndpkit.profile import load_profile

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_ssds_slower_than_the_paper_time_are_charged_for_the_run_alone(tmp_path: Path) -> None:
    path = tmp_path / "slow-ssd.toml"
    path.write_text(
        'version = 1\nextends = "rans"\nname = "slow-ssd"\n'
        '[storage]\nread_bandwidth = "0.5 GiB/s"\npower_active = "10 W"\npower_idle = "2 W"\n'
    )
    platform, lc = load_platform(str(path)), load_profile("lc")
    paper = estimate(platform, lc)
    reading_s = lc.data_bytes / (36 * 0.5 * 2**30)  # 2.06 s at the SSD stage
    assert paper.time_s == pytest.approx(16.67 / 36) and paper.time_s < reading_s
    assert paper.energy.by_component_j["storage"] == pytest.approx(36 * 10 * paper.time_s)
    staged = estimate(platform, lc, options=Options(time_basis="staged"))
    assert staged.time_s == pytest.approx(reading_s)
    assert staged.energy.by_component_j["storage"] == pytest.approx(36 * 10 * reading_s)
    text = " ".join((DOCS / "platforms.md").read_text(encoding="utf-8").split())
    assert "but never for longer than the run" in text


def test_ssds_faster_than_the_run_are_charged_idle_for_the_rest(tmp_path: Path) -> None:
    """The other side of the rule: RANS's SSDs (36 x 3 GiB/s) read LC's 37 GiB in less than
    the paper time (16.67 s / 36, Table 3), so each is charged `power_active` for its share
    of D / SSD_BW and `power_idle` for the rest of the run. By hand: 36 x 37 / 108 = 37 / 3
    device-seconds active, 16.67 - 37 / 3 idle; 10 W and 2 W. (No test charged idle SSDs:
    charging them at `power_active` passed.)"""
    path = tmp_path / "ssd-power.toml"
    path.write_text(
        'version = 1\nextends = "rans"\nname = "ssd-power"\n'
        '[storage]\npower_active = "10 W"\npower_idle = "2 W"\n'
    )
    paper = estimate(load_platform(str(path)), load_profile("lc"))
    active_s, idle_s = 37 / 3, 16.67 - 37 / 3
    assert paper.time_s == pytest.approx(16.67 / 36)
    assert paper.state_times.storage["active"] == pytest.approx(active_s, rel=1e-12)
    assert paper.state_times.storage["idle"] == pytest.approx(idle_s, rel=1e-9)
    assert paper.energy.by_component_j["storage"] == pytest.approx(
        10 * active_s + 2 * idle_s, rel=1e-9
    )
