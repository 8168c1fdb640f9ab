"""NASCENT2's performance and energy model (spec §5.8, §6.5, §7.4, §8.4, §10): one import
for the kernel timing (`ndpkit.nascent.timing`), the system models
(`ndpkit.nascent.system`) and the device parameters (`ndpkit.nascent.devices`).

Models are pure: (device parameters, workload shape, options) → frozen results with a
per-phase breakdown. Nothing here reads a clock or a file except `load_devices`.

Example (spec §13.10: the decoder never reads faster than BW_S2F):
    >>> d = load_devices().fpga("smartssd")
    >>> decode_time(d, 1 << 26, 1, width=4).input_bytes_per_s <= d.s2f_bytes_per_s
    True
"""

from ndpkit.nascent.devices import CpuDevice, DeviceSet, FpgaDevice, load_devices
from ndpkit.nascent.system import (
    Comparison,
    CpuPhases,
    CpuTime,
    GenericSortTime,
    HostTime,
    ModelOptions,
    TableJob,
    TableSortTime,
    compare,
    cpu_time,
    generic_sort_time,
    host_time,
    table_sort_time,
)
from ndpkit.nascent.timing import (
    ChunkCycles,
    DecodeTime,
    ShuffleTime,
    SortTime,
    chunk_cycles,
    decode_time,
    default_lanes,
    pipeline_fill_cycles,
    shuffle_time,
    sort_time,
)

__all__ = [
    "ChunkCycles",
    "Comparison",
    "CpuDevice",
    "CpuPhases",
    "CpuTime",
    "DecodeTime",
    "DeviceSet",
    "FpgaDevice",
    "GenericSortTime",
    "HostTime",
    "ModelOptions",
    "ShuffleTime",
    "SortTime",
    "TableJob",
    "TableSortTime",
    "chunk_cycles",
    "compare",
    "cpu_time",
    "decode_time",
    "default_lanes",
    "generic_sort_time",
    "host_time",
    "load_devices",
    "pipeline_fill_cycles",
    "shuffle_time",
    "sort_time",
    "table_sort_time",
]
