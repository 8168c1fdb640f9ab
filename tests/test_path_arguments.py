"""A path argument that is not a path (a number, None, bytes) is a SpecError naming the
argument, where it was a TypeError from pathlib or os.fspath deep inside; and a list
argument given one string is not iterated letter by letter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ndpkit.errors import SpecError
from ndpkit.hw import load_platform
from ndpkit.kernels import expand
from ndpkit.nascent import read_table_file, sort_table_file, write_table_file
from ndpkit.runtime import profiling
from ndpkit.tpc import generate_tpcc, generate_tpch

CALLS: list[tuple[str, str, Callable[[Any], object]]] = [
    ("load_platform", "name_or_path", load_platform),
    ("profiling.load", "path", profiling.load),
    ("profiling.save", "path", lambda p: profiling.save([], p)),
    ("read_table_file", "path", read_table_file),
    ("write_table_file", "path", lambda p: write_table_file(None, "k", p)),
    ("sort_table_file", "path", sort_table_file),
    ("sort_table_file out", "out", lambda p: sort_table_file("absent.nsc", out=p)),
    ("generate_tpch", "out", lambda p: generate_tpch(0.01, p)),
    ("generate_tpcc", "out", lambda p: generate_tpcc(0.01, p)),
]


CASES = [
    (name, field, call, value)
    for name, field, call in CALLS
    for value in (3, None, b"x")
    if not (value is None and name == "sort_table_file out")  # None: no output, as documented
]


@pytest.mark.parametrize(
    ("name", "field", "call", "value"), CASES, ids=[f"{c[0]}-{c[3]!r}" for c in CASES]
)
def test_a_path_argument_of_the_wrong_kind_is_named(
    name: str, field: str, call: Callable[[Any], object], value: object
) -> None:
    with pytest.raises(SpecError) as e:
        call(value)
    assert e.value.field == field, name


def test_expand_refuses_one_string_for_a_list() -> None:
    with pytest.raises(SpecError, match=r"names: .*give \['knn'\]"):
        expand("knn")  # type: ignore[arg-type]
    assert expand(["knn", "lc"]) == ["knn2", "knn6", "knn8", "lc"]
