"""What a memory-limited cgroup leaves to this process (`transfer._cgroup_room_bytes`), read
from a fake /proc/self/cgroup and cgroup tree laid out as Linux lays them out."""

from __future__ import annotations

from pathlib import Path

import pytest

from ndpkit.runtime.transfer import _cgroup_room_bytes

GIB = 2**30


def _v1(tmp_path: Path, limit: int, usage: int, stat: str | None) -> tuple[Path, Path]:
    group = tmp_path / "sys" / "memory" / "job"
    group.mkdir(parents=True)
    (group / "memory.limit_in_bytes").write_text(f"{limit}\n")
    (group / "memory.usage_in_bytes").write_text(f"{usage}\n")
    if stat is not None:
        (group / "memory.stat").write_text(stat)
    proc = tmp_path / "cgroup"
    # A hybrid machine: v1 hierarchies, then the v2 one (mounted elsewhere, without memory).
    proc.write_text("5:devices:/\n4:memory:/job\n1:cpu:/\n0::/\n")
    return proc, tmp_path / "sys"


def _v2(tmp_path: Path, limit: str, usage: int, stat: str) -> tuple[Path, Path]:
    group = tmp_path / "sys" / "job"
    group.mkdir(parents=True)
    (group / "memory.max").write_text(f"{limit}\n")
    (group / "memory.current").write_text(f"{usage}\n")
    (group / "memory.stat").write_text(stat)
    proc = tmp_path / "cgroup"
    proc.write_text("0::/job\n")
    return proc, tmp_path / "sys"


def test_clean_page_cache_counts_as_room_v1(tmp_path: Path) -> None:
    """After an 8 GiB data set is written under a 2 GiB limit the cgroup is full of its page
    cache; clean pages are room, dirty ones are not (the figures of such a run here)."""
    stat = (
        "cache 2023014400\nrss 0\ndirty 1073848320\n"
        "total_dirty 1073848320\ntotal_writeback 0\n"
        "total_inactive_file 1994915840\ntotal_active_file 28098560\n"
        "inactive_file 1\nactive_file 1\n"  # this group's own: the totals are what count
    )
    usage = 2074968064
    proc, root = _v1(tmp_path, 2 * GIB, usage, stat)
    want = 2 * GIB - usage + (1994915840 + 28098560 - 1073848320)
    assert _cgroup_room_bytes(proc, root) == want
    assert 1.0e9 < want < 1.1e9  # not the 4 KiB that limit − usage left


def test_clean_page_cache_counts_as_room_v2(tmp_path: Path) -> None:
    stat = "anon 104857600\nfile 943718400\nactive_file 314572800\ninactive_file 629145600\n"
    stat += "file_dirty 104857600\nfile_writeback 4096\n"
    proc, root = _v2(tmp_path, str(GIB), GIB - 4096, stat)
    assert _cgroup_room_bytes(proc, root) == 4096 + 314572800 + 629145600 - 104857600 - 4096


def test_room_never_exceeds_the_limit_nor_falls_below_zero(tmp_path: Path) -> None:
    # Figures read at different moments can disagree: the answer stays within [0, limit].
    proc, root = _v1(
        tmp_path, GIB, GIB // 2, "total_inactive_file 4294967296\ntotal_active_file 0\n"
    )
    assert _cgroup_room_bytes(proc, root) == GIB
    (root / "memory" / "job" / "memory.usage_in_bytes").write_text(f"{2 * GIB}\n")
    (root / "memory" / "job" / "memory.stat").write_text("total_dirty 4294967296\n")
    assert _cgroup_room_bytes(proc, root) == 0


def test_without_memory_stat_room_is_limit_less_usage(tmp_path: Path) -> None:
    proc, root = _v1(tmp_path, GIB, GIB // 4, None)
    assert _cgroup_room_bytes(proc, root) == GIB - GIB // 4


@pytest.mark.parametrize("limit", ["max", str(2**63 - 4096)])
def test_no_limit_is_none(tmp_path: Path, limit: str) -> None:
    proc, root = _v2(tmp_path, limit, GIB, "")
    assert _cgroup_room_bytes(proc, root) is None


def test_no_memory_controller_is_none(tmp_path: Path) -> None:
    proc = tmp_path / "cgroup"
    proc.write_text("1:cpu:/\n0::/\n")  # the v2 line names a group with no memory files
    assert _cgroup_room_bytes(proc, tmp_path) is None
    assert _cgroup_room_bytes(tmp_path / "missing", tmp_path) is None


def test_a_hybrid_machines_v2_line_first_does_not_hide_the_v1_limit(tmp_path: Path) -> None:
    proc, root = _v1(tmp_path, GIB, GIB // 4, None)
    proc.write_text("0::/\n4:memory:/job\n")
    assert _cgroup_room_bytes(proc, root) == GIB - GIB // 4


@pytest.mark.parametrize("version", [1, 2])
def test_a_parents_limit_binds_too(tmp_path: Path, version: int) -> None:
    """A container's limit on the parent group, this process in an unlimited group below."""
    if version == 1:
        proc, root = _v1(tmp_path, 2**63 - 4096, GIB, "")  # "job": no limit of its own
        child_dir, limit, usage = (
            root / "memory" / "job" / "task",
            "memory.limit_in_bytes",
            "memory.usage_in_bytes",
        )
        parent_dir = root / "memory" / "job"
        proc.write_text("4:memory:/job/task\n")
    else:
        proc, root = _v2(tmp_path, "max", GIB, "")
        child_dir, limit, usage = root / "job" / "task", "memory.max", "memory.current"
        parent_dir = root / "job"
        proc.write_text("0::/job/task\n")
    child_dir.mkdir()
    (child_dir / limit).write_text("max\n" if version == 2 else f"{2**63 - 4096}\n")
    (child_dir / usage).write_text(f"{GIB // 2}\n")
    (parent_dir / limit).write_text(f"{2 * GIB}\n")
    (parent_dir / usage).write_text(f"{GIB + GIB // 2}\n")
    assert _cgroup_room_bytes(proc, root) == GIB // 2
    (child_dir / limit).write_text(f"{GIB}\n")  # a tighter limit of its own wins
    assert _cgroup_room_bytes(proc, root) == GIB // 2
    (child_dir / limit).write_text(f"{GIB // 4 * 3}\n")
    assert _cgroup_room_bytes(proc, root) == GIB // 4
