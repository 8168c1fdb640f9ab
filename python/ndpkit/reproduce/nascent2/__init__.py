"""NASCENT2 reproduced: Salamat, Zhang, Ki, Rosing, "NASCENT2: Generic Near-Storage Sort
Accelerator for Data Analytics on SmartSSD", ACM TRETS 15(2), Article 16, 2022.

Experiments E1–E8 of spec §12 and its headline claims. The SmartSSD and U250 figures come
from the analytic model (`ndpkit.nascent.model`) with the declared devices
(`ndpkit.nascent.devices.toml`). The CPU baseline's compute is **measured on this machine**
with numpy stand-ins (`cpu`), extrapolated where a job is too large to run in the time
budget; every row says `measured` or `extrapolated`. Reading from the SSD costs the CPU
bytes / 3 GB/s (§10.6). No parameter is tuned to a published result.

Default sizes are scaled down so that the run takes well under a minute; `full=True` uses
the paper's sizes (E1/E3 up to 8M keys, E2 2^26 keys, E5 up to 2M, E8 at SF 1).

Modules: `settings` (what a run uses), `context` (one run's devices, RNGs and measurements),
`cpu` (the measured CPU stand-ins), `comparison` (the ratio columns), `sorts` (E1–E5),
`tables` (E6–E8) and `headline` (the abstract's claims, computed from E5–E7's rows).

Each experiment draws its inputs from its own RNG stream (`Context.for_experiment`), so its
rows do not depend on which other experiments ran.

Example:
    >>> tables = reproduce(Settings(), tables=["E6"])
    >>> [row["devices"] for row in document(tables)["E6"]][:3]
    [1, 2, 3]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ndpkit.errors import SpecError
from ndpkit.report import Table
from ndpkit.reproduce.nascent2.context import Context, Progress, new_context
from ndpkit.reproduce.nascent2.headline import INPUTS as HEADLINE_INPUTS
from ndpkit.reproduce.nascent2.headline import headline
from ndpkit.reproduce.nascent2.settings import Settings, settings_from_flags
from ndpkit.reproduce.nascent2.sorts import e1, e2, e3, e4, e5
from ndpkit.reproduce.nascent2.tables import e6, e7, e8, e8_available

PAPER = (
    "Salamat, Zhang, Ki, Rosing. NASCENT2: Generic Near-Storage Sort Accelerator for Data "
    "Analytics on SmartSSD. ACM TRETS 15(2), Article 16, 2022."
)
TABLE_NAMES = ("E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "headline")
_DEFAULT = Settings()

__all__ = [
    "PAPER",
    "TABLE_NAMES",
    "Progress",
    "Settings",
    "document",
    "e8_available",
    "reproduce",
    "settings_from_flags",
]


def reproduce(
    settings: Settings = _DEFAULT,
    *,
    tables: Sequence[str] = TABLE_NAMES,
    progress: Progress | None = None,
) -> list[Table]:
    """The experiments named in `tables`, in the paper's order ("headline" last)."""
    unknown = [t for t in tables if t not in TABLE_NAMES]
    if unknown:
        raise SpecError(f"unknown experiment; known: {', '.join(TABLE_NAMES)}", field=unknown[0])
    ctx = new_context(settings, progress)
    # The headline needs E5–E7's rows; they run for it even when not asked for.
    needed = set(tables) | (set(HEADLINE_INPUTS) if "headline" in tables else set())
    done: dict[str, Table] = {}
    for name in TABLE_NAMES:
        if name not in needed or (name == "E8" and not e8_available()):
            continue
        ctx.report(f"{name}: {_TITLES[name]}")
        if name == "headline":
            done[name] = headline(done)
        else:
            done[name] = _EXPERIMENTS[name](ctx.for_experiment(_STREAMS[name]))
    return [done[name] for name in TABLE_NAMES if name in tables and name in done]


def document(tables: list[Table]) -> dict[str, Any]:
    """{"E1": [rows], …, "headline": [rows]}: each table's rows with exactly the keys its
    columns declare."""
    return {t.name: [{c.key: row.get(c.key) for c in t.columns} for row in t.rows] for t in tables}


_EXPERIMENTS: dict[str, Callable[[Context], Table]] = {
    "E1": e1,
    "E2": e2,
    "E3": e3,
    "E4": e4,
    "E5": e5,
    "E6": e6,
    "E7": e7,
    "E8": e8,
}
_STREAMS = {"E1": 1, "E2": 2, "E3": 3, "E4": 4, "E5": 5, "E6": 6, "E7": 7, "E8": 8}
"""Each experiment's RNG stream: fixed per name, so that adding an experiment changes no
other experiment's inputs."""
_TITLES = {
    "E1": "sort kernel microbenchmark",
    "E2": "dictionary decoder bandwidth",
    "E3": "decode + sort",
    "E4": "table sort with shuffle",
    "E5": "generic sort",
    "E6": "scaling over SSDs",
    "E7": "TPC-H / TPC-C tables on 12 SSDs",
    "E8": "TPC-H column analysis",
    "headline": "the abstract's claims from E5–E7",
}
