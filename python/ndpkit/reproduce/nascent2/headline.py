"""The paper's headline claims (spec §12, "Headline claims": abstract, contributions,
conclusion) computed from this run's own experiment rows, never copied: the abstract claims
a speedup and an energy-efficiency gain of the generic sort over the CPU (E5), and of 12
SmartSSDs over the U250 and the CPU (E6 at 𝓜 = 12, and E7's TPC tables on 12 SSDs).

Each claim is the largest ratio among the rows it covers ("up to"), with the row it came
from. Ratios are T_baseline / T_NASCENT2 and E_baseline / E_NASCENT2, as in the tables.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ndpkit.report import Column, Table
from ndpkit.reproduce.nascent2.tables import E7_DEVICES

Row = dict[str, Any]


@dataclass(frozen=True)
class Claim:
    """One headline figure: the largest `field` among `table`'s rows that `covers`."""

    text: str
    table: str
    field: str
    covers: Callable[[Row], bool]
    describe: Callable[[Row], str]


def _every(_: Row) -> bool:
    return True


def _at_12(row: Row) -> bool:
    """E6's row for the abstract's "with 12 SmartSSDs" (the host's slot limit, as in E7)."""
    return bool(row["devices"] == E7_DEVICES)


def _e5_row(row: Row) -> str:
    return f"{row['type']}, n = {row['n']:,}"


def _e6_row(row: Row) -> str:
    return f"𝓜 = {row['devices']}"


def _e7_row(row: Row) -> str:
    return f"{row['table']} SF {row['sf']:g}, {row['key']}"


_RATIOS = (
    ("speedup vs U250", "speedup_vs_fpga"),
    ("speedup vs CPU", "speedup_vs_cpu"),
    ("energy efficiency vs U250", "energy_vs_fpga"),
    ("energy efficiency vs CPU", "energy_vs_cpu"),
)
CLAIMS: tuple[Claim, ...] = (
    Claim("generic sort: speedup vs CPU", "E5", "speedup_vs_cpu", _every, _e5_row),
    Claim("generic sort: energy efficiency vs CPU", "E5", "energy_vs_cpu", _every, _e5_row),
    *(Claim(f"12 SmartSSDs: {what}", "E6", key, _at_12, _e6_row) for what, key in _RATIOS),
    *(
        Claim(f"12 SmartSSDs, TPC tables: {what}", "E7", key, _every, _e7_row)
        for what, key in _RATIOS
    ),
)
INPUTS = ("E5", "E6", "E7")
"""The experiments the claims are computed from."""


def headline(tables: Mapping[str, Table]) -> Table:
    """The claims of `CLAIMS` from `tables` (by name; E5, E6 and E7 must be there)."""
    rows = [_claim_row(claim, tables[claim.table].rows) for claim in CLAIMS]
    return Table(
        "headline",
        "Headline claims (abstract) — the largest ratios of E5, E6 at 𝓜 = 12 and E7, this run",
        [
            Column("claim", "claim", None),
            Column("value", "up to (×)", 2, "the largest ratio among the rows the claim covers"),
            Column("source", "from", None, "experiment, rows covered and the row of the maximum"),
        ],
        rows,
        note="Computed from this run's rows; the paper's figures are withheld (spec §12). "
        "Speedup = T_baseline / T_NASCENT2, energy efficiency = E_baseline / E_NASCENT2.",
    )


def _claim_row(claim: Claim, rows: list[Row]) -> Row:
    covered = [r for r in rows if claim.covers(r)]
    best = max(covered, key=lambda r: float(r[claim.field]))
    among = f", largest of {len(covered)} rows" if len(covered) > 1 else ""
    return {
        "claim": claim.text,
        "value": float(best[claim.field]),
        "source": f"{claim.table}{among}: {claim.describe(best)}",
    }
