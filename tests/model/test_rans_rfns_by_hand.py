"""Every cell of the RANS/RFNS reproduction (Tables 3-5, 7-9, 11), recomputed by hand from the
spec's inputs alone: Table 3's times (§9.1), §5.1's powers and §8.1's D and α, through
Eq. (1), §5.2's two energy forms, Eqs. (2)/(3) and §6.5's accounting, written out here
without ndpkit's model. The published results of these experiments are withheld, so the
anchors test only a few cells; this covers the rest, in both energy forms and both readings
of the extrapolated times (O1, O2).
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from ndpkit.model import Options
from ndpkit.reproduce.rans_rfns import reproduce

N = 36
SSD, LINK = 3.0, 36.0  # GB/s per SSD, switch-to-host link (Table 2)
P_ACTIVE, P_IDLE, P_ARM, P_SWITCH = 613.70, 30.33, 5.76, 0.018  # W (§5.1)
APPS = ("lc", "he", "fft2d", "knn2", "knn6", "knn8")
D = {"lc": 37, "he": 3.4, "fft2d": 238.54 / 1024, "knn2": 130, "knn6": 130, "knn8": 130}
ALPHA = {"lc": 8, "he": 1, "fft2d": 8, "knn2": 8, "knn6": 8, "knn8": 8}
T_CNS = {"lc": 0.98, "he": 0.13, "fft2d": 2.05, "knn2": 17.22, "knn6": 31.33, "knn8": 47.45}
T_HOST = {app: 0.62 if app.startswith("knn") else 0.0 for app in APPS}
T_SINGLE = {
    "sans": {"lc": 16.67, "he": 1.98, "fft2d": 132.6, "knn2": 825.5, "knn6": 1843, "knn8": 2354},
    "sfns": {"lc": 13.45, "he": 1.14, "fft2d": 3.02, "knn2": 36.31, "knn6": 34.39, "knn8": 32.83},
}
T_PRINTED = {
    "rans": {"lc": 0.46, "he": 0.06, "fft2d": 3.68, "knn2": 22.93, "knn6": 51.21, "knn8": 65.40},
    "rfns": {"lc": 0.37, "he": 0.03, "fft2d": 0.08, "knn2": 1.01, "knn6": 0.96, "knn8": 0.91},
}
P_FPGA = {"lc": 11.7, "he": 20.65, "fft2d": 18.13, "knn2": 11.68, "knn6": 11.94, "knn8": 12}
SINGLE = {"rans": "sans", "rfns": "sfns"}


def engine_power(server: str, app: str) -> float:
    return P_ARM if server in ("sans", "rans") else P_FPGA[app]


def by_hand(server: str, app: str, wall_times: str) -> dict[str, Any]:
    d = D[app]
    if server == "cns":  # §4.2: no α, the link carries the raw data
        stages = {"ssd": N * SSD, "link": LINK, "cpu": d / T_CNS[app]}
        e = P_ACTIVE * T_CNS[app]
        return {"stages": stages, "t_ndp": None, "t_cpu": T_CNS[app], "A": e, "B": e}
    engines = 1 if server in ("sans", "sfns") else N
    if engines == 1:
        t_ndp = T_SINGLE[server][app]
    elif wall_times == "printed":
        t_ndp = T_PRINTED[server][app]
    else:
        t_ndp = T_SINGLE[SINGLE[server]][app] / N
    t_cpu = T_HOST[app]
    stages = {
        "ssd": engines * SSD,
        "ndp": d / t_ndp,
        "ndp2cpu": LINK * ALPHA[app],
        "cpu": d / t_cpu if t_cpu else math.inf,
    }
    devices = (engines * engine_power(server, app) + P_IDLE) * t_ndp
    return {
        "stages": stages,
        "t_ndp": t_ndp,
        "t_cpu": t_cpu,
        "A": devices + P_ACTIVE * t_cpu,
        "B": devices + (P_ACTIVE - P_IDLE) * t_cpu,
    }


def bottleneck(stages: dict[str, float]) -> tuple[float, str]:
    name = min(stages, key=lambda k: stages[k])  # ties: the earlier stage
    return stages[name], name


def mb_per_j(app: str, joules: float) -> float:
    return D[app] * 1024 / joules


def close(got: Any, want: Any) -> bool:
    if want is None or isinstance(want, str | list):
        return bool(got == want)
    return bool(got == pytest.approx(want, rel=1e-9, abs=1e-12))


@pytest.mark.parametrize("wall_times", ["printed", "unrounded"])
@pytest.mark.parametrize("form", ["A", "B"])
def test_every_cell_is_the_seed_s_arithmetic(wall_times: str, form: str) -> None:
    tables = {t.name: t for t in reproduce(Options(wall_times=wall_times, energy_form=form))}
    wrong: list[str] = []

    def check(where: str, got: Any, want: Any) -> None:
        if not close(got, want):
            wrong.append(f"{where}: {got!r} != {want!r}")

    servers = ("cns", "sans", "sfns", "rans", "rfns")
    hand = {(s, a): by_hand(s, a, wall_times) for s in servers for a in APPS}
    # Every cell: a row missing (or a table come back empty) would leave its cells unchecked.
    covers = {
        "3": servers,
        "4": ("cns", "sans", "rans"),
        "5": ("cns", "rans"),
        "7": ("cns", "sfns", "rfns"),
        "8": ("cns", "rfns"),
        "9": ("rans", "rfns"),
        "11": ("rans", "rfns"),
    }
    for name, rows_of in covers.items():
        got = sorted((r["server"], r["app"]) for r in tables[name].rows)
        assert got == sorted((s, a) for s in rows_of for a in APPS), f"Table {name}'s rows"
    for r in tables["3"].rows:
        h = hand[r["server"], r["app"]]
        check(f"3 {r['server']} {r['app']} T_NDP", r["t_ndp_s"], h["t_ndp"])
        check(f"3 {r['server']} {r['app']} T_CPU", r["t_cpu_s"], h["t_cpu"])
    for name in ("4", "7"):
        for r in tables[name].rows:
            h, where = hand[r["server"], r["app"]], f"{name} {r['server']} {r['app']}"
            st = h["stages"]
            check(f"{where} SSD_BW", r["ssd_bw_gb_per_s"], st["ssd"])
            check(f"{where} NDP_BW", r["ndp_bw_gb_per_s"], st.get("ndp"))
            link = r["ndp2cpu_bw_gb_per_s"] * r["alpha"]
            check(f"{where} NDP2CPU_BW x α", link, st.get("ndp2cpu", st.get("link")))
            check(f"{where} CPU_BW", r["cpu_bw_gb_per_s"], st["cpu"])
            perf, stage = bottleneck(st)
            check(f"{where} performance", r["performance_gb_per_s"], perf)
            check(f"{where} bottleneck", r["bottleneck"], stage)
    for name in ("5", "8"):
        for r in tables[name].rows:
            h, where = hand[r["server"], r["app"]], f"{name} {r['server']} {r['app']}"
            check(f"{where} energy A", r["energy_j"], h["A"])
            check(f"{where} EE A", r["ee_mb_per_j"], mb_per_j(r["app"], h["A"]))
            check(f"{where} energy B", r["energy_form_b_j"], h["B"])
            check(f"{where} EE B", r["ee_form_b_mb_per_j"], mb_per_j(r["app"], h["B"]))
    for r in tables["9"].rows:
        h, cns = hand[r["server"], r["app"]], hand["cns", r["app"]]
        where = f"9 {r['server']} {r['app']}"
        ratio = bottleneck(h["stages"])[0] / bottleneck(cns["stages"])[0]
        check(f"{where} performance x", r["performance_ratio"], ratio)
        check(f"{where} EE x", r["ee_ratio"], cns[form] / h[form])
    for r in tables["11"].rows:
        server, app = r["server"], r["app"]
        h, where = hand[server, app], f"11 {server} {app}"
        bound, stage = bottleneck(h["stages"])
        single = D[app] / T_SINGLE[SINGLE[server]][app]
        nane = N if stage == "ndp" else min(N, max(1, math.ceil(bound / single)))  # Eq. 2, O3
        on = max(nane, N // 2)  # Eq. 3
        active = sorted([*range(0, N, 2), *range(1, N, 2)][:on])  # §6.3
        gross = N * engine_power(server, app) * (N - on) / N * h["t_ndp"]  # §6.5
        switch = P_SWITCH * h["t_ndp"]
        check(f"{where} nane", r["nane"], nane)
        check(f"{where} nane_mux2", r["nane_mux2"], on)
        check(f"{where} inactive", r["inactive"], N - on)
        check(f"{where} active engines", r["active_engines"], active)
        check(f"{where} gross saving", r["gross_saving_j"], gross)
        check(f"{where} switch energy", r["switch_energy_j"], switch)
        check(f"{where} net saving", r["net_saving_j"], gross - switch)
        check(f"{where} improvement", r["improvement_pct"], (gross - switch) / h[form] * 100)
    assert not wrong, "\n".join(wrong)
