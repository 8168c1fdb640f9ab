"""Bounded memory with the real kernels: a worker needs no more memory for a data set four
times larger, whether the kernel reduces its input (HE histograms, k-NN, K-Means) or emits a
row per record (LC, the image kernels, FFT2D, k-NN's paper split) into the rows arena.

What is measured is `EngineStats.rss_growth_bytes`: the worker's peak resident size during
the pass, less its size when the pass started, less the arena pages it wrote
(`shared_growth_bytes`) and the shard pages it mapped whole and kept (`mapped_bytes`, within
the executor's budget). The arena's pages are shared with the parent: they are the host's
output, in memory once however many processes map them (and, in a disk arena, file pages
the kernel writes back and reclaims). What is left is the worker's private memory, anonymous
(chunks' temporaries, partials, a pickled result) plus the page-cache pages of the chunk
windows it maps, both of which must not depend on the data set's size. Linux keeps no
high-water mark of anonymous memory alone, hence a peak of the resident size less the shared
pages: a kernel that kept its rows, or merged them in the worker, would grow by them.

Every app runs with no budget for kept mappings, so that its shards stream through windows
as the shards of a data set larger than the budget do; a few run with a budget larger than
the data, where what is kept must be the shards' bytes and nothing more.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import ndpkit.runtime.executor as runtime_executor
from ndpkit.kernels import get_kernel
from ndpkit.kernels.base import RowKernel
from ndpkit.runtime import EngineStats, LocalExecutor, generate_dataset
from ndpkit.runtime.transfer import ROWS_DIR_ENV

APPS = (
    "lc",
    "he",
    "he-remap",
    "binarize",
    "sobel",
    "fft2d",
    "knn2",
    "knn8",
    "knn8-topk",
    "kmeans",
)
SMALL_MIB, LARGE_MIB = 8, 32
CHUNK_BYTES = 256 * 2**10
SLACK_BYTES = 2**20
"""What the larger run may need beyond the smaller one: four chunks. Measured: within 120 KiB
for every app on an idle machine, and once 536 KiB with four other test runs loading the
machine (half a MiB had been the limit). A worker that kept 1/8 of its input (LC's scores,
k-NN's distances) would need 3 MiB more. (Rows of less than ~2 MiB, such as HE's histograms
at 1/32, can hide in heap memory that the chunks' temporaries left behind and malloc kept.)"""


def _engine_over(tmp_path: Path, budget: int) -> Callable[[str, int], EngineStats]:
    """(app, MiB) → its one engine over a one-device data set of that size, in 16 MiB
    shards, read in 256 KiB chunks by a fresh worker that may keep `budget` bytes mapped."""

    def run(app: str, size_mib: int) -> EngineStats:
        kernel = get_kernel(app)
        path = tmp_path / f"{app}-{size_mib}"
        ds = generate_dataset(kernel, size_mib * 2**20, 1, path, seed=2, shard_bytes=16 * 2**20)
        out = LocalExecutor(1, mapped_budget_bytes=budget).run(
            kernel, ds, kernel.params(2), chunk_bytes=CHUNK_BYTES
        )
        (engine,) = out.engines
        assert engine.mapped_bytes == (ds.total_bytes if budget else 0)
        return engine

    return run


@pytest.fixture
def engine_over(tmp_path: Path) -> Callable[[str, int], EngineStats]:
    """`_engine_over` with no kept mappings: every shard streams through windows."""
    return _engine_over(tmp_path, 0)


@pytest.fixture
def engine_kept(tmp_path: Path) -> Callable[[str, int], EngineStats]:
    """`_engine_over` with a budget larger than the data: every shard is mapped whole."""
    return _engine_over(tmp_path, 2**30)


ROW_APPS = tuple(app for app in APPS if isinstance(get_kernel(app), RowKernel))
CASES = [(app, "memory") for app in APPS] + [(app, "disk") for app in ROW_APPS]
"""Every app with the arena in memory (a memfd), and every row-emitting app again with it in
a file on disk (`NDPKIT_ROWS_DIR`), as when the rows are too large for memory."""


@pytest.mark.parametrize("app", ["kmeans", "lc", "he", "knn8-topk"])
def test_kept_shards_are_page_cache_not_the_workers_memory(
    engine_kept: Callable[[str, int], EngineStats], app: str
) -> None:
    """With the shards mapped whole and kept, the worker's own memory still does not grow
    with the data: what it keeps is exactly the shards' bytes (`mapped_bytes`)."""
    small, large = engine_kept(app, SMALL_MIB), engine_kept(app, LARGE_MIB)
    assert large.mapped_bytes == 4 * small.mapped_bytes > 0
    grown = large.rss_growth_bytes - small.rss_growth_bytes
    assert grown < SLACK_BYTES, f"{app}: {grown:,} bytes more for {LARGE_MIB} MiB"


@pytest.mark.parametrize(("app", "arena"), CASES)
def test_a_workers_memory_does_not_grow_with_the_data(
    engine_over: Callable[[str, int], EngineStats],
    app: str,
    arena: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if arena == "disk":
        rows_dir = tmp_path / "rows"
        rows_dir.mkdir()
        monkeypatch.setenv(ROWS_DIR_ENV, str(rows_dir))
    small, large = engine_over(app, SMALL_MIB), engine_over(app, LARGE_MIB)
    assert large.bytes_in >= 3 * small.bytes_in
    grown = large.rss_growth_bytes - small.rss_growth_bytes
    assert grown < SLACK_BYTES, (
        f"{app}: the worker needed {grown:,} bytes more for {LARGE_MIB} MiB than for "
        f"{SMALL_MIB} MiB ({small.rss_growth_bytes:,} → {large.rss_growth_bytes:,}); "
        f"it sent {large.bytes_out:,} bytes to the host"
    )
    if arena == "disk":
        assert list((tmp_path / "rows").iterdir()) == []  # the arena file never had a name


def test_the_measure_sees_a_worker_that_keeps_its_rows(
    engine_over: Callable[[str, int], EngineStats], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without rows arenas a per-record kernel's worker merges its rows as partials before
    sending them: the test above must see that growth (24 MiB of Sobel images more)."""
    monkeypatch.setattr(runtime_executor, "ARENAS", False)
    small, large = engine_over("sobel", SMALL_MIB), engine_over("sobel", LARGE_MIB)
    assert large.shared_growth_bytes == 0
    assert large.rss_growth_bytes - small.rss_growth_bytes > 16 * 2**20
