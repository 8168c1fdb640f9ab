"""Data sets on disk: layout, determinism, atomic writes, manifest validation, imports."""

from __future__ import annotations

import errno
import io
import itertools
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
import warnings
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import skimage.data
from PIL import Image

from ndpkit.errors import NdpkitError, SpecError
from ndpkit.kernels import Kernel
from ndpkit.kernels.images import wide_mode_error
from ndpkit.runtime import (
    Dataset,
    ShardError,
    generate_dataset,
    import_dataset,
    open_dataset,
)
from ndpkit.runtime import dataset as dataset_module
from ndpkit.runtime.dataset import (
    MANIFEST,
    MAX_LISTED_PROBLEMS,
    STAGING_MARKER,
    LargeImageWarning,
    ShardFormat,
    crop_loss,
    remove_stale_staging,
    shard_seed,
)


class Ints(Kernel):
    """Integer-valued float32 records of 4 values; the answer is their sum."""

    name = "ints"
    dtype = np.dtype(np.float32)
    record_shape = (4,)

    def generate(self, size_bytes: int, seed: int) -> np.ndarray:
        n = max(1, size_bytes // self.record_bytes)
        return np.random.default_rng(seed).integers(0, 100, (n, 4)).astype(np.float32)

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> Any:
        return int(chunk.sum(dtype=np.int64))

    def merge(self, partials: list[Any]) -> Any:
        return sum(partials)

    def host(self, merged: Any, state: Any) -> tuple[Any, bool]:
        return merged, True

    def reference(self, data: np.ndarray, params: dict[str, Any]) -> Any:
        return int(data.sum(dtype=np.int64))

    def check(self, result: Any, expected: Any) -> None:
        assert result == expected


class FailsOnThirdShard(Ints):
    """A generator that breaks part-way, as a full disk or a bug would."""

    def __init__(self) -> None:
        self.calls = 0

    def generate(self, size_bytes: int, seed: int) -> np.ndarray:
        self.calls += 1
        if self.calls == 3:
            raise OSError("disk full (simulated)")
        return super().generate(size_bytes, seed)


class Pixels(Ints):
    """A stream of grayscale pixels: one byte per record."""

    name = "pixels"
    dtype = np.dtype(np.uint8)
    record_shape = ()


class Tiles(Ints):
    """8x8 RGB images, one per record."""

    name = "tiles"
    dtype = np.dtype(np.uint8)
    record_shape = (8, 8, 3)


class GrayTiles(Ints):
    """8x8 grayscale images, one per record."""

    name = "gray-tiles"
    dtype = np.dtype(np.uint8)
    record_shape = (8, 8)


def _make(tmp_path: Path, name: str = "ds", **kwargs: Any) -> Dataset:
    options: dict[str, Any] = {"seed": 7, "shard_bytes": 1000} | kwargs
    return generate_dataset(Ints(), 10_000, 3, tmp_path / name, **options)


def test_layout_and_manifest(tmp_path: Path) -> None:
    ds = _make(tmp_path)
    root = tmp_path / "ds"
    assert sorted(p.name for p in root.iterdir()) == [
        "device-00",
        "device-01",
        "device-02",
        MANIFEST,
    ]
    assert ds.records == 10_000 // 16 and ds.total_bytes == ds.records * 16
    assert [r["records"] for r in ds.device_rows()] == [209, 208, 208]  # even, larger first
    for shard in ds.shards:
        path = ds.shard_path(shard)
        assert path.parent.name == f"device-{shard.device:02d}"
        assert shard.records * 16 <= 1000 and path.stat().st_size == shard.file_bytes
        assert np.load(path).shape == (shard.records, 4)
    assert [s.offset for s in ds.shards] == list(
        np.cumsum([0] + [s.records for s in ds.shards])[:-1]
    )
    manifest = json.loads((root / MANIFEST).read_text())
    assert manifest["app"] == "ints" and manifest["seed"] == 7 and manifest["dtype"] == "<f4"
    assert manifest["record_shape"] == [4] and manifest["layout"] == "contiguous"
    assert open_dataset(root).manifest == ds.manifest
    assert len(ds.read_all()) == ds.records


def test_generation_is_deterministic_per_seed_device_and_shard(tmp_path: Path) -> None:
    a, b, c = _make(tmp_path, "a"), _make(tmp_path, "b"), _make(tmp_path, "c", seed=8)
    assert [s.crc32 for s in a.shards] == [s.crc32 for s in b.shards]
    assert np.array_equal(a.read_all(), b.read_all())
    assert [s.crc32 for s in a.shards] != [s.crc32 for s in c.shards]
    assert len({s.crc32 for s in a.shards}) == len(a.shards)  # no two shards alike
    assert shard_seed(7, 0, 1) != shard_seed(7, 1, 0)


def test_a_failure_mid_generate_leaves_no_directory(tmp_path: Path) -> None:
    kernel = FailsOnThirdShard()
    with pytest.raises(OSError, match="disk full"):
        generate_dataset(kernel, 10_000, 3, tmp_path / "ds", shard_bytes=1000)
    assert kernel.calls == 3
    assert list(tmp_path.iterdir()) == []  # neither ds nor its staging directory


def test_refuses_to_overwrite_unless_asked(tmp_path: Path) -> None:
    first = _make(tmp_path)
    with pytest.raises(SpecError, match="already exists"):
        _make(tmp_path, seed=9)
    assert open_dataset(tmp_path / "ds").manifest == first.manifest
    second = _make(tmp_path, seed=9, overwrite=True)
    assert open_dataset(tmp_path / "ds").seed == 9 != first.seed
    assert second.records == first.records
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]


def test_a_data_set_another_run_published_meanwhile_is_not_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs to one DIR without overwrite: both pass the check before writing; the one
    that finishes second must fail, not move the first one's data set aside and delete it."""
    real_check = dataset_module._check_target
    raced: list[bool] = []

    def check_then_race(path: Path, overwrite: bool) -> None:
        real_check(path, overwrite)
        if not raced:  # the other run publishes while this one writes
            raced.append(True)
            _make(tmp_path, seed=1)

    monkeypatch.setattr(dataset_module, "_check_target", check_then_race)
    with pytest.raises(SpecError, match="made while this run wrote"):
        _make(tmp_path, seed=2)
    assert open_dataset(tmp_path / "ds").seed == 1  # the first run's, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]  # no staging left


def test_overwrite_never_deletes_something_that_is_not_a_data_set(tmp_path: Path) -> None:
    precious = tmp_path / "ds"
    precious.mkdir()
    (precious / "thesis.tex").write_text("…")
    with pytest.raises(SpecError, match="not a data set"):
        _make(tmp_path, overwrite=True)
    assert (precious / "thesis.tex").exists()


@pytest.mark.parametrize("manifest", ["", '{"name": "my web app"}', '{"format": "other"}', "["])
def test_overwrite_never_deletes_a_directory_whose_manifest_is_not_a_data_sets(
    tmp_path: Path, manifest: str
) -> None:
    """Another tool's manifest.json (a web app's) is no data set's: the whole project around
    it was deleted (found by an audit of the imports)."""
    project = tmp_path / "ds"
    (project / "src").mkdir(parents=True)
    (project / "manifest.json").write_text(manifest)
    (project / "src" / "index.js").write_text("…")
    with pytest.raises(SpecError, match=r"its manifest\.json is not an ndpkit data set's"):
        _make(tmp_path, overwrite=True)
    assert (project / "src" / "index.js").exists()


def test_overwrite_of_a_data_set_whose_manifest_cannot_be_read_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A manifest this user may not read (chmod 000, which root reads through: simulated)
    was refused as "not an ndpkit data set's: no "format"", which it may well be."""
    _make(tmp_path, seed=1)
    real_read_bytes = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == MANIFEST:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))
        return real_read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    with pytest.raises(SpecError) as caught:
        _make(tmp_path, seed=2, overwrite=True)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'ds'}: ")
    assert "manifest.json cannot be read (Permission denied)" in message
    assert "not an ndpkit data set's" not in message
    monkeypatch.undo()
    assert open_dataset(tmp_path / "ds").seed == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]


def test_overwrite_never_deletes_a_file_put_into_the_data_set_while_the_new_one_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check for files ndpkit did not write ran only before the shards were written
    (minutes, for a large data set): a note saved into DIR meanwhile went with the old data
    set, exit 0. It is made again just before the old data set is moved aside."""
    _make(tmp_path, seed=1)
    note = tmp_path / "ds" / "notes.txt"
    real_write = dataset_module._write_npy_in_place

    def write(path: Path, *args: Any) -> Any:
        if not note.exists():
            note.write_text("written while the shards were")
        return real_write(path, *args)

    monkeypatch.setattr(dataset_module, "_write_npy_in_place", write)
    with pytest.raises(SpecError) as caught:
        _make(tmp_path, seed=2, overwrite=True)
    assert "holds notes.txt, which ndpkit did not write" in str(caught.value)
    assert note.read_text() == "written while the shards were"
    assert open_dataset(tmp_path / "ds").seed == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]


def test_overwrite_replaces_a_data_set_whose_manifest_no_longer_validates(
    tmp_path: Path,
) -> None:
    _make(tmp_path, seed=1)
    manifest = tmp_path / "ds" / "manifest.json"
    document = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({"format": document["format"], "devices": "two"}))
    with pytest.raises(SpecError) as caught:  # any SpecError passed: it must be the manifest's
        open_dataset(tmp_path / "ds")
    assert caught.value.source == str(manifest) and caught.value.field is not None
    _make(tmp_path, seed=2, overwrite=True)
    assert open_dataset(tmp_path / "ds").seed == 2


@pytest.mark.parametrize("target", [".", "not-there/..", "ds/device-00/../.."])
def test_overwrite_refuses_the_working_directory_and_what_holds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    """`-o .` crashed (a path without a name), and `-o x/..` with no x replaced the working
    directory itself, leaving the shell in a deleted one."""
    generate_dataset(Ints(), 4000, 2, tmp_path / "ds")
    monkeypatch.chdir(tmp_path / "ds")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    with pytest.raises(SpecError, match="is the working directory or holds it") as caught:
        generate_dataset(Ints(), 4000, 2, target, overwrite=True)
    assert caught.value.source in (str(tmp_path), str(tmp_path / "ds"))
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_a_target_written_through_dot_dot_is_the_directory_it_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    dataset = generate_dataset(Ints(), 4000, 2, "not-there/../ds")
    assert (tmp_path / "ds" / MANIFEST).is_file() and not (tmp_path / "not-there").exists()
    assert open_dataset(dataset.path).records == dataset.records
    generate_dataset(Ints(), 4000, 2, "not-there/../ds", overwrite=True, seed=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]


def test_dot_dot_after_a_symlink_is_the_parent_of_the_links_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the system resolves it: a lexical `link/..` replaced ./ds, another data set."""
    (tmp_path / "elsewhere" / "a").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere" / "a")
    here = generate_dataset(Ints(), 4000, 1, tmp_path / "ds", seed=1)
    there = generate_dataset(Ints(), 4000, 1, tmp_path / "elsewhere" / "ds", seed=2)
    monkeypatch.chdir(tmp_path)
    new = generate_dataset(Ints(), 4000, 1, "link/../ds", seed=3, overwrite=True)
    assert new.path == tmp_path / "elsewhere" / "ds"
    assert open_dataset(here.path).seed == 1 and open_dataset(there.path).seed == 3


def test_too_small_and_bad_counts_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="less than one 16-byte ints record per device"):
        generate_dataset(Ints(), 40, 3, tmp_path / "x")
    with pytest.raises(SpecError, match=r"^devices: must be a whole number ≥ 1, got 0$"):
        generate_dataset(Ints(), 4000, 0, tmp_path / "x")
    with pytest.raises(NdpkitError, match="unknown app"):
        generate_dataset("no-such-app", 4000, 1, tmp_path / "x")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("damage", "names", "message"),
    [
        (lambda root: (root / MANIFEST).unlink(), MANIFEST, "missing: not a data set"),
        (lambda root: (root / MANIFEST).write_text("{not json"), MANIFEST, "not readable JSON"),
        (
            lambda root: _edit_manifest(root, records=1, data_bytes=16),
            MANIFEST,
            "records: the shards hold .* the manifest says 1$",
        ),
        (
            lambda root: _edit_shard_entry(root, path="/etc/passwd"),
            MANIFEST,
            "shards.0.path: shard path '/etc/passwd' should be 'device-00/shard-0000.npy'",
        ),
        (
            lambda root: _edit_shard_entry(root, records=1),
            MANIFEST,
            r"shards.1.offset: shard device-00/shard-0001.npy starts at record \d+, but the 1 "
            r"shards before it hold 1 records",
        ),
        (
            lambda root: _edit_manifest(root, record_bytes=3),
            MANIFEST,
            "record_bytes: 3 does not match dtype and record_shape",
        ),
        (lambda root: _edit_manifest(root, extra=1), MANIFEST, "extra: unknown field"),
        (
            lambda root: _edit_manifest(root, dtype="O"),
            MANIFEST,
            "dtype: 'O' cannot be stored in a shard",
        ),
        (
            lambda root: _edit_manifest(root, dtype="garbage"),
            MANIFEST,
            "dtype: 'garbage' is not a numpy dtype",
        ),
        (  # numpy parses these with Python's own parser: a SyntaxError was a traceback
            lambda root: _edit_manifest(root, dtype="f4,("),
            MANIFEST,
            re.escape("dtype: 'f4,(' is not a numpy dtype"),
        ),
        (  # and this one is numpy's ValueError
            lambda root: _edit_manifest(root, dtype="<f4,\x00"),
            MANIFEST,
            "dtype: .* is not a numpy dtype",
        ),
        (
            lambda root: _edit_manifest(root, columns=["a", "b"]),
            MANIFEST,
            "columns: .npy shards have no columns",
        ),
        (
            lambda root: _edit_manifest(root, seed=-5),
            MANIFEST,
            "seed: .*greater than or equal to 0",
        ),
        (lambda root: _edit_manifest(root, seed="7"), MANIFEST, "seed: "),
        (lambda root: _edit_manifest(root, records="10000"), MANIFEST, "records: .*valid integer"),
        (lambda root: _edit_manifest(root, devices=3.0), MANIFEST, "devices: .*valid integer"),
        (lambda root: _edit_manifest(root, devices=True), MANIFEST, "devices: .*valid integer"),
        (
            lambda root: _edit_manifest(root, record_shape=[-1, -4]),
            MANIFEST,
            "record_shape.0: .*greater than or equal to 1",
        ),
        (
            lambda root: _edit_shard_entry(root, records="10"),
            MANIFEST,
            "shards.0.records: .*valid integer",
        ),
        (lambda root: _replace_with_directory(root / MANIFEST), MANIFEST, "is a directory, not"),
        (
            lambda root: _replace_with_directory(root / "device-00" / "shard-0000.npy"),
            "device-00/shard-0000.npy",
            "is not a regular file",
        ),
        (
            lambda root: (root / "device-01" / "shard-0000.npy").unlink(),
            "device-01/shard-0000.npy",
            "shard is missing",
        ),
        (
            lambda root: _truncate(root / "device-02" / "shard-0001.npy"),
            "device-02/shard-0001.npy",
            "truncated or corrupt",
        ),
    ],
)
def test_open_dataset_names_the_bad_file(
    tmp_path: Path, damage: Any, names: str, message: str
) -> None:
    _make(tmp_path)
    damage(tmp_path / "ds")
    with pytest.raises(SpecError, match=message) as caught:
        open_dataset(tmp_path / "ds")
    assert names in str(caught.value)


def test_verify_catches_a_flipped_bit_that_sizes_cannot(tmp_path: Path) -> None:
    ds = _make(tmp_path)
    path = ds.shard_path(ds.shards[4])
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 1
    path.write_bytes(raw)
    open_dataset(ds.path)  # same size: only the CRC can tell
    with pytest.raises(ShardError, match="CRC-32") as caught:
        open_dataset(ds.path, verify=True)
    assert caught.value.source == str(path)


def _flip_byte(path: Path, at: int) -> None:
    """Flip byte `at` of the file; a negative `at` counts from its end (a record's byte)."""
    with path.open("r+b") as f:
        f.seek(at, os.SEEK_END if at < 0 else os.SEEK_SET)
        value = f.read(1)[0]
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([value ^ 0xFF]))


def test_verify_names_the_first_bad_shard_in_record_order(tmp_path: Path) -> None:
    ds = _make(tmp_path)
    for index in (5, 2):
        _flip_byte(ds.shard_path(ds.shards[index]), -5)
    with pytest.raises(ShardError, match=r"CRC-32 is [0-9a-f]{8}, the manifest says") as caught:
        ds.verify()
    assert caught.value.source == str(ds.shard_path(ds.shards[2]))


def test_verify_reports_progress_from_zero_to_the_total(tmp_path: Path) -> None:
    ds = _make(tmp_path)
    calls: list[tuple[int, int]] = []
    open_dataset(ds.path, verify=True, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(0, ds.file_bytes), (ds.file_bytes, ds.file_bytes)]


def test_verify_reports_progress_at_least_every_progress_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Scaled down: 300-byte blocks and a report at least every 1000 bytes stand for 8 MiB
    # blocks and 64 MiB, over shards of ~1000 bytes that do not divide into blocks.
    monkeypatch.setattr(dataset_module, "_CRC_BLOCK_BYTES", 300)
    monkeypatch.setattr(dataset_module, "PROGRESS_BYTES", 1000)
    ds = _make(tmp_path)
    calls: list[tuple[int, int]] = []
    ds.verify(progress=lambda done, total: calls.append((done, total)))
    done = [d for d, _ in calls]
    assert {t for _, t in calls} == {ds.file_bytes}
    assert done[0] == 0 and done[-1] == ds.file_bytes and done == sorted(set(done))
    assert max(b - a for a, b in itertools.pairwise(done)) <= 1000
    assert len(calls) < ds.file_bytes / 500  # not a call per block


def test_verify_checks_sizes_before_reading(tmp_path: Path) -> None:
    ds = _make(tmp_path)
    _truncate(ds.shard_path(ds.shards[3]))
    with pytest.raises(ShardError, match="truncated or corrupt") as caught:
        ds.verify()
    assert caught.value.source == str(ds.shard_path(ds.shards[3]))


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_a_data_set_directory_gets_the_umask_mode(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        ds = _make(tmp_path)
    finally:
        os.umask(old)
    assert ds.path.stat().st_mode & 0o777 == 0o777 & ~umask
    assert ds.shard_path(ds.shards[0]).parent.stat().st_mode & 0o777 == 0o777 & ~umask


def test_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="no such data set directory"):
        open_dataset(tmp_path / "nowhere")


def _edit_manifest(root: Path, **changes: Any) -> None:
    path = root / MANIFEST
    path.write_text(json.dumps(json.loads(path.read_text()) | changes))


def _edit_shard_entry(root: Path, **changes: Any) -> None:
    path = root / MANIFEST
    document = json.loads(path.read_text())
    document["shards"][0] |= changes
    path.write_text(json.dumps(document))


def _replace_with_directory(path: Path) -> None:
    path.unlink()
    path.mkdir()


def test_a_file_is_not_a_data_set_directory(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    with pytest.raises(SpecError, match="afile: is a file, not a data set directory"):
        open_dataset(tmp_path / "afile")


@pytest.mark.parametrize("name", ["points.parquet", "points.csv"])
def test_a_table_given_as_a_data_set_says_how_to_import_it(tmp_path: Path, name: str) -> None:
    """`evaluate --data points.parquet` said only "is a file, not a data set directory"; then
    it named a Parquet table and a .npy alone, to a CSV file's user too."""
    (tmp_path / name).write_bytes(b"PAR1")
    with pytest.raises(
        SpecError,
        match=r"is a file, not a data set directory \(a \.npy, Parquet or CSV file becomes "
        r"one with `ndpkit data import PATH --app APP -o DIR`\)",
    ):
        open_dataset(tmp_path / name)


def test_a_manifest_whose_app_cannot_read_its_records_is_refused(tmp_path: Path) -> None:
    """`app: sobel` on float32 (8,) records passed `data show --verify`; only evaluate
    refused it later."""
    generate_dataset("knn8", 64 * 1024, 2, tmp_path / "ds", seed=1)
    _edit_manifest(tmp_path / "ds", app="sobel")
    with pytest.raises(SpecError, match=r"app 'sobel' reads uint8 records of shape"):
        open_dataset(tmp_path / "ds")


def test_a_manifest_naming_a_key_twice_is_refused(tmp_path: Path) -> None:
    """The second `"app"` won without a word (json keeps the last)."""
    generate_dataset("knn8", 64 * 1024, 2, tmp_path / "ds", seed=1)
    manifest = tmp_path / "ds" / MANIFEST
    text = manifest.read_text()
    manifest.write_text(text.replace('"app": "knn8"', '"app": "knn8", "app": "knn2"', 1))
    assert manifest.read_text() != text
    with pytest.raises(SpecError, match="named twice in one object") as caught:
        open_dataset(tmp_path / "ds")
    assert caught.value.source == str(manifest) and caught.value.field == "app"


def _truncate(path: Path) -> None:
    with path.open("r+b") as f:
        f.truncate(path.stat().st_size - 16)


# -- imports -------------------------------------------------------------------------------


def test_import_npy_splits_contiguously_and_keeps_order(tmp_path: Path) -> None:
    source = np.arange(1001 * 4, dtype=np.float32).reshape(1001, 4)
    np.save(tmp_path / "points.npy", source)
    ds = import_dataset(tmp_path / "points.npy", 4, tmp_path / "ds", Ints(), shard_bytes=1600)
    assert ds.seed is None and ds.manifest.source.startswith("import ")
    assert [r["records"] for r in ds.device_rows()] == [251, 250, 250, 250]
    assert all(s.records <= 100 for s in ds.shards)
    assert np.array_equal(ds.read_all(), source)
    assert np.array_equal(np.load(ds.shard_path(ds.shards_of(1)[0]))[0], source[251])


def test_import_npy_of_scalar_records_takes_any_shape(tmp_path: Path) -> None:
    image = np.random.default_rng(0).integers(0, 256, (30, 40), dtype=np.uint8)
    np.save(tmp_path / "image.npy", image)
    ds = import_dataset(tmp_path / "image.npy", 3, tmp_path / "ds", Pixels())
    assert ds.records == 1200 and ds.record_shape == ()
    assert np.array_equal(ds.read_all(), image.reshape(-1))


@pytest.mark.parametrize(
    ("array", "message"),
    [
        (np.zeros((10, 4), np.float64), "holds float64, app 'ints' needs float32"),
        (np.zeros((10, 3), np.float32), r"has shape \(10, 3\); app 'ints' needs \(n, 4\)"),
        (np.zeros(40, np.float32), r"has shape \(40,\); app 'ints' needs \(n, 4\)"),
        (np.zeros((10, 2, 2), np.float32), r"has shape \(10, 2, 2\)"),
        (np.zeros((4,), np.float32), r"has shape \(4,\)"),
        (np.zeros((10, 4), np.float32, order="F"), "Fortran order"),
        (np.zeros((2, 4), np.float32), r"holds 2 records, fewer than the 3 devices \(each"),
        (np.zeros((1, 4), np.float32), r"holds 1 record, fewer than the 3 devices"),
        (np.zeros((0, 4), np.float32), "holds no records: it is empty"),
    ],
)
def test_import_npy_rejects_data_the_app_cannot_read(
    tmp_path: Path, array: np.ndarray, message: str
) -> None:
    np.save(tmp_path / "bad.npy", array)
    with pytest.raises(SpecError, match=message):
        import_dataset(tmp_path / "bad.npy", 3, tmp_path / "ds", Ints())
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("suffix", [".npy", ".parquet"])
def test_import_refuses_points_that_are_not_finite(tmp_path: Path, bad: float, suffix: str) -> None:
    points = np.random.default_rng(0).standard_normal((5000, 8)).astype(np.float32)
    points[4321, 5] = bad  # past the first piece's start, in the second device's half
    src = tmp_path / f"points{suffix}"
    if suffix == ".npy":
        np.save(src, points)
    else:
        pq.write_table(pa.table({f"f{i}": points[:, i] for i in range(8)}), src)
    column = "feature 5" if suffix == ".npy" else "column 'f5'"
    held = re.escape("NaN" if np.isnan(bad) else f"{bad:+}")
    with pytest.raises(SpecError, match=rf"record 4321, {column}, holds {held};") as caught:
        import_dataset(src, 2, tmp_path / "ds", "knn8", shard_bytes=2**14)
    # float32 columns cast to nothing: no value of theirs can have been beyond float32's range
    assert "beyond" not in str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == [src.name]  # nothing half-written


def test_import_of_a_file_that_is_not_npy(tmp_path: Path) -> None:
    (tmp_path / "notes.npy").write_text("hello")
    with pytest.raises(SpecError, match=r"not a \.npy file"):
        import_dataset(tmp_path / "notes.npy", 1, tmp_path / "ds", Ints())


def _save_images(folder: Path, sizes: list[tuple[int, int]]) -> list[np.ndarray]:
    folder.mkdir()
    rng = np.random.default_rng(1)
    images = []
    for i, (h, w) in enumerate(sizes):
        pixels = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(folder / f"img{i:02d}.png")
        images.append(pixels)
    return images


def test_import_images_of_the_record_shape_as_records(tmp_path: Path) -> None:
    images = _save_images(tmp_path / "imgs", [(8, 8)] * 5)
    ds = import_dataset(tmp_path / "imgs", 2, tmp_path / "ds", Tiles(), shard_bytes=2 * 192)
    assert ds.records == 5 and [r["records"] for r in ds.device_rows()] == [3, 2]
    assert np.array_equal(ds.read_all(), np.stack(images))


def test_import_images_of_other_sizes_one_shard_each(tmp_path: Path) -> None:
    images = _save_images(tmp_path / "imgs", [(4, 5), (6, 2), (3, 3)])
    ds = import_dataset(tmp_path / "imgs", 2, tmp_path / "ds", Pixels())
    assert [s.records for s in ds.shards] == [20, 12, 9]  # grayscale pixels
    assert [s.device for s in ds.shards] == [0, 0, 1]
    gray = [np.asarray(Image.fromarray(i).convert("L")).reshape(-1) for i in images]
    assert np.array_equal(ds.read_all(), np.concatenate(gray))


@pytest.mark.parametrize("new_size", [(16, 16), (8, 8), (4, 4)])
@pytest.mark.parametrize("app", [Tiles(), Pixels()])
def test_an_image_replaced_by_another_size_while_imported_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, new_size: tuple[int, int], app: Kernel
) -> None:
    """Counted from its header, then replaced before its pixels were read: larger, it gave
    records of the wrong tiles with exit 0; smaller, a traceback (found by an audit of the
    imports). Nothing is left."""
    _save_images(tmp_path / "imgs", [(8, 16)] * 3)
    victim = tmp_path / "imgs" / "img02.png"
    real = dataset_module._load_image

    def replaced_first(path: Path, *args: Any) -> np.ndarray:
        if path == victim:
            Image.fromarray(np.zeros((*new_size, 3), np.uint8)).save(victim)
        return real(path, *args)

    monkeypatch.setattr(dataset_module, "_load_image", replaced_first)
    with pytest.raises(SpecError, match="changed while it was read: its header said") as caught:
        import_dataset(tmp_path / "imgs", 2, tmp_path / "ds", app)
    assert caught.value.source == str(victim)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["imgs"]


def test_import_images_that_cannot_be_records(tmp_path: Path) -> None:
    _save_images(tmp_path / "imgs", [(8, 8), (7, 7)])
    with pytest.raises(SpecError, match=r"img01\.png") as caught:
        import_dataset(tmp_path / "imgs", 1, tmp_path / "ds", Tiles())
    assert "an image of shape (7, 7, 3) cannot be cut into records of shape (8, 8, 3)" in str(
        caught.value
    )
    (tmp_path / "empty").mkdir()
    with pytest.raises(SpecError, match=r"no \.png/\.jpg/\.jpeg/\.tif/.* images"):
        import_dataset(tmp_path / "empty", 1, tmp_path / "ds", Tiles())
    assert not (tmp_path / "ds").exists()


def test_import_refuses_a_malformed_png_header_with_one_error(tmp_path: Path) -> None:
    """A PNG whose IHDR length is 6, not 13: pillow raises ValueError ("Truncated IHDR
    chunk"), which gave a traceback (the real-data audit)."""
    _save_images(tmp_path / "imgs", [(8, 8)])
    png = tmp_path / "imgs" / "img00.png"
    raw = bytearray(png.read_bytes())
    raw[11] = 6
    png.write_bytes(bytes(raw))
    with pytest.raises(SpecError, match=r"img00\.png: not a readable image \(") as caught:
        import_dataset(tmp_path / "imgs", 1, tmp_path / "ds", Tiles())
    assert "IHDR" in str(caught.value)
    assert not (tmp_path / "ds").exists()


def test_import_refuses_a_fifo_named_like_an_image_without_reading_it(tmp_path: Path) -> None:
    """Opening a FIFO blocks until a writer comes: the import hung (the real-data audit)."""
    _save_images(tmp_path / "imgs", [(8, 8)])
    os.mkfifo(tmp_path / "imgs" / "pipe.png")
    (tmp_path / "imgs" / "dir.jpg").mkdir()
    with pytest.raises(SpecError, match=r"dir\.jpg: not a regular file \(a directory, FIFO"):
        import_dataset(tmp_path / "imgs", 1, tmp_path / "ds", Tiles())
    (tmp_path / "imgs" / "dir.jpg").rmdir()
    with pytest.raises(SpecError, match=r"pipe\.png: not a regular file"):
        import_dataset(tmp_path / "imgs", 1, tmp_path / "ds", Tiles())
    assert not (tmp_path / "ds").exists()


def test_import_leaves_out_hidden_files_and_pillows_warnings(
    tmp_path: Path, recwarn: pytest.WarningsRecorder
) -> None:
    images = _save_images(tmp_path / "imgs", [(8, 8)])
    (tmp_path / "imgs" / "._img00.png").write_bytes(b"\x00\x05\x16\x07 AppleDouble")
    palette = Image.new("P", (8, 8), 1)
    palette.putpalette([0, 0, 0, 255, 0, 0])
    # Transparency as bytes (a tRNS chunk): pillow warns when it converts the image.
    palette.save(tmp_path / "imgs" / "img01.png", transparency=b"\x00\x80")
    ds = import_dataset(tmp_path / "imgs", 1, tmp_path / "ds", Tiles())
    assert ds.records == 2
    assert np.array_equal(ds.read_all()[0], images[0])
    assert not [w for w in recwarn if "Transparency" in str(w.message)]


def test_an_image_above_pillows_bomb_limit_is_said_once_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pillow's DecompressionBombWarning named no file and came at every opening of it (twice
    per import, three times with --crop's summary): the user of a directory of thousands
    could not tell which. Now one LargeImageWarning naming the file; the image is imported."""
    _save_images(tmp_path / "imgs", [(8, 8), (8, 16)])
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)  # 8×16 = 128 px: above, yet < 2×
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("default")
        ds = import_dataset(tmp_path / "imgs", 1, tmp_path / "ds", GrayTiles(), crop=True)
        crop_loss(tmp_path / "imgs", GrayTiles())
    assert ds.records == 3
    bombs = [w for w in said if issubclass(w.category, Image.DecompressionBombWarning)]
    assert [(w.category, str(w.message)) for w in bombs] == [
        (
            LargeImageWarning,
            f"{tmp_path / 'imgs' / 'img01.png'}: 16×8 = 128 pixels, more than pillow's "
            "decompression-bomb warning limit of 100 (PIL.Image.MAX_IMAGE_PIXELS); read all "
            "the same",
        )
    ]


def test_an_image_above_pillows_bomb_limit_where_warnings_are_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _save_images(tmp_path / "imgs", [(8, 16)])
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)
    with warnings.catch_warnings(), pytest.raises(SpecError) as caught:
        warnings.simplefilter("error")
        import_dataset(tmp_path / "imgs", 1, tmp_path / "ds", GrayTiles())
    assert str(caught.value) == (
        f"{tmp_path / 'imgs' / 'img00.png'}: 16×8 = 128 pixels, more than pillow's "
        "decompression-bomb warning limit of 100, and warnings are errors here: not imported"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["imgs"]


def test_import_refuses_an_image_of_more_than_8_bits(tmp_path: Path) -> None:
    # Pillow's conversion to 8-bit grayscale would clip every level above 255 to 255.
    folder = tmp_path / "imgs"
    folder.mkdir()
    Image.new("I;16", (256, 256), 40000).save(folder / "wide.png")  # a 16-bit PNG
    with pytest.raises(SpecError, match=r"wide\.png: an image of mode I;16 has more than 8 bits"):
        import_dataset(folder, 1, tmp_path / "ds", "sobel")
    assert not (tmp_path / "ds").exists()


def _png_16_bit(path: Path, colour_type: int, channels: int) -> None:
    """A 256×256 PNG of 16 bits per sample (pillow writes none in colour), by hand."""
    samples = (np.arange(256 * 256 * channels) * 97 % 65536).astype(">u2")
    rows = samples.reshape(256, 256 * channels)
    raw = b"".join(b"\0" + row.tobytes() for row in rows)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", 256, 256, 16, colour_type, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


@pytest.mark.parametrize(
    ("colour_type", "channels", "raw", "app"),
    [(2, 3, "RGB;16B", "fft2d"), (6, 4, "RGBA;16B", "he"), (4, 2, "LA;16B", "sobel")],
)
def test_import_refuses_a_16_bit_colour_png_that_pillow_opens_as_8_bit(
    tmp_path: Path, colour_type: int, channels: int, raw: str, app: str
) -> None:
    """Pillow opens these as RGB, RGBA or LA and keeps each sample's high byte: the import
    stored a >> 8 without a word."""
    folder = tmp_path / "imgs"
    folder.mkdir()
    _png_16_bit(folder / "deep.png", colour_type, channels)
    with pytest.raises(
        SpecError, match=rf"deep\.png: an image of raw mode {re.escape(raw)} has more than 8 bits"
    ):
        import_dataset(folder, 1, tmp_path / "ds", app)
    assert not (tmp_path / "ds").exists()


def test_a_16_bit_packed_bmp_is_8_bits_per_sample_and_is_read() -> None:
    """RGB565: 16 bits a pixel, 5 or 6 a sample, which pillow widens to 8 correctly. Its raw
    mode `BGR;16` is no 16-bit sample: `wide_mode_error` must not refuse it."""
    w, h, pixels = 2, 2, [[0xF800, 0x07E0], [0x001F, 0xFFFF]]
    data = b"".join(struct.pack(f"<{w}H", *row) for row in reversed(pixels))
    info = struct.pack("<IiiHHIIiiII", 40, w, h, 1, 16, 3, len(data), 2835, 2835, 0, 0)
    masks = struct.pack("<III", 0xF800, 0x07E0, 0x001F)
    offset = 14 + len(info) + len(masks)
    bmp = struct.pack("<2sIHHI", b"BM", offset + len(data), 0, 0, offset) + info + masks + data
    with Image.open(io.BytesIO(bmp)) as image:
        assert image.tile[0][3][0] == "BGR;16"
        assert wide_mode_error(image) is None
        rgb = np.asarray(image.convert("RGB")).tolist()
    assert rgb == [[[255, 0, 0], [0, 255, 0]], [[0, 0, 255], [255, 255, 255]]]


# -- real images: record-sized tiles, never a reshape ------------------------------------

SKIMAGE_DATA = Path(skimage.data.__file__).parent


def _sample_images(folder: Path, *names: str) -> Path:
    folder.mkdir()
    for name in names:
        shutil.copy(SKIMAGE_DATA / name, folder / name)
    return folder


def test_one_image_points_to_its_directory(tmp_path: Path) -> None:
    folder = _sample_images(tmp_path / "imgs", "camera.png")
    with pytest.raises(SpecError, match=r"camera.png: is one image; .* give the directory"):
        import_dataset(folder / "camera.png", 2, tmp_path / "ds", "he")
    assert not (tmp_path / "ds").exists()


def _quarters(image: np.ndarray) -> np.ndarray:
    """A 512×512 image's four 256×256 tiles, by numpy slicing, in the documented order."""
    return np.stack([image[:256, :256], image[:256, 256:], image[256:, :256], image[256:, 256:]])


def test_import_camera_for_sobel_cuts_it_into_tiles(tmp_path: Path) -> None:
    camera = skimage.data.camera()  # 512×512 grayscale
    src = _sample_images(tmp_path / "imgs", "camera.png")
    ds = import_dataset(src, 2, tmp_path / "ds", "sobel")
    assert ds.records == 4 and [r["records"] for r in ds.device_rows()] == [2, 2]
    records = ds.read_all()
    assert np.array_equal(records, _quarters(camera))
    assert not np.array_equal(records[0], camera[:128].reshape(256, 256))  # the old reshape


def test_import_astronaut_for_fft2d_cuts_rgb_tiles(tmp_path: Path) -> None:
    astronaut = skimage.data.astronaut()  # 512×512 RGB
    src = _sample_images(tmp_path / "imgs", "astronaut.png")
    ds = import_dataset(src, 1, tmp_path / "ds", "fft2d")
    assert ds.record_shape == (256, 256, 3)
    assert np.array_equal(ds.read_all(), _quarters(astronaut))


@pytest.mark.parametrize(("app", "mode"), [("sobel", "L"), ("fft2d", "RGB")])
def test_import_converts_each_image_to_the_records_channels(
    tmp_path: Path, app: str, mode: str
) -> None:
    src = _sample_images(tmp_path / "imgs", "astronaut.png", "camera.png")  # RGB, grayscale
    ds = import_dataset(src, 1, tmp_path / "ds", app)
    expected = [
        _quarters(np.asarray(Image.open(src / name).convert(mode)))
        for name in ("astronaut.png", "camera.png")
    ]
    assert np.array_equal(ds.read_all(), np.concatenate(expected))


def test_import_tiles_of_several_images_split_over_devices_and_shards(tmp_path: Path) -> None:
    # Eight tiles over three devices (3, 3, 2) in shards of two records: device 1's first
    # shard holds camera's last tile and moon's first.
    src = _sample_images(tmp_path / "imgs", "camera.png", "moon.png")
    ds = import_dataset(src, 3, tmp_path / "ds", "sobel", shard_bytes=2 * 256 * 256)
    assert [r["records"] for r in ds.device_rows()] == [3, 3, 2]
    assert [s.records for s in ds.shards] == [2, 1, 2, 1, 2]
    tiles = np.concatenate([_quarters(skimage.data.camera()), _quarters(skimage.data.moon())])
    assert np.array_equal(ds.read_all(), tiles)
    assert np.array_equal(np.load(ds.shard_path(ds.shards[2])), tiles[3:5])


def test_import_tiles_row_by_row_of_a_wide_image(tmp_path: Path) -> None:
    image = np.random.default_rng(3).integers(0, 256, (16, 24, 3), dtype=np.uint8)
    (tmp_path / "imgs").mkdir()
    Image.fromarray(image).save(tmp_path / "imgs" / "wide.png")
    ds = import_dataset(tmp_path / "imgs", 1, tmp_path / "ds", Tiles())
    expected = [image[r : r + 8, c : c + 8] for r in (0, 8) for c in (0, 8, 16)]
    assert np.array_equal(ds.read_all(), np.stack(expected))


@pytest.mark.parametrize(
    ("app", "name", "shapes"),
    [
        ("sobel", "coins.png", "shape (303, 384) cannot be cut into records of shape (256, 256)"),
        (
            "fft2d",
            "chelsea.png",
            "shape (300, 451, 3) cannot be cut into records of shape (256, 256, 3)",
        ),
    ],
)
def test_import_refuses_an_image_that_is_not_whole_tiles(
    tmp_path: Path, app: str, name: str, shapes: str
) -> None:
    src = _sample_images(tmp_path / "imgs", "camera.png", name)
    with pytest.raises(SpecError) as caught:
        import_dataset(src, 1, tmp_path / "ds", app)
    assert str(caught.value).startswith(f"{src / name}: an image of {shapes}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["imgs"]


@pytest.mark.parametrize(("app", "mode"), [("sobel", "L"), ("fft2d", "RGB")])
def test_import_crop_keeps_the_whole_tiles_that_fit(tmp_path: Path, app: str, mode: str) -> None:
    """coins (303×384) gives its one whole 256×256 tile, chelsea (300×451) its one, camera
    (512×512) its four: the tiles by numpy slicing of each image's top-left corner."""
    src = _sample_images(tmp_path / "imgs", "camera.png", "chelsea.png", "coins.png")
    ds = import_dataset(src, 2, tmp_path / "ds", app, crop=True)
    pixels = {n: np.asarray(Image.open(src / n).convert(mode)) for n in sorted(os.listdir(src))}
    expected = [
        _quarters(pixels["camera.png"]),
        pixels["chelsea.png"][None, :256, :256],
        pixels["coins.png"][None, :256, :256],
    ]
    assert ds.records == 6
    assert np.array_equal(ds.read_all(), np.concatenate(expected))
    assert ds.summary()["source"].endswith(" --crop")


def test_import_crop_skips_images_smaller_than_a_record(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    (tmp_path / "imgs").mkdir()
    images = {
        "a.png": rng.integers(0, 256, (20, 17), dtype=np.uint8),  # four 8×8 tiles, edges cut
        "b.png": rng.integers(0, 256, (7, 30), dtype=np.uint8),  # shorter than a record
        "c.png": rng.integers(0, 256, (8, 8), dtype=np.uint8),  # one whole record
    }
    for name, image in images.items():
        Image.fromarray(image).save(tmp_path / "imgs" / name)
    ds = import_dataset(tmp_path / "imgs", 3, tmp_path / "ds", GrayTiles(), crop=True)
    a, c = images["a.png"], images["c.png"]
    tiles = [a[r : r + 8, col : col + 8] for r in (0, 8) for col in (0, 8)]
    assert np.array_equal(ds.read_all(), np.stack([*tiles, c]))
    loss = crop_loss(tmp_path / "imgs", GrayTiles())
    assert (loss.images, loss.cropped, loss.empty) == (3, ["a.png", "b.png"], ["b.png"])
    assert loss.pixels == 20 * 17 + 7 * 30 + 64
    assert loss.pixels_dropped == 20 * 17 - 4 * 64 + 7 * 30


def test_import_crop_refuses_a_directory_with_no_whole_record(tmp_path: Path) -> None:
    (tmp_path / "imgs").mkdir()
    Image.fromarray(np.zeros((7, 30), dtype=np.uint8)).save(tmp_path / "imgs" / "b.png")
    with pytest.raises(SpecError, match=r"every image is smaller than one .* cropping leaves no"):
        import_dataset(tmp_path / "imgs", 1, tmp_path / "ds", GrayTiles(), crop=True)
    assert not (tmp_path / "ds").exists()


def test_import_crop_of_a_missing_directory_says_it_is_missing(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="no such file or directory"):
        import_dataset(tmp_path / "nothing", 1, tmp_path / "ds", "sobel", crop=True)


@pytest.mark.parametrize("devices", [1, 2])
def test_import_crop_skips_small_images_inside_a_shard(tmp_path: Path, devices: int) -> None:
    """Images too small for a record first, between two others and last, in shards that
    span them: the records are the others' tiles, in order."""
    rng = np.random.default_rng(6)
    (tmp_path / "imgs").mkdir()
    shapes = {"a.png": (5, 9), "b.png": (8, 16), "c.png": (3, 3), "d.png": (9, 8), "e.png": (2, 30)}
    images = {n: rng.integers(0, 256, shape, dtype=np.uint8) for n, shape in shapes.items()}
    for name, image in images.items():
        Image.fromarray(image).save(tmp_path / "imgs" / name)
    ds = import_dataset(
        tmp_path / "imgs", devices, tmp_path / "ds", GrayTiles(), crop=True, shard_bytes=10**6
    )
    b, d = images["b.png"], images["d.png"]
    assert np.array_equal(ds.read_all(), np.stack([b[:, :8], b[:, 8:], d[:8]]))


@pytest.mark.parametrize("app", ["lc", "sobel"])
def test_import_crop_is_only_for_images_cut_into_records(tmp_path: Path, app: str) -> None:
    src = tmp_path / "points.npy"
    np.save(src, np.zeros((4, 8), dtype=np.float32))
    with pytest.raises(SpecError, match="crop: only a directory of images cut into records"):
        import_dataset(src, 1, tmp_path / "ds", app, crop=True)


def test_import_refuses_images_for_a_point_app(tmp_path: Path) -> None:
    src = _sample_images(tmp_path / "imgs", "camera.png")
    with pytest.raises(SpecError, match=r"app 'lc' has records of shape \(8,\), not images") as e:
        import_dataset(src, 1, tmp_path / "ds", "lc")
    assert "is a directory, which is read as a directory of images" in str(e.value)
    assert not (tmp_path / "ds").exists()


def test_a_parquet_table_written_as_part_files_is_read_as_one_table(tmp_path: Path) -> None:
    """Spark writes a table as a directory `x.parquet/part-00000-….parquet`: it was read as
    a directory of images and refused (tests/runtime/test_parquet_parts.py has the rest)."""
    src = tmp_path / "spark.parquet"
    src.mkdir()
    table = pa.table({f"c{j}": np.arange(10, dtype=np.float32) + j for j in range(8)})
    pq.write_table(table, src / "part-00000-1234.snappy.parquet")
    (src / "_SUCCESS").touch()
    (src / ".part-00000-1234.snappy.parquet.crc").touch()
    ds = import_dataset(src, 2, tmp_path / "ds", "lc")
    assert ds.shard_format == "parquet" and ds.read_all()[:, 7].tolist() == list(range(7, 17))
    with pytest.raises(SpecError, match=r"app 'sobel' has records of shape \(256, 256\)") as e:
        import_dataset(src, 1, tmp_path / "ds2", "sobel")
    assert str(e.value).startswith(f"{src}: ")
    assert not (tmp_path / "ds2").exists()


def test_import_refuses_fewer_tiles_than_devices(tmp_path: Path) -> None:
    src = _sample_images(tmp_path / "imgs", "camera.png")
    with pytest.raises(
        SpecError,
        match=r"images make 4 sobel records of shape \(256, 256\), fewer than the 5 devices \(each",
    ):
        import_dataset(src, 5, tmp_path / "ds", "sobel")


# -- write errors and free space ----------------------------------------------------------


class _BrokenFile(io.RawIOBase):
    """A file whose writes fail as a full disk or a file size limit makes them fail."""

    def __init__(self, inner: Any, error: int):
        self.inner = inner
        self.error = error

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        raise OSError(self.error, os.strerror(self.error))

    def close(self) -> None:
        self.inner.close()
        super().close()


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EFBIG, errno.EIO])
def test_a_failing_shard_write_is_one_clear_error_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: int
) -> None:
    real_open = Path.open

    def open_(self: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        file = real_open(self, mode, *args, **kwargs)
        return _BrokenFile(file, error) if self.name == "shard-0002.npy" else file

    monkeypatch.setattr(Path, "open", open_)
    with pytest.raises(SpecError) as caught:
        _make(tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'ds'}: cannot write device-00/shard-0002.npy: ")
    assert os.strerror(error) in message and message.endswith("; nothing was written")
    assert list(tmp_path.iterdir()) == []


def test_a_directory_that_cannot_be_made_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As root, a chmod 555 directory would not refuse anything: simulate its refusal.
    real_mkdir = Path.mkdir

    def mkdir(self: Path, *args: Any, **kwargs: Any) -> None:
        if ".tmp-" in self.name:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))
        real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    with pytest.raises(SpecError, match="cannot create the data set directory: Permission denied"):
        _make(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_read_only_parent_directory(read_only_dir: Path) -> None:
    refused = "cannot create the data set directory: (Permission denied|Operation not permitted)"
    with pytest.raises(SpecError, match=refused):
        _make(read_only_dir)
    assert list(read_only_dir.iterdir()) == []


def test_a_file_where_a_parent_directory_should_be(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    with pytest.raises(SpecError, match="afile is not a directory"):
        generate_dataset(Ints(), 10_000, 3, tmp_path / "afile" / "sub" / "ds")


class _Disk:
    """statvfs of a file system with `free` bytes free in 1-byte blocks (0 blocks in all
    is a virtual file system such as /proc)."""

    def __init__(self, free: int, blocks: int = 10**9):
        self.f_bavail, self.f_frsize, self.f_blocks = free, 1, blocks


def test_a_data_set_larger_than_the_free_space_is_refused_before_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dataset_module.os, "statvfs", lambda path: _Disk(9_999))
    with pytest.raises(SpecError) as caught:
        _make(tmp_path)  # 625 records of 16 bytes: 10,000 bytes
    assert "needs at least 9.77 KiB (10,000 bytes)" in str(caught.value)
    assert "has 9.76 KiB (9,999 bytes) free; nothing was written" in str(caught.value)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(dataset_module.os, "statvfs", lambda path: _Disk(10_000))
    assert _make(tmp_path).total_bytes == 10_000


def test_no_room_for_a_replacement_says_the_old_data_set_keeps_its_space(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With overwrite, the old data set is removed only once the new one is whole: 10,000
    bytes replaced by 10,000 on a disk with 9,999 free was refused with no word of why."""
    old = _make(tmp_path)
    monkeypatch.setattr(dataset_module.os, "statvfs", lambda path: _Disk(9_999))
    with pytest.raises(SpecError) as caught:
        _make(tmp_path, overwrite=True)
    assert caught.value.detail.endswith(
        "has 9.76 KiB (9,999 bytes) free (the data set it replaces keeps its space until the "
        "new one is whole: remove it first, or write elsewhere); nothing was written"
    )
    assert open_dataset(old.path).manifest == old.manifest  # the old one stays
    with pytest.raises(SpecError) as fresh:
        _make(tmp_path, name="other")
    assert "replaces" not in fresh.value.detail  # nothing to replace there


def test_a_virtual_file_system_is_refused_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/proc reports 0 blocks: "has 0 B free" hid that it cannot be written at all."""
    monkeypatch.setattr(dataset_module.os, "statvfs", lambda path: _Disk(0, blocks=0))
    with pytest.raises(SpecError, match=r"no storage of its own .* cannot hold a data set"):
        _make(tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("overwrite", [False, True])
def test_an_existing_file_is_not_replaced_whatever_overwrite_says(
    tmp_path: Path, overwrite: bool
) -> None:
    """Without --overwrite it used to say "pass --overwrite", which then refused too."""
    (tmp_path / "ds").write_text("mine")
    with pytest.raises(SpecError, match="ds: exists and is not a data set directory"):
        _make(tmp_path, overwrite=overwrite)
    assert (tmp_path / "ds").read_text() == "mine"


def test_an_empty_directory_is_written_into_without_overwrite(tmp_path: Path) -> None:
    """`mkdir out` before generating is common, and nothing in it can be lost: it used to
    say "already exists; pass overwrite". A directory with anything in it still does."""
    (tmp_path / "ds").mkdir()
    ds = _make(tmp_path)
    assert (tmp_path / "ds" / MANIFEST).is_file() and ds.total_bytes == 10_000
    with pytest.raises(SpecError, match="ds: already exists; pass overwrite"):
        _make(tmp_path)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(SpecError, match="other: already exists; pass overwrite"):
        _make(tmp_path, "other")
    assert (tmp_path / "other" / "notes.txt").read_text() == "mine"


def test_npy_shards_put_their_records_on_a_page(tmp_path: Path) -> None:
    """Records begin NPY_DATA_ALIGN bytes in, and numpy reads the padded header."""
    ds = _make(tmp_path)
    path = ds.shard_path(ds.shards[0])
    mapped = np.load(path, mmap_mode="r")
    assert mapped.offset == dataset_module.NPY_DATA_ALIGN == 4096
    assert path.stat().st_size == 4096 + ds.shards[0].records * ds.record_bytes
    np.testing.assert_array_equal(np.load(path), ds.read_all()[: ds.shards[0].records])


def test_a_damaged_npy_header_is_named_briefly(tmp_path: Path) -> None:
    ds = _make(tmp_path)
    shard = ds.shards[1]
    path = ds.shard_path(shard)
    raw = bytearray(path.read_bytes())
    raw[200] = ord("0")  # inside the header's padding: numpy can no longer parse it
    path.write_bytes(raw)
    chunks = dataset_module.shard_chunks(path, shard, ds.layout, 100)
    with pytest.raises(ShardError, match=r"not a readable \.npy shard") as caught:
        next(chunks)
    assert caught.value.source == str(path)
    assert len(str(caught.value)) < 300 + len(str(path))  # not 4 KiB of quoted padding


@pytest.mark.parametrize(
    ("stray", "needle"),
    [
        ("device-02", "not in the manifest, which lists 2 devices (device-00 to device-01)"),
        ("device-01/shard-0007.npy", "a shard file the manifest does not list"),
    ],
)
def test_a_device_or_shard_the_manifest_does_not_list_is_an_error(
    tmp_path: Path, stray: str, needle: str
) -> None:
    ds = generate_dataset(Ints(), 10_000, 2, tmp_path / "ds", shard_bytes=8000)
    target = ds.path / stray
    if target.suffix:
        shutil.copy(ds.shard_path(ds.shards[0]), target)
    else:
        target.mkdir()
    with pytest.raises(SpecError, match=re.escape(needle)) as caught:
        open_dataset(ds.path)
    assert str(target) in str(caught.value)


def test_a_stray_device_beside_a_missing_one_names_both(tmp_path: Path) -> None:
    """`device-01` copied in as `device-07`: the error told to remove device-07 and said
    nothing of device-01's absence, which only the next run named."""
    ds = generate_dataset(Ints(), 40_000, 3, tmp_path / "ds", shard_bytes=4000)
    (ds.path / "device-01").rename(ds.path / "device-07")
    lost = len(ds.shards_of(1))
    assert lost > 1
    with pytest.raises(SpecError) as caught:
        open_dataset(ds.path)
    message = str(caught.value)
    assert caught.value.source == str(ds.path / "device-07"), message
    assert "not in the manifest" in message
    assert (
        f"; and what the manifest lists is not all there: {ds.path / 'device-01'}: device "
        f"directory is missing, its {lost} shards"
    ) in message
    (ds.path / "device-07").rename(ds.path / "device-01")
    (ds.path / "device-02" / "shard-0099.npy").touch()
    with pytest.raises(SpecError) as alone:
        open_dataset(ds.path)
    assert str(alone.value).endswith("remove it, or import the data again")  # nothing missing


def _write_bad_npys(folder: Path) -> dict[str, str]:
    """Files that are not a usable .npy, each with the message it must get."""
    folder.mkdir()
    good = folder / "good.npy"
    np.save(good, np.zeros((100, 8), np.float32))
    np.save(folder / "objects.npy", np.array([{"a": 1}] * 10, dtype=object), allow_pickle=True)
    with (folder / "archive.npy").open("wb") as f:
        np.savez(f, a=np.zeros(3))  # an .npz under a .npy name
    (folder / "text.npy").write_text("a,b\n1,2\n")
    (folder / "truncated.npy").write_bytes(good.read_bytes()[:1000])
    (folder / "trailing.npy").write_bytes(good.read_bytes() + b"\0" * 5)
    return {
        "objects.npy": "holds Python objects (dtype object), not numbers",
        "archive.npy": "is a zip archive (.npz?), not a single .npy array",
        "text.npy": "not a .npy file: it does not start with NumPy's magic bytes",
        "truncated.npy": "truncated: its header declares (100, 8) float32 (3200 bytes of data)",
        "trailing.npy": "5 bytes follow the data its header declares ((100, 8) float32, 3200 "
        "bytes); a .npy file ends with its data",
    }


def test_import_names_what_is_wrong_with_a_file_that_is_not_a_usable_npy(tmp_path: Path) -> None:
    for name, message in _write_bad_npys(tmp_path / "in").items():
        with pytest.raises(SpecError, match=re.escape(message)) as caught:
            import_dataset(tmp_path / "in" / name, 1, tmp_path / "ds", "lc")
        assert name in str(caught.value) and "pickle" not in str(caught.value)
    assert not (tmp_path / "ds").exists()


def test_import_reads_an_npy_of_format_version_3(tmp_path: Path) -> None:
    """numpy writes 3.0 (a UTF-8 header) and reads it; the import refused it (found by an
    audit of the imports)."""
    points = np.arange(80, dtype=np.float32).reshape(10, 8)
    with (tmp_path / "v3.npy").open("wb") as f:
        np.lib.format.write_array(f, points, version=(3, 0))
    ds = import_dataset(tmp_path / "v3.npy", 2, tmp_path / "ds", "lc")
    np.testing.assert_array_equal(ds.read_all(), points)


def test_import_says_a_negative_length_in_an_npy_header_is_one(tmp_path: Path) -> None:
    """It was "64000 bytes follow the data its header declares (… -32000 bytes)"."""
    src = tmp_path / "negative.npy"
    np.save(src, np.zeros((1000, 8), np.float32))
    raw = src.read_bytes().replace(b"(1000, 8)", b"(-1000, 8)", 1)
    src.write_bytes(raw[:10] + raw[10:].replace(b" \n", b"\n", 1))  # the header's length kept
    assert len(src.read_bytes()) == 128 + 32_000
    with pytest.raises(SpecError, match=r"declares shape \(-1000, 8\), with a negative length"):
        import_dataset(src, 1, tmp_path / "ds", "lc")
    assert not (tmp_path / "ds").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_import_of_a_fifo_says_it_is_not_a_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.npy")
    with pytest.raises(SpecError, match="not a regular file or a directory"):
        import_dataset(tmp_path / "pipe.npy", 1, tmp_path / "ds", "lc")


def test_a_data_set_named_near_the_file_system_limit_is_made_and_replaced(tmp_path: Path) -> None:
    out = tmp_path / ("n" * 252)  # fits in 255 bytes; its staging names must too
    for seed in (1, 2):
        made = generate_dataset(Ints(), 1000, 2, out, seed=seed, overwrite=True)
    assert [p.name for p in tmp_path.iterdir()] == [out.name]
    assert np.array_equal(open_dataset(out).read_all(), made.read_all())


def test_only_the_parents_a_run_made_are_its_to_remove(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parents are made shallowest first; one that another process makes between the look
    and the mkdir (FileExistsError) is not this run's, so its failure leaves it for the
    other run."""
    from ndpkit.runtime.dataset import _make_parents  # noqa: PLC0415 - a private helper

    made = _make_parents(tmp_path / "a" / "b" / "c" / "ds")
    assert made == [tmp_path / "a" / "b" / "c", tmp_path / "a" / "b", tmp_path / "a"]
    assert (tmp_path / "a" / "b" / "c").is_dir()
    (tmp_path / "x").mkdir()  # made by "another run" after this one looked
    real_exists = Path.exists
    monkeypatch.setattr(
        Path, "exists", lambda self: False if self == tmp_path / "x" else real_exists(self)
    )
    assert _make_parents(tmp_path / "x" / "y" / "ds") == [tmp_path / "x" / "y"]


@pytest.mark.parametrize(
    ("target", "says"),
    [("gone", "is a symbolic link to nothing (gone)"), ("ds", "is a symbolic link to a loop")],
    ids=["dangling", "loop"],
)
def test_a_data_set_link_to_nothing_is_said_so_not_no_such_directory(
    tmp_path: Path, target: str, says: str
) -> None:
    """`--data link` where the link names nothing (a disk not mounted) or loops was "no such
    data set directory", sending the user looking for a directory named `link`."""
    link = tmp_path / "ds"
    link.symlink_to(target)
    with pytest.raises(SpecError) as caught:
        open_dataset(link)
    assert caught.value.source == str(link)
    assert caught.value.detail.startswith(says)
    assert caught.value.detail.endswith("not a data set directory")


def test_a_directory_without_a_manifest_points_to_data_import(tmp_path: Path) -> None:
    (tmp_path / "imgs").mkdir()
    with pytest.raises(SpecError) as caught:
        open_dataset(tmp_path / "imgs")
    assert caught.value.detail.startswith("missing: not a data set")
    assert "`ndpkit data import PATH --app APP -o DIR`" in caught.value.detail


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (os.mkfifo, "is not a regular file (a device, FIFO or socket)"),
        (lambda manifest: manifest.symlink_to("/dev/null"), "is not a regular file"),
        (lambda manifest: manifest.symlink_to("gone.json"), "is a symbolic link to nothing"),
    ],
    ids=["fifo", "device", "dangling-link"],
)
def test_a_manifest_that_is_there_but_no_file_is_not_called_missing(
    tmp_path: Path, make: Any, says: str
) -> None:
    """A FIFO, a device or a link to nothing in the manifest's place was said to be
    "missing", sending the user looking for a file that was there."""
    root = tmp_path / "ds"
    generate_dataset("lc", 2**20, 2, root)
    (root / MANIFEST).unlink()
    make(root / MANIFEST)
    with pytest.raises(SpecError) as caught:
        open_dataset(root)
    assert caught.value.source == str(root / MANIFEST)
    assert caught.value.detail.startswith(says)


@pytest.mark.parametrize(
    ("shard_format", "message"),
    [
        ("npy", r"holds float32 \(2048, 8\), the manifest says float32 \(2049, 8\)"),
        ("parquet", "holds 2048 rows of x0: float, .*the manifest says 2049 rows"),
    ],
)
def test_verify_checks_each_shard_against_the_manifest_not_only_its_crc(
    tmp_path: Path, shard_format: ShardFormat, message: str
) -> None:
    """A manifest edited to give one shard a record more (the later offsets and the totals
    moved to match) kept every CRC-32: `data show --verify` said verified."""
    ds = generate_dataset(
        "lc", 2**18, 2, tmp_path / "ds", shard_bytes=2**16, shard_format=shard_format
    )
    manifest_path = ds.path / MANIFEST
    manifest = json.loads(manifest_path.read_text())
    manifest["shards"][1]["records"] += 1
    for later in manifest["shards"][2:]:
        later["offset"] += 1
    manifest["records"] += 1
    manifest["data_bytes"] += 32
    manifest_path.write_text(json.dumps(manifest))
    edited = open_dataset(ds.path)
    with pytest.raises(ShardError, match=message) as caught:
        edited.verify()
    assert caught.value.source == str(ds.path / "device-00" / "shard-0001") + (
        ".npy" if shard_format == "npy" else ".parquet"
    )


def test_a_shard_with_bytes_after_its_records_is_refused_even_with_a_matching_manifest(
    tmp_path: Path,
) -> None:
    ds = generate_dataset("lc", 2**18, 2, tmp_path / "ds", shard_bytes=2**16)
    shard = ds.path / "device-00" / "shard-0001.npy"
    shard.write_bytes(shard.read_bytes() + b"\0" * 5)
    manifest_path = ds.path / MANIFEST
    manifest = json.loads(manifest_path.read_text())
    manifest["shards"][1]["file_bytes"] += 5
    manifest["shards"][1]["crc32"] = f"{zlib.crc32(shard.read_bytes()):08x}"
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(ShardError, match="holds 5 bytes after the 2048 records its header"):
        open_dataset(ds.path).verify()


def test_a_staging_directory_is_locked_while_written_and_swept_once_its_run_is_killed(
    tmp_path: Path,
) -> None:
    """A real SIGKILL mid-write: the lock dies with the run, so the leftover is removed once
    it has not changed for STALE_STAGING_S; while the run lives, it is not."""
    script = (
        "import sys\n"
        "from ndpkit.runtime import generate_dataset\n"
        "generate_dataset('lc', 2**29, 2, sys.argv[1], shard_bytes=2**16)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "ds")])
    try:
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob("ds.tmp-*/device-00/shard-0001.npy")):
            assert child.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        (staging,) = tmp_path.glob("ds.tmp-*")
        assert remove_stale_staging(tmp_path / "ds") == []  # held, and fresh
        for path in [staging, *staging.iterdir()]:
            os.utime(path, (time.time() - 120, time.time() - 120))
        assert remove_stale_staging(tmp_path / "ds") == []  # held: a live run's, however old
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert staging.is_dir()
    assert (staging / STAGING_MARKER).is_file()
    for path in [staging, *staging.iterdir()]:
        os.utime(path, (time.time() - 120, time.time() - 120))
    assert remove_stale_staging(tmp_path / "ds") == [staging]
    assert list(tmp_path.iterdir()) == []


def _aged(*paths: Path) -> None:
    then = time.time() - 3600
    for path in paths:
        os.utime(path, (then, then), follow_symlinks=False)


def test_only_a_directory_ndpkit_made_is_swept_whatever_its_name(tmp_path: Path) -> None:
    """The sweep matched `DS.tmp-` and 8 hex digits alone: `ds.tmp-cafe2024` or
    `ds.tmp-20240101`, a user's own, went with everything in it."""
    mine = tmp_path / "ds.tmp-cafe2024"
    (mine / "device-00").mkdir(parents=True)
    (mine / "notes.txt").write_text("precious")
    ours = tmp_path / "ds.tmp-0badf00d"
    ours.mkdir()
    (ours / STAGING_MARKER).write_text("")
    marked = tmp_path / "elsewhere"  # a link to a marked directory is not followed
    marked.mkdir()
    (marked / STAGING_MARKER).write_text("")
    (tmp_path / "ds.tmp-20240101").symlink_to(marked)
    _aged(mine, mine / "device-00", ours, marked, tmp_path / "ds.tmp-20240101")
    assert remove_stale_staging(tmp_path / "ds") == [ours]
    assert (mine / "notes.txt").read_text() == "precious"
    assert (marked / STAGING_MARKER).is_file()


def test_the_marker_is_in_the_staging_directory_while_it_is_written_not_in_the_data_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []
    real = dataset_module._write_npy_in_place

    def write(path: Path, *args: Any) -> tuple[int, str]:
        seen.append((path.parents[1] / STAGING_MARKER).is_file())
        return real(path, *args)

    monkeypatch.setattr(dataset_module, "_write_npy_in_place", write)
    ds = _make(tmp_path)
    assert seen and all(seen)
    assert not (ds.path / STAGING_MARKER).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]


def test_a_refused_call_removes_no_staging_directory(tmp_path: Path) -> None:
    """Swept only once the arguments are checked, so a call refused for them changes
    nothing; a call that goes on removes it."""
    left = tmp_path / "ds.tmp-0badf00d"
    left.mkdir()
    (left / STAGING_MARKER).write_text("")
    _aged(left)
    removed: list[Path] = []
    with pytest.raises(SpecError, match="no such file or directory"):
        import_dataset(
            tmp_path / "missing.npy", 1, tmp_path / "ds", "lc", on_stale_removed=removed.append
        )
    with pytest.raises(SpecError, match="less than one"):
        generate_dataset("lc", 8, 2, tmp_path / "ds", on_stale_removed=removed.append)
    assert left.is_dir() and removed == []
    generate_dataset("lc", 2**16, 2, tmp_path / "ds", on_stale_removed=removed.append)
    assert removed == [left] and not left.exists()


class _CountedShards(tuple):  # type: ignore[type-arg]
    """The manifest's shards, counting how often they are walked."""

    walks = 0

    def __iter__(self) -> Any:
        type(self).walks += 1
        return super().__iter__()


def test_each_devices_shards_are_found_without_a_walk_per_device(tmp_path: Path) -> None:
    """`shards_of` walked every shard for each device: `data show` of 65,536 devices took
    four minutes."""
    ds = _make(tmp_path)
    expected = [tuple(s for s in ds.shards if s.device == d) for d in range(ds.devices)]
    rows = ds.device_rows()
    counted = Dataset(ds.path, ds.manifest.model_copy(update={"shards": _CountedShards(ds.shards)}))
    _CountedShards.walks = 0
    assert [counted.shards_of(d) for d in range(ds.devices)] == expected
    assert counted.device_rows() == rows
    assert [counted.device_bytes(d) for d in range(ds.devices)] == [
        sum(s.records for s in shards) * ds.record_bytes for shards in expected
    ]
    assert _CountedShards.walks == 1
    with pytest.raises(SpecError, match=f"device: no device {ds.devices}"):
        counted.shards_of(ds.devices)  # past the last device: an error, not ()


def test_an_import_source_truncated_while_read_is_an_error_not_a_crash(tmp_path: Path) -> None:
    """The source is read, not mapped: a mapped page past a new end was a SIGBUS (or an
    EFAULT blamed on the shard being written). Here the header is checked before the file
    shrinks, as when it is truncated mid-import."""
    src = tmp_path / "points.npy"
    np.save(src, np.zeros((5000, 8), np.float32))
    real = dataset_module._open_npy

    def then_truncated(path: Path) -> Any:
        opened = real(path)
        os.truncate(path, 20_000)
        return opened

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dataset_module, "_open_npy", then_truncated)
        with pytest.raises(SpecError, match="changed while it was read") as caught:
            import_dataset(src, 2, tmp_path / "ds", "lc", shard_bytes=2**16)
    assert caught.value.source == str(src)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["points.npy"]


@pytest.mark.parametrize("how", ["renamed over", "written to"])
def test_an_import_source_changed_between_pieces_is_an_error_not_a_mixture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """A .npy replaced by rename (or rewritten in place) after some pieces were read: the
    data set held the first pieces of the old file and the rest of the new, with exit 0
    (found by an audit of the imports)."""
    src = tmp_path / "points.npy"
    np.save(src, np.zeros((5000, 8), np.float32))
    an_hour_ago = time.time_ns() - 3600 * 10**9  # a write now changes the time, however coarse
    os.utime(src, ns=(an_hour_ago, an_hour_ago))
    real, calls = dataset_module.read_records, []

    def changed_after_the_first(*args: Any, **kwargs: Any) -> np.ndarray:
        calls.append(1)
        if len(calls) == 2:
            if how == "renamed over":
                np.save(tmp_path / "new.npy", np.full((5000, 8), 7, np.float32))
                os.replace(tmp_path / "new.npy", src)
            else:
                with src.open("r+b") as f:
                    f.seek(-32, os.SEEK_END)
                    f.write(np.full(8, 7, np.float32).tobytes())
        return real(*args, **kwargs)

    monkeypatch.setattr(dataset_module, "read_records", changed_after_the_first)
    monkeypatch.setattr(dataset_module, "_PIECE_BYTES", 2**14)
    said = "was replaced by another file" if how == "renamed over" else "was written to"
    with pytest.raises(SpecError, match=rf"changed while it was read \(it {said}\)") as caught:
        import_dataset(src, 2, tmp_path / "ds", "lc", shard_bytes=2**16)
    assert len(calls) == 2 and caught.value.source == str(src)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["points.npy"]


def test_an_import_source_renamed_over_while_its_header_is_read_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replaced right after np.load checked the old file's header, the new file's bytes were
    read at the old header's offset (header padding as records): a review found it."""
    src = tmp_path / "points.npy"
    np.save(src, np.zeros((1000, 8), np.float32))
    np.save(tmp_path / "new.npy", np.full((1000, 8), 7, np.float32))
    real = dataset_module._open_npy

    def then_replaced(path: Path) -> Any:
        opened = real(path)
        os.replace(tmp_path / "new.npy", src)
        return opened

    monkeypatch.setattr(dataset_module, "_open_npy", then_replaced)
    with pytest.raises(SpecError, match="changed while it was read") as caught:
        import_dataset(src, 2, tmp_path / "ds", "lc")
    assert caught.value.source == str(src)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["points.npy"]


def test_a_parquet_source_with_fewer_rows_than_its_metadata_is_an_error(tmp_path: Path) -> None:
    rows = dataset_module._Rows(iter([np.zeros((3, 8), np.float32)]), tmp_path / "t.parquet")
    assert sum(len(piece) for piece in rows.take(3)) == 3
    with pytest.raises(SpecError, match="changed while it was read: it ended before the rows"):
        list(rows.take(1))


@pytest.mark.parametrize("read", ["chunks", "spread"])
def test_a_shard_truncated_while_this_process_reads_it_is_an_error_not_a_sigbus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read: str
) -> None:
    """The command's own reads (streamed verification, the profiled sample, K-Means' starting
    sample: `spread`, found mapping its windows by an audit) copy chunks: a mapped window of
    a shard truncated meanwhile ended the whole command with SIGBUS."""
    ds = generate_dataset("lc", 2**20, 1, tmp_path / "ds", shard_bytes=2**19)
    real = dataset_module.check_shard_size

    def then_truncated(path: Path, file_bytes: int) -> os.stat_result:
        stat = real(path, file_bytes)
        os.truncate(path, 300_000)
        return stat

    monkeypatch.setattr(dataset_module, "check_shard_size", then_truncated)
    with pytest.raises(ShardError, match="changed while it was read: it ends before record"):
        if read == "chunks":
            list(ds.chunks(2**16))
        else:
            ds.spread(2**20)


@pytest.mark.parametrize("devices", [0, 65_537, True, 2.0])
def test_a_device_count_out_of_range_is_refused_before_any_work(
    tmp_path: Path, devices: object
) -> None:
    """At most 65,536 devices (a platform's largest SSD count; 100,000 directories for 8 MiB
    took minutes), at least 1, a whole number: refused before anything is written."""
    with pytest.raises(SpecError, match=r"devices: must be"):
        generate_dataset(Ints(), 10_000, devices, tmp_path / "ds")  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_the_largest_device_count_is_taken() -> None:
    assert dataset_module._check_counts(65_536, 1) == (65_536, 1)


def test_a_run_killed_while_removing_its_staging_leaves_it_marked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cleanup was `rmtree`, which deletes in listing order, the marker among the first:
    a run killed mid-way (a third Ctrl-C, SIGKILL after SIGTERM) left thousands of shards in
    an unmarked directory that no later run removed or named. The marker now goes last."""

    class Killed(BaseException):
        """The run's end, as SIGKILL would bring it, mid-removal."""

    def dies_on_the_marker_or_the_third(path: Any, *args: Any, **kwargs: Any) -> None:
        if Path(path).name == STAGING_MARKER:
            raise AssertionError("the marker went before the shards")
        removed.append(Path(path))
        if len(removed) == 3:
            raise Killed
        real_unlink(path)

    staging = tmp_path / "ds.tmp-0123abcd"
    staging.mkdir()
    (staging / STAGING_MARKER).write_text("")
    for i in range(6):
        (staging / f"shard-{i}.npy").write_bytes(b"x")
    removed: list[Path] = []
    real_unlink = os.unlink
    monkeypatch.setattr(os, "unlink", dies_on_the_marker_or_the_third)
    with pytest.raises(Killed):
        dataset_module._remove_staging(staging)
    monkeypatch.undo()
    assert (staging / STAGING_MARKER).is_file()
    _aged(staging)
    assert remove_stale_staging(tmp_path / "ds") == [staging]
    assert not staging.exists()


@pytest.mark.parametrize("target", ["a data set", "an empty directory", "nothing"])
@pytest.mark.parametrize("overwrite", [False, True])
def test_an_output_that_is_a_symbolic_link_is_refused_as_one(
    tmp_path: Path, target: str, overwrite: bool
) -> None:
    """`-o link` where link → a data set was refused as "exists and is not a data set
    directory", although `data show link` shows one; the refusal now says it is a link,
    to what, and what to give instead. Neither the link nor its target changes."""
    real = tmp_path / "real"
    if target == "a data set":
        _make(tmp_path, name="real")
    elif target == "an empty directory":
        real.mkdir()
    link = tmp_path / "ds"
    link.symlink_to(real)
    before = sorted(p.name for p in real.iterdir()) if real.exists() else None
    with pytest.raises(SpecError, match=r"ds: is a symbolic link \(to .*real\): .*real directory"):
        _make(tmp_path, overwrite=overwrite)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert (sorted(p.name for p in real.iterdir()) if real.exists() else None) == before


def _flip_last_byte(path: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 0xFF
    path.write_bytes(raw)


def test_every_missing_shard_and_device_is_named_in_one_error(tmp_path: Path) -> None:
    """A copy that left out a device and a shard: the first missing shard was the whole
    error, so each needed a run of its own, and a missing device was told shard by shard."""
    ds = _make(tmp_path)
    lost = [s for s in ds.shards if s.path.startswith("device-01/")]
    shutil.rmtree(ds.path / "device-01")
    victim = ds.shard_path(ds.shards_of(2)[1])
    victim.unlink()
    with pytest.raises(ShardError) as caught:
        open_dataset(ds.path)
    message = str(caught.value)
    assert caught.value.source == str(ds.path / "device-01"), message
    assert message.startswith(
        f"{ds.path / 'device-01'}: device directory is missing, its {len(lost)} shards;"
    )
    assert (
        f"{len(lost) + 1} of the {len(ds.shards)} shards are missing or of the wrong size"
        in message
    )
    assert f"also: {victim} (shard is missing)" in message


def test_verify_every_names_all_corrupt_shards_and_counts_past_the_limit(tmp_path: Path) -> None:
    ds = generate_dataset(Ints(), 40_000, 3, tmp_path / "ds", seed=7, shard_bytes=1000)
    victims = [ds.shard_path(s) for s in ds.shards[: MAX_LISTED_PROBLEMS + 2]]
    assert len(ds.shards) > len(victims)  # some shards stay good
    for path in victims:
        _flip_last_byte(path)
    with pytest.raises(ShardError) as first:
        ds.verify()
    assert first.value.source == str(victims[0]) and "are bad" not in str(first.value)
    seen: list[tuple[int, int]] = []
    with pytest.raises(ShardError) as caught:
        ds.verify(every=True, progress=lambda done, total: seen.append((done, total)))
    message = str(caught.value)
    assert caught.value.source == str(victims[0])
    assert f"{len(victims)} of the {len(ds.shards)} shards are bad" in message
    listed = victims[1:MAX_LISTED_PROBLEMS]
    assert all(f"{p} (CRC-32 is " in message for p in listed), message
    assert str(victims[MAX_LISTED_PROBLEMS]) not in message
    assert message.endswith("; and 2 more")
    assert seen[-1] == (ds.file_bytes, ds.file_bytes)  # every shard read, bad ones too
    # One shard of the wrong size among them: counted, not read, and the rest still checked.
    victims[1].write_bytes(victims[1].read_bytes()[:-1])
    with pytest.raises(ShardError, match="truncated or corrupt") as again:
        ds.verify(every=True)
    assert f"{len(victims)} of the {len(ds.shards)} shards are bad" in str(again.value)


def test_verify_every_says_a_missing_device_once_and_still_reads_the_rest(tmp_path: Path) -> None:
    """A device directory gone after opening was a "shard is missing" per shard, crowding
    the corrupt ones out of the ten listed; it is said once, as opening says it."""
    ds = generate_dataset(Ints(), 40_000, 3, tmp_path / "ds", seed=7, shard_bytes=1000)
    lost = len(ds.shards_of(0))
    assert lost >= MAX_LISTED_PROBLEMS
    corrupt = ds.shard_path(ds.shards_of(2)[-1])
    _flip_last_byte(corrupt)
    shutil.rmtree(ds.path / "device-00")
    seen: list[tuple[int, int]] = []
    with pytest.raises(ShardError) as caught:
        ds.verify(every=True, progress=lambda done, total: seen.append((done, total)))
    message = str(caught.value)
    assert caught.value.source == str(ds.path / "device-00"), message
    assert f"device directory is missing, its {lost} shards;" in message
    assert f"{lost + 1} of the {len(ds.shards)} shards are bad, also: {corrupt} (CRC-32" in message
    assert seen[-1] == (ds.file_bytes, ds.file_bytes)
    with pytest.raises(ShardError) as opened:
        open_dataset(ds.path, verify=True, every=True)
    assert str(opened.value) == message


def test_generate_reports_its_progress_shard_by_shard(tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    ds = generate_dataset(
        Ints(), 40_000, 3, tmp_path / "ds", shard_bytes=1000, progress=lambda *a: seen.append(a)
    )
    total = ds.records * ds.record_bytes
    assert seen[0] == (0, total) and seen[-1] == (total, total)
    assert len(seen) == len(ds.shards) + 1
    done = [d for d, _ in seen]
    assert done == sorted(done) and {t for _, t in seen} == {total}
    shard_bytes = [b - a for a, b in itertools.pairwise(done)]
    assert shard_bytes == [s.records * ds.record_bytes for s in ds.shards]


def test_import_reports_its_progress_shard_by_shard(tmp_path: Path) -> None:
    src = tmp_path / "x.npy"
    np.save(src, np.arange(4000, dtype=np.float32).reshape(1000, 4))
    seen: list[tuple[int, int]] = []
    ds = import_dataset(
        src, 3, tmp_path / "ds", Ints(), shard_bytes=1000, progress=lambda *a: seen.append(a)
    )
    total = ds.records * ds.record_bytes
    assert seen[0] == (0, total) and seen[-1] == (total, total)
    assert len(seen) == len(ds.shards) + 1
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_bad_shards_are_named_in_record_order_past_99_devices() -> None:
    """Sorted as text, device-100 came before device-11: the "first" bad shard named was
    not the first in record order."""
    from ndpkit.runtime.dataset import shard_problems  # noqa: PLC0415

    problems = [
        ShardError(f"ds/device-{d:02d}/shard-{i:04d}.npy", "shard is missing")
        for d, i in ((100, 0), (11, 10000), (11, 9999), (2, 0))
    ]
    found = shard_problems(problems, 500, 4)
    assert found.source == "ds/device-02/shard-0000.npy"
    assert str(found).endswith(
        "also: ds/device-11/shard-9999.npy (shard is missing); ds/device-11/shard-10000.npy "
        "(shard is missing); ds/device-100/shard-0000.npy (shard is missing)"
    )


def test_opening_counts_the_shards_its_stats_found_bad_as_such(tmp_path: Path) -> None:
    """Opening checks sizes only: "2 of the 8 shards are bad" said the other six were good,
    and a corrupt one among them was found by the next run, once the missing ones were
    copied again (found by an audit of evaluate --data); `verify(every=True)` counts all."""
    ds = generate_dataset(Ints(), 40_000, 2, tmp_path / "ds", seed=7, shard_bytes=8000)
    missing, truncated, corrupt = (ds.shard_path(s) for s in ds.shards[1:4])
    missing.unlink()
    truncated.write_bytes(truncated.read_bytes()[:-1])
    _flip_last_byte(corrupt)
    with pytest.raises(ShardError) as opened:
        open_dataset(ds.path)
    message = str(opened.value)
    assert str(corrupt) not in message and "are bad" not in message
    assert (
        f"2 of the {len(ds.shards)} shards are missing or of the wrong size (the sizes were "
        "checked, not the CRC-32s)"
    ) in message
    with pytest.raises(ShardError) as verified:
        ds.verify(every=True)
    assert f"3 of the {len(ds.shards)} shards are bad" in str(verified.value)
