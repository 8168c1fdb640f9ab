"""Data sets several times larger than memory through LocalExecutor: memory stays flat.

    .venv/bin/python benchmarks/out_of_core.py --dir DIR [--memory-limit 2GiB]
        [--sizes 2GiB 8GiB 16GiB] [--kernels knn8-topk he lc] [--workers 2]

The issue asks that a data set several times larger than RAM run with a peak resident size
independent of its size. Filling this machine's 24 GiB several times over would take
100 GB of disk, so `--memory-limit` (root only) runs the measurements in a memory cgroup of
that size instead (v1, or v2 where the parent group delegates `memory`): its page cache,
worker processes and rows arena all count against the limit, as they would against a
machine of that much memory. Without it, the script measures under whatever limit it runs
in (and says so).

Every app's data set is generated once per size under DIR (kept for later runs, and made
again where a kept one has another device count; delete DIR to free the disk), then run once
through `LocalExecutor` and checked against the reference streamed chunk by chunk
(`verify_streaming`: the same check `ndpkit evaluate --data` makes).
Reported per (kernel, size): the data set over the memory limit, the run's wall time and
rate, the largest worker peak resident size (VmHWM) and resident growth
(`EngineStats.rss_growth_bytes`: what the worker kept of what it read), this process's
peak resident size so far (it generates, runs the host part and verifies: file pages and
the rows arena included) and its anonymous memory with the result held, and at the end the
cgroup's peak usage (page cache included)."""

from __future__ import annotations

import argparse
import os
import platform
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

from ndpkit.kernels import get_kernel
from ndpkit.runtime import Dataset, LocalExecutor, generate_dataset
from ndpkit.runtime.dataset import open_dataset
from ndpkit.runtime.verify import verify_streaming
from ndpkit.units import Kind, parse

MIB = 2**20


def make_cgroup(limit_bytes: int) -> Path:
    """A new memory cgroup limited to `limit_bytes` (v1, else v2); its directory. Exits
    with a message, leaving nothing behind, where none can be made."""
    name = f"ndpkit-out-of-core-{os.getpid()}"
    v1, v2 = Path("/sys/fs/cgroup/memory"), Path("/sys/fs/cgroup")
    if (v1 / "memory.limit_in_bytes").exists():
        group, limit_file = v1 / name, "memory.limit_in_bytes"
    elif "memory" in _words(v2 / "cgroup.subtree_control"):
        group, limit_file = v2 / name, "memory.max"
    else:
        sys.exit(
            "error: --memory-limit: no cgroup hierarchy here gives its groups the memory "
            "controller; run without --memory-limit"
        )
    try:
        group.mkdir()
    except OSError as exc:
        sys.exit(f"error: --memory-limit: cannot make cgroup {group} ({exc.strerror}); run as root")
    try:
        # A real cgroup fills its directory with control files; a plain directory does not.
        if not (group / "cgroup.procs").exists():
            raise OSError(0, "not a cgroup file system")
        (group / limit_file).write_text(str(limit_bytes))
    except OSError as exc:
        group.rmdir()
        sys.exit(f"error: --memory-limit: cannot limit cgroup {group} ({exc.strerror})")
    return group


def _words(path: Path) -> list[str]:
    try:
        return path.read_text().split()
    except OSError:
        return []


def run_in_cgroup(group: Path) -> int:
    """This script again, without --memory-limit, as a process in `group`; then the group
    is removed (a cgroup goes only once its last process, the executor's fork server
    included, has exited). SIGTERM stops the child and removes the group too."""
    argv = [sys.executable, __file__, *sys.argv[1:], "--in-cgroup", str(group)]
    procs = group / "cgroup.procs"
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    try:
        done = subprocess.run(
            argv, check=False, preexec_fn=lambda: procs.write_text(str(os.getpid()))
        )
    finally:
        for _ in range(50):
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)
        else:
            print(f"warning: cgroup {group} is still there; remove it with rmdir", file=sys.stderr)
    if done.returncode < 0:
        killed = signal.Signals(-done.returncode).name
        why = " (the cgroup's OOM killer: raise --memory-limit)" if killed == "SIGKILL" else ""
        print(f"error: the measurement was killed by {killed}{why}", file=sys.stderr)
        return 128 - done.returncode
    return done.returncode


def cgroup_peak_bytes(group: Path | None) -> int | None:
    for name in ("memory.max_usage_in_bytes", "memory.peak"):
        if group is not None and (group / name).exists():
            return int((group / name).read_text())
    return None


def size_or_zero(text: str) -> int:
    """A size (`2GiB`), or 0 written bare."""
    return 0 if text.strip() == "0" else int(parse(text, Kind.SIZE))


def anonymous_bytes() -> int:
    """This process's resident anonymous memory now (Linux), without the page cache and
    shared memory (the rows arena) that its peak resident size includes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    return 0


def kept_dataset(kernel_name: str, size_bytes: int, devices: int, root: Path) -> Dataset:
    """The app's data set of `size_bytes` over `devices` under `root`: the one a former run
    kept, if it is that, else made (again). Kept ones were reused whatever they held: one of
    another --devices, or of another size named alike (1.5MiB beside 1MiB), was measured
    under the header's device count and the size asked for."""
    kernel = get_kernel(kernel_name)
    path = root / f"{kernel_name}-{size_label(size_bytes)}"
    if path.exists():
        ds = open_dataset(path)
        records = size_bytes // kernel.record_bytes
        if (ds.app, ds.devices, ds.records, ds.seed) == (kernel.name, devices, records, 0):
            return ds
        print(f"note: {path} holds another data set; making it again", file=sys.stderr)
    return generate_dataset(kernel, size_bytes, devices, path, seed=0, overwrite=True)


def size_label(size_bytes: int) -> str:
    """`2GiB`-style, in whole MiB where it is one, else in bytes (`1572864B`)."""
    return f"{size_bytes // MIB}MiB" if size_bytes % MIB == 0 else f"{size_bytes}B"


def measure(kernel_name: str, size_bytes: int, args: argparse.Namespace, ex: LocalExecutor) -> str:
    kernel = get_kernel(kernel_name)
    ds = kept_dataset(kernel_name, size_bytes, args.devices, args.dir)
    params = kernel.params(0)
    start = time.perf_counter()
    out = ex.run(kernel, ds, params)
    wall_s = time.perf_counter() - start
    verification = verify_streaming(kernel, ds.chunks, params, out.result)
    assert verification.records == ds.records, "the check did not cover every record"
    peak = max(e.peak_rss_bytes for e in out.engines)
    growth = max(e.rss_growth_bytes for e in out.engines)
    own_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # so far
    anon = anonymous_bytes()  # with the result still held
    over = f"{ds.total_bytes / args.limit_bytes:.1f}×" if args.limit_bytes else "–"
    return (
        f"{kernel_name:<10} {ds.total_bytes / 2**30:7.1f} {over:>9} {wall_s:8.2f} "
        f"{ds.total_bytes / wall_s / 1e9:6.2f} {peak / MIB:10.0f} {growth / MIB:12.1f} "
        f"{own_peak / MIB:12.0f} {anon / MIB:12.0f}  {verification.method}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", type=Path, required=True, help="where the data sets go (kept)")
    parser.add_argument("--memory-limit", help="run in a memory cgroup of this size (root)")
    parser.add_argument("--sizes", nargs="+", default=["2GiB", "8GiB", "16GiB"])
    parser.add_argument("--kernels", nargs="+", default=["knn8-topk", "he", "lc"])
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--mapped-budget", help="kept shard mappings (LocalExecutor's mapped_budget_bytes; 0: off)"
    )
    parser.add_argument("--in-cgroup", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [int(parse(s, Kind.SIZE)) for s in args.sizes]
    args.limit_bytes = int(parse(args.memory_limit, Kind.SIZE)) if args.memory_limit else None
    if args.limit_bytes and args.in_cgroup is None:
        sys.exit(run_in_cgroup(make_cgroup(args.limit_bytes)))
    args.dir.mkdir(parents=True, exist_ok=True)
    where = (
        f"a {args.limit_bytes / 2**30:g} GiB memory cgroup"
        if args.limit_bytes
        else "no cgroup of its own"
    )
    print(
        f"{platform.machine()}, {os.cpu_count()} CPUs, "
        f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.1f} GiB of memory, "
        f"run in {where}; {args.workers} workers, {args.devices} devices, kept mappings: "
        f"{args.mapped_budget or 'default budget'}"
    )
    print(
        "kernel     data GiB  / limit   run (s)   GB/s  worker peak  worker growth"
        "  parent peak  parent anon  check\n"
        + " " * 48
        + "(MiB)        (MiB)        (MiB)        (MiB)"
    )
    budget = None if args.mapped_budget is None else size_or_zero(args.mapped_budget)
    with LocalExecutor(args.workers, mapped_budget_bytes=budget) as ex:
        for kernel_name in args.kernels:
            for size in sizes:
                print(measure(kernel_name, size, args, ex), flush=True)
    peak = cgroup_peak_bytes(args.in_cgroup)
    if peak is not None:
        print(f"the cgroup's peak usage (page cache included): {peak / MIB:.0f} MiB")


if __name__ == "__main__":
    main()
