"""Errors a user can act on.

Every error that reaches the command line names the file (when there is one),
the field, and what was expected; the CLI prints it and exits with status 2.
"""

from __future__ import annotations

import difflib
import math
import numbers
import os
from collections.abc import Iterable
from pathlib import Path


class NdpkitError(Exception):
    """Base class of every error that is the user's input, not a bug."""


class RecordError(NdpkitError):
    """A kernel's refusal of one record of its input, by its number there (LC's NaN score
    of point 32773): a run over a data set names the shard that holds it, as it names the
    shard of a record a device part refuses (`executor._in_shard`)."""

    def __init__(self, message: str, record: int):
        super().__init__(message)
        self.record = record

    def __reduce__(self) -> tuple[type[RecordError], tuple[str, int]]:
        return type(self), (str(self), self.record)  # across processes, with its record


class SpecError(NdpkitError):
    """A platform, profile or option file that does not validate."""

    def __init__(self, message: str, *, source: str | None = None, field: str | None = None):
        self.source = source
        self.field = field
        self.detail = message
        where = ": ".join(part for part in (source, field) if part)
        super().__init__(f"{where}: {message}" if where else message)


class UnknownNameError(NdpkitError):
    """A preset, application or option value that does not exist."""

    def __init__(
        self,
        kind: str,
        name: str,
        known: list[str],
        *,
        source: str | None = None,
        hint: str | None = None,
    ):
        self.kind = kind
        self.name = name
        self.known = known
        self.hint = hint
        self.source = source  # a caller that adds its own hint raises it again from the same
        message = f"unknown {kind} {name!r}; known: {', '.join(known) or '(none)'}"
        # A caller's hint knows better than a spelling guess ("knn8-topk is one of
        # ndpkit's kernels: measure it", not "did you mean 'knn8'?").
        guess = closest(name, known) if isinstance(name, str) and not hint else None
        if guess is not None:
            message += f"; did you mean {guess!r}?"
        elif hint:
            message += f"; {hint}"
        super().__init__(f"{source}: {message}" if source else message)


def closest(given: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The choice `given` most likely meant: the one it equals but for case ("CNS" for
    cns), else the nearest spelling (difflib's, at least `cutoff` alike), else None."""
    choices = [str(choice) for choice in choices]
    folded = [c for c in choices if c.casefold() == given.strip().casefold()]
    close = folded or difflib.get_close_matches(given, choices, n=1, cutoff=cutoff)
    return close[0] if close else None


class ModelError(NdpkitError):
    """A model was asked something its inputs cannot answer."""


def whole_number(
    value: object,
    name: str,
    expected: str,
    least: int | None = None,
    *,
    source: str | None = None,
) -> int:
    """`value` if it is an integer (not a bool, a float or a string) of at least `least`,
    else a SpecError naming the argument `name` (of `source`, where given) and saying what
    it must be (`expected`: "an integer ≥ 1")."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise SpecError(
            f"must be {expected}, got {value!r} ({type(value).__name__})", source=source, field=name
        )
    if least is not None and value < least:
        raise SpecError(f"must be {expected}, got {value}", source=source, field=name)
    return int(value)


def true_or_false(value: object, name: str, *, source: str | None = None) -> bool:
    """`value` if it is True or False (numpy's bool too), else a SpecError naming the
    argument `name` (of `source`): `overwrite="no"` is truthy, and replaced a data set."""
    import numpy as np  # noqa: PLC0415 - errors is imported by everything; numpy is slow

    if not isinstance(value, (bool, np.bool_)):
        raise SpecError(f"must be True or False, got {value!r}", source=source, field=name)
    return bool(value)


def check_kinds(
    *wanted: tuple[str, object, type | tuple[type, ...], str], source: str | None = None
) -> None:
    """Each argument (name, value, its type or types, what it must be) of its type, else a
    SpecError naming the first that is not: an object of another kind (a preset's name for
    the platform, one options class in another's place) ended deep inside in "'str' object
    has no attribute …". Give `type(None)` among the types of an argument that may be None."""
    for name, value, kind, expected in wanted:
        if not isinstance(value, kind):
            raise SpecError(
                f"must be {expected}, got {type(value).__name__}", source=source, field=name
            )


def as_path(value: object, name: str) -> Path:
    """`value` (a str or an os.PathLike) as a Path, else a SpecError naming the argument:
    bytes or a number ended in pathlib's TypeError."""
    if not isinstance(value, (str, os.PathLike)) or isinstance(os.fspath(value), bytes):
        raise SpecError(f"must be a path (a str or a pathlib.Path), got {value!r}", field=name)
    return Path(value)


def function_or_none(value: object, name: str, expected: str) -> None:
    """A SpecError naming the argument `name` unless `value` is None or callable
    (`expected`: "a function progress(done_bytes, total_bytes)"): a number given was called
    only once the work was under way, as "'int' object is not callable"."""
    if value is not None and not callable(value):
        raise SpecError(f"must be {expected}, or None; got {value!r}", field=name)


def finite_number(
    value: object,
    name: str,
    expected: str,
    *,
    least: float | None = None,
    above: float | None = None,
    source: str | None = None,
) -> float:
    """`value` if it is a finite real number (not a bool or a string) of at least `least`
    and more than `above`, else a SpecError naming the argument `name` (of `source`) and
    saying what it must be (`expected`: "a finite number > 0"). NaN fails every comparison."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise SpecError(f"must be {expected}, got {value!r}", source=source, field=name)
    try:
        number = float(value)
    except OverflowError:  # an int past float's range: not finite
        number = math.inf
    if not (
        math.isfinite(number)
        and (least is None or number >= least)
        and (above is None or number > above)
    ):
        raise SpecError(f"must be {expected}, got {value!r}", source=source, field=name)
    return number


def brief(exc: BaseException, limit: int = 200) -> str:
    """An underlying library's error, short enough to quote in ours: its first line, runs of
    blanks closed up (numpy quotes a damaged .npy header whole, 4 KiB of padding included),
    cut to `limit` characters; the exception's type if it has no message."""
    lines = str(exc).strip().splitlines()
    text = " ".join(lines[0].split()) if lines else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"
