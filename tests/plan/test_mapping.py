"""mux-k engine activation and SSD routing (spec §2.6, §6.3, Table 10)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpkit.errors import ModelError
from ndpkit.plan import activate, minimum_engines

SETTINGS = settings(max_examples=50, deadline=None, database=None)

# Spec §9.4 (paper Table 10), n = 8 NDPEs.
TABLE_10 = {
    4: (0, 2, 4, 6),
    5: (0, 1, 2, 4, 6),
    6: (0, 1, 2, 3, 4, 6),
    7: (0, 1, 2, 3, 4, 5, 6),
    8: (0, 1, 2, 3, 4, 5, 6, 7),
}


def mux2_configure(n: int, nane_mux2: int):
    """The spec's reference policy (§6.3), verbatim."""
    active = list(range(0, n, 2))
    for i in range(1, n, 2):
        if len(active) >= nane_mux2:
            break
        active.append(i)
    active_set = set(active)
    route = {ssd: (ssd if ssd in active_set else ssd - 1) for ssd in range(n)}
    select = {j: (1 if (2 * j + 1) in active_set else 0) for j in range(n // 2)}
    return active_set, route, select


@pytest.mark.parametrize(("engines_on", "expected"), sorted(TABLE_10.items()))
def test_table_10(engines_on, expected):
    mapping = activate(8, 2, engines_on)
    assert mapping.active == expected, f"Table 10, n=8, {engines_on} NDPEs"
    assert len(mapping.active) == engines_on


def test_routing_example_n8_five_engines():
    """§6.3: SSD0→0, SSD1→1, SSD2→2, SSD3→2, SSD4→4, SSD5→4, SSD6→6, SSD7→6."""
    mapping = activate(8, 2, 5)
    assert mapping.route == (0, 1, 2, 2, 4, 4, 6, 6)
    assert mapping.select == {0: 1, 1: 0, 2: 0, 3: 0}
    assert mapping.shards_per_engine() == {0: 1, 1: 1, 2: 2, 4: 2, 6: 2}


@pytest.mark.parametrize("n", [2, 4, 8, 18, 36, 64])
def test_mux2_matches_the_spec_reference_policy(n):
    for on in range(n // 2, n + 1):
        active, route, select = mux2_configure(n, on)
        mapping = activate(n, 2, on)
        assert set(mapping.active) == active, (n, on)
        assert mapping.route == tuple(route[ssd] for ssd in range(n)), (n, on)
        assert mapping.select == select, (n, on)


def test_the_36_engine_server_at_18_engines_powers_off_every_odd_engine():
    mapping = activate(36, 2, 18)
    assert mapping.active == tuple(range(0, 36, 2))
    assert mapping.route == tuple(ssd - ssd % 2 for ssd in range(36))
    assert set(mapping.shards_per_engine().values()) == {2}
    assert set(mapping.select.values()) == {0}


def test_mux1_keeps_every_engine_on_its_own_ssd():
    mapping = activate(36, 1, 36)
    assert mapping.active == tuple(range(36))
    assert mapping.route == tuple(range(36))
    assert mapping.select == {}


def test_muxn_can_run_on_one_engine():
    mapping = activate(36, 36, 1)
    assert mapping.active == (0,)
    assert mapping.route == (0,) * 36
    assert mapping.shards_per_engine() == {0: 36}


@st.composite
def layouts(draw: st.DrawFn) -> tuple[int, int, int]:
    n = draw(st.integers(1, 80))
    k = draw(st.integers(1, n))
    on = draw(st.integers(math.ceil(n / k), n))
    return n, k, on


def shard_bound(n: int, k: int, on: int) -> int:
    """Max SSDs on one engine.

    Modules get one engine each, then extra engines round by round, so every module holds
    at least min(size, on // modules) engines; a module of size <= k with c engines spread
    at positions floor(i·size/c) gives each at most ceil(size / c) <= ceil(k / c) SSDs.
    This holds for uneven (smaller last) modules too.
    """
    return math.ceil(k / (on // math.ceil(n / k)))


@SETTINGS
@given(layouts())
def test_mapping_invariants(layout):
    n, k, on = layout
    mapping = activate(n, k, on)
    active = set(mapping.active)
    assert len(mapping.active) == on == len(active), "engines_on engines, no duplicates"
    assert list(mapping.active) == sorted(active)
    assert all(0 <= e < n for e in active)
    assert len(mapping.route) == n
    for ssd, engine in enumerate(mapping.route):
        assert engine in active, f"SSD {ssd} routed to engine {engine}, which is off"
        assert ssd // k == engine // k, f"SSD {ssd} left its module for engine {engine}"
        assert engine <= ssd, f"SSD {ssd} routed right, to engine {engine}"
        if ssd in active:
            assert engine == ssd, f"SSD {ssd} has its own engine on but goes to {engine}"
    assert all(module * k in active for module in range(math.ceil(n / k))), (
        "engine 0 of each module is always on"
    )
    loads = mapping.shards_per_engine()
    assert set(loads) == active
    assert sum(loads.values()) == n
    assert min(loads.values()) >= 1, "an active engine reads at least its own SSD"
    assert max(loads.values()) <= shard_bound(n, k, on)


@SETTINGS
@given(st.integers(1, 80), st.data())
def test_mux2_activation_is_nested(n, data):
    on = data.draw(st.integers(minimum_engines(n, 2), n - 1)) if n > 1 else None
    if on is None:
        assert activate(1, 1, 1).active == (0,)
        return
    smaller, larger = set(activate(n, 2, on).active), set(activate(n, 2, on + 1).active)
    assert smaller < larger
    assert len(larger - smaller) == 1


@pytest.mark.parametrize("n", [8, 36])
def test_mux2_extra_engines_are_odd_and_ascending(n):
    previous = set(activate(n, 2, n // 2).active)
    assert previous == set(range(0, n, 2))
    added = []
    for on in range(n // 2 + 1, n + 1):
        current = set(activate(n, 2, on).active)
        (new,) = current - previous
        added.append(new)
        previous = current
    assert added == list(range(1, n, 2))


def test_minimum_engines_is_one_per_module():
    assert minimum_engines(36, 2) == 18
    assert minimum_engines(36, 1) == 36
    assert minimum_engines(36, 36) == 1
    assert minimum_engines(35, 2) == 18
    assert minimum_engines(36, 5) == 8


@pytest.mark.parametrize(
    ("devices", "k", "engines_on"),
    [
        (8, 2, 3),  # below n/2
        (8, 2, 9),  # above n
        (8, 2, 0),
        (36, 2, 17),
        (36, 3, 11),  # below ceil(36/3)
        (36, 1, 35),  # mux1 cannot switch any engine off
        (8, 9, 1),  # module wider than the server
        (8, 0, 4),  # no module size
        (0, 1, 0),  # no devices
    ],
)
def test_invalid_activation_raises_model_error(devices, k, engines_on):
    with pytest.raises(ModelError):
        activate(devices, k, engines_on)


@SETTINGS
@given(st.integers(1, 80), st.data())
def test_out_of_range_engine_counts_raise(n, data):
    k = data.draw(st.integers(1, n))
    low = math.ceil(n / k)
    bad = data.draw(st.one_of(st.integers(-5, low - 1), st.integers(n + 1, n + 20)))
    with pytest.raises(ModelError):
        activate(n, k, bad)


@SETTINGS
@given(layouts())
def test_every_ssd_goes_to_the_nearest_engine_on_at_or_left_of_it(layout):
    n, k, on = layout
    mapping = activate(n, k, on)
    active = set(mapping.active)
    for ssd, engine in enumerate(mapping.route):
        module_first = ssd - ssd % k
        assert engine == max(e for e in range(module_first, ssd + 1) if e in active)


def test_the_engines_on_are_spread_evenly_inside_a_module():
    # a module of 8 with 3 engines: positions floor(i*8/3) = 0, 2, 5
    assert activate(8, 8, 3).active == (0, 2, 5)
    assert activate(8, 8, 3).route == (0, 0, 2, 2, 2, 5, 5, 5)
    # 10 SSDs in modules of 4, 4, 2; 5 engines: extras go to modules 0 and 1
    assert activate(10, 4, 5).active == (0, 2, 4, 6, 8)
