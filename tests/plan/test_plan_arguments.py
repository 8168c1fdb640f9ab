"""The planners' helpers name an argument of the wrong kind or out of range where they took
it as given: `activate(8.0, 2, 5)` made a Mapping of 8.0 devices, `activate(8, 2, 5.0)`
ended in a TypeError from a slice, `minimum_engines(36, 0)` divided by zero,
`minimum_engines(-36, 2)` was -18 engines, `engines_allowed(13.5, 36, 2)` 13.5 engines, and
`compare_splits("rfns", …)` or one profile for the list ended in "… has no attribute", as
did `required_engines("x")` and `configuration_of("m", 36)`; `configuration_of(mapping,
"36")` was taken as a configuration of part gear."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ndpkit.errors import ModelError, SpecError
from ndpkit.hw import load_platform
from ndpkit.plan import (
    activate,
    compare_splits,
    configuration_of,
    engines_allowed,
    minimum_engines,
    required_engines,
)
from ndpkit.profile import load_profile

RFNS = load_platform("rfns")
HE = load_profile("he")

WRONG_KIND: list[tuple[str, str, Callable[[], object]]] = [
    ("activate devices", "devices", lambda: activate(8.0, 2, 5)),  # type: ignore[arg-type]
    ("activate module", "module_size", lambda: activate(8, "2", 5)),  # type: ignore[arg-type]
    ("activate engines", "engines_on", lambda: activate(8, 2, 5.0)),  # type: ignore[arg-type]
    ("activate bool", "engines_on", lambda: activate(8, 2, True)),
    ("minimum devices", "devices", lambda: minimum_engines(36.0, 2)),  # type: ignore[arg-type]
    ("allowed required", "required", lambda: engines_allowed(13.5, 36, 2)),  # type: ignore[arg-type]
    ("splits platform", "platform", lambda: compare_splits("rfns", [HE])),  # type: ignore[arg-type]
    ("splits one profile", "profiles", lambda: compare_splits(RFNS, HE)),  # type: ignore[arg-type]
    ("splits a name", "profiles", lambda: compare_splits(RFNS, ["he"])),  # type: ignore[list-item]
    ("splits options", "options", lambda: compare_splits(RFNS, [HE], {})),  # type: ignore[arg-type]
    ("required a name", "full", lambda: required_engines("x")),  # type: ignore[arg-type]
    ("required none", "full", lambda: required_engines(None)),  # type: ignore[arg-type]
    ("configuration a name", "mapping", lambda: configuration_of("m", 36)),  # type: ignore[arg-type]
    ("configuration str n", "devices", lambda: configuration_of(activate(36, 2, 18), "36")),  # type: ignore[arg-type]
    ("configuration other n", "mapping", lambda: configuration_of(activate(8, 2, 4), 36)),
]


@pytest.mark.parametrize(("name", "field", "call"), WRONG_KIND, ids=[w[0] for w in WRONG_KIND])
def test_an_argument_of_the_wrong_kind_is_named(
    name: str, field: str, call: Callable[[], object]
) -> None:
    with pytest.raises(SpecError) as e:
        call()
    assert e.value.field == field, name


@pytest.mark.parametrize(("devices", "k"), [(36, 0), (-36, 2), (4, 5)])
def test_a_layer_out_of_range_is_a_model_error(devices: int, k: int) -> None:
    with pytest.raises(ModelError, match=rf"mux{k} needs 1 <= k <= devices \({devices}\)"):
        minimum_engines(devices, k)
    with pytest.raises(ModelError, match=rf"mux{k} needs 1 <= k <= devices"):
        engines_allowed(1, devices, k)


def test_the_helpers_still_answer_integers() -> None:
    assert minimum_engines(36, 2) == 18
    assert engines_allowed(13, 36, 2) == 18
    assert activate(8, 2, 5).active == (0, 1, 2, 4, 6)
    chosen: Any = compare_splits(RFNS, (HE,)).chosen
    assert chosen == "he"
