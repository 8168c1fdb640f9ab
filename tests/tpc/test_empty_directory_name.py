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


@pytest.mark.parametrize("seed", [True, 1.5, "7", -1], ids=["bool", "float", "str", "negative"])
def test_a_tpcc_seed_that_is_not_a_whole_number_is_refused(seed: object, tmp_path: Path) -> None:
    """True was taken as seed 1, and 1.5 or "7" failed in numpy's default_rng with its own
    TypeError, after the output directory was made."""
    out = tmp_path / "out"
    with pytest.raises(SpecError, match=r"^seed: must be an integer ≥ 0, got"):
        generate_tpcc(0.001, out, seed=seed)  # type: ignore[arg-type]
    assert not out.exists()
