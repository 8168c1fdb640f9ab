"""One TPC-H data set at SF 0.01 for the whole directory (tpchgen-cli takes ~1 s per run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ndpkit.tpc import generate_tpch

SMALL_SF = 0.01


@pytest.fixture(scope="session")
def tpch_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("tpch-sf0.01")
    generate_tpch(SMALL_SF, directory)
    return directory
