"""`ndpkit.nascent`'s lazily exported names stay what they are whatever was imported first,
and docs/nascent2.md's worked example runs as printed."""

from __future__ import annotations

import pkgutil
import re
import subprocess
import sys
from importlib import import_module
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

import ndpkit.nascent

DOC = Path(__file__).resolve().parents[2] / "docs" / "nascent2.md"


def _submodules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(ndpkit.nascent.__path__))


def test_no_submodule_is_named_like_an_export() -> None:
    # Importing a submodule binds it on the package, where it would hide the export.
    assert not set(_submodules()) & set(ndpkit.nascent.__all__)


def test_exports_survive_importing_every_submodule_first() -> None:
    for name in _submodules():
        import_module(f"ndpkit.nascent.{name}")
    for name in ndpkit.nascent.__all__:
        assert not isinstance(getattr(ndpkit.nascent, name), ModuleType), name
    assert callable(ndpkit.nascent.shuffle)
    assert ndpkit.nascent.shuffle.__module__ == "ndpkit.nascent.shuffler"


def test_shuffle_after_filesort_in_a_fresh_interpreter() -> None:
    # The order that broke: `filesort` imports the kernel module before the name is asked for.
    code = (
        "import ndpkit.nascent.filesort\n"
        "from ndpkit.nascent import shuffle\n"
        "assert callable(shuffle), type(shuffle)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _worked_example() -> str:
    text = DOC.read_text("utf-8")
    section = text.split("\n## Worked example\n", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None
    return match.group(1)


def test_docs_worked_example_runs_after_the_submodules() -> None:
    import_module("ndpkit.nascent.filesort")
    import_module("ndpkit.nascent.tablefile")
    scope: dict[str, Any] = {}
    exec(_worked_example(), scope)  # the page's code, as a reader would paste it
    assert scope["r"].indices.tolist() == [1, 3, 0, 4, 2]
    assert scope["r"].counts.compare_swaps == 24
    assert scope["s"].columns[2].tolist() == [b"a", b"b", b"c", b"d", b"e"]
    assert scope["s"].counts.reads.random_accesses == 5
    assert scope["d"].values() == [b"BRAZIL", b"USA"]
    assert (scope["d"].counts.full_flushes, scope["d"].counts.partial_flushes) == (1, 1)
    geometry = scope["geometry"]()
    assert (geometry.sequence_brams, geometry.index_brams, geometry.capacity) == (
        128,
        128,
        131_072,
    )
    sorted_ = scope["generic_sort"](np.array(["USA", "Croatia", "Ghana", "Iran", "Brazil"]))
    assert list(sorted_.values) == ["Brazil", "Croatia", "Ghana", "Iran", "USA"]
