"""RANS/RFNS reproduced: Song, Xie, Fischer, "Two Reconfigurable NDP Servers", ACM TOS 17(4), 2021.

Inputs: the platform presets `cns`, `sans`, `sfns`, `rans`, `rfns` and the profile set
`rans-rfns` (Table 3, §5.1, §8.1). Every table is computed by the functions a user's
workload goes through (`ndpkit.model.estimate`, `ndpkit.plan.plan`, `ndpkit.plan.activate`);
nothing here knows a published result.

Tables: 3 (wall times), 4 and 7 (full-gear performance, ARM and FPGA), 5 and 8 (energy
and MB/J, both energy forms), 6 (FPGA feasibility: utilisation recomputed from Table 6's
counts, per-NDPE footprints, chips needed), 9 (improvement over CNS), 10 (mux2 activation,
n = 8) and 11 (reconfigurability under mux2). Full gear means the mux1 topology (§2.6).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ndpkit.errors import whole_number
from ndpkit.hw import Platform, load_platform
from ndpkit.model import FULL_GEAR, Estimate, Options, estimate
from ndpkit.model.pipeline import CPU, LINK, NDP, NDP2CPU, SSD
from ndpkit.plan import activate, minimum_engines, plan
from ndpkit.profile import Profile, load_profiles
from ndpkit.report import Column, Table

APPS = ("lc", "he", "fft2d", "knn2", "knn6", "knn8")
PAPER = "Song, Xie, Fischer. Two Reconfigurable NDP Servers. ACM TOS 17(4), Article 31, 2021."
DEFAULT_OPTIONS = Options(wall_times="printed")
"""The paper's conventions: printed extrapolated times (O2) and otherwise the defaults."""

_SERVERS = ("cns", "sans", "sfns", "rans", "rfns")
TABLE_NAMES = ("3", "4", "5", "6", "7", "8", "9", "10", "11")

RESOURCES = ("lut", "reg", "bram", "dsp")
FPGA_CAPACITY = {"lut": 1_182_240, "reg": 2_364_480, "bram": 2_160, "dsp": 6_840}
"""One Xilinx VCU1525 (Virtex UltraScale+): 6-input LUTs, registers, 36 Kb BRAM blocks and
DSP slices (Table 2, §7; the capacity row of Table 6)."""
FPGA_INSTANCES = 36
"""Table 6 counts the resources of 36 kernel instances, one NDPE per SSD of RFNS."""
FPGA_RESOURCES = {
    "lc": {"lut": 108_108, "reg": 125_568, "bram": 72, "dsp": 180},
    "he": {"lut": 1_673_352, "reg": 1_961_604, "bram": 6_300, "dsp": 0},
    "fft2d": {"lut": 481_932, "reg": 643_608, "bram": 180, "dsp": 3_456},
    "knn2": {"lut": 129_816, "reg": 172_512, "bram": 72, "dsp": 432},
    "knn6": {"lut": 227_016, "reg": 364_140, "bram": 288, "dsp": 1_440},
    "knn8": {"lut": 272_916, "reg": 444_960, "bram": 288, "dsp": 1_944},
}
"""Table 6's counts for 36 NDPEs (inputs: the paper's printed percentages are results, and
several disagree with the counts, O15; HE's BRAM is printed "0" with the 6,300 blocks that
spill to off-chip DRAM, spec §9.3)."""


def reproduce(
    options: Options = DEFAULT_OPTIONS,
    *,
    progress: Callable[[str], None] | None = None,
) -> list[Table]:
    """All tables, in the paper's order."""
    profiles = load_profiles("rans-rfns").apps
    platforms = {name: _full_gear(load_platform(name)) for name in _SERVERS}
    report = progress or (lambda _: None)
    estimates: dict[tuple[str, str], Estimate] = {}
    for server, platform in platforms.items():
        report(f"estimating {server}")
        for app in APPS:
            estimates[server, app] = estimate(platform, profiles[app], FULL_GEAR, options)
    alternative = options.with_(energy_form="B" if options.energy_form == "A" else "A")
    other = {
        (server, app): estimate(platforms[server], profiles[app], FULL_GEAR, alternative)
        for server in ("cns", "rans", "rfns")
        for app in APPS
    }
    report("planning mux2 reconfiguration")
    tables = [
        table3(estimates, profiles),
        performance_table("4", "ARM", ("cns", "sans", "rans"), estimates, profiles),
        energy_table("5", "rans", estimates, other),
        table6(platforms["rfns"].devices),
        performance_table("7", "FPGA", ("cns", "sfns", "rfns"), estimates, profiles),
        energy_table("8", "rfns", estimates, other),
        table9(estimates),
        table10(),
        table11(profiles, options),
    ]
    return tables


UNIT_WORDS = {
    "binary": ("1 GB = 2^30 bytes", "1 MB = 2^20 bytes"),
    "decimal": ("1 GB = 10^9 bytes", "1 MB = 10^6 bytes"),
}
"""The GB and MB of each `--units` (O4), as the titles of the tables in GB/s and MB/J say
them: both read "GB/s" and "MB/J" alone, so 108.00 (binary) and 115.96 (decimal) for the
same 36 SSDs came with nothing to tell which GB they were in."""


def _full_gear(platform: Platform) -> Platform:
    """Full gear = every engine on, no switching (mux1, §2.6)."""
    return platform.with_scheme("mux1")


def _times(e: Estimate) -> dict[str, Any]:
    return {"t_ndp_s": e.t_ndp_s if e.pipeline.engines_active else None, "t_cpu_s": e.t_cpu_s}


def table3(estimates: dict[tuple[str, str], Estimate], profiles: dict[str, Profile]) -> Table:
    rows = [
        {
            "server": server,
            "app": app,
            "alpha": profiles[app].alpha,
            **_times(estimates[server, app]),
        }
        for server in _SERVERS
        for app in APPS
    ]
    return Table(
        "3",
        "Table 3 — wall times (s): NDP stage / host stage",
        [
            Column("server", "server", None),
            Column("app", "app", None),
            Column("alpha", "α", 0),
            Column("t_ndp_s", "T_NDP (s)", 2, "NDP-stage wall time; null on CNS (no engine)"),
            Column("t_cpu_s", "T_CPU (s)", 2, "host-stage wall time; 0 = no host compute"),
        ],
        rows,
        note="RANS/RFNS rows are extrapolated from SANS/SFNS (single / 36, §4.4).",
    )


def performance_table(
    name: str,
    kind: str,
    servers: tuple[str, ...],
    estimates: dict[tuple[str, str], Estimate],
    profiles: dict[str, Profile],
) -> Table:
    rows = []
    gb_words = UNIT_WORDS[estimates[servers[0], APPS[0]].options.units][0]
    for server in servers:
        for app in APPS:
            e = estimates[server, app]
            gb = e.options.gb
            stages = e.stages
            alpha = profiles[app].alpha
            link = stages.get(LINK, stages.get(NDP2CPU, 0.0) / alpha)
            rows.append(
                {
                    "server": server,
                    "app": app,
                    "ssd_bw_gb_per_s": stages[SSD] / gb,
                    "ndp_bw_gb_per_s": stages[NDP] / gb if NDP in stages else None,
                    "ndp2cpu_bw_gb_per_s": link / gb,
                    "alpha": alpha if NDP in stages else 1.0,
                    "cpu_bw_gb_per_s": stages[CPU] / gb,
                    "performance_gb_per_s": e.performance_bytes_per_s / gb,
                    "bottleneck": e.bottleneck,
                }
            )
    return Table(
        name,
        f"Table {name} — full-gear performance, {kind} servers (GB/s, {gb_words}; Eq. 1)",
        [
            Column("server", "server", None),
            Column("app", "app", None),
            Column("ssd_bw_gb_per_s", "SSD_BW"),
            Column("ndp_bw_gb_per_s", "NDP_BW"),
            Column("ndp2cpu_bw_gb_per_s", "NDP2CPU_BW", description="host link; x α in Eq. 1"),
            Column("alpha", "α", 0, "reduction ratio applied to NDP2CPU_BW (1 on CNS)"),
            Column("cpu_bw_gb_per_s", "CPU_BW", description="+inf (JSON 'inf') = no host stage"),
            Column("performance_gb_per_s", "performance"),
            Column("bottleneck", "bottleneck", None, "argmin stage: ssd, ndp, ndp2cpu/link, cpu"),
        ],
        rows,
        note="On CNS the NDP2CPU column is the switch-to-host link and α is not applied (§4.2).",
    )


def energy_table(
    name: str,
    server: str,
    estimates: dict[tuple[str, str], Estimate],
    other: dict[tuple[str, str], Estimate],
) -> Table:
    rows = []
    for srv in ("cns", server):
        for app in APPS:
            e, alt = estimates[srv, app], other[srv, app]
            a, b = (e, alt) if e.options.energy_form == "A" else (alt, e)
            rows.append(
                {
                    "server": srv,
                    "app": app,
                    "energy_j": a.options.round_energy(a.energy_j),
                    "ee_mb_per_j": a.ee_mb_per_j,
                    "energy_form_b_j": b.options.round_energy(b.energy_j),
                    "ee_form_b_mb_per_j": b.ee_mb_per_j,
                }
            )
    kind = "ARM (RANS)" if server == "rans" else "FPGA (RFNS)"
    mb_words = UNIT_WORDS[estimates[server, APPS[0]].options.units][1]
    return Table(
        name,
        f"Table {name} — full-gear energy (J) and efficiency (MB/J, {mb_words}), {kind} vs CNS",
        [
            Column("server", "server", None),
            Column("app", "app", None),
            Column("energy_j", "energy A (J)", description="form A: P_active x T_CPU (paper text)"),
            Column("ee_mb_per_j", "EE A (MB/J)"),
            Column(
                "energy_form_b_j", "energy B (J)", description="form B: (P_active-P_idle) x T_CPU"
            ),
            Column("ee_form_b_mb_per_j", "EE B (MB/J)"),
        ],
        rows,
        note="Forms A and B differ only for k-NN (the only apps with a host stage).",
    )


def table6(engines: int = FPGA_INSTANCES) -> Table:
    """E7, FPGA feasibility (§8.3): per resource of each app, Table 6's count for 36 NDPEs,
    the per-NDPE footprint (count / 36), the utilisation recomputed as count / capacity
    (O15), and the chips `engines` NDPEs need: ceil(max over LUT, REG and DSP of
    engines x footprint / capacity). BRAM does not count towards the chips: what overflows
    it goes to off-chip DRAM (Table 6's footnote), as HE's does. `engines` is a whole
    number ≥ 1: 0 or -36 NDPEs got "1 chip", 2.5 was kept and "36" ended in a TypeError."""
    engines = whole_number(engines, "engines", "a whole number of NDPEs ≥ 1", 1, source="table6")
    rows = []
    for app in APPS:
        counts = FPGA_RESOURCES[app]
        per_ndpe = {r: counts[r] / FPGA_INSTANCES for r in RESOURCES}
        fractions = (engines * per_ndpe[r] / FPGA_CAPACITY[r] for r in ("lut", "reg", "dsp"))
        chips = max(1, *(math.ceil(f) for f in fractions))
        for resource in RESOURCES:
            used = engines * per_ndpe[resource]
            rows.append(
                {
                    "app": app,
                    "resource": resource,
                    "count_36": counts[resource],
                    "per_ndpe": per_ndpe[resource],
                    "capacity": FPGA_CAPACITY[resource],
                    "utilisation_pct": counts[resource] / FPGA_CAPACITY[resource] * 100,
                    "off_chip": resource == "bram" and used > FPGA_CAPACITY[resource],
                    "chips": chips,
                }
            )
    return Table(
        "6",
        f"Table 6 — FPGA utilisation of 36 NDPEs (VCU1525), recomputed; chips for {engines} NDPEs",
        [
            Column("app", "app", None),
            Column("resource", "resource", None, "lut (6-input), reg, bram (36 Kb), dsp"),
            Column("count_36", "used by 36 NDPEs", 0, "Table 6's count (input)"),
            Column("per_ndpe", "per NDPE", 0, "footprint of one NDPE: count / 36 (§8.3)"),
            Column("capacity", "VCU1525", 0, "one chip's capacity"),
            Column("utilisation_pct", "utilisation (%)", 2, "count / capacity x 100 (O15)"),
            Column(
                "off_chip",
                "off-chip",
                None,
                "BRAM beyond one chip, held in off-chip DRAM (Table 6 footnote)",
            ),
            Column(
                "chips",
                "chips (app)",
                0,
                "ceil(max over lut, reg, dsp of NDPEs x footprint / capacity), at least 1",
            ),
        ],
        rows,
        note="Percentages are recomputed from the counts, not the paper's printed ones (O15).",
    )


def table9(estimates: dict[tuple[str, str], Estimate]) -> Table:
    rows = []
    for server in ("rans", "rfns"):
        for app in APPS:
            e, cns = estimates[server, app], estimates["cns", app]
            rows.append(
                {
                    "server": server,
                    "app": app,
                    "performance_ratio": e.performance_bytes_per_s / cns.performance_bytes_per_s,
                    "ee_ratio": e.ee_mb_per_j / cns.ee_mb_per_j,
                }
            )
    return Table(
        "9",
        "Table 9 — improvement over CNS (ratios; > 1 is better)",
        [
            Column("server", "server", None),
            Column("app", "app", None),
            Column("performance_ratio", "performance ×", description="Eq. 1 performance / CNS"),
            Column("ee_ratio", "EE ×", description="MB/J / CNS MB/J (energy form as selected)"),
        ],
        rows,
    )


def table10(devices: int = 8) -> Table:
    """Table 10 for `devices` NDPEs: every engine count mux2 can run, from one per module
    (ceil(n / 2): n // 2 asked an odd n for one engine too few, which `activate` refuses,
    O18) to all of them."""
    rows = []
    for on in range(minimum_engines(devices, 2), devices + 1):
        mapping = activate(devices, 2, on)
        rows.append(
            {"nane_mux2": on, "active_engines": list(mapping.active), "route": list(mapping.route)}
        )
    return Table(
        "10",
        f"Table 10 — mux2 activation, n = {devices} NDPEs (and the SSD → engine routes)",
        [
            Column("nane_mux2", "nane_mux2", 0),
            Column("active_engines", "active NDPE ids", None),
            Column("route", "SSD i → engine", None, "route[i] = engine that reads SSD i"),
        ],
        rows,
    )


IMPROVEMENT = {
    "reduction": "net saving / baseline energy x 100 (O7 reduction)",
    "ee_gain": "(planned MB/J / baseline MB/J - 1) x 100 (O7 ee_gain)",
}
"""What Table 11's improvement is under each `--improvement`: the JSON described the
energy reduction whichever of the two the column held."""


def table11(profiles: dict[str, Profile], options: Options) -> Table:
    rows = []
    for server in ("rans", "rfns"):
        platform = load_platform(server)
        for app in APPS:
            p = plan(platform, profiles[app], options, scheme="mux2")
            rows.append(
                {
                    "server": server,
                    "app": app,
                    "nane": p.engines_required,
                    "nane_mux2": p.engines_on,
                    "inactive": p.engines_off,
                    "gross_saving_j": p.gross_saving_j,
                    "switch_energy_j": p.switch_energy_j,
                    "net_saving_j": p.net_saving_j,
                    "improvement_pct": p.improvement_pct,
                    "active_engines": list(p.mapping.active) if p.mapping else [],
                }
            )
    return Table(
        "11",
        "Table 11 — reconfigurability under mux2 (energy vs the same server without switches)",
        [
            Column("server", "server", None),
            Column("app", "app", None),
            Column("nane", "nane (Eq. 2)", 0),
            Column("nane_mux2", "nane_mux2 (Eq. 3)", 0),
            Column("inactive", "inactive", 0),
            Column("gross_saving_j", "gross saving (J)", description="engines switched off"),
            Column("switch_energy_j", "switch (J)", 4, "switch layer's own energy"),
            Column("net_saving_j", "net saving (J)"),
            Column(
                "improvement_pct", "improvement (%)", description=IMPROVEMENT[options.improvement]
            ),
            Column("active_engines", "active NDPE ids", None, "engines left on (§6.3 policy)"),
        ],
        rows,
    )


def as_written(tables: list[Table], options: Options) -> list[Table]:
    """The tables as JSON and CSV write them: with `--rounding paper` every float of a row
    rounded to 2 decimals (the terminal shows its own digits). JSON alone rounded, so the
    CSV of the same run gave 62.9965 MB/J where the JSON gave 63.0."""
    if options.rounding != "paper":
        return tables
    return [
        replace(t, rows=[{k: _round(v, True) for k, v in row.items()} for row in t.rows])
        for t in tables
    ]


def document(tables: list[Table], options: Options) -> dict[str, Any]:
    """The machine-readable form: {"tables": {"4": [rows]}, ...} with documented keys."""
    tables = as_written(tables, options)
    return {
        "paper": PAPER,
        "options": options.as_dict(),
        "units": {"gb_bytes": options.gb, "mb_bytes": options.mb},
        # One map for every table (a key shared by tables takes the last one's words), and
        # each table's own (Table 3's `alpha` is the app's, Tables 4/7's the α applied).
        "columns": {k: v for t in tables for k, v in t.descriptions().items()},
        "table_columns": {t.name: t.descriptions() for t in tables},
        "tables": {
            t.name: [{c.key: row.get(c.key) for c in t.columns} for row in t.rows] for t in tables
        },
    }


def _round(value: Any, rounding: bool) -> Any:
    return round(value, 2) if rounding and isinstance(value, float) else value
