"""Sort a real table by one column: NASCENT2's pipeline on Arrow tables read from and written
to Parquet, on M devices.

The stages are the paper's (spec §2.4, Flows A–C), whichever engine runs them:

1. **keys** — the key column becomes order-preserving integers (`keys.sort_keys`): its
   own integers, or its ranks in a sorted dictionary (the generic sort's renumbering).
2. **argsort** — sorted indices, per device partition, concurrently:
   - engine `host` (default): a stable LSD radix sort over only the key range's bits
     (`ndp_sort::host`); a dictionary of ≤ 2¹⁶ values is one counting pass, O(n);
   - engine `nascent2`: the bitonic sort kernel (spec §5) with the stable tie rule
     `value_then_index`, returning the hardware counts of Eq. 2/3. It sorts 32- or 64-bit
     integers and dictionary ranks. Each device's partition has a dictionary of its own,
     so a non-integer key is an error there when a device's partition has more than 2¹⁶
     distinct values, which it cannot dictionary encode (spec §3.2), whatever the type.
3. **merge** — optionally, the M sorted partitions merge into one global order
   (`ndp_sort::host::merge_runs`; the paper leaves this global merge out of scope).
4. **shuffle** — SortedTable[i] = Table[SortedIndices[i]] (Eq. 4): Arrow's gather. When
   the host engine merges to one output and the keys span at most `GROUP_LIMIT` values
   (`l_shipmode`'s 7 strings, a flag, a day of the week), the shuffle is one filter per key
   value instead, concatenated in key order: the same rows in the same order (a filter
   keeps row order, which is the stable tie rule), without the gather's random reads or the
   contiguous copy a gather needs first; with one device the argsort is then skipped too.

The tie rule is stable: rows with equal keys keep their original order, so the output is
DuckDB's `ORDER BY key, <row position>`; nulls go last as DuckDB places them by default.
"""

from __future__ import annotations

import itertools
import os
import re
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Any, Literal

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from numpy.typing import NDArray

from ndpkit.cpus import usable_cpus
from ndpkit.errors import ModelError, SpecError, brief
from ndpkit.files import (
    is_left_out,
    literal_path,
    path_order,
    replacing,
    signals_held,
    walk_real_dirs,
)
from ndpkit.nascent.bitonic import argsort as bitonic_argsort
from ndpkit.nascent.generic import generic_sort
from ndpkit.nascent.keys import DICTIONARY_LIMIT, SortKeys, sort_keys

_core: Any = import_module("ndpkit._core")  # the compiled extension has no type stub

Engine = Literal["host", "nascent2"]
ENGINES: tuple[Engine, ...] = ("host", "nascent2")
Progress = Callable[[str], None]
_STAGES = ("read", "keys", "argsort", "merge", "gather", "write")


@dataclass(frozen=True)
class Partition:
    """One device's rows [start, stop) and its sorted order (global row numbers, nulls
    last); `counts` are the device kernels' (decoder map, sort, decode) when engine
    `nascent2` sorted it."""

    device: int
    start: int
    stop: int
    order: NDArray[np.uint32] | None
    counts: dict[str, Any] | None = None

    @property
    def rows(self) -> int:
        return self.stop - self.start


@dataclass
class SortReport:
    """What a table sort did: sizes, the key encoding and the seconds of every stage."""

    rows: int
    columns: int
    by: str
    descending: bool
    engine: Engine
    devices: int
    merged: bool
    encoding: str
    key_bits: int
    distinct: int | None
    already_sorted: bool
    seconds: dict[str, float] = field(default_factory=dict)
    counts: list[dict[str, Any]] = field(default_factory=list)
    schema: Literal["polars", "input"] = "polars"
    """Whose Arrow types the output has: Polars' (large_string, all nullable) or the input's."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "columns": self.columns,
            "by": self.by,
            "descending": self.descending,
            "engine": self.engine,
            "devices": self.devices,
            "merged": self.merged,
            "key_encoding": self.encoding,
            "key_bits": self.key_bits,
            "distinct": self.distinct,
            "already_sorted": self.already_sorted,
            "seconds": dict(self.seconds),
            "kernel_counts": list(self.counts),
            "schema": self.schema,
        }


@contextmanager
def _stage(seconds: dict[str, float], name: str, progress: Progress | None) -> Iterator[None]:
    """Time one stage into `seconds[name]`, announcing it first."""
    if progress is not None:
        progress(name)
    start = time.perf_counter()
    try:
        yield
    finally:
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - start


def partition_bounds(rows: int, devices: int) -> list[tuple[int, int]]:
    """Contiguous, balanced row ranges, one per device, as the runtime shards tables."""
    if devices < 1:
        raise SpecError(f"need at least one device, got {devices}", field="--devices")
    edges = [rows * d // devices for d in range(devices + 1)]
    return list(itertools.pairwise(edges))


def _partition_order(
    keys: SortKeys, device: int, start: int, stop: int, engine: Engine, threads: int = 1
) -> Partition:
    part = keys.keys[start:stop]
    valid = None if keys.valid is None else keys.valid[start:stop]
    if engine == "host":
        local = _core.host_argsort(np.ascontiguousarray(part), valid, threads)
        if local is None:
            return Partition(device, start, stop, None)
        return Partition(device, start, stop, _shift(local, start))
    return _bitonic_partition(keys, part, valid, device, start, stop)


def _bitonic_partition(
    keys: SortKeys,
    part: NDArray[np.uint64],
    valid: NDArray[np.bool_] | None,
    device: int,
    start: int,
    stop: int,
) -> Partition:
    rows = np.arange(stop - start, dtype=np.uint32)
    present = rows if valid is None else rows[valid]
    values = part[present]
    if keys.encoding in ("integer", "decimal"):
        indices, counts = _flow_a(values, keys.key_bits)
    else:
        indices, counts = _flow_b(values)
    local = present[indices]
    if valid is not None:
        local = np.concatenate([local, rows[~valid]])
    return Partition(device, start, stop, _shift(local, start), {"device": device, **counts})


def _flow_a(values: NDArray[np.uint64], key_bits: int) -> tuple[NDArray[np.uint32], dict[str, Any]]:
    """Integer keys (spec Flow A): the sort kernel on 32-bit keys where they fit, else 64."""
    if key_bits <= 32 and (values.size == 0 or int(values.max()) < 1 << 32):
        values = values.astype(np.uint32)
    result = bitonic_argsort(values, tie_break="value_then_index")
    return result.indices, {"flow": "A", "sort": result.counts.as_dict()}


def _flow_b(values: NDArray[np.uint64]) -> tuple[NDArray[np.uint32], dict[str, Any]]:
    """Any other key (spec Flow B, the generic sort): dictionary encode, renumber through
    the sorted dictionary, map on the decoder, sort the NKeys, decode them back. The
    decoded keys must be the sorted keys: a check of the whole device pipeline. The
    dictionary's size was checked before any sort (`_check_dictionaries`)."""
    result = generic_sort(values, tie_break="value_then_index")
    if not np.array_equal(result.values, values[result.indices]):
        raise ModelError("the decoder's output disagrees with the sorted keys")
    counts = {
        "flow": "B",
        "decoder_placement": result.placement,
        "map": result.map_counts.as_dict(),
        "sort": result.sort_counts.as_dict(),
        "decode": None if result.decode_counts is None else result.decode_counts.as_dict(),
    }
    return result.indices, counts


def _shift(local: NDArray[np.uint32], start: int) -> NDArray[np.uint32]:
    return local + np.uint32(start) if start else local


def _check_engine(engine: str) -> Engine:
    if engine not in ENGINES:
        raise SpecError(
            f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}", field="--engine"
        )
    return "host" if engine == "host" else "nascent2"


def _check_dictionaries(keys: SortKeys, devices: int, by: str, source: str) -> None:
    """Engine `nascent2` sorts a non-integer key through its device's dictionary (Flow B).
    Each device's table has a dictionary page of its own, of at most 2¹⁶ values (spec
    §3.2), so the distinct values are counted per device partition, alike for every key
    type, and a partition with more is an error before any sort runs."""
    if keys.encoding in ("integer", "decimal"):
        return  # Flow A: the sort kernel takes the integers themselves
    if keys.distinct is not None and keys.distinct <= DICTIONARY_LIMIT:
        return  # the whole column fits one dictionary, so every partition's does
    for device, (start, stop) in enumerate(partition_bounds(len(keys), devices)):
        part = keys.keys[start:stop]
        if keys.valid is not None:
            part = part[keys.valid[start:stop]]
        distinct = int(np.unique(part).size)
        if distinct > DICTIONARY_LIMIT:
            where = f"has, on device {device} of {devices}," if devices > 1 else "has"
            raise SpecError(
                f"column {by!r} {where} {distinct} distinct values: more than the "
                f"{DICTIONARY_LIMIT} a device's 16-bit dictionary can number, so NASCENT2 "
                "cannot sort it on the device (spec §3.2); use --engine host",
                source=source,
                field="--engine",
            )


def argsort_partitions(
    keys: SortKeys, devices: int, engine: Engine, workers: int | None = None
) -> list[Partition]:
    """Each device's partition sorted concurrently (the Rust kernels release the GIL)."""
    bounds = partition_bounds(len(keys), devices)
    cpus = workers or usable_cpus()
    # Cores left over when there are fewer devices than cores split each radix pass.
    per_device = max(1, cpus // devices)
    jobs = [(keys, d, start, stop, engine, per_device) for d, (start, stop) in enumerate(bounds)]
    threads = min(len(jobs), cpus)
    if threads <= 1:
        return [_partition_order(*job) for job in jobs]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(lambda job: _partition_order(*job), jobs))


def merge_partitions(keys: SortKeys, parts: Sequence[Partition]) -> NDArray[np.uint32] | None:
    """One global order from the sorted partitions: a k-way merge of their valid rows, then
    every null in row order. None when every partition is in order and the whole is too."""
    if all(p.order is None for p in parts) and _in_order_across(keys, parts):
        return None
    runs, nulls = [], []
    for p in parts:
        order = p.order if p.order is not None else np.arange(p.start, p.stop, dtype=np.uint32)
        n_valid = p.rows if keys.valid is None else int(keys.valid[p.start : p.stop].sum())
        runs.append(np.ascontiguousarray(order[:n_valid]))
        nulls.append(order[n_valid:])
    merged = _core.host_merge_runs(keys.keys, runs)
    return np.concatenate([merged, *nulls]) if keys.valid is not None else merged


def _in_order_across(keys: SortKeys, parts: Sequence[Partition]) -> bool:
    """Whether partitions that are each in order are also in order end to end."""
    if keys.valid is not None and not keys.valid.all():
        return _core.host_argsort(keys.keys, keys.valid) is None
    edges = [(keys.keys[p.stop - 1], keys.keys[p.start]) for p in parts if p.rows]
    return all(prev_last <= first for (prev_last, _), (_, first) in itertools.pairwise(edges))


def gather(
    table: pl.DataFrame, order: NDArray[np.uint32] | None, workers: int | None = None
) -> pl.DataFrame:
    """The shuffle (Eq. 4) as Arrow's gather, a column per thread. A contiguous column
    gathers several times faster than a chunked one, so each column's chunks are joined
    first, one column at a time: the joined copy is short-lived and the table is never
    held three times over."""
    if order is None:
        return table
    index = pl.Series(order, dtype=pl.UInt32)

    def one(column: pl.Series) -> pl.Series:
        # Under a plain name: Polars gathers by `pl.col(name)`, a pattern for '^x$' (see
        # keys.sort_keys), which matched no column and ended the sort in a traceback.
        plain = column.rename("column")
        gathered = (plain.rechunk() if plain.n_chunks() > 1 else plain).gather(index)
        return gathered.rename(column.name)

    columns = table.get_columns()
    threads = min(len(columns), workers or usable_cpus())
    if threads <= 1:
        return pl.DataFrame([one(c) for c in columns])
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return pl.DataFrame(list(pool.map(one, columns)))


GROUP_LIMIT = 8
"""Keys spanning at most this many values are shuffled by one filter per value. On TPC-H
lineitem SF 1 a filter per value costs less CPU than the gather up to about 8 values and
more from about 16 (`benchmarks/README.md`, "ndpkit sort")."""


@dataclass(frozen=True)
class KeyGroups:
    """Each row's key as its rank among the key values (nulls after the last value): when
    the keys span few values, the sorted table is each group's rows in row order."""

    ids: NDArray[np.uint8]
    count: int

    def partition(self, table: pl.DataFrame) -> pl.DataFrame:
        ids = pl.Series(self.ids)
        return pl.concat([table.filter(ids == g) for g in range(self.count)], rechunk=False)


def key_groups(keys: SortKeys) -> KeyGroups | None:
    """The keys' groups when their values span at most GROUP_LIMIT keys, else None."""
    present = keys.keys if keys.valid is None else keys.keys[keys.valid]
    if len(present) == 0:
        return None
    low = present.min()
    span = int(present.max() - low) + 1
    if span > GROUP_LIMIT:
        return None
    # A null row's key is arbitrary and may lie below `low`; its wrapped id is overwritten.
    ids = (keys.keys - low).astype(np.uint8)
    if keys.valid is None:
        return KeyGroups(ids, span)
    ids[~keys.valid] = span
    return KeyGroups(ids, span + 1)


Order = NDArray[np.uint32] | KeyGroups | None
"""How an output's rows are ordered: sorted indices, key groups, or None (already in order)."""


@dataclass(frozen=True)
class SortPlan:
    """The sorted order of a table, before any row moves: one (start, stop, order) per
    output table."""

    outputs: list[tuple[int, int, Order]]
    report: SortReport


def plan_sort(
    table: pl.DataFrame,
    by: str,
    *,
    descending: bool = False,
    devices: int = 1,
    merge: bool = True,
    engine: str = "host",
    source: str = "table",
    progress: Progress | None = None,
) -> SortPlan:
    """Stages 1–3: keys, per-device argsort and the optional merge. With `merge` the plan
    has one output; otherwise one per device partition, in device order (one for one
    device, a partition all the same)."""
    if by not in table.columns:
        has = f"has {', '.join(table.columns)}" if table.columns else "has no columns"
        raise SpecError(f"no column {by!r}; the table {has}", source=source, field="--by")
    checked = _check_engine(engine)
    seconds: dict[str, float] = {}
    with _stage(seconds, "keys", progress):
        keys = sort_keys(table[by], descending=descending, source=source)
    if checked == "nascent2":
        _check_dictionaries(keys, devices, by, source)
    merged = merge
    # One device's partition is the whole table, merged or not.
    groups = key_groups(keys) if (merged or devices == 1) and checked == "host" else None
    outputs: list[tuple[int, int, Order]]
    with _stage(seconds, "argsort", progress):
        in_order = devices == 1 and checked == "host" and in_key_order(keys)
        # Nothing moves, or the filters are the whole sort: then no sorted indices are needed.
        skip = in_order or (groups is not None and devices == 1)
        parts = [] if skip else argsort_partitions(keys, devices, checked)
    if skip:
        outputs = [(0, table.height, None if in_order else groups)]
    elif merged:
        if devices == 1:
            order = parts[0].order  # one partition: nothing to merge, and no merge timed
        else:
            with _stage(seconds, "merge", progress):
                order = merge_partitions(keys, parts)
        outputs = [(0, table.height, order if order is None or groups is None else groups)]
    else:
        outputs = [(p.start, p.stop, _local(p)) for p in parts]
    report = SortReport(
        rows=table.height,
        columns=table.width,
        by=by,
        descending=descending,
        engine=checked,
        devices=devices,
        merged=merged,
        encoding=keys.encoding,
        key_bits=keys.key_bits,
        distinct=keys.distinct,
        already_sorted=all(order is None for _, _, order in outputs),
        seconds=seconds,
        counts=[p.counts for p in parts if p.counts is not None],
    )
    return SortPlan(outputs, report)


def in_key_order(keys: SortKeys) -> bool:
    """Whether the rows already are in the stable sort's order: keys non-decreasing and
    every null after the last valid row."""
    k = keys.keys
    if keys.valid is not None:
        n_valid = int(keys.valid.sum())
        if not keys.valid[:n_valid].all():
            return False
        k = k[:n_valid]
    return bool(np.all(k[1:] >= k[:-1]))


def apply_plan(
    table: pl.DataFrame, plan: SortPlan, progress: Progress | None = None
) -> list[pl.DataFrame]:
    """Stage 4, the shuffle: each output's rows in the planned order."""
    with _stage(plan.report.seconds, "gather", progress):
        return [
            _shuffle(
                table if (start, stop) == (0, table.height) else table.slice(start, stop - start),
                order,
            )
            for start, stop, order in plan.outputs
        ]


def _shuffle(table: pl.DataFrame, order: Order) -> pl.DataFrame:
    if isinstance(order, KeyGroups):
        return order.partition(table)
    return gather(table, order)


def sort_frame(
    table: pl.DataFrame,
    by: str,
    *,
    descending: bool = False,
    devices: int = 1,
    merge: bool = True,
    engine: str = "host",
    source: str = "table",
    progress: Progress | None = None,
) -> tuple[list[pl.DataFrame], SortReport]:
    """Sort `table` by column `by` in memory: `plan_sort` then `apply_plan`."""
    plan = plan_sort(
        table,
        by,
        descending=descending,
        devices=devices,
        merge=merge,
        engine=engine,
        source=source,
        progress=progress,
    )
    return apply_plan(table, plan, progress), plan.report


def _local(p: Partition) -> NDArray[np.uint32] | None:
    return None if p.order is None else p.order - np.uint32(p.start)


def parquet_inputs(path: Path) -> list[Path]:
    """A Parquet file, or every Parquet file under a directory in path order, numbers in
    names compared as numbers (`files.path_order`; a sharded
    table such as a data set's device-NN/ directories). A FIFO, device or socket is
    refused before any read: Polars' read of one would block, uninterruptibly, in native
    code. A directory named like a Parquet file is searched, not read as one too, and so is
    a symbolic link to a directory (`_walk`)."""
    if path.is_dir():
        entries, _ = _walk(path)
        # Numbers compared as numbers, as `data import` orders a table's parts: DuckDB and
        # pyarrow number theirs without padding (data_10 came before data_2), and a data
        # set of over 100 devices has device-100/ after device-99/: the order of the rows,
        # which a stable sort keeps among equal keys.
        files = sorted(
            (p for p in entries if p.suffix.lower() in (".parquet", ".pq")),
            key=lambda p: path_order(p.relative_to(path)),
        )
        if not files:
            raise SpecError("no .parquet files in this directory", source=str(path))
        for file in files:
            _check_regular(file)
            check_utf8(file)
        return files
    if not path.exists():
        raise SpecError("no such file", source=str(path))
    _check_regular(path)
    check_utf8(path)
    return [path]


def input_real_paths(path: Path) -> list[Path]:
    """The real paths of what the input `path` is read from: the file, or the directories
    a directory's files are read from (`path` and every directory under it, those reached
    through symbolic links included) and its Parquet files. An output that is one of these
    or lies in one of the directories would replace the input or be read as input by the
    next sort (see `ndpkit sort`'s --out)."""
    if not path.is_dir():
        return [Path(os.path.realpath(path))]
    entries, listed = _walk(path)
    files = [e for e in entries if e.suffix.lower() in (".parquet", ".pq")]
    return [*listed, *(Path(os.path.realpath(f)) for f in files)]


def _walk(root: Path) -> tuple[list[Path], list[Path]]:
    """Everything under the directory `root` but directories, and the real paths of the
    directories listed. A symbolic link to a directory is followed, as one to a file is:
    `Path.rglob` passed over it, and a data set whose device-NN/ shards link to other disks
    lost their rows without a word. Each real directory is listed once, so a link to an
    ancestor does not loop and no shard is read twice; a directory that cannot be listed
    is an error naming it, not a silent gap. Hidden names and those pyarrow and Spark pass
    over (`files.is_left_out`: a failed Spark job's `_temporary/`, a killed `data tpch`'s
    `.tpch-*/` staging directory) are left out, as `data import` leaves them out: their
    files would be read as more rows of the table."""
    entries: list[Path] = []
    listed: list[Path] = []

    def refuse(exc: OSError) -> None:
        where = exc.filename if exc.filename is not None else root
        raise SpecError(f"cannot read: {exc.strerror or exc}", source=str(where))

    for top, real, dirs, files in walk_real_dirs(root, refuse):
        listed.append(Path(real))
        dirs[:] = sorted(name for name in dirs if not is_left_out(name))
        entries.extend(Path(top, name) for name in files if not is_left_out(name))
    return entries, listed


def check_utf8(path: Path, field: str | None = None) -> None:
    """Refuse a path that is not UTF-8 (Linux allows any bytes but "/" in a name): Polars
    takes only UTF-8 paths, and a file named b"\\xff.parquet" ended the sort in a TypeError
    traceback, as input before any work and as output after all of it. The error names
    the part that is not: a relative path is opened from the current directory, whose own
    path ("rename it" sent the user to a file whose name was fine) may be the one."""
    full = literal_path(path)
    if _utf8(full):
        return
    given = os.fspath(path)
    if _utf8(given) and not os.path.isabs(given):
        why = (
            f"the current directory {os.getcwd()!r}, in which this relative path lies, is "
            "not valid UTF-8, and Polars opens only UTF-8 paths; run from another directory"
        )
    else:
        part = next(p for p in Path(given).parts if not _utf8(p))
        why = f"the path is not valid UTF-8 (at {part!r}), which Polars cannot open; rename it"
    raise SpecError(why, source=str(path), field=field)


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_regular(path: Path) -> None:
    """A regular file (through any symbolic link), or an error naming it."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise SpecError(f"cannot read: {exc.strerror or exc}", source=str(path)) from None
    if not stat.S_ISREG(mode):
        raise SpecError(
            "not a regular file (a FIFO, device or socket); give a Parquet file",
            source=str(path),
        )


def read_parquet(path: Path) -> pl.DataFrame:
    """The whole table, with a clear error naming the file when it is not valid Parquet, or
    naming the column when it is valid Parquet that Polars cannot load."""
    files = parquet_inputs(path)
    frames: list[pl.DataFrame] = []
    for file in files:
        frames.append(_read_file(file))
        if frames[-1].columns != frames[0].columns:
            # Said before the files after it are read: a directory of several tables (TPC-H's
            # eight) was read whole, into memory, before this error.
            read = files[: len(frames)]
            _, differ = _column_types(read, frames)
            raise (
                differ
                or _schemas_differ(read, frames)
                or SpecError("the files' columns differ", source=str(file))
            )
    if len(frames) == 1:
        return frames[0]
    # Columns are matched before the concatenation, which cast every decimal (in lists and
    # structs too) to the first file's precision and scale (123456789012.345 became null,
    # 2.999 became 3.00), and took an all-null column (type Null, or a list of Null) only
    # after a typed one. Null fits any type; any other difference is refused, naming it.
    types, differ = _column_types(files, frames)
    if differ is not None:
        raise differ
    try:
        frames = [_typed(frame, types) for frame in frames]
        return pl.concat(frames, how="vertical", rechunk=False)
    except pl.exceptions.PolarsError as exc:
        raise _schemas_differ(files, frames) or SpecError(
            f"the files' schemas differ: {brief(exc)}", source=str(path)
        ) from exc


def _read_file(file: Path) -> pl.DataFrame:
    """One file as Polars reads it, checked first against what its footer shows Polars
    would refuse, panic on or read wrongly, and with its INT96 columns read again. The
    footer is read once, here, for every check: each check opening the file itself read
    it four times, which made a directory of 500 small shards 35-40 % slower to read."""
    with _footer(file) as footer:
        int96: list[str] = []
        if footer is not None:
            # Polars panics on some types, printing a Rust backtrace: the schema says first.
            unloadable = _unloadable(file, footer)
            if unloadable is not None:
                raise unloadable
            _check_seconds(file, footer)
            int96 = _int96_columns(footer)
        try:  # glob=False: a file named x[1].parquet was read as the pattern, x1.parquet
            frame = pl.read_parquet(literal_path(file), glob=False)
        except (pl.exceptions.PolarsError, OSError) as exc:
            raise SpecError(f"not a readable Parquet file: {brief(exc)}", source=str(file)) from exc
        except pl.exceptions.PanicException as exc:  # a BaseException: it was a traceback
            damage = _damage(file, footer)
            if damage is not None:
                raise SpecError(
                    f"not a readable Parquet file: {brief(damage)}", source=str(file)
                ) from None
            raise SpecError(
                f"Polars cannot load this file ({brief(exc)})", source=str(file)
            ) from None
        if footer is None or not int96:
            return frame
        return _int96_read(file, frame, footer.parquet, int96)


def _damage(file: Path, footer: _Footer | None) -> Exception | None:
    """Why pyarrow cannot read `file` either, row group by row group, or None if it can.
    Asked only once Polars has panicked: a damaged page (an unknown encoding, a bit width
    of 219) panics Polars as an unloadable type does, and "Polars cannot load this file"
    sent the user looking for a type Polars lacks in a file that is simply damaged. Without
    a footer pyarrow can read (one typing a 128-bit integer) there is no second opinion."""
    if footer is None:
        return None
    try:
        for group in range(footer.parquet.num_row_groups):
            footer.parquet.read_row_group(group)
    except _UNREADABLE as exc:
        return exc
    return None


@dataclass(frozen=True)
class _Footer:
    """A Parquet file opened by pyarrow (INT96 in milliseconds: see `_int96_read`), its
    Arrow schema and its Parquet leaf columns, each taken once: pyarrow builds the Arrow
    schema anew on every `schema_arrow` (42 µs a 16-column file, a tenth of the checks)."""

    parquet: pq.ParquetFile
    schema: pa.Schema
    leaves: list[pq.ColumnSchema]


@contextmanager
def _footer(file: Path) -> Iterator[_Footer | None]:
    """`file`'s footer, or None when pyarrow cannot read it or its Arrow schema: Polars'
    read then says why, or reads what pyarrow cannot type (a 128-bit integer)."""
    parquet = None
    try:
        parquet = pq.ParquetFile(literal_path(file), coerce_int96_timestamp_unit="ms")
        schema = parquet.schema_arrow
        leaves = [parquet.schema.column(i) for i in range(len(parquet.schema))]
    except _UNREADABLE:
        if parquet is not None:
            parquet.close()
        parquet = None
    if parquet is None:
        yield None
        return
    with parquet:
        yield _Footer(parquet, schema, leaves)


_UNREADABLE = (pa.ArrowException, OSError, ValueError)
"""What pyarrow raises on a damaged Parquet file: Arrow's errors, an OSError for a page it
cannot decode ("Couldn't deserialize thrift", "Unsupported compression codec") and a
UnicodeDecodeError (a ValueError) for a column name that is not UTF-8."""


def _read_columns(file: Path, parquet: pq.ParquetFile, names: list[str]) -> pa.Table:
    """`names` read by pyarrow from `file` (opened as `parquet`), or an error naming the
    file: a damaged page ended the sort in a traceback where Polars' read would have said
    "not a readable Parquet file", as the footer checks read pages before Polars does."""
    try:
        return parquet.read(columns=names)
    except _UNREADABLE as exc:
        raise SpecError(f"not a readable Parquet file: {brief(exc)}", source=str(file)) from exc


_US_LIMIT_MS = (2**63 - 1) // 10**3 - 1
"""The largest |milliseconds| since the epoch a 64-bit microsecond timestamp holds, less
one: a value within a millisecond of the edge is taken as beyond it."""


def _int96_read(
    file: Path, frame: pl.DataFrame, parquet: pq.ParquetFile, names: list[str]
) -> pl.DataFrame:
    """`frame` (Polars' read of `file`) with its INT96 timestamps (Spark's, Hive's,
    Impala's) read again by pyarrow in microseconds, DuckDB's precision for INT96, nested
    ones included. Always in microseconds, whatever the values: Polars reads INT96 in
    nanoseconds and clamps a value outside 1677-2262 to the largest one (1500-01-01 and
    3000-01-01 both became 2262-04-11, sorted as equal), and a unit chosen per file by its
    values made shards disagree (a directory where only some shards hold Hive's 9999-12-31
    was refused as Datetime(us) against Datetime(ns)). Microseconds also tie values that
    differ below the microsecond, as DuckDB's ORDER BY ties them. A value beyond what
    microseconds hold is an error naming the column. `parquet` is `file` opened with
    INT96 in milliseconds; `names` are its columns holding INT96."""
    # Milliseconds first (`parquet` reads them so): an INT96's day is 32 bits, which fit in
    # milliseconds but not in microseconds, where pyarrow wraps them silently.
    wide = _read_columns(file, parquet, names)
    for name in names:
        low, high = _extremes(wide.column(name), pa.types.is_timestamp)
        if low is None or high is None:
            continue
        if low < -_US_LIMIT_MS or high > _US_LIMIT_MS:
            raise SpecError(
                "holds an INT96 timestamp more than 290,000 years from 1970, beyond what a "
                "64-bit timestamp in microseconds holds",
                source=str(file),
                field=name,
            )
    # The footer already read is passed on: the file is opened again, not parsed again.
    with pq.ParquetFile(
        literal_path(file), metadata=parquet.metadata, coerce_int96_timestamp_unit="us"
    ) as micro:
        exact = _read_columns(file, micro, names)
    return frame.with_columns(_micro_column(exact.column(name), frame[name]) for name in names)


def _micro_column(column: pa.ChunkedArray, polars_read: pl.Series) -> pl.Series:
    """pyarrow's microsecond read of an INT96 column as a Polars column whose every other
    part has the type Polars' own read gave it: `pl.from_arrow` misread a decimal64 beside
    a nested INT96 (1.50 as 9.66e9, then a panic in the write) and took a date64 for a date.
    Timestamps keep pyarrow's unit (microseconds for INT96) and Polars' time zone (pyarrow
    reads INT96 without one; the values are UTC)."""
    wanted = _with_units_of(polars_read.to_arrow().type, column.type)
    series = pl.from_arrow(column if wanted == column.type else column.cast(wanted))
    assert isinstance(series, pl.Series)
    return series.alias(polars_read.name)


def _with_units_of(polars: pa.DataType, micro: pa.DataType) -> pa.DataType:
    """`polars` (the Arrow type of Polars' read) with each timestamp in `micro`'s unit."""
    if pa.types.is_timestamp(polars) and pa.types.is_timestamp(micro):
        return pa.timestamp(micro.unit, polars.tz)
    ours, theirs = _children(polars), _children(micro)
    if not ours or len(ours) != len(theirs):
        return polars
    pairs = zip(ours, theirs, strict=True)
    return _with_children(polars, [f.with_type(_with_units_of(f.type, m.type)) for f, m in pairs])


def _children(kind: pa.DataType) -> list[pa.Field]:
    """The fields a nested type holds (a struct's, a map's key and item, a list's value)."""
    if pa.types.is_struct(kind):
        return [kind.field(i) for i in range(kind.num_fields)]
    if pa.types.is_map(kind):
        return [kind.key_field, kind.item_field]
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return [kind.value_field]
    return []


def _with_children(kind: pa.DataType, fields: list[pa.Field]) -> pa.DataType:
    """The nested type `kind` holding `fields` instead (as `_children` lists them)."""
    if pa.types.is_struct(kind):
        return pa.struct(fields)
    if pa.types.is_map(kind):
        return pa.map_(fields[0], fields[1], kind.keys_sorted)
    if pa.types.is_fixed_size_list(kind):
        return pa.list_(fields[0], kind.list_size)
    return pa.large_list(fields[0]) if pa.types.is_large_list(kind) else pa.list_(fields[0])


_SECONDS_LIMIT = (2**63 - 1) // 1000
"""The largest |duration[s]| whose milliseconds fit in 64 bits."""


def _is_seconds(kind: pa.DataType) -> bool:
    return pa.types.is_duration(kind) and bool(kind.unit == "s")


def _check_seconds(file: Path, footer: _Footer) -> None:
    """Refuse a duration[s] value Polars cannot hold. Polars has no seconds: it reads them
    as milliseconds, and a value beyond ±(2⁶³-1)/1000 s wrapped silently (10¹⁶ s became
    -8.4·10¹⁸ ms and sorted first). `footer` is `file`'s."""
    names = [c.name for c in footer.schema if any(map(_is_seconds, _nested_types(c.type)))]
    if not names:
        return
    table = _read_columns(file, footer.parquet, names)
    for name in names:
        low, high = _extremes(table.column(name), _is_seconds)
        if low is not None and high is not None and max(-low, high) > _SECONDS_LIMIT:
            raise SpecError(
                f"holds a duration of {low if -low > high else high} s, beyond the "
                f"±{_SECONDS_LIMIT} s whose milliseconds Polars can hold",
                source=str(file),
                field=name,
            )


def _int96_columns(footer: _Footer) -> list[str]:
    """The top-level columns that hold an INT96 leaf, nested ones included."""
    return _columns_holding(footer, lambda leaf: bool(leaf.physical_type == "INT96"))


def _is_interval(leaf: pq.ColumnSchema) -> bool:
    """A Parquet INTERVAL (DuckDB's), which pyarrow reads as fixed_size_binary[12]."""
    return bool(leaf.converted_type == "INTERVAL" or leaf.logical_type.type == "INTERVAL")


def _columns_holding(footer: _Footer, test: Callable[[pq.ColumnSchema], bool]) -> list[str]:
    """The top-level columns with a Parquet leaf column that passes `test`, nested ones
    included."""
    leaves, fields = footer.leaves, list(footer.schema)
    hits = [test(leaf) for leaf in leaves]
    if not any(hits):
        return []
    names, start = [], 0
    for column in fields:
        width = _leaf_count(column.type)
        if any(hits[start : start + width]):
            names.append(column.name)
        start += width
    if start != len(leaves):  # leaves counted otherwise than Parquet's: match their paths
        paths = [leaf.path for leaf, hit in zip(leaves, hits, strict=True) if hit]
        return [
            c.name
            for c in fields
            if any(path == c.name or path.startswith(f"{c.name}.") for path in paths)
        ]
    return names


def _leaf_count(kind: pa.DataType) -> int:
    """How many Parquet leaf columns an Arrow type is stored in."""
    if isinstance(kind, pa.BaseExtensionType):
        return _leaf_count(kind.storage_type)
    if pa.types.is_dictionary(kind) or kind.num_fields == 0:
        return 1
    return sum(_leaf_count(kind.field(i).type) for i in range(kind.num_fields))


def _extremes(
    column: pa.ChunkedArray, wanted: Callable[[pa.DataType], bool]
) -> tuple[int | None, int | None]:
    """The least and greatest physical integer of `column`'s leaves of a `wanted` type,
    nested ones included; None where there is none."""
    low: int | None = None
    high: int | None = None
    for chunk in column.chunks:
        for leaf in _leaves(chunk, wanted):
            found = pc.min_max(leaf.cast(pa.int64()))
            least, most = found["min"].as_py(), found["max"].as_py()
            if least is not None:
                low = least if low is None else min(low, least)
                high = most if high is None else max(high, most)
    return low, high


def _leaves(array: pa.Array, wanted: Callable[[pa.DataType], bool]) -> Iterator[pa.Array]:
    """Every array of a `wanted` type in `array`: itself, its struct fields, its list
    values, its map keys and items, its dictionary, its extension storage."""
    kind = array.type
    if wanted(kind):
        yield array
    elif isinstance(array, pa.ExtensionArray):
        yield from _leaves(array.storage, wanted)
    elif isinstance(array, pa.DictionaryArray):
        yield from _leaves(array.dictionary, wanted)
    elif isinstance(array, pa.StructArray):
        for i in range(kind.num_fields):
            yield from _leaves(array.field(i), wanted)
    elif isinstance(array, pa.MapArray):
        yield from _leaves(array.keys, wanted)
        yield from _leaves(array.items, wanted)
    elif isinstance(array, pa.ListArray | pa.LargeListArray | pa.FixedSizeListArray):
        yield from _leaves(array.flatten(), wanted)


POLARS_DECIMAL_DIGITS = 38
"""The widest decimal Polars loads (its decimals are 128-bit)."""


def _unloadable(file: Path, footer: _Footer) -> SpecError | None:
    """Why Polars could not load `file` when its schema, as pyarrow reads it, shows the
    cause: two columns of one name, an interval, a list view, a time zone of part of an
    hour, or a decimal wider than Polars' (decimal256(40, 0)). `footer` is `file`'s.
    None when the schema shows nothing of the kind."""
    schema = footer.schema
    names = schema.names
    twice, seen = None, set()  # a set: `names[:i]` per column was quadratic in the columns
    for name in names:
        if name in seen:
            twice = name
            break
        seen.add(name)
    if twice is not None:
        return SpecError(
            f"two columns are named {twice!r}; a table's column names must differ",
            source=str(file),
            field=twice,
        )
    # Polars panics on an INTERVAL anywhere in the file, printing a Rust backtrace before
    # an error that named no column.
    interval = next(iter(_columns_holding(footer, _is_interval)), None)
    if interval is not None:
        return SpecError(
            "unsupported type INTERVAL: Polars cannot read intervals, nested ones included "
            "(write the column as a string, or its parts as integers)",
            source=str(file),
            field=interval,
        )
    for column in schema:
        kinds = list(_nested_types(column.type))  # Polars panics on these also nested
        if any(pa.types.is_list_view(t) or pa.types.is_large_list_view(t) for t in kinds):
            return SpecError(
                f"unsupported type {column.type}: Polars cannot read list views (write the "
                "column as a list)",
                source=str(file),
                field=column.name,
            )
        zones = [t.tz for t in kinds if pa.types.is_timestamp(t) and t.tz]
        for zone in zones:
            offset = re.fullmatch(r"[+-]\d\d:?(\d\d)", zone)
            if offset is not None and offset.group(1) != "00":  # whole hours: Etc/GMT±h
                return SpecError(
                    f"time zone {zone!r} is an offset of part of an hour, which Polars "
                    "cannot read; write the column with a named zone (Asia/Kolkata for "
                    "+05:30)",
                    source=str(file),
                    field=column.name,
                )
            if not _polars_knows_zone(zone):
                return SpecError(
                    f"time zone {zone!r} is not one Polars can read; write the column with a "
                    "named zone (Europe/Paris, UTC) or an offset of whole hours from -12:00 "
                    "to +14:00",
                    source=str(file),
                    field=column.name,
                )
        if pa.types.is_decimal(column.type) and column.type.precision > POLARS_DECIMAL_DIGITS:
            return SpecError(
                f"unsupported type {column.type}: decimals of up to {POLARS_DECIMAL_DIGITS} "
                "digits can be read",
                source=str(file),
                field=column.name,
            )
    return None


def _polars_knows_zone(zone: str) -> bool:
    """Whether Polars reads a timestamp in the time zone `zone`. Polars' read of a file
    panicked on one it does not know (+15:00, +08, Z, a misspelt name), printing a Rust
    panic before an error that named no column; an empty array of it only raises."""
    try:
        pl.from_arrow(pa.array([], pa.timestamp("us", zone)))
    except pl.exceptions.PolarsError:
        return False
    return True


def _nested_types(kind: pa.DataType) -> Iterator[pa.DataType]:
    """`kind` and every type nested in it (struct fields, list and map values, dictionary
    values)."""
    yield kind
    if pa.types.is_dictionary(kind):
        yield from _nested_types(kind.value_type)
    for i in range(kind.num_fields):
        yield from _nested_types(kind.field(i).type)


def _column_types(
    files: Sequence[Path], frames: Sequence[pl.DataFrame]
) -> tuple[dict[str, Any], SpecError | None]:
    """Each column's type across the files (Null parts filled in from the others), or an
    error naming the first file whose type does not fit, and the earlier file it conflicts
    with, each with its own type."""
    types: dict[str, Any] = {}
    seen: dict[str, list[tuple[Path, Any]]] = {}
    for file, frame in zip(files, frames, strict=True):
        for name, dtype in frame.schema.items():
            before = seen.setdefault(name, [])
            merged = dtype if not before else _merged_type(types[name], dtype)
            if merged is None:
                other, theirs = next(
                    ((f, t) for f, t in before if _merged_type(t, dtype) is None),
                    (before[0][0], types[name]),
                )
                return types, SpecError(
                    f"column {name!r} is {dtype}, but {theirs} in {other.name}; every file of "
                    "a table needs the same columns and types",
                    source=str(file),
                )
            types[name] = merged
            before.append((file, dtype))
    return types, None


_UNITS = ("ns", "us", "ms")
"""Polars' time units, finest first."""


def _merged_type(ours: Any, theirs: Any) -> Any:
    """The type both fit (Null fits any, also inside lists and structs), or None."""
    if ours == theirs:
        return ours
    if ours == pl.Null:
        return theirs
    if theirs == pl.Null:
        return ours
    if {_string_kind(ours), _string_kind(theirs)} == {"categorical", "string"}:
        # One shard's dictionary<string> (pyarrow's Arrow schema in the footer makes it
        # Categorical) beside another's plain strings: the same Parquet strings, which
        # DuckDB reads alike; as String both keep every value.
        return pl.String
    if isinstance(ours, pl.Datetime) and isinstance(theirs, pl.Datetime):
        # One shard's INT96 (read in microseconds) beside another's timestamp[ns]: the
        # coarser unit holds both (DuckDB reads them alike), the finer one is truncated.
        if ours.time_zone != theirs.time_zone:
            return None
        unit = max(ours.time_unit, theirs.time_unit, key=_UNITS.index)
        return pl.Datetime(unit, ours.time_zone)
    if isinstance(ours, pl.List) and isinstance(theirs, pl.List):
        inner = _merged_type(ours.inner, theirs.inner)
        return None if inner is None else pl.List(inner)
    if isinstance(ours, pl.Array) and isinstance(theirs, pl.Array):
        # One dimension at a time: `inner` is itself an Array where the shape has more.
        inner = _merged_type(ours.inner, theirs.inner)
        same = ours.size == theirs.size
        return None if inner is None or not same else pl.Array(inner, ours.size)
    if isinstance(ours, pl.Map) and isinstance(theirs, pl.Map):
        key, value = _merged_type(ours.key, theirs.key), _merged_type(ours.value, theirs.value)
        return None if key is None or value is None else pl.Map(key, value)
    if isinstance(ours, pl.Struct) and isinstance(theirs, pl.Struct):
        if [f.name for f in ours.fields] != [f.name for f in theirs.fields]:
            return None
        pairs = zip(ours.fields, theirs.fields, strict=True)
        fields = [_merged_type(a.dtype, b.dtype) for a, b in pairs]
        if any(f is None for f in fields):
            return None
        return pl.Struct([pl.Field(a.name, f) for a, f in zip(ours.fields, fields, strict=True)])
    return None


def _string_kind(dtype: Any) -> str | None:
    """ "categorical", "string", or None for any other type."""
    if isinstance(dtype, pl.Categorical):
        return "categorical"
    return "string" if dtype == pl.String else None


def _typed(frame: pl.DataFrame, types: dict[str, Any]) -> pl.DataFrame:
    """`frame` with its Null parts cast to the types the other files give them (and its
    Categorical strings to String where another file's are plain)."""
    # By position: `pl.col(name)` reads a name such as '^x$' as a pattern.
    return frame.with_columns(
        pl.nth(i).cast(types[name])
        for i, (name, dtype) in enumerate(frame.schema.items())
        if name in types and dtype != types[name]
    )


def _schemas_differ(files: Sequence[Path], frames: Sequence[pl.DataFrame]) -> SpecError | None:
    """Which file's columns differ from the first file's, and how, in the user's terms
    (their types are `_column_types`' to compare)."""
    first = dict(frames[0].schema)
    for file, frame in zip(files[1:], frames[1:], strict=True):
        theirs = dict(frame.schema)
        if list(theirs) != list(first):
            missing = [c for c in first if c not in theirs]
            extra = [c for c in theirs if c not in first]
            what = (
                f"lacks column {missing[0]!r}"
                if missing
                else f"has a column {extra[0]!r}"
                if extra
                else "has the same columns in another order"
            )
            return SpecError(
                f"{what}, where {files[0].name} has {list(first)}; every file of a table needs "
                "the same columns and types",
                source=str(file),
            )
    return None


def part_paths(out: Path, devices: int) -> Iterator[Path]:
    """Where an unmerged multi-device sort writes device d's partition."""
    for d in range(devices):
        yield out / f"device-{d:02d}" / "part-0000.parquet"


def check_output(out: Path, *, partitions: bool) -> None:
    """Refuse, before any work, an `--out` whose replacement would destroy something that is
    not a previous output of the same kind: a directory where one file goes, or a directory
    holding anything but device-NN/part-*.parquet where partitions go; and a path Polars
    cannot write (`check_utf8`)."""
    check_utf8(out, "--out")
    if not out.is_dir() or out.is_symlink():
        if partitions and out.exists():
            raise SpecError(
                "exists and is not a directory of partitions", source=str(out), field="--out"
            )
        return
    if not partitions:
        raise SpecError(
            "is a directory; name the sorted file to write", source=str(out), field="--out"
        )
    foreign = [p for p in out.rglob("*") if not _partition_entry(out, p)]
    if foreign:
        raise SpecError(
            f"holds {foreign[0].relative_to(out)}, which no sort wrote; remove it or choose "
            "another directory",
            source=str(out),
            field="--out",
        )


_PARTITION_DIR = re.compile(r"device-\d{2,}")


def _partition_entry(out: Path, path: Path) -> bool:
    """Whether `path` under `out` is what an unmerged sort writes: device-NN/*.parquet."""
    parts = path.relative_to(out).parts
    if not _PARTITION_DIR.fullmatch(parts[0]):
        return False
    return (len(parts) == 1 and path.is_dir()) or (len(parts) == 2 and path.suffix == ".parquet")


ROW_GROUP_ROWS = 122_880
"""Rows per Parquet row group: DuckDB's default, so both tools' files have the same layout."""


def input_schema(path: Path, table: pl.DataFrame) -> pa.Schema:
    """The Arrow schema that `--keep-schema` writes: the one every input file declares, which
    `table` (the files as Polars read them) must cast back to. Polars reads every string as
    `large_string` and makes every column nullable; casting back gives a reader of the
    output the schema it gave, `string` and non-null columns included. Table-level metadata
    (pandas' index, for one) is dropped: it describes the input's rows, not the sorted ones.
    Checked before the sort, so a schema that cannot be kept is an error, not a sort spent:
    files that declare different schemas, or a column that does not cast back from Polars'
    type. A type can fail (a list where int8 is declared), and so can values (one the
    declared type cannot hold). Row 0 and, for a column of numbers or times, its least and
    greatest values are cast: a cast of those is monotone, so the others fit if they do. INT96
    timestamps are declared in microseconds, the unit `read_parquet` reads them in:
    pyarrow's schema says nanoseconds by default, which refused 9999-12-31 (Hive's marker)
    as not casting back, and a nested one only after the whole sort."""
    files = parquet_inputs(path)
    schemas = []
    for file in files:
        try:
            with pq.ParquetFile(literal_path(file), coerce_int96_timestamp_unit="us") as parquet:
                schemas.append(parquet.schema_arrow.remove_metadata())
        except _UNREADABLE as exc:
            if "more than 64 bits" in str(exc):  # Polars reads it; pyarrow cannot say its type
                raise SpecError(
                    "has a 128-bit integer column, whose type pyarrow cannot read, so its "
                    "schema cannot be kept; sort it without --keep-schema",
                    source=str(file),
                    field="--keep-schema",
                ) from None
            raise SpecError(f"not a readable Parquet file: {brief(exc)}", source=str(file)) from exc
    for file, schema in zip(files, schemas, strict=True):
        if not schema.equals(schemas[0]):
            raise SpecError(
                f"declares a schema other than {files[0].name}'s, so no one schema can be kept",
                source=str(file),
                field="--keep-schema",
            )
    # A row, not an empty table: pyarrow casts an empty array between any two types, so
    # an arrow.json column passed this check and failed after the whole sort.
    schema = _widened(schemas[0], table)
    # Polars builds `table.schema` (and `table.columns`) anew on each call: asked once per
    # column, a table of 4,000 columns spent 25 s here, against 0.2 s for its whole read.
    polars_types = table.schema
    for name, wanted in zip(schema.names, schema.types, strict=True):
        # The sample below panicked Polars on one (a traceback where docs/sort.md promises
        # this error), and pyarrow casts no extension type nested in another back anyway.
        if name in polars_types and _nested_extension(polars_types[name]):
            raise SpecError(
                f"column {name!r} is {wanted} in the input, and an extension type nested in "
                "a list, struct, array or map does not cast back from Polars' types; sort "
                "it without --keep-schema (the output is then in Polars' types)",
                source=str(files[0]),
                field="--keep-schema",
            )
    sample = _cast_sample(table).to_arrow()
    for name, wanted in zip(schema.names, schema.types, strict=True):
        try:
            cast_column(sample.column(name), wanted)
        except pa.ArrowException as exc:  # an invalid cast, an unsupported one, or a type error
            have = sample.schema.field(name).type
            raise _not_cast_back(name, wanted, have, exc, str(files[0])) from exc
    return schema


def _widened(schema: pa.Schema, table: pl.DataFrame) -> pa.Schema:
    """`schema` with dictionary index types widened where the sorted rows may need more.
    Row groups may hold dictionaries of their own (200 values in all, under int8 indices);
    the sorted rows mix them, and int8 cannot number the merged dictionary: the write gave
    a file no reader could open, or failed after the sort. A top-level dictionary column's
    index becomes the narrowest of its signedness that numbers the column's distinct
    values. One nested in a list, struct or map (list<dictionary<int8, string>>) has its
    distinct values counted nowhere as cheaply, so an index narrower than 32 bits becomes
    int32 (uint32), Arrow's default, which numbers 2³¹ values: more than any one column's
    nested dictionary holds in memory in practice."""
    names = set(table.columns)  # once: Polars makes the list anew on every call
    for i, column in enumerate(schema):
        kind = column.type
        if column.name not in names:
            continue
        if not pa.types.is_dictionary(kind):
            nested = _nested_widened(kind)
            if nested != kind:
                schema = schema.set(i, column.with_type(nested))
            continue
        # Renamed: Polars drops nulls by `pl.col(name)`, a pattern for '^x$'.
        distinct = table[column.name].rename("column").drop_nulls().n_unique()
        signed = pa.types.is_signed_integer(kind.index_type)
        wider = [t for t in _INDEX_TYPES[signed] if t.bit_width >= kind.index_type.bit_width]
        index = next(t for t in wider if distinct <= 1 << (t.bit_width - signed))
        if index != kind.index_type:
            widened = pa.dictionary(index, kind.value_type, kind.ordered)
            schema = schema.set(i, column.with_type(widened))
    return schema


_NESTED_INDEX_BITS = 32


def _nested_widened(kind: pa.DataType) -> pa.DataType:
    """`kind` with every dictionary nested in it indexed by at least 32 bits, of the same
    signedness (see `_widened`); the fields keep their names, nullability and metadata."""
    if pa.types.is_dictionary(kind):
        index = kind.index_type
        if index.bit_width < _NESTED_INDEX_BITS:
            index = pa.int32() if pa.types.is_signed_integer(index) else pa.uint32()
        return pa.dictionary(index, kind.value_type, kind.ordered)
    fields = _children(kind)
    if not fields:
        return kind
    return _with_children(kind, [f.with_type(_nested_widened(f.type)) for f in fields])


_INDEX_TYPES = {
    True: [pa.int8(), pa.int16(), pa.int32(), pa.int64()],
    False: [pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()],
}


def _cast_sample(table: pl.DataFrame) -> pl.DataFrame:
    """Row 0, then each column's least and greatest value where it has an order that every
    cast back keeps (numbers, decimals, dates and times), else row 0 again."""

    def pick(i: int, dtype: Any, extreme: str) -> pl.Expr:
        # By position: `pl.col(name)` reads a name such as '^x$' as a pattern, which matched
        # no column (a sample a column short, and a traceback).
        ordered = dtype.is_numeric() or dtype.is_temporal() or isinstance(dtype, pl.Decimal)
        return getattr(pl.nth(i), extreme)() if ordered else pl.nth(i).first()

    types = table.schema.values()
    picks = [table.select(pick(i, t, e) for i, t in enumerate(types)) for e in ("min", "max")]
    return pl.concat([table.head(1), *picks])


def _not_cast_back(
    name: str, wanted: pa.DataType, have: pa.DataType, exc: Exception, source: str
) -> SpecError:
    return SpecError(
        f"column {name!r} is {wanted} in the input, and Polars reads it as {have}, which "
        f"does not cast back ({brief(exc)})",
        source=source,
        field="--keep-schema",
    )


def cast_column(column: pa.ChunkedArray, wanted: pa.DataType) -> pa.ChunkedArray:
    """`column` cast to `wanted`. An extension type (arrow.json, arrow.uuid) that Polars
    read back on other storage (large_string for string) is cast storage first: pyarrow
    casts no extension type to another."""
    have = column.type
    if (
        isinstance(wanted, pa.BaseExtensionType)
        and isinstance(have, pa.BaseExtensionType)
        and have != wanted
        and have.extension_name == wanted.extension_name
    ):
        chunks = [
            wanted.wrap_array(chunk.storage.cast(wanted.storage_type)) for chunk in column.chunks
        ]
        return pa.chunked_array(chunks, type=wanted)
    return column.cast(wanted)


def _cast(table: pa.Table, schema: pa.Schema, source: str) -> pa.Table:
    """`table` cast to `schema`, column by column as `cast_column` casts; a column that does
    not cast back is an error naming it and `source`, the input. `input_schema` checked
    the values that can fail before the sort; this is for any it could not foresee."""
    columns = []
    for f in schema:
        column = table.column(f.name)
        try:
            columns.append(cast_column(column, f.type))
        except pa.ArrowException as exc:
            raise _not_cast_back(f.name, f.type, column.type, exc, source) from exc
    return pa.Table.from_arrays(columns, schema=schema)


def write_sorted(
    outputs: Sequence[pl.DataFrame],
    out: Path,
    *,
    partitions: bool = False,
    compression: str = "snappy",
    schema: pa.Schema | None = None,
    overwrite: bool = True,
    source: str = "table",
) -> None:
    """Write one sorted table to the file `out`, or with `partitions` each device's
    partition under the directory `out` (device-NN/part-0000.parquet), one device's too;
    whole or not at all. Polars writes them in its own types; with a `schema` (from
    `input_schema`), pyarrow writes them cast back to it. Without `overwrite`, an output
    another run wrote at `out` meanwhile is an error, not replaced. `source` names the input
    in errors."""
    if not partitions and len(outputs) != 1:
        raise ValueError(f"one table goes to a file, not {len(outputs)}")
    with replacing(out, overwrite=overwrite, field="--out") as tmp:
        if not partitions:
            _write_frame(outputs[0], tmp, compression, schema, source)
            return
        for frame, path in zip(outputs, part_paths(tmp, len(outputs)), strict=True):
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_frame(frame, path, compression, schema, source)


def _os_error(exc: Exception) -> Exception:
    """Polars reports a failed write (a full disk, `ulimit -f`) as a ComputeError ending in
    "(os error N)": the OSError it was, which the caller reports as one line; any other
    ComputeError as it is."""
    found = re.search(r"\(os error (\d+)\)", str(exc))
    if found is None:
        return exc
    code = int(found.group(1))
    return OSError(code, os.strerror(code))


_ARROW_CODECS = {"uncompressed": "none"}
"""Polars' codec names that pyarrow spells otherwise."""


def _write_frame(
    frame: pl.DataFrame, path: Path, compression: str, schema: pa.Schema | None, source: str
) -> None:
    """One Parquet file in row groups of ROW_GROUP_ROWS. Without a schema Polars writes it
    (on both cores: lineitem's write took 2.3-2.4 CPU-s against pyarrow's 3.1-3.5); with
    one, pyarrow writes it cast to that schema; and so it writes, uncast, a table with an
    extension type nested in another (`_nested_extension`), on which Polars' writer panics."""
    if schema is None and not any(map(_nested_extension, frame.dtypes)):
        try:
            frame.write_parquet(
                literal_path(path),
                compression=compression,  # type: ignore[arg-type]
                row_group_size=ROW_GROUP_ROWS,
            )
        except pl.exceptions.ComputeError as exc:
            raise _os_error(exc) from None
        return
    table = frame.to_arrow()
    if schema is not None:
        # Slice by slice: a whole column cast from large_string could overflow string's
        # 32-bit offsets (2 GiB per chunk), a row group's never does in practice.
        table = pa.concat_tables(
            [
                _cast(table.slice(start, ROW_GROUP_ROWS), schema, source)
                for start in range(0, max(1, table.num_rows), ROW_GROUP_ROWS)
            ]
        )
    codec = _ARROW_CODECS.get(compression, compression)
    pq.write_table(table, literal_path(path), compression=codec, row_group_size=ROW_GROUP_ROWS)


def _nested_extension(dtype: Any) -> bool:
    """Whether an extension type (arrow.json) lies inside the Polars type `dtype`, in a
    list, array, struct or map. Polars reads such a column but panics writing it ("casting
    from Extension(arrow.json) to LargeBinary not supported"): the sort ended in a traceback
    after all its work. A top-level one it writes."""
    inner: list[Any] = []
    if isinstance(dtype, pl.List | pl.Array):
        inner = [dtype.inner]
    elif isinstance(dtype, pl.Struct):
        inner = [f.dtype for f in dtype.fields]
    elif isinstance(dtype, pl.Map):
        inner = [dtype.key, dtype.value]
    return any(isinstance(t, pl.Extension) or _nested_extension(t) for t in inner)


def _load_numpy_api() -> None:
    """Have Polars load NumPy's C API now, with SIGINT and SIGTERM held: its first
    `to_numpy` does it by running Python code, and a KeyboardInterrupt raised there (Ctrl-C
    in the keys stage) made its Rust side panic, printing a backtrace over the one-line
    "interrupted" (found by an audit of the sort). Loaded once, it is never loaded again."""
    with signals_held():
        pl.Series([0], dtype=pl.Int64).to_numpy()


def check_key_column(source: Path, by: str) -> None:
    """Refuse, from the footers alone, a key column that no input file has or whose type no
    sort takes (a list, a struct), with the error `plan_sort` gives: it came after the
    whole table was read into memory, 3 s for a typo in --by on TPC-H lineitem at SF 1,
    and a Rust abort where the table did not fit. A footer that cannot be read is left to
    the read to report; a column in some files only, to the read's check of the files."""
    files = parquet_inputs(source)
    first: pa.Schema | None = None
    for file in files:
        try:
            schema = pq.read_schema(literal_path(file))
        except _UNREADABLE:
            return
        if by in schema.names:
            index = schema.get_field_index(by)  # -1 for a name given twice: the read says so
            if index >= 0:
                _check_key_type(schema.field(index), str(source))
            return
        first = schema if first is None else first
    if first is not None:
        has = f"has {', '.join(first.names)}" if first.names else "has no columns"
        raise SpecError(f"no column {by!r}; the table {has}", source=str(source), field="--by")


def _check_key_type(column: pa.Field, source: str) -> None:
    """A nested key (list, struct, map) refused as `sort_keys` refuses it, naming its type as
    Polars would read it; other types are left to the read, which may change them."""
    if not pa.types.is_nested(column.type):
        return
    try:
        empty = pl.from_arrow(pa.array([], column.type))
    except Exception:  # a type Polars cannot take: the read says so, naming the column
        return
    assert isinstance(empty, pl.Series)
    sort_keys(empty.alias(column.name), source=source)


def sort_parquet(
    source: Path,
    out: Path,
    by: str,
    *,
    descending: bool = False,
    devices: int = 1,
    merge: bool = True,
    engine: str = "host",
    compression: str = "snappy",
    keep_schema: bool = False,
    overwrite: bool = True,
    progress: Progress | None = None,
) -> SortReport:
    """`ndpkit sort`: read Parquet, sort by `by`, write Parquet; the report's `seconds`
    include the read and the write. With `keep_schema` the output has the input's Arrow
    schema (see `input_schema`), at the cost of a single-threaded write."""
    check_output(out, partitions=not merge)
    check_key_column(source, by)
    _load_numpy_api()
    seconds: dict[str, float] = {}
    with _stage(seconds, "read", progress):
        table = read_parquet(source)
        schema = input_schema(source, table) if keep_schema else None
    plan = plan_sort(
        table,
        by,
        descending=descending,
        devices=devices,
        merge=merge,
        engine=engine,
        source=str(source),
        progress=progress,
    )
    outputs = apply_plan(table, plan, progress)
    del table  # the gathered tables are copies; the input need not outlive the gather
    report = plan.report
    with _stage(seconds, "write", progress):
        write_sorted(
            outputs,
            out,
            partitions=not merge,
            compression=compression,
            schema=schema,
            overwrite=overwrite,
            source=str(source),
        )
    report.schema = "polars" if schema is None else "input"
    stages = {**seconds, **report.seconds}
    # Every stage, 0.0 when skipped, so the JSON report's keys do not change from run to run.
    report.seconds = {k: stages.get(k, 0.0) for k in _STAGES}
    return report
