"""The model's inputs built in Python are checked where they are made: a misspelt option
(`Options(units="Decimal")`) or split (`Configuration(split="Host")`) was kept and the run
silently followed the other convention, an engine listed twice in `active` was counted
twice (a faster run and more energy), and `estimate("rfns", he)` ended in "'str' object
has no attribute 'engines'"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ndpkit.errors import SpecError
from ndpkit.hw import load_platform
from ndpkit.model import (
    FULL_GEAR,
    Configuration,
    Options,
    engine_bandwidth,
    estimate,
    full_ndp_time_s,
    pipeline,
    price,
)
from ndpkit.profile import load_profile

RFNS = load_platform("rfns")
HE = load_profile("he")

MISSPELT: list[tuple[str, Any]] = [
    ("energy_form", "a"),
    ("units", "Decimal"),
    ("wall_times", "Printed"),
    ("time_basis", "pipe"),
    ("placement", "static"),
    ("switch_power", "x"),
    ("rounding", 3),
    ("ru_time", None),
    ("mux_port_cap", "yes"),
    ("mux_port_cap", 1),
]


@pytest.mark.parametrize(("field", "value"), MISSPELT, ids=[f"{f}={v!r}" for f, v in MISSPELT])
def test_an_option_that_is_not_one_of_its_choices_is_refused(field: str, value: Any) -> None:
    with pytest.raises(SpecError) as e:
        Options(**{field: value})
    assert e.value.field == field
    assert repr(value) in str(e.value)


def test_options_from_a_mapping_still_name_their_source() -> None:
    with pytest.raises(SpecError, match=r"^-o: units: must be one of binary, decimal"):
        Options.from_mapping({"units": "Decimal"}, source="-o")
    assert Options.from_mapping({"units": "decimal"}).units == "decimal"


def test_a_misspelt_split_is_refused() -> None:
    with pytest.raises(SpecError) as e:
        Configuration(split="Host")  # type: ignore[arg-type]
    assert e.value.field == "split"


def test_an_engine_listed_twice_is_refused() -> None:
    """Counted twice, 18 engines listed twice ran as 36 (1.63 s for 2.31 s) and drew more
    energy."""
    active = tuple(range(0, 36, 2))
    route = tuple(ssd - ssd % 2 for ssd in range(36))
    once = estimate(RFNS, load_profile("knn2"), Configuration(active=active, route=route))
    assert once.time_s > 0
    with pytest.raises(SpecError) as e:
        Configuration(active=active * 2, route=route)
    assert e.value.field == "active"


BAD_IDS: list[tuple[str, Any]] = [
    ("active", "012"),
    ("active", 3),
    ("active", [True, 1]),
    ("active", [1.5]),
    ("route", [0.0] * 36),
    ("channels", 16),
]


@pytest.mark.parametrize(("field", "value"), BAD_IDS, ids=[f"{f}={v!r}"[:30] for f, v in BAD_IDS])
def test_ids_that_are_not_integers_are_refused(field: str, value: Any) -> None:
    with pytest.raises(SpecError) as e:
        Configuration(**{field: value})
    assert e.value.field == field


def test_ids_given_as_a_list_or_an_array_are_kept_as_a_tuple_of_int() -> None:
    """A list left the frozen configuration unhashable; numpy's integers are ids too."""
    config = Configuration(active=[0, 2], route=np.array([0, 0, 2, 2]))
    assert config.active == (0, 2)
    assert config.route == (0, 0, 2, 2)
    assert all(type(i) is int for i in config.route)
    assert hash(config) == hash(Configuration(active=(0, 2), route=(0, 0, 2, 2)))


WRONG_KIND: list[tuple[str, tuple[Any, ...]]] = [
    ("platform", ("rfns", HE)),
    ("platform", (None, HE)),
    ("profile", (RFNS, "he")),
    ("config", (RFNS, HE, "device")),
    ("options", (RFNS, HE, FULL_GEAR, {"units": "decimal"})),
]


@pytest.mark.parametrize(
    ("field", "args"), WRONG_KIND, ids=[f"{w[0]}-{i}" for i, w in enumerate(WRONG_KIND)]
)
def test_estimate_names_an_argument_of_the_wrong_kind(field: str, args: tuple[Any, ...]) -> None:
    with pytest.raises(SpecError) as e:
        estimate(*args)
    assert e.value.field == field


@pytest.mark.parametrize("value", [np.True_, np.False_], ids=["np.True_", "np.False_"])
def test_a_flag_may_be_numpys_bool(value: Any) -> None:
    """Accepted before the check (as `errors.true_or_false` accepts it), then refused as
    "must be true or false, got np.True_"; kept as a bool."""
    options = Options(mux_port_cap=value)
    assert options.mux_port_cap is bool(value)
    assert options.with_(units="decimal").mux_port_cap is bool(value)


OPTIONS = Options()
STATE_TIMES = estimate(RFNS, HE).state_times
EXPORTED_WRONG_KIND: list[tuple[str, str, Callable[[], object]]] = [
    ("pipeline", "platform", lambda: pipeline("rfns", HE, FULL_GEAR, OPTIONS)),  # type: ignore[arg-type]
    ("pipeline", "profile", lambda: pipeline(RFNS, "he", FULL_GEAR, OPTIONS)),  # type: ignore[arg-type]
    ("pipeline", "config", lambda: pipeline(RFNS, HE, "device", OPTIONS)),  # type: ignore[arg-type]
    ("pipeline", "options", lambda: pipeline(RFNS, HE, FULL_GEAR, None)),  # type: ignore[arg-type]
    ("engine_bandwidth", "platform", lambda: engine_bandwidth("rfns", HE)),  # type: ignore[arg-type]
    ("engine_bandwidth", "profile", lambda: engine_bandwidth(RFNS, "he")),  # type: ignore[arg-type]
    ("full_ndp_time_s", "profile", lambda: full_ndp_time_s(RFNS, "he", OPTIONS)),  # type: ignore[arg-type]
    ("full_ndp_time_s", "options", lambda: full_ndp_time_s(RFNS, HE, None)),  # type: ignore[arg-type]
    ("price", "platform", lambda: price("rfns", "he", STATE_TIMES, OPTIONS)),  # type: ignore[arg-type]
    ("price", "app", lambda: price(RFNS, HE, STATE_TIMES, OPTIONS)),  # type: ignore[arg-type]
    ("price", "times", lambda: price(RFNS, "he", {"host": {}}, OPTIONS)),  # type: ignore[arg-type]
    ("price", "options", lambda: price(RFNS, "he", STATE_TIMES, None)),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(
    ("function", "field", "call"),
    EXPORTED_WRONG_KIND,
    ids=[f"{w[0]}-{w[1]}" for w in EXPORTED_WRONG_KIND],
)
def test_the_exported_models_name_an_argument_of_the_wrong_kind(
    function: str, field: str, call: Callable[[], object]
) -> None:
    """ndpkit.model's other exported functions, as `estimate`: a preset's name for the
    platform, a profile's name or None for the options ended in "'str' object has no
    attribute 'devices'" ('engines', 'data_bytes', 'host'; 'NoneType' … 'wall_times')."""
    with pytest.raises(SpecError) as e:
        call()
    assert e.value.field == field, function
    assert pipeline(RFNS, HE, FULL_GEAR, OPTIONS).bottleneck == estimate(RFNS, HE).bottleneck
