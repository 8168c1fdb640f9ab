"""The planner on platforms of one's own, against a calculation written here from the docs.

The other planner tests use the RANS/RFNS presets (36 SSDs, mux2, no storage power). Here a
platform is drawn as docs/platforms.md describes one (any n, a mux-k whose k need not divide
n, SSDs with their own powers, engines with an idle and an off power, mux elements with a
power) and every number of `plan` and `optimise` is recomputed from docs/planning.md's
equations by code of this file's own: Eqs. (1)-(3), the mux-k mapping rules, the paper time
basis with form A, the placements (O8), and storage active for its share, at most T.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpkit.hw import Platform, validate_platform
from ndpkit.model import FULL_GEAR, Configuration, Options, estimate
from ndpkit.plan import optimise, plan
from ndpkit.profile import Profile, load_profile

SETTINGS = settings(max_examples=40, deadline=None, database=None)
APPS = ("lc", "he", "fft2d", "knn2", "knn6", "knn8")
PLACEMENTS = ("paper_no_loss", "static_shards", "reshard_y_ssds")
REL = 1e-9
TIE = 1e-8


# --- the docs' rules, written out again ------------------------------------------------------


def modules_of(n: int, k: int) -> list[int]:
    """Sizes of the modules of k neighbours; the last may be smaller."""
    return [min(k, n - first) for first in range(0, n, k)]


def my_mapping(n: int, k: int, on: int) -> tuple[list[int], list[int]]:
    """docs/planning.md, "mux-k: which engines": one engine per module, the rest one per
    module in ascending order round after round; inside a module of s with a on, at
    floor(i·s/a); each SSD to the nearest engine on at or to its left in its module."""
    sizes = modules_of(n, k)
    counts = [1] * len(sizes)
    left = on - len(sizes)
    while left > 0:
        for m, size in enumerate(sizes):
            if left and counts[m] < size:
                counts[m] += 1
                left -= 1
    active: list[int] = []
    route: list[int] = []
    for m, (size, count) in enumerate(zip(sizes, counts, strict=True)):
        positions = [i * size // count for i in range(count)]
        active += [m * k + p for p in positions]
        route += [m * k + max(p for p in positions if p <= j) for j in range(size)]
    return active, route


def expected_energy_j(spec: dict[str, Any], profile: Profile, k: int, on: int, placement: str):
    """Energy with `on` engines under mux-k (paper time basis, form A, unrounded times),
    performance, and the full-gear bottleneck with its performance."""
    n = spec["storage"]["count"]
    per_ssd = spec["per_ssd"]
    single = spec["engine"]
    data = profile.data_bytes
    cpu = profile.host_part_bytes_per_s or math.inf
    t_cpu = data / cpu if math.isfinite(cpu) else 0.0
    link = spec["link"] * profile.alpha
    full = {"ssd": n * per_ssd, "ndp": n * single, "ndp2cpu": link, "cpu": cpu}
    perf_full = min(full.values())
    bottleneck = min(full, key=lambda stage: full[stage])  # dict order: ties to the earlier
    active, route = my_mapping(n, k, on)
    loads = [route.count(e) for e in active]
    most = max(loads)
    ndp = n * single / most if placement == "static_shards" else min(n * single, on * single)
    ssd = on * per_ssd if placement == "reshard_y_ssds" else n * per_ssd
    perf = min(ssd, ndp, link, cpu)
    t_ndp = data / (n * single) * perf_full / perf  # stretched by the slowdown
    total = t_ndp + t_cpu
    imbalance = most / (n / on)
    busy = on * t_ndp / imbalance if placement == "static_shards" else on * t_ndp
    eng = spec["engine_power"]
    energy = busy * eng["active"] + (on * t_ndp - busy) * eng["idle"]
    energy += (on * t_cpu + (n - on) * total) * eng["off"]
    energy += spec["host_idle"] * t_ndp + spec["host_active"] * t_cpu
    if placement == "static_shards":
        shares = [data / n] * n
    elif placement == "reshard_y_ssds":
        shares = [data / on if i in active else 0.0 for i in range(n)]
    else:  # D/y for each engine, split evenly over the SSDs routed to it
        shares = [data / on / route.count(route[i]) for i in range(n)]
    ssd_active = sum(min(share / per_ssd, total) for share in shares)
    energy += spec["ssd_active"] * ssd_active + spec["ssd_idle"] * (n * total - ssd_active)
    elements = sum(1 for size in modules_of(n, k) if size > 1)
    switch = elements * spec["element_w"] * t_ndp
    return energy, switch, perf, perf_full, bottleneck


def my_nane(spec: dict[str, Any], profile: Profile) -> int:
    """Eq. (2), clamped to [1, n]; an NDP-bound run keeps all n (O3)."""
    n = spec["storage"]["count"]
    _, _, _, perf_full, bottleneck = expected_energy_j(spec, profile, 1, n, "paper_no_loss")
    if bottleneck == "ndp":
        return n
    return min(max(math.ceil(perf_full / spec["engine"] * (1 - 1e-12)), 1), n)


# --- platforms drawn as a user writes them ----------------------------------------------------


@st.composite
def servers(draw: st.DrawFn) -> tuple[Platform, dict[str, Any], int]:
    n = draw(st.integers(1, 24))
    k = draw(st.integers(1, n))
    scheme = "muxn" if k == n and draw(st.booleans()) else f"mux{k}"
    mb = st.integers(100, 20_000)  # MB/s, whole: the strings stay exact
    engine, read, link, host_link = draw(mb), draw(mb), draw(mb), draw(mb)
    watts = st.integers(0, 50)
    power_active, power_idle = sorted((draw(watts), draw(watts)), reverse=True)
    power_off = draw(st.integers(0, power_idle))
    host_active, host_idle = sorted((draw(st.integers(0, 900)), draw(st.integers(0, 900))))[::-1]
    ssd_active, ssd_idle = sorted((draw(watts), draw(watts)), reverse=True)
    element_mw = draw(st.integers(0, 2000))
    table = {
        "name": "drawn",
        "host": {
            "cores_per_socket": 8,
            "frequency": "2 GHz",
            "power_active": f"{host_active} W",
            "power_idle": f"{host_idle} W",
        },
        "host_link": {"bandwidth": f"{host_link} MB/s"},
        "storage": {
            "count": n,
            "read_bandwidth": f"{read} MB/s",
            "power_active": f"{ssd_active} W",
            "power_idle": f"{ssd_idle} W",
            "link": {"bandwidth": f"{link} MB/s"},
        },
        "engines": {
            "kind": "arm",
            "count": n,
            "power_active": f"{power_active} W",
            "power_idle": f"{power_idle} W",
            "power_off": f"{power_off} W",
            "throughput": {app: f"{engine} MB/s" for app in APPS},
        },
        "switch_layer": {"scheme": scheme, "element_power": f"{element_mw} mW"},
    }
    platform = validate_platform(table, source="drawn.toml")
    spec = {
        "storage": table["storage"],
        "per_ssd": min(read, link) * 1e6,
        "engine": engine * 1e6,
        "link": host_link * 1e6,
        "engine_power": {"active": power_active, "idle": power_idle, "off": power_off},
        "host_active": host_active,
        "host_idle": host_idle,
        "ssd_active": ssd_active,
        "ssd_idle": ssd_idle,
        "element_w": element_mw / 1000 if k > 1 else 0.0,
    }
    return platform, spec, k


def close(got: float, want: float) -> bool:
    return math.isclose(got, want, rel_tol=REL, abs_tol=1e-9)


# --- the tests ------------------------------------------------------------------------------


@SETTINGS
@given(servers(), st.sampled_from(APPS), st.sampled_from(PLACEMENTS))
def test_the_papers_plan_is_what_the_docs_equations_give(server, app, placement) -> None:
    platform, spec, k = server
    profile = load_profile(app)
    n = platform.devices
    result = plan(platform, profile, Options(placement=placement))
    nane = my_nane(spec, profile)
    assert result.engines_required == nane
    assert result.engines_on == (n if k == 1 else max(nane, math.ceil(n / k)))
    assert 1 <= result.engines_on <= n
    assert result.engines_on + result.engines_off == n
    active, route = my_mapping(n, k, result.engines_on)
    assert result.mapping is not None
    assert list(result.mapping.active) == active
    assert list(result.mapping.route) == route
    energy, switch, perf, perf_full, bottleneck = expected_energy_j(
        spec, profile, k, result.engines_on, placement
    )
    assert result.as_dict()["bottleneck"] == bottleneck
    assert close(result.baseline.energy_j, expected_energy_j(spec, profile, 1, n, placement)[0])
    assert close(result.planned.energy_j, energy + switch)
    assert close(result.switch_energy_j, switch)
    assert close(result.net_saving_j, result.baseline.energy_j - result.planned.energy_j)
    assert result.gross_saving_j == 0.0 or close(
        result.gross_saving_j, result.net_saving_j + result.switch_energy_j
    )
    if result.baseline.energy_j > 0:
        assert close(result.improvement_pct, result.net_saving_j / result.baseline.energy_j * 100)
    assert math.isclose(result.performance_loss_pct, (1 - perf / perf_full) * 100, abs_tol=1e-7)
    if placement == "paper_no_loss":  # the others' losses Eq. (2) does not see
        assert result.performance_loss_pct == pytest.approx(0.0, abs=1e-6), "Eq. (2) keeps up"


@SETTINGS
@given(
    servers(),
    st.sampled_from(APPS),
    st.sampled_from(PLACEMENTS),
    st.lists(st.sampled_from([0.0, 0.01, 0.1, 0.5, 2.0]), min_size=2, max_size=2),
)
def test_the_optimal_search_is_the_least_energy_within_the_tolerance(
    server, app, placement, tolerances
) -> None:
    platform, spec, k = server
    profile = load_profile(app)
    n = platform.devices
    options = Options(placement=placement)
    low, high = sorted(tolerances)
    strict = optimise(platform, profile, options, tolerance=low)
    loose = optimise(platform, profile, options, tolerance=high)
    # energies equal to 9 significant digits are a tie, which performance breaks (optimise)
    assert loose.planned.energy_j <= strict.planned.energy_j * (1 + TIE) + 1e-9
    for result, tolerance in ((strict, low), (loose, high)):
        device = [c for c in result.candidates if c.config.split == "device"]
        assert [c.pipeline.engines_active for c in device] == list(
            range(math.ceil(n / k) if k > 1 else n, n + 1)
        )
        for candidate in device:
            energy, switch, perf, _, _ = expected_energy_j(
                spec, profile, k, candidate.pipeline.engines_active, placement
            )
            assert close(candidate.energy_j, energy + switch)
            assert close(candidate.performance_bytes_per_s, perf)
        best = max(c.performance_bytes_per_s for c in result.candidates)
        floor = best / (1 + tolerance) * (1 - 1e-12)  # "at least best / (1 + tolerance)"
        within = [c for c in result.candidates if c.performance_bytes_per_s >= floor]
        least = min(c.energy_j for c in within)
        assert least <= result.planned.energy_j <= least * (1 + TIE) + 1e-9
        if result.planned.config.split == "device":
            assert 1 <= result.engines_on <= n
        else:
            assert result.engines_on == 0
            assert result.mapping is None


def test_no_ssd_is_charged_active_for_longer_than_the_run() -> None:
    """`reshard_y_ssds` with 6 of 16 engines: each of 6 SSDs holds D/6 and would read it in
    D / (6 x 7 GB/s), longer than the run, which the link (32 GB/s) paces at D / 96 GB/s of
    the engines. Only n x T was a cap: the 6 were charged active for 2.3 x the run (6.69 J
    for the SSDs where 4.64 J is right)."""
    table = {
        "name": "edge16ish",
        "host": {
            "cores_per_socket": 32,
            "frequency": "2.45 GHz",
            "power_active": "420 W",
            "power_idle": "95 W",
        },
        "host_link": {"bandwidth": "32 GB/s"},
        "storage": {
            "count": 16,
            "read_bandwidth": "7 GB/s",
            "power_active": "12 W",
            "power_idle": "5 W",
        },
        "engines": {
            "kind": "arm",
            "count": 16,
            "power_active": "9 W",
            "throughput": {"he": "6 GB/s"},
        },
        "switch_layer": {"scheme": "mux4"},
    }
    platform = validate_platform(table, source="edge16ish.toml")
    he = load_profile("he")  # 3.4 GiB, α = 1: bound by the link at 32 GB/s
    active, route = my_mapping(16, 4, 6)
    config = Configuration(active=tuple(active), route=tuple(route))
    run = estimate(platform, he, config, Options(placement="reshard_y_ssds"))
    total = run.time_s
    assert total == pytest.approx(he.data_bytes / 96e9)  # T_NDP: D / (16 x 6 GB/s)
    each = he.data_bytes / 6 / 7e9
    assert each > total
    storage = run.state_times.of("storage")
    assert storage["active"] == pytest.approx(6 * total)
    assert storage["active"] + storage["idle"] == pytest.approx(16 * total)
    assert run.energy.by_component_j["storage"] == pytest.approx(12 * 6 * total + 5 * 10 * total)
    full = estimate(platform, he, FULL_GEAR, Options(placement="reshard_y_ssds"))
    assert full.state_times.of("storage")["active"] == pytest.approx(he.data_bytes / 7e9)
