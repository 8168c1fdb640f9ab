"""NASCENT2 reproduced: Salamat, Zhang, Ki, Rosing, "NASCENT2: Generic Near-Storage Sort
Accelerator for Data Analytics on SmartSSD", ACM TRETS 15(2), Article 16, 2022.

Experiments E1–E8 of spec §12. The SmartSSD and U250 figures come from the analytic model
(`ndpkit.nascent.model`) with the declared devices (`ndpkit.nascent.devices.toml`). The CPU
baseline's compute is **measured on this machine** with numpy stand-ins (`cpu`), extrapolated
where a job is too large to run in the time budget; every row says `measured` or
`extrapolated`. Reading from the SSD costs the CPU bytes / 3 GB/s (§10.6). No parameter is
tuned to a published result.

Default sizes are scaled down so that the run takes well under a minute; `full=True` uses
the paper's sizes (E1/E3 up to 8M keys, E2 2^26 keys, E5 up to 2M, E8 at SF 1).

Modules: `settings` (what a run uses), `context` (one run's devices, RNG and measurements),
`cpu` (the measured CPU stand-ins), `comparison` (the ratio columns), `sorts` (E1–E5) and
`tables` (E6–E8).

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
from ndpkit.reproduce.nascent2.settings import Settings, settings_from_flags
from ndpkit.reproduce.nascent2.sorts import e1, e2, e3, e4, e5
from ndpkit.reproduce.nascent2.tables import e6, e7, e8, e8_available

PAPER = (
    "Salamat, Zhang, Ki, Rosing. NASCENT2: Generic Near-Storage Sort Accelerator for Data "
    "Analytics on SmartSSD. ACM TRETS 15(2), Article 16, 2022."
)
TABLE_NAMES = ("E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8")
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
    """The experiments named in `tables`, in the paper's order."""
    unknown = [t for t in tables if t not in TABLE_NAMES]
    if unknown:
        raise SpecError(f"unknown experiment; known: {', '.join(TABLE_NAMES)}", field=unknown[0])
    ctx = new_context(settings, progress)
    out = []
    for name in TABLE_NAMES:
        if name in tables and (name != "E8" or e8_available()):
            ctx.report(f"{name}: {_TITLES[name]}")
            out.append(_EXPERIMENTS[name](ctx))
    return out


def document(tables: list[Table]) -> dict[str, Any]:
    """{"E1": [rows], …}: each experiment's rows with exactly the keys its columns declare."""
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
_TITLES = {
    "E1": "sort kernel microbenchmark",
    "E2": "dictionary decoder bandwidth",
    "E3": "decode + sort",
    "E4": "table sort with shuffle",
    "E5": "generic sort",
    "E6": "scaling over SSDs",
    "E7": "TPC-H / TPC-C tables on 12 SSDs",
    "E8": "TPC-H column analysis",
}
