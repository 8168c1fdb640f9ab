"""A mount point given as a data set's directory is refused before anything is written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ndpkit.errors import SpecError
from ndpkit.runtime import generate_dataset

_ismount = os.path.ismount


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_mount_point_is_refused_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, overwrite: bool
) -> None:
    """Without overwrite it was "already exists; pass overwrite", and with it every shard
    was written beside the mount point, on the file system it is mounted on, before the
    rename failed ("cannot move the old data set aside (Device or resource busy)"). An
    empty directory stands in for the mount point (mounting needs privileges)."""
    mount = tmp_path / "ssd"
    mount.mkdir()
    monkeypatch.setattr(os.path, "ismount", lambda p: Path(p) == mount or _ismount(p))
    with pytest.raises(SpecError) as caught:
        generate_dataset("lc", 64 * 2**10, 2, mount, overwrite=overwrite)
    assert str(caught.value) == (
        f"{mount}: is a mount point, which cannot be replaced by a data set (one is written "
        f"beside its directory and renamed onto it): give a directory inside, such as "
        f"{mount / 'ds'}; nothing was written"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["ssd"] and not any(mount.iterdir())
    made = generate_dataset("lc", 64 * 2**10, 2, mount / "ds")  # as the message says
    assert made.records * made.record_bytes == 64 * 2**10
