"""Outputs written without --overwrite take their place only if it is still free: two runs
to one output used to both exit 0, the later silently replacing the earlier's (sort, data
tpch, data tpcc)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ndpkit.errors import SpecError
from ndpkit.files import put_new, replacing
from ndpkit.tpc import tpch


def test_a_file_made_meanwhile_is_not_replaced(tmp_path: Path) -> None:
    out = tmp_path / "s.parquet"
    with (
        pytest.raises(SpecError, match=r"already exists \(made while this run wrote"),
        replacing(out, overwrite=False) as tmp,
    ):
        tmp.write_text("ours")
        out.write_text("another run's")
    assert out.read_text() == "another run's"
    assert [p.name for p in tmp_path.iterdir()] == ["s.parquet"]  # no temporary left


def test_a_directory_made_meanwhile_is_not_replaced(tmp_path: Path) -> None:
    out = tmp_path / "parts"
    with (
        pytest.raises(SpecError, match="already exists"),
        replacing(out, overwrite=False) as tmp,
    ):
        (tmp / "device-00").mkdir(parents=True)
        (out / "device-00").mkdir(parents=True)
        (out / "device-00" / "x").write_text("another run's")
    assert (out / "device-00" / "x").read_text() == "another run's"
    assert [p.name for p in tmp_path.iterdir()] == ["parts"]


def test_a_free_place_is_taken(tmp_path: Path) -> None:
    with replacing(tmp_path / "a", overwrite=False) as tmp:
        tmp.write_text("ours")
    assert (tmp_path / "a").read_text() == "ours"
    (tmp_path / "b.tmp").write_text("b")
    put_new(tmp_path / "b.tmp", tmp_path / "b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]


def test_tpch_tables_appear_all_or_none_without_overwrite(tmp_path: Path) -> None:
    staging, out = tmp_path / "staging", tmp_path / "out"
    staging.mkdir()
    out.mkdir()
    names = ["nation", "region", "part"]
    for name in names:
        (staging / f"{name}.parquet").write_text(name)
    (out / "region.parquet").write_text("another run's")
    targets = [out / f"{name}.parquet" for name in names]
    with pytest.raises(SpecError, match="already exists"):
        tpch._put_tables([staging / f"{name}.parquet" for name in names], targets, overwrite=False)
    assert sorted(p.name for p in out.iterdir()) == ["region.parquet"]
    assert (out / "region.parquet").read_text() == "another run's"


def test_without_hard_links_the_place_is_checked_then_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(src: object, dst: object) -> None:
        raise PermissionError("no hard links here")

    monkeypatch.setattr("os.link", no_links)
    (tmp_path / "a.tmp").write_text("ours")
    put_new(tmp_path / "a.tmp", tmp_path / "a")
    assert (tmp_path / "a").read_text() == "ours"
    (tmp_path / "b.tmp").write_text("ours")
    (tmp_path / "b").write_text("another run's")
    with pytest.raises(SpecError, match="already exists"):
        put_new(tmp_path / "b.tmp", tmp_path / "b")
    assert (tmp_path / "b").read_text() == "another run's"
