"""NASCENT2's near-storage sort kernels (Salamat et al., ACM TRETS 15(2), 2022; spec
`seeds/nascent2.md`) as functional models with hardware counts.

- `bitonic`: the bitonic network (§4) and the sort kernel (§5): (value, index) pairs, a
  𝒫-sorter, M₁/M₂ sequence memory of capacity 2,048·𝒫·ℒ (Eq. 3), chunks merged in DRAM;
  comparator and memory-access counts (Eq. 2).
- `shuffler`: the shuffle kernel, SortedTable[i] = OriginalTable[SortedIndices[i]] (Eq. 4)
  over six kernels, for row-wise, column-wise and hybrid layouts, with sequential/random
  access counts (§6.4). The module is not called `shuffle` so that the package's `shuffle`
  stays the function whichever submodules were imported first.
- `decoder`: the dictionary decoder (§7): concatenated table, Eq. 5, two-row read, B output
  buffers, fixed- and variable-length modes.
- `dictionary`: dictionary encoding and the sorted-dictionary renumbering (§8).
- `generic`: the generic sort of any key type (§8, Flow B), with the host fallback.
- `tablefile` (with `pages`, `tablerows`): the on-disk TableFile of §3.1 (row-wise,
  column-wise or hybrid layout; PLAIN or DICT key section) and the dictionary and data
  pages of §3.3; `filesort` runs decoder, sort and shuffle on such a file.
- `tablesort`: `ndpkit sort`, the same pipeline on real Parquet tables over M devices.

The kernels run in the Rust crate `ndp-sort`; these modules check inputs, call it once and
return typed results. They know nothing of platforms: timing and energy belong to the
SmartSSD models, `timing`, `system` and `model` (analytic) and `des` (the discrete-event
simulation, which agrees with the analytic model on large tables).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ndpkit.nascent.bitonic import (
        SortCounts,
        SortResult,
        argsort,
        expected_counts,
        geometry,
    )
    from ndpkit.nascent.decoder import Decoded, decode, dictionary_table
    from ndpkit.nascent.dictionary import encode, renumber
    from ndpkit.nascent.filesort import FileSortResult, sort_table_file
    from ndpkit.nascent.generic import GenericSortResult, generic_sort
    from ndpkit.nascent.shuffler import ShuffleResult, shuffle
    from ndpkit.nascent.tablefile import TableFile, read_table_file, write_table_file

# Names are imported on first use, so `ndpkit sort` (which needs only `tablesort`) does not
# pay for the file formats' and kernels' imports at start-up. No submodule may share a name
# exported here: importing a submodule binds it as a package attribute, which would then
# shadow the function of the same name.
_HOMES = {
    "bitonic": ("SortCounts", "SortResult", "argsort", "expected_counts", "geometry"),
    "decoder": ("Decoded", "decode", "dictionary_table"),
    "dictionary": ("encode", "renumber"),
    "filesort": ("FileSortResult", "sort_table_file"),
    "generic": ("GenericSortResult", "generic_sort"),
    "shuffler": ("ShuffleResult", "shuffle"),
    "tablefile": ("TableFile", "read_table_file", "write_table_file"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "Decoded",
    "FileSortResult",
    "GenericSortResult",
    "ShuffleResult",
    "SortCounts",
    "SortResult",
    "TableFile",
    "argsort",
    "decode",
    "dictionary_table",
    "encode",
    "expected_counts",
    "generic_sort",
    "geometry",
    "read_table_file",
    "renumber",
    "shuffle",
    "sort_table_file",
    "write_table_file",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"ndpkit.nascent.{module}"), name)
