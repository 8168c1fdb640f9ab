"""NASCENT2 kernel timing: sort (spec §5.6, §5.8), decoder (§7.4) and shuffle (§6.5).

Pure functions of (an `FpgaDevice`, a workload shape, options) that return frozen results
with a per-phase breakdown. The operation counts come from `ndpkit.nascent.bitonic`
(`expected_counts`, the same closed forms the functional kernel is checked against); this
module only prices them.

Sort (§5.8), per on-chip chunk of N_c elements of e bytes (indices are 4 bytes):

    T_load = N_c·e / AXI,  T_PCS = n_PCS / u_PCS,  T_MRG = n_MRG / u_MRG,
    T_store = N_c·(e + 4) / AXI,  D_pipe = log₂𝒫(log₂𝒫 + 1)/2 + log₂(2𝒫)        [cycles]
    T_chunk = (T_load + T_PCS + T_MRG + T_store + D_pipe) / f

A sort of N > N_c continues in DRAM (option O4): `bitonic_dram` runs (n−c)(n−c+1)/2
streaming compare-and-swap passes, each moving the padded keys and indices in and out at
BW_D2F, plus (n−c) on-chip merge passes per chunk; `merge_tree` runs ⌈log_k(chunks)⌉ passes,
each bounded by the merger's element rate and by BW_D2F. With the input in the SSD
(`source="ssd"`), N·e / BW_S2F is added; option O10 `overlap` lets the P2P read stand in for
the chunk loads, as a two-stage pipeline over chunks.

Assumptions: the 𝒫-sorter runs in the shadow of the load; replicas of the sort kernel
(the U250's k_rep) take the chunks and the on-chip merge passes in waves, and the kernels
of a wave load and store together within BW_D2F (a wave's transfer takes
max(its bytes at one AXI port, the wave's bytes / BW_D2F)); DRAM streaming passes share
BW_D2F; counts are for the input padded to a power of two (O16). `merge_tree` passes move
the N real pairs (the chunk pass drops the pads).

Example (one full chunk, spec §13.3):
    >>> from ndpkit.nascent.devices import load_devices
    >>> t = sort_time(load_devices().fpga("smartssd"), 131_072)
    >>> t.chunks, round(t.total_s * 1e3, 4)
    (1, 1.7067)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from ndpkit.errors import ModelError, SpecError
from ndpkit.nascent.bitonic import SortCounts, expected_counts
from ndpkit.nascent.devices import FpgaDevice, entry_origin
from ndpkit.nascent.pages import MAX_DICTIONARY_VALUES

KeyBits = Literal[32, 64]
DramMerge = Literal["bitonic_dram", "merge_tree"]
Overlap = Literal["serial", "overlap"]
SortSource = Literal["dram", "ssd"]
Staging = Literal["auto", "stage_in_dram", "ssd_direct"]
Accounting = Literal["paper", "full"]
INDEX_BYTES = 4
"""Sorted indices are u32 (spec §3.5)."""
_SOURCE = "nascent2 model"


def _device_error(device: FpgaDevice, field: str, message: str) -> ModelError:
    """A job the device cannot hold, naming the device entry at fault where it was set (its
    file, or the command line's --option)."""
    return ModelError(f"{entry_origin(device, field)}: {message}")


def check_choice(name: str, value: str, allowed: object) -> None:
    """A clear error for an option value outside its Literal."""
    values = get_args(allowed)
    if value not in values:
        raise SpecError(
            f"must be one of {', '.join(map(str, values))}, got {value!r}",
            source=_SOURCE,
            field=name,
        )


def _check_count(name: str, value: int, minimum: int = 0) -> None:
    if value < minimum:
        raise SpecError(f"must be ≥ {minimum}, got {value}", source=_SOURCE, field=name)


@dataclass(frozen=True)
class ChunkCycles:
    """§5.8's cycle terms for one on-chip chunk."""

    elements: int
    load: float
    pcs: float
    merge: float
    store: float
    pipe: float

    @property
    def total(self) -> float:
        return self.load + self.pcs + self.merge + self.store + self.pipe


def pipeline_fill_cycles(p: int) -> float:
    """D_pipe: the 𝒫-sorter's depth plus the 2𝒫 merger's (§5.8, a choice)."""
    s = math.log2(p)
    return s * (s + 1) / 2 + math.log2(2 * p)


def chunk_cycles(device: FpgaDevice, chunk_elements: int, key_bits: KeyBits = 32) -> ChunkCycles:
    """The §5.8 terms of one chunk of `chunk_elements` (a power of two ≤ the capacity)."""
    e = key_bits // 8
    counts = expected_counts(chunk_elements, key_bits=key_bits, p=device.p, l=device.l)
    if counts.chunks != 1:
        raise ModelError(f"{chunk_elements} elements exceed one on-chip chunk ({counts.capacity})")
    return ChunkCycles(
        elements=counts.chunk_elements,
        load=counts.chunk_elements * e / device.axi_bytes,
        pcs=counts.pcs_ops / device.u_pcs,
        merge=counts.merge_ops / device.u_mrg,
        store=counts.chunk_elements * (e + INDEX_BYTES) / device.axi_bytes,
        pipe=pipeline_fill_cycles(device.p),
    )


@dataclass(frozen=True)
class SortTime:
    """T_sort(N) (§10.3) with its phases; `*_s` in seconds."""

    device: str
    elements: int
    key_bits: int
    source: str
    dram_merge: str
    overlap: str
    kernels: int
    chunk: ChunkCycles
    chunks: int
    chunk_s: float
    ssd_read_s: float
    chunk_phase_s: float
    streaming_passes: int
    streaming_s: float
    onchip_passes: int
    onchip_merge_s: float
    onchip_pass_s: float
    merge_tree_passes: int
    merge_tree_s: float

    @property
    def dram_merge_s(self) -> float:
        return self.streaming_s + self.onchip_merge_s + self.merge_tree_s

    @property
    def total_s(self) -> float:
        return self.chunk_phase_s + self.dram_merge_s

    def phases_s(self) -> dict[str, float]:
        return {"chunks": self.chunk_phase_s, "dram_merge": self.dram_merge_s}


def sort_time(
    device: FpgaDevice,
    n: int,
    key_bits: KeyBits = 32,
    *,
    source: SortSource = "dram",
    dram_merge: DramMerge = "bitonic_dram",
    merge_ways: int = 2,
    overlap: Overlap = "overlap",
) -> SortTime:
    """The sort kernel's time for n keys of `key_bits` (§5.8, §10.3). Depends only on n."""
    _check_count("n", n)
    check_choice("key_bits", str(key_bits), Literal["32", "64"])
    check_choice("source", source, SortSource)
    check_choice("dram_merge", dram_merge, DramMerge)
    check_choice("overlap", overlap, Overlap)
    _check_count("merge_ways", merge_ways, 2)
    e = key_bits // 8
    counts = expected_counts(max(n, 1), key_bits=key_bits, p=device.p, l=device.l)
    if dram_merge == "merge_tree":
        chunks = max(1, math.ceil(n / counts.chunk_elements))
    else:
        chunks = counts.chunks
    chunk = chunk_cycles(device, counts.chunk_elements, key_bits)
    f = device.clock_hz
    kernels = device.sort_kernels
    waves = math.ceil(chunks / kernels)
    chunk_s = chunk.total / f
    load_bytes = chunk.elements * e
    store_bytes = chunk.elements * (e + INDEX_BYTES)
    chunk_moves = (load_bytes, store_bytes)
    ssd_read_s = n * e / device.s2f_bytes_per_s if source == "ssd" else 0.0
    if source == "ssd" and overlap == "overlap":
        # A two-stage pipeline (P2P read, kernel): the first chunk's load waits for its
        # data, later chunks arrive while the kernels work; the kernels never run faster
        # than with the input already in DRAM, and never slower than read-then-sort. The
        # chunks land one by one, so the replicas take them staggered, not in waves, and
        # together move no more than BW_D2F.
        first = max(ssd_read_s / chunks, chunk.load / f)
        compute = (chunk.total - chunk.load) / f
        moved_s = chunks * (load_bytes + store_bytes) / device.d2f_bytes_per_s
        chunk_phase_s = max(
            ssd_read_s + compute, first + compute + (waves - 1) * chunk_s, first + moved_s
        )
    else:
        chunk_phase_s = ssd_read_s + _waves_s(device, chunks, chunk_s, chunk_moves)
    streaming_passes = onchip_passes = tree_passes = 0
    streaming_s = onchip_s = onchip_pass_s = tree_s = 0.0
    if chunks > 1 and dram_merge == "bitonic_dram":
        pass_bytes = 2 * chunks * counts.chunk_elements * (e + INDEX_BYTES)
        streaming_passes = counts.dram_passes
        streaming_s = streaming_passes * pass_bytes / device.d2f_bytes_per_s
        onchip_passes = counts.onchip_merge_passes
        onchip_pass_s = _onchip_pass_s(device, counts, chunk, key_bits)
        onchip_moves = (store_bytes, store_bytes)
        onchip_s = onchip_passes * _waves_s(device, chunks, onchip_pass_s, onchip_moves)
    elif chunks > 1:
        # The chunk pass drops the pads, so each merge pass moves the N real pairs each way.
        pass_bytes = merge_tree_pass_bytes(n, key_bits)
        tree_passes = math.ceil(math.log(chunks, merge_ways) - 1e-12)
        per_pass = max(
            pass_bytes / device.d2f_bytes_per_s,
            n / (f * device.merge_tree_elements_per_cycle),
        )
        tree_s = tree_passes * per_pass
    return SortTime(
        device=device.name,
        elements=n,
        key_bits=key_bits,
        source=source,
        dram_merge=dram_merge,
        overlap=overlap,
        kernels=kernels,
        chunk=chunk,
        chunks=chunks,
        chunk_s=chunk_s,
        ssd_read_s=ssd_read_s,
        chunk_phase_s=chunk_phase_s,
        streaming_passes=streaming_passes,
        streaming_s=streaming_s,
        onchip_passes=onchip_passes,
        onchip_merge_s=onchip_s,
        onchip_pass_s=onchip_pass_s,
        merge_tree_passes=tree_passes,
        merge_tree_s=tree_s,
    )


def merge_tree_pass_bytes(n: int, key_bits: int = 32) -> int:
    """DRAM bytes of one `merge_tree` pass: the N real (key, index) pairs read and written."""
    return 2 * n * (key_bits // 8 + INDEX_BYTES)


def _shared_move_s(device: FpgaDevice, kernels: int, move_bytes: float) -> float:
    """One chunk transfer made by `kernels` sort kernels at once: each at its AXI port's
    rate, and, with more than one, all of them within BW_D2F (a kernel alone is charged at
    its port, the model's choice, §5.8)."""
    port_s = move_bytes / (device.axi_bytes * device.clock_hz)
    if kernels < 2:
        return port_s
    return max(port_s, kernels * move_bytes / device.d2f_bytes_per_s)


def _waves_s(
    device: FpgaDevice, chunks: int, one_chunk_s: float, moves: tuple[float, ...]
) -> float:
    """`chunks` chunk jobs on the sort kernels, in waves of up to `sort_kernels`.

    One chunk alone takes `one_chunk_s`, whose `moves` (bytes) are DRAM transfers at the
    AXI port's rate. The kernels of a wave make each transfer together, so it takes their
    bytes / BW_D2F when that is longer: the replicas share the DRAM, and no wave is faster
    than its bytes over BW_D2F."""
    port_s = [b / (device.axi_bytes * device.clock_hz) for b in moves]
    full, rest = divmod(chunks, device.sort_kernels)
    total = 0.0
    for kernels, waves in ((device.sort_kernels, full), (rest, 1 if rest else 0)):
        shared = sum(_shared_move_s(device, kernels, b) for b in moves)
        total += waves * (one_chunk_s - sum(port_s) + shared)
    return total


def _onchip_pass_s(
    device: FpgaDevice, counts: SortCounts, chunk: ChunkCycles, key_bits: KeyBits
) -> float:
    """One of the (n − c) on-chip passes of `bitonic_dram` for one chunk on a kernel alone,
    in seconds: reload the chunk's keys and indices, run the sub-steps below N_c, store."""
    passes, chunks = counts.onchip_merge_passes, counts.chunks
    first_level = expected_counts(chunk.elements, key_bits=key_bits, p=device.p, l=device.l)
    extra_pcs = counts.pcs_ops - chunks * first_level.pcs_ops
    extra_merges = counts.merge_ops - chunks * first_level.merge_ops
    move = chunk.elements * (key_bits // 8 + INDEX_BYTES) / device.axi_bytes
    per_chunk = (
        2 * move
        + extra_pcs / (chunks * passes * device.u_pcs)
        + extra_merges / (chunks * passes * device.u_mrg)
        + chunk.pipe
    )
    return per_chunk / device.clock_hz


@dataclass(frozen=True)
class DecodeTime:
    """T_dict + T_dec (§7.4) and Fig. 12's two bandwidths."""

    device: str
    mode: str
    keys: int
    key_bytes: int
    output_bytes_per_key: float
    lanes: int
    accounting: str
    terms_s: Mapping[str, float]
    dict_s: float

    @property
    def decode_s(self) -> float:
        return max(self.terms_s.values())

    @property
    def bottleneck(self) -> str:
        return max(self.terms_s, key=lambda k: self.terms_s[k])

    @property
    def total_s(self) -> float:
        return self.dict_s + self.decode_s

    @property
    def input_bytes_per_s(self) -> float:
        """N·k / T_dec: the SSD → FPGA rate, the performance metric."""
        return self.keys * self.key_bytes / self.decode_s if self.decode_s else 0.0

    @property
    def total_bytes_per_s(self) -> float:
        """DRAM ↔ kernel traffic / T_dec: data-page read + decoded write (O8 `paper`), plus
        the P2P write of the data page into DRAM (`full`)."""
        if not self.decode_s:
            return 0.0
        return self.keys * self._dram_bytes_per_key() / self.decode_s

    def _dram_bytes_per_key(self) -> float:
        extra = self.key_bytes if self.accounting == "full" else 0
        return self.key_bytes + self.output_bytes_per_key + extra


def default_lanes(device: FpgaDevice, key_bytes: int) -> int:
    """Option O7: ⌈BW_S2F / (f · k)⌉, enough lanes for the input side to reach S2F."""
    return math.ceil(device.s2f_bytes_per_s / (device.clock_hz * key_bytes) - 1e-9)


def decode_time(
    device: FpgaDevice,
    keys: int,
    key_bytes: int,
    *,
    width: int | None = None,
    mean_length: float | None = None,
    l_max: int | None = None,
    dict_values: int = 0,
    dict_bytes: float = 0.0,
    lanes: int | None = None,
    accounting: Accounting = "paper",
) -> DecodeTime:
    """§7.4: fixed-length (`width` bytes per value) or variable-length (`mean_length`
    bytes on average, tables of `l_max`-byte rows)."""
    _check_count("keys", keys)
    check_choice("key_bytes", str(key_bytes), Literal["1", "2", "4"])
    check_choice("accounting", accounting, Accounting)
    if (width is None) == (mean_length is None):
        raise SpecError(
            "give exactly one of width (fixed) or mean_length (variable)",
            source=_SOURCE,
            field="width",
        )
    _check_count("dict_values", dict_values)
    if not (math.isfinite(dict_bytes) and dict_bytes >= 0):
        raise SpecError(
            f"must be a finite number of bytes ≥ 0, got {dict_bytes}",
            source=_SOURCE,
            field="dict_bytes",
        )
    # A key indexes 2^(8·key_bytes) values, and no dictionary holds more than 2^16 (§3.2:
    # a column with more is stored plain; §3.4: NKeys are u16): 4-byte keys took 10^8.
    most = min(2 ** (8 * key_bytes), MAX_DICTIONARY_VALUES)
    if dict_values > most:
        raise SpecError(
            f"{dict_values} dictionary values cannot be indexed by {key_bytes}-byte keys "
            f"(at most {most}, §3.2: a column with more than 2^16 is stored plain)",
            source=_SOURCE,
            field="dict_values",
        )
    f, s2f, d2f = device.clock_hz, device.s2f_bytes_per_s, device.d2f_bytes_per_s
    extra = key_bytes if accounting == "full" else 0
    if width is not None:
        _check_count("width", width, 1)
        n_lanes = lanes if lanes is not None else default_lanes(device, key_bytes)
        _check_count("lanes", n_lanes, 1)
        if dict_values:
            fit = int(device.dictionary_memory_bytes // (dict_values * width))
            if fit < 1:
                raise _device_error(
                    device,
                    "dictionary_memory",
                    f"a {dict_values}-value × {width} B dictionary exceeds the decoder's "
                    f"{device.dictionary_memory_bytes:.0f} B table memory",
                )
            n_lanes = min(n_lanes, fit)
        out: float = width
        terms = {
            "key_rate": keys / (n_lanes * f),
            "ssd_input": keys * key_bytes / s2f,
            "dram": keys * (key_bytes + width + extra) / d2f,
        }
        mode = "fixed"
    else:
        assert mean_length is not None
        if l_max is None or l_max < 1:
            raise SpecError(
                "variable-length decoding needs l_max ≥ 1", source=_SOURCE, field="l_max"
            )
        if not (math.isfinite(mean_length) and 0 <= mean_length <= l_max):
            raise SpecError(
                f"must be a number from 0 to l_max ({l_max} B, the longest value), "
                f"got {mean_length}",
                source=_SOURCE,
                field="mean_length",
            )
        if dict_bytes > device.dictionary_memory_bytes:
            raise _device_error(
                device,
                "dictionary_memory",
                f"a {dict_values}-value, {dict_bytes:.0f} B dictionary exceeds the decoder's "
                f"{device.dictionary_memory_bytes:.0f} B table memory",
            )
        buffers = min(l_max, 64)
        n_lanes, out = 1, mean_length
        terms = {
            "key_rate": keys / f,
            "ssd_input": keys * key_bytes / s2f,
            "dram": keys * (key_bytes + mean_length + extra) / d2f,
            "output_buffers": keys * mean_length / (f * buffers),
        }
        mode = "variable"
    return DecodeTime(
        device=device.name,
        mode=mode,
        keys=keys,
        key_bytes=key_bytes,
        output_bytes_per_key=out,
        lanes=n_lanes,
        accounting=accounting,
        terms_s=terms,
        dict_s=dict_bytes / s2f + dict_values / f,
    )


@dataclass(frozen=True)
class ShuffleTime:
    """T_shuffle (§6.5) and the staging each run used (O5) with its output sink (O6)."""

    device: str
    rows: int
    row_bytes: float
    staging: str
    output_sink: str
    overlap: str
    kernels: int
    kernel_bytes_per_s: float
    gather_bytes_per_s: float
    copy_s: float
    gather_s: float
    total_s: float

    @property
    def table_bytes(self) -> float:
        return self.rows * self.row_bytes


def shuffle_time(
    device: FpgaDevice,
    rows: int,
    row_bytes: float,
    *,
    staging: Staging = "auto",
    overlap: Overlap = "overlap",
    reserved_bytes: float = 0.0,
) -> ShuffleTime:
    """Reorder `rows` rows of `row_bytes` by the sorted indices with the shuffle kernels.

    `stage_in_dram` copies the row section into FPGA DRAM (P2P, sequential) and gathers
    there; it needs the table plus `reserved_bytes` (keys, indices) to fit in DRAM, and
    streams its output to the SSD if the output does not fit as well. `ssd_direct` fetches
    rows from the SSD at page granularity. `auto` stages when the table fits.
    """
    _check_count("rows", rows)
    check_choice("staging", staging, Staging)
    check_choice("overlap", overlap, Overlap)
    if not row_bytes > 0:
        raise SpecError(f"must be positive, got {row_bytes}", source=_SOURCE, field="row_bytes")
    table = rows * row_bytes
    fits = table + reserved_bytes <= device.dram_bytes
    mode = ("stage_in_dram" if fits else "ssd_direct") if staging == "auto" else staging
    if mode == "stage_in_dram" and not fits:
        raise SpecError(
            f"stage_in_dram needs {table + reserved_bytes:.3g} B of FPGA DRAM, the "
            f"{device.name} has {device.dram_bytes:.3g} B; use ssd_direct (O5)",
            source=_SOURCE,
            field="staging",
        )
    port = device.axi_bytes * device.clock_hz
    kernels = device.shuffle_kernels
    s2f = device.s2f_bytes_per_s
    if mode == "stage_in_dram":
        per_kernel = row_bytes / (device.t_rand_s + row_bytes / port)
        gather_rate = min(kernels * per_kernel, device.d2f_bytes_per_s / 2)
        copy_s, gather_s = table / s2f, table / gather_rate
        total = max(copy_s, gather_s) if overlap == "overlap" else copy_s + gather_s
        sink = "fpga_dram" if 2 * table + reserved_bytes <= device.dram_bytes else "ssd"
    else:
        page = device.ssd_page_bytes
        fetched = math.ceil(row_bytes / page) * page
        per_kernel = row_bytes / (device.ssd_read_latency_s + fetched / s2f)
        gather_rate = min(kernels * per_kernel, s2f * row_bytes / fetched, device.d2f_bytes_per_s)
        copy_s, gather_s = 0.0, table / gather_rate
        total = gather_s
        sink = "fpga_dram" if table + reserved_bytes <= device.dram_bytes else "ssd"
    return ShuffleTime(
        device=device.name,
        rows=rows,
        row_bytes=row_bytes,
        staging=mode,
        output_sink=sink,
        overlap=overlap,
        kernels=kernels,
        kernel_bytes_per_s=per_kernel,
        gather_bytes_per_s=gather_rate,
        copy_s=copy_s,
        gather_s=gather_s,
        total_s=total,
    )
