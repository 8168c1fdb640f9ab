"""The `ndpkit` command end to end: outputs, formats, and every bad-input case (exit 2)."""

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ndpkit.cli.platforms import unpriced_host, unshipped_apps
from ndpkit.errors import ModelError
from ndpkit.hw import load_platform
from ndpkit.model import estimate
from ndpkit.profile import load_profile

APPS = {"lc", "he", "fft2d", "knn2", "knn6", "knn8"}


def test_help_lists_commands(ndpkit) -> None:
    result = ndpkit("--help")
    assert result.returncode == 0
    for command in ("estimate", "plan", "reproduce", "platforms"):
        assert command in result.stdout


def test_reproduce_json_has_all_seven_tables(ndpkit) -> None:
    result = ndpkit("reproduce", "rans-rfns", "--format", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert {"3", "4", "5", "7", "8", "9", "11"} <= set(doc["tables"])
    assert doc["options"]["energy_form"] == "A"
    assert doc["units"]["mb_bytes"] == 2**20
    table11 = {(r["server"], r["app"]): r for r in doc["tables"]["11"]}
    assert {app for _, app in table11} == APPS
    he = table11["rfns", "he"]
    assert (he["nane"], he["nane_mux2"], he["inactive"]) == (13, 18, 18)
    assert he["net_saving_j"] == pytest.approx(11.15, abs=0.01)
    cns_lc = next(r for r in doc["tables"]["5"] if (r["server"], r["app"]) == ("cns", "lc"))
    assert cns_lc["energy_j"] == pytest.approx(601.43, abs=0.005)
    lc = next(r for r in doc["tables"]["4"] if (r["server"], r["app"]) == ("rans", "lc"))
    assert lc["cpu_bw_gb_per_s"] == "inf"  # JSON has no infinity


def test_reproduce_options_change_the_numbers(ndpkit) -> None:
    a = json.loads(ndpkit("reproduce", "rans-rfns", "-f", "json", "--tables", "5,9").stdout)
    b = json.loads(
        ndpkit(
            "reproduce",
            "rans-rfns",
            "-f",
            "json",
            "--tables",
            "5,9",
            "--energy-form",
            "B",
            "--units",
            "decimal",
        ).stdout
    )
    assert list(b["tables"]) == ["5", "9"]
    assert b["options"]["energy_form"] == "B" and b["units"]["mb_bytes"] == 10**6

    def row(doc: dict, table: str, server: str, app: str) -> dict:
        return next(r for r in doc["tables"][table] if (r["server"], r["app"]) == (server, app))

    # Table 5 always shows both forms; units only change MB/J (1 MiB = 1.048576 MB).
    knn_a, knn_b = row(a, "5", "rans", "knn2"), row(b, "5", "rans", "knn2")
    assert knn_a["energy_j"] == knn_b["energy_j"]
    assert knn_a["energy_form_b_j"] < knn_a["energy_j"]
    assert knn_b["ee_mb_per_j"] == pytest.approx(knn_a["ee_mb_per_j"] * 2**20 / 10**6)
    # CNS is P_active x T in both forms, so only k-NN (host stage) changes Table 9's EE ratio.
    assert row(a, "5", "cns", "lc")["energy_form_b_j"] == row(a, "5", "cns", "lc")["energy_j"]
    assert row(a, "9", "rans", "knn2")["ee_ratio"] < row(b, "9", "rans", "knn2")["ee_ratio"]
    assert row(a, "9", "rans", "lc")["ee_ratio"] == pytest.approx(
        row(b, "9", "rans", "lc")["ee_ratio"]
    )


def test_reproduce_csv(ndpkit) -> None:
    result = ndpkit("reproduce", "rans-rfns", "--format", "csv", "--tables", "10,11")
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert {r["table"] for r in rows} == {"10", "11"}
    assert [r["active_engines"] for r in rows if r["table"] == "10"][1] == "[0, 1, 2, 4, 6]"


def test_reproduce_table_output_for_people(ndpkit) -> None:
    result = ndpkit("reproduce", "rans-rfns", "--tables", "11")
    assert result.returncode == 0
    assert "Table 11" in result.stdout and "48.04" in result.stdout
    assert "planning" in result.stderr  # progress goes to stderr, data to stdout


def test_plan_prints_plan_and_saving(ndpkit) -> None:
    result = ndpkit("plan", "--platform", "rfns", "--app", "he")
    assert result.returncode == 0, result.stderr
    assert "18 / 18" in result.stdout and "improvement (%)" in result.stdout


def test_plan_optimal_json(ndpkit) -> None:
    result = ndpkit(
        "plan", "-p", "rfns", "-a", "knn2", "--optimal", "--tolerance", "0.1", "--format", "json"
    )
    doc = json.loads(result.stdout)
    assert doc["plan"]["method"].startswith("optimal")
    best = max(c["performance_gb_per_s"] for c in doc["candidates"])
    planned = next(
        c
        for c in doc["candidates"]
        if c["engines_active"] == doc["plan"]["engines_on"] and c["split"] == doc["plan"]["split"]
    )
    assert planned["performance_gb_per_s"] >= best / 1.1 - 1e-9


def test_estimate_all_formats(ndpkit) -> None:
    table = ndpkit("estimate", "-p", "rans", "-a", "lc")
    assert table.returncode == 0 and "bottleneck" in table.stdout
    doc = json.loads(ndpkit("estimate", "-p", "rans", "-a", "lc", "-f", "json").stdout)
    assert doc["estimate"]["bottleneck"] == "ndp"
    assert doc["units"] == "binary"  # RANS/RFNS GB = 2^30 B; RISP's are decimal
    risp = json.loads(ndpkit("estimate", "-p", "risp-64ch", "-a", "sobel", "-f", "json").stdout)
    assert risp["units"] == "decimal"
    rows = list(
        csv.DictReader(io.StringIO(ndpkit("estimate", "-p", "cns", "-a", "he", "-f", "csv").stdout))
    )
    assert any(r["quantity"] == "bottleneck" and r["value"] == "cpu" for r in rows)


def test_estimate_with_fewer_engines_notes_imbalance(ndpkit) -> None:
    result = ndpkit("estimate", "-p", "rans", "-a", "he", "--engines", "20")
    assert result.returncode == 0
    assert "serves 2 SSDs" in result.stderr


def test_platforms_list_show_check(ndpkit, tmp_path: Path) -> None:
    listing = json.loads(ndpkit("platforms", "list", "-f", "json").stdout)
    assert {r["name"] for r in listing["tables"]["platforms"]} >= {"cns", "rans", "rfns"}
    shown = ndpkit("platforms", "show", "rfns")
    assert "20.65 W" in shown.stdout and "36 GiB/s" in shown.stdout
    assert json.loads(ndpkit("platforms", "show", "cns", "-f", "json").stdout)["name"] == "cns"
    good = tmp_path / "mine.toml"
    good.write_text('extends = "rans"\nname = "mine"\n')
    checked = ndpkit("platforms", "check", str(good))
    assert checked.returncode == 0 and checked.stdout.startswith("ok:")


def test_check_reads_a_dot_slash_name_as_a_file_not_a_preset(tmp_path: Path) -> None:
    """`./rans` is a file in the current directory, even where a preset has its name."""

    def check(name: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(Path(sys.executable).parent / "ndpkit"), "platforms", "check", name],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={"NO_COLOR": "1", "COLUMNS": "200", "PATH": "/usr/bin:/bin"},
            timeout=120,
            check=False,
        )

    missing = check("./rans")
    assert missing.returncode == 2 and "./rans" in missing.stderr
    assert "file not found" in missing.stderr and missing.stdout == ""
    (tmp_path / "rans").write_text('extends = "rfns"\nname = "mine"\n')
    found = check("./rans")
    assert found.returncode == 0 and found.stdout.startswith("ok: ./rans: platform 'mine'")
    (tmp_path / "rans").unlink()
    assert check("rans").stdout.startswith("ok: rans: platform 'rans'")  # the preset


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("name = \n", "malformed TOML"),
        ('extends = "rans"\n[host]\npower_idle = "-1 W"\n', "host.power_idle: must not be"),
        ('extends = "rans"\n[storage]\nread_bandwidth = "0 GB/s"\n', "storage.read_bandwidth"),
        ('extends = "rans"\n[host_link]\nbandwidth = "36 GBs"\n', "unknown unit"),
        ('extends = "rans"\n[switch_layer]\nscheme = "mux37"\n', "spans 37 devices"),
        ('extends = "rnas"\n', "unknown platform 'rnas'"),
        ('extends = "rans"\n[storage]\ncount = 36\nsize = "1 TB"\n', "storage.size: unknown"),
        (
            'extends = "rans"\n[engines]\nkind = "arm"\n[host]\nsockets = 2\nfrequency = 3\n',
            "host.frequency: expected a quantity with a unit",
        ),
    ],
)
def test_bad_platform_file_exits_2_naming_file_and_field(
    ndpkit, tmp_path: Path, body: str, expected: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(body)
    result = ndpkit("platforms", "check", str(path))
    assert result.returncode == 2
    assert expected in result.stderr
    if "unknown platform" not in expected:
        assert str(path) in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("platforms", "show", "rfnz"), "unknown platform 'rfnz'"),
        (("platforms", "check", "/nonexistent/x.toml"), "file not found"),
        (("plan", "-p", "rfns", "-a", "knn9"), "unknown app 'knn9'"),
        (("plan", "-p", "cns", "-a", "he"), "no engines"),
        (("plan", "-p", "rfns", "-a", "he", "--energy-form", "C"), "--energy-form: must be one"),
        (("plan", "-p", "rfns", "-a", "he", "--scheme", "mux99"), "spans 99 devices"),
        (("plan", "-p", "rfns", "-a", "he", "--optimal", "--tolerance", "-1"), "tolerance"),
        (
            ("estimate", "-p", "rans", "-a", "he", "--engines", "3"),
            "--engines: mux2 over 36 SSDs can run 18..36",
        ),
        (("estimate", "-p", "rans", "-a", "he", "--split", "both"), "--split"),
        (
            ("estimate", "-p", "rans", "-a", "knn8", "--energy-form", "A", "-o", "energy_form=B"),
            "--option energy_form=B: energy_form is already set by --energy-form",
        ),
        (
            ("estimate", "-p", "rans", "-a", "knn8", "-o", "units=binary", "-o", "units=decimal"),
            "units is already set by --option units",
        ),
        (("simulate", "-p", "rans", "-a", "he", "-o", "time_basis=paper"), "its host mode shares"),
        (("reproduce", "no-such-paper"), "unknown paper 'no-such-paper'"),
        (("reproduce", "rans-rfns", "--tables", "12"), "--tables: unknown table '12'"),
        (("reproduce", "rans-rfns", "--tables", ","), "--tables: names no table"),
        (("reproduce", "risp", "--tables", ""), "--tables: names no table"),
        (("reproduce", "risp", "--tables", "E4,E4"), "--tables: names E4 more than once"),
        (("reproduce", "rans-rfns", "--tables", "9,,11"), "--tables: '9,,11' has an empty"),
        (("plan", "-p", "risp-64ch", "-a", "sobel", "--power-budget", "-3 W"), "--power-budget"),
        (("estimate", "-p", "risp-64ch", "-a", "sobel", "--channels", "65537"), "--channels: "),
        (("estimate", "-p", "risp-64ch", "-a", "sobel", "--interface", "sata9"), "--interface: "),
        (
            ("estimate", "-p", "risp-64ch", "-a", "sobel", "--cell-clock-mhz", "1e30"),
            "at most 1e+18",
        ),
        # "must be from 1e-30 to 1e+18" for 0 MHz
        (("plan", "-p", "risp-64ch", "-a", "sobel", "--cell-clock-mhz", "0"), "clock above 0 MHz"),
        (("reproduce", "rans-rfns", "--units", "GiB"), "units: must be one of"),
        (("estimate", "-p", "rans", "-a", "he", "--profiles", "/nope.toml"), "/nope.toml"),
        (("plan", "-p", "rfns", "-a", "he", "--format", "yaml"), "yaml"),
    ],
)
def test_bad_arguments_exit_2(ndpkit, args: tuple[str, ...], expected: str) -> None:
    result = ndpkit(*args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert expected in result.stderr
    assert "Traceback" not in result.stderr


def test_engines_without_any_rate_entry_are_said_to_have_none(tmp_path: Path) -> None:
    """A first platform file whose engines list no app read 'its arm engines have entries for
    none', as if an app were named 'none'."""
    path = tmp_path / "bare.toml"
    path.write_text(_POWERLESS_HOST + '[engines]\nkind = "arm"\ncount = 4\npower_active = "5 W"\n')
    with pytest.raises(ModelError) as caught:
        estimate(load_platform(path), load_profile("lc"))
    assert "its arm engines have no rate entries, and apps.lc has no arm" in str(caught.value)


def test_engine_without_throughput_for_app(ndpkit, tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('[apps.scan]\ndata_size = "1 TB"\nalpha = 10\n')
    result = ndpkit("estimate", "-p", "rans", "-a", "scan", "--profiles", str(path))
    assert result.returncode == 2
    assert "platform 'rans': no engine rate for app 'scan'" in result.stderr
    assert "apps.scan has no arm measurement" in result.stderr
    assert "engines.throughput.scan" in result.stderr and "engine = { arm" in result.stderr


_SIM = ("--chunk", "1 MiB", "--size", "1 GiB")
_CHUNKS = ("--chunks", "1 MiB", "--size", "1 GiB")


@pytest.mark.parametrize(
    "command",
    [
        ("estimate", "-p", "{platform}", "-a", "scan"),
        ("plan", "-p", "{platform}", "-a", "scan"),
        ("plan", "-p", "{platform}", "-a", "scan", "--scheme", "mux2"),  # a copy of the file's
        ("plan", "-p", "{platform}", "-a", "scan", "--optimal"),
        ("simulate", "-p", "{platform}", "-a", "scan", *_SIM),
        ("sweep", "--platforms", "{platform}", "--apps", "scan", "--engines", "36", *_CHUNKS),
    ],
)
@pytest.mark.parametrize("platform", ["rans", "mine.toml"])
def test_no_engine_rate_names_the_profile_file_and_the_platform_file(
    ndpkit, tmp_path: Path, command: tuple[str, ...], platform: str
) -> None:
    """The error said "the platform" and "the profile", naming neither file: the profile
    file's table and field lead, and the platform's file is named, or (a preset) a file of
    one's own that extends it."""
    profiles = tmp_path / "p.toml"
    profiles.write_text('[apps.scan]\ndata_size = "1 TB"\nalpha = 10\n')
    mine = tmp_path / "mine.toml"
    mine.write_text('extends = "rans"\nname = "mine"\n')
    given = str(mine) if platform == "mine.toml" else platform
    args = [a.replace("{platform}", given) for a in command]
    result = ndpkit(*args, "--profiles", str(profiles))
    assert result.returncode == 2, result.stdout
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("error: ")]
    assert line.startswith(f"error: {profiles}: apps.scan.engine: platform "), line
    assert line.endswith(f'engine = {{ arm = "…" }} to apps.scan in {profiles}'), line
    if platform == "rans":
        fix = "to the platform (a file of your own that extends 'rans')"
    else:
        fix = f"engines.bytes_per_cycle.scan to {mine},"
    assert fix in line


def test_no_host_only_rate_names_the_profile_file(ndpkit, tmp_path: Path) -> None:
    """CNS's error for a profile without host_only named the field, not the file."""
    profiles = tmp_path / "p.toml"
    profiles.write_text('[apps.scan]\ndata_size = "1 TB"\nalpha = 10\n')
    for command in (("estimate",), ("simulate", *_SIM)):
        result = ndpkit(*command, "-p", "cns", "-a", "scan", "--profiles", str(profiles))
        assert result.returncode == 2, result.stdout
        head = f"error: {profiles}: apps.scan.host_only: profile 'scan' has no host-only rate"
        assert result.stderr.startswith(head), result.stderr


_NO_CLOCK_CELLS = """extends = "risp-baseline"
name = "norc"
[engines]
kind = "fpga"
placement = "channel"
count = 64
throughput = { sobel = "1 GB/s" }
power_active = "30 mW"
[public_cell]
power_active = "1.358 W"
power_idle = "24 mW"
"""


@pytest.mark.parametrize("command", ["estimate", "plan"])
@pytest.mark.parametrize("needs", ["fpga_cell", "pipeline_delay"])
def test_missing_cell_clock_names_the_platform_file(
    ndpkit, tmp_path: Path, command: str, needs: str
) -> None:
    """Cells without engines.frequency, asked to clock a profile's FPGA cell design or to
    time a pipeline_delay in cycles: the error named the platform, not the file to add the
    clock to (as the no-engine-rate error does)."""
    platform, profiles = tmp_path / "nofreq.toml", tmp_path / "my.toml"
    if needs == "fpga_cell":
        platform.write_text(_NO_CLOCK_CELLS)
        profiles.write_text(
            '[apps.logscan]\ndata_size = "4 GB"\nalpha = 8\ncycles_per_byte = 6.5\n'
            "[apps.logscan.fpga_cell]\nbytes_per_cycle = 4\npipeline_delay = 12\n"
            'power = "3 mW"\npower_fixed = "0.9 W"\n'
        )
        args: tuple[str, ...] = ("-a", "logscan", "--profiles", str(profiles))
    else:
        platform.write_text(_NO_CLOCK_CELLS + "[engines.pipeline_delay]\nsobel = 4\n")
        args = ("-a", "sobel")
    result = ndpkit(command, "-p", str(platform), *args)
    assert result.returncode == 2, result.stdout
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("error: ")]
    head = f"error: {platform}: engines.frequency: platform 'norc' gives no engines.frequency"
    assert line.startswith(head), line
    if needs == "fpga_cell":  # and the profile's design it would clock
        assert line.endswith(f"({profiles}: apps.logscan.fpga_cell)"), line


def test_plan_on_a_file_without_engines_names_it(ndpkit, tmp_path: Path) -> None:
    """`plan -p mycns.toml` (extends cns) said "platform 'mycns' has no engines to plan",
    naming no file."""
    mine = tmp_path / "mycns.toml"
    mine.write_text('extends = "cns"\nname = "mycns"\n', encoding="utf-8")
    result = ndpkit("plan", "-p", str(mine), "-a", "lc")
    assert result.returncode == 2, result.stdout
    assert result.stderr.startswith(
        f"error: {mine}: engines: platform 'mycns' has no engines to plan; try --optimal"
    ), result.stderr


def test_model_flags_reach_estimate_and_plan(ndpkit) -> None:
    paper = json.loads(
        ndpkit("plan", "-p", "rfns", "-a", "he", "--wall-times", "printed", "-f", "json").stdout
    )["plan"]
    assert paper["baseline_energy_j"] == pytest.approx(23.2119)  # anchor 11.2: 773.73 W x 0.03 s
    piped = json.loads(
        ndpkit(
            "estimate", "-p", "rfns", "-a", "he", "--time-basis", "pipeline", "-f", "json"
        ).stdout
    )["estimate"]
    # HE is bound by the 36 GiB/s host link: 3.4 GiB streams in 3.4 / 36 s.
    assert piped["time_s"] == pytest.approx(3.4 / 36)


def test_an_explicit_no_flag_and_an_option_for_the_same_convention_conflict(ndpkit) -> None:
    result = ndpkit(
        "estimate", "-p", "rans", "-a", "he", "--no-mux-port-cap", "-o", "mux_port_cap=true"
    )
    assert result.returncode == 2 and "mux_port_cap is already set" in result.stderr


def test_platforms_check_counts_one_ssd_and_one_engine_in_the_singular(
    ndpkit, tmp_path: Path
) -> None:
    path = tmp_path / "one.toml"
    path.write_text(
        'extends = "rfns"\nname = "one"\n[storage]\ncount = 1\n[engines]\ncount = 1\n'
        '[switch_layer]\nscheme = "mux1"\n'
    )
    result = ndpkit("platforms", "check", str(path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"ok: {path}: platform 'one', 1 SSD, 1 fpga engine,")


def test_platforms_check_notes_an_engine_entry_for_an_app_ndpkit_does_not_ship(
    ndpkit, tmp_path: Path
) -> None:
    """Legal (a user's own app, with a profile of that name), so exit 0; but a typo such as
    `lcc` is otherwise never used, so `platforms check` says so, with a guess. The presets'
    entries are all for shipped apps: no note."""
    path = tmp_path / "mine.toml"
    path.write_text(
        'version = 1\nextends = "rans"\nname = "mine"\n'
        '[engines.throughput]\nlcc = "9 GB/s"\nscan = "1 GB/s"\n'
    )
    result = ndpkit("platforms", "check", str(path))
    assert result.returncode == 0 and result.stdout.startswith(f"ok: {path}")
    notes = result.stderr.splitlines()
    assert notes == [
        f"note: {path}: engines.throughput.lcc: no app ndpkit ships (did you mean 'lc'?); "
        "used only with a profile of that name (--profiles)",
        f"note: {path}: engines.throughput.scan: no app ndpkit ships; "
        "used only with a profile of that name (--profiles)",
    ]
    for preset in ("rans", "rfns", "risp-64ch"):
        clean = ndpkit("platforms", "check", preset)
        assert clean.returncode == 0 and clean.stderr == "", preset


_POWERLESS_HOST = (
    'name = "box"\n[host]\ncores_per_socket = 8\nfrequency = "3 GHz"\n'
    '[host_link]\nbandwidth = "16 GB/s"\n[storage]\ncount = 4\nread_bandwidth = "3 GB/s"\n'
)


def test_platforms_check_notes_a_host_that_draws_no_power(ndpkit, tmp_path: Path) -> None:
    """The host's powers default to 0: a first platform file that leaves them out got `ok`
    and then a host that costs nothing (`estimate --split host`: 0 J, +∞ MB/J) without a
    word. Legal, so exit 0, with a note; one power is enough to price it."""
    path = tmp_path / "box.toml"
    path.write_text(_POWERLESS_HOST)
    result = ndpkit("platforms", "check", str(path))
    assert result.returncode == 0 and result.stdout.startswith(f"ok: {path}")
    assert result.stderr.splitlines() == [
        f"note: {path}: host: no power_active or power_idle: the energy model charges the "
        "host 0 J, busy or idle (a host-only run, --split host, costs nothing: +∞ MB/J); "
        "give the whole server's powers"
    ]
    path.write_text(_POWERLESS_HOST.replace("[host]\n", '[host]\npower_active = "300 W"\n'))
    assert unpriced_host(load_platform(path)) == []


def test_the_host_note_asks_an_in_storage_platform_for_risps_prices(tmp_path: Path) -> None:
    """RISP prices its host by component, not by whole-server power: a file that extends
    risp-64ch and zeroes those is noted; the presets, priced, are not."""
    path = tmp_path / "free.toml"
    path.write_text(
        'extends = "risp-64ch"\nname = "free"\n'
        '[host]\nenergy_per_cycle = "0 J"\ndram_power = "0 W"\nchipset_power = "0 W"\n'
    )
    (note,) = unpriced_host(load_platform(path))
    assert note.startswith("host: no energy_per_cycle, dram_power or chipset_power:")
    assert note.endswith("give RISP's host prices")
    for preset in ("cns", "sans", "sfns", "rans", "rfns", "risp-64ch", "risp-baseline"):
        assert unpriced_host(load_platform(preset)) == [], preset


def test_platforms_check_says_no_engines_not_0_no_engines(ndpkit) -> None:
    """A platform without engines read 'ok: cns: platform 'cns', 36 SSDs, 0 no engines'."""
    result = ndpkit("platforms", "check", "cns")
    assert result.stdout == "ok: cns: platform 'cns', 36 SSDs, no engines, switch layer mux1\n"


def test_the_note_names_an_engine_table_as_the_file_writes_it(tmp_path: Path) -> None:
    """`pipeline_delay`, not the field it loads into (`pipeline_delay_cycles`), which the
    user never wrote and which a file extending a preset that has the table refuses."""
    path = tmp_path / "pd.toml"
    path.write_text(
        'version = 1\nextends = "risp-64ch"\nname = "pd"\n[engines.pipeline_delay]\nsobell = 3\n'
    )
    assert unshipped_apps(load_platform(path)) == [
        "engines.pipeline_delay.sobell: no app ndpkit ships (did you mean 'sobel'?); "
        "used only with a profile of that name (--profiles)"
    ]


def test_show_spells_a_size_under_a_kib_once(ndpkit) -> None:
    """RISP's 4-byte configuration port read '4 B = 4 B': a decimal and a binary spelling
    that are the same below 1024 bytes."""
    shown = ndpkit("platforms", "show", "risp-64ch").stdout
    row = next(line for line in shown.splitlines() if "port_width_bytes" in line)
    assert "4 B" in row and "=" not in row


def test_the_note_covers_the_public_cells_per_app_power(tmp_path: Path) -> None:
    """`[public_cell] power_active_by_app = { sobell = … }` (a typo: the RU's fixed power for
    Sobel stays the default) passed `check` without a word, where the same typo in an engine
    table gets a note."""
    path = tmp_path / "pc.toml"
    path.write_text(
        'extends = "risp-64ch"\nname = "pc"\n[public_cell]\n'
        'power_active_by_app = { sobell = "1.4 W" }\n'
    )
    assert unshipped_apps(load_platform(path)) == [
        "public_cell.power_active_by_app.sobell: no app ndpkit ships (did you mean 'sobel'?); "
        "used only with a profile of that name (--profiles)"
    ]


@pytest.mark.parametrize(
    "args, units",
    [
        (["-p", "rfns", "-a", "knn2", "--optimal"], "binary"),
        (["-p", "rfns", "-a", "knn2", "--optimal", "--units", "decimal"], "decimal"),
        (["-p", "risp-64ch", "-a", "sobel"], "decimal"),
        (["-p", "risp-64ch", "-a", "sobel", "--units", "binary"], "binary"),
    ],
)
def test_plan_json_says_which_gb_its_bandwidths_use(ndpkit, args, units) -> None:
    """The candidates' *_gb_per_s and a channel plan's bandwidth fit follow --units; the
    document says which, as `estimate -f json` does."""
    result = ndpkit("plan", *args, "-f", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["units"] == units
    gb = 2**30 if units == "binary" else 10**9
    if doc["candidates"]:
        assert doc["candidates"][-2]["ssd_bw_gb_per_s"] == pytest.approx(108 * 2**30 / gb)
    else:
        fit = doc["plan"]["bandwidth_fit_gb_per_s_per_channel"]
        assert fit == pytest.approx(0.1e9 / gb, rel=1e-5)


def test_platforms_list_names_the_unit_of_the_host_link_it_gives(ndpkit) -> None:
    """The listing gives the host link in GiB/s (2^30 B/s), as its table header says, for
    every preset alike; its JSON/CSV key says so. It was `host_link_gb_per_s`, which on
    risp-64ch read as 1.83 GB/s for SATA's 1.97 GB/s (RISP's GB are decimal)."""
    listing = json.loads(ndpkit("platforms", "list", "-f", "json").stdout)
    rows = {r["name"]: r for r in listing["tables"]["platforms"]}
    assert all("host_link_gb_per_s" not in r for r in rows.values())
    assert rows["risp-64ch"]["host_link_gib_per_s"] == pytest.approx(1.97e9 / 2**30)
    assert rows["rfns"]["host_link_gib_per_s"] == pytest.approx(36.0)
    header = ndpkit("platforms", "list", "-f", "csv").stdout.splitlines()[0].split(",")
    assert "host_link_gib_per_s" in header


@pytest.mark.parametrize(
    "args, units",
    [
        (["estimate", "-p", "rans", "-a", "lc"], "binary"),
        (["estimate", "-p", "rans", "-a", "lc", "--units", "decimal"], "decimal"),
        (["estimate", "-p", "risp-64ch", "-a", "sobel"], "decimal"),
        (["plan", "-p", "rfns", "-a", "knn2", "--optimal", "--units", "decimal"], "decimal"),
        (["plan", "-p", "risp-64ch", "-a", "sobel"], "decimal"),
        (["simulate", "-p", "rfns", "-a", "he"], "binary"),
        (["simulate", "-p", "rfns", "-a", "he", "--units", "decimal"], "decimal"),
    ],
)
def test_csv_says_which_gb_its_bandwidths_use(ndpkit, args, units) -> None:
    """The table's note ('bandwidths in GB/s with GB = … bytes') is not in a CSV, whose
    *_gb_per_s and MB/J follow --units: a `units` row says which, as the JSON's key does."""
    result = ndpkit(*args, "-f", "csv")
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    said = [r for r in rows if r.get("quantity") == "units"]
    assert len(said) == 1
    assert {v for k, v in said[0].items() if k not in ("table", "quantity") and v} == {units}


@pytest.mark.parametrize(
    "args, platform",
    [
        (("estimate", "-p", "rans", "-a", "kmeans"), "rans"),
        (("plan", "-p", "rfns", "-a", "knn8-topk"), "rfns"),
        (("estimate", "-p", "risp-64ch", "-a", "lc"), "risp-64ch"),
    ],
)
def test_a_kernel_the_profile_set_lacks_says_how_to_measure_it(
    ndpkit, args: tuple[str, ...], platform: str
) -> None:
    """`estimate -p rans -a kmeans`, a kernel ndpkit runs, listed the set's six apps and no
    way on: the way is evaluate --save-profiles, which the message now gives, runnable."""
    result = ndpkit(*args)
    assert result.returncode == 2
    app = args[-1]
    assert result.stderr.strip().endswith(
        f"; {app} is one of ndpkit's kernels: measure it with `ndpkit evaluate {app} "
        f"--platforms {platform} --save-profiles {app}.json`, then give --profiles {app}.json"
    )
    assert "kernels" not in ndpkit("estimate", "-p", "rans", "-a", "scan").stderr


def test_sweep_says_how_to_measure_a_kernel_on_the_platform_file_given(
    ndpkit, tmp_path: Path
) -> None:
    """The sweep's hint said `--platforms PLATFORM` where the platform was a file."""
    mine = tmp_path / "mine.toml"
    mine.write_text('extends = "rans"\nname = "mine"\n')
    result = ndpkit("sweep", "--platforms", str(mine), "--apps", "kmeans")
    assert result.returncode == 2
    assert f"--platforms {mine} --save-profiles kmeans.json" in result.stderr


def test_optimal_says_when_the_host_split_is_not_a_candidate(ndpkit, tmp_path: Path) -> None:
    """A profile without `host_only` leaves the host split out of `--optimal`'s search, and
    its table of configurations simply ended at the engine counts, without a word."""
    profiles = tmp_path / "p.toml"
    profiles.write_text(
        '[apps.scan]\ndata_size = "2 TB"\nalpha = 20\nengine = { fpga = "9 GB/s" }\n'
    )
    args = ("plan", "-p", "rfns", "-a", "scan", "--profiles", str(profiles), "--optimal")
    note = (
        "the host split is not among the candidates: the profile of 'scan' has no host-only "
        "rate (host_only)"
    )
    result = ndpkit(*args, "-f", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["notes"] == [note]
    assert f"note: {note}" in result.stderr
    assert "host split" not in ndpkit("plan", "-p", "rfns", "-a", "knn2", "--optimal").stderr


def test_estimate_notes_a_paper_time_shorter_than_its_bottleneck_allows(ndpkit) -> None:
    """HE on RFNS is link-bound at 36 GiB/s, which takes 0.0944 s for its 3.4 GiB, but the
    paper's basis (T_NDP + T_CPU) printed 0.0317 s, and the energy over it, without a word.
    A run whose time holds the stream (k-NN_2 on RFNS), another basis, or a host-only run
    (whose T_CPU is a measured wall time that read its data) gets no note."""
    result = ndpkit("estimate", "-p", "rfns", "-a", "he", "-f", "json")
    doc = json.loads(result.stdout)
    stream_s = 3.4 * 2**30 / (doc["estimate"]["performance_gb_per_s"] * 2**30)
    assert doc["estimate"]["time_s"] < stream_s
    assert doc["notes"] == [
        f"time_s {doc['estimate']['time_s']:.4g} s is the paper's time basis, T_NDP + T_CPU, "
        "which does not time the SSDs or the link: at the Eq. (1) performance "
        f"(ndp2cpu-bound) the data takes {stream_s:.4g} s; --time-basis pipeline or staged "
        "times it (docs/planning.md)"
    ]
    for args in (
        ("-p", "rfns", "-a", "knn2"),
        ("-p", "rfns", "-a", "he", "--time-basis", "pipeline"),
        ("-p", "cns", "-a", "lc"),
        ("-p", "rfns", "-a", "he", "--split", "host"),
    ):
        quiet = ndpkit("estimate", *args, "-f", "json")
        assert "does not time" not in quiet.stdout, args


def test_reproduce_csv_and_json_give_the_same_numbers_under_paper_rounding(ndpkit) -> None:
    """`--rounding paper` rounded every float of the JSON's rows to 2 decimals and none of
    the CSV's: the same run gave EE 63.0 MB/J in one and 62.9965 in the other. Every cell
    of every table is the same in both."""
    args = ("reproduce", "rans-rfns", "--rounding", "paper")
    doc = json.loads(ndpkit(*args, "-f", "json").stdout)
    written = list(csv.DictReader(io.StringIO(ndpkit(*args, "-f", "csv").stdout)))
    compared = 0
    for name, rows in doc["tables"].items():
        in_csv = [r for r in written if r["table"] == name]
        assert len(in_csv) == len(rows), name
        for row, line in zip(rows, in_csv, strict=True):
            for key, value in row.items():
                if isinstance(value, float):
                    assert float(line[key]) == value, (name, key, line[key], value)
                    compared += 1
    assert compared > 300
