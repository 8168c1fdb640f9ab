"""The common interface of every application kernel (DESIGN.md: `Kernel`).

A kernel is split the way NDP hardware splits it:

- a **device part** that streams over one shard in bounded chunks next to the storage and
  returns a partial result, usually much smaller than its input (`device`);
- partials from many chunks and devices are **merged** (`merge`; associative, so the runtime
  may merge in any grouping);
- a **host part** that turns the merged partial into the answer (`host`). Iterative kernels
  (K-Means) return a new state and `done=False`, and the runtime runs another pass.

Data is a numpy array whose axis 0 is records (points, pixels rows, images); a chunk is a
slice of whole records, and `offset` is the index of the chunk's first record in the whole
data set (k-NN returns original indices). Every kernel has a seeded generator and an
independent reference (numpy/scipy/scikit-learn/scikit-image) that `check` compares with.

Example (`run_in_memory` does this, for iterative kernels too):
    k = get_kernel("lc"); x = k.generate(1_000_000, seed=0); params = k.params(0)
    state = k.init(params); part = k.merge([k.device(x, state, 0)])
    result, done = k.host(part, state)   # done is True for single-pass kernels
    k.check(k.finish(result), k.reference(x, params))
"""

from __future__ import annotations

import decimal
import itertools
import math
import numbers
import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from ndpkit.errors import NdpkitError, SpecError, brief, whole_number
from ndpkit.summary import summary


@contextmanager
def joblib_quiet() -> Iterator[None]:
    """Around importing scikit-learn (the references'): joblib, which it imports, warns in two
    lines of Python's when it cannot make a POSIX semaphore (a read-only /dev/shm, or one
    out of inodes), and under `-W error` that warning stopped the command. The references
    run in this process alone, so joblib's serial mode changes nothing for them."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message=r".*joblib will operate in serial mode", category=UserWarning
        )
        yield


class KernelMismatchError(NdpkitError):
    """A kernel's answer differs from its independent reference."""


def checked_records(data: np.ndarray, record_shape: tuple[int, ...], kernel: str) -> np.ndarray:
    """`data` as an array of whole records of `record_shape`, or an NdpkitError: a reshape
    would read (1000, 3) points as 375 points of 8 features and answer for them."""
    array = np.asarray(data)
    if array.ndim != len(record_shape) + 1 or array.shape[1:] != tuple(record_shape):
        raise NdpkitError(
            f"{kernel}: data of shape {array.shape} is not records of shape {record_shape} "
            f"(an array of shape (n, {', '.join(map(str, record_shape))}))"
        )
    return array


def check_out(
    out: np.ndarray | None,
    dtype: type[np.generic],
    what: str,
    shape: tuple[int, ...] | None = None,
) -> None:
    """An `out` array the Rust loop can write in place (of its dtype and, if given, `shape`;
    C-contiguous, aligned and writeable), or an NdpkitError: the binding's own message for
    another dtype or number of axes was "'ndarray' object is not an instance of 'ndarray'", a
    transposed `out` was written in the wrong order (or, reshaped into a copy, not at all)
    without a word, and one of the right size but another shape came back in that shape."""
    if out is None:
        return
    if not isinstance(out, np.ndarray) or out.dtype != dtype:
        got = out.dtype if isinstance(out, np.ndarray) else type(out).__name__
        raise NdpkitError(f"{what}: out must be a {np.dtype(dtype)} array, got {got}")
    if shape is not None and out.shape != shape:
        raise NdpkitError(f"{what}: out must have shape {shape}, got {out.shape}")
    if not out.flags.c_contiguous or not out.flags.aligned or not out.flags.writeable:
        raise NdpkitError(f"{what}: out must be C-contiguous, aligned and writeable")


def exact_float32(value: Any, what: str, why: str) -> np.ndarray:
    """`value` in float32, or an NdpkitError where float32 cannot hold it exactly (`what`
    names it, `why` says why it matters): a float64 parameter was rounded without a word,
    while the reference used it as given."""
    given = np.asarray(value)
    if given.dtype.kind == "O":  # Python ints beyond 64 bits, Decimal, Fraction
        return _exact_objects(value, given, what, why)
    if given.dtype.kind not in "fiub":
        raise NdpkitError(f"{what} must be numbers, got {given.dtype}")
    with np.errstate(over="ignore", invalid="ignore"):  # beyond float32: inf, refused
        rounded = given.astype(np.float32)
        back = rounded.astype(given.dtype)
    if not np.can_cast(given.dtype, np.float32, casting="safe") and not np.array_equal(
        back, given, equal_nan=True
    ):
        raise NdpkitError(
            f"{what} {given.tolist()!r} ({given.dtype}) is not exact in float32, and {why}; "
            "give it as float32 (np.float32) if rounding it is what you want"
        )
    return rounded


def _exact_objects(value: Any, given: np.ndarray, what: str, why: str) -> np.ndarray:
    """`exact_float32` for Python numbers numpy keeps as objects, compared as given
    (Python compares an int, Decimal or Fraction with a float exactly): going through
    float64 first let 2**64 + 1 and Decimal("0.50000000000000000001") pass."""
    # numpy scalars as Python numbers, so that np.int64(2**62 + 1) is compared exactly too
    items = [x.item() if isinstance(x, np.generic) else x for x in given.ravel()]
    if not all(isinstance(x, numbers.Real | decimal.Decimal) for x in items):  # not complex, str
        raise NdpkitError(f"{what} must be numbers, got {value!r}")
    try:
        with np.errstate(over="ignore"):  # beyond float32: inf, refused below
            rounded = [np.float32(float(x)) for x in items]
    except OverflowError:
        raise NdpkitError(f"{what} {value!r} is beyond float32's range, and {why}") from None
    except (TypeError, ValueError):  # Decimal("sNaN") will not become a float
        raise NdpkitError(f"{what} must be numbers, got {value!r}") from None
    if any(math.isinf(r) and not math.isinf(x) for r, x in zip(rounded, items, strict=True)):
        raise NdpkitError(f"{what} {value!r} is beyond float32's range, and {why}")
    # NaN is held exactly, as the float path has it (equal_nan)
    exact = all(
        float(r) == x or (math.isnan(r) and math.isnan(float(x)))
        for r, x in zip(rounded, items, strict=True)
    )
    if not exact:
        kinds = sorted({type(x).__name__ for x in items})
        raise NdpkitError(
            f"{what} {value!r} ({', '.join(kinds)}) is not exact in float32, and {why}; "
            "give it as float32 (np.float32) if rounding it is what you want"
        )
    return np.array(rounded, dtype=np.float32).reshape(given.shape)


def check_params(params: object, kernel: str) -> None:
    """A SpecError unless `params` is a mapping (a dict, as `Kernel.params` gives): None
    ended in "argument of type 'NoneType' is not iterable" inside the kernel's `init`, in a
    run after its workers had started."""
    if not isinstance(params, Mapping):
        raise SpecError(
            f"must be a dict of the kernel's parameters (get_kernel({kernel!r}).params(seed)), "
            f"got {params!r}",
            field="params",
        )


def param(params: Mapping[str, Any], key: str, kernel: str) -> Any:
    """`params[key]`, or an NdpkitError naming the kernel and the keys it was given (a
    KeyError from inside a worker said only the key)."""
    check_params(params, kernel)
    if key not in params:
        have = ", ".join(map(repr, params)) or "nothing"
        raise NdpkitError(
            f"{kernel}: params have no {key!r} (they have {have}); start from "
            f"get_kernel({kernel!r}).params(seed)"
        )
    return params[key]


@dataclass(frozen=True)
class RowSpec:
    """The one row a per-record kernel's device part emits for every record (LC: a float32
    score, `RowSpec(np.dtype(np.float32))`)."""

    dtype: np.dtype[Any]
    shape: tuple[int, ...] = ()

    @property
    def row_bytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize


class Kernel(ABC):
    """One application. Subclasses set `name`, `description` and `record_shape`/`dtype`."""

    name: str = ""
    description: str = ""
    paper_app: str = ""
    """The papers' app this kernel is another split of, where its name differs (`he-remap`
    and `knn8-topk` are splits of `he` and `knn8`): `evaluate` models it at that app's D."""
    papers_split: bool = False
    """Whether this is the split the papers measured for `paper_app` (`he-remap`): then a
    platform's engine entries for `paper_app` (rate, power) are this kernel's own."""
    memory_per_input_byte: int = 8
    """Memory an in-memory evaluation takes per byte of its data: the data, the kernel's
    partials and answer, the reference's, and the profiler's runs. Measured (peak resident
    size at 64 MiB less at 8 MiB, per byte): 2-8 for most apps; FFT2D's complex spectra
    (8 bytes per pixel, its float64 reference twice that) take about 48."""
    dtype: np.dtype[Any] = np.dtype(np.uint8)
    record_shape: tuple[int, ...] = ()
    """Shape of one record (axis 0 of the data is records): (8,) for LC, (256, 256, 3) for
    FFT2D, () for a stream of pixels."""

    def __repr__(self) -> str:  # object's: "<ndpkit.kernels.knn.KnnRows object at 0x…>"
        return summary(
            type(self).__name__,
            name=self.name,
            dtype=str(self.dtype),
            record_shape=self.record_shape,
        )

    @property
    def record_bytes(self) -> int:
        return int(np.prod(self.record_shape, dtype=np.int64)) * self.dtype.itemsize

    @abstractmethod
    def generate(self, size_bytes: int, seed: int) -> np.ndarray:
        """About `size_bytes` of synthetic data (whole records), deterministic in `seed`."""

    def params(self, seed: int) -> dict[str, Any]:
        """Query points, weights, thresholds…: what every device needs besides its data.
        Deterministic in `seed`; the same for every shard."""
        return {}

    def init(self, params: dict[str, Any]) -> Any:
        """The state the first pass starts from."""
        return params

    @abstractmethod
    def device(self, chunk: np.ndarray, state: Any, offset: int) -> Any:
        """The device part over one chunk of whole records; returns a partial result."""

    @abstractmethod
    def merge(self, partials: list[Any]) -> Any:
        """Combine partials (associative and commutative)."""

    folds: bool = False
    """Whether the runtime should stream a shard's chunks through `fold` rather than merge
    their `device` partials."""
    chunk_bytes: int | None = None
    """The chunk an engine hands this kernel when the run names none (None: the runtime's
    `RUN_CHUNK_BYTES`, 32 MiB). Larger for a device part whose memory does not grow with its
    chunk: each chunk costs a call and a fresh start of the memory stream. Over Parquet shards,
    whose chunks are decoded batches, at most `RUN_CHUNK_BYTES`. A class attribute of a
    subclass of `Knn` stands against the 128 MiB its constructor gives the top-k split."""

    def fold(self, partial: Any, chunk: np.ndarray, state: Any, offset: int) -> Any:
        """The device part over `chunk` given `partial`, the engine's partial so far over the
        chunks before it (None before the first): `merge([partial, device(chunk)])` unless a
        kernel can do better, as a device streaming its shard would. k-NN's top-k keeps its
        k-th distance from chunk to chunk instead of starting every chunk afresh."""
        found = self.device(chunk, state, offset)
        return found if partial is None else self.merge([partial, found])

    @abstractmethod
    def host(self, merged: Any, state: Any) -> tuple[Any, bool]:
        """The host part: (new state or result, done)."""

    def finish(self, state: Any) -> Any:
        """The answer from the final state (identity unless the state carries extra data)."""
        return state

    @abstractmethod
    def reference(self, data: np.ndarray, params: dict[str, Any]) -> Any:
        """The same answer from an independent library, on the whole data set."""

    @abstractmethod
    def check(self, result: Any, expected: Any) -> None:
        """Raise KernelMismatchError (saying what differs) unless result matches expected."""

    def output_bytes(self, partial: Any) -> int:
        """Bytes a device sends to the host for this partial (for the reduction ratio α)."""
        return _nbytes(partial)

    def output_limit_bytes(self) -> int | None:
        """The most a device's merged partial holds whatever it reads (a top-k list, a table
        of sums), or None where it grows with the input. α is extrapolated from a profiled
        sample's output (`Measurement.device_sends_bytes`); a sample smaller than the limit
        (fewer points than k) would otherwise be taken to grow with the input for ever."""
        return None


class RowKernel(Kernel):
    """A per-record kernel that can also write its rows in place (LC: a score per point).

    Its partials are 1/α of the input; merging and moving them between processes would
    cost the runtime more than the device part itself, so the runtime instead gives every
    engine its records' slice of one output array. `device` and `merge` still give the same
    answer as partials (the runtime falls back to them when there is no room for the rows)."""

    @abstractmethod
    def row_spec(self, state: Any) -> RowSpec:
        """The row `device_into` writes per record."""

    @abstractmethod
    def device_into(self, chunk: np.ndarray, state: Any, offset: int, out: np.ndarray) -> None:
        """The device part over one chunk, writing the chunk's rows into `out` (shape
        (len(chunk), *row_spec.shape)) instead of returning them."""

    @abstractmethod
    def rows_merged(self, rows: np.ndarray, state: Any) -> Any:
        """What `host` expects as the merged partial, from every record's row in record order
        (what `merge` of the `device` partials would have given)."""


def _nbytes(value: Any) -> int:
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, dict):
        return sum(_nbytes(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(_nbytes(v) for v in value)
    if isinstance(value, int | float | np.number):
        return 8
    return 0


def run_in_memory(
    kernel: Kernel,
    data: np.ndarray,
    params: dict[str, Any],
    chunk_records: int,
    shard_bounds: Sequence[int] | None = None,
) -> Any:
    """The whole kernel in one process over `data` in chunks: the runtime's reference path.

    With `shard_bounds` (record indices 0 = b0 ≤ b1 ≤ … = len(data)), chunks are taken
    shard by shard and each shard's partials are merged first, as a device would, before
    the per-shard partials are merged for the host."""
    data = records_array(data)
    check_kernel(kernel)
    check_params(params, kernel.name)
    chunk_records, bounds = _check_run(data, chunk_records, shard_bounds)
    _check_axes(kernel, data)
    state = kernel.init(params)
    while True:
        if bounds is None:
            merged = kernel.merge(chunk_partials(kernel, data, state, 0, chunk_records))
        else:
            merged = kernel.merge(
                [
                    kernel.merge(chunk_partials(kernel, data[lo:hi], state, lo, chunk_records))
                    for lo, hi in itertools.pairwise(bounds)
                ]
            )
        state, done = kernel.host(merged, state)
        if done:
            return kernel.finish(state)


def records_array(data: Any) -> np.ndarray:
    """`data` as an array: a list gave "'list' object has no attribute 'ndim'" from some
    kernels (and from `profiling.measure`); as an array it meets the kernel's own dtype and
    shape checks, which say what is wanted."""
    if isinstance(data, np.ndarray):
        return data
    try:
        array = np.asarray(data)
    except ValueError as exc:  # rows of unequal lengths: numpy's "inhomogeneous shape"
        raise SpecError(
            f"must be an array of records, rows of one shape ({brief(exc)})", field="data"
        ) from None
    if array.ndim == 0 and array.dtype.hasobject:
        # A data set (or None) became a 0-d object array: "got a scalar" did not say which
        # object, nor that a data set's records are read with read_all().
        reads = callable(getattr(data, "read_all", None))
        hint = ": give its records, dataset.read_all()" if reads else ""
        raise SpecError(
            f"must be an array of records, got {type(data).__name__}{hint}", field="data"
        )
    return array


def check_kernel(kernel: object) -> None:
    """A SpecError unless `kernel` is a Kernel: an app's name ended in "'str' object has no
    attribute 'record_shape'"."""
    if not isinstance(kernel, Kernel):
        raise SpecError(
            f"must be a Kernel (get_kernel(name) for an app), got {kernel!r}", field="kernel"
        )


def _check_run(
    data: np.ndarray, chunk_records: int, shard_bounds: Sequence[int] | None
) -> tuple[int, list[int] | None]:
    """`run_in_memory`'s arguments, checked: a chunk of no records, or bounds that skip or
    repeat records, gave an answer over part of the data (or none) with no error."""
    if np.ndim(data) == 0:
        raise SpecError("must be an array of records (axis 0), got a scalar", field="data")
    chunk_records = whole_number(
        chunk_records, "chunk_records", "a whole number of records ≥ 1", least=1
    )
    if shard_bounds is None:
        return chunk_records, None
    bounds = [whole_number(b, "shard_bounds", "whole record indices") for b in shard_bounds]
    n = len(data)
    ordered = all(lo <= hi for lo, hi in itertools.pairwise(bounds))
    if len(bounds) < 2 or bounds[0] != 0 or bounds[-1] != n or not ordered:
        raise SpecError(
            f"must rise from 0 to len(data) = {n} (0 = b0 ≤ b1 ≤ … = {n}), got {bounds}",
            field="shard_bounds",
        )
    return chunk_records, bounds


def _check_axes(kernel: Kernel, data: np.ndarray) -> None:
    """Records along axis 0, each of the kernel's record axes: one 256×256 image given
    without `[None]` was cut into one-row chunks, and the kernel's own check then named a
    (1, 256) chunk, not the array the caller passed."""
    axes = len(kernel.record_shape)
    # A kernel whose records are scalars (or that does not say: a user's subclass keeps the
    # default `()`) takes any array, as before.
    shape = ", ".join(["n", *map(str, kernel.record_shape)])
    if axes and np.ndim(data) != axes + 1:
        hint = " (one record: data[None])" if np.ndim(data) == axes else ""
        raise NdpkitError(
            f"{kernel.name}: data of shape {np.shape(data)} is not an array of records: "
            f"need {axes + 1} axes, ({shape}){hint}"
        )
    # Records of another shape were named by the kernel's check of the first chunk: (5, 3)
    # points for knn2 in chunks of 2 were "data of shape (2, 3)". Grey-image kernels
    # (records of two axes, height and width) take images of any size.
    if axes and axes != 2 and np.shape(data)[1:] != tuple(kernel.record_shape):
        raise NdpkitError(
            f"{kernel.name}: data of shape {np.shape(data)} is not records of shape "
            f"{tuple(kernel.record_shape)}: need an array of shape ({shape})"
        )


def chunk_partials(
    kernel: Kernel, shard: np.ndarray, state: Any, first: int, chunk_records: int
) -> list[Any]:
    """The device part over `shard` (its first record is record `first`) chunk by chunk, as
    an engine streams it: every chunk's partial, or one folded partial if the kernel folds."""
    if kernel.folds:
        partial = None
        for i in range(0, max(len(shard), 1), chunk_records):
            partial = kernel.fold(partial, shard[i : i + chunk_records], state, first + i)
        return [partial]
    return [
        kernel.device(shard[i : i + chunk_records], state, first + i)
        for i in range(0, max(len(shard), 1), chunk_records)
    ]
