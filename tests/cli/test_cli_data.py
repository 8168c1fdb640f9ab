"""`ndpkit data` end to end: generate, import, show, and every bad input as one line, exit 2."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import skimage.data
from cli_env import command_env
from cli_errors import one_error_line
from PIL import Image
from typer.testing import CliRunner

from ndpkit.cli import data as data_cli
from ndpkit.cli.commands import app
from ndpkit.kernels import Kernel
from ndpkit.runtime import Dataset, generate_dataset, open_dataset
from ndpkit.runtime.dataset import STAGING_MARKER
from ndpkit.runtime.spill_dirs import lock_dir

SKIMAGE_DATA = Path(skimage.data.__file__).parent


class Bytes(Kernel):
    """A stand-in app so `show` can be tested whichever real kernels exist."""

    name = "bytes"
    dtype = np.dtype(np.uint8)
    record_shape = (16,)

    def generate(self, size_bytes: int, seed: int) -> np.ndarray:
        n = max(1, size_bytes // 16)
        return np.random.default_rng(seed).integers(0, 256, (n, 16), dtype=np.uint8)

    def device(self, chunk: np.ndarray, state: Any, offset: int) -> Any:
        return len(chunk)

    def merge(self, partials: list[Any]) -> Any:
        return sum(partials)

    def host(self, merged: Any, state: Any) -> tuple[Any, bool]:
        return merged, True

    def reference(self, data: np.ndarray, params: dict[str, Any]) -> Any:
        return len(data)

    def check(self, result: Any, expected: Any) -> None:
        assert result == expected


@pytest.fixture
def dataset(tmp_path: Path) -> Dataset:
    return generate_dataset(Bytes(), 5000, 3, tmp_path / "ds", seed=4, shard_bytes=1024)


def test_help_lists_the_data_commands(ndpkit) -> None:
    result = ndpkit("data", "--help")
    assert result.returncode == 0
    for command in ("generate", "import", "show"):
        assert command in result.stdout


def test_show_table_and_json(ndpkit, dataset: Dataset) -> None:
    table = ndpkit("data", "show", str(dataset.path))
    assert table.returncode == 0, table.stderr
    assert "bytes" in table.stdout and "Per device" in table.stdout
    doc = json.loads(ndpkit("data", "show", str(dataset.path), "--format", "json").stdout)
    assert doc["dataset"]["app"] == "bytes" and doc["dataset"]["seed"] == 4
    assert doc["dataset"]["records"] == 5000 // 16 and doc["dataset"]["devices"] == 3
    assert [d["records"] for d in doc["devices"]] == [104, 104, 104]
    assert [d["first_record"] for d in doc["devices"]] == [0, 104, 208]


def test_data_info_is_show_and_unlisted(ndpkit, dataset: Dataset) -> None:
    """`data info` was "No such command 'info'", with no word of `data show`."""
    shown = ndpkit("data", "show", str(dataset.path), "--format", "json")
    info = ndpkit("data", "info", str(dataset.path), "--format", "json")
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout) == json.loads(shown.stdout)
    assert "info" not in ndpkit("data", "--help").stdout


def test_show_verify_names_a_corrupt_shard(ndpkit, dataset: Dataset) -> None:
    victim = dataset.shard_path(dataset.shards[2])
    raw = bytearray(victim.read_bytes())
    raw[-3] ^= 0xFF
    victim.write_bytes(raw)
    assert ndpkit("data", "show", str(dataset.path)).returncode == 0
    line = one_error_line(ndpkit("data", "show", str(dataset.path), "--verify"))
    assert str(victim) in line and "CRC-32" in line


def test_show_verify_names_every_corrupt_shard_in_one_read(ndpkit, dataset: Dataset) -> None:
    victims = [dataset.shard_path(s) for s in (dataset.shards[0], dataset.shards[-1])]
    for victim in victims:
        raw = bytearray(victim.read_bytes())
        raw[-3] ^= 0xFF
        victim.write_bytes(raw)
    line = one_error_line(ndpkit("data", "show", str(dataset.path), "--verify"))
    assert line.startswith(f"error: {victims[0]}: CRC-32 is "), line
    assert f"2 of the {len(dataset.shards)} shards are bad, also: {victims[1]} (CRC-32" in line


def test_show_verify_names_corrupt_shards_beside_missing_and_truncated_ones(
    ndpkit, dataset: Dataset
) -> None:
    """A copy with a truncated shard, a missing device and two corrupt shards: opening named
    the truncated shard and the device alone, and the corrupt ones were found only once
    those were copied again, where the docs promise one error naming them all."""
    corrupt = [dataset.shard_path(s) for s in (dataset.shards[0], dataset.shards_of(2)[-1])]
    for victim in corrupt:
        raw = bytearray(victim.read_bytes())
        raw[-3] ^= 0xFF
        victim.write_bytes(raw)
    truncated = dataset.shard_path(dataset.shards_of(2)[0])
    truncated.write_bytes(truncated.read_bytes()[:-1])
    shutil.rmtree(dataset.path / "device-01")
    lost = len(dataset.shards_of(1))
    line = one_error_line(ndpkit("data", "show", str(dataset.path), "--verify"))
    assert line.startswith(f"error: {corrupt[0]}: CRC-32 is "), line
    assert f"{3 + lost} of the {len(dataset.shards)} shards are bad" in line
    assert f"{dataset.path / 'device-01'} (device directory is missing, its {lost} shards)" in line
    assert f"{truncated} (shard is " in line and f"{corrupt[1]} (CRC-32 is " in line
    # Without --verify, opening names what a stat sees, as before.
    line = one_error_line(ndpkit("data", "show", str(dataset.path)))
    assert str(corrupt[0]) not in line and str(truncated) in line


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda ds: (ds.path / "manifest.json").unlink(), "manifest.json: missing"),
        (lambda ds: ds.shard_path(ds.shards[1]).unlink(), "shard-0001.npy: shard is missing"),
        (  # numpy's parser raised a SyntaxError: a traceback, exit status 1
            lambda ds: _edit_manifest(ds.path, dtype="f4,("),
            "manifest.json: dtype: 'f4,(' is not a numpy dtype",
        ),
    ],
)
def test_show_a_broken_data_set(ndpkit, dataset: Dataset, damage: Any, expected: str) -> None:
    damage(dataset)
    assert expected in one_error_line(ndpkit("data", "show", str(dataset.path)))


def _edit_manifest(root: Path, **changes: Any) -> None:
    manifest = json.loads((root / "manifest.json").read_text())
    (root / "manifest.json").write_text(json.dumps(manifest | changes))


BAD_INPUT = pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("generate", "lc", "--size", "12", "--out", "X"), "--size: '12' has no unit"),
        (("generate", "lc", "--size", "3 GB/s", "--out", "X"), "is not a size"),
        (("generate", "lc", "--size", "1MiB", "--devices", "0", "--out", "X"), "devices: must"),
        (
            ("generate", "lc", "--size", "1MiB", "--seed", "-1", "--out", "X"),
            "error: command line: --seed: must be a whole number ≥ 0, got -1",
        ),
        (
            ("generate", "sobel", "--size", "100KiB", "--out", "X"),
            "error: command line: --size: 102400 bytes is less than one 65536-byte sobel",
        ),
        (("generate", "nope", "--size", "1MiB", "--out", "X"), "APP: unknown app 'nope'"),
        (("import", "MISSING", "--app", "lc", "--out", "X"), "no such file or directory"),
        (("import", "MISSING", "--app", "nope", "--out", "X"), "--app: unknown app 'nope'"),
        (
            ("import", "MISSING", "--app", "knn", "--out", "X"),
            "knn is a group (knn2, knn6, knn8): name one",
        ),
    ],
)


@BAD_INPUT
def test_bad_input_is_one_line_exit_2(ndpkit, tmp_path: Path, args: Any, expected: str) -> None:
    args = tuple(str(tmp_path / a) if a in ("X", "MISSING") else a for a in args)
    assert expected in one_error_line(ndpkit("data", *args))
    assert not (tmp_path / "X").exists()


@BAD_INPUT
def test_bad_input_removes_nothing(ndpkit, tmp_path: Path, args: Any, expected: str) -> None:
    """The sweep of killed runs' staging directories ran before the arguments were
    checked: a typo removed them (and, matched by name alone, a user's own directory)."""
    left = _left_by_a_killed_run(tmp_path / "X.tmp-0badf00d")
    args = tuple(str(tmp_path / a) if a in ("X", "MISSING") else a for a in args)
    one_error_line(ndpkit("data", *args))
    assert (left / "device-00" / "shard-0000.npy").is_file()


def test_generate_lc_then_refuse_then_overwrite(ndpkit, tmp_path: Path) -> None:
    out = tmp_path / "lc"
    args = ("data", "generate", "lc", "--size", "1MiB", "--devices", "4", "--out", str(out))
    result = ndpkit(*args, "--shard-size", "100KiB", "-f", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)["dataset"]
    assert doc["app"] == "lc" and doc["data_bytes"] == 2**20 and doc["devices"] == 4
    ds = open_dataset(out, verify=True)
    assert all(s.records * 32 <= 100 * 1024 for s in ds.shards)
    assert "already exists" in one_error_line(ndpkit(*args))
    again = ndpkit(*args, "--seed", "1", "--overwrite", "-f", "json")
    assert again.returncode == 0 and open_dataset(out).seed == 1


def test_generate_says_where_size_is_not_whole_records(ndpkit, tmp_path: Path) -> None:
    """`--size 100KiB` of Sobel's 64 KiB images made one image, a third less than asked,
    without a word; a size of whole records says nothing."""
    args = ("data", "generate", "sobel", "--devices", "1", "-f", "json")
    result = ndpkit(*args, "--size", "100KiB", "--out", str(tmp_path / "s"))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["dataset"]["data_bytes"] == 65536
    assert result.stderr == (
        "note: --size 100KiB is not a whole number of sobel records of 65,536 bytes: the data "
        "set holds the whole records that fit, 1 record (64 KiB)\n"
    )
    whole = ndpkit(*args, "--size", "128KiB", "--out", str(tmp_path / "w"))
    assert whole.returncode == 0 and whole.stderr == ""


def test_import_npy_for_lc(ndpkit, tmp_path: Path) -> None:
    points = (np.arange(1000 * 8, dtype=np.float32) % 17).reshape(1000, 8)
    np.save(tmp_path / "points.npy", points)
    result = ndpkit(
        "data", "import", str(tmp_path / "points.npy"), "--app", "lc", "--devices", "3",
        "--out", str(tmp_path / "ds"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Per device" in result.stdout
    assert np.array_equal(open_dataset(tmp_path / "ds").read_all(), points)
    wrong = tmp_path / "wrong.npy"
    np.save(wrong, points.astype(np.float64))
    line = one_error_line(
        ndpkit("data", "import", str(wrong), "--app", "lc", "--out", str(tmp_path / "w"))
    )
    assert str(wrong) in line and "needs float32" in line


def test_generate_and_import_parquet(ndpkit, tmp_path: Path) -> None:
    out = tmp_path / "gen"
    result = ndpkit(
        "data", "generate", "knn2", "--size", "256KiB", "--devices", "2", "--out", str(out),
        "--shard-format", "parquet", "-f", "json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)["dataset"]
    assert doc["shard_format"] == "parquet" and doc["columns"] == ["x0", "x1"]
    points = open_dataset(out).read_all()
    table = pa.table({"a": points[:, 0], "skip": np.zeros(len(points)), "b": points[:, 1]})
    pq.write_table(table, tmp_path / "t.parquet")
    result = ndpkit(
        "data", "import", str(tmp_path / "t.parquet"), "--app", "knn2", "--devices", "3",
        "--columns", "a, b", "--out", str(tmp_path / "imp"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert np.array_equal(open_dataset(tmp_path / "imp").read_all(), points)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (("--columns", "a,nope"), "t.parquet: columns: no column 'nope'"),
        (("--columns", "a,"), "--columns: an empty column name"),
        ((), "t.parquet: columns: 3 columns (a, skip, b) for app 'knn2'"),
    ],
)
def test_import_parquet_bad_columns(ndpkit, tmp_path: Path, extra: Any, expected: str) -> None:
    pq.write_table(
        pa.table({"a": [1.0] * 4, "skip": [0] * 4, "b": [2.0] * 4}), tmp_path / "t.parquet"
    )
    args = ("import", str(tmp_path / "t.parquet"), "--app", "knn2", "--out", str(tmp_path / "X"))
    assert expected in one_error_line(ndpkit("data", *args, "--devices", "2", *extra))
    assert not (tmp_path / "X").exists()


def test_generate_bad_shard_format(ndpkit, tmp_path: Path) -> None:
    args = ("generate", "lc", "--size", "1MiB", "--out", str(tmp_path / "X"))
    line = one_error_line(ndpkit("data", *args, "--shard-format", "csv"))
    assert "--shard-format: must be one of npy, parquet" in line
    sobel = ("generate", "sobel", "--size", "1MiB", "--out", str(tmp_path / "X"))
    line = one_error_line(ndpkit("data", *sobel, "--shard-format", "parquet"))
    assert "command line: --shard-format: app 'sobel' has records of shape (256, 256)" in line


# -- output formats and --verify ---------------------------------------------------------


def _csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.parametrize("flag", ["-f", "--format"])
def test_show_csv_has_both_tables(ndpkit, dataset: Dataset, flag: str) -> None:
    result = ndpkit("data", "show", str(dataset.path), flag, "csv")
    assert result.returncode == 0, result.stderr
    rows = _csv_rows(result.stdout)
    fields = {r["field"]: r["value"] for r in rows if r["table"] == "dataset"}
    summary = dataset.summary()
    assert fields.keys() == summary.keys()
    assert fields["app"] == "bytes" and fields["records"] == str(summary["records"])
    assert fields["data_bytes"] == str(summary["data_bytes"])  # bytes, not "4.88 KiB"
    devices = [r for r in rows if r["table"] == "devices"]
    assert [(r["device"], r["records"], r["first_record"]) for r in devices] == [
        ("0", "104", "0"),
        ("1", "104", "104"),
        ("2", "104", "208"),
    ]
    assert [int(r["data_bytes"]) for r in devices] == [104 * 16] * 3


def test_generate_and_import_print_csv(ndpkit, tmp_path: Path) -> None:
    out = tmp_path / "lc"
    args = ("generate", "lc", "--size", "1MiB", "--devices", "2", "--out", str(out))
    generated = ndpkit("data", *args, "-f", "csv")
    assert generated.returncode == 0, generated.stderr
    assert {r["table"] for r in _csv_rows(generated.stdout)} == {"dataset", "devices"}
    np.save(tmp_path / "points.npy", open_dataset(out).read_all())
    args = ("import", str(tmp_path / "points.npy"), "--app", "lc", "--out", str(tmp_path / "i"))
    imported = _csv_rows(ndpkit("data", *args, "--devices", "2", "-f", "csv").stdout)
    assert [r["records"] for r in imported if r["table"] == "devices"] == ["16384", "16384"]


def test_show_verify_says_that_every_shard_matched(ndpkit, dataset: Dataset) -> None:
    verified = ndpkit("data", "show", str(dataset.path), "--verify", "-f", "json")
    assert verified.returncode == 0, verified.stderr
    json.loads(verified.stdout)  # stdout stays the summary alone
    shards, file_bytes = len(dataset.shards), dataset.file_bytes
    assert verified.stderr.strip() == (
        f"verified: the CRC-32 of all {shards} shards ({file_bytes:,} bytes) matches the manifest"
    )
    assert ndpkit("data", "show", str(dataset.path)).stderr == ""  # nothing checked, nothing said


# -- images ---------------------------------------------------------------------------


def test_import_camera_for_sobel_gives_its_quarters(ndpkit, tmp_path: Path) -> None:
    (tmp_path / "imgs").mkdir()
    shutil.copy(SKIMAGE_DATA / "camera.png", tmp_path / "imgs")
    args = ("import", str(tmp_path / "imgs"), "--app", "sobel", "--devices", "2")
    result = ndpkit("data", *args, "--out", str(tmp_path / "ds"), "-f", "json")
    assert result.returncode == 0, result.stderr
    camera = skimage.data.camera()
    assert np.array_equal(open_dataset(tmp_path / "ds").read_all()[1], camera[:256, 256:])


def test_import_of_an_image_that_is_not_whole_records(ndpkit, tmp_path: Path) -> None:
    (tmp_path / "imgs").mkdir()
    shutil.copy(SKIMAGE_DATA / "coins.png", tmp_path / "imgs")
    args = ("import", str(tmp_path / "imgs"), "--app", "sobel", "--out", str(tmp_path / "X"))
    line = one_error_line(ndpkit("data", *args, "--devices", "1"))
    assert line == (
        f"error: {tmp_path / 'imgs' / 'coins.png'}: an image of shape (303, 384) cannot be cut "
        "into records of shape (256, 256) (app 'sobel'): its height and width must be "
        "multiples of 256 and 256 (--crop keeps the whole records that fit)"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["imgs"]


def test_import_names_how_many_images_are_not_whole_records(ndpkit, tmp_path: Path) -> None:
    """Only the first image that is not whole records was named: a directory of photos of
    many sizes took a run per photo to find them. Now the error counts the others and names
    the first few."""
    (tmp_path / "imgs").mkdir()
    for name in ("camera.png", "coins.png", "page.png", "text.png"):
        shutil.copy(SKIMAGE_DATA / name, tmp_path / "imgs")
    for i in range(6):
        Image.fromarray(np.zeros((100, 256 + i), np.uint8)).save(tmp_path / "imgs" / f"z{i}.png")
    args = ("import", str(tmp_path / "imgs"), "--app", "he", "--out", str(tmp_path / "X"))
    line = one_error_line(ndpkit("data", *args, "--devices", "1"))
    assert line == (
        f"error: {tmp_path / 'imgs' / 'coins.png'}: an image of shape (303, 384) cannot be cut "
        "into records of shape (256, 256) (app 'he'): its height and width must be "
        "multiples of 256 and 256 (--crop keeps the whole records that fit); 8 more of the "
        "10 images are not whole records either (page.png, text.png, z0.png, z1.png, z2.png, …)"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["imgs"]


def test_import_names_how_many_images_cannot_be_read(ndpkit, tmp_path: Path) -> None:
    """Only the first unreadable image was named (an empty download, a 16-bit scan, a page
    of HTML saved as .jpg): a run per file to find them all. Now the others are counted and
    the first few named; nothing is written."""
    (tmp_path / "imgs").mkdir()
    shutil.copy(SKIMAGE_DATA / "camera.png", tmp_path / "imgs")
    (tmp_path / "imgs" / "empty.jpg").write_bytes(b"")
    (tmp_path / "imgs" / "page.jpg").write_text("<html></html>")
    Image.new("I;16", (256, 256), 40000).save(tmp_path / "imgs" / "wide.png")
    args = ("import", str(tmp_path / "imgs"), "--app", "he", "--out", str(tmp_path / "X"))
    line = one_error_line(ndpkit("data", *args, "--devices", "1"))
    empty = tmp_path / "imgs" / "empty.jpg"
    assert line == (
        f"error: {empty}: not a readable image (cannot identify image file '{empty}'); 2 more "
        "of the 4 images cannot be imported either (page.jpg, wide.png)"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["imgs"]


def test_import_of_an_image_above_pillows_bomb_limit_says_so_once(ndpkit, tmp_path: Path) -> None:
    """An image of more pixels than pillow's decompression-bomb warning limit (89,478,485):
    Python printed pillow's warning, with its source line, at every opening of the file
    (three times with --crop), and never named the file. Now one line naming it."""
    (tmp_path / "imgs").mkdir()
    height = 349_696  # 1,366 records of 256×256: 89,522,176 pixels, above the limit
    Image.new("L", (256, height)).save(tmp_path / "imgs" / "tall.png")
    args = ("import", str(tmp_path / "imgs"), "--app", "sobel", "--devices", "1", "--crop")
    result = ndpkit("data", *args, "--out", str(tmp_path / "ds"), "-f", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["dataset"]["records"] == height // 256
    assert result.stderr.splitlines() == [
        f"warning: {tmp_path / 'imgs' / 'tall.png'}: 256×{height} = {256 * height:,} pixels, "
        f"more than pillow's decompression-bomb warning limit of {Image.MAX_IMAGE_PIXELS:,} "
        "(PIL.Image.MAX_IMAGE_PIXELS); read all the same",
        "crop: all 1 images were whole records; nothing was dropped",
    ]


def test_import_crop_says_what_it_dropped(ndpkit, tmp_path: Path) -> None:
    (tmp_path / "imgs").mkdir()
    for name in ("camera.png", "coins.png"):
        shutil.copy(SKIMAGE_DATA / name, tmp_path / "imgs")
    args = ("import", str(tmp_path / "imgs"), "--app", "sobel", "--devices", "1", "--crop")
    result = ndpkit("data", *args, "--out", str(tmp_path / "ds"), "-f", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["dataset"]["records"] == 5
    dropped, pixels = 303 * 384 - 256 * 256, 512 * 512 + 303 * 384
    assert result.stderr.strip() == (
        f"crop: 1 of 2 images lost their right or bottom edges, {dropped:,} of {pixels:,} "
        f"pixels ({dropped / pixels:.1%})"
    )
    coins = skimage.data.coins()
    assert np.array_equal(open_dataset(tmp_path / "ds").read_all()[4], coins[:256, :256])


def test_import_crop_counts_an_image_smaller_than_a_record_among_the_cropped(
    ndpkit, tmp_path: Path
) -> None:
    (tmp_path / "imgs").mkdir()
    shutil.copy(SKIMAGE_DATA / "coins.png", tmp_path / "imgs")
    Image.fromarray(np.zeros((100, 120), np.uint8)).save(tmp_path / "imgs" / "tiny.png")
    args = ("import", str(tmp_path / "imgs"), "--app", "sobel", "--devices", "1", "--crop")
    result = ndpkit("data", *args, "--out", str(tmp_path / "ds"), "-f", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["dataset"]["records"] == 1
    dropped, pixels = 303 * 384 - 256 * 256 + 100 * 120, 303 * 384 + 100 * 120
    assert result.stderr.strip() == (
        f"crop: 2 of 2 images lost their right or bottom edges, {dropped:,} of {pixels:,} "
        f"pixels ({dropped / pixels:.1%}); of those, 1 smaller than one record gave none "
        "(tiny.png)"
    )


# -- disks that refuse ------------------------------------------------------------------

FILE_LIMIT_BYTES = 300 * 2**10


def _limited(*args: str) -> subprocess.CompletedProcess[str]:
    """`ndpkit ARGS` allowed files of at most FILE_LIMIT_BYTES (`ulimit -f`), root or not."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT_BYTES, FILE_LIMIT_BYTES))

    return subprocess.run(
        [str(Path(sys.executable).parent / "ndpkit"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=command_env(COLUMNS="200"),
        check=False,
        preexec_fn=limit,
    )


@pytest.mark.parametrize("out_name", ["ds", "new/parents/ds"])
@pytest.mark.parametrize(("shard_format", "suffix"), [("npy", "npy"), ("parquet", "parquet")])
def test_a_file_size_limit_is_one_error_line(
    tmp_path: Path, shard_format: str, suffix: str, out_name: str
) -> None:
    """Nothing is left, not even the parent directories the run made for its --out."""
    out = tmp_path / out_name
    args = ("generate", "knn2", "--size", "4MiB", "--devices", "1", "--out", str(out))
    line = one_error_line(_limited("data", *args, "--shard-format", shard_format))
    assert line.startswith(
        f"error: {out}: --out: cannot write device-00/shard-0000.{suffix}: File too"
    )
    assert "ulimit -f" in line and line.endswith("; nothing was written")
    assert list(tmp_path.iterdir()) == []


def test_a_data_set_larger_than_the_disk_is_refused_at_once(tmp_path: Path) -> None:
    # The file size limit only guards the disk should the check be missing.
    out = tmp_path / "ds"
    line = one_error_line(_limited("data", "generate", "lc", "--size", "1EiB", "--out", str(out)))
    assert line.startswith(
        f"error: {out}: --out: the data set needs at least 1 EiB (1,152,921,504,606,846,976 "
        f"bytes) but the file system of {tmp_path} has "
    )
    assert line.endswith(" free; nothing was written")
    assert list(tmp_path.iterdir()) == []


def test_an_out_below_a_file_is_one_error_line(ndpkit, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    args = ("generate", "lc", "--size", "1MiB", "--out", str(tmp_path / "afile" / "ds"))
    line = one_error_line(ndpkit("data", *args))
    assert line == (
        f"error: {tmp_path / 'afile' / 'ds'}: --out: cannot create the data set directory: "
        f"{tmp_path / 'afile'} is not a directory"
    )


def test_a_read_only_out_directory_is_one_error_line(ndpkit, read_only_dir: Path) -> None:
    args = ("generate", "lc", "--size", "1MiB", "--out", str(read_only_dir / "ds"))
    line = one_error_line(ndpkit("data", *args))
    refused = "cannot create the data set directory: (Permission denied|Operation not permitted)"
    assert re.search(refused, line), line
    assert list(read_only_dir.iterdir()) == []


def test_a_staging_directory_left_beside_out_is_named(ndpkit, tmp_path: Path) -> None:
    # as a run killed with SIGKILL leaves it
    (tmp_path / "ds.tmp-deadbeef").mkdir()
    (tmp_path / "ds.tmp-deadbeef" / STAGING_MARKER).write_text("")
    # as an --overwrite that could not delete leaves it
    (tmp_path / "ds.old-cafe1234" / "dataset").mkdir(parents=True)
    result = ndpkit(
        "data", "generate", "lc", "--size", "1MiB", "--devices", "2", "--out", str(tmp_path / "ds")
    )
    assert result.returncode == 0, result.stderr
    assert f"note: {tmp_path / 'ds.tmp-deadbeef'} is a data set being written" in result.stderr
    assert f"note: {tmp_path / 'ds.old-cafe1234'} holds a replaced data set" in result.stderr
    assert (tmp_path / "ds.tmp-deadbeef").is_dir()  # named, not removed
    assert (tmp_path / "ds.old-cafe1234").is_dir()


def _aged(directory: Path, seconds: float) -> Path:
    """`directory` and the directories in it as if last changed `seconds` ago."""
    then = time.time() - seconds
    for path in [directory, *(p for p in directory.iterdir() if p.is_dir())]:
        os.utime(path, (then, then))
    return directory


def _left_by_a_killed_run(staging: Path) -> Path:
    """A staging directory as a run killed with SIGKILL leaves it, a minute old and more."""
    (staging / "device-00").mkdir(parents=True)
    (staging / STAGING_MARKER).write_text("")
    (staging / "device-00" / "shard-0000.npy").write_bytes(b"\0" * 4096)
    return _aged(staging, 120)


@pytest.mark.parametrize(
    "name",
    [
        "proj.tmp-cafe2024",  # a user's copy of a project, named as ndpkit names its staging
        "proj.tmp-20240101",
        "proj.old-2024",
    ],
)
def test_a_users_directory_named_like_a_staging_one_is_never_removed_nor_named(
    ndpkit, tmp_path: Path, name: str
) -> None:
    """Leftovers were matched by name alone: a typo in the app (`generate typo -o proj`)
    deleted `proj.tmp-cafe2024` with everything in it, and so did a successful run."""
    mine = tmp_path / name
    (mine / "device-00").mkdir(parents=True)
    (mine / "a.txt").write_text("precious")
    _aged(mine, 2 * 3600)
    out = str(tmp_path / "proj")
    one_error_line(ndpkit("data", "generate", "typo", "--size", "1MiB", "--out", out))
    result = ndpkit("data", "generate", "lc", "--size", "1MiB", "--devices", "2", "--out", out)
    assert result.returncode == 0, result.stderr
    assert (mine / "a.txt").read_text() == "precious"
    assert name not in result.stderr  # not taken for a run's leftover either


def test_a_staging_directory_a_killed_run_left_is_removed_one_in_use_is_not(
    ndpkit, tmp_path: Path
) -> None:
    """A run holds a lock on its staging directory while it writes; one that nobody holds
    and that has not changed for a minute is a killed run's, and as big as a data set."""
    killed = _left_by_a_killed_run(tmp_path / "ds.tmp-0badf00d")
    in_use = _left_by_a_killed_run(tmp_path / "ds.tmp-0c0ffee0")
    # beside another data set: not this one's
    other = _left_by_a_killed_run(tmp_path / "other.tmp-0badf00d")
    held = lock_dir(in_use)
    try:
        result = ndpkit(
            "data",
            "generate",
            "lc",
            "--size",
            "1MiB",
            "--devices",
            "2",
            "--out",
            str(tmp_path / "ds"),
        )
    finally:
        os.close(held)
    assert result.returncode == 0, result.stderr
    assert f"note: removed {killed}, left by an `ndpkit data` run that was killed" in result.stderr
    assert not killed.exists()
    assert f"note: {in_use} is a data set being written by another run" in result.stderr
    assert in_use.is_dir() and other.is_dir()


def test_an_empty_out_is_refused_not_taken_for_the_current_directory(
    ndpkit, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = ndpkit("data", "generate", "lc", "--size", "1MiB", "--out", "")
    assert result.returncode == 2
    assert "'--out' / '-o': is empty; give the directory to create" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_import_columns_of_a_npy_names_the_flag_and_the_file(ndpkit, tmp_path: Path) -> None:
    np.save(tmp_path / "x.npy", np.zeros((10, 2), np.float32))
    args = ("import", str(tmp_path / "x.npy"), "--app", "knn2", "--out", str(tmp_path / "X"))
    line = one_error_line(ndpkit("data", *args, "--columns", "a,b"))
    assert line == (
        "error: command line: --columns: only a Parquet table (.parquet or .pq) or a CSV file "
        f"(.csv, .tsv) has columns to choose; {tmp_path / 'x.npy'} is neither"
    )


@pytest.mark.parametrize("command", ["generate", "import"])
def test_shard_size_help_says_it_bounds_the_records_not_the_file(command: str) -> None:
    """It said "Largest shard file", and a .npy shard is 4 KiB larger (its header)."""
    import typer.main  # noqa: PLC0415

    from ndpkit.cli.data import app  # noqa: PLC0415

    group: Any = typer.main.get_command(app)
    (option,) = [p for p in group.commands[command].params if p.name == "shard_size"]
    assert option.help.startswith("Records per shard file up to this size")
    assert "4KiB for .npy" in option.help


def test_import_crop_summary_is_of_the_images_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--crop's summary read every image's header again after the data set was published:
    an image changed or removed meanwhile (a directory still being filled) made the command
    fail with exit status 2 and an error about that image, with the data set written all
    the same (and a second pass over the headers of every image). Now the summary is the
    import's own count, of the images it imported."""
    (tmp_path / "imgs").mkdir()
    for name in ("camera.png", "coins.png"):
        shutil.copy(SKIMAGE_DATA / name, tmp_path / "imgs")
    real_import = data_cli.import_dataset

    def import_then_change(*args: Any, **kwargs: Any) -> Dataset:
        made = real_import(*args, **kwargs)
        (tmp_path / "imgs" / "coins.png").write_bytes(b"being rewritten")
        return made

    monkeypatch.setattr(data_cli, "import_dataset", import_then_change)
    args = ["data", "import", str(tmp_path / "imgs"), "--app", "sobel", "--devices", "1"]
    result = CliRunner().invoke(app, [*args, "--crop", "--out", str(tmp_path / "ds"), "-f", "json"])
    assert result.exit_code == 0, result.output
    dropped, pixels = 303 * 384 - 256 * 256, 512 * 512 + 303 * 384
    assert (
        f"crop: 1 of 2 images lost their right or bottom edges, {dropped:,} of {pixels:,} "
        f"pixels ({dropped / pixels:.1%})"
    ) in result.output
    assert open_dataset(tmp_path / "ds").records == 5
