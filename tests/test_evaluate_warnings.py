"""`ndpkit evaluate` warns when a verified K-Means run still ended with empty clusters."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ndpkit.evaluate import _warnings
from ndpkit.kernels import get_kernel
from ndpkit.kernels.kmeans import KMeansResult


def test_no_warning_when_every_cluster_has_points() -> None:
    result = KMeansResult(np.zeros((8, 8)), 3, True, counts=np.ones(8, dtype=np.int64))
    assert _warnings(get_kernel("kmeans"), result) == ()


def test_empty_clusters_are_named() -> None:
    counts = np.array([5, 0, 3, 0, 1, 1, 1, 1], dtype=np.int64)
    result = KMeansResult(np.zeros((8, 8)), 3, True, counts=counts)
    (warning,) = _warnings(get_kernel("kmeans"), result)
    assert warning == (
        "kmeans: 2 of the clusters ended empty (clusters 1, 3); an empty cluster keeps the "
        "centre it had before it emptied (its starting one if it never held a point)"
    )


def test_one_empty_cluster_is_named_in_the_singular() -> None:
    counts = np.array([5, 0, 3, 1, 1, 1, 1, 1], dtype=np.int64)
    result = KMeansResult(np.zeros((8, 8)), 3, True, counts=counts)
    (warning,) = _warnings(get_kernel("kmeans"), result)
    assert warning.startswith("kmeans: 1 of the clusters ended empty (cluster 1); ")


def test_cli_warns_on_data_with_two_distinct_points(ndpkit, tmp_path: Path) -> None:
    # Two distinct points cannot fill 8 clusters: 6 must end empty, and the run still
    # matches its reference, so only the warning tells the user.
    points = np.zeros((50_000, 8), dtype=np.float32)
    points[::2] = 1.0
    np.save(tmp_path / "two.npy", points)
    made = ndpkit(
        "data", "import", str(tmp_path / "two.npy"), "--app", "kmeans", "--devices", "2",
        "--out", str(tmp_path / "two"),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    run = ndpkit("evaluate", "--data", str(tmp_path / "two"), "--platforms", "cns", "-f", "json")
    assert run.returncode == 0, run.stderr
    (app,) = json.loads(run.stdout)["apps"]
    assert app["verified"] is True
    assert len(app["warnings"]) == 1 and "6 of the clusters ended empty" in app["warnings"][0]
    assert "warning: kmeans: 6 of the clusters ended empty" in run.stderr
