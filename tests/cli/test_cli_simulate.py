"""`ndpkit simulate` and `ndpkit sweep` end to end, through the installed command."""

from __future__ import annotations

import csv
import json
from itertools import pairwise
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ndpkit.errors import SpecError
from ndpkit.hw import load_platform
from ndpkit.model import Configuration, Options
from ndpkit.profile import load_profile
from ndpkit.sim.options import SimOptions
from ndpkit.sim.spec import build_spec

SIMULATION_KEYS = {
    "platform",
    "app",
    "split",
    "engines_total",
    "engines_active",
    "performance_gb_per_s",
    "bottleneck",
    "t_ndp_s",
    "t_cpu_s",
    "time_s",
    "energy_j",
    "ee_mb_per_j",
    "model_time_s",
    "model_energy_j",
    "model_time_basis",
    "time_difference_pct",
    "energy_difference_pct",
    "chunks",
    "events",
    "state_times_s",
    "engines",
    "timeline",
    "sim_options",
    "notes",
}


def simulation(ndpkit, *args: str) -> dict:
    result = ndpkit("simulate", *args, "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["simulation"]


def test_simulate_table_compares_with_the_model(ndpkit) -> None:
    result = ndpkit("simulate", "-p", "rfns", "-a", "knn8")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "knn8 on rfns" in out and "model time basis staged" in out
    for quantity in ("time (s)", "energy (J)", "bottleneck", "ssd utilisation", "engines on"):
        assert quantity in out
    assert "vs the model" in out
    assert "note:" not in result.stderr  # within 1 %: nothing to explain


def test_simulate_json_has_the_estimates_fields_and_agrees(ndpkit) -> None:
    s = simulation(ndpkit, "-p", "rfns", "-a", "knn8")
    assert set(s) >= SIMULATION_KEYS
    assert (s["platform"], s["app"], s["split"]) == ("rfns", "knn8", "device")
    assert s["engines_total"] == s["engines_active"] == 36
    assert s["time_s"] == pytest.approx(s["model_time_s"], rel=0.01)
    assert s["energy_j"] == pytest.approx(s["model_energy_j"], rel=0.01)
    assert s["model_time_basis"] == "staged"  # k-NN's top-k waits for every partial
    assert s["sim_options"]["chunk_bytes"] == 2**20
    # 130 GiB over 36 SSDs in 1 MiB chunks: ceil(3697.78) = 3698 chunks per SSD.
    assert s["chunks"] == 36 * 3698
    assert len(s["engines"]) == 36 and s["notes"] == []


def test_a_host_split_at_the_papers_cns_rate_streams_and_says_so(ndpkit) -> None:
    """--host-mode after on CNS with the papers' LC (a rate that holds its reading) would
    count the transfer twice: the JSON says the run streamed, beside what was asked for."""
    result = ndpkit("simulate", "-p", "cns", "-a", "lc", "--host-mode", "after", "--format", "json")
    assert result.returncode == 0, result.stderr
    s = json.loads(result.stdout)["simulation"]
    assert (s["host_mode"], s["sim_options"]["host_mode"]) == ("stream", "after")
    assert s["model_time_basis"] == "pipeline"
    # the flag as given, as a sweep's note names it (it named SimOptions' host_mode field)
    assert any(note.startswith("--host-mode after not applied:") for note in s["notes"])
    assert s["time_s"] == pytest.approx(s["model_time_s"], rel=0.01)


def test_simulate_writes_a_chrome_trace_atomically(ndpkit, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    s = simulation(ndpkit, "-p", "rfns", "-a", "knn8", "--size", "1 GiB", "--trace", str(out))
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary left
    trace = json.loads(out.read_text(encoding="utf-8"))
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert {e["name"] for e in spans} >= {"read", "compute", "dma", "host part"}
    assert sum(1 for e in spans if e["name"] == "read") == s["chunks"]
    names = {e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M"}
    assert "NDP engines" in names
    assert max(e["ts"] + e["dur"] for e in spans) == pytest.approx(s["time_s"] * 1e6, rel=1e-9)


def test_a_host_split_trace_declares_the_components_it_has(ndpkit, tmp_path: Path) -> None:
    """CNS has no engines: its trace put the `SSD i DMA` tracks under "PCIe uplink (per
    engine DMA)" and declared an empty "NDP engines" process."""
    out = tmp_path / "cns.json"
    simulation(ndpkit, "-p", "cns", "-a", "knn8", "--size", "256 MiB", "--trace", str(out))
    events = json.loads(out.read_text(encoding="utf-8"))["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert "NDP engines" not in processes.values()
    tracks = {(e["pid"], e["args"]["name"]) for e in events if e["name"] == "thread_name"}
    uplink = {pid for pid, name in tracks if name.endswith(" DMA")}
    assert [processes[pid] for pid in uplink] == ["PCIe uplink (per SSD DMA)"]
    # every component declared has a track or a span
    assert set(processes) == {pid for pid, _ in tracks} | {
        e["pid"] for e in events if e["ph"] == "X"
    }


def test_simulate_trace_is_announced_in_table_mode(ndpkit, tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    result = ndpkit("simulate", "-p", "rans", "-a", "he", "--size", "64 MiB", "--trace", str(out))
    assert result.returncode == 0, result.stderr
    assert f"trace: {out}" in result.stderr
    assert json.loads(out.read_text(encoding="utf-8"))["traceEvents"]


def test_simulate_planned_configuration(ndpkit) -> None:
    # The planner keeps 18 of RFNS's 36 engines on for HE under mux-2 (Table 11).
    s = simulation(ndpkit, "-p", "rfns", "-a", "he", "--plan", "planned")
    assert (s["engines_total"], s["engines_active"]) == (36, 18)
    active = [e for e in s["engines"] if e["active"]]
    assert all(e["ssds"] == 2 for e in active)
    assert s["time_s"] == pytest.approx(s["model_time_s"], rel=0.01)


def test_simulate_engine_count(ndpkit) -> None:
    s = simulation(ndpkit, "-p", "rfns", "-a", "he", "--engines", "24")
    assert (s["engines_total"], s["engines_active"]) == (36, 24)
    assert sum(e["ssds"] for e in s["engines"]) == 36


def test_simulate_engine_count_explains_an_uneven_placement(ndpkit) -> None:
    result = ndpkit("simulate", "-p", "rfns", "-a", "knn8", "--engines", "24")
    assert result.returncode == 0, result.stderr
    assert "note: SSD 0 holds 0.0417 of the data" in result.stderr


def test_a_platform_without_engines_runs_the_host_split(ndpkit) -> None:
    """CNS has nothing beside its SSDs: the run is the host split (as the model says), the
    same as `--plan host`, not labelled a device split."""
    default = simulation(ndpkit, "-p", "cns", "-a", "lc")
    host = simulation(ndpkit, "-p", "cns", "-a", "lc", "--plan", "host")
    assert (default["split"], default["engines_active"]) == ("host", 0)
    assert default["time_s"] == host["time_s"] and default["energy_j"] == host["energy_j"]
    table = ndpkit("simulate", "-p", "cns", "-a", "lc")
    assert table.returncode == 0 and "(host split," in table.stdout


def test_simulate_host_plan(ndpkit) -> None:
    s = simulation(ndpkit, "-p", "rfns", "-a", "he", "--plan", "host")
    assert (s["split"], s["engines_active"]) == ("host", 0)
    assert s["model_time_basis"] == "pipeline"
    assert "link_bw_gb_per_s" in s and "ndp_bw_gb_per_s" not in s
    # HE is small (3.4 GiB, 97 chunks of 1 MiB per SSD): fill and drain add 1.0 %.
    assert s["time_s"] == pytest.approx(s["model_time_s"], rel=0.02)
    assert s["time_s"] > s["model_time_s"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("-p", "nosuch", "-a", "knn8"), "unknown platform 'nosuch'"),
        (("-p", "rfns", "-a", "nosuch"), "unknown app 'nosuch'"),
        (("-p", "rfns", "-a", "knn8", "--chunk", "1 furlong"), "--chunk: '1 furlong'"),
        (("-p", "rfns", "-a", "knn8", "--size", "-3GiB"), "--size: must be at least 1 byte"),
        (
            ("-p", "rfns", "-a", "knn8", "--size", "4Gib"),  # pint: gibibarns
            "--size: '4Gib' is not a size (expected a unit like '500 GB'); did you mean "
            "'4 Gibit' or '4 GiB'? (b is a bit, B a byte)",
        ),
        (
            ("-p", "rfns", "-a", "knn8", "--size", "\uff12 MiB"),  # a full-width 2
            "error: command line: --size: '\uff12 MiB' is not a size: write its number in "
            "the digits 0-9",
        ),
        (("-p", "rfns", "-a", "knn8", "--size", "1_0 MiB"), "'_' has no place in a number"),
        (("-p", "rfns", "-a", "knn8", "--chunk", "1 mB"), "did you mean '1 MB'?"),
        (("-p", "rfns", "-a", "knn8", "--size", "2**3 GiB"), "never numbers"),
        (("-p", "rfns", "-a", "knn8", "--plan", "bogus"), "--plan: must be one of"),
        (("-p", "rfns", "-a", "knn8", "--engines", "5"), "5 engines cannot serve 36 SSDs"),
        (("-p", "rfns", "-a", "knn8", "--engines", "1"), "1 engine cannot serve 36 SSDs"),
        (
            ("-p", "rfns", "-a", "knn8", "--engines", "24", "--plan", "planned"),
            "command line: --engines: give --plan or --engines, not both",
        ),
        (("-p", "risp-64ch", "-a", "sobel"), "is in-storage"),
        (
            ("-p", "rfns", "-a", "he", "--trace", "/nonexistent/dir/t.json"),
            "--trace: cannot write '/nonexistent/dir/t.json': no directory '/nonexistent/dir'",
        ),
        (("-p", "rfns", "-a", "he", "--buffer", "0"), "--buffer: must be at least 1"),
        (("-p", "rfns", "-a", "he", "--cv", "2"), "--cv: must be in [0, 1/sqrt(3) = 0.5774]"),
        (("-p", "rfns", "-a", "he", "--cv", "0.5774"), "--cv: must be in"),
        (("-p", "rfns", "-a", "he", "--seed", "-1"), "--seed: must be in [0, 2^64)"),
        (
            ("-p", "rfns", "-a", "knn8", "-o", "wall_times=printed"),
            "--option wall_times: the simulator times each engine from its rate",
        ),
        # Too many chunks blames the flags that make them, not "simulator:".
        (
            ("-p", "rfns", "-a", "he", "--chunk", "1B"),
            "error: command line: --chunk: 3.65e+09 chunks of 1 B is more than 100,000,000",
        ),
        (
            ("-p", "rfns", "-a", "he", "--size", "1EiB"),
            "error: command line: --chunk, --size: 1.1e+12 chunks of 1,048,576 B is more",
        ),
    ],
)
def test_simulate_bad_input_exits_2(ndpkit, args: tuple[str, ...], needle: str) -> None:
    result = ndpkit("simulate", *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert needle in result.stderr
    assert result.stderr.startswith("error: ")
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_simulate_accepts_the_largest_jitter(ndpkit) -> None:
    """1/sqrt(3) is the exact bound (a service time's factor reaches 0), not 0.57."""
    s = simulation(ndpkit, "-p", "rfns", "-a", "he", "--size", "1 GiB", "--cv", "0.5773502")
    assert s["sim_options"]["service_cv"] == 0.5773502


@pytest.mark.parametrize(
    "args",
    [
        ("-p", "cns", "-a", "knn8"),  # 36 host cores behind the link
        ("-p", "rfns", "-a", "knn8", "--plan", "host"),
        ("-p", "rfns", "-a", "knn8", "--host-mode", "stream"),
    ],
    ids=["cns-knn8", "rfns-knn8-host", "rfns-knn8-stream"],
)
def test_trace_tracks_are_labelled_and_never_overlap(
    ndpkit, tmp_path: Path, args: tuple[str, ...]
) -> None:
    """At 2 GiB a host core takes a chunk of an SSD while another core still works on that
    SSD's previous one: filed under the SSD, their spans overlapped (432 pairs)."""
    out = tmp_path / "t.json"
    s = simulation(ndpkit, *args, "--size", "2 GiB", "--trace", str(out))
    events = json.loads(out.read_text(encoding="utf-8"))["traceEvents"]
    tracks: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for e in events:
        if e["ph"] == "X":
            tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for track, spans in tracks.items():
        spans.sort()
        for (_, end), (start, _) in pairwise(spans):
            assert start >= end - 1e-9 * end, (track, end, start)
    labels = {(e["pid"], e["tid"]) for e in events if e.get("name") == "thread_name"}
    assert set(tracks) <= labels
    assert s["trace_dropped_events"] == 0


@pytest.mark.parametrize("command", ["simulate", "sweep"])
def test_an_unroutable_engine_count_names_the_flag(ndpkit, command: str) -> None:
    args = ("-p", "rfns", "-a", "he") if command == "simulate" else ("--platforms", "rfns")
    result = ndpkit(command, *args, "--engines", "5")
    assert result.returncode == 2
    assert "--engines" in result.stderr


SWEEP = ("sweep", "--platforms", "rans", "--apps", "he", "--engines", "18,36")


def test_sweep_writes_csv(ndpkit, tmp_path: Path) -> None:
    out = tmp_path / "x.csv"
    result = ndpkit(*SWEEP, "--chunks", "1 MiB", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "wrote 2 rows" in result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["x.csv"]
    with out.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["platform"], r["app"], r["engines_on"]) for r in rows] == [
        ("rans", "he", "18"),
        ("rans", "he", "36"),
    ]
    for row in rows:
        assert float(row["chunk_bytes"]) == 2**20
        assert float(row["time_s"]) == pytest.approx(float(row["model_time_s"]), rel=0.01)


def test_sweep_writes_parquet(ndpkit, tmp_path: Path) -> None:
    out = tmp_path / "x.parquet"
    result = ndpkit(*SWEEP, "--chunks", "1 MiB,4 MiB", "--out", str(out), "--workers", "2")
    assert result.returncode == 0, result.stderr
    table = pq.read_table(out)
    assert table.num_rows == 4
    rows = table.to_pylist()
    # Grid order: chunk sizes outer, engine counts inner, whatever order threads finish.
    assert [(r["chunk_bytes"], r["engines_on"]) for r in rows] == [
        (2**20, 18),
        (2**20, 36),
        (4 * 2**20, 18),
        (4 * 2**20, 36),
    ]
    assert {"time_s", "model_time_s", "energy_j", "bottleneck", "events"} <= set(table.column_names)
    assert [p.name for p in tmp_path.iterdir()] == ["x.parquet"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--engines", "1:x"), "--engines: expected '18,27,36' or 'start:stop[:step]'"),
        (("--out", "x.txt"), "--out: must end in .csv or .parquet"),
        (("--chunks", "1 furlong"), "--chunks: '1 furlong'"),
        (
            ("--platforms", "rans,risp-64ch"),
            "command line: --platforms: risp-64ch is in-storage (cells per flash channel): the "
            "simulator models NDP servers; in-storage platforms are not swept",
        ),
        (("--workers", "0"), "--workers: must be at least 1"),
        (("--chunks", "1B"), "command line: --chunks: rans, he: 3.65e+09 chunks of 1 B is more"),
        (("-o", "wall_times=printed"), "--option wall_times: the simulator times each engine"),
        (("--size", "1EiB"), "command line: --chunks, --size: rans, he: 1.1e+12 chunks of"),
    ],
)
def test_sweep_bad_input_exits_2(
    ndpkit, tmp_path: Path, args: tuple[str, ...], needle: str
) -> None:
    args = tuple(str(tmp_path / a) if a == "x.txt" else a for a in args)
    result = ndpkit("sweep", "--platforms", "rans", "--apps", "he", "--chunks", "1 MiB", *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert needle in result.stderr
    assert "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args", [("--engines", "36:18"), ("--apps", " "), ("--chunks", ",")], ids=str
)
def test_sweep_over_nothing_exits_2(ndpkit, args: tuple[str, ...]) -> None:
    base = {"--platforms": "rans", "--apps": "he", "--chunks": "1 MiB"}
    base.update(dict(zip(args[::2], args[1::2], strict=True)))
    flat = [part for item in base.items() for part in item]
    if "--engines" not in base:
        flat += ["--engines", "18"]
    result = ndpkit("sweep", *flat)
    assert result.returncode == 2, result.stdout
    assert args[0] in result.stderr


def test_a_logged_sweep_leaves_stderr_empty(ndpkit) -> None:
    """Eight points or more get a progress bar in a terminal; in a log, rich would leave an
    empty line where the bar was."""
    result = ndpkit(
        "sweep", "--platforms", "rfns", "--apps", "he,lc", "--engines", "18,20,22,24",
        "--chunks", "1 MiB",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


@pytest.mark.parametrize(
    "args",
    [
        ("simulate", "-p", "cns", "-a", "he", "--mux-port-cap"),
        ("simulate", "-p", "rfns", "-a", "he", "--plan", "host", "--mux-port-cap"),
        ("sweep", "--platforms", "cns", "--apps", "he", "--mux-port-cap"),
    ],
    ids=["no-port-bandwidth", "host-split", "sweep-nowhere"],
)
def test_mux_port_cap_that_changes_nothing_exits_2(ndpkit, args: tuple[str, ...]) -> None:
    result = ndpkit(*args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "--mux-port-cap: changes nothing" in result.stderr
    assert "Traceback" not in result.stderr


def test_sweep_mux_port_cap_is_kept_where_one_platform_has_ports(ndpkit, tmp_path: Path) -> None:
    out = tmp_path / "x.csv"
    result = ndpkit(
        "sweep", "--platforms", "cns,rfns", "--apps", "he", "--engines", "36",
        "--chunks", "4 MiB", "--mux-port-cap", "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert out.exists()


def test_a_port_note_is_in_the_reports_gb(ndpkit, tmp_path: Path) -> None:
    """The table's GB is binary by default: a 1 GiB/s port is 1 GB/s there, 1.07 with
    `--units decimal` (the note divided by 1e9 whatever the units, 1.07 under binary)."""
    path = tmp_path / "p1.toml"
    path.write_text(
        'version = 1\nextends = "rans"\nname = "p1"\n[engines]\nlink_bandwidth = "1 GiB/s"\n'
    )
    for units, shown in (("binary", "1 GB/s"), ("decimal", "1.07 GB/s")):
        result = ndpkit(
            "simulate", "-p", str(path), "-a", "he", "--engines", "27", "--units", units
        )
        assert result.returncode == 0, result.stderr
        assert f"(engines.link_bandwidth, {shown}), slower than they produce" in result.stderr
    # CSV's rows have no place for the notes: they go to stderr, as the table's do.
    csv_run = ndpkit("simulate", "-p", str(path), "-a", "he", "--engines", "27", "-f", "csv")
    assert "note: 27 engines send through their own ports" in csv_run.stderr
    assert "note:" not in csv_run.stdout


def test_a_host_with_more_cores_than_the_simulator_follows_is_refused(
    ndpkit, tmp_path: Path
) -> None:
    """A legal platform (the model takes it): 65536 x 65536 cores aborted the simulator
    with a Rust allocation failure (exit 134, no message)."""
    path = tmp_path / "cores.toml"
    path.write_text(
        'version = 1\nextends = "rans"\nname = "cores"\n'
        "[host]\ncores_per_socket = 65536\nsockets = 65536\n"
    )
    assert ndpkit("estimate", "-p", str(path), "-a", "knn8").returncode == 0
    result = ndpkit("simulate", "-p", str(path), "-a", "knn8", "--size", "1 GiB")
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        "error: platform cores: host.cores_per_socket: the simulator follows every host "
        "core, at most 65,536; this host has 65,536 sockets x 65,536\n"
    )


def test_the_larger_factor_of_too_many_host_cores_is_named() -> None:
    platform = load_platform("rans")
    host = platform.host.model_copy(update={"sockets": 65536, "cores_per_socket": 2})
    many = platform.model_copy(update={"host": host})
    with pytest.raises(SpecError) as caught:
        build_spec(many, load_profile("he"), Configuration(), Options(), SimOptions())
    assert caught.value.field == "host.sockets"


@pytest.mark.parametrize("units", ["binary", "decimal"])
def test_simulate_and_sweep_json_say_which_gb_they_use(ndpkit, units: str) -> None:
    """The table's last line names its GB; the JSON said nothing, so `--units decimal`
    gave GB/s and MB/J a program could not tell from binary ones (estimate's JSON has
    `units`)."""
    result = ndpkit("simulate", "-p", "rans", "-a", "he", "--units", units, "-f", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["units"] == units
    gb = 2**30 if units == "binary" else 10**9
    s = document["simulation"]
    assert s["performance_gb_per_s"] == pytest.approx(s["time_s"] ** -1 * 3.4 * 2**30 / gb)
    result = ndpkit(
        "sweep", "--platforms", "rans", "--apps", "he", "--engines", "36", "--chunks", "1 MiB",
        "-o", f"units={units}", "-f", "json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["units"] == units
    row = document["sweep"][0]
    mb = 2**20 if units == "binary" else 10**6
    assert row["ee_mb_per_j"] == pytest.approx(row["data_bytes"] / mb / row["energy_j"])


@pytest.mark.parametrize("units, gb", [(None, 2**30), ("decimal", 10**9)])
def test_simulate_json_says_which_gb_its_bandwidths_use(ndpkit, units, gb) -> None:
    """`--units` changes every *_gb_per_s and MB/J of the JSON, so the document says which
    it used, as `estimate -f json` does; without it a program could not tell 108 GiB/s from
    115.96 GB/s."""
    args = ["simulate", "-p", "rfns", "-a", "he", "-f", "json"]
    result = ndpkit(*args, *(["--units", units] if units else []))
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["units"] == (units or "binary")
    assert doc["simulation"]["ssd_bw_gb_per_s"] == pytest.approx(36 * 3 * 2**30 / gb)
