"""One executor shared by two threads, and a data set replaced while a run reads it: each
used to return wrong answers without an error (the runs read each other's answers from the
same workers' pipes; the run mixed the old data set's shards with the new one's)."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ndpkit.runtime.dataset as runtime_dataset
from ndpkit.errors import NdpkitError
from ndpkit.kernels import get_kernel
from ndpkit.runtime import LocalExecutor, ShardError, generate_dataset, open_dataset
from ndpkit.runtime.dataset import RecordLayout, corrupt_shard, shard_chunks
from ndpkit.runtime.executor import _resized, _Shard, _shown, _Task


def test_two_threads_share_an_executor_in_turns(tmp_path: Path) -> None:
    kernel = get_kernel("lc")
    ds = generate_dataset(kernel, 4 * 2**20, 4, tmp_path / "lc", shard_bytes=2**18)
    data = ds.read_all()
    params = [kernel.params(0), kernel.params(1)]
    expected = [kernel.reference(data, p) for p in params]
    failures: list[BaseException] = []

    def work(ex: LocalExecutor, j: int) -> None:
        try:
            for _ in range(4):
                kernel.check(ex.run(kernel, ds, params[j]).result, expected[j])
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    with LocalExecutor(2) as ex:
        threads = [threading.Thread(target=work, args=(ex, j)) for j in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
    assert not any(t.is_alive() for t in threads)
    assert failures == []


def test_a_data_set_replaced_during_a_run_is_an_error(tmp_path: Path) -> None:
    kernel = get_kernel("lc")
    path = tmp_path / "lc"
    ds = generate_dataset(kernel, 8 * 2**20, 4, path, shard_bytes=2**18)
    replaced: list[bool] = []

    def replace_once(done_bytes: int, total_bytes: int) -> None:
        if not replaced:
            generate_dataset(kernel, 8 * 2**20, 4, path, shard_bytes=2**18, seed=1, overwrite=True)
            replaced.append(True)

    params: dict[str, Any] = kernel.params(0)
    with pytest.raises(NdpkitError, match=r"while the data set was read|was replaced"):
        LocalExecutor(1).run(kernel, ds, params, progress=replace_once, chunk_bytes=2**16)
    assert replaced == [True]
    # The new data set itself runs fine.
    new = open_dataset(path)
    result = LocalExecutor(1).run(kernel, new, params).result
    kernel.check(result, kernel.reference(new.read_all(), params))


def test_a_run_inside_a_run_of_the_same_executor_is_refused(tmp_path: Path) -> None:
    """A progress callback that ran the same executor again waited for itself forever."""
    kernel = get_kernel("lc")
    ds = generate_dataset(kernel, 2**20, 2, tmp_path / "lc", shard_bytes=2**18)
    params = kernel.params(0)
    with LocalExecutor(1) as ex:

        def again(done_bytes: int, total_bytes: int) -> None:
            ex.run(kernel, ds, params)

        with pytest.raises(NdpkitError, match="under way in this thread"):
            ex.run(kernel, ds, params, progress=again)
        # The executor is still usable after.
        kernel.check(ex.run(kernel, ds, params).result, kernel.reference(ds.read_all(), params))


def test_a_kept_executor_reads_where_the_caller_is_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two data sets named `ds` in two directories, opened by that relative name after a
    chdir: kept workers resolved it in the directory they started in, and gave the first
    data set's answer for the second without an error."""
    kernel = get_kernel("lc")
    params = kernel.params(0)
    for seed, where in enumerate(("a", "b")):
        (tmp_path / where).mkdir()
        generate_dataset(kernel, 2**18, 2, tmp_path / where / "ds", seed=seed, shard_bytes=2**16)
    with LocalExecutor(2) as ex:
        answers = []
        for where in ("a", "b"):
            monkeypatch.chdir(tmp_path / where)
            ds = open_dataset("ds")
            answers.append(ex.run(kernel, ds, params).result)
            kernel.check(answers[-1], kernel.reference(ds.read_all(), params))
    assert not (answers[0] == answers[1]).all()


def test_workers_read_the_data_set_the_parent_checked_through_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`link/../ds` with `link` a symbolic link elsewhere is the link target's sibling; the
    workers' paths are made absolute without normalising `..` (which would name ./ds)."""
    kernel = get_kernel("lc")
    params = kernel.params(0)
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "cwd").mkdir()
    (tmp_path / "cwd" / "link").symlink_to(tmp_path / "real" / "sub")
    generate_dataset(kernel, 2**16, 1, tmp_path / "real" / "ds", seed=1, shard_bytes=2**16)
    generate_dataset(kernel, 2**16, 1, tmp_path / "cwd" / "ds", seed=2, shard_bytes=2**16)
    monkeypatch.chdir(tmp_path / "cwd")
    ds = open_dataset("link/../ds")
    assert ds.manifest.seed == 1
    with LocalExecutor(1) as ex:
        result = ex.run(kernel, ds, params).result
    kernel.check(result, kernel.reference(ds.read_all(), params))


def test_a_relative_data_set_run_from_elsewhere_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kernel = get_kernel("lc")
    for seed, where in enumerate(("a", "b")):
        (tmp_path / where).mkdir()
        generate_dataset(kernel, 2**16, 1, tmp_path / where / "ds", seed=seed, shard_bytes=2**16)
    monkeypatch.chdir(tmp_path / "a")
    ds = open_dataset("ds")
    monkeypatch.chdir(tmp_path / "b")
    with pytest.raises(NdpkitError, match="opened by this relative path from another directory"):
        LocalExecutor(1).run(kernel, ds, kernel.params(0))


def test_an_unreadable_shard_is_not_called_corrupt(tmp_path: Path) -> None:
    ds = generate_dataset(get_kernel("lc"), 2**16, 1, tmp_path / "lc", shard_bytes=2**16)
    shard = ds.shards[0]
    assert corrupt_shard(tmp_path / "gone.npy", shard) is None
    assert corrupt_shard(tmp_path, shard) is None  # a directory
    assert corrupt_shard(ds.shard_path(shard), shard) is None  # intact
    victim = ds.shard_path(shard)
    raw = bytearray(victim.read_bytes())
    raw[-1] ^= 1
    victim.write_bytes(raw)
    found = corrupt_shard(victim, shard)
    assert found is not None and "corrupt" in str(found)


def test_a_data_set_replaced_since_it_was_opened_is_refused_until_reopened(
    tmp_path: Path,
) -> None:
    """`data generate --overwrite` between opening and running: with the same shard sizes the
    run went over the new data under the old manifest's seed and CRCs; with other sizes it
    said "replaced while it was read; run again", every time."""
    kernel = get_kernel("lc")
    path = tmp_path / "lc"
    old = generate_dataset(kernel, 2**18, 2, path, seed=1, shard_bytes=2**16)
    params = kernel.params(0)
    with LocalExecutor(1) as ex:
        ex.run(kernel, old, params)
        generate_dataset(kernel, 2**18, 2, path, seed=2, shard_bytes=2**16, overwrite=True)
        for verify in (False, True):
            with pytest.raises(NdpkitError, match=r"replaced since it was opened.*open it again"):
                ex.run(kernel, old, params, verify=verify)
        new = open_dataset(path)
        kernel.check(ex.run(kernel, new, params).result, kernel.reference(new.read_all(), params))
        # The same manifest written again (a new file, the same data) is the same data set.
        manifest = path / "manifest.json"
        text = manifest.read_text(encoding="utf-8")
        manifest.unlink()
        manifest.write_text(text, encoding="utf-8")
        ex.run(kernel, new, params)
        shutil.rmtree(path)
        with pytest.raises(NdpkitError, match="removed or moved since it was opened"):
            ex.run(kernel, new, params)


@pytest.mark.parametrize("opened", ["absolute", "relative"])
@pytest.mark.parametrize("app", ["kmeans", "knn8", "knn8-topk"])
def test_verify_names_a_corrupt_shard_before_a_kernel_refuses_its_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, app: str, opened: str
) -> None:
    """A NaN written into a .npy shard: the kernel refuses the point before the shard's
    CRC-32 is known (at its end), so `verify=True` said the data was invalid, naming no file.
    With `verify` the corruption is the error; without, the kernel's refusal stands. Both
    are raised in the worker, which opens the shard by its absolute path; they name it as
    the data set was opened (relative, if it was), as the parent's own checks do."""
    kernel = get_kernel(app)
    where = tmp_path / app
    if opened == "relative":
        monkeypatch.chdir(tmp_path)
        where = Path(app)
    ds = generate_dataset(kernel, 2**18, 2, where, shard_bytes=2**16)
    victim = ds.shard_path(ds.shards_of(1)[0])
    assert victim.is_absolute() == (opened == "absolute")
    data = np.load(victim, mmap_mode="r+")
    data[3, 2] = np.nan
    data.flush()
    del data
    params = kernel.params(0)
    with LocalExecutor(1) as ex:
        with pytest.raises(ShardError, match=r"CRC-32 is .*: corrupt") as caught:
            ex.run(kernel, ds, params, verify=True)
        assert caught.value.source == str(victim)
        assert str(caught.value).startswith(f"{victim}: "), str(caught.value)
        with pytest.raises(NdpkitError, match=r"non-finite|NaN") as refused:
            ex.run(kernel, ds, params)
        assert not isinstance(refused.value, ShardError)
    # Without `verify` the refusal names the shard that holds the point, and its records.
    shard = ds.shards_of(1)[0]
    last = shard.offset + shard.records - 1
    assert str(refused.value).startswith(
        f"{victim} (records {shard.offset} to {last} of the data set): "
    ), str(refused.value)
    assert f"point {shard.offset + 3} " in str(refused.value)


def test_a_worker_error_names_the_shard_as_opened_in_its_detail_and_clauses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker opens a shard by its absolute path, and a library's report quoted in the
    error's detail names that path (pyarrow's "Failed to open local file '/abs/…'" of a
    Parquet shard removed after its size was checked): the detail names it as the data set
    was opened too, as does the clause a dead worker's error gives of a shard that is gone."""
    monkeypatch.chdir(tmp_path)
    shown = str(Path("ds") / "device-00" / "shard-00000.parquet")
    absolute = str(tmp_path / shown)
    shard = _Shard(absolute, shown, 0, 4, 0, 100, "00000000")
    layout = RecordLayout(np.dtype(np.float32), (1,), "parquet", ("x",))
    # removed after the size check: the reader's own report, as the worker raises it
    monkeypatch.setattr(runtime_dataset, "check_shard_size", lambda path, size: None)
    with pytest.raises(ShardError) as caught:
        list(shard_chunks(Path(absolute), shard, layout, 4))
    assert absolute in caught.value.detail  # what the worker says
    named = _shown(caught.value, shard)
    assert named.source == shown
    assert absolute not in str(named) and str(named).startswith(f"{shown}: "), str(named)
    task = _Task(get_kernel("lc"), None, 0, (0,), (shard,), layout, 4, False, False, None, None)
    assert _resized(task) == f" (since then {shown} is gone: changed while it was read)"
