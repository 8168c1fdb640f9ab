"""Arguments of the data set API (`generate_dataset`, `import_dataset`, `open_dataset`,
`Dataset.verify`) of the wrong type: refused before anything is written or removed, in a
SpecError naming the argument, not taken for their truth value or called part-way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ndpkit.errors import SpecError
from ndpkit.kernels import get_kernel
from ndpkit.runtime import generate_dataset, import_dataset, open_dataset

SIZE_BYTES = 4096


@pytest.mark.parametrize("overwrite", ["no", "False", 0, 1, None], ids=repr)
def test_overwrite_must_be_a_bool_not_a_truthy_value(tmp_path: Path, overwrite: Any) -> None:
    """`overwrite="no"` is truthy: it replaced the data set there without a word."""
    target = tmp_path / "lc"
    kept = generate_dataset("lc", SIZE_BYTES, 1, target, seed=1)
    with pytest.raises(SpecError, match=r"^overwrite: must be True or False, got"):
        generate_dataset("lc", SIZE_BYTES, 1, target, seed=2, overwrite=overwrite)
    npy = tmp_path / "in.npy"
    np.save(npy, get_kernel("lc").generate(SIZE_BYTES, 3))
    with pytest.raises(SpecError, match=r"^overwrite: must be True or False, got"):
        import_dataset(npy, 1, target, "lc", overwrite=overwrite)
    assert open_dataset(target).seed == kept.seed == 1  # not replaced


def test_numpy_bools_are_bools(tmp_path: Path) -> None:
    target = tmp_path / "lc"
    generate_dataset("lc", SIZE_BYTES, 1, target, seed=1)
    made = generate_dataset("lc", SIZE_BYTES, 1, target, seed=2, overwrite=np.bool_(True))
    assert made.seed == 2
    assert open_dataset(target, verify=np.bool_(True), every=np.bool_(False)).seed == 2


@pytest.mark.parametrize("field", ["verify", "every"])
def test_open_dataset_refuses_a_verify_that_is_no_bool(tmp_path: Path, field: str) -> None:
    """`verify="no"` verified (and `every="no"` named every bad shard)."""
    generate_dataset("lc", SIZE_BYTES, 1, tmp_path / "lc")
    with pytest.raises(SpecError, match=rf"^{field}: must be True or False, got 'no'"):
        open_dataset(tmp_path / "lc", **{field: "no"})
    with pytest.raises(SpecError, match=r"^every: must be True or False, got 'no'"):
        open_dataset(tmp_path / "lc").verify(every="no")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match=r"^verify: must be True or False, got 'no'"):
        next(open_dataset(tmp_path / "lc").chunks(verify="no"))  # type: ignore[arg-type]


def test_import_refuses_a_crop_that_is_no_bool(tmp_path: Path) -> None:
    npy = tmp_path / "in.npy"
    np.save(npy, get_kernel("lc").generate(SIZE_BYTES, 3))
    with pytest.raises(SpecError, match=r"^crop: must be True or False, got 'no'"):
        import_dataset(npy, 1, tmp_path / "lc", "lc", crop="no")  # type: ignore[arg-type]
    assert not (tmp_path / "lc").exists()


@pytest.mark.parametrize("field", ["progress", "on_stale_removed"])
def test_callbacks_that_are_not_functions_are_refused_before_writing(
    tmp_path: Path, field: str
) -> None:
    """`progress=1` was called once the writing had begun: "'int' object is not callable";
    `on_stale_removed=1` only where a stale staging directory had already been removed."""
    npy = tmp_path / "in.npy"
    np.save(npy, get_kernel("lc").generate(SIZE_BYTES, 3))
    with pytest.raises(SpecError, match=rf"^{field}: must be a function .*, or None; got 1"):
        generate_dataset("lc", SIZE_BYTES, 1, tmp_path / "lc", **{field: 1})
    with pytest.raises(SpecError, match=rf"^{field}: must be a function .*, or None; got 1"):
        import_dataset(npy, 1, tmp_path / "lc", "lc", **{field: 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.npy"]


def test_progress_of_open_and_on_cropped_must_be_functions(tmp_path: Path) -> None:
    generate_dataset("lc", SIZE_BYTES, 1, tmp_path / "lc")
    with pytest.raises(SpecError, match=r"^progress: must be a function"):
        open_dataset(tmp_path / "lc", verify=True, progress=True)  # type: ignore[arg-type]
    npy = tmp_path / "in.npy"
    np.save(npy, get_kernel("lc").generate(SIZE_BYTES, 3))
    with pytest.raises(SpecError, match=r"^on_cropped: must be a function"):
        import_dataset(npy, 1, tmp_path / "out", "lc", on_cropped="x")  # type: ignore[arg-type]


@pytest.mark.parametrize("path", [b"data/lc", 5, None], ids=repr)
def test_a_path_that_is_no_path_is_named(tmp_path: Path, path: Any) -> None:
    """bytes or a number ended in pathlib's "argument should be a str or an os.PathLike
    object", naming no argument."""
    with pytest.raises(SpecError, match=r"^path: must be a path"):
        generate_dataset("lc", SIZE_BYTES, 1, path)
    with pytest.raises(SpecError, match=r"^path: must be a path"):
        open_dataset(path)
    with pytest.raises(SpecError, match=r"^src: must be a path"):
        import_dataset(path, 1, tmp_path / "lc", "lc")


@pytest.mark.parametrize("device", [2, 7, -1, 1.0, True], ids=repr)
def test_a_device_the_data_set_does_not_have_is_named(tmp_path: Path, device: Any) -> None:
    """Device 7 of a 2-device data set had no shards and 0 bytes, without a word."""
    dataset = generate_dataset("lc", SIZE_BYTES, 2, tmp_path / "lc")
    with pytest.raises(SpecError, match=r"device: (no device|must be a whole device number)"):
        dataset.shards_of(device)
    with pytest.raises(SpecError, match=r"device: (no device|must be a whole device number)"):
        dataset.device_bytes(device)
    assert sum(dataset.device_bytes(d) for d in range(2)) == dataset.total_bytes


@pytest.mark.parametrize("size", [-1, 100.0, "1KiB"], ids=repr)
def test_sample_sizes_are_whole_numbers_of_bytes(tmp_path: Path, size: Any) -> None:
    """head(100.0) was "'float' object cannot be interpreted as an integer" from the
    shard reader, and head(-1) one record."""
    dataset = generate_dataset("lc", SIZE_BYTES, 2, tmp_path / "lc")
    for sample in (dataset.head, dataset.spread):
        with pytest.raises(SpecError, match=r"^max_bytes: must be a whole number of bytes ≥ 0"):
            sample(size)
    with pytest.raises(SpecError, match=r"^chunk_bytes: must be a whole number of bytes ≥ 0"):
        next(dataset.chunks(size))


def test_a_sample_of_fewer_bytes_than_a_record_is_one_record(tmp_path: Path) -> None:
    dataset = generate_dataset("lc", SIZE_BYTES, 2, tmp_path / "lc")
    assert len(dataset.head(np.int64(0))) == 1
    assert len(next(dataset.chunks(0))[1]) == 1


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_columns_given_by_number_are_named(tmp_path: Path, suffix: str) -> None:
    """columns=[0, 1, …] ended in "'int' object has no attribute 'strip'"."""
    import pyarrow as pa  # noqa: PLC0415 - only this test writes a table
    import pyarrow.csv as pacsv  # noqa: PLC0415
    import pyarrow.parquet as pq  # noqa: PLC0415

    points = get_kernel("lc").generate(SIZE_BYTES, 0)
    table = pa.table({f"c{i}": points[:, i] for i in range(points.shape[1])})
    src = tmp_path / f"t{suffix}"
    if suffix == ".csv":
        pacsv.write_csv(table, src)
    else:
        pq.write_table(table, src)
    with pytest.raises(SpecError, match=r"^columns: columns are named, not numbered"):
        import_dataset(src, 1, tmp_path / "lc", "lc", columns=list(range(8)))  # type: ignore[arg-type]
    named = import_dataset(src, 1, tmp_path / "lc", "lc", columns=iter(table.column_names))  # type: ignore[arg-type]
    assert named.records == len(points)
