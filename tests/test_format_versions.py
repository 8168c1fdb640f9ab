"""A file of another format version (a platform, a profile set, a data set's manifest) is
said to be one, naming the file and `version`: pydantic's "Input should be less than or
equal to 1" (or "should be 1") did not say that version 2 is a newer format."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ndpkit.errors import SpecError
from ndpkit.hw import load_platform
from ndpkit.profile import load_profiles
from ndpkit.runtime import open_dataset
from ndpkit.runtime.dataset import import_dataset

NEWER = "format version 2 is newer than this ndpkit reads (version 1)"


def _platform(tmp_path: Path, version: object) -> Path:
    path = tmp_path / "mine.toml"
    path.write_text(f'version = {version}\nextends = "rans"\nname = "mine"\n')
    return path


def _profiles(tmp_path: Path, version: object) -> Path:
    path = tmp_path / "p.json"
    app = {"data_size": "1 GB", "alpha": 2}
    path.write_text(json.dumps({"version": version, "apps": {"scan": app}}))
    return path


def _manifest(tmp_path: Path, version: object) -> Path:
    tmp_path.mkdir(exist_ok=True)
    source = tmp_path / "points.npy"
    np.save(source, np.zeros((64, 8), dtype=np.float32))
    import_dataset(source, 2, tmp_path / "ds", "lc")
    manifest = tmp_path / "ds" / "manifest.json"
    document = json.loads(manifest.read_text())
    manifest.write_text(json.dumps(document | {"version": version}))
    return manifest


def _load(kind: str, path: Path) -> None:
    if kind == "platform":
        load_platform(str(path))
    elif kind == "profiles":
        load_profiles(path)
    else:
        open_dataset(path.parent)


WRITERS = {"platform": _platform, "profiles": _profiles, "manifest": _manifest}


@pytest.mark.parametrize("kind", sorted(WRITERS))
def test_a_newer_format_version_is_said_to_be_one(tmp_path: Path, kind: str) -> None:
    path = WRITERS[kind](tmp_path, 2)
    with pytest.raises(SpecError) as caught:
        _load(kind, path)
    assert caught.value.source == str(path) and caught.value.field == "version"
    assert NEWER in caught.value.detail and "upgrade ndpkit" in caught.value.detail


@pytest.mark.parametrize("kind", sorted(WRITERS))
def test_version_0_is_said_not_to_exist(tmp_path: Path, kind: str) -> None:
    path = WRITERS[kind](tmp_path, 0)
    with pytest.raises(SpecError, match="format version 0 does not exist") as caught:
        _load(kind, path)
    assert caught.value.field == "version"


def test_a_manifest_version_true_is_refused_as_a_platforms_is(tmp_path: Path) -> None:
    """The manifest took `"version": true` (and 1.0) for 1, where a platform or profile set
    refuses them: strict models let a Literal[1] match True."""
    for version in (True, 1.0):
        manifest = _manifest(tmp_path / str(version), version)
        with pytest.raises(SpecError, match="expected a whole number") as caught:
            open_dataset(manifest.parent)
        assert caught.value.field == "version"
