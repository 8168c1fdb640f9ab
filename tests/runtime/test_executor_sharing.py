"""One executor shared by two threads, and a data set replaced while a run reads it: each
used to return wrong answers without an error (the runs read each other's answers from the
same workers' pipes; the run mixed the old data set's shards with the new one's)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from ndpkit.errors import NdpkitError
from ndpkit.kernels import get_kernel
from ndpkit.runtime import LocalExecutor, generate_dataset, open_dataset


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
