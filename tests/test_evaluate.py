"""`ndpkit.evaluate` in process: data sets are verified by streaming (never read whole),
profiled on a bounded sample, and a wrong answer fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ndpkit import evaluate as ev
from ndpkit.kernels import KernelMismatchError
from ndpkit.kernels.lc import LinearClassifier
from ndpkit.runtime import Dataset, generate_dataset


@pytest.fixture
def lc_data(tmp_path: Path) -> Dataset:
    return generate_dataset(
        "lc", 1 << 20, 2, tmp_path / "lc", seed=9, shard_bytes=300_000, shard_format="parquet"
    )


def test_a_data_set_is_verified_without_reading_it_whole(
    lc_data: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(self: Dataset) -> np.ndarray:
        raise AssertionError("read the whole data set into memory")

    monkeypatch.setattr(Dataset, "read_all", refuse)
    (run,) = ev.evaluate(data=lc_data.path, platforms=["cns"], workers=1, size_bytes=100_000)
    assert run.verified and run.verification.method == "per chunk"
    assert run.verification.records == lc_data.records
    assert run.input_bytes == lc_data.total_bytes
    # Profiling measured a bounded sample, not the data set.
    assert run.measurement.input_bytes <= 100_000 < lc_data.total_bytes


def test_a_wrong_answer_on_a_data_set_fails(
    lc_data: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host part runs in this process: flip one label of its answer."""
    host = LinearClassifier.host

    def wrong_host(self: LinearClassifier, merged: Any, state: Any) -> tuple[np.ndarray, bool]:
        labels, done = host(self, merged, state)
        labels = labels.copy()
        labels[len(labels) // 2 + 1] ^= 1
        return labels, done

    monkeypatch.setattr(LinearClassifier, "host", wrong_host)
    with pytest.raises(KernelMismatchError, match="lc: 1 labels differ"):
        ev.evaluate(data=lc_data.path, platforms=["cns"], workers=1, size_bytes=100_000)


def test_knn_runs_and_compares_both_splits() -> None:
    (run,) = ev.evaluate(["knn2"], ["rfns", "cns"], size_bytes=1 << 19)
    assert [o.app for o in run.other_splits] == ["knn2-topk"]
    assert set(run.splits) == {"rfns", "cns"}
    assert run.splits["rfns"].chosen in ("knn2", "knn2-topk")
    tables = {t.name: t for t in ev.tables([run])}
    rows = tables["splits"].rows
    assert [(r["platform"], r["split"]) for r in rows] == [
        ("rfns", "knn2"),
        ("rfns", "knn2-topk"),
        ("cns", "knn2"),
        ("cns", "knn2-topk"),
    ]
    assert sum(r["picked"] == "✓" for r in rows) == 1  # one on RFNS, none on CNS
    assert [r["app"] for r in tables["measured"].rows] == ["knn2", "knn2-topk"]
    doc = ev.document([run])["apps"][0]
    assert doc["splits"]["rfns"]["chosen"] == run.splits["rfns"].chosen


def test_apps_without_other_splits_have_no_split_table() -> None:
    (run,) = ev.evaluate(["lc"], ["cns"], size_bytes=1 << 16)
    assert run.other_splits == [] and run.splits == {}
    assert [t.name for t in ev.tables([run])] == ["measured", "predicted"]
    assert "splits" not in ev.document([run])["apps"][0]
