"""Short reprs for result objects: what a notebook shows when a cell ends in one.

A dataclass's own repr prints every field, nested results included: an `optimise` plan
carries an estimate per candidate (40,000 characters), a simulation its per-engine loads and
timeline, a run every engine of every pass, a data set every shard. A result's repr names
its class and its headline figures instead, under the names its attributes and `as_dict()`
use; the whole answer stays in the attributes and `as_dict()`.
"""

from __future__ import annotations

DIGITS = 4
"""Significant digits of a float in a summary (0.03166666666666666 shows as 0.03167)."""


def summary(name: str, /, **figures: object) -> str:
    """`name(key=value, …)` on one line: floats rounded to `DIGITS` significant digits
    (still floats: 2.0, not 2), others as their repr."""
    shown = ", ".join(f"{key}={_rounded(value)!r}" for key, value in figures.items())
    return f"{name}({shown})"


def _rounded(value: object) -> object:
    return float(f"{value:.{DIGITS}g}") if isinstance(value, float) else value
