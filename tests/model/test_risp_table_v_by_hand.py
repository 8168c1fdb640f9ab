"""Table V (E8, Policy B) recomputed from the spec's equations alone, not through ndpkit's
model: every row's n_host, roundings, energies with every cell on and with the chosen
cells, saving = (E_all - E_chosen) / E_all x 100 (§4.4) and the loss of processing
bandwidth D / T. Nothing here is a published number (Table V's body is withheld): only
Tables II-III, the preset's RU powers (R6) and the spec's §5.2 attribution.

With the host stage (R11), T = max(t_ch2RU, t_RUComp, t_RU2DRAM, D / (β b_hostIO)), and
  NVM      n_read x (66 mW t_ch + 16.5 mW (T - t_ch))
  RU       P_RU(k) t_comp + 24 mW (T - t_comp)    (ru_time=configured: P_RU(k) T)
  DRAM     500 mW t_dram + 350 mW (T - t_dram)
  chipset  150 mW T                               (R13)
with P_RU(k) = 1.358 W + k x P_cell (19.125 / 2.125 / 2.125 mW). Reduced cells: all 64
channels read, k cells compute; channels off: k channels read and compute (R10, R12)."""

from __future__ import annotations

import math

import pytest

from ndpkit.reproduce.risp import DEFAULT_OPTIONS, load_inputs, table_e8

N = 64
B_CH, B_DRAM, B_HOST, F_RU = 400e6, 15e9, 1.97e9, 100e6
APPS = {  # D (bytes), α (B/cycle), β, n_delay (cycles), P_cell (W)
    "kmeans": (0.3e9, 9, 3.6466, 15, 0.019125),
    "binarize": (1.4e9, 1, 3.0, 2, 0.002125),
    "sobel": (0.5e9, 1, 1.0, 4, 0.002125),
}


def run(app: str, cells: int, read: int, ru_time: str) -> tuple[float, float]:
    """(T, E) of one RISP run with the host stage."""
    d, alpha, beta, delay, p_cell = APPS[app]
    t_ch = d / (read * B_CH)
    t_comp = (d / (alpha * cells) + delay) / F_RU
    t_dram = d / (beta * B_DRAM)
    t = max(t_ch, t_comp, t_dram, d / (beta * B_HOST))
    p_ru = 1.358 + cells * p_cell
    ru = p_ru * t if ru_time == "configured" else p_ru * t_comp + 0.024 * (t - t_comp)
    nvm = read * (0.066 * t_ch + 0.0165 * (t - t_ch))
    return t, nvm + ru + 0.5 * t_dram + 0.35 * (t - t_dram) + 0.15 * t


def slope(app: str) -> float:
    """f_pb's slope through the origin over n = 4, 8, …, 64 (Eq. 8 alone, R18)."""
    d, alpha, beta, delay, _ = APPS[app]
    ns = range(4, 65, 4)
    pb = [
        d / max(d / (n * B_CH), (d / (alpha * n) + delay) / F_RU, d / (beta * B_DRAM)) for n in ns
    ]
    return sum(n * p for n, p in zip(ns, pb, strict=True)) / sum(n * n for n in ns)


@pytest.fixture(scope="module")
def rows() -> list[dict[str, object]]:
    platform, profiles = load_inputs()
    return table_e8(platform, profiles, DEFAULT_OPTIONS, "floor", "balanced").rows


def test_table_v_rows_follow_the_equations(rows: list[dict[str, object]]) -> None:
    assert len(rows) == 12
    for r in rows:
        app, ru_time, model = str(r["app"]), str(r["ru_time"]), str(r["time_model"])
        beta = APPS[app][2]
        n_exact = beta * B_HOST / slope(app)
        assert r["n_exact"] == pytest.approx(n_exact, rel=1e-12)

        def chosen(k: int) -> tuple[float, float]:
            return run(app, k, N if model == "reduced_cells" else k, ru_time)  # noqa: B023

        t_all, e_all = run(app, N, N, ru_time)
        fewest = min(k for k in range(1, N + 1) if chosen(k)[0] <= t_all * (1 + 1e-12))
        floor, ceil = math.floor(n_exact), math.ceil(n_exact)
        assert r["cells_by_rounding"] == [floor, ceil, math.floor(n_exact + 0.5), fewest]
        assert r["n_chosen"] == r["channels_enabled"] == floor
        t_k, e_k = chosen(floor)
        assert r["energy_all_j"] == pytest.approx(e_all, rel=1e-9), (app, ru_time, model)
        assert r["energy_chosen_j"] == pytest.approx(e_k, rel=1e-9), (app, ru_time, model)
        assert r["saving_pct"] == pytest.approx((e_all - e_k) / e_all * 100, rel=1e-9)
        assert r["performance_loss_pct"] == pytest.approx((1 - t_all / t_k) * 100, abs=1e-9)
