"""A data set, its manifest or one of its device directories given where something else is
meant: each said for what it is, in one line, exit 2, nothing written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_errors import one_error_line

from ndpkit.runtime import Dataset, generate_dataset, import_dataset
from ndpkit.runtime.dataset import MANIFEST


@pytest.fixture
def dataset(tmp_path: Path) -> Dataset:
    return generate_dataset("lc", 256 * 2**10, 2, tmp_path / "ds", seed=3, shard_bytes=64 * 2**10)


@pytest.mark.parametrize(
    "command", [("data", "show"), ("evaluate", "--platforms", "cns", "--data")]
)
@pytest.mark.parametrize(
    ("part", "expected"),
    [
        # Was "is a file, not a data set directory (a .npy, Parquet or CSV file becomes one
        # with `ndpkit data import …`)": a manifest is no data to import.
        ("manifest.json", "is the manifest of the data set {ds}: give its directory, {ds}"),
        # Was "device-01/manifest.json: missing: not a data set, or one whose writing did
        # not finish": the data set one level up went unsaid.
        ("device-01", "is a device directory of the data set {ds}: give the data set, {ds}"),
    ],
)
def test_a_part_of_a_data_set_names_the_data_set(
    ndpkit, dataset: Dataset, command: tuple[str, ...], part: str, expected: str
) -> None:
    given = dataset.path / part
    line = one_error_line(ndpkit(*command, str(given)))
    assert line == f"error: {given}: " + expected.format(ds=dataset.path)


@pytest.mark.parametrize("shard_format", ["npy", "parquet"])
def test_importing_a_device_directory_names_its_data_set(
    ndpkit, tmp_path: Path, shard_format: str
) -> None:
    """DS/device-00 of .npy shards was "read as a directory of images … not images"."""
    ds = generate_dataset("lc", 64 * 2**10, 2, tmp_path / "ds", seed=5, shard_format=shard_format)
    given, out = ds.path / "device-00", tmp_path / "out"
    line = one_error_line(ndpkit("data", "import", str(given), "--app", "lc", "-o", str(out)))
    assert line.startswith(
        f"error: {given}: is a device directory of an ndpkit data set ({ds.path}/{MANIFEST})"
    ), line
    assert f"`ndpkit evaluate --data {ds.path}`" in line and not out.exists()


@pytest.mark.parametrize("shard_format", ["npy", "parquet"])
@pytest.mark.parametrize("part", ["", "manifest.json"])
def test_importing_a_data_set_says_it_is_one_and_how_to_reshard_it(
    ndpkit, tmp_path: Path, shard_format: str, part: str
) -> None:
    """An .npy-sharded data set was read as a directory of images ("app 'lc' has records
    of shape (8,), not images"), a Parquet-sharded one as a table with a stray file
    ("holds files that are not parts of a Parquet table (manifest.json)"), and a manifest
    as a .npy ("not a .npy file")."""
    ds = generate_dataset("lc", 64 * 2**10, 2, tmp_path / "ds", seed=5, shard_format=shard_format)
    given = ds.path / part if part else ds.path
    out = tmp_path / "out"
    line = one_error_line(ndpkit("data", "import", str(given), "--app", "lc", "-o", str(out)))
    assert line.startswith(f"error: {given}: is an ndpkit data set already ({ds.path}/"), line
    assert f"`ndpkit evaluate --data {ds.path}`" in line
    assert "`ndpkit data generate lc --seed 5 --devices N`" in line
    assert not out.exists()


def test_importing_an_imported_data_set_names_what_it_was_made_from(
    ndpkit, tmp_path: Path, dataset: Dataset
) -> None:
    shard = dataset.shard_path(dataset.shards[0])
    copy = import_dataset(shard, 1, tmp_path / "copy", "lc")
    out = tmp_path / "out"
    line = one_error_line(ndpkit("data", "import", str(copy.path), "--app", "lc", "-o", str(out)))
    assert line.endswith(f"import what it was made from ({shard.resolve()}) with --devices N")
    assert not out.exists()


def test_a_users_device_nn_directory_with_a_data_set_in_it_is_still_a_data_set(
    ndpkit, tmp_path: Path
) -> None:
    """Only a directory that holds no manifest of its own is taken for a device directory:
    a data set named device-03 inside another opens."""
    outer = generate_dataset("lc", 64 * 2**10, 1, tmp_path / "outer", shard_bytes=64 * 2**10)
    inner = generate_dataset("lc", 64 * 2**10, 1, tmp_path / "inner")
    inner.path.rename(outer.path / "device-03")  # written there, it is refused
    # The outer data set now holds a device directory its manifest does not list.
    shown = ndpkit("data", "show", str(outer.path / "device-03"))
    assert shown.returncode == 0, shown.stderr


@pytest.mark.parametrize("inside", ["device-00/new", "sub", "device-01/x/y"])
@pytest.mark.parametrize("command", ["generate", "import"])
def test_a_data_set_is_not_written_inside_another(
    ndpkit, dataset: Dataset, inside: str, command: str
) -> None:
    """`-o DS/device-00/new` wrote a data set there, and DS's next `--overwrite` was refused
    ("holds device-00/new, which ndpkit did not write")."""
    out = dataset.path / inside
    if command == "generate":
        args = ("generate", "lc", "--size", "64KiB", "--devices", "1")
    else:
        args = ("import", str(dataset.shard_path(dataset.shards[0])), "--app", "lc")
    line = one_error_line(ndpkit("data", *args, "-o", str(out)))
    assert line.startswith(f"error: {out}: --out: is inside the data set {dataset.path}, "), line
    assert line.endswith("write it elsewhere; nothing was written")
    assert sorted(p.name for p in dataset.path.iterdir()) == ["device-00", "device-01", MANIFEST]
    again = ndpkit(
        "data", "generate", "lc", "--size", "64KiB", "-o", str(dataset.path), "--overwrite"
    )
    assert again.returncode == 0, again.stderr


@pytest.mark.parametrize("verify", [(), ("--verify",)])
@pytest.mark.parametrize("replacement", ["file", "dangling link"])
def test_a_file_where_a_device_directory_belongs_is_said_once(
    ndpkit, dataset: Dataset, verify: tuple[str, ...], replacement: str
) -> None:
    """It was each shard's "cannot read shard (Not a directory)", once per shard."""
    device = dataset.path / "device-01"
    shutil.rmtree(device)
    if replacement == "file":
        device.write_text("not a directory\n")
    else:
        device.symlink_to(dataset.path / "nowhere")
    line = one_error_line(ndpkit("data", "show", str(dataset.path), *verify))
    shards = len(dataset.shards_of(1))
    its = "its shard" if shards == 1 else f"its {shards} shards"
    assert line == (
        f"error: {device}: is not a directory (a file, or a link to nothing): the device "
        f"directory is missing, {its}"
    )
