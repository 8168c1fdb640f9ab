"""`ndpkit data`: a .npy import of the wrong record shape, a tiny --shard-size and a corrupt
Parquet shard are each one error line (exit 2) that names what is wrong; nothing is written."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import numpy as np
import pytest
from cli_errors import one_error_line

from ndpkit.runtime import open_dataset


@pytest.mark.parametrize(
    ("app", "array", "expected"),
    [
        ("knn8", np.zeros((1000, 3), np.float32), "has shape (1000, 3); app 'knn8' needs (n, 8)"),
        ("knn8", np.zeros(1000, np.float32), "has shape (1000,); app 'knn8' needs (n, 8)"),
        ("lc", np.zeros((100, 2, 4), np.float32), "has shape (100, 2, 4); app 'lc' needs (n, 8)"),
        (
            "sobel",
            np.zeros((512, 256), np.uint8),
            "has shape (512, 256); app 'sobel' needs (n, 256, 256)",
        ),
        (
            "fft2d",
            np.zeros((2, 256, 256), np.uint8),
            "has shape (2, 256, 256); app 'fft2d' needs (n, 256, 256, 3)",
        ),
    ],
)
def test_npy_import_of_the_wrong_record_shape(
    ndpkit, tmp_path: Path, app: str, array: np.ndarray, expected: str
) -> None:
    source = tmp_path / "points.npy"
    np.save(source, array)
    args = ("import", str(source), "--app", app, "--devices", "1", "--out", str(tmp_path / "X"))
    line = one_error_line(ndpkit("data", *args))
    assert f"error: {source}: {expected}" in line
    assert not (tmp_path / "X").exists()


def test_npy_import_of_images_of_the_record_shape(ndpkit, tmp_path: Path) -> None:
    images = np.random.default_rng(0).integers(0, 256, (3, 256, 256), dtype=np.uint8)
    np.save(tmp_path / "images.npy", images)
    args = ("import", str(tmp_path / "images.npy"), "--app", "sobel", "--devices", "2")
    result = ndpkit("data", *args, "--out", str(tmp_path / "ds"), "-f", "json")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("app", "size", "expected"),
    [
        ("lc", "1B", "--shard-size: must be at least 64 KiB (smaller shards only add files)"),
        ("lc", "65535B", "--shard-size: must be at least 64 KiB"),
        ("fft2d", "100KiB", "--shard-size: must be at least 192 KiB (one fft2d record)"),
        # a negative size said "at least 1 byte", true but not what the flag needs
        ("lc", "-64KiB", "--shard-size: must be at least 64 KiB (smaller shards only add"),
        ("fft2d", "0B", "--shard-size: must be at least 192 KiB (one fft2d record)"),
    ],
)
def test_a_shard_size_below_the_minimum(
    ndpkit, tmp_path: Path, app: str, size: str, expected: str
) -> None:
    args = ("generate", app, "--size", "1MiB", "--out", str(tmp_path / "X"), "--shard-size", size)
    assert expected in one_error_line(ndpkit("data", *args))
    assert not (tmp_path / "X").exists()


def test_an_import_with_a_shard_size_below_the_minimum(ndpkit, tmp_path: Path) -> None:
    source = tmp_path / "points.npy"
    np.save(source, np.zeros((100, 8), np.float32))
    args = ("import", str(source), "--app", "lc", "--out", str(tmp_path / "X"))
    assert "--shard-size: must be at least" in one_error_line(
        ndpkit("data", *args, "--shard-size", "1B")
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["points.npy"]


def test_the_smallest_shard_size_is_accepted(ndpkit, tmp_path: Path) -> None:
    args = ("generate", "lc", "--size", "256KiB", "--devices", "1", "--out", str(tmp_path / "ds"))
    result = ndpkit("data", *args, "--shard-size", "64KiB", "-f", "json")
    assert result.returncode == 0, result.stderr
    assert len(list((tmp_path / "ds" / "device-00").iterdir())) == 4


def test_a_generated_data_set_has_a_normal_directory_mode(ndpkit, tmp_path: Path) -> None:
    args = ("generate", "knn2", "--size", "64KiB", "--devices", "1", "--out", str(tmp_path / "ds"))
    assert ndpkit("data", *args, "-f", "json").returncode == 0
    umask = os.umask(0)
    os.umask(umask)  # the test runs under the same umask as the command it started
    assert stat.S_IMODE((tmp_path / "ds").stat().st_mode) == 0o777 & ~umask


def test_show_verify_catches_a_parquet_shard_without_its_magic(ndpkit, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    args = ("generate", "knn2", "--size", "256KiB", "--devices", "2", "--out", str(out))
    assert ndpkit("data", *args, "--shard-format", "parquet", "-f", "json").returncode == 0
    victim = out / "device-01" / "shard-0000.parquet"
    with victim.open("r+b") as f:
        assert f.read(4) == b"PAR1"
        f.seek(0)
        f.write(b"JUNK")  # readers go by the footer: only the CRC sees this
    assert ndpkit("data", "show", str(out)).returncode == 0
    line = one_error_line(ndpkit("data", "show", str(out), "--verify"))
    assert f"error: {victim}: CRC-32 is " in line and "corrupt" in line


def test_an_import_from_a_file_name_that_is_not_utf8(ndpkit, tmp_path: Path) -> None:
    # Linux names are bytes: a Latin-1 "é" is not UTF-8, and Python gives it a lone
    # surrogate, which the manifest's JSON cannot hold (it was a traceback, exit 1).
    source = tmp_path / os.fsdecode(b"caf\xe9.npy")
    points = np.arange(100 * 8, dtype=np.float32).reshape(100, 8)
    np.save(source, points)
    out = tmp_path / "ds"
    result = ndpkit("data", "import", str(source), "--app", "lc", "--out", str(out), "-f", "json")
    assert result.returncode == 0, result.stderr
    manifest = json.loads((out / "manifest.json").read_bytes().decode("utf-8"))
    assert manifest["source"] == f"import {tmp_path.resolve()}/caf\\xe9.npy"
    assert np.array_equal(open_dataset(out, verify=True).read_all(), points)


def test_overwrite_never_deletes_files_of_the_users_inside_a_data_set(
    ndpkit, tmp_path: Path
) -> None:
    # The source kept in the data set's directory (and a note beside it) was deleted with
    # the old data set, after the import had read it: exit 0, the user's file gone.
    out = tmp_path / "ds"
    points = np.arange(100 * 8, dtype=np.float32).reshape(100, 8)
    np.save(tmp_path / "points.npy", points)
    args = ("data", "import", "--app", "lc", "--out", str(out), "-f", "json")
    assert ndpkit(*args, str(tmp_path / "points.npy")).returncode == 0
    (tmp_path / "points.npy").rename(out / "raw.npy")
    (out / "notes.txt").write_text("where the points came from")
    before = open_dataset(out).manifest
    line = one_error_line(ndpkit(*args, str(out / "raw.npy"), "--devices", "2", "--overwrite"))
    assert line.startswith(
        f"error: {out}: --out: holds notes.txt, raw.npy, which ndpkit did not write"
    )
    assert np.array_equal(np.load(out / "raw.npy"), points)
    assert (out / "notes.txt").read_text() == "where the points came from"
    assert open_dataset(out).manifest == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]


def test_overwrite_never_deletes_a_users_file_inside_a_device_directory(
    ndpkit, tmp_path: Path
) -> None:
    # A file that is no shard, kept in device-00/, went with the old data set too.
    out = tmp_path / "ds"
    args = ("data", "generate", "lc", "--size", "64KiB", "--out", str(out), "-f", "json")
    assert ndpkit(*args, "--devices", "2").returncode == 0
    (out / "device-00" / "notes.txt").write_text("keep me")
    (out / "device-01" / "backup.npy").write_bytes(b"a backup")
    line = one_error_line(ndpkit(*args, "--devices", "3", "--overwrite"))
    assert line.startswith(
        f"error: {out}: --out: holds device-00/notes.txt, device-01/backup.npy, which ndpkit"
    )
    assert (out / "device-00" / "notes.txt").read_text() == "keep me"
    assert open_dataset(out).devices == 2


def test_a_size_below_one_record_per_device_is_said_in_the_singular_where_it_is_one(
    ndpkit, tmp_path: Path
) -> None:
    args = ("data", "generate", "lc", "--out", str(tmp_path / "X"))
    line = one_error_line(ndpkit(*args, "--size", "1B", "--devices", "1"))
    assert line.endswith("--size: 1 byte is less than one 32-byte lc record per device (1 device)")
    line = one_error_line(ndpkit(*args, "--size", "40B", "--devices", "2"))
    assert line.endswith("40 bytes is less than one 32-byte lc record per device (2 devices)")
    assert not (tmp_path / "X").exists()
