"""`simulate` and `check_chunks` name an argument of the wrong kind: SimOptions given in the
model options' place (`simulate(p, a, config, SimOptions(…))`, the fourth positional being
`options`) ended in "'SimOptions' object has no attribute 'mux_port_cap'", a preset's name
for the platform in "'str' object has no attribute 'is_in_storage'"."""

from __future__ import annotations

from typing import Any

import pytest

from ndpkit.errors import ModelError, SpecError
from ndpkit.hw import load_platform
from ndpkit.model import FULL_GEAR, Configuration, Options, estimate
from ndpkit.plan import plan
from ndpkit.profile import load_profile
from ndpkit.sim import SimOptions, matching_basis, simulate
from ndpkit.sim.simulation import check_chunks
from ndpkit.sim.sweep import configuration

RFNS = load_platform("rfns")
HE = load_profile("he")

WRONG: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("platform", ("rfns", HE), {}),
    ("profile", (RFNS, "he"), {}),
    ("config", (RFNS, HE, 18), {}),
    ("config", (RFNS, HE, None), {}),
    ("options", (RFNS, HE, FULL_GEAR, SimOptions(chunk_bytes=2**22)), {}),
    ("sim", (RFNS, HE), {"sim": Options()}),
    ("sim", (RFNS, HE), {"sim": {"chunk_bytes": 2**22}}),
]


@pytest.mark.parametrize(("field", "args", "kwargs"), WRONG, ids=[w[0] for w in WRONG])
@pytest.mark.parametrize("function", [simulate, check_chunks], ids=["simulate", "check_chunks"])
def test_an_argument_of_the_wrong_kind_is_named(
    function: Any, field: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    with pytest.raises(SpecError) as e:
        function(*args, **kwargs)
    assert e.value.field == field


def test_none_still_means_the_defaults() -> None:
    s = simulate(RFNS, HE, FULL_GEAR, None, None)
    assert s.sim_options == SimOptions() and s.options == Options()


@pytest.mark.parametrize("host_mode", ["auto", "Stream", "x", None])
def test_matching_basis_refuses_a_mode_that_is_not_a_runs(host_mode: Any) -> None:
    """Anything but "after" was the pipeline basis: a typo, and "auto", which a run
    resolves to after or stream."""
    with pytest.raises(SpecError) as e:
        matching_basis(host_mode)
    assert e.value.field == "host_mode"
    assert (matching_basis("after"), matching_basis("stream")) == ("staged", "pipeline")


def _of_another_platform(kind: str) -> Any:
    """rfns's 18-engine mapping (36 routes), as a Configuration and as a Plan."""
    if kind == "plan":
        return plan(RFNS, HE)
    return configuration(RFNS, 18)


@pytest.mark.parametrize("kind", ["configuration", "plan"])
@pytest.mark.parametrize("check", [simulate, check_chunks], ids=["simulate", "check_chunks"])
def test_a_mapping_for_another_platform_is_the_models_error(kind: str, check: Any) -> None:
    """rfns's 36 routes on sans's one SSD: `estimate` said so (a ModelError), `simulate`
    raised IndexError from building the simulator's spec. A Plan names its platform, and is
    refused for another before its routes are read (`test_a_plan_for_another_run_…`)."""
    config = _of_another_platform(kind)
    sans = load_platform("sans")
    with pytest.raises(ModelError, match="route must name an engine for each of the 1 SSDs"):
        estimate(sans, HE, config.planned.config if kind == "plan" else config)
    if kind == "plan":
        with pytest.raises(SpecError, match=r"^config: a Plan for he on rfns, given for he on"):
            check(sans, HE, config)
        config = config.planned.config
    with pytest.raises(ModelError, match="route must name an engine for each of the 1 SSDs"):
        check(sans, HE, config)


@pytest.mark.parametrize("check", [simulate, check_chunks], ids=["simulate", "check_chunks"])
def test_a_plan_for_another_run_is_refused(check: Any) -> None:
    """rfns's plan for HE on RANS (36 SSDs too) or for LC on RFNS ran without a word: the
    other platform's mapping and options, or a mapping chosen for another app's bottleneck,
    under this run's labels. Its `planned.config` is taken as any configuration is."""
    he_on_rfns = plan(RFNS, HE)
    for platform, profile in ((load_platform("rans"), HE), (RFNS, load_profile("lc"))):
        with pytest.raises(SpecError, match=r"a Plan for he on rfns, given for \w+ on \w+: "):
            check(platform, profile, he_on_rfns)
    check_chunks(load_platform("rans"), HE, he_on_rfns.planned.config)
    assert simulate(RFNS, HE, he_on_rfns).config == he_on_rfns.planned.config


def test_a_route_outside_its_module_is_refused_before_the_run() -> None:
    """The model refused it, but only once the whole simulation had run."""
    wrong = Configuration(active=(0, 2), route=(0,) * 18 + (2,) * 18)
    with pytest.raises(ModelError, match="outside its mux2 module"):
        check_chunks(load_platform("rans"), HE, wrong)


def test_check_chunks_takes_a_plan_as_simulate_does() -> None:
    """Its arguments are checked as simulate's (a Plan passes), but it then read the Plan
    as a Configuration: "'Plan' object has no attribute 'split'"."""
    assert check_chunks(RFNS, HE, plan(RFNS, HE)) is None
