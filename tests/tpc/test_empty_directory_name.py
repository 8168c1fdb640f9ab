"""An empty directory name given to `generate_tpch`, `generate_tpcc` or `analyse` is an
error: `Path("")` is the current directory, so a variable left unset wrote the tables into
(or read them from) wherever the program ran, where the command line refuses `--out ""`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ndpkit.errors import SpecError
from ndpkit.tpc import generate_tpcc, generate_tpch
from ndpkit.tpc.analysis import analyse


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: generate_tpch(0.001, "", ["region"]), "out"),
        (lambda: generate_tpcc(0.001, ""), "out"),
        (lambda: analyse(0.01, ""), "data_dir"),
    ],
    ids=["tpch", "tpcc", "analyse"],
)
def test_an_empty_directory_name_is_refused_and_nothing_is_written(
    call: Callable[[], object], field: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SpecError, match=f"{field}: is empty; give a directory"):
        call()
    assert list(tmp_path.iterdir()) == []
