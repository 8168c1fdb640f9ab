"""Sizes past what the sort and shuffle kernels can hold are refused by name, not wrapped.

Before: ℒ = 2^62 wrapped the capacity 2·𝒫·ℒ·1,024 to 0 (argsort returned no keys; with
merge_tree a Rust panic), closed-form counts wrapped from n ≈ 2^52, `bitonic_network(2^63)`
and merge_tree counts of 2^62 keys allocated until the process died, and 2^40 shuffle
workers aborted it.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

import numpy as np
import pytest

from ndpkit.errors import ModelError, SpecError
from ndpkit.nascent import bitonic
from ndpkit.nascent.devices import load_devices
from ndpkit.nascent.shuffler import MAX_WORKERS, shuffle

_core: Any = import_module("ndpkit._core")
KEYS = np.array([3, 1, 2], dtype=np.uint32)


@pytest.mark.parametrize("dram_merge", ["bitonic_dram", "merge_tree"])
def test_a_capacity_past_32_bit_indices_is_refused(dram_merge: bitonic.DramMerge) -> None:
    with pytest.raises(SpecError, match="2\\^32") as python:
        bitonic.argsort(KEYS, p=2, l=2**62, dram_merge=dram_merge)
    assert python.value.field == "l"
    # The Rust core refuses it on its own too, as ValueError (no PanicException).
    with pytest.raises(ValueError, match="BRAM rows L"):
        _core.bitonic_argsort_u32(KEYS, 2, 2**62, "value_only", False, dram_merge, 2)
    with pytest.raises(ValueError, match="BRAM rows L"):
        _core.bitonic_geometry(2, 2**62, 4)


def test_the_largest_capacity_and_sorter_are_accepted_and_one_more_is_not() -> None:
    assert bitonic.geometry(p=2, l=2**20).capacity == bitonic.MAX_CAPACITY
    assert bitonic.argsort(KEYS, p=2, l=2**20).indices.tolist() == [1, 2, 0]
    assert bitonic.geometry(p=bitonic.MAX_P, l=64).capacity == bitonic.MAX_CAPACITY
    with pytest.raises(SpecError, match="at most 1048576 with p = 2"):
        bitonic.geometry(p=2, l=2**21)
    with pytest.raises(SpecError, match="at most 32768") as e:
        bitonic.geometry(p=2 * bitonic.MAX_P, l=1)
    assert e.value.field == "p"
    with pytest.raises(ValueError, match="sorter width P"):
        _core.bitonic_geometry(2**63, 1, 4)


def test_closed_forms_refuse_counts_past_64_bits() -> None:
    assert bitonic.expected_counts(2**40).compare_swaps == 2**39 * 40 * 41 // 2
    for n in (2**52, 2**63, 2**64 - 1, 2**64):
        with pytest.raises(ModelError, match=f"{n}( elements do not fit 64-bit| or merge)"):
            bitonic.expected_counts(n)
    # merge_tree's passes are no longer listed run by run (2^39 runs here).
    passes = bitonic.expected_merge_passes(2**56, merge_ways=4)
    assert len(passes) == 20
    assert passes[0].runs_in == 2**39
    with pytest.raises(ModelError):
        bitonic.expected_counts(2**62, dram_merge="merge_tree")


def test_networks_too_large_to_list_are_refused() -> None:
    with pytest.raises(SpecError, match="at most 65536") as e:
        bitonic.network(2**17)
    assert e.value.field == "n"
    for n in (2**17, 2**32, 2**63):
        with pytest.raises(ValueError, match="network size n"):
            _core.bitonic_network(n)


def test_devices_refuse_a_sorter_or_capacity_the_kernel_cannot_hold() -> None:
    with pytest.raises(SpecError, match="2\\^32 elements") as e:
        load_devices(overrides={"smartssd": {"bram_rows": 2**62}})
    assert e.value.field == f"--option smartssd.bram_rows={2**62}"  # given as an override
    with pytest.raises(SpecError, match="at most 131072 with sorter_width = 16") as e:
        load_devices(overrides={"smartssd": {"sorter_width": 16, "bram_rows": 2**18}})
    assert e.value.field == "--option smartssd.sorter_width=16"  # the width makes it too large
    with pytest.raises(SpecError, match="must be at most 32768") as e:
        load_devices(overrides={"smartssd": {"sorter_width": 2**16}})
    assert e.value.field == "--option smartssd.sorter_width=65536"  # given as an override
    widest = load_devices(overrides={"smartssd": {"sorter_width": 2, "bram_rows": 2**20}})
    assert widest.fpga("smartssd").sort_capacity == bitonic.MAX_CAPACITY


@pytest.mark.parametrize("merge", [(), ("-o", "dram_merge=merge_tree")])
def test_the_cli_names_the_option_instead_of_a_traceback(ndpkit, merge: tuple[str, ...]) -> None:
    """Once a ZeroDivisionError traceback (exit 1), or "0 elements exceed one on-chip chunk"."""
    args = ("simulate", "nascent2", "--read-only-cpu", "--sf", "0.01", "-m", "1")
    result = ndpkit(*args, "-o", "smartssd.bram_rows=4611686018427387904", *merge)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("error: ")
    assert (
        "--option smartssd.bram_rows=4611686018427387904: bram_rows must be at most 262144 "
        "with sorter_width = 8" in result.stderr
    )
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_shuffle_workers_share_threads_and_absurd_counts_are_refused() -> None:
    column = np.arange(3, dtype=np.uint32)
    order = np.array([2, 0, 1])
    with pytest.raises(SpecError, match=f"≤ {MAX_WORKERS}") as e:
        shuffle([column], order, workers=2**40)
    assert e.value.field == "workers"
    rows = np.ascontiguousarray(column).view(np.uint8).reshape(3, 4)
    with pytest.raises(ValueError, match="shuffle workers"):
        _core.shuffle_table([rows], 0, "row", order.astype(np.uint32), None, 2**40, 64)
    r = shuffle([column], order, workers=MAX_WORKERS)
    assert r.columns[0].tolist() == [2, 0, 1]
    assert len(r.counts.workers) == MAX_WORKERS
    assert r.counts.workers[-1].end_row == 3
