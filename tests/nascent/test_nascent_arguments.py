"""The kernels' integer parameters refuse a float or a bool with a SpecError naming them:
`geometry(p=8.0)` and `decode(…, l_max=8.0)` ended in "unsupported operand type(s) for &",
`expected_counts(1.5)` in a TypeError from the binding, `expected_counts(True)` counted one
key; and `load_devices(3)` ended in pathlib's TypeError."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from ndpkit.errors import SpecError
from ndpkit.nascent import argsort, decode, expected_counts, geometry
from ndpkit.nascent.model import load_devices

KEYS = np.array([3, 1, 2], dtype=np.uint32)

CALLS: list[tuple[str, str, Callable[[], object]]] = [
    ("geometry p", "p", lambda: geometry(p=8.0)),  # type: ignore[arg-type]
    ("geometry l", "l", lambda: geometry(l=8.0)),  # type: ignore[arg-type]
    ("argsort p", "p", lambda: argsort(KEYS, p=8.0)),  # type: ignore[arg-type]
    ("argsort merge_ways", "merge_ways", lambda: argsort(KEYS, merge_ways=2.0)),  # type: ignore[arg-type]
    ("expected_counts float", "n", lambda: expected_counts(1.5)),  # type: ignore[arg-type]
    ("expected_counts bool", "n", lambda: expected_counts(True)),
    ("expected_counts -1", "n", lambda: expected_counts(-1)),
    ("decode l_max", "l_max", lambda: decode(["a", "b"], np.array([1], np.uint8), l_max=8.0)),  # type: ignore[arg-type]
    ("load_devices", "path", lambda: load_devices(3)),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("name", "field", "call"), CALLS, ids=[c[0] for c in CALLS])
def test_a_parameter_of_the_wrong_kind_is_named(
    name: str, field: str, call: Callable[[], object]
) -> None:
    with pytest.raises(SpecError) as e:
        call()
    assert e.value.field == field, name


def test_integers_still_work() -> None:
    assert geometry(p=8).p == 8
    assert expected_counts(5).elements == 5
    assert decode(["a", "b"], np.array([1], np.uint8), l_max=8).values() == [b"b"]
