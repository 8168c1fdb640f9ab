"""Profiles: the shipped paper set and a user's files."""

import math
from pathlib import Path

import pytest

from ndpkit.errors import SpecError, UnknownNameError
from ndpkit.profile import load_profile, load_profiles

GIB = 2**30


def test_paper_profiles_have_section_8_1_inputs() -> None:
    apps = load_profiles("rans-rfns").apps
    assert set(apps) == {"lc", "he", "fft2d", "knn2", "knn6", "knn8"}
    assert apps["lc"].data_bytes == 37 * GIB
    assert apps["he"].alpha == 1
    assert apps["fft2d"].data_bytes == pytest.approx(238.54 * 2**20)
    assert math.isinf(apps["lc"].host_stage_bytes_per_s)
    assert apps["knn2"].host_stage_bytes_per_s == pytest.approx(130 * GIB / 0.62)
    assert apps["knn6"].published_ndp_time_s["rans"] == 51.21


def test_user_profile_file(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('[apps.scan]\ndata_size = "1 TB"\nalpha = 100\nengine = { arm = "1 GB/s" }\n')
    profile = load_profile("scan", path)
    assert profile.data_bytes == 1e12 and profile.engine_bytes_per_s["arm"] == 1e9


def test_json_profile_file(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"apps": {"scan": {"data_size": "1 GB", "alpha": 2}}}')
    assert load_profile("scan", path).alpha == 2


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[apps.x]\ndata_size = "1 GB"\nalpha = 0\n', "apps.x.alpha"),
        ("[apps.x]\nalpha = 2\n", "apps.x.data_size: required"),
        ('[apps.x]\ndata_size = "1 GB/s"\nalpha = 2\n', "not a size"),
        ("[apps.x\n", "malformed TOML"),
    ],
)
def test_bad_profiles(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(body)
    with pytest.raises(SpecError, match=message):
        load_profiles(path)


def test_unknown_app_lists_known() -> None:
    with pytest.raises(UnknownNameError, match="knn8"):
        load_profile("knn9")
