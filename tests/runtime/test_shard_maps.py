"""Kept shard mappings (`ShardMaps`): within their budget, checked against the file every
time, dropped when the file goes, and used by the executor across passes and runs without
changing an answer."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from test_executor import (  # sibling module: workers unpickle them by name
    Median,
    SumCount,
    shard_files,
    sumcount_numpy,
)

from ndpkit.errors import SpecError
from ndpkit.kernels import get_kernel, run_in_memory
from ndpkit.runtime import LocalExecutor, ShardError, generate_dataset
from ndpkit.runtime.dataset import Dataset, write_npy
from ndpkit.runtime.executor import budget_from_environment
from ndpkit.runtime.shard_maps import BUDGET_ENV, ShardMaps

F32 = np.dtype(np.float32)


def _shard(path: Path, rows: int, value: float = 1.0) -> Path:
    data = np.full((rows, 4), value, dtype=np.float32)
    write_npy(path, F32, data.shape, iter([data]))
    return path


def _offset(path: Path) -> int:
    with path.open("rb") as f:
        np.lib.format.read_magic(f)
        np.lib.format.read_array_header_1_0(f)
        return f.tell()


def _keep(maps: ShardMaps, path: Path, rows: int, run: int = 1) -> np.ndarray | None:
    with path.open("rb") as f:
        return maps.keep(path, f, _offset(path), F32, (4,), rows, run)


# -- the cache itself -----------------------------------------------------------------------


def test_a_kept_shard_is_the_files_records_and_is_found_again(tmp_path: Path) -> None:
    path = _shard(tmp_path / "a.npy", 1000, 3.0)
    maps = ShardMaps(1 << 20)
    kept = _keep(maps, path, 1000)
    assert kept is not None and kept.shape == (1000, 4) and (kept == 3.0).all()
    assert not kept.flags.writeable
    assert maps.mapped_bytes == maps.kept_bytes == 16_000
    hit = maps.get(path, F32, (4,), 1000, run=1)
    assert hit is not None and hit[0] is kept and hit[1] == _offset(path)
    assert maps.mapped_bytes == 16_000  # found, not mapped again


def test_a_shard_beyond_the_budget_is_not_kept(tmp_path: Path) -> None:
    a, b = _shard(tmp_path / "a.npy", 1000), _shard(tmp_path / "b.npy", 1000)
    maps = ShardMaps(20_000)
    assert _keep(maps, a, 1000) is not None
    assert _keep(maps, b, 1000) is None  # 32,000 bytes > 20,000
    assert maps.kept_bytes == 16_000 and len(maps) == 1
    assert _keep(ShardMaps(0), a, 1000) is None


def test_the_current_runs_shards_stay_and_older_ones_make_room(tmp_path: Path) -> None:
    paths = [_shard(tmp_path / f"{i}.npy", 1000) for i in range(3)]
    maps = ShardMaps(32_000)  # two shards
    assert _keep(maps, paths[0], 1000, run=1) is not None
    assert _keep(maps, paths[1], 1000, run=1) is not None
    # The same run: nothing of it is dropped for a third shard, which streams instead.
    assert _keep(maps, paths[2], 1000, run=1) is None
    assert maps.get(paths[0], F32, (4,), 1000, run=1) is not None
    # A later run that reads shard 1 and then needs room drops shard 0, not shard 1.
    assert maps.get(paths[1], F32, (4,), 1000, run=2) is not None
    assert _keep(maps, paths[2], 1000, run=2) is not None
    assert maps.get(paths[0], F32, (4,), 1000, run=2) is None
    assert maps.get(paths[1], F32, (4,), 1000, run=2) is not None
    assert maps.kept_bytes == 32_000


def test_a_replaced_file_is_not_read_from_the_old_mapping(tmp_path: Path) -> None:
    path = _shard(tmp_path / "a.npy", 1000, 1.0)
    maps = ShardMaps(1 << 20)
    assert _keep(maps, path, 1000) is not None
    _shard(tmp_path / "new.npy", 1000, 2.0).replace(path)  # a new inode, as writers do
    assert maps.get(path, F32, (4,), 1000, run=1) is None
    assert len(maps) == 0
    again = _keep(maps, path, 1000)
    assert again is not None and (again == 2.0).all()


def test_a_file_rewritten_in_place_is_checked_again(tmp_path: Path) -> None:
    path = _shard(tmp_path / "a.npy", 1000, 1.0)
    maps = ShardMaps(1 << 20)
    assert _keep(maps, path, 1000) is not None
    path.write_bytes(path.read_bytes())
    os.utime(path, ns=(1, 1))  # surely another modification time, whatever the clock's tick
    assert maps.get(path, F32, (4,), 1000, run=1) is None


def test_a_new_run_drops_the_mappings_of_deleted_files(tmp_path: Path) -> None:
    """Else a deleted data set's disk space would stay in use until the worker ends."""
    gone, stays = _shard(tmp_path / "gone.npy", 1000), _shard(tmp_path / "stays.npy", 1000)
    maps = ShardMaps(1 << 20)
    assert _keep(maps, gone, 1000, run=1) is not None
    assert _keep(maps, stays, 1000, run=1) is not None
    gone.unlink()
    assert maps.get(stays, F32, (4,), 1000, run=2) is not None
    assert len(maps) == 1 and maps.kept_bytes == 16_000


def test_the_number_of_kept_files_is_capped(tmp_path: Path) -> None:
    maps = ShardMaps(1 << 30)
    maps.max_files = 3
    paths = [_shard(tmp_path / f"{i}.npy", 10) for i in range(5)]
    kept = [_keep(maps, p, 10) is not None for p in paths]
    assert kept == [True, True, True, False, False] and len(maps) == 3


def test_a_file_shorter_than_its_records_is_refused(tmp_path: Path) -> None:
    """mmap's own ValueError (any ValueError passed before), and nothing is kept."""
    path = _shard(tmp_path / "a.npy", 1000)
    maps = ShardMaps(1 << 20)
    with pytest.raises(ValueError, match="mmap length is greater than file size"):
        _keep(maps, path, 2000)
    assert len(maps) == 0 and maps.kept_bytes == 0 and maps.mapped_bytes == 0


# -- the budget ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"), [("0", 0), ("512 MiB", 512 * 2**20), ("2GiB", 2 * 2**30)]
)
def test_the_budget_is_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, text: str, expected: int
) -> None:
    monkeypatch.setenv(BUDGET_ENV, text)
    assert budget_from_environment() == expected
    assert LocalExecutor(1).mapped_budget_bytes == expected


@pytest.mark.parametrize("text", ["2 GBs", "-1 GiB", "lots", ""])
def test_a_budget_that_is_no_size_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    monkeypatch.setenv(BUDGET_ENV, text)
    with pytest.raises(SpecError, match=f"environment: {BUDGET_ENV}"):
        LocalExecutor(1)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("1.5B", "must be a whole number of bytes"),  # was 1 byte
        ("0.5 B", "must be a whole number of bytes"),  # was 0: keeping off, without a word
        ("-1", "must be ≥ 0 bytes"),  # was "has no unit"
    ],
)
def test_a_budget_of_part_of_a_byte_or_below_zero_is_refused_as_such(
    monkeypatch: pytest.MonkeyPatch, text: str, says: str
) -> None:
    monkeypatch.setenv(BUDGET_ENV, text)
    with pytest.raises(SpecError, match=says):
        budget_from_environment()


def test_a_budget_of_zeros_is_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BUDGET_ENV, "00")
    assert budget_from_environment() == 0


@pytest.mark.parametrize("value", [-1, 1.5, "1GiB"])
def test_a_budget_argument_must_be_whole_bytes(value: object) -> None:
    with pytest.raises(SpecError, match="mapped_budget_bytes"):
        LocalExecutor(1, mapped_budget_bytes=value)  # type: ignore[arg-type]


# -- through the executor -----------------------------------------------------------------


@pytest.fixture
def sumcount_data(tmp_path: Path) -> Dataset:
    return generate_dataset(SumCount(), 400_000, 4, tmp_path / "ds", shard_bytes=40_000)


def test_an_iterative_kernel_maps_its_shards_once(sumcount_data: Dataset) -> None:
    want = run_in_memory(Median(), sumcount_data.read_all(), {}, 1000)
    with LocalExecutor(1, mapped_budget_bytes=1 << 30) as ex:
        out = ex.run(Median(), sumcount_data, {}, chunk_bytes=4096)
        again = ex.run(Median(), sumcount_data, {}, chunk_bytes=4096)
    assert out.result == again.result == want and out.passes > 3
    data_bytes = sumcount_data.records * sumcount_data.record_bytes
    first, *later = out.pass_stats
    assert sum(e.mapped_bytes for e in first.engines) == data_bytes
    assert all(e.mapped_bytes == 0 for p in later for e in p.engines)
    assert all(e.mapped_bytes == 0 for e in again.engines)  # a kept worker: mapped already
    # Each engine kept 100,000 bytes of shards, which are page cache, not the run's memory
    # (the first engine of a new worker also pays for the worker's own start).
    assert all(e.mapped_bytes == 100_000 for e in first.engines)
    assert all(e.rss_growth_bytes < 64 * 2**10 for e in first.engines[1:])


def test_with_no_budget_every_pass_streams(sumcount_data: Dataset) -> None:
    out = LocalExecutor(1, mapped_budget_bytes=0).run(Median(), sumcount_data, {})
    assert all(e.mapped_bytes == 0 for e in out.engines)
    # streamed, and still the answer (the mapped bytes alone passed a run that read nothing
    # or read wrong); the sums see every record where a median would not
    assert out.result == run_in_memory(Median(), sumcount_data.read_all(), {}, 1000)
    sums = LocalExecutor(1, mapped_budget_bytes=0).run(SumCount(), sumcount_data, {})
    assert all(e.mapped_bytes == 0 for e in sums.engines)
    assert sums.result == sumcount_numpy(shard_files(sumcount_data))


def test_a_worker_keeps_no_more_than_its_share_of_the_budget(sumcount_data: Dataset) -> None:
    budget = 120_000  # two workers: 60,000 bytes each, one 40,000-byte shard each
    out = LocalExecutor(2, mapped_budget_bytes=budget).run(Median(), sumcount_data, {})
    kept = sum(e.mapped_bytes for e in out.engines)
    assert 0 < kept <= budget
    assert out.result == run_in_memory(Median(), sumcount_data.read_all(), {}, 1000)


def test_two_workers_map_each_shard_at_most_once_each(sumcount_data: Dataset) -> None:
    """Two workers, four engines, many passes: an engine goes back to the worker that has
    its shards mapped (a worker left idle may still take another's, and map it too)."""
    data_bytes = sumcount_data.records * sumcount_data.record_bytes
    out = LocalExecutor(2, mapped_budget_bytes=1 << 30).run(Median(), sumcount_data, {})
    assert out.passes > 3
    assert data_bytes <= sum(e.mapped_bytes for e in out.engines) <= 2 * data_bytes


def test_a_data_set_regenerated_in_place_is_read_afresh(tmp_path: Path) -> None:
    kernel = SumCount()
    path = tmp_path / "ds"
    with LocalExecutor(1, mapped_budget_bytes=1 << 30) as ex:
        first = generate_dataset(kernel, 100_000, 2, path, seed=1, shard_bytes=20_000)
        first_data = first.read_all()
        assert ex.run(kernel, first, {}).result == kernel.reference(first_data, {})
        second = generate_dataset(
            kernel, 100_000, 2, path, seed=2, shard_bytes=20_000, overwrite=True
        )
        out = ex.run(kernel, second, {})
    old, new = kernel.reference(first_data, {}), kernel.reference(second.read_all(), {})
    assert old != new  # else the test could not tell the mappings apart
    assert out.result == new
    assert sum(e.mapped_bytes for e in out.engines) == second.records * second.record_bytes


def test_a_kept_shard_truncated_between_runs_is_named(sumcount_data: Dataset) -> None:
    with LocalExecutor(1, mapped_budget_bytes=1 << 30) as ex:
        ex.run(SumCount(), sumcount_data, {})
        victim = sumcount_data.shard_path(sumcount_data.shards_of(1)[0])
        with victim.open("r+b") as f:
            f.truncate(victim.stat().st_size - 100)
        with pytest.raises(ShardError, match="truncated or corrupt") as caught:
            ex.run(SumCount(), sumcount_data, {})
    assert caught.value.source == str(victim)


def test_a_real_iterative_kernel_gives_the_same_answer_kept_or_streamed(tmp_path: Path) -> None:
    kernel = get_kernel("kmeans")
    ds = generate_dataset(kernel, 2 * 2**20, 4, tmp_path / "km", seed=3, shard_bytes=2**18)
    params = kernel.params(3)
    kept = LocalExecutor(1, mapped_budget_bytes=1 << 30).run(kernel, ds, params)
    streamed = LocalExecutor(1, mapped_budget_bytes=0).run(kernel, ds, params)
    np.testing.assert_array_equal(kept.result.centres, streamed.result.centres)
    assert kept.result.iterations == streamed.result.iterations
    assert sum(e.mapped_bytes for e in kept.engines) == ds.records * ds.record_bytes


def test_growth_is_not_hidden_when_mappings_make_room_for_others(tmp_path: Path) -> None:
    """A run that drops an earlier run's mappings to keep its own adds less to the resident
    size than it maps: only what it added is left out of `rss_growth_bytes`, which must not
    go far below zero (it would hide the memory the run itself needed)."""
    kernel = SumCount()
    sets = [
        generate_dataset(kernel, 4 * 2**20, 1, tmp_path / name, seed=i, shard_bytes=4 * 2**20)
        for i, name in enumerate("ab")
    ]
    with LocalExecutor(1, mapped_budget_bytes=6 * 2**20) as ex:  # room for one data set
        runs = [ex.run(kernel, sets[i], {}) for i in (0, 1, 0)]
    for out in runs:
        (engine,) = out.engines
        assert engine.mapped_bytes == 4 * 2**20  # each run dropped the other's mapping
        assert engine.rss_growth_bytes > -256 * 2**10, engine


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/PID/maps")
def test_a_run_over_parquet_shards_drops_a_deleted_data_sets_mappings(tmp_path: Path) -> None:
    """Mappings were checked only as .npy shards were read: after a kept worker's run over a
    .npy data set that was then deleted, runs over Parquet shards kept its mappings, and its
    disk space, until the executor closed."""
    lc = get_kernel("lc")
    params = lc.params(0)
    npy = generate_dataset(lc, 1 << 20, 2, tmp_path / "npy")
    parquet = generate_dataset(lc, 1 << 20, 2, tmp_path / "pq", shard_format="parquet")

    def deleted_maps(ex: LocalExecutor) -> int:
        assert ex._pool is not None
        maps = [Path(f"/proc/{w.process.pid}/maps").read_text() for w in ex._pool.workers]
        return sum(
            line.endswith("(deleted)") and "/npy/" in line for m in maps for line in m.splitlines()
        )

    with LocalExecutor(1) as ex:
        ex.run(lc, npy, params)
        for shard in npy.path.glob("device-*/*.npy"):
            shard.unlink()
        assert deleted_maps(ex) > 0
        ex.run(lc, parquet, params)
        assert deleted_maps(ex) == 0
