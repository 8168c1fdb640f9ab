"""`ndpkit sort --format json` has one schema: every stage is in `seconds`, 0.0 when the run
skipped it, whatever the devices, the merge or the engine (docs/sort.md, "The report")."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

STAGES = ["read", "keys", "argsort", "merge", "gather", "write"]


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "in.parquet"
    modes = ["RAIL", "AIR", None, "SHIP", "AIR", "MAIL", None, "RAIL"] * 50
    price = [(i * 7919) % 1000 for i in range(len(modes))]
    pq.write_table(pa.table({"rid": list(range(len(modes))), "mode": modes, "price": price}), path)
    return path


# One device with few distinct keys, or keys already in order, skips the argsort's merge;
# --no-merge skips it too; several merged devices run it.
RUNS = {
    "1 device, filters": ["--by", "mode"],
    "1 device, in order": ["--by", "rid"],
    "1 device, gather": ["--by", "price"],
    "1 device, nascent2": ["--by", "price", "--engine", "nascent2"],
    "3 devices merged": ["--by", "price", "--devices", "3"],
    "3 devices unmerged": ["--by", "price", "--devices", "3", "--no-merge"],
}


def test_json_stage_keys_are_the_same_for_every_run(ndpkit, table: Path, tmp_path: Path) -> None:
    keys: dict[str, list[str]] = {}
    for i, (name, args) in enumerate(RUNS.items()):
        result = ndpkit(
            "sort", str(table), *args, "--out", str(tmp_path / f"o{i}"), "--format", "json"
        )
        assert result.returncode == 0, result.stderr
        keys[name] = list(json.loads(result.stdout)["seconds"])
    assert all(k == STAGES for k in keys.values()), keys


def test_a_skipped_merge_reports_zero(ndpkit, table: Path, tmp_path: Path) -> None:
    result = ndpkit(
        "sort", str(table), "--by", "mode", "--out", str(tmp_path / "o"), "--format", "json"
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["seconds"]["merge"] == 0.0


def test_text_table_lists_every_stage_then_the_total(ndpkit, table: Path, tmp_path: Path) -> None:
    result = ndpkit("sort", str(table), "--by", "mode", "--out", str(tmp_path / "o.parquet"))
    assert result.returncode == 0, result.stderr
    stage_table = result.stdout.split("Seconds per stage", 1)[1]
    cells = [line.strip("│ ").split("│")[0].strip() for line in stage_table.splitlines()]
    rows = [c for c in cells if c in [*STAGES, "total"]]
    assert rows == [*STAGES, "total"], result.stdout
