"""Data sets on disk, sharded the way NDP hardware holds them: one directory per device.

Layout of a data set directory DIR:

    DIR/manifest.json               written last: a directory without it is not a data set
    DIR/device-00/shard-0000.npy    whole records, C order, .npy format 1.0
    DIR/device-00/shard-0001.npy
    DIR/device-01/shard-0000.npy    …

**Shard formats.** `.npy` (the default) holds any record shape. `.parquet` holds tables: one
row per record, one column per feature (records of shape (d,), the point apps LC, k-NN and
K-Means); the manifest names the columns. Parquet shards are written uncompressed (float
features do not compress), with a CRC in every page header that readers check, in row
groups of at most `ROW_GROUP_BYTES`; readers stream them through a small buffer, a bounded
batch at a time.

**Record order (layout "contiguous").** The data set is the concatenation device 0 shard 0,
device 0 shard 1, …, device 1 shard 0, … Each shard's `offset` in the manifest is the index
of its first record in that order; the executor passes it to `Kernel.device`, so kernels that
return record indices (k-NN) see global ones. An import keeps the source's order, so device d
holds one contiguous block of the source (not a round-robin deal): reading the shards back in
order gives the source again.

**Writing is atomic.** Everything is written into a sibling temporary directory
(`DIR.tmp-` plus a random suffix, marked as ndpkit's by a `STAGING_MARKER` file until it is
published: only a marked one is ever swept as a killed run's), the manifest last, and then
renamed onto DIR with `os.replace`; a failure (or Ctrl-C, or SIGTERM under the `ndpkit`
command) removes the temporary directory (with SIGINT, SIGTERM and SIGHUP held while it does,
`ndpkit.files.signals_held`), so DIR either holds a complete data set or does not exist.
DIR has the mode `mkdir` gives. An existing DIR is replaced only with `overwrite=True`, and
only if it is a data set or empty. A data set larger than its file system's free space is
refused before anything is written, and a write that fails anyway (a full disk, a file size
limit) is a SpecError naming DIR and the file.

**Memory stays bounded.** Generation makes one shard at a time (at most `shard_bytes`) with a
seed derived from (seed, device, shard); imports copy the source in pieces through
memory-mapped windows. Neither ever holds the whole data set.

The manifest records each shard's size in bytes and CRC-32: `open_dataset` checks sizes
(cheap: catches missing and truncated shards), `verify=True` also checks every CRC.

**Reading.** `shard_chunks` streams one shard in chunks of whole records, whatever its
format (the executor's workers and streamed verification both use it); `Dataset.chunks`
walks a whole data set that way.
"""

from __future__ import annotations

import bisect
import collections
import contextlib
import errno
import functools
import io
import itertools
import json
import math
import mmap
import os
import re
import secrets
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from importlib import import_module
from pathlib import Path
from stat import S_ISREG
from typing import Annotated, Any, BinaryIO, Literal, Protocol

import numpy as np
from PIL import Image, UnidentifiedImageError
from pydantic import ConfigDict, Field, ValidationError, model_validator

from ndpkit.errors import (
    NdpkitError,
    SpecError,
    as_path,
    brief,
    function_or_none,
    true_or_false,
    whole_number,
)
from ndpkit.files import (
    cleanup_held,
    literal_path,
    name_kept,
    path_order,
    put_new,
    signals_held,
    temporary_sibling,
)
from ndpkit.hw.loader import json_loads, parse_nested
from ndpkit.hw.quantity import MAX_COUNT, FormatVersion
from ndpkit.hw.spec import FieldValueError, HandBuilt, spec_error
from ndpkit.kernels import Kernel, get_kernel, kernel_names
from ndpkit.kernels.images import refusal
from ndpkit.profile import DATASET_FORMAT
from ndpkit.runtime.parquet_parts import (
    PartListing,
    files_under,
    holds_file_named,
    holds_parts,
    list_parts,
)
from ndpkit.runtime.shard_maps import ShardMaps, map_read_only
from ndpkit.runtime.spill_dirs import lock_dir
from ndpkit.summary import summary

MANIFEST = "manifest.json"
FORMAT = DATASET_FORMAT  # the manifest's own name; defined where --profiles recognises it
DEFAULT_SHARD_BYTES = 64 * 2**20
"""The most bytes of records a generator or import puts in one shard (a device's last shard
holds fewer). The file is larger by its format's overhead: a .npy header of NPY_DATA_ALIGN
bytes, a Parquet file's page headers and footer (about 0.1%). An app whose records are
pixels takes an image per shard, whatever its size."""
DEFAULT_CHUNK_BYTES = 8 * 2**20
"""What a reader holds of a shard at once: large enough that per-chunk costs (a mapping, a
Python call) vanish, small enough to stay near the caches and keep a worker's memory small."""
WINDOW_CHUNKS = 4
"""Chunks of a .npy shard mapped at once, as long as they fit WINDOW_BYTES (else one): one
mapping per chunk cost LC's device part 5% (a system call pair and its page-table work per
8 MiB), and a worker still holds only a few chunks of the shard."""
WINDOW_BYTES = 32 * 2**20
"""The most a window holds when it holds more than one chunk."""
_PIECE_BYTES = 16 * 2**20  # how much of a source an import copies at once
_CRC_BLOCK_BYTES = 8 * 2**20
"""What a CRC check reads at once, into one reused buffer: large enough that the per-read
system call and Python call vanish, small enough to stay in the caches."""
PROGRESS_BYTES = 64 * 2**20
"""`Dataset.verify` reports its progress at least this often (and at the end)."""
_core: Any = import_module("ndpkit._core")  # the compiled extension has no type stub
_crc32: Callable[..., int] = _core.crc32
"""zlib's CRC-32 (same polynomial and result: manifests store zlib CRCs), 5x faster than
`zlib.crc32` here (11.5 against 2.3 GB/s, see benchmarks/README.md)."""
_IMAGE_SUFFIXES = (
    ".png",
    ".jpg",
    ".jpeg",
    ".tif",
    ".tiff",
    ".bmp",
    ".pgm",
    ".ppm",
    ".pnm",
    ".pbm",
    ".webp",
)
_IMAGE_SUFFIX_LIST = "/".join(_IMAGE_SUFFIXES)  # what the errors say a directory is read for
_PARQUET_SUFFIXES = (".parquet", ".pq")
ROW_GROUP_BYTES = 8 * 2**20
"""Largest Parquet row group a writer makes."""
_STREAMED = {"pre_buffer": False, "buffer_size": 2**20}
"""Read Parquet pages through a 1 MiB buffer: without it pyarrow reads whole column chunks
and keeps them (measured: a 96 MiB file read in batches grew the reader by 86 MiB; with it,
by 6 MiB)."""

ShardFormat = Literal["npy", "parquet"]
SHARD_FORMATS: tuple[ShardFormat, ...] = ("npy", "parquet")


def _arrow() -> tuple[Any, Any]:
    """pyarrow and pyarrow.parquet, imported on first use: they add 0.1 s to every start of
    the command, and most data sets are .npy."""
    import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415
    import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415

    return pa, pq


class ShardError(SpecError):
    """A shard that is missing, truncated or corrupt; the message names its path."""

    def __init__(self, path: str | Path, problem: str):
        super().__init__(problem, source=str(path))

    def __reduce__(self) -> tuple[Any, ...]:
        # Raised in worker processes and re-raised in the parent: keep (path, problem).
        return (type(self), (self.source, self.detail))


class ShardEntry(HandBuilt):
    """One shard file as the manifest records it."""

    # strict: a hand-edited "records": "131072", 32768.0 or true is an error, not converted
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    device: int = Field(ge=0)
    index: int = Field(ge=0)
    path: str
    """Relative to the data set directory: device-NN/shard-MMMM.npy (or .parquet)."""
    records: int = Field(ge=1)
    offset: int = Field(ge=0)
    """Index of the shard's first record in the whole data set."""
    file_bytes: int = Field(gt=0)
    crc32: str = Field(pattern=r"^[0-9a-f]{8}$")
    """CRC-32 of the whole file (header included), 8 lowercase hex digits."""


class Manifest(HandBuilt):
    """manifest.json: what the data set is and every shard in record order."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    format: Literal["ndpkit-dataset"] = "ndpkit-dataset"
    version: FormatVersion = 1
    app: str
    seed: Annotated[int, Field(ge=0)] | None
    """The generator's seed; None for an import."""
    source: str
    layout: Literal["contiguous"] = "contiguous"
    dtype: str
    record_shape: tuple[Annotated[int, Field(ge=1)], ...]
    record_bytes: int = Field(gt=0)
    devices: int = Field(ge=1)
    records: int = Field(ge=1)
    data_bytes: int = Field(gt=0)
    shard_bytes: int = Field(gt=0)
    shards: tuple[ShardEntry, ...]
    shard_format: ShardFormat = "npy"
    columns: tuple[str, ...] | None = None
    """Parquet shards: the column of each feature, in record order (None for .npy)."""

    @model_validator(mode="after")
    def _consistent(self) -> Manifest:
        """Catch a hand-edited or mixed-up manifest before any shard is read."""
        dtype = _parse_dtype(self.dtype)
        if self.record_bytes != math.prod(self.record_shape) * dtype.itemsize:
            raise FieldValueError(
                "record_bytes", f"{self.record_bytes} does not match dtype and record_shape"
            )
        if self.data_bytes != self.records * self.record_bytes:
            raise FieldValueError("data_bytes", "is not records x record_bytes")
        _check_columns(self.shard_format, self.columns, self.record_shape)
        _check_shard_order(self.shards, self.devices, self.records, self.shard_format)
        _check_app_reads(self.app, dtype, self.record_shape)
        return self

    def to_json(self) -> str:
        """The manifest as written; a .npy data set's has no format or column keys, as
        before Parquet shards existed."""
        npy = self.shard_format == "npy"
        skip = {"shard_format", "columns"} if npy else None
        return self.model_dump_json(indent=2, exclude=skip) + "\n"


def _app_reading_otherwise(
    app: str, dtype: np.dtype[Any], record_shape: tuple[int, ...]
) -> Kernel | None:
    """ndpkit's app named `app`, if it reads records other than (dtype, record_shape)."""
    if app not in kernel_names():
        return None
    kernel = get_kernel(app)
    same = kernel.dtype == dtype and tuple(kernel.record_shape) == tuple(record_shape)
    return None if same else kernel


def _check_app_reads(app: str, dtype: np.dtype[Any], record_shape: tuple[int, ...]) -> None:
    """One of ndpkit's apps must read the records as stored (an app made through the
    Python API is the caller's to check)."""
    kernel = _app_reading_otherwise(app, dtype, record_shape)
    if kernel is not None:
        raise FieldValueError(
            "app",
            f"app {app!r} reads {kernel.dtype} records of shape {tuple(kernel.record_shape)}, "
            f"and the manifest says {dtype} of shape {record_shape}",
        )


def _parse_dtype(text: str) -> np.dtype[Any]:
    try:
        dtype = np.dtype(text)
    except Exception:  # numpy parses "f4,(" with Python's parser: a SyntaxError, not a TypeError
        raise FieldValueError("dtype", f"{text!r} is not a numpy dtype") from None
    if dtype.hasobject or dtype.itemsize == 0:
        raise FieldValueError("dtype", f"{text!r} cannot be stored in a shard")
    return dtype


def _check_columns(
    shard_format: ShardFormat, columns: tuple[str, ...] | None, record_shape: tuple[int, ...]
) -> None:
    if shard_format == "npy":
        if columns is not None:
            raise FieldValueError("columns", ".npy shards have no columns")
        return
    if len(record_shape) != 1:
        raise FieldValueError(
            "record_shape", f"Parquet shards hold records of shape (d,), not {record_shape}"
        )
    if columns is None or len(columns) != record_shape[0] or len(set(columns)) != len(columns):
        raise FieldValueError(
            "columns", f"Parquet shards need {record_shape[0]} distinct column names"
        )


def _check_shard_order(
    shards: Sequence[ShardEntry], devices: int, records: int, shard_format: ShardFormat = "npy"
) -> None:
    """Shards must tile the records in device-major order, each device holding at least one."""
    offset = 0
    expected = (0, 0)
    for i, shard in enumerate(shards):
        if (shard.device, shard.index) not in (expected, (expected[0] + 1, 0)):
            raise FieldValueError(
                f"shards.{i}",
                f"shard {shard.path} is out of order (expected device/index {expected})",
            )
        expected_path = shard_relpath(shard.device, shard.index, shard_format)
        if shard.path != expected_path:
            raise FieldValueError(
                f"shards.{i}.path", f"shard path {shard.path!r} should be {expected_path!r}"
            )
        if shard.offset != offset:
            # Either this offset or an earlier shard's records is wrong: both are named.
            raise FieldValueError(
                f"shards.{i}.offset",
                f"shard {shard.path} starts at record {shard.offset}, but the {i} shards "
                f"before it hold {offset} records (their `records`)",
            )
        offset += shard.records
        expected = (shard.device, shard.index + 1)
    if not shards or expected[0] != devices - 1:
        raise FieldValueError(
            "devices", f"every one of the {devices} devices needs at least one shard"
        )
    if offset != records:
        raise FieldValueError(
            "records", f"the shards hold {offset} records, the manifest says {records}"
        )


def shard_relpath(device: int, index: int, shard_format: ShardFormat = "npy") -> str:
    return f"device-{device:02d}/shard-{index:04d}.{shard_format}"


@dataclass(frozen=True)
class RecordLayout:
    """How a data set's shards store its records: what a reader needs besides the manifest's
    per-shard entries."""

    dtype: np.dtype[Any]
    record_shape: tuple[int, ...]
    shard_format: ShardFormat = "npy"
    columns: tuple[str, ...] | None = None

    @property
    def record_bytes(self) -> int:
        return math.prod(self.record_shape) * self.dtype.itemsize


Progress = Callable[[int, int], None]
"""Called with (bytes checked so far, total bytes)."""


class _Meter:
    """Counts checked bytes and passes them on to a `Progress`: never more than PROGRESS_BYTES
    apart (bytes arrive in blocks of at most _CRC_BLOCK_BYTES), so a display is neither
    starved nor flooded."""

    def __init__(self, total_bytes: int, progress: Progress | None):
        self.total_bytes = total_bytes
        self.checked_bytes = 0
        self._progress = progress
        self._reported_bytes = 0
        if progress is not None:
            progress(0, total_bytes)

    def add(self, n_bytes: int) -> None:
        self.checked_bytes += n_bytes
        if self._progress is not None and (
            self.checked_bytes - self._reported_bytes > PROGRESS_BYTES - _CRC_BLOCK_BYTES
        ):
            self._reported_bytes = self.checked_bytes
            self._progress(self.checked_bytes, self.total_bytes)

    def finish(self) -> None:
        if self._progress is not None and self._reported_bytes != self.checked_bytes:
            self._progress(self.checked_bytes, self.total_bytes)


@dataclass(frozen=True)
class Dataset:
    """A validated data set on disk. Build one with `open_dataset` or the writers below."""

    path: Path
    manifest: Manifest
    manifest_stamp: ShardStamp | None = field(default=None, compare=False, repr=False)
    """The manifest file's identity when this object was made (None: not known), so that a
    run can tell that the data set was replaced since (`changed_since_opened`)."""

    def __repr__(self) -> str:  # the dataclass's: the manifest's every shard
        return summary(
            "Dataset",
            path=str(self.path),
            app=self.app,
            devices=self.devices,
            records=self.records,
            total_bytes=self.total_bytes,
            shards=len(self.shards),
        )

    @property
    def app(self) -> str:
        return self.manifest.app

    @property
    def seed(self) -> int | None:
        return self.manifest.seed

    @property
    def devices(self) -> int:
        return self.manifest.devices

    @property
    def dtype(self) -> np.dtype[Any]:
        return np.dtype(self.manifest.dtype)

    @property
    def record_shape(self) -> tuple[int, ...]:
        return self.manifest.record_shape

    @property
    def record_bytes(self) -> int:
        return self.manifest.record_bytes

    @property
    def records(self) -> int:
        return self.manifest.records

    @property
    def shard_format(self) -> ShardFormat:
        return self.manifest.shard_format

    @property
    def layout(self) -> RecordLayout:
        m = self.manifest
        return RecordLayout(self.dtype, m.record_shape, m.shard_format, m.columns)

    @property
    def total_bytes(self) -> int:
        """Bytes of records (what a kernel reads), without .npy headers."""
        return self.manifest.data_bytes

    @property
    def file_bytes(self) -> int:
        return sum(s.file_bytes for s in self.manifest.shards)

    @property
    def shards(self) -> tuple[ShardEntry, ...]:
        return self.manifest.shards

    def shards_of(self, device: int) -> tuple[ShardEntry, ...]:
        """Device `device`'s shards in record order (devices are 0 to `devices` - 1: one
        past them gave no shards, and `device_bytes` 0, without a word)."""
        device = whole_number(device, "device", "a whole device number ≥ 0", least=0)
        if device >= self.devices:
            raise SpecError(
                f"no device {device}: the data set's devices are 0 to {self.devices - 1}",
                source=str(self.path),
                field="device",
            )
        return self._by_device.get(device, ())

    @functools.cached_property
    def _by_device(self) -> dict[int, tuple[ShardEntry, ...]]:
        """Each device's shards in record order, grouped once: a scan of every shard per
        device made `data show` and a run's task lists quadratic in the devices (65,536
        devices took 4 minutes to show)."""
        grouped: dict[int, list[ShardEntry]] = {}
        for shard in self.shards:
            grouped.setdefault(shard.device, []).append(shard)
        return {device: tuple(shards) for device, shards in grouped.items()}

    def shard_path(self, shard: ShardEntry) -> Path:
        return self.path / shard.path

    def device_bytes(self, device: int) -> int:
        return sum(s.records for s in self.shards_of(device)) * self.record_bytes

    def chunk_records(self, chunk_bytes: int) -> int:
        """Whole records in a chunk of at most `chunk_bytes` (at least one), and at most the
        data set's: pyarrow's batch size is an int64, which chunk_bytes=2**70 overflowed."""
        return min(max(1, chunk_bytes // self.record_bytes), self.records)

    def chunks(
        self, chunk_bytes: int = DEFAULT_CHUNK_BYTES, *, verify: bool = False
    ) -> Iterator[tuple[int, np.ndarray]]:
        """(offset of the first record, chunk) over every shard in record order, each chunk
        at most `chunk_bytes` of whole records (at least one): memory stays bounded."""
        chunk_bytes = _sample_bytes(chunk_bytes, "chunk_bytes")
        verify = true_or_false(verify, "verify")
        chunk_records = self.chunk_records(chunk_bytes)
        for shard in self.shards:
            # Copied, not mapped: a shard truncated meanwhile is then an error, not a SIGBUS
            # that would end this (the command's) process.
            yield from shard_chunks(
                self.shard_path(shard), shard, self.layout, chunk_records, verify=verify, copy=True
            )

    def head(self, max_bytes: int) -> np.ndarray:
        """The first records of the data set, at most `max_bytes` of them (at least one)."""
        max_bytes = _sample_bytes(max_bytes, "max_bytes")
        wanted = max(1, max_bytes // self.record_bytes)
        taken: list[np.ndarray] = []
        count = 0
        for _, chunk in self.chunks(min(max_bytes, DEFAULT_CHUNK_BYTES)):
            taken.append(np.array(chunk[: wanted - count]))  # a copy: the window is released
            count += len(taken[-1])
            if count >= wanted:
                break
        return np.concatenate(taken)

    def spread(self, max_bytes: int) -> np.ndarray:
        """At most `max_bytes` of records taken from the start of every shard alike (at least
        one from each): a sample of the whole data set where `head` sees only its first
        shards, which may hold one region of it (a data set imported in sorted order)."""
        return self.spread_with_records(max_bytes)[0]

    def spread_with_records(self, max_bytes: int) -> tuple[np.ndarray, np.ndarray]:
        """`spread`'s sample, and the number in the data set of each of its records, so
        that a record refused in the sample can be named (`shard_of` finds its file)."""
        max_bytes = _sample_bytes(max_bytes, "max_bytes")
        per_shard = max(1, max_bytes // self.record_bytes // max(len(self.shards), 1))
        # Copied, not mapped, as `chunks` does: a shard truncated meanwhile was a SIGBUS that
        # ended the command (K-Means' starting sample in `evaluate --data`).
        taken = [
            (offset, chunk)
            for shard in self.shards
            for offset, chunk in itertools.islice(
                shard_chunks(self.shard_path(shard), shard, self.layout, per_shard, copy=True),
                1,
            )
        ]
        if not taken:
            sample = self.head(max_bytes)
            return sample, np.arange(len(sample), dtype=np.int64)
        numbers = [
            np.arange(offset, offset + len(chunk), dtype=np.int64) for offset, chunk in taken
        ]
        return np.concatenate([chunk for _, chunk in taken]), np.concatenate(numbers)

    def shard_of(self, record: int) -> ShardEntry:
        """The shard that holds record number `record` of the data set."""
        index = bisect.bisect_right([shard.offset for shard in self.shards], record) - 1
        shard = self.shards[max(index, 0)]
        if not shard.offset <= record < shard.offset + shard.records:
            raise IndexError(f"record {record} is not in the data set ({self.records} records)")
        return shard

    def place_of(self, record: int) -> str:
        """Where record number `record` is, for a message: its shard's file and records
        (`shard_place`)."""
        shard = self.shard_of(record)
        return shard_place(self.shard_path(shard), shard.offset, shard.records)

    def read_all(self) -> np.ndarray:
        """The whole data set in record order, in memory: for tests and small data only."""
        return np.concatenate([np.array(chunk) for _, chunk in self.chunks()])

    def stamps(self, *, with_manifest: bool = False) -> dict[Path, ShardStamp]:
        """Each shard's file identity and last change, to tell later (`changed_shard`) whether
        one was rewritten or replaced in the meantime; a shard that cannot be read now is
        left out (reading it is what reports that). `with_manifest`: the manifest's too (a
        data set replaced whole, by a rename onto its directory, has a new one)."""
        paths = self._shard_paths + ((self.path / MANIFEST,) if with_manifest else ())
        found = {}
        for path in paths:
            with contextlib.suppress(OSError):
                found[path] = ShardStamp.of(os.stat(path))
        return found

    @functools.cached_property
    def _shard_paths(self) -> tuple[Path, ...]:
        """Every shard's path, made once: `stamps` is taken twice a run (a path costs ~3 µs
        to build, more with the caches cold)."""
        return tuple(self.shard_path(shard) for shard in self.shards)

    def changed_since_opened(self, stamps: dict[Path, ShardStamp]) -> SpecError | None:
        """The error to raise if the data set on disk is no longer the one this object
        describes (`stamps`: the run's, with the manifest): its manifest was replaced by
        one that says something else (`data generate --overwrite` renames a new data set
        onto it) or is gone. A run would otherwise read the new shards under the old
        manifest's seed and CRCs, or fail with "replaced while it was read" every time."""
        if self.manifest_stamp is None or stamps.get(self.path / MANIFEST) == self.manifest_stamp:
            return None
        now = _manifest_now(self.path)
        if now is _GONE:
            return SpecError(
                "was removed or moved since it was opened; no result", source=str(self.path)
            )
        if now != self.manifest:
            where = (
                ""
                if self.path.is_absolute()
                else f", or it was opened by this relative path from another directory than "
                f"{os.getcwd()}"
            )
            return SpecError(
                f"was replaced since it was opened (its manifest changed{where}): open it "
                "again to run over the data there",
                source=str(self.path),
            )
        return None  # the same manifest written again: the same data

    def changed_shard(self, stamps: dict[Path, ShardStamp]) -> ShardError | None:
        """The first shard (or manifest) of `stamps` that changed since (written to,
        truncated, replaced, removed), as the error to raise; None if none did."""
        for path, then in stamps.items():
            try:
                now: ShardStamp | None = ShardStamp.of(os.stat(path))
            except OSError:
                now = None
            if now != then:
                what = "was removed" if now is None else then.change_to(now)
                return ShardError(path, f"{what} while the data set was read; run again")
        return None

    def verify(self, *, progress: Progress | None = None, every: bool = False) -> None:
        """Check every shard's size, CRC-32 and header (records, dtype and shape; a Parquet
        shard's rows and columns) in record order (reads the whole data set); the
        first bad shard is a `ShardError` naming it, or with `every` all of them are checked
        and one `ShardError` names them all (`shard_problems`), missing and truncated ones
        too (a missing device directory once): a copy with several bad shards is then told
        in one read, not one per shard. `progress(checked_bytes,
        total_bytes)` is called at the start, at least every `PROGRESS_BYTES` and at the
        end."""
        every = true_or_false(every, "every")
        function_or_none(progress, "progress", PROGRESS_EXPECTED)
        buffer = bytearray(_CRC_BLOCK_BYTES)
        meter = _Meter(self.file_bytes, progress)
        # With `every`, the missing and truncated shards first, as opening names them (a
        # missing device directory once): they are counted, not read.
        problems, missing = _size_problems(self) if every else ([], set())
        bad = len(missing)
        for shard in self.shards:
            path = self.shard_path(shard)
            before = meter.checked_bytes
            try:
                if shard.path in missing:
                    continue
                check_shard_size(path, shard.file_bytes)
                _check_crc(path, _file_crc(path, buffer, meter.add), shard.crc32)
                _check_shard_layout(path, shard, self.layout)
            except ShardError as exc:
                if not every:
                    raise
                problems.append(exc)
                bad += 1
            finally:
                meter.add(before + shard.file_bytes - meter.checked_bytes)  # not all read
        meter.finish()
        if problems:
            raise shard_problems(problems, len(self.shards), bad)

    def summary(self) -> dict[str, Any]:
        m = self.manifest
        return {
            "path": str(self.path),
            "app": m.app,
            "source": m.source,
            "seed": m.seed,
            "layout": m.layout,
            "shard_format": m.shard_format,
            **({"columns": list(m.columns)} if m.columns is not None else {}),
            "dtype": self.dtype.name,
            "record_shape": list(m.record_shape),
            "record_bytes": m.record_bytes,
            "devices": m.devices,
            "shards": len(m.shards),
            "records": m.records,
            "data_bytes": m.data_bytes,
            "file_bytes": self.file_bytes,
        }

    def device_rows(self) -> list[dict[str, Any]]:
        rows = []
        for device in range(self.devices):
            shards = self.shards_of(device)
            records = sum(s.records for s in shards)
            rows.append(
                {
                    "device": device,
                    "shards": len(shards),
                    "records": records,
                    "first_record": shards[0].offset,
                    "data_bytes": records * self.record_bytes,
                }
            )
        return rows


# -- opening ------------------------------------------------------------------------------


def _sample_bytes(value: object, name: str) -> int:
    """A size of `Dataset.head`, `spread` or `chunks`: a whole number of bytes ≥ 0 (fewer
    than a record's give one record). A float was "'float' object cannot be interpreted as
    an integer" from deep inside, and a negative size one record."""
    return whole_number(value, name, "a whole number of bytes ≥ 0", least=0)


def open_dataset(
    path: str | Path,
    *,
    verify: bool = False,
    progress: Progress | None = None,
    every: bool = False,
) -> Dataset:
    """Read and validate DIR/manifest.json and check that every shard is there, whole.

    Sizes are always checked (a stat per shard); `verify=True` also reads every shard to check
    its CRC-32, reporting to `progress` as `Dataset.verify` does. Any problem is a SpecError
    naming the manifest or the shard; with `verify` and `every`, one error names every
    missing, truncated and corrupt shard (`Dataset.verify(every=True)`).
    """
    root = as_path(path, "path")
    verify, every = true_or_false(verify, "verify"), true_or_false(every, "every")
    function_or_none(progress, "progress", PROGRESS_EXPECTED)
    manifest_path = root / MANIFEST
    part = _part_of_a_data_set(root)
    if part is not None:
        raise SpecError(part, source=str(root))
    if root.exists() and not root.is_dir():
        # A table, CSV or .npy given where its data set was meant: say how to make one of
        # it (the message named a Parquet table and a .npy alone, to a CSV file's user).
        raise SpecError(
            "is a file, not a data set directory (a .npy, Parquet or CSV file becomes one "
            "with `ndpkit data import PATH --app APP -o DIR`)",
            source=str(root),
        )
    if not root.is_dir() and os.path.islink(root):
        # "no such data set directory" sent the user looking for what the link should name.
        try:
            os.stat(root)
        except OSError as exc:
            why = "a loop of links" if exc.errno == errno.ELOOP else "nothing"
            raise SpecError(
                f"is a symbolic link to {why} ({os.readlink(root)}), not a data set directory",
                source=str(root),
            ) from None
    if not root.is_dir():
        raise SpecError("no such data set directory", source=str(root))
    if manifest_path.is_dir():
        raise SpecError("is a directory, not a manifest file", source=str(manifest_path))
    if not manifest_path.is_file() and os.path.lexists(manifest_path):
        # There, but no file to read: "missing" sent the user looking for one that was not.
        what = (
            "not a regular file (a device, FIFO or socket)"
            if manifest_path.exists()
            else f"a symbolic link to nothing ({os.readlink(manifest_path)})"
        )
        raise SpecError(
            f"is {what}; a data set's manifest is the JSON file `ndpkit data` writes",
            source=str(manifest_path),
        )
    if not manifest_path.is_file():
        raise SpecError(
            "missing: not a data set, or one whose writing did not finish (files of your own "
            "become one with `ndpkit data import PATH --app APP -o DIR`)",
            source=str(manifest_path),
        )
    stamp = _stamp_or_none(manifest_path)  # before reading: a later swap is then seen
    dataset = Dataset(root, _read_manifest(manifest_path), stamp)
    _check_no_strays(dataset)
    if verify and every:  # the sizes are checked with the CRCs, every problem in one error
        dataset.verify(progress=progress, every=True)
        return dataset
    _check_shard_sizes(dataset)
    if verify:
        dataset.verify(progress=progress)
    return dataset


def _written_by_ndpkit(directory: Path) -> dict[str, Any] | None:
    """The manifest in `directory` if it is one `ndpkit data` wrote (as JSON, unvalidated),
    else None: a guess at what a path the user gave belongs to, never an error itself."""
    try:
        document = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if isinstance(document, dict) and document.get("format") == FORMAT:
        return document
    return None


def _part_of_a_data_set(path: Path) -> str | None:
    """What is wrong with giving `path` where a data set directory is meant, if it is a
    data set's manifest or one of its device directories: else None. Said of the file or
    directory alone, "is a file" hinted at `data import` for a manifest, and a device
    directory's "manifest.json: missing: not a data set" hid the data set one level up."""
    parent = path.parent
    parent_named = ". (the working directory)" if str(parent) == "." else str(parent)
    if path.name == MANIFEST and path.is_file() and _written_by_ndpkit(parent) is not None:
        return f"is the manifest of the data set {parent}: give its directory, {parent_named}"
    if (
        _DEVICE_DIR.fullmatch(path.name)
        and path.is_dir()
        and not (path / MANIFEST).exists()
        and _written_by_ndpkit(parent) is not None
    ):
        return f"is a device directory of the data set {parent}: give the data set, {parent_named}"
    return None


def _check_shard_sizes(dataset: Dataset) -> None:
    """Every shard there and of its size, a stat each; all the missing or truncated ones
    named in one error (`shard_problems`), and a device directory missing whole said once,
    not once per shard: a copy that left out a device (or was cut short) is told what to
    copy again in one go."""
    problems, bad = _size_problems(dataset)
    if problems:
        raise shard_problems(problems, len(dataset.shards), len(bad), are=SIZES_ONLY)


def _size_problems(dataset: Dataset) -> tuple[list[ShardError], set[str]]:
    """The missing or truncated shards, a device directory missing whole as one problem
    (`_check_shard_sizes`), and the manifest paths of the shards they make bad."""
    problems: list[ShardError] = []
    bad: set[str] = set()
    absent: dict[str, int] = {}
    for shard in dataset.shards:
        device = shard.path.split("/")[0]
        # A file where the directory belongs (`device-02` a regular file) was each of its
        # shards' "cannot read shard (Not a directory)": the directory is what is missing.
        if device not in absent and not (dataset.path / device).is_dir():
            absent[device] = 0
        if device in absent:
            absent[device] += 1
            bad.add(shard.path)
            continue
        try:
            check_shard_size(dataset.shard_path(shard), shard.file_bytes)
        except ShardError as exc:
            problems.append(exc)
            bad.add(shard.path)
    for device, shards in absent.items():
        its = "its shard" if shards == 1 else f"its {shards} shards"
        odd = os.path.lexists(dataset.path / device)  # a file, or a link to nothing
        what = "is not a directory (a file, or a link to nothing): the " if odd else ""
        problems.append(
            ShardError(dataset.path / device, f"{what}device directory is missing, {its}")
        )
    return problems, bad


MAX_LISTED_PROBLEMS = 10
"""The bad shards one error names; past that it counts them."""


SIZES_ONLY = "missing or of the wrong size (the sizes were checked, not the CRC-32s)"
"""What `bad` shards are where opening found them by a stat each: "3 of the 8 shards are
bad" said the other 5 were good, and a corrupt one among them was found only by the next
run, once the others were copied again."""


def shard_problems(
    problems: list[ShardError], shards: int, bad: int, *, are: str = "bad"
) -> ShardError:
    """One error for several problems, `bad` of the data set's `shards` (which `are` what
    was checked: SIZES_ONLY where only sizes were), in path order with the numbers in names
    compared as numbers (`device-11` before `device-100`, as the records go): the first is
    the error's `source`, the next MAX_LISTED_PROBLEMS - 1 are listed after it with what is
    wrong, the rest counted."""
    problems = sorted(problems, key=lambda p: path_order(Path(str(p.source))))
    first, rest = problems[0], problems[1:]
    if not rest:
        return first
    listed = "; ".join(f"{p.source} ({p.detail})" for p in rest[: MAX_LISTED_PROBLEMS - 1])
    unlisted = len(rest) - (MAX_LISTED_PROBLEMS - 1)
    more = f"; and {unlisted} more" if unlisted > 0 else ""
    return ShardError(
        str(first.source),
        f"{first.detail}; {bad} of the {shards} shards are {are}, also: {listed}{more}",
    )


def _stamp_or_none(path: Path) -> ShardStamp | None:
    try:
        return ShardStamp.of(os.stat(path))
    except OSError:
        return None


def _check_no_strays(dataset: Dataset) -> None:
    """A device directory or shard file that the manifest does not list is an error, not
    ignored: it is most likely data copied in from another data set (or a device count
    changed by hand), and a run that skipped it would give an answer over part of the data."""
    listed = {shard.path for shard in dataset.shards}
    devices = {path.split("/")[0] for path in listed}
    for entry in sorted(dataset.path.glob("device-*")):
        if entry.name not in devices:
            problem = (
                f"not in the manifest, which lists {len(devices)} devices (device-00 to "
                f"device-{len(devices) - 1:02d}); remove it, or import the data again"
            )
            raise SpecError(problem + _listed_missing(dataset), source=str(entry))
        for shard in sorted(entry.glob("shard-*")):
            if f"{entry.name}/{shard.name}" not in listed:
                problem = (
                    "a shard file the manifest does not list; remove it, or import the data again"
                )
                raise SpecError(problem + _listed_missing(dataset), source=str(shard))


def _listed_missing(dataset: Dataset) -> str:
    """For a data set with a stray file: what of the manifest's shards is missing or
    truncated (`_size_problems`), or ''. Said alone, "remove it" of a stray `device-07/`
    hid that `device-02/` was missing (renamed?), and the next run was the first to say so."""
    problems, bad = _size_problems(dataset)
    if not problems:
        return ""
    missing = shard_problems(problems, len(dataset.shards), len(bad), are=SIZES_ONLY)
    return f"; and what the manifest lists is not all there: {missing}"


def read_manifest(path: Path) -> Manifest:
    """A data set's manifest, read and validated (errors name the file and field)."""
    return _read_manifest(path)


def _read_manifest(path: Path) -> Manifest:
    try:
        document = parse_nested(json_loads, path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SpecError(f"not readable JSON ({exc})", source=str(path)) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise SpecError(f"not an ndpkit data set manifest (format {FORMAT!r})", source=str(path))
    try:
        # JSON mode: strict, yet arrays are tuples
        return Manifest.model_validate_json(json.dumps(document))
    except ValidationError as exc:
        raise spec_error(exc, str(path)) from None


@dataclass(frozen=True)
class ShardStamp:
    """What tells a shard file's contents changed without reading it: its identity (device,
    inode: a file renamed over it), size, and the time of its last write (not of its last
    change of any kind: a `chmod` leaves the data as it was)."""

    device: int
    inode: int
    size_bytes: int
    mtime_ns: int

    @classmethod
    def of(cls, stat: os.stat_result) -> ShardStamp:
        return cls(stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)

    def change_to(self, now: ShardStamp) -> str:
        if (now.device, now.inode) != (self.device, self.inode):
            return "was replaced by another file"
        if now.size_bytes != self.size_bytes:
            return f"changed size from {self.size_bytes} to {now.size_bytes} bytes"
        return "was written to"


def check_shard_size(path: Path, file_bytes: int) -> os.stat_result:
    """A missing or truncated shard is an error naming it; sizes come from the manifest.
    Answers the shard's `os.stat`."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise ShardError(path, "shard is missing") from None
    except OSError as exc:
        raise ShardError(path, f"cannot read shard ({exc.strerror})") from None
    if not S_ISREG(stat.st_mode):
        raise ShardError(path, "is not a regular file (a directory, device or FIFO)")
    found = stat.st_size
    if found != file_bytes:
        raise ShardError(
            path, f"shard is {found} bytes, the manifest says {file_bytes}: truncated or corrupt"
        )
    return stat


def _file_crc(
    path: Path, buffer: bytearray | None = None, on_read: Callable[[int], None] | None = None
) -> str:
    """The CRC-32 of a whole file, read block by block into `buffer` (reused across files by
    `Dataset.verify`: a fresh 8 MiB buffer per shard is 2,048 page faults); `on_read(n)` after
    each block of n bytes."""
    crc = 0
    block = buffer if buffer is not None else bytearray(_CRC_BLOCK_BYTES)
    view = memoryview(block)
    try:
        with path.open("rb", buffering=0) as f:
            while n := f.readinto(block):
                crc = _crc32(view[:n], crc)
                if on_read is not None:
                    on_read(n)
    except OSError as exc:
        raise ShardError(path, f"cannot read shard ({exc.strerror})") from None
    return f"{crc:08x}"


# -- reading shards -----------------------------------------------------------------------


class ShardFacts(Protocol):
    """What the manifest says about one shard (`ShardEntry` has it, and so does the
    executor's own record of a shard)."""

    @property
    def records(self) -> int: ...

    @property
    def offset(self) -> int: ...

    @property
    def file_bytes(self) -> int: ...

    @property
    def crc32(self) -> str: ...


def shard_chunks(
    path: Path,
    shard: ShardFacts,
    layout: RecordLayout,
    chunk_records: int,
    *,
    verify: bool = False,
    maps: ShardMaps | None = None,
    run: int = 0,
    copy: bool = False,
    on_read: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, np.ndarray]]:
    """(offset of the first record in the data set, chunk) over one shard, after checking the
    shard against the manifest. Chunks hold at most `chunk_records` whole records. With
    `verify`, the shard's CRC-32 is checked too (.npy: as it is read, raising at the end;
    Parquet: before the first chunk). With `maps`, a .npy shard is read from a mapping of
    the whole shard kept there, if it fits its budget (`ShardMaps`; `run` is the caller's
    run), else through windows; with `copy`, chunk by chunk into memory (a process that
    must not die of SIGBUS if the shard is truncated meanwhile). `on_read(n)` hears each
    block of n bytes of a Parquet shard's CRC-32 pass, which yields no chunk. Any problem is
    a `ShardError` naming the shard."""
    stat = check_shard_size(path, shard.file_bytes)
    if layout.shard_format == "parquet":
        if verify:
            _check_crc(path, _file_crc(path, on_read=on_read), shard.crc32)
        yield from _parquet_chunks(path, shard, layout, chunk_records)
    else:
        yield from _npy_chunks(
            path, shard, layout, chunk_records, verify, maps, run, stat, copy=copy
        )


def corrupt_shard(
    path: Path, shard: ShardFacts, on_read: Callable[[int], None] | None = None
) -> ShardError | None:
    """The error naming `path` as corrupt if its CRC-32 is not the manifest's (read whole:
    for a failure that may have come from corrupt data); None if it matches or cannot be
    read (the failure then stands). `on_read(n)` after each block of n bytes."""
    try:
        found = _file_crc(path, on_read=on_read)
    except (ShardError, OSError):  # cannot be read now: not known to be corrupt
        return None
    try:
        _check_crc(path, found, shard.crc32)
    except ShardError as exc:
        return exc
    return None


def _check_crc(path: Path, found: str, expected: str) -> None:
    if found != expected:
        raise ShardError(path, f"CRC-32 is {found}, the manifest says {expected}: corrupt")


def _npy_chunks(
    path: Path,
    shard: ShardFacts,
    layout: RecordLayout,
    chunk_records: int,
    verify: bool,
    maps: ShardMaps | None = None,
    run: int = 0,
    stat: os.stat_result | None = None,
    *,
    copy: bool = False,
) -> Iterator[tuple[int, np.ndarray]]:
    whole, data_offset = _kept_shard(path, shard, layout, maps, run, stat)
    crc = _header_crc(path, data_offset) if verify else 0
    # A kept mapping is read as one window; otherwise each window is mapped on its own, or
    # copied a chunk at a time.
    if whole is not None:
        window_records = shard.records
    elif copy:
        window_records = chunk_records
    else:
        window_records = window_records_for(chunk_records, layout)
    for first in range(0, shard.records, window_records):
        count = min(window_records, shard.records - first)
        try:
            window = (
                whole
                if whole is not None
                else read_records(
                    path, data_offset, layout.dtype, layout.record_shape, first, count, copy=copy
                )
            )
        except EOFError:
            raise ShardError(
                path,
                f"changed while it was read: it ends before record {first + count} "
                "(truncated meanwhile?)",
            ) from None
        except (OSError, ValueError) as exc:
            raise ShardError(path, f"cannot map records {first}..{first + count} ({exc})") from None
        for start in range(0, count, chunk_records):
            chunk = window[start : start + chunk_records]
            if verify:
                crc = _crc32(chunk, crc)
            yield shard.offset + first + start, chunk
            del chunk
        del window  # with the caller's chunks gone, the window is unmapped here
    if verify:
        _check_crc(path, f"{crc:08x}", shard.crc32)


def window_records_for(chunk_records: int, layout: RecordLayout) -> int:
    """Records in a window: WINDOW_CHUNKS chunks, fewer if they would pass WINDOW_BYTES, and
    at least one."""
    fit = WINDOW_BYTES // max(1, chunk_records * layout.record_bytes)
    return chunk_records * max(1, min(WINDOW_CHUNKS, fit))


def _kept_shard(
    path: Path,
    shard: ShardFacts,
    layout: RecordLayout,
    maps: ShardMaps | None,
    run: int,
    stat: os.stat_result | None = None,
) -> tuple[np.ndarray | None, int]:
    """(the shard's records from a mapping kept in `maps`, or None; its data's file offset).
    A shard kept already is not opened again (`stat`: its `os.stat` if the caller has it);
    any other's header is checked first."""
    if maps is None:
        return None, _open_npy_shard(path, shard, layout)
    hit = maps.get(path, layout.dtype, layout.record_shape, shard.records, run, stat)
    if hit is not None:
        return hit
    try:
        with path.open("rb") as f:  # the header checked and the mapping made from one file
            data_offset = _check_npy_header(f, path, shard, layout)
            whole = maps.keep(
                path, f, data_offset, layout.dtype, layout.record_shape, shard.records, run
            )
    except (OSError, ValueError) as exc:
        raise ShardError(path, f"cannot map its {shard.records} records ({exc})") from None
    return whole, data_offset


def _open_npy_shard(path: Path, shard: ShardFacts, layout: RecordLayout) -> int:
    """Check the .npy header's dtype, order and shape against the manifest and that the file
    holds the data the header promises; the data's file offset. Only the header is read (a
    whole-file `np.load` memmap per shard was 5% of LC's pass)."""
    try:
        with path.open("rb") as f:
            return _check_npy_header(f, path, shard, layout)
    except OSError as exc:
        raise ShardError(path, f"cannot read shard ({exc.strerror})") from None


def _check_npy_header(f: BinaryIO, path: Path, shard: ShardFacts, layout: RecordLayout) -> int:
    """`_open_npy_shard` on the open file `f` (at its start): the data's file offset."""
    try:
        shape, fortran, dtype = _read_npy_header(f)
        data_offset = f.tell()
    except Exception as exc:  # numpy raises many kinds on a damaged header
        raise ShardError(path, f"not a readable .npy shard ({brief(exc)})") from None
    expected = (shard.records, *layout.record_shape)
    if dtype != layout.dtype or shape != expected:
        raise ShardError(
            path, f"holds {dtype} {shape}, the manifest says {layout.dtype} {expected}"
        )
    if fortran and len(shape) > 1:
        raise ShardError(path, "is in Fortran order; shards are C order")
    data_bytes = shard.records * layout.record_bytes
    if data_offset + data_bytes > shard.file_bytes:
        raise ShardError(
            path,
            f"its header ends at byte {data_offset}, leaving room for fewer than the "
            f"{shard.records} records it declares",
        )
    if data_offset + data_bytes < shard.file_bytes:  # ndpkit writes none: records appended?
        raise ShardError(
            path,
            f"holds {shard.file_bytes - data_offset - data_bytes} bytes after the "
            f"{shard.records} records its header declares",
        )
    return data_offset


_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = b"PK\x03\x04"


def _parquet_by_another_name(src: Path) -> str:
    """A note where `src`, which is not named as a table, starts as a Parquet file does (a
    `.parq`, as fastparquet's users name them, was refused as "not a .npy file"); else ''."""
    try:
        with src.open("rb") as f:
            start = f.read(len(_PARQUET_MAGIC))
    except OSError:
        return ""
    if start != _PARQUET_MAGIC:
        return ""
    return (
        "; it starts as a Parquet file does: a table is read as one when its name ends in "
        ".parquet or .pq (rename it, or link it under such a name)"
    )


_PARQUET_MAGIC = b"PAR1"


def _check_npy_file(src: Path) -> None:
    """What numpy's own errors would misname, named plainly: a file that is not a .npy at
    all (numpy blames pickled data), an array of Python objects, and a file shorter than its
    header says (numpy: "mmap length is greater than file size"); and what numpy accepts
    silently: bytes after the data."""
    with src.open("rb") as f:
        start = f.read(len(_NPY_MAGIC))
        if start.startswith(_ZIP_MAGIC):
            raise SpecError("is a zip archive (.npz?), not a single .npy array", source=str(src))
        if start != _NPY_MAGIC and src.suffix.lower() in _IMAGE_SUFFIXES:
            raise SpecError(
                "is one image; images are imported a directory at a time: give the "
                "directory that holds it",
                source=str(src),
            )
        if start != _NPY_MAGIC:
            raise SpecError(
                "not a .npy file: it does not start with NumPy's magic bytes (\\x93NUMPY)"
                + _parquet_by_another_name(src),
                source=str(src),
            )
        f.seek(0)
        try:
            shape, _, dtype = _read_npy_header(f)
        except Exception as exc:  # numpy raises many kinds on a damaged header
            raise SpecError(f"not a readable .npy header ({brief(exc)})", source=str(src)) from None
        header_bytes = f.tell()
    if dtype.hasobject:
        raise SpecError("holds Python objects (dtype object), not numbers", source=str(src))
    data_bytes = math.prod(shape) * dtype.itemsize
    file_bytes = src.stat().st_size
    if header_bytes + data_bytes > file_bytes:
        raise SpecError(
            f"truncated: its header declares {shape} {dtype} ({data_bytes} bytes of data), "
            f"the file holds {file_bytes - header_bytes} after the header",
            source=str(src),
        )
    if header_bytes + data_bytes < file_bytes:
        # np.save never writes past the data: two files joined, or a damaged header.
        raise SpecError(
            f"{file_bytes - header_bytes - data_bytes} bytes follow the data its header "
            f"declares ({shape} {dtype}, {data_bytes} bytes); a .npy file ends with its data "
            "(two files joined, or a damaged header?)",
            source=str(src),
        )


def _read_npy_header(f: BinaryIO) -> tuple[tuple[int, ...], bool, np.dtype[Any]]:
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        header = np.lib.format.read_array_header_1_0(f)
    elif version in ((2, 0), (3, 0)):
        # 3.0 is 2.0 with a UTF-8 header, which differs only in the names of a structured
        # dtype's fields (refused anyway): numpy itself writes 3.0 for such names alone.
        header = np.lib.format.read_array_header_2_0(f)
    else:
        raise ValueError(f".npy format version {version[0]}.{version[1]} is not supported")
    shape, fortran, dtype = header
    if any(int(n) < 0 for n in shape):
        raise ValueError(f"its header declares shape {tuple(shape)}, with a negative length")
    return tuple(int(n) for n in shape), bool(fortran), np.dtype(dtype)


def _header_crc(path: Path, data_offset: int) -> int:
    with path.open("rb") as f:
        return _crc32(f.read(data_offset))


@contextmanager
def _parquet_shard(path: Path, **options: Any) -> Iterator[Any]:
    """`pq.ParquetFile` of a shard (`options`: its own), by its path where pyarrow takes
    it, else through a Python file: pyarrow opens only UTF-8 paths, and a Parquet data set
    under a directory named otherwise (`data generate -o caf\xe9`, which writes through
    Python) ended `data show --verify` and `evaluate --data` in a UnicodeEncodeError
    traceback. Its errors are pyarrow's and OSErrors, as the caller's `open` would raise."""
    _, pq = _arrow()
    text = literal_path(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        with path.open("rb") as raw, pq.ParquetFile(raw, **options) as table:
            yield table
        return
    with pq.ParquetFile(text, **options) as table:
        yield table


def _parquet_chunks(
    path: Path, shard: ShardFacts, layout: RecordLayout, chunk_records: int
) -> Iterator[tuple[int, np.ndarray]]:
    """Batches of at most `chunk_records` rows, read through a bounded buffer."""
    pa, _ = _arrow()
    columns = list(layout.columns or ())
    with ExitStack() as opened:
        try:
            table = opened.enter_context(
                _parquet_shard(path, page_checksum_verification=True, **_STREAMED)
            )
        except (pa.ArrowException, OSError) as exc:
            raise ShardError(path, f"not a readable Parquet shard ({exc})") from None
        _check_parquet_shard(table, path, shard, layout)
        start = 0
        batches = table.iter_batches(batch_size=chunk_records, columns=columns, use_threads=False)
        while True:
            try:
                batch = next(batches, None)
                if batch is None:
                    break
                chunk = batch_to_records(batch, layout.dtype)
            except (pa.ArrowException, OSError, ValueError) as exc:
                raise ShardError(
                    path, f"cannot read the rows from {start} on ({exc}): corrupt"
                ) from None
            yield shard.offset + start, chunk
            start += len(chunk)
    if start != shard.records:
        raise ShardError(path, f"gave {start} rows, the manifest says {shard.records}")


def _check_parquet_shard(table: Any, path: Path, shard: ShardFacts, layout: RecordLayout) -> None:
    """The open Parquet file `table` holds the rows and columns the manifest says."""
    pa, _ = _arrow()
    found = table.schema_arrow
    columns = list(layout.columns or ())
    wanted = pa.schema([(name, pa.from_numpy_dtype(layout.dtype)) for name in columns])
    if table.metadata.num_rows != shard.records or not found.equals(wanted):
        raise ShardError(
            path,
            f"holds {table.metadata.num_rows} rows of {_describe(found)}, the manifest says "
            f"{shard.records} rows of {_describe(wanted)}",
        )


def _check_shard_layout(path: Path, shard: ShardFacts, layout: RecordLayout) -> None:
    """A shard's own header (.npy) or metadata (Parquet) against the manifest: its CRC-32
    can match a manifest whose records, shape or columns were edited."""
    if layout.shard_format == "npy":
        _open_npy_shard(path, shard, layout)
        return
    pa, _ = _arrow()
    try:
        with _parquet_shard(path, **_STREAMED) as table:
            _check_parquet_shard(table, path, shard, layout)
    except (pa.ArrowException, OSError) as exc:
        raise ShardError(path, f"not a readable Parquet shard ({exc})") from None


def _describe(schema: Any) -> str:
    return ", ".join(f"{field.name}: {field.type}" for field in schema) or "no columns"


def batch_to_records(batch: Any, dtype: np.dtype[Any]) -> np.ndarray:
    """A record batch of numeric columns as an (n, columns) array of `dtype`; a column with
    nulls is a ValueError naming it."""
    pa, _ = _arrow()
    columns = []
    for j, column in enumerate(batch.columns):
        name = batch.schema.field(j).name
        if column.null_count:
            raise ValueError(f"column {name!r} has {column.null_count} nulls")
        if pa.types.is_decimal(column.type):
            columns.append(_decimal_values(column, name, dtype))
        else:
            columns.append(column.to_numpy(zero_copy_only=False))
    if not columns:
        return np.empty((batch.num_rows, 0), dtype=dtype)
    # Stacking the columns and transposing the copy measured 1.5x faster than filling the
    # (n, columns) array column by column (strided writes). Each column is cast to `dtype`
    # on its own: stacked first, integers beside a float column went through float64 and
    # were rounded twice (2^60 + 2^36 + 1 became 2^60, one float32 step from the right
    # value). A float64 beyond float32's range becomes ±inf, which the import's check of
    # every record reports by its record number: numpy's own warning would be a second,
    # vaguer report on stderr.
    with np.errstate(over="ignore"):
        cast = [np.asarray(column, dtype=dtype) for column in columns]
    return np.ascontiguousarray(np.vstack(cast).T)


MAX_DECIMAL_DIGITS = 18
"""The widest decimal column an import reads: its unscaled values fit an int64 (TPC-H's and
TPC-C's money columns are decimal(15, 2) and decimal(6, 2))."""


def _decimal_values(column: Any, name: str, dtype: np.dtype[Any]) -> np.ndarray:
    """A decimal column (at most MAX_DECIMAL_DIGITS digits, scale ≥ 0: `_source_columns`
    checks) as float32 values, each the exact decimal rounded once to the nearest float32
    (ties to even): through float64 a value just past a float32 midpoint could be rounded
    onto it first, then to even."""
    if dtype != np.float32 or column.type.scale < 0:
        raise ValueError(f"column {name!r} is {column.type}, which is read as float32 only")
    if not len(column):  # its data buffer may be absent
        return np.empty(0, np.float32)
    pa, _ = _arrow()
    if not pa.types.is_decimal128(column.type):  # decimal32, 64 or 256: widened exactly
        column = column.cast(pa.decimal128(column.type.precision, column.type.scale))
    words = np.frombuffer(column.buffers()[1], dtype="<i8")
    pairs = words[2 * column.offset : 2 * (column.offset + len(column))].reshape(-1, 2)
    unscaled = pairs[:, 0]
    if not np.array_equal(pairs[:, 1], unscaled >> 63):  # a value past an int64
        raise ValueError(
            f"column {name!r} ({column.type}) holds a value of more than "
            f"{MAX_DECIMAL_DIGITS} digits"
        )
    return _rounded_to_float32(unscaled, column.type.scale)


def _rounded_to_float32(unscaled: np.ndarray, scale: int) -> np.ndarray:
    """unscaled / 10**scale, each rounded once to the nearest float32 (ties to even). The
    quotient in float64 is within a few of its units of the exact value, so its float32
    rounding is the exact value's unless it lies that close to a float32 midpoint; those
    (rare) values are decided exactly."""
    q = unscaled.astype(np.float64) / float(10**scale)  # 10**scale: exact up to 10**22
    with np.errstate(over="ignore"):
        rounded = q.astype(np.float32)
    beyond = np.where(q > rounded, np.float32(np.inf), np.float32(-np.inf))
    neighbour = np.nextafter(rounded, beyond)
    midpoint = (rounded.astype(np.float64) + neighbour.astype(np.float64)) / 2  # exact
    with np.errstate(invalid="ignore"):
        near = np.isfinite(midpoint) & (np.abs(q - midpoint) <= 8 * np.spacing(np.abs(q)))
    doubtful = np.flatnonzero(near & (q != rounded))
    if scale == 0 and len(doubtful):
        # Whole numbers (decimal(p, 0)) are decided in int64: such a value is near a float32
        # midpoint only past 2^24, where float32's spacing is ≥ 1, so twice the midpoint is a
        # whole number and 2 · unscaled − 2 · midpoint is exact. (One by one as Fractions,
        # a column of integers between 2^24 and 2^26, a quarter to a half of them ties, was
        # imported some 12 times slower than the same integers as int64.)
        twice = 2 * midpoint[doubtful]
        values = unscaled[doubtful]
        whole = (twice == np.rint(twice)) & (np.abs(twice) < 2.0**62)
        whole &= (values > -(2**62)) & (values < 2**62)  # 2 · unscaled fits an int64
        at = doubtful[whole]
        gap = 2 * values[whole] - twice[whole].astype(np.int64)
        odd = rounded[at].view(np.uint32) % 2 == 1
        moved = at[np.where(gap == 0, odd, (gap > 0) == (neighbour[at] > rounded[at]))]
        rounded[moved] = neighbour[moved]
        doubtful = doubtful[~whole]
    for i in doubtful:
        exact = Fraction(int(unscaled[i]), 10**scale)
        half = Fraction(float(midpoint[i]))
        if exact == half:  # a tie: the neighbour whose last mantissa bit is 0
            even = int(rounded[i : i + 1].view(np.uint32)[0]) % 2 == 0
            take = not even
        else:
            take = (exact > half) == (neighbour[i] > rounded[i])
        if take:
            rounded[i] = neighbour[i]
    return rounded


# -- writing ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _ShardSource:
    """One shard to write: where it goes, how many records, and its data in pieces."""

    device: int
    index: int
    records: int
    pieces: Iterable[np.ndarray]


def resolve_kernel(app: str | Kernel) -> Kernel:
    """The kernel for an app name, or the kernel itself; a kernel module not written yet is a
    clear error rather than an import traceback."""
    if isinstance(app, Kernel):
        # Checked before any shard is written: the manifest refused it after all of them.
        shape = tuple(app.record_shape)
        known = _app_reading_otherwise(app.name, app.dtype, shape)
        if known is not None:
            raise SpecError(
                f"kernel {app.name!r} reads {app.dtype} records of shape {shape}, and "
                f"ndpkit's app of that name {known.dtype} of shape {tuple(known.record_shape)}"
                ": give a kernel made through the Python API a name of its own",
                field="app",
            )
        return app
    try:
        return get_kernel(app)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("ndpkit.kernels"):
            raise NdpkitError(f"app {app!r} has no kernel in this build ({exc.name})") from None
        raise


def shard_seed(seed: int, device: int, shard: int) -> int:
    """A generator seed for one shard: independent streams per (seed, device, shard), so any
    shard can be regenerated alone and the layout does not change the other shards' data."""
    state = np.random.SeedSequence(seed, spawn_key=(device, shard)).generate_state(1, np.uint64)
    return int(state[0])


def generate_dataset(
    app: str | Kernel,
    size_bytes: int,
    devices: int,
    path: str | Path,
    *,
    seed: int = 0,
    shard_bytes: int = DEFAULT_SHARD_BYTES,
    overwrite: bool = False,
    shard_format: ShardFormat = "npy",
    on_stale_removed: Callable[[Path], object] | None = None,
    progress: Progress | None = None,
) -> Dataset:
    """About `size_bytes` of the app's synthetic data over `devices` devices, one shard at a time.

    Records are split evenly over devices (the first devices take one more when it does not
    divide) and each device's records into shards of at most `shard_bytes` (at least one record).
    `shard_format="parquet"` writes tables with columns x0, x1, … (apps with records of shape
    (d,) only). Space and write errors, and `on_stale_removed`, are as for `import_dataset`.
    `progress(written_bytes, total_bytes)` is called at the start and after each shard (bytes
    of records).
    """
    kernel = resolve_kernel(app)
    devices, shard_bytes = _check_counts(devices, shard_bytes)
    target = as_path(path, "path")
    overwrite = _check_writing(overwrite, on_stale_removed, progress)
    columns = _generated_columns(kernel, shard_format)
    seed = whole_number(seed, "seed", "a whole number ≥ 0", least=0)
    size_bytes = whole_number(size_bytes, "size_bytes", "a whole number of bytes")
    total = int(size_bytes) // kernel.record_bytes
    if total < devices:
        raise SpecError(
            f"{size_bytes} byte{'' if size_bytes == 1 else 's'} is less than one "
            f"{kernel.record_bytes}-byte {kernel.name} record per device ({devices} "
            f"device{'' if devices == 1 else 's'})",
            field="size",
        )
    per_shard = max(1, shard_bytes // kernel.record_bytes)

    def sources() -> Iterator[_ShardSource]:
        for device, count in enumerate(even_split(total, devices)):
            for index, (_, n) in enumerate(pieces(count, per_shard)):
                data = kernel.generate(n * kernel.record_bytes, shard_seed(seed, device, index))
                _check_generated(kernel, data)
                yield _ShardSource(device, index, len(data), (data,))

    meta = _meta(kernel, devices, shard_bytes, seed=seed, source="generated")
    if shard_format == "parquet":
        meta |= {"shard_format": "parquet", "columns": columns}
    return _write_dataset(target, overwrite, meta, sources(), total, on_stale_removed, progress)


PROGRESS_EXPECTED = "a function progress(done_bytes, total_bytes)"


def _check_writing(
    overwrite: object,
    on_stale_removed: object,
    progress: object,
) -> bool:
    """The arguments `generate_dataset` and `import_dataset` share, checked before anything
    is written or removed: `overwrite="no"` is truthy and replaced the data set there, and a
    number given as a callback was called only once the writing (or the removal of stale
    staging directories) was under way."""
    function_or_none(on_stale_removed, "on_stale_removed", "a function on_stale_removed(path)")
    function_or_none(progress, "progress", PROGRESS_EXPECTED)
    return true_or_false(overwrite, "overwrite")


def _generated_columns(kernel: Kernel, shard_format: str) -> tuple[str, ...] | None:
    if shard_format not in SHARD_FORMATS:
        raise SpecError(
            f"must be one of {', '.join(SHARD_FORMATS)}, got {shard_format!r}", field="shard_format"
        )
    if shard_format == "npy":
        return None
    if len(kernel.record_shape) != 1:
        raise SpecError(
            f"app {kernel.name!r} has records of shape {kernel.record_shape}; Parquet shards "
            "hold rows of features (apps whose records have shape (d,): lc, knn*, kmeans)",
            field="shard_format",
        )
    return tuple(f"x{j}" for j in range(kernel.record_shape[0]))


def import_dataset(
    src: str | Path,
    devices: int,
    path: str | Path,
    app: str | Kernel,
    *,
    shard_bytes: int = DEFAULT_SHARD_BYTES,
    overwrite: bool = False,
    columns: Sequence[str] | None = None,
    crop: bool = False,
    on_stale_removed: Callable[[Path], object] | None = None,
    on_cropped: Callable[[CropLoss], object] | None = None,
    progress: Progress | None = None,
) -> Dataset:
    """Shard an existing .npy file, Parquet table (one file or a directory of part files),
    CSV file or directory of images for `app`; `progress(written_bytes, total_bytes)` is
    told the bytes of records written, at the start and after each shard.

    A .npy must hold the app's dtype in C order with shape (n, *record shape), e.g. (n, 8) for
    lc and knn8 or (n, 256, 256) for sobel: n records, split contiguously (an app whose records
    are scalars takes the elements of any shape, in C order). A Parquet table (`.parquet`,
    `.pq`) gives one record per row from `columns` (default: all of its columns but the index
    a pandas DataFrame stores as one), which must
    be numeric (decimals of at most 18 digits included) and as many as the app's features;
    the values are cast to the app's dtype (each decimal's exact value rounded once) and
    the shards are Parquet tables with those columns. A directory holding .parquet or .pq
    files (Spark's `x.parquet/part-…`, DuckDB's and pyarrow's output) is one table, its
    parts read in order (`parquet_parts` says which and in which order), each with the
    columns chosen from the first, of the same types. A CSV file (`.csv`, `.tsv`, either
    gzip-compressed as `.csv.gz`) with a header line gives one record per row from `columns`
    (default: all but a pandas index), as a table does, into .npy shards: see
    `ndpkit.runtime.csv_source` (its `progress` first tells the bytes of the file parsed).
    A directory of images (PNG, JPEG, TIFF, BMP, netpbm, WebP; 8 bits a sample) gives, in
    file-name order, record-sized tiles of each to an app whose records are images (he,
    sobel, fft2d…: a 512×512 image makes four 256×256 records; any other size is an error
    naming the file), or each image's pixels to one whose records are scalars. `crop`
    lets images whose sizes are not whole records give the whole records that fit, and
    `on_cropped`, if given, is then passed what that left out (`CropLoss`, from the headers
    the records were counted from) once the data set is written.

    Nothing is written if the target's file system has less room than the records need; a
    write that fails (a full disk, a file size limit, a read-only directory) is a SpecError
    naming the data set and the file, and leaves nothing behind.

    With `on_stale_removed`, the staging directories that killed runs left beside `path`
    (`remove_stale_staging`) are removed once every argument has been checked, and each is
    passed to it; a call refused for its arguments removes nothing.
    """
    from ndpkit.runtime import csv_source  # noqa: PLC0415 - it imports this module

    kernel = resolve_kernel(app)
    devices, shard_bytes = _check_counts(devices, shard_bytes)
    source, path = as_path(src, "src"), as_path(path, "path")
    overwrite = _check_writing(overwrite, on_stale_removed, progress)
    crop = true_or_false(crop, "crop")
    function_or_none(on_cropped, "on_cropped", "a function on_cropped(loss)")
    # A directory is a table's part files if it holds any (or is named as a table), else images.
    parts = source.is_dir() and (source.suffix.lower() in _PARQUET_SUFFIXES or holds_parts(source))
    parquet = source.suffix.lower() in _PARQUET_SUFFIXES or parts
    delimited = csv_source.delimiter_of(source) is not None
    if isinstance(columns, str):  # a str is a Sequence[str]: "f0,f1" was 5 column names
        raise SpecError(
            f"columns must be a list of names, not the string {columns!r}: "
            f"{columns.split(',')!r}, say",
            field="columns",
        )
    # Column numbers ([0, 1, …]) ended in "'int' object has no attribute 'strip'".
    columns = None if columns is None else list(columns)
    if columns is not None and not all(isinstance(c, str) for c in columns):
        odd = [c for c in columns if not isinstance(c, str)]
        raise SpecError(
            f"columns are named, not numbered: give their names (strings), got {odd[:3]!r}",
            field="columns",
        )
    if columns is not None and not (parquet or delimited):
        raise SpecError(
            "only a Parquet table (.parquet or .pq) or a CSV file (.csv, .tsv) has columns "
            f"to choose; {src} is neither" + _parquet_by_another_name(source),
            field="columns",
        )
    if crop and source.exists() and not (source.is_dir() and not parts and kernel.record_shape):
        raise SpecError(
            "only a directory of images cut into records (image apps) can be cropped",
            source=str(source),
            field="crop",
        )
    _check_not_a_data_set(source)
    # A name that is not UTF-8 (Latin-1 bytes) is kept as its escapes (`caf\xe9.npy`): the
    # manifest's JSON cannot hold the lone surrogates Python reads such bytes as.
    real = os.fsencode(os.path.realpath(source)).decode("utf-8", "backslashreplace")
    origin = f"import {real}" + (" --crop" if crop else "")
    meta = _meta(kernel, devices, shard_bytes, seed=None, source=origin)
    found: Iterable[_ShardSource]
    loss: CropLoss | None = None
    if parts:
        _check_outside_parts(Path(path), source)
        found, chosen, records = _parquet_dir_sources(source, kernel, devices, shard_bytes, columns)
        meta |= {"shard_format": "parquet", "columns": chosen}
    elif source.is_dir():
        found, records, loss = _image_sources(source, kernel, devices, shard_bytes, crop)
    elif source.is_file() and parquet:
        found, chosen, records = _parquet_sources(source, kernel, devices, shard_bytes, columns)
        meta |= {"shard_format": "parquet", "columns": chosen}
    elif source.is_file() and delimited:
        return csv_source.import_csv(
            source,
            kernel,
            devices,
            shard_bytes,
            columns,
            Path(path),
            overwrite,
            meta,
            on_stale_removed,
            progress,
        )
    elif source.is_file():
        found, records = _npy_sources(source, kernel, devices, shard_bytes)
    elif source.exists():
        raise SpecError(
            "not a regular file or a directory (a device, FIFO or socket?)", source=str(source)
        )
    else:
        raise SpecError("no such file or directory", source=str(source))
    made = _write_dataset(Path(path), overwrite, meta, found, records, on_stale_removed, progress)
    if on_cropped is not None and loss is not None:
        on_cropped(loss)
    return made


def _check_not_a_data_set(source: Path) -> None:
    """A data set (or its manifest) is not data to import: read as a directory of images it
    was "no images" ("app 'lc' has records of shape (8,), not images"), as a Parquet table
    "holds files that are not parts (manifest.json)", and its manifest "not a .npy file".
    Say what it is, and how to get it over other devices (from what it was made)."""
    what = "is an ndpkit data set already"
    if source.name == MANIFEST and source.is_file():
        found = _written_by_ndpkit(source.parent)
        where = source.parent
    elif _DEVICE_DIR.fullmatch(source.name) and source.is_dir() and not _written_by_ndpkit(source):
        # DS/device-00 was "read as a directory of images … not images" (.npy shards)
        found = _written_by_ndpkit(source.parent)
        where = source.parent
        what = "is a device directory of an ndpkit data set"
    else:
        found = _written_by_ndpkit(source) if source.is_dir() else None
        where = source
    if found is None:
        return
    made = str(found.get("source"))
    again = (
        f"generate it again (`ndpkit data generate {found.get('app')} --seed "
        f"{found.get('seed')} --devices N`)"
        if made == "generated"
        else f"import what it was made from ({made.removeprefix('import ')}) with --devices N"
    )
    raise SpecError(
        f"{what} ({where}/{MANIFEST}), not data to import: the data set runs "
        f"as it is (`ndpkit evaluate --data {where}`); for its records over other devices, "
        + again,
        source=str(source),
    )


MAX_DEVICES = MAX_COUNT
"""The most devices a data set is sharded over: a platform file's largest SSD count."""


def _check_counts(devices: int, shard_bytes: int) -> tuple[int, int]:
    """Whole numbers ≥ 1, as Python ints, checked before any work: a float, a bool or a
    numpy integer failed in the manifest, after every shard was written. At most
    MAX_COUNT devices, as a platform file's SSD count: 100,000 took minutes of directories
    for 8 MiB of data, and as long again to list."""
    devices = whole_number(devices, "devices", "a whole number ≥ 1", least=1)
    if devices > MAX_DEVICES:
        raise SpecError(
            f"must be at most {MAX_DEVICES:,} (a platform's largest SSD count), got {devices:,}",
            field="devices",
        )
    return (
        devices,
        whole_number(shard_bytes, "shard_bytes", "a whole number of bytes ≥ 1", least=1),
    )


def _check_generated(kernel: Kernel, data: np.ndarray) -> None:
    """A generator that breaks its own record contract is a bug in the kernel: say so early."""
    if data.dtype != kernel.dtype or data.shape[1:] != kernel.record_shape or not len(data):
        raise ValueError(
            f"{kernel.name}.generate returned {data.dtype} {data.shape}; expected at least one "
            f"{kernel.dtype} record of shape {kernel.record_shape}"
        )


def _meta(
    kernel: Kernel, devices: int, shard_bytes: int, *, seed: int | None, source: str
) -> dict[str, Any]:
    return {
        "app": kernel.name,
        "seed": seed,
        "source": source,
        "dtype": kernel.dtype.str,
        "record_shape": tuple(kernel.record_shape),
        "record_bytes": kernel.record_bytes,
        "devices": devices,
        "shard_bytes": shard_bytes,
    }


def even_split(total: int, parts: int) -> list[int]:
    """`total` items over `parts`: sizes differ by at most one, the larger ones first."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def pieces(count: int, size: int) -> list[tuple[int, int]]:
    """(start, length) of consecutive pieces of at most `size` covering `count` items."""
    return [(start, min(size, count - start)) for start in range(0, count, size)]


def _write_dataset(
    path: Path,
    overwrite: bool,
    meta: dict[str, Any],
    sources: Iterable[_ShardSource],
    records: int,
    on_stale_removed: Callable[[Path], object] | None = None,
    progress: Progress | None = None,
    *,
    held_bytes: int = 0,
) -> Dataset:
    """Write shards and then the manifest into a staging directory and publish it atomically;
    `records` is how many the sources hold, for the free-space check and `progress`
    (written_bytes, total_bytes: at the start and after each shard). `held_bytes`: what the
    caller holds on the same disk until this returns (a CSV's temporary records), said in
    the free-space error."""
    path = _target(path)
    total_bytes = records * meta["record_bytes"]
    dtype = np.dtype(meta["dtype"])
    record_shape: tuple[int, ...] = meta["record_shape"]
    shard_format: ShardFormat = meta.get("shard_format", "npy")
    with _staging(
        path, overwrite, records * meta["record_bytes"], on_stale_removed, held_bytes
    ) as staging:
        entries: list[ShardEntry] = []
        offset = 0
        if progress is not None:  # here: a stale directory removed is said before the bar
            progress(0, total_bytes)
        for source in sources:
            relpath = shard_relpath(source.device, source.index, shard_format)
            target = staging / relpath
            with _disk(target.parent):
                target.parent.mkdir(exist_ok=True)
            shape = (source.records, *record_shape)
            if shard_format == "parquet":
                file_bytes, crc = _write_parquet_in_place(
                    target, dtype, shape, source.pieces, meta["columns"]
                )
            else:
                file_bytes, crc = _write_npy_in_place(target, dtype, shape, source.pieces)
            entries.append(
                ShardEntry(
                    device=source.device,
                    index=source.index,
                    path=relpath,
                    records=source.records,
                    offset=offset,
                    file_bytes=file_bytes,
                    crc32=crc,
                )
            )
            offset += source.records
            if progress is not None:
                progress(offset * meta["record_bytes"], total_bytes)
        manifest = Manifest(
            **meta, records=offset, data_bytes=offset * meta["record_bytes"], shards=tuple(entries)
        )
        with _disk(staging / MANIFEST):
            (staging / MANIFEST).write_text(manifest.to_json(), encoding="utf-8")
    return Dataset(path, manifest, _stamp_or_none(path / MANIFEST))


NPY_DATA_ALIGN = 4096
"""Where a written .npy shard's records begin: on a page, so a mapped window starts its
records at a page boundary. LC and k-NN's top-k split read records 128 bytes past a page
(where numpy's own 64-byte-padded header left them) 1-5% slower than on a page, or 16 bytes
past one, where numpy's large arrays begin (`benchmarks/alignment.py`); binarisation, HE
and K-Means do not care."""
_NPY_HEADER_LIMIT = 10_000
"""The longest header numpy (1.24 and later) reads without `max_header_size`."""
assert NPY_DATA_ALIGN - 10 <= _NPY_HEADER_LIMIT


def shard_place(path: Path | str, offset: int, records: int) -> str:
    """A shard as a message names it: its file and the records of the data set it holds
    (a kernel refuses a record by its number in the data set, which does not say which of
    thousands of files holds it)."""
    return f"{path} (records {offset} to {offset + records - 1} of the data set)"


def npy_header(dtype: np.dtype[Any], shape: tuple[int, ...]) -> bytes:
    """A version 1.0 .npy header for a C-order array, padded with spaces to NPY_DATA_ALIGN
    bytes (numpy pads to a multiple of 64 and reads headers up to _NPY_HEADER_LIMIT). A
    header too long for that (a record dtype of hundreds of fields) keeps numpy's padding,
    and its records are not on a page."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header,
        {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape},
    )
    numpy_head = header.getvalue()
    text = numpy_head[10:].rstrip()  # magic (6) + version (2) + length (2), then the dict
    if len(text) + 11 > NPY_DATA_ALIGN:
        return numpy_head
    length = NPY_DATA_ALIGN - 10
    return numpy_head[:8] + length.to_bytes(2, "little") + text.ljust(length - 1) + b"\n"


def write_npy(
    path: str | Path, dtype: np.dtype[Any], shape: tuple[int, ...], pieces: Iterable[np.ndarray]
) -> tuple[int, str]:
    """Write a .npy file from pieces of its rows without holding it whole; (bytes, CRC-32).
    Its records begin NPY_DATA_ALIGN bytes in, on a page (see `npy_header`).

    Whole or not at all (`_whole_file`): `path` must not exist; a write that fails, pieces
    that do not make `shape` (SpecErrors naming `path`), an error of the pieces' own or a
    Ctrl-C leave nothing at `path`."""
    return _whole_file(Path(path), lambda tmp: _write_npy_in_place(tmp, dtype, shape, pieces))


def _write_npy_in_place(
    path: Path, dtype: np.dtype[Any], shape: tuple[int, ...], pieces: Iterable[np.ndarray]
) -> tuple[int, str]:
    """`write_npy` straight to `path`, for a writer that has made its output atomic already
    (a data set's staging directory): a rename per shard would cost it for nothing, and its
    `_WriteError`s name the shard, not a temporary name."""
    head = npy_header(dtype, shape)
    crc = _crc32(head)
    expected = len(head) + math.prod(shape) * dtype.itemsize
    written = len(head)
    with _OutputFile(path) as f:
        aligned = _AlignedWrites(f, FOLIO_WRITE_BYTES)
        aligned.write(memoryview(head))
        for piece in pieces:
            raw = np.ascontiguousarray(piece, dtype=dtype).reshape(-1).view(np.uint8)
            crc = _crc32(raw, crc)
            aligned.write(raw.data)
            written += raw.nbytes
        aligned.close()
    if written != expected:
        raise _WrongLengthError(
            f"the pieces gave {written - len(head):,} bytes of records, and shape {shape} of "
            f"{dtype} needs {expected - len(head):,}"
        )
    return written, f"{crc:08x}"


FOLIO_WRITE_BYTES = 2 * 2**20
"""`write_npy` writes a shard in whole multiples of this at offsets that are multiples of it
(all but its last write). Linux caches a file written so in folios of this size (a huge
page), which a mapping of the shard maps with one page-table entry each. A write that starts
mid-way leaves the 2 MiB it starts in as small folios: the header's 4 KiB written on its own
cost a generated shard its first 2 MiB, and a shard imported in 8 MiB pieces a quarter of
itself. `benchmarks/shard_folios.py`: shards written that way mapped 75% in huge pages and
k-NN's top-k read them 1.4% slower than memory; written now, 100% and 0.2%."""


class _AlignedWrites:
    """Writes to `out` that start and end on multiples of `align` (but the last, `close`):
    a part short of the next multiple is held (copied) until the next write completes it."""

    def __init__(self, out: _OutputFile, align: int):
        self.out, self.align = out, align
        self.held = bytearray()

    def write(self, data: memoryview) -> None:
        data = data.cast("B") if data.format != "B" or data.ndim != 1 else data
        if self.held:
            needed = self.align - len(self.held)
            self.held += data[:needed]
            data = data[needed:]
            if len(self.held) < self.align:
                return
            self.out.write(self.held)
            self.held = bytearray()
        whole = len(data) - len(data) % self.align
        if whole:
            self.out.write(data[:whole])
        self.held += data[whole:]

    def close(self) -> None:
        if self.held:
            self.out.write(self.held)
            self.held = bytearray()


def write_parquet(
    path: str | Path,
    dtype: np.dtype[Any],
    shape: tuple[int, ...],
    pieces: Iterable[np.ndarray],
    columns: Sequence[str],
) -> tuple[int, str]:
    """Write a Parquet table (one column per feature) from pieces of its rows without holding
    it whole, in row groups of at most ROW_GROUP_BYTES; (bytes, CRC-32 of the file). Whole
    or not at all, as `write_npy`."""
    return _whole_file(
        Path(path), lambda tmp: _write_parquet_in_place(tmp, dtype, shape, pieces, columns)
    )


def _write_parquet_in_place(
    path: Path,
    dtype: np.dtype[Any],
    shape: tuple[int, ...],
    pieces: Iterable[np.ndarray],
    columns: Sequence[str],
) -> tuple[int, str]:
    """`write_parquet` straight to `path` (see `_write_npy_in_place`)."""
    pa, pq = _arrow()
    schema = pa.schema([(name, pa.from_numpy_dtype(dtype)) for name in columns])
    group_rows = max(1, ROW_GROUP_BYTES // (len(columns) * dtype.itemsize))
    rows = 0
    with _OutputFile(path) as f:
        writer: Any = None
        try:  # entered before the writer exists, so a Ctrl-C as it is made still closes it
            with f.errors():
                writer = pq.ParquetWriter(
                    f.file,
                    schema,
                    compression="none",
                    use_dictionary=False,
                    write_page_checksum=True,
                )
            # The pieces are made outside `errors()`: only the writer's OSErrors are the disk's.
            for piece in pieces:
                block = np.asarray(piece, dtype=dtype).reshape(-1, len(columns))
                for start in range(0, len(block), group_rows):
                    part = block[start : start + group_rows]
                    arrays = [
                        pa.array(np.ascontiguousarray(part[:, j])) for j in range(len(columns))
                    ]
                    batch = pa.record_batch(arrays, schema=schema)
                    with f.errors():
                        writer.write_batch(batch, row_group_size=group_rows)
                    rows += len(part)
            with f.errors():
                writer.close()  # writes the footer
        finally:
            if writer is not None and writer.is_open:  # an error is on its way: the file is
                # deleted with the staging directory
                with contextlib.suppress(Exception):
                    writer.close()
    if (rows, len(columns)) != shape:
        raise _WrongLengthError(
            f"the pieces gave {rows:,} rows of {len(columns)} columns, and the shape is {shape}"
        )
    return path.stat().st_size, _file_crc(path)


class _WrongLengthError(ValueError):
    """Pieces that hold more or fewer records than the shape a writer was told: a bug in a
    data set's sources (a ValueError, as before), the caller's mistake for `write_npy`."""


def _whole_file(path: Path, write: Callable[[Path], tuple[int, str]]) -> tuple[int, str]:
    """`write(tmp)` into a new temporary sibling of `path`, renamed to `path` when it is
    complete; removed on any failure, Ctrl-C included, so that `path` is never a partial
    file (a failing source, short pieces or `ulimit -f` left one, which readers took for a
    damaged .npy). A write error or wrong length is a SpecError naming `path`; an existing
    `path` is refused, not replaced."""
    if os.path.lexists(path):
        raise SpecError("already exists; not replacing it", source=str(path))
    tmp = temporary_sibling(path)
    try:
        done = write(tmp)
        with signals_held(), _disk(path):
            put_new(tmp, path, taken="already exists; not replacing it")
    except BaseException as exc:
        cleanup_held(lambda: tmp.unlink(missing_ok=True))
        if isinstance(exc, _WriteError):
            why = _reason(exc.error)
            raise SpecError(f"cannot write: {why}; nothing was written", source=str(path)) from None
        if isinstance(exc, _WrongLengthError):
            raise SpecError(f"{exc}; nothing was written", source=str(path)) from None
        raise
    return done


class _WriteError(Exception):
    """An OSError writing an output (a full disk, a file size limit, a read-only directory),
    told apart from the errors of the data being written, which pass through unchanged."""

    def __init__(self, path: Path, error: OSError):
        super().__init__(path, error)
        self.path = path
        self.error = error


@contextmanager
def _disk(path: Path) -> Iterator[None]:
    """An OSError inside is the disk's, about `path`: a `_WriteError`."""
    try:
        yield
    except OSError as exc:
        raise _WriteError(path, exc) from None


class _OutputFile:
    """A new file (it must not exist) whose write errors are `_WriteError`s naming it."""

    def __init__(self, path: Path):
        self.path = path
        with _disk(path):
            self.file = path.open("xb")

    def errors(self) -> contextlib.AbstractContextManager[None]:
        return _disk(self.path)

    def write(self, data: Any) -> None:
        with _disk(self.path):
            self.file.write(data)

    def __enter__(self) -> _OutputFile:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is None:
            with _disk(self.path):
                self.file.close()  # flushes: a full disk may only show here
        else:
            with contextlib.suppress(OSError):
                self.file.close()


def _reason(error: OSError) -> str:
    why = error.strerror or str(error)
    if error.errno == errno.EFBIG:
        return f"{why} (over the file system's or `ulimit -f`'s limit on a file's size)"
    return why


def _target(path: Path) -> Path:
    """`path` as given, except where its text cannot name a sibling or be checked as the
    directory it is: `.` (no name), and a path with `..` in it, which is resolved as the
    system resolves it (after a symlink, `link/..` is the parent of the link's target; a
    lexical `x/..` would be the working directory). The last component is not resolved:
    a symlink there is refused, not followed."""
    if path.name not in ("", ".", "..") and ".." not in path.parts:
        return path
    try:
        if path.name in ("", ".", ".."):
            return Path(os.path.realpath(path))
        return Path(os.path.realpath(path.parent)) / path.name
    except OSError as exc:  # the working directory was removed
        raise SpecError(f"cannot resolve the path ({_reason(exc)})", source=str(path)) from None


@contextmanager
def _staging(
    path: Path,
    overwrite: bool,
    needed_bytes: int,
    on_stale_removed: Callable[[Path], object] | None = None,
    held_bytes: int = 0,
) -> Iterator[Path]:
    """A temporary sibling of `path` that becomes `path` on success and vanishes on failure
    (also on a second Ctrl-C or SIGTERM: the removal and the renames hold signals). A write
    error inside is a SpecError naming `path` and the file. With `on_stale_removed`, killed
    runs' staging directories are swept first (see `import_dataset`)."""
    _check_target(path, overwrite)
    if on_stale_removed is not None:
        # After every check of the arguments (a refused run changes nothing), before the
        # free-space check (what a killed run left may be what makes the room).
        for left in remove_stale_staging(path):
            on_stale_removed(left)
    _check_free_space(
        path, needed_bytes, replacing=overwrite and path.is_dir(), held_bytes=held_bytes
    )
    staging: Path | None = None
    made: list[Path] = []
    lock: int | None = None
    try:
        with signals_held():  # so that `staging` is known before any signal can stop us
            staging, made = _new_sibling_dir(path)
            lock = _hold(staging)
            _mark(staging)
        yield staging
        with signals_held():
            with _disk(staging / STAGING_MARKER):
                (staging / STAGING_MARKER).unlink()  # not part of the data set
            _publish(staging, path, overwrite)
    except BaseException as exc:

        def clean() -> None:
            if staging is not None:
                _remove_staging(staging)
            _remove_empty(made)

        cleanup_held(clean)
        if isinstance(exc, _WriteError):
            raise _write_failed(path, staging, exc) from None
        raise
    finally:
        if lock is not None:
            os.close(lock)  # after the rename or the removal: no sweep sees it half done


def _remove_staging(staging: Path) -> None:
    """`staging` and everything in it, its STAGING_MARKER last: a run killed while removing
    thousands of shards (a third Ctrl-C, SIGKILL after SIGTERM) leaves a directory that is
    still marked, so the next run sweeps it (`rmtree` deletes in listing order, the marker
    among the first)."""
    with contextlib.suppress(OSError), os.scandir(staging) as entries:
        for entry in entries:
            if entry.name == STAGING_MARKER:
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
    shutil.rmtree(staging, ignore_errors=True)


STALE_STAGING_S = 60.0
"""How long nothing in a staging directory nobody holds must have changed before
`remove_stale_staging` takes it for a killed run's."""
_STAGING_NAME = re.compile(r"\.tmp-[0-9a-f]{8}")
STAGING_MARKER = ".ndpkit-staging"
"""The file a run writes into its staging directory as it makes it (and removes just before
the rename that publishes it): only a directory holding it is ever swept. The name alone
said nothing: a user's `proj.tmp-cafe2024` or `backup.tmp-20240101` beside `-o proj` or
`-o backup` was deleted as a killed run's."""
_MARKER_TEXT = (
    "ndpkit: this directory is a data set being written; ndpkit removes it when its run "
    "fails, or once that run was killed and nothing here has changed for a minute\n"
)


def _mark(staging: Path) -> None:
    with _disk(staging / STAGING_MARKER):
        (staging / STAGING_MARKER).write_text(_MARKER_TEXT, encoding="utf-8")


def is_staging_dir(path: str | Path) -> bool:
    """Whether `path` is a directory an `ndpkit data` run made to write a data set in (it
    holds `STAGING_MARKER`; a symbolic link is not followed)."""
    if os.path.islink(path):  # lstat below follows every component but the last
        return False
    try:
        return S_ISREG(os.lstat(Path(path) / STAGING_MARKER).st_mode)
    except OSError:
        return False


def _hold(staging: Path) -> int | None:
    """A lock on the staging directory for as long as this run writes it: a run killed too
    hard to remove it (SIGKILL) lets go of the lock as it dies, which tells
    `remove_stale_staging` the directory is a leftover. None where there is no flock
    (Windows), or the directory cannot be opened (then it is only named, not swept)."""
    try:
        return lock_dir(staging)
    except (OSError, AttributeError):
        return None


def remove_stale_staging(path: str | Path) -> list[Path]:
    """Remove the staging directories beside `path` (`PATH.tmp-` and 8 hex digits) that a
    killed `generate`/`import` left: made by ndpkit (`STAGING_MARKER` in them), this user's,
    held by no run, and with nothing in them or their device directories changed for
    `STALE_STAGING_S`. Answers what it removed; anything it cannot read, lock or remove is
    left (and named by the command line), and so is anything without the marker, whatever
    its name."""
    if os.name != "posix":
        return []
    try:
        target = _target(Path(path))
    except SpecError:
        return []
    stem = name_kept(target.name)
    removed: list[Path] = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return []
    for entry in entries:
        tail = entry.name[len(stem) :]
        if not entry.name.startswith(stem) or not _STAGING_NAME.fullmatch(tail):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat().st_uid != os.getuid():
                continue
            if not is_staging_dir(entry.path):
                continue
            fd = lock_dir(entry.path)
        except OSError:  # held by a run that is writing it, or unreadable
            continue
        try:
            if time.time() - _last_change(Path(entry.path)) >= STALE_STAGING_S:
                _remove_staging(Path(entry.path))
        finally:
            os.close(fd)
        if not os.path.lexists(entry.path):
            removed.append(Path(entry.path))
    return removed


def _last_change(directory: Path) -> float:
    """The latest modification time of `directory` and of the directories in it (a shard
    written into `device-03/` changes that directory's time)."""
    times = [directory.stat().st_mtime]
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False):
                    times.append(entry.stat(follow_symlinks=False).st_mtime)
    return max(times)


def _write_failed(path: Path, staging: Path | None, exc: _WriteError) -> SpecError:
    if staging is None or not exc.path.is_relative_to(staging):
        what = "create the data set directory"
    else:
        what = f"write {exc.path.relative_to(staging).as_posix()}"
    return SpecError(f"cannot {what}: {_reason(exc.error)}; nothing was written", source=str(path))


def _make_parents(path: Path) -> list[Path]:
    """Makes the missing parents of `path`, shallowest first, and answers those this call
    made, deepest first: a run that fails removes them, so that "nothing was written"
    holds. One that another process makes meanwhile (FileExistsError) is not ours."""
    existing = _existing_ancestor(path)
    missing = list(itertools.takewhile(lambda parent: parent != existing, path.parents))
    made: list[Path] = []
    try:
        for parent in reversed(missing):
            try:
                parent.mkdir()
            except FileExistsError:
                continue
            made.insert(0, parent)
    except BaseException:
        _remove_empty(made)
        raise
    return made


def _remove_empty(directories: list[Path]) -> None:
    """Removes each of `directories` (deepest first) that is still empty."""
    for directory in directories:
        with contextlib.suppress(OSError):
            directory.rmdir()


def _existing_ancestor(path: Path) -> Path:
    """The nearest of `path`'s parents that exists (a relative path's last is '.')."""
    existing = path.parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    return existing


def _check_free_space(
    path: Path, needed_bytes: int, *, replacing: bool = False, held_bytes: int = 0
) -> None:
    """Refuse a data set that its file system has no room for before writing any of it, not
    after filling the disk. `needed_bytes` are the records alone: headers add a little.
    `replacing`: an old data set at `path` that `overwrite` replaces, which is said to keep
    its space until the new one is whole (replacing 4 MiB with 4 MiB on a disk with 6 MiB
    was refused with no word of why). `held_bytes`: the temporary copy of a CSV's records,
    already written and taking its space until the data set is whole, which is said too (a
    938 KiB import refused on a disk with 1 MiB free said "has 76 KiB free", with no word
    of the 960 KB copy that `df` no longer showed)."""
    existing = _existing_ancestor(path)
    try:
        stats = os.statvfs(existing)
    except OSError:
        return  # no figure (a missing or unreadable directory): the writes will tell
    if stats.f_blocks == 0:
        raise SpecError(
            f"{os.path.realpath(existing)} is on a file system with no storage of its own "
            "(such as /proc or /sys), which cannot hold a data set; nothing was written",
            source=str(path),
        )
    free_bytes = stats.f_bavail * stats.f_frsize
    if needed_bytes > free_bytes:
        from ndpkit.units import Kind, format_si  # noqa: PLC0415 - pint, on this error only

        def size(n: int) -> str:
            return f"{format_si(n, Kind.SIZE, binary=True)} ({n:,} bytes)"

        kept = (
            " (the data set it replaces keeps its space until the new one is whole: remove "
            "it first, or write elsewhere)"
            if replacing
            else ""
        )
        held = (
            f" after the temporary copy of its records, {size(held_bytes)}, which the import "
            "holds until the data set is written (a CSV import needs room for its records "
            "twice)"
            if held_bytes
            else ""
        )

        raise SpecError(
            f"the data set needs at least {size(needed_bytes)} but the file system of "
            f"{os.path.realpath(existing)} has {size(free_bytes)} free{held}{kept}; nothing was "
            "written",
            source=str(path),
        )


def _new_sibling_dir(path: Path) -> tuple[Path, list[Path]]:
    """A new, empty directory beside `path` (its parents made as needed), named `PATH.tmp-`
    and 8 random hex digits, made as `mkdir` makes one (0777 less the umask): it becomes the
    data set, which `tempfile.mkdtemp`'s 0700 would hide from every other user. Also the
    parents it made (`_make_parents`)."""
    existing = _existing_ancestor(path)
    if not existing.is_dir():
        raise SpecError(
            f"cannot create the data set directory: {existing} is not a directory",
            source=str(path),
        )
    with _disk(path):
        made = _make_parents(path)
    while True:
        candidate = path.with_name(f"{name_kept(path.name)}.tmp-{secrets.token_hex(4)}")
        try:
            with _disk(path):
                candidate.mkdir()
        except _WriteError as exc:
            if isinstance(exc.error, FileExistsError):
                continue
            _remove_empty(made)
            raise
        except BaseException:
            _remove_empty(made)
            raise
        return candidate, made


def data_set_around(path: Path) -> Path | None:
    """The data set directory `path` lies inside (as relative as `path` is), or None. A data
    set holds its manifest and device-NN/ of shard files only: anything else there stops its
    next `--overwrite` ("holds …, which ndpkit did not write"), and replacing it would
    delete that."""
    for outer in Path(os.path.abspath(path)).parents:
        if _written_by_ndpkit(outer) is not None:
            return outer if path.is_absolute() else Path(os.path.relpath(outer))
    return None


def refuse_a_file_inside_a_data_set(
    path: Path, what: str, *, field: str, source: str | None = None
) -> None:
    """A SpecError where a file written at `path` would land inside a data set (any, not
    only one being read): the file was written, and then the data set's next `data
    generate/import --overwrite` was refused ("holds profiles.json, which ndpkit did not
    write"). A file is written where a link to it points, so links are followed."""
    around = data_set_around(Path(os.path.realpath(path)))
    if around is not None:
        shown = around if path.is_absolute() else Path(os.path.relpath(around))
        raise SpecError(
            f"{str(path)!r} is inside the data set {str(shown)!r}, which holds its "
            f"{MANIFEST} and device-NN/ directories of shards only (anything else there stops "
            f"its --overwrite): write {what} elsewhere",
            source=source,
            field=field,
        )


def _check_not_inside_a_data_set(path: Path) -> None:
    """A data set written inside another (`-o DS/device-00/new`, `-o DS/sub`) was written,
    and left DS holding a directory ndpkit did not write there: DS's next `--overwrite` was
    refused ("holds device-00/new, which ndpkit did not write"), and replacing it would
    have deleted the new one."""
    shown = data_set_around(path)
    if shown is not None:
        raise SpecError(
            f"is inside the data set {shown}, which holds its {MANIFEST} and device-NN/ "
            "directories of shards only (anything else there stops its --overwrite, "
            "which would delete it): write it elsewhere; nothing was written",
            source=str(path),
        )


def _check_target(path: Path, overwrite: bool) -> None:
    _check_not_inside_a_data_set(path)
    if not path.exists() and not path.is_symlink():
        return
    if path.is_symlink():
        # said first: overwrite would not help; a link to a data set is not one to the user
        raise SpecError(
            f"is a symbolic link (to {os.readlink(path)}): a data set's output must be a "
            "real directory, not a link to one; give the link's target or another name; "
            "not replacing it",
            source=str(path),
        )
    if not path.is_dir():
        # said first: overwrite would not help (/dev/null, a file)
        raise SpecError(
            "exists and is not a data set directory; not replacing it", source=str(path)
        )
    if os.path.ismount(path):
        # "already exists; pass --overwrite", whose run wrote every shard beside it, on the
        # file system it is mounted on, and then failed: "cannot move the old data set
        # aside (Device or resource busy)". A data set is renamed into place whole.
        raise SpecError(
            "is a mount point, which cannot be replaced by a data set (one is written beside "
            f"its directory and renamed onto it): give a directory inside, such as {path / 'ds'}; "
            "nothing was written",
            source=str(path),
        )
    with contextlib.suppress(OSError):
        if Path.cwd().resolve().is_relative_to(path.resolve()):
            raise SpecError(
                "is the working directory or holds it: replacing it would delete the "
                "directory this process (and its shell) is in; run from outside it",
                source=str(path),
            )
    if not overwrite:
        if _empty_directory(path):
            # `mkdir out` first is common; nothing is lost, and the publishing rename
            # replaces an empty directory (and fails on one filled meanwhile).
            return
        raise SpecError(
            "already exists; pass overwrite (--overwrite) to replace it", source=str(path)
        )
    if not (path / MANIFEST).is_file():
        if any(path.iterdir()):
            raise SpecError(
                "exists and is not a data set (no manifest.json); not replacing it",
                source=str(path),
            )
        return
    try:
        ours = _names_a_data_set(path / MANIFEST)
    except OSError as exc:
        # Unreadable (chmod 000): it may be a data set or not; either way it stays.
        raise SpecError(
            f"exists, and its manifest.json cannot be read ({_reason(exc)}), so whether it "
            "is a data set is not known; not replacing it",
            source=str(path),
        ) from None
    if not ours:
        # Another tool's manifest.json (a web app's, a package's) marks no data set: with
        # only its name looked at, --overwrite deleted the project around it.
        raise SpecError(
            f"exists and is not a data set (its manifest.json is not an ndpkit data set's: "
            f'no "format": "{FORMAT}"); not replacing it',
            source=str(path),
        )
    foreign = _not_written_by_ndpkit(path)
    if foreign:
        # What the user keeps in a data set's directory (the very file being imported,
        # `-o DIR` from `DIR/raw.npy`) was deleted with the old data set.
        names = ", ".join(foreign[:5]) + (", …" if len(foreign) > 5 else "")
        raise SpecError(
            f"holds {names}, which ndpkit did not write (a data set holds {MANIFEST} and "
            "device-NN/ of shard files only) and which replacing it would remove (a symbolic "
            "link: the link): move them out first; not replacing it",
            source=str(path),
        )


_DEVICE_DIR = re.compile(r"device-[0-9]{2,}")
_SHARD_FILE = re.compile(r"shard-[0-9]{4,}\.(npy|parquet)")


def _not_written_by_ndpkit(path: Path) -> list[str]:
    """The names in data set directory `path`, by name, other than its manifest, its device
    directories and the shard files in them (those inside a device directory as
    `device-NN/name`); none where a directory cannot be listed (replacing it then fails
    anyway)."""
    foreign: list[str] = []
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                if _DEVICE_DIR.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False):
                    foreign.extend(f"{entry.name}/{name}" for name in _not_shards(entry.path))
                elif entry.name != MANIFEST:
                    foreign.append(entry.name)
    except OSError:
        return []
    return sorted(foreign)


def _not_shards(device_dir: str) -> list[str]:
    """The names in a device directory that are not shard files ndpkit writes."""
    try:
        with os.scandir(device_dir) as entries:
            return [
                entry.name
                for entry in entries
                if not (_SHARD_FILE.fullmatch(entry.name) and entry.is_file(follow_symlinks=False))
            ]
    except OSError:
        return []


def _names_a_data_set(manifest: Path) -> bool:
    """Whether `manifest` is JSON whose `format` is an ndpkit data set's (the rest of it
    may be damaged: a data set whose manifest no longer validates may still be replaced).
    A manifest that cannot be read is an OSError: that says nothing either way."""
    try:
        document = json.loads(manifest.read_bytes())
    except (ValueError, RecursionError):
        return False
    return isinstance(document, dict) and document.get("format") == FORMAT


def _empty_directory(path: Path) -> bool:
    """Whether `path` is a directory with nothing in it (False when it cannot be listed)."""
    try:
        with os.scandir(path) as entries:
            return next(entries, None) is None
    except OSError:
        return False


def _publish(staging: Path, path: Path, overwrite: bool) -> None:
    """Rename the finished staging directory onto `path`. With `overwrite`, any old data set
    is moved aside first (rename cannot replace a non-empty directory) and deleted only
    afterwards. Without it, the rename itself is the check that nothing is at `path`: a
    data set another run published there since `_check_target` (two runs to one -o) makes
    it fail, where moving it aside would have deleted that run's data set."""
    if not overwrite:
        try:
            os.rename(staging, path)  # onto a non-empty directory: ENOTEMPTY, never a replace
        except OSError as exc:
            if path.is_dir() and not path.is_symlink():
                raise SpecError(
                    "already exists (made while this run wrote; another run's?); pass "
                    "overwrite (--overwrite) to replace it",
                    source=str(path),
                ) from None
            if path.exists() or path.is_symlink():
                raise SpecError(
                    "now exists and is not a data set directory; not replacing it",
                    source=str(path),
                ) from None
            raise SpecError(
                f"cannot create the data set ({exc.strerror})", source=str(path)
            ) from None
        return
    old: Path | None = None
    if path.exists():
        # Checked again: what was put into the old data set while this run wrote its shards
        # (minutes, for a large one) would go with it.
        _check_target(path, overwrite)
        try:
            old = Path(tempfile.mkdtemp(prefix=f"{name_kept(path.name)}.old-", dir=path.parent))
            os.replace(path, old / "dataset")
        except OSError as exc:
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
            raise SpecError(
                f"cannot move the old data set aside ({exc.strerror}); it is unchanged",
                source=str(path),
            ) from None
    try:
        os.replace(staging, path)
    except OSError as exc:
        if old is None:
            raise SpecError(
                f"cannot create the data set ({exc.strerror})", source=str(path)
            ) from None
        try:
            os.replace(old / "dataset", path)
        except OSError as back:
            if not os.path.lexists(path):  # nothing took its place: keep the old one
                kept, old = old / "dataset", None
                raise SpecError(
                    f"cannot create the data set ({exc.strerror}), nor put the old one back "
                    f"({back.strerror}); the old one is at {kept}",
                    source=str(path),
                ) from None
            # Another run published a data set at `path` between the two renames: it stays,
            # and the old one, which neither run wants now, goes.
            raise SpecError(
                "another run made a data set here while this one replaced it; it is left "
                "as that run wrote it, and this run's is discarded",
                source=str(path),
            ) from None
        raise SpecError(
            f"cannot create the data set ({exc.strerror}); the old one is back",
            source=str(path),
        ) from None
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)  # what cannot go is named by the next run


# -- import sources -----------------------------------------------------------------------


def read_records(
    path: Path,
    data_offset: int,
    dtype: np.dtype[Any],
    record_shape: tuple[int, ...],
    start: int,
    count: int,
    *,
    copy: bool = False,
    unchanged_from: ShardStamp | None = None,
) -> np.ndarray:
    """Records [start, start + count) of a .npy file as a read-only window of its own mapping,
    or with `copy` read into memory (and with `unchanged_from`, a `SourceChangedError` unless
    the file still has that stamp once read).

    Each window is mapped and unmapped on its own, so a process that walks a whole file keeps
    only the current window resident (its RSS does not grow with the file). The window's
    pages are mapped when it is (MAP_POPULATE, Linux): one system call instead of a page
    fault every few pages while the kernel runs, which made LC's device part 20% slower.

    A file that may change while it is read (an import's source; a shard read by the
    command's own process) is copied: truncated meanwhile, it is a short read (EOFError)
    where a mapped page past the new end would kill the process (SIGBUS)."""
    shape = (count, *record_shape)
    items = math.prod(shape)
    at = data_offset + start * math.prod(record_shape) * dtype.itemsize
    if copy:
        return _read_into(path, at, np.empty(shape, dtype), unchanged_from)
    if items == 0:
        return np.empty(shape, dtype)
    base = at - at % mmap.ALLOCATIONGRANULARITY
    with path.open("rb") as f:
        window = map_read_only(f.fileno(), at - base + items * dtype.itemsize, base)
    return np.frombuffer(window, dtype, items, at - base).reshape(shape)


def _stamp_of(src: Path) -> ShardStamp:
    try:
        return ShardStamp.of(os.stat(src))
    except OSError as exc:
        raise SpecError(f"cannot read it ({_reason(exc)})", source=str(src)) from None


class SourceChangedError(OSError):
    """The file read is no longer the version it was when it was checked."""


def _read_into(
    path: Path, at: int, out: np.ndarray, unchanged_from: ShardStamp | None = None
) -> np.ndarray:
    """`out` filled from `path` at byte `at`; EOFError if the file ends first. With
    `unchanged_from`, a SourceChangedError unless the file opened has that stamp before
    and after the read: a source replaced by rename, or written to, while an import read it
    piece by piece gave a data set of pieces of both versions without a word."""
    view = out.reshape(-1).view(np.uint8).data
    with path.open("rb", buffering=0) as f:
        _check_unchanged(f.fileno(), unchanged_from)
        f.seek(at)
        done = 0
        while done < len(view):
            got = f.readinto(view[done:])
            if not got:
                raise EOFError(f"the file ends {len(view) - done} bytes early")
            done += got
        _check_unchanged(f.fileno(), unchanged_from)
    return out


def _check_unchanged(fd: int, stamp: ShardStamp | None) -> None:
    if stamp is not None:
        now = ShardStamp.of(os.fstat(fd))
        if now != stamp:
            raise SourceChangedError(stamp.change_to(now))


def _npy_sources(
    src: Path, kernel: Kernel, devices: int, shard_bytes: int
) -> tuple[Iterator[_ShardSource], int]:
    """A .npy source split contiguously: device d gets the d-th block of records; (the
    shards, their records). Checked before anything is written; the shards read the source
    lazily, piece by piece."""
    before = _stamp_of(src)
    array = _open_npy(src)
    # The file read piece by piece must be the one whose header was checked: np.load
    # opens the file by name, so one renamed over it around the load is caught here.
    stamp = _stamp_of(src)
    if stamp != before:
        raise SpecError(
            f"changed while it was read (it {before.change_to(stamp)} while its header was "
            "read); nothing was written: import again once it is written",
            source=str(src),
        )
    if array.dtype != kernel.dtype:
        raise SpecError(
            f"holds {array.dtype}, app {kernel.name!r} needs {kernel.dtype}", source=str(src)
        )
    # Scalar records (a per-pixel app) are a stream of any array's elements. Other records
    # must be the array's rows: reshaping would make records of unrelated values, a (1000, 3)
    # array as 375 knn8 points each taking features from three different rows.
    scalar = kernel.record_shape == ()
    if not scalar and array.shape[1:] != kernel.record_shape:
        expected = ", ".join(["n", *map(str, kernel.record_shape)])
        raise SpecError(
            f"has shape {array.shape}; app {kernel.name!r} needs ({expected}): n records of "
            f"shape {kernel.record_shape}",
            source=str(src),
        )
    if not array.flags.c_contiguous:
        raise SpecError("is in Fortran order; C order is required", source=str(src))
    total = array.size if scalar else len(array)
    if total < devices:
        raise SpecError(_too_few(total, "record", devices), source=str(src))
    shards = _npy_shards(src, int(array.offset), total, kernel, devices, shard_bytes, stamp)
    return shards, total


def _npy_shards(
    src: Path,
    data_offset: int,
    total: int,
    kernel: Kernel,
    devices: int,
    shard_bytes: int,
    stamp: ShardStamp,
) -> Iterator[_ShardSource]:
    per_shard = max(1, shard_bytes // kernel.record_bytes)
    per_piece = max(1, _PIECE_BYTES // kernel.record_bytes)

    def read(start: int, count: int) -> Iterator[np.ndarray]:
        for offset, n in pieces(count, per_piece):
            at, shape = start + offset, kernel.record_shape
            try:
                piece = read_records(
                    src, data_offset, kernel.dtype, shape, at, n, copy=True, unchanged_from=stamp
                )
            except SourceChangedError as exc:
                raise _changed_while_read(src, str(exc)) from None
            except EOFError:
                raise SpecError(
                    "changed while it was read: it ends before the records its header "
                    "declares (truncated meanwhile?); nothing was written",
                    source=str(src),
                ) from None
            except OSError as exc:
                raise SpecError(
                    f"cannot read it ({_reason(exc)}); nothing was written", source=str(src)
                ) from None
            yield _finite(piece, src, at)

    first = 0
    for device, count in enumerate(even_split(total, devices)):
        for index, (start, n) in enumerate(pieces(count, per_shard)):
            yield _ShardSource(device, index, n, read(first + start, n))
        first += count


def _finite(
    records: np.ndarray,
    src: Path,
    first: int,
    columns: Sequence[str] | None = None,
    cast_from: Sequence[str] = (),
    source: Any = None,
) -> np.ndarray:
    """`records` (the first is record `first` of `src`), refused if a float one holds NaN or
    ±inf: every kernel's reference (scikit-learn's k-NN and K-Means first) rejects them, so
    the data set would fail at its first run instead of here. The message names the record
    and, for rows of features, the column (`columns`, else the feature's index), and the
    value; an infinity where `cast_from[j]` names the wider type column j was cast from may
    have been a finite value beyond the app's range: with `source`, the record batch
    `records` were cast from, the message says which (it said "+inf (or a double value
    beyond …)" of a true +inf, and "+inf" of 1e300)."""
    if records.dtype.kind == "f":
        flat = np.isfinite(records.reshape(len(records), -1))
        finite = flat.all(axis=1)
        if not finite.all():
            row = int(np.argmin(finite))
            j = int(np.argmin(flat[row]))
            value = float(records.reshape(len(records), -1)[row, j])
            at = f"{first + row}"
            if records.ndim == 2:
                at += f", column {columns[j]!r}," if columns else f", feature {j},"
            held = "NaN" if math.isnan(value) else ("+inf" if value > 0 else "-inf")
            wider = cast_from[j] if j < len(cast_from) else ""
            was = float(source.column(j)[row].as_py()) if wider and source is not None else None
            limit = f"±{np.finfo(records.dtype).max:.1e}, the range of {records.dtype}"
            if was is not None and math.isfinite(was):
                held = f"{was!r}, a {wider} value beyond {limit}"
            elif wider and was is None and not math.isnan(value):
                # A wider column cast to the app's float32 turns a finite 1e300 into inf.
                held += f" (or a {wider} value beyond {limit})"
            raise SpecError(
                f"record {at} holds {held}; the apps' kernels need finite values",
                source=str(src),
            )
    return records


def _open_npy(src: Path) -> np.memmap[Any, Any]:
    _check_npy_file(src)
    try:
        array = np.load(src, mmap_mode="r", allow_pickle=False)
    except OSError as exc:
        if exc.errno != errno.ENOMEM:
            raise SpecError(f"not a readable .npy file ({exc})", source=str(src)) from None
        # A whole .npy that cannot be mapped (`ulimit -v`) was "not a readable .npy file".
        raise SpecError(
            f"cannot map it ({exc.strerror}): this process may not map that much (its "
            "address space, `ulimit -v`, or memory, is too small); raise the limit",
            source=str(src),
        ) from None
    except Exception as exc:  # np.load raises many kinds on a file that is not .npy
        raise SpecError(f"not a readable .npy file ({exc})", source=str(src)) from None
    if not isinstance(array, np.memmap):
        raise SpecError("not a single .npy array (an .npz archive?)", source=str(src))
    return array


def _parquet_sources(
    src: Path, kernel: Kernel, devices: int, shard_bytes: int, columns: Sequence[str] | None
) -> tuple[Iterator[_ShardSource], tuple[str, ...], int]:
    """A Parquet table split contiguously like a .npy: device d gets the d-th block of rows;
    (the shards, the columns, the rows). The columns are checked before anything is written;
    the rows are read lazily, a bounded batch at a time, in one pass over the source."""
    pa, pq = _arrow()
    _check_rows_of_features(kernel, src)
    _check_utf8_path(src)
    # Taken before the footer is read, and compared after every batch: a table rewritten
    # meanwhile (`pq.write_table` onto it truncates and writes it again, usually with the
    # same layout) gave a data set of the old file's first rows and the new one's last, with
    # exit 0, where most writers store no page CRCs that could tell.
    stamp = _stamp_of(src)
    try:
        # Page CRCs checked where the writer stored them (ndpkit's own shards have them): a
        # damaged page was imported, and the new manifest's CRC vouched for it.
        table = pq.ParquetFile(literal_path(src), page_checksum_verification=True, **_STREAMED)
    except (pa.ArrowException, OSError) as exc:
        raise SpecError(f"not a readable Parquet file ({exc})", source=str(src)) from None
    chosen = _source_columns(src, table.schema_arrow, columns, kernel)
    _check_no_nested_namesakes(src, table, chosen)
    total = table.metadata.num_rows
    if total < devices:
        raise SpecError(_too_few(total, "row", devices), source=str(src))
    schema = table.schema_arrow
    wider = _wider_columns({name: schema.field(name).type for name in chosen}, kernel)
    rows = _Rows(_table_records(src, table, stamp, kernel, chosen, wider), src)
    return _row_shards(rows, total, kernel, devices, shard_bytes), chosen, total


def _check_rows_of_features(kernel: Kernel, src: Path) -> None:
    if len(kernel.record_shape) != 1:
        raise SpecError(
            f"app {kernel.name!r} has records of shape {kernel.record_shape}; a Parquet table "
            "holds rows of features (apps whose records have shape (d,): lc, knn*, kmeans)",
            source=str(src),
        )


def _wider_columns(types: dict[str, Any], kernel: Kernel) -> list[str]:
    """Each chosen column's type (by name, in order) where casting it to the app's dtype can
    overflow to ±inf, else '' (`_finite`'s `cast_from`)."""
    return [str(kind) if _may_overflow(kind, kernel.dtype) else "" for kind in types.values()]


def _table_records(
    src: Path,
    table: Any,
    stamp: ShardStamp,
    kernel: Kernel,
    chosen: Sequence[str],
    wider: Sequence[str],
) -> Iterator[np.ndarray]:
    """The `chosen` columns of the open Parquet file `table` (at `src`, which had `stamp`
    before its footer was read) as records of the app's dtype, a bounded batch at a time,
    each checked (unchanged file, no nulls, finite values) before it is handed out; the
    file is closed once read."""
    pa, _ = _arrow()
    per_piece = max(1, _PIECE_BYTES // kernel.record_bytes)
    first = 0
    with table:
        batches = iter(table.iter_batches(batch_size=per_piece, columns=list(chosen)))
        while True:
            try:  # a page damaged past the footer is found only when it is read
                batch = next(batches)
            except StopIteration:
                break
            except (pa.ArrowException, OSError) as exc:
                _check_source_unchanged(src, stamp)  # truncated meanwhile: say so
                raise SpecError(f"not a readable Parquet file ({exc})", source=str(src)) from None
            _check_source_unchanged(src, stamp)
            _check_no_nulls(batch, src, first, table.metadata)
            try:
                records = batch_to_records(batch, kernel.dtype)
            except ValueError as exc:
                raise SpecError(str(exc), source=str(src)) from None
            yield _finite(records, src, first, chosen, wider, batch)
            first += len(records)


def _row_shards(
    rows: _Rows, total: int, kernel: Kernel, devices: int, shard_bytes: int
) -> Iterator[_ShardSource]:
    """`total` rows split contiguously like a .npy's records: device d gets the d-th block,
    in shards of at most `shard_bytes`."""
    per_shard = max(1, shard_bytes // kernel.record_bytes)
    return (
        _ShardSource(device, index, n, rows.take(n))
        for device, count in enumerate(even_split(total, devices))
        for index, (_, n) in enumerate(pieces(count, per_shard))
    )


def _check_no_nulls(batch: Any, src: Path, first: int, metadata: Any) -> None:
    """A SpecError naming the first null in `batch` (whose first row is record `first` of
    `src`): its record and column, and how many nulls the column holds where the file's
    statistics count them. (The count of the batch alone, "has 2 nulls", was given as the
    column's, of a column with thousands, and no record was named.)"""
    for j, column in enumerate(batch.columns):
        if not column.null_count:
            continue
        name = batch.schema.field(j).name
        row = int(np.argmax(column.is_null().to_numpy(zero_copy_only=False)))
        total = _footer_null_count(metadata, name)
        counted = (
            f" ({total:,} null{'' if total == 1 else 's'} in the column, by the file's statistics)"
            if total is not None
            else ""
        )
        raise SpecError(
            f"record {first + row}, column {name!r}, is null{counted}; the apps' kernels need "
            "numbers: drop or fill the nulls first",
            source=str(src),
        )


def _footer_null_count(metadata: Any, name: str) -> int | None:
    """The nulls of top-level column `name` by the footer's statistics, or None where a row
    group does not count them."""
    schema = metadata.schema
    leaves = [i for i in range(len(schema)) if schema.column(i).path == name]
    if len(leaves) != 1:
        return None
    total = 0
    for g in range(metadata.num_row_groups):
        stats = metadata.row_group(g).column(leaves[0]).statistics
        if stats is None or not stats.has_null_count:
            return None
        total += stats.null_count
    return total


def _pandas_index_columns(schema: Any) -> set[str]:
    """The columns a pandas-written table stores its index in (its `pandas` metadata's
    `index_columns` that are names; a RangeIndex is stored as metadata, not a column)."""
    try:
        found = (schema.pandas_metadata or {}).get("index_columns", [])
    except (ValueError, TypeError, AttributeError):  # metadata that is not pandas' JSON
        return set()
    return {name for name in found if isinstance(name, str)} if isinstance(found, list) else set()


def _check_no_nested_namesakes(src: Path, table: Any, chosen: Sequence[str]) -> None:
    """A chosen column named like a field nested in another (a top-level `a.b` beside a
    struct `a` with a field `b`) is an error naming it: pyarrow selects the leaves whose
    path's parts, joined by dots up to any depth, give the name, took both, and the batches
    held the struct too (a TypeError traceback from the cast, exit 1). `table`: the open
    `ParquetFile`."""
    paths: list[list[str]] = table.reader.column_paths  # each leaf's path, part by part
    for name in chosen:
        nested = [
            path
            for path in paths
            if path != [name] and any(".".join(path[:j]) == name for j in range(1, len(path) + 1))
        ]
        if nested:
            raise SpecError(
                f"column {name!r} has the Parquet path of a field nested in column "
                f"{nested[0][0]!r}, so reading it would read that field too: which one is "
                "meant is ambiguous; rename the column in the file",
                source=str(src),
                field=name,
            )


def _check_source_unchanged(src: Path, stamp: ShardStamp) -> None:
    """A SpecError unless the source at `src` still has `stamp` (it was written to,
    truncated, replaced or removed since): what was read may be parts of two versions."""
    try:
        now = ShardStamp.of(os.stat(src))
    except OSError as exc:
        change = f"can no longer be read: {_reason(exc)}"
    else:
        if now == stamp:
            return
        change = stamp.change_to(now)
    raise _changed_while_read(src, change)


def _changed_while_read(src: Path, change: str) -> SpecError:
    """An import's source that changed under it (`change`: "was written to", …)."""
    return SpecError(
        f"changed while it was read (it {change}); nothing was written: import again once "
        "it is written",
        source=str(src),
    )


def _source_columns(
    src: Path, schema: Any, columns: Sequence[str] | None, kernel: Kernel
) -> tuple[str, ...]:
    pa, _ = _arrow()
    names = list(schema.names)
    # The index pandas stores as a column (`__index_level_0__`, or the index's own name) is
    # no feature: taken by default, a filtered DataFrame's row labels became one, silently.
    index = _pandas_index_columns(schema)
    chosen = tuple(name for name in names if name not in index)
    # Taken by default, a column the user never named (TPC-H's l_returnflag beside the
    # prices) was refused as though it had been asked for: say how to leave it out.
    hint = (
        f" (without columns, --columns, every column is taken: name the {kernel.record_shape[0]} "
        "feature columns)"
        if columns is None
        else ""
    )
    # Counted once: `in names` and `names.count` per chosen column took minutes for a table
    # of 150,000 columns taken by default (a CSV's or Parquet file's of genomic features).
    counts = collections.Counter(names)
    places = {name: i for i, name in enumerate(names)}
    if columns is not None:
        # As written, else without the spaces a list typed after commas has ("f0, f1").
        chosen = tuple(c if c in counts or c.strip() not in counts else c.strip() for c in columns)
    for name in chosen:
        if name not in counts:
            raise SpecError(
                f"no column {name!r} (it has: {_some_names(names)})",
                source=str(src),
                field="columns",
            )
        if counts[name] > 1:
            raise SpecError(
                f"{counts[name]} columns are named {name!r}: which one is meant is "
                "ambiguous; rename them in the file",
                source=str(src),
                field=name,
            )
        kind = schema.field(places[name]).type
        if pa.types.is_decimal(kind):
            if kind.precision > MAX_DECIMAL_DIGITS:
                raise SpecError(
                    f"column {name!r} is {kind}: decimals of at most {MAX_DECIMAL_DIGITS} "
                    f"digits are read; cast it to float64 first{hint}",
                    source=str(src),
                    field=name,
                )
            if kind.scale < 0:
                raise SpecError(
                    f"column {name!r} is {kind}, with a negative scale; cast it to float64 "
                    f"first{hint}",
                    source=str(src),
                    field=name,
                )
        elif not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
            raise SpecError(
                f"column {name!r} is {kind}, not numeric{hint}", source=str(src), field=name
            )
    if len(set(chosen)) != len(chosen):
        raise SpecError(
            f"a column is named twice: {list(chosen)}", source=str(src), field="columns"
        )
    features = kernel.record_shape[0]
    if len(chosen) != features:
        # A DataFrame indexed by a feature (set_index("x")) stores it as the index: say it
        # was left out, or "1 column (y)" of a table that shows columns x and y is a riddle.
        left_out = [name for name in names if name in index] if columns is None else []
        note = (
            f" ({', '.join(map(repr, left_out))}, the pandas index, left out by default)"
            if left_out
            else ""
        )
        raise SpecError(
            f"{len(chosen)} column{'s' if len(chosen) != 1 else ''} ({_some_names(chosen)}) for "
            f"app {kernel.name!r}, which needs "
            f"{features} features{note}: choose them with columns (--columns)",
            source=str(src),
            field="columns",
        )
    return chosen


_NAMES_SHOWN = 20
"""How many column names an import's error lists (a table of 2,000 features made every
message about its columns 28 KB long)."""


def _some_names(names: Sequence[str], shown: int = _NAMES_SHOWN) -> str:
    """The first `shown` names, comma-separated, and how many more there are."""
    listed = ", ".join(names[:shown])
    more = len(names) - shown
    return f"{listed}, … and {more:,} more" if more > 0 else listed


class _Rows:
    """The rows of a stream of blocks, handed out in consecutive runs."""

    def __init__(self, blocks: Iterator[np.ndarray], src: Path):
        self._blocks = blocks
        self._src = src
        self._held: np.ndarray | None = None

    def take(self, count: int) -> Iterator[np.ndarray]:
        """The next `count` rows, in pieces (consume each run before asking for the next)."""
        while count > 0:
            if self._held is None or not len(self._held):
                self._held = next(self._blocks, None)
                if self._held is None:
                    raise SpecError(
                        "changed while it was read: it ended before the rows its metadata "
                        "counts (truncated meanwhile?); nothing was written",
                        source=str(self._src),
                    )
            piece, self._held = self._held[:count], self._held[count:]
            count -= len(piece)
            yield piece


# -- a Parquet table written as a directory of part files ----------------------------------


@dataclass(frozen=True)
class _Part:
    """One part of a table: its file, its stamp from before its footer was read, its rows,
    and its chosen columns' wider types (`_wider_columns`: each part's own, since the parts
    may hold a column in different numeric types)."""

    path: Path
    stamp: ShardStamp
    rows: int
    wider: tuple[str, ...] = ()


def _parquet_dir_sources(
    src: Path, kernel: Kernel, devices: int, shard_bytes: int, columns: Sequence[str] | None
) -> tuple[Iterator[_ShardSource], tuple[str, ...], int]:
    """A Parquet table written as a directory of part files (`parquet_parts` says which, in
    which order), read as their concatenation and split like a single table; (the shards,
    the columns, the rows). The columns are chosen from the first part as from a single
    table, and every part's footer is read and its columns checked before anything is
    written; the rows are then read a bounded batch at a time, one part open at a time."""
    _check_rows_of_features(kernel, src)
    listing = list_parts(src)
    _check_only_parts(src, listing)
    keys = _partition_keys(src, listing.parts)
    parts, types = _read_footers(listing.parts, kernel, columns, keys)
    total = sum(part.rows for part in parts)
    if total < devices:
        raise SpecError(_too_few_in_parts(total, len(parts), devices), source=str(src))
    chosen = tuple(types)
    blocks = _part_records(src, parts, kernel, chosen)
    return _row_shards(_Rows(blocks, src), total, kernel, devices, shard_bytes), chosen, total


def _check_outside_parts(out: Path, src: Path) -> None:
    """The data set is not written into the table's directory: its shards, .parquet files,
    would be found there as parts (by this import, as it checks for parts added while it
    reads, and by the next)."""
    real = os.path.realpath(src)
    if os.path.commonpath([real, os.path.realpath(out)]) == real:
        raise SpecError(
            f"is in the directory of the Parquet table being imported, {src}, whose parts are "
            "its .parquet files, the data set's shards among them: write it elsewhere",
            source=str(out),
        )


def _check_only_parts(src: Path, listing: PartListing) -> None:
    """The directory holds parts and nothing else that is read as data: images beside them
    (which of the two is the data set?) or any other file, whose rows a silent skip would
    lose (a part named `.parq`, an Iceberg table's metadata), are errors naming them."""
    if (src / "_delta_log").is_dir():
        # Its parts are every version's until vacuumed: the log says which are current.
        raise SpecError(
            "is a Delta Lake table (it has a _delta_log/): its log, not its directory, says "
            "which parts hold its rows; write it out as Parquet first (with the deltalake "
            "package, say)",
            source=str(src),
        )
    hudi = (src / ".hoodie").is_dir()
    if hudi or holds_file_named(src, ".hoodie_partition_metadata"):
        # Left out as a hidden directory, its timeline was lost, and with it which file
        # versions are current: an updated row was imported once per version kept. Each of
        # its partitions holds a .hoodie_partition_metadata, which tells one given alone.
        what = (
            "it has a .hoodie/"
            if hudi
            else "or a part of one: it holds a .hoodie_partition_metadata"
        )
        raise SpecError(
            f"is an Apache Hudi table ({what}): its timeline, not its directory, says which "
            "versions of its files hold its rows (older ones are kept until cleaned); write "
            "it out as Parquet first (with Spark, say)",
            source=str(src),
        )
    if not listing.parts:
        raise SpecError(
            "holds no parts of a Parquet table (.parquet or .pq files, here or in "
            "subdirectories; names starting with . or _ are left out)",
            source=str(src),
        )
    images = [path for path in listing.others if path.suffix.lower() in _IMAGE_SUFFIXES]
    if images:
        raise SpecError(
            f"holds both the parts of a Parquet table ({_relative_names(src, listing.parts)}) "
            f"and images ({_relative_names(src, images)}): which is the data set is "
            "ambiguous; import each from a directory of its own",
            source=str(src),
        )
    if listing.others:
        raise SpecError(
            f"holds files that are not parts of a Parquet table ("
            f"{_relative_names(src, listing.others)}) beside its parts: the parts are the "
            ".parquet and .pq files (names starting with . or _, and .crc files, are left "
            "out); move the others out, or rename a Parquet file to end in .parquet",
            source=str(src),
        )


def _relative_names(root: Path, paths: Sequence[Path]) -> str:
    """The first few of `paths` relative to `root`, and how many more there are."""
    return _some_names([str(path.relative_to(root)) for path in paths], shown=5)


def _partition_keys(root: Path, parts: Sequence[Path]) -> dict[str, str]:
    """The hive partition keys of the parts' directories (`k=0/` gives `k`), each with the
    first directory that names it."""
    keys: dict[str, str] = {}
    for path in parts:
        for name in path.relative_to(root).parent.parts:
            key, equals, _ = name.partition("=")
            if equals and key:
                keys.setdefault(key, name)
    return keys


def _check_no_partition_key(
    path: Path, schema: Any, columns: Sequence[str], keys: dict[str, str]
) -> None:
    """A chosen column that the part has not but that names a hive partition (`--columns k`
    of a table DuckDB or Spark wrote with `PARTITION_BY (k)`) is an error saying so: their
    readers give the key as a column, and "no column 'k'" sent the user looking for it in
    the files, which do not hold it."""
    names = list(schema.names)
    for column in columns:
        name = column if column in names else column.strip()
        if name not in names and name in keys:
            raise SpecError(
                f"no column {name!r}: it is a partition key, a directory name "
                f"({keys[name]}/), not a column in the parts, and only their columns are "
                "read; write the table with the key as a column too (DuckDB: "
                "WRITE_PARTITION_COLUMNS true), or choose other columns",
                source=str(path),
                field="columns",
            )


def _read_footers(
    paths: Sequence[Path],
    kernel: Kernel,
    columns: Sequence[str] | None,
    keys: dict[str, str] | None = None,
) -> tuple[list[_Part], dict[str, Any]]:
    """Each part's rows, from its footer, and the chosen columns' Arrow types in the first
    part by name: chosen from it as from a single table, and held by every part, in a
    numeric type of its own (int64 in one part, double in the next: pandas or DuckDB
    writing each part from its own values; each is cast to the app's dtype, as a single
    table's columns are). `keys`: the hive partition keys of the parts' directories
    (`_partition_keys`)."""
    pa, pq = _arrow()
    parts: list[_Part] = []
    types: dict[str, Any] = {}
    for path in paths:
        _check_utf8_path(path)
        stamp = _stamp_of(path)  # before the footer: a part changed since is then seen
        try:
            with pq.ParquetFile(literal_path(path), **_STREAMED) as table:
                schema = table.schema_arrow
                if not parts:
                    if columns is not None:
                        _check_no_partition_key(path, schema, columns, keys or {})
                    chosen = _source_columns(path, schema, columns, kernel)
                    types = {name: schema.field(name).type for name in chosen}
                else:
                    _check_like_first(path, schema, types, columns, paths[0], kernel)
                _check_no_nested_namesakes(path, table, tuple(types))
                rows = table.metadata.num_rows
                own = {name: schema.field(name).type for name in types}
        except (pa.ArrowException, OSError) as exc:
            raise SpecError(f"not a readable Parquet file ({exc})", source=str(path)) from None
        parts.append(_Part(path, stamp, rows, tuple(_wider_columns(own, kernel))))
    return parts, types


def _check_utf8_path(path: Path) -> None:
    """pyarrow opens only UTF-8 paths (Linux allows any bytes but "/" in a name): a Parquet
    file named b"caf\\xe9.parquet" ended the import in a UnicodeEncodeError traceback."""
    try:
        literal_path(path).encode("utf-8")
    except UnicodeEncodeError:
        raise SpecError(
            "its path is not valid UTF-8, and pyarrow opens only UTF-8 paths: rename it (or "
            "run from a directory whose path is UTF-8, if it is a relative path)",
            source=str(path),
        ) from None


def _check_like_first(
    path: Path,
    schema: Any,
    types: dict[str, Any],
    columns: Sequence[str] | None,
    first: Path,
    kernel: Kernel,
) -> None:
    """The part at `path` holds the columns chosen from the first part, each once and of a
    numeric type (not necessarily the first part's); without `columns`, no other column
    either (taken by default, it would have been a feature had its part come first)."""
    names = list(schema.names)
    for name in types:
        if name not in names:
            raise SpecError(
                f"no column {name!r}, which the first part, {first}, has (it has: "
                f"{_some_names(names)}): the parts of a table have the same columns",
                source=str(path),
                field="columns",
            )
    _source_columns(path, schema, tuple(types), kernel)  # each once, numeric
    index = _pandas_index_columns(schema)
    extra = [name for name in names if name not in types and name not in index]
    if columns is None and extra:
        raise SpecError(
            f"has a column {extra[0]!r} that the first part, {first}, has not: the parts of "
            "a table have the same columns, and without columns (--columns) the first part's "
            "are taken (name the feature columns with --columns)",
            source=str(path),
            field="columns",
        )


def _too_few_in_parts(total: int, parts: int, devices: int) -> str:
    if total == 0:
        return f"holds no rows: its {parts} part{' is' if parts == 1 else 's are all'} empty"
    return _too_few(total, "row", devices)


def _part_records(
    src: Path, parts: Sequence[_Part], kernel: Kernel, chosen: Sequence[str]
) -> Iterator[np.ndarray]:
    """The records of the parts, in order, a bounded batch at a time (`_table_records`: each
    part checked unchanged after each of its batches). Before the last batch is handed out,
    every part is checked unchanged and the directory to hold the same parts: a table
    rewritten while it was read (a job run again) would make a data set of two versions."""
    pa, pq = _arrow()
    total, done = sum(part.rows for part in parts), 0
    for part in (part for part in parts if part.rows):
        try:
            table = pq.ParquetFile(
                literal_path(part.path), page_checksum_verification=True, **_STREAMED
            )
        except (pa.ArrowException, OSError) as exc:
            _check_source_unchanged(part.path, part.stamp)  # removed meanwhile: say so
            raise SpecError(f"not a readable Parquet file ({exc})", source=str(part.path)) from None
        for records in _table_records(part.path, table, part.stamp, kernel, chosen, part.wider):
            done += len(records)
            if done == total:
                _check_parts_unchanged(src, parts)
            yield records


def _check_parts_unchanged(src: Path, parts: Sequence[_Part]) -> None:
    for part in parts:
        _check_source_unchanged(part.path, part.stamp)
    read = {part.path for part in parts}
    added = [path for path in list_parts(src).parts if path not in read]
    if added:
        raise _changed_while_read(src, f"gained the part {added[0].relative_to(src)}")


def _image_sources(
    src: Path, kernel: Kernel, devices: int, shard_bytes: int, crop: bool = False
) -> tuple[Iterator[_ShardSource], int, CropLoss | None]:
    """Images in file-name order, each converted to the app's channels ("RGB" when the
    record's last axis is 3, "RGBA" for 4, grayscale "L" otherwise) and cast to its dtype;
    (the shards, their records, with `crop` what cropping leaves out). Every image is
    checked from its header before anything is written: more than 8 bits per sample, and
    several frames in a file but a PNG's or a JPEG's (whose first is the image), are
    refused (`ndpkit.kernels.images.refusal`).

    Apps whose records are images, (h, w) or (h, w, c), take each image as record-sized
    tiles: its height and width must be multiples of the record's, and it is cut row of
    tiles by row of tiles, each left to right (a 512×512 image makes four 256×256 records:
    top left, top right, bottom left, bottom right; an image of the record shape is one
    record). Any other size is an error naming the file and both shapes, never a reshape,
    which would make records of pixels from different rows; with `crop`, the image gives
    the whole tiles that fit from its top-left corner instead (its right and bottom edges
    are dropped; an image smaller than one record gives none). The records are split
    contiguously over devices, `shard_bytes` per shard.

    Apps whose records are scalars (a pixel stream) take each image's pixels in C order, one
    shard per image (which may exceed `shard_bytes`), the images split contiguously over
    devices. Other apps (records of shape (d,): points) take no images.
    """
    mode = _image_mode(kernel, src)
    files = image_files(src)
    others = other_images(src)
    if not files and others:
        raise SpecError(
            f"no {_IMAGE_SUFFIX_LIST} images in the directory; it holds images of other "
            f"formats, which are not read: {_listed(others)} (convert them to PNG)",
            source=str(src),
        )
    if not files:
        note = _parts_note(src)
        raise SpecError(
            f"no {_IMAGE_SUFFIX_LIST} images in the directory{note and '; '}{note}",
            source=str(src),
        )
    if others:
        warnings.warn(
            f"{src}: {len(others)} file{'s' * (len(others) > 1)} of other image formats "
            f"{'are' if len(others) > 1 else 'is'} not read: {_listed(others)} (the "
            f"formats imported are {_IMAGE_SUFFIX_LIST}; convert them to PNG to import them)",
            UnreadImagesWarning,
            stacklevel=3,
        )
    shapes = _image_shapes(files, mode)
    if kernel.record_shape == ():
        if len(files) < devices:
            raise SpecError(f"{len(files)} images for {devices} devices", source=str(src))
        counts = [math.prod(shape) for shape in shapes]
        return _image_shards(files, shapes, kernel, mode, devices), sum(counts), None
    try:
        counts = [
            _tile_count(path, shape, kernel, crop)
            for path, shape in zip(files, shapes, strict=True)
        ]
    except SpecError as exc:
        raise _more_not_whole(exc, files, shapes, kernel) from None
    loss = _crop_loss(files, shapes, counts, kernel) if crop else None
    total = sum(counts)
    if crop and total == 0:
        raise SpecError(
            f"every image is smaller than one {kernel.name} record of shape "
            f"{kernel.record_shape}: cropping leaves no records",
            source=str(src),
        )
    if total < devices:
        made = f"{total} {kernel.name} record{'' if total == 1 else 's'}"
        raise SpecError(
            f"its images make {made} of shape {kernel.record_shape}, fewer than the {devices} "
            "devices (each device needs at least one)",
            source=str(src),
        )
    tiles = _Tiles(files, shapes, counts, kernel, mode)
    per_shard = max(1, shard_bytes // kernel.record_bytes)
    shards = (
        _ShardSource(device, index, n, tiles.take(first + start, n))
        for device, (first, count) in enumerate(_blocks(total, devices))
        for index, (start, n) in enumerate(pieces(count, per_shard))
    )
    return shards, total, loss


@dataclass(frozen=True)
class CropLoss:
    """What `import_dataset(..., crop=True)` leaves out of a directory of images."""

    images: int
    cropped: list[str]
    """Files that lost their right or bottom edges (or all of their pixels)."""
    empty: list[str]
    """Files smaller than one record: they gave none."""
    pixels_dropped: int
    pixels: int


def crop_loss(src: str | Path, app: str | Kernel) -> CropLoss:
    """What cropping the images in `src` to whole records of `app` leaves out (from the
    images' headers)."""
    kernel = resolve_kernel(app)
    mode = _image_mode(kernel, Path(src))
    files = image_files(Path(src))
    shapes = [_image_shape(path, mode, say_size=False) for path in files]  # the import said it
    counts = [
        _tile_count(path, shape, kernel, crop=True)
        for path, shape in zip(files, shapes, strict=True)
    ]
    return _crop_loss(files, shapes, counts, kernel)


def _crop_loss(
    files: list[Path], shapes: list[tuple[int, ...]], counts: list[int], kernel: Kernel
) -> CropLoss:
    """What cropping images of these shapes to `counts` whole records leaves out."""
    record_pixels = math.prod(kernel.record_shape[:2])
    cropped, empty, dropped, pixels = [], [], 0, 0
    for path, shape, count in zip(files, shapes, counts, strict=True):
        height, width = shape[:2]
        kept = count * record_pixels
        pixels, dropped = pixels + height * width, dropped + height * width - kept
        if kept < height * width:
            cropped.append(path.name)
        if kept == 0:
            empty.append(path.name)
    return CropLoss(len(files), cropped, empty, dropped, pixels)


def _blocks(total: int, parts: int) -> list[tuple[int, int]]:
    """(first, count) of `even_split(total, parts)`'s consecutive blocks."""
    counts = even_split(total, parts)
    firsts = np.cumsum([0, *counts[:-1]]).tolist()
    return list(zip(firsts, counts, strict=True))


def _image_shapes(files: list[Path], mode: str) -> list[tuple[int, ...]]:
    """`_image_shape` of each file, or the error of the first that cannot be imported, with
    how many more cannot and the first few of their names: one at a time, a directory with
    several broken downloads took a run per file to find them all."""
    shapes, refused = [], []
    for path in files:
        try:
            shapes.append(_image_shape(path, mode))
        except SpecError as exc:
            refused.append((path, exc))
    if not refused:
        return shapes
    first = refused[0][1]
    if len(refused) == 1:
        raise first
    names = ", ".join(p.name for p, _ in refused[1:6]) + (", …" if len(refused) > 6 else "")
    raise SpecError(
        f"{first.detail}; {len(refused) - 1} more of the {len(files)} images cannot be "
        f"imported either ({names})",
        source=first.source,
    )


def _more_not_whole(
    error: SpecError, files: list[Path], shapes: list[tuple[int, ...]], kernel: Kernel
) -> SpecError:
    """`_tile_count`'s error for the first image that is not whole records, with how many
    more are not and the first few of their names: one at a time, a directory of photos of
    many sizes took a run per photo to find them all."""
    tile_height, tile_width = kernel.record_shape[:2]
    odd = [
        p for p, (h, w, *_) in zip(files, shapes, strict=True) if h % tile_height or w % tile_width
    ]
    if len(odd) < 2:
        return error
    names = ", ".join(p.name for p in odd[1:6]) + (", …" if len(odd) > 6 else "")
    return SpecError(
        f"{error.detail}; {len(odd) - 1} more of the {len(files)} images are not whole "
        f"records either ({names})",
        source=error.source,
    )


def _tile_count(path: Path, shape: tuple[int, ...], kernel: Kernel, crop: bool) -> int:
    """How many records of the app's shape an image of `shape` is cut into (with `crop`,
    the whole ones that fit)."""
    height, width = shape[:2]
    tile_height, tile_width = kernel.record_shape[:2]
    if not crop and (height % tile_height or width % tile_width):
        raise SpecError(
            f"an image of shape {shape} cannot be cut into records of shape "
            f"{kernel.record_shape} (app {kernel.name!r}): its height and width must be "
            f"multiples of {tile_height} and {tile_width} (--crop keeps the whole records "
            "that fit)",
            source=str(path),
        )
    return (height // tile_height) * (width // tile_width)


class _Tiles:
    """The record-sized tiles of a list of images, in order, loaded one image at a time (the
    last one is kept: its tiles may go to two shards)."""

    def __init__(
        self,
        files: list[Path],
        shapes: list[tuple[int, ...]],
        counts: list[int],
        kernel: Kernel,
        mode: str,
    ):
        self._files = files
        self._shapes = shapes
        self._firsts = np.cumsum([0, *counts]).tolist()
        self._kernel = kernel
        self._mode = mode
        self._held: tuple[int, np.ndarray] | None = None

    def take(self, start: int, count: int) -> Iterator[np.ndarray]:
        """Records [start, start + count), in pieces of at most one image each."""
        end = start + count
        image = int(np.searchsorted(self._firsts, start, side="right")) - 1
        while start < end:
            if self._firsts[image + 1] <= start:  # an image too small to give a record
                image += 1
                continue
            first = self._firsts[image]
            stop = min(end, self._firsts[image + 1])
            yield self._tiles(image)[start - first : stop - first]
            start, image = stop, image + 1

    def _tiles(self, image: int) -> np.ndarray:
        if self._held is None or self._held[0] != image:
            path, shape = self._files[image], self._shapes[image]
            pixels = _load_image(path, self._mode, self._kernel.dtype, shape)
            self._held = (image, tiles_of(pixels, self._kernel.record_shape))
        return self._held[1]


def tiles_of(pixels: np.ndarray, record_shape: tuple[int, ...]) -> np.ndarray:
    """An image (height, width[, channels]) as records of `record_shape`, (h, w[, c]): its
    whole h×w tiles, row of tiles by row of tiles, each left to right; pixels right of or
    below the last whole tile are left out (`_tile_count` refuses them unless cropping)."""
    tile_height, tile_width = record_shape[:2]
    rows, cols = pixels.shape[0] // tile_height, pixels.shape[1] // tile_width
    pixels = pixels[: rows * tile_height, : cols * tile_width]
    grid = pixels.reshape(rows, tile_height, cols, tile_width, *pixels.shape[2:])
    return grid.swapaxes(1, 2).reshape(rows * cols, *record_shape)


def _image_shards(
    files: list[Path], shapes: list[tuple[int, ...]], kernel: Kernel, mode: str, devices: int
) -> Iterator[_ShardSource]:
    first = 0
    for device, n_images in enumerate(even_split(len(files), devices)):
        for index in range(n_images):
            path, shape = files[first + index], shapes[first + index]
            image = _load_image(path, mode, kernel.dtype, shape).reshape(-1)
            yield _ShardSource(device, index, image.size, (image,))
        first += n_images


def _image_mode(kernel: Kernel, src: Path) -> str:
    """The pillow mode an app's records need; an app whose records are not images (nor
    pixels) is an error."""
    shape = kernel.record_shape
    mode = {0: "L", 2: "L"}.get(len(shape))
    if len(shape) == 3:
        mode = {1: "L", 3: "RGB", 4: "RGBA"}.get(shape[2])
    if mode is None:
        advice = _parts_note(src) or (
            "import its records from a .npy file or a Parquet table (a .parquet or .pq file, "
            "or a directory of them)"
        )
        raise SpecError(
            f"is a directory, which is read as a directory of images, and app {kernel.name!r} "
            f"has records of shape {shape}, not images; {advice}",
            source=str(src),
        )
    return mode


def _parts_note(src: Path) -> str:
    """For a directory read as images that holds none, that it is not read as a Parquet
    table's part files either since it holds none of those (a directory that does is read as
    one); else ''."""
    try:
        images = any(p.suffix.lower() in _IMAGE_SUFFIXES for p in src.iterdir())
    except OSError:
        images = False
    if images:
        return ""
    misnamed = _misnamed_parts(src)
    if misnamed:
        # Hive writes a Parquet table's parts as `000000_0`, Impala as `…_data.0.parq`: "holds
        # no parts" of a directory of nothing else sent the user looking for another cause.
        more = ", …" if len(misnamed) > _MISNAMED_SHOWN else ""
        names = ", ".join(str(path.relative_to(src)) for path in misnamed[:_MISNAMED_SHOWN])
        return (
            f"it holds Parquet files named otherwise ({names}{more}), which are not read as "
            "the parts of a table: a table's parts are its files whose names end in .parquet "
            "or .pq (rename them)"
        )
    return (
        "it holds no parts of a Parquet table either (.parquet or .pq files, here or in "
        "subdirectories; names starting with . or _ are left out), which would make it one"
    )


_MISNAMED_SHOWN = 5
_MISNAMED_LOOKED_AT = 1000
"""The files an error's note opens at most to find Parquet files named otherwise: a tree of
a million files is not read for a message."""


def _misnamed_parts(src: Path) -> list[Path]:
    """The first few regular files under `src` that start as a Parquet file does (a FIFO is
    not opened: the read would block), in the listing's order, among the first
    `_MISNAMED_LOOKED_AT` files."""
    found: list[Path] = []
    for path in itertools.islice(files_under(src), _MISNAMED_LOOKED_AT):
        if path.is_file() and _parquet_by_another_name(path):
            found.append(path)
            if len(found) > _MISNAMED_SHOWN:
                break
    return found


def image_files(src: Path) -> list[Path]:
    """The images of a directory, by name (numbers in names compared as numbers,
    `path_order`): its files with a suffix of `_IMAGE_SUFFIXES` (any case: PNG, JPEG, TIFF,
    BMP, netpbm, WebP), hidden ones left out (macOS's `._x.png` beside `x.png` holds no
    image). A name with such a suffix that is no regular file (a directory, a FIFO, which
    would block the read, a device) is an error."""
    files = []
    # Numbers compared as numbers (frame_2.png before frame_10.png), as a table's parts are.
    for path in sorted(src.iterdir(), key=lambda p: path_order(Path(p.name))):
        if path.suffix.lower() not in _IMAGE_SUFFIXES or path.name.startswith("."):
            continue
        try:
            regular = S_ISREG(path.stat().st_mode)  # through a link to what it names
        except OSError:
            regular = True  # a broken link: reading it says so (`_image_shape`)
        if not regular:
            raise SpecError(
                "not a regular file (a directory, FIFO, device or socket?): the images of a "
                f"directory are its {_IMAGE_SUFFIX_LIST} files",
                source=str(path),
            )
        files.append(path)
    return files


# What pillow raises on a malformed file besides OSError: a bad chunk length is a
# ValueError ("Truncated IHDR chunk"), some headers a SyntaxError; and its decompression-bomb
# warning where warnings are errors (`-W error`).
_UNREADABLE = (
    OSError,
    ValueError,
    SyntaxError,
    UnidentifiedImageError,
    Image.DecompressionBombError,
    Image.DecompressionBombWarning,
)


class UnreadImagesWarning(UserWarning):
    """A directory of images also holds files of image formats that are not imported (a
    GIF, a JFIF, an icon beside the PNGs): said once, naming them, since the data set is
    made without them (other files, a README, are not images and go unsaid)."""


def other_images(src: Path) -> list[Path]:
    """The files of `src` (not hidden) named as an image format pillow opens that is not
    imported (`.gif`, `.jfif`, `.ico`, `.tga`, …), by name."""
    Image.init()
    theirs = {ext for ext, fmt in Image.registered_extensions().items() if fmt in Image.OPEN}
    wanted = set(theirs) - set(_IMAGE_SUFFIXES)
    try:
        entries = sorted(src.iterdir())
    except OSError:
        return []
    return [p for p in entries if p.suffix.lower() in wanted and not p.name.startswith(".")]


def _listed(paths: list[Path], shown: int = 5) -> str:
    names = ", ".join(p.name for p in paths[:shown])
    return names + (f" and {len(paths) - shown} more" if len(paths) > shown else "")


class LargeImageWarning(Image.DecompressionBombWarning):
    """An image of more pixels than pillow's decompression-bomb warning limit
    (`PIL.Image.MAX_IMAGE_PIXELS`), read all the same: said once per file, naming it.
    Pillow's own warning named no file and came again at every opening of the file."""


@contextmanager
def _quiet_pillow() -> Iterator[None]:
    """Pillow's remarks on how it converts (a UserWarning such as "Palette images with
    Transparency expressed in bytes…") kept off stderr, and its decompression-bomb warning,
    which names no file and came at every opening of it: `_image_shape` says that instead,
    once, naming the file (a LargeImageWarning; an error where warnings are errors)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=UserWarning, module="PIL")
        warnings.filterwarnings("ignore", category=Image.DecompressionBombWarning)
        yield


def _image_shape(path: Path, mode: str, *, say_size: bool = True) -> tuple[int, ...]:
    """The array shape of an image after conversion, from its header only. An image above
    pillow's decompression-bomb warning limit is said once, as a LargeImageWarning naming
    it (`say_size`; the other openings of the file keep quiet about it)."""
    limit = Image.MAX_IMAGE_PIXELS
    try:
        with _quiet_pillow(), Image.open(path) as image:
            width, height = image.size
            refused = refusal(image)
        large = limit is not None and width * height > limit
        size = f"{width}×{height} = {width * height:,} pixels" if large else ""
        if large and say_size:
            warnings.warn(
                f"{path}: {size}, more than pillow's decompression-bomb warning limit of "
                f"{limit:,} (PIL.Image.MAX_IMAGE_PIXELS); read all the same",
                LargeImageWarning,
                stacklevel=2,
            )
    except LargeImageWarning:  # warnings are errors (`-W error`)
        raise SpecError(
            f"{size}, more than pillow's decompression-bomb warning limit of {limit:,}, "
            "and warnings are errors here: not imported",
            source=str(path),
        ) from None
    except _UNREADABLE as exc:
        raise SpecError(f"not a readable image ({exc})", source=str(path)) from None
    if refused is not None:
        raise SpecError(refused, source=str(path))
    return (height, width) if mode == "L" else (height, width, len(mode))


def _load_image(
    path: Path, mode: str, dtype: np.dtype[Any], shape: tuple[int, ...] | None = None
) -> np.ndarray:
    """The image's pixels in `mode`, cast to `dtype`; with `shape` (what its header said
    when the records were counted), an image of another shape is an error: replaced since,
    it made records of the wrong tiles without a word, or a traceback once short."""
    try:
        with _quiet_pillow(), Image.open(path) as image:
            refused = refusal(image)
            pixels = None if refused else np.asarray(image.convert(mode))
    except _UNREADABLE as exc:
        raise SpecError(f"not a readable image ({exc})", source=str(path)) from None
    if pixels is None:
        raise SpecError(f"{refused}", source=str(path))
    if shape is not None and pixels.shape != shape:
        raise SpecError(
            f"changed while it was read: its header said {_shape_text(shape)} when the "
            f"records were counted, and its pixels are {_shape_text(pixels.shape)}; import "
            "again once it is written",
            source=str(path),
        )
    return pixels.astype(dtype, copy=False)


def _shape_text(shape: tuple[int, ...]) -> str:
    return "×".join(map(str, shape))


@contextmanager
def unchanged(dataset: Dataset, stamps: dict[Path, ShardStamp] | None = None) -> Iterator[None]:
    """A failure while reading a data set that was replaced, removed or rewritten meanwhile
    says so, rather than blaming the kernel for an answer that differs from the new data's
    reference, or a shard for its size. Replaced: its manifest now says something else than
    when it was opened (`data generate --overwrite` renames a new one onto it); removed or
    moved: the manifest is gone (the error says which shard was missed); rewritten: a shard
    of `stamps` was written to, resized or replaced. A `chmod` changes nothing. A worker
    that failed to start (`failed_to_start`) stands as the error: it explains the change (a
    main script without its guard, run again in each worker, may write the data set)."""
    try:
        yield
    except NdpkitError as exc:
        if getattr(exc, "failed_to_start", False):
            raise
        changed = replaced_meanwhile(dataset, stamps, str(exc))
        if changed is not None:
            raise changed from None
        raise


def replaced_meanwhile(
    dataset: Dataset, stamps: dict[Path, ShardStamp] | None, missed: str = ""
) -> NdpkitError | None:
    """The error saying how `dataset` changed since it was opened (`stamps`: its shards
    then), or None if it did not (see `unchanged`); `missed` is what failed meanwhile."""
    now = _manifest_now(dataset.path)
    if now is _GONE:
        why = f" ({missed})" if missed else ""
        return SpecError(
            f"was removed or moved while it was read{why}; no result", source=str(dataset.path)
        )
    if now != dataset.manifest:
        return SpecError(
            "was replaced while it was read (its manifest changed); run again",
            source=str(dataset.path),
        )
    return dataset.changed_shard(stamps or {})


_GONE = object()
"""`_manifest_now` of a data set whose manifest no longer exists."""


def _manifest_now(root: Path) -> object:
    if not (root / MANIFEST).exists():
        return _GONE
    try:
        return read_manifest(root / MANIFEST)
    except (NdpkitError, OSError):
        return None


def _too_few(total: int, unit: str, devices: int) -> str:
    """Why a source of `total` records (or rows) cannot fill `devices` devices."""
    if total == 0:
        return f"holds no {unit}s: it is empty"
    held = f"{total} {unit}{'' if total == 1 else 's'}"
    return f"holds {held}, fewer than the {devices} devices (each device needs at least one)"


def _may_overflow(column: Any, dtype: np.dtype[Any]) -> bool:
    """Whether a finite value of Arrow type `column` can exceed float `dtype`'s range (a
    float64 column read as float32; decimals are read only up to MAX_DECIMAL_DIGITS digits,
    within float32's range)."""
    pa, _ = _arrow()
    if dtype.kind != "f" or not pa.types.is_floating(column):
        return False
    # As Python floats: numpy compares a float16 max with 3.4e38 cast to float16 (inf),
    # warning 'overflow encountered in cast' on every import of a float16 column.
    return float(np.finfo(column.to_pandas_dtype()).max) > float(np.finfo(dtype).max)
