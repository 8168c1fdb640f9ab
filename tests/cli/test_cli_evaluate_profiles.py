"""`ndpkit evaluate` after the issue-4 audit, through the installed command: RISP predicts
every app, --save-profiles writes what `estimate`/`plan --profiles` read, a platform's
engine cores and clock count, and the progress bar shows bytes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from ndpkit.cli import evaluate as cli_evaluate
from ndpkit.cli.common import Format
from ndpkit.hw import load_platform
from ndpkit.profile import load_profiles

FAST_RANS = """\
extends = "rans"
name = "rans-fast"
[engines]
cores = 16
frequency = "3.0 GHz"
"""


def test_risp_predicts_the_apps_its_cells_have_no_table_for(ndpkit) -> None:
    """LC, HE, k-NN and FFT2D have no cell design on RISP: the measured FPGA rate, mapped
    onto its 100 MHz cells, is used instead of refusing."""
    apps = ("lc", "he", "knn2", "fft2d")
    result = ndpkit("evaluate", *apps, "--size", "1 MiB", "--platforms", "risp-64ch", "-f", "json")
    assert result.returncode == 0, result.stderr
    for app in json.loads(result.stdout)["apps"]:
        risp = app["estimates"]["risp-64ch"]
        assert isinstance(risp, dict), f"{app['app']}: {risp}"
        assert risp["time_s"] > 0
        row = app["predicted"]["risp-64ch"]
        assert row["engine_rate_from"] == "scaled", row
        assert row["note"].startswith("engine rate: this host's measurement, scaled: fpga, 3.2")


def test_saved_profiles_give_estimate_and_plan_the_same_numbers(ndpkit, tmp_path: Path) -> None:
    path = tmp_path / "measured.json"
    result = ndpkit(
        "evaluate", "lc", "kmeans", "--size", "1 MiB", "--platforms", "rans",
        "--save-profiles", str(path), "-f", "json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    runs = {a["app"]: a for a in json.loads(result.stdout)["apps"]}
    assert sorted(load_profiles(path).apps) == ["kmeans", "lc"]
    for app, run in runs.items():
        again = ndpkit("estimate", "-p", "rans", "-a", app, "--profiles", str(path), "-f", "json")
        assert again.returncode == 0, again.stderr
        found = json.loads(again.stdout)["estimate"]
        assert found["time_s"] == run["estimates"]["rans"]["time_s"]
        assert found["energy_j"] == run["estimates"]["rans"]["energy_j"]
        plan = ndpkit("plan", "-p", "rans", "-a", app, "--profiles", str(path), "-f", "json")
        assert plan.returncode == 0, plan.stderr
        assert "note:" not in again.stderr + plan.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["measured.json"]
    # The set says which platform its rates were mapped onto; used on another, a note says so.
    assert load_profiles(path).platform == "rans"
    other = ndpkit("estimate", "-p", "rfns", "-a", "lc", "--profiles", str(path))
    assert other.returncode == 0, other.stderr
    assert "were mapped onto platform 'rans', not 'rfns'" in other.stderr
    # A sweep compares every platform (it compared only the first), and says so once.
    for platforms in ("rans,rfns", "rfns,rans"):
        swept = ndpkit(
            "sweep", "--platforms", platforms, "--apps", "lc,kmeans", "--profiles", str(path),
            "--engines", "18",
        )  # fmt: skip
        assert swept.returncode == 0, swept.stderr
        assert swept.stderr.count("note:") == 1, swept.stderr
        assert "not 'rfns'; for rates mapped onto it, run" in swept.stderr
    # The same note is in each command's JSON document (it was on stderr only).
    for command in (
        ["estimate", "-p", "rfns", "-a", "lc"],
        ["plan", "-p", "rfns", "-a", "lc"],
        ["simulate", "-p", "rfns", "-a", "lc", "--size", "64MiB"],
        ["sweep", "--platforms", "rans,rfns", "--apps", "lc", "--engines", "18"],
    ):
        found = ndpkit(*command, "--profiles", str(path), "-f", "json")
        assert found.returncode == 0, found.stderr
        notes = json.loads(found.stdout)["notes"]
        assert [n for n in notes if "mapped onto platform 'rans', not 'rfns'" in n], notes
    same = ndpkit("plan", "-p", "rans", "-a", "lc", "--profiles", str(path), "-f", "json")
    assert json.loads(same.stdout)["notes"] == []


@pytest.mark.parametrize(("platform", "kind"), [("rans", "arm"), ("rfns", "fpga")])
def test_a_split_two_apps_share_is_saved_once(
    ndpkit, tmp_path: Path, platform: str, kind: str
) -> None:
    """knn2 brings knn2-topk and knn2-topk brings knn2: one run of each, one profile each.
    `estimate` from the file gives knn2-topk (rate and power carried from knn2's entries)
    and he-remap (he's) the time and energy evaluate predicted for them; on RFNS, whose
    engines draw a power per app, the energy differed before the power was saved."""
    path = tmp_path / "knn.json"
    result = ndpkit(
        "evaluate", "knn2", "knn2-topk", "he-remap", "--size", "1 MiB", "--platforms", platform,
        "--save-profiles", str(path), "-f", "json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    saved = load_profiles(path).apps
    assert sorted(saved) == ["he-remap", "knn2", "knn2-topk"]
    engines = load_platform(platform).engines
    assert engines is not None and engines.kind == kind
    for split, entry in (("knn2-topk", "knn2"), ("he-remap", "he")):
        watts = engines.power_active_by_app.get(entry)
        assert saved[split].engine_power_active_w == ({} if watts is None else {kind: watts})
    if platform == "rfns":  # else carrying the power would change nothing
        assert engines.power_active_by_app["he"] != engines.power_active_w
    assert saved["knn2"].engine_power_active_w == {}  # the platform's own entry prices it
    runs = {a["app"]: a for a in json.loads(result.stdout)["apps"]}
    for app in ("knn2-topk", "he-remap"):
        again = ndpkit("estimate", "-p", platform, "-a", app, "--profiles", str(path), "-f", "json")
        assert again.returncode == 0, again.stderr
        found, predicted = json.loads(again.stdout)["estimate"], runs[app]["estimates"][platform]
        assert found["time_s"] == pytest.approx(predicted["time_s"]), app
        assert found["energy_j"] == pytest.approx(predicted["energy_j"]), app


@pytest.mark.parametrize(
    ("where", "platforms", "needle"),
    [
        ("missing/p.json", "rans", "no directory"),
        (".", "rans", "is a directory"),
        ("p.json", "cns,rans", "2 are given (cns, rans); give one with --platforms"),
        ("p" * 300 + ".json", "rans", "File name too long"),
        ("p.toml", "rans", "profiles are saved as JSON: give a file name ending in .json"),
        ("p.txt", "rans", "ending in .json"),
    ],
)
def test_a_bad_save_profiles_path_exits_2_before_running(
    ndpkit, tmp_path: Path, where: str, platforms: str, needle: str
) -> None:
    target = tmp_path / where
    platform, *apps = platforms.split()
    result = ndpkit(
        "evaluate", "knn8", *apps, "--size", "1 MiB", "--platforms", platform,
        "--save-profiles", str(target),
    )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1 and "--save-profiles" in result.stderr
    assert needle in result.stderr and result.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_a_save_profiles_write_that_fails_exits_2_and_prints_nothing(ndpkit) -> None:
    """/proc takes no new files: a probe file finds that out before the run, and nothing is
    printed."""
    result = ndpkit(
        "evaluate", "lc", "--size", "1 MiB", "--platforms", "rans",
        "--save-profiles", "/proc/ndpkit-profiles.json",
    )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith(
        "error: command line: --save-profiles /proc/ndpkit-profiles.json: cannot write in '/proc'"
    )
    assert result.stderr.count("\n") == 1 and result.stdout == ""


def test_a_platforms_engine_cores_and_clock_scale_the_mapped_rate(ndpkit, tmp_path: Path) -> None:
    """16 cores at 3.0 GHz against RANS's 4 at 1.1 GHz: K-Means (no paper rate) runs
    48 / 4.4 times faster per engine; LC keeps the paper's rate on both."""
    fast = tmp_path / "rans-fast.toml"
    fast.write_text(FAST_RANS)
    result = ndpkit(
        "evaluate", "kmeans", "lc", "--size", "1 MiB", "--platforms", f"rans,{fast}", "-f", "json"
    )
    assert result.returncode == 0, result.stderr
    apps = {a["app"]: a["estimates"] for a in json.loads(result.stdout)["apps"]}
    engine = {
        app: {k: e["engine_bw_gb_per_s"] for k, e in est.items()} for app, est in apps.items()
    }
    assert engine["kmeans"]["rans-fast"] / engine["kmeans"]["rans"] == pytest.approx(48 / 4.4)
    assert engine["lc"]["rans-fast"] == engine["lc"]["rans"]


def test_the_progress_bar_shows_bytes_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=120)
    monkeypatch.setattr(cli_evaluate, "stderr", lambda: terminal)
    with cli_evaluate._progress(Format.table) as (step, on_bytes):
        assert on_bytes is not None
        step("kmeans: verifying")
        on_bytes(64 * 2**20, 128 * 2**20)
    assert "kmeans: verifying" in screen.getvalue()
    assert "64.0/128.0 MiB" in screen.getvalue()
    for fmt in (Format.json, Format.csv):
        with cli_evaluate._progress(fmt) as (_, quiet):
            assert quiet is None
    monkeypatch.setattr(cli_evaluate, "stderr", lambda: Console(file=io.StringIO()))
    with cli_evaluate._progress(Format.table) as (_, piped):
        assert piped is None


def test_save_profiles_never_replaces_a_device(ndpkit) -> None:
    result = ndpkit(
        "evaluate", "lc", "--size", "1 MiB", "--platforms", "rans", "--save-profiles", os.devnull
    )  # fmt: skip
    assert result.returncode == 2 and result.stdout == ""
    assert "--save-profiles" in result.stderr and "not a regular file" in result.stderr
    assert Path(os.devnull).is_char_device()


_NO_CLOCK = """\
import sys
from ndpkit.runtime import profiling
profiling.host_clock = lambda: (profiling.DEFAULT_FREQUENCY_HZ, "assumed")
from ndpkit.cli import main
sys.argv = ["ndpkit", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_an_assumed_clock_is_a_warning_not_only_a_json_note(fmt: str) -> None:
    """On a host that states no clock (an ARM VM without a PMU: no cpufreq base_frequency,
    no '@ GHz' name, no 'cpu MHz'), 2 GHz was assumed for CPB and for every host and engine
    rate mapped onto a platform, and only the JSON's measurement notes said so: the tables
    gave no hint that the predictions rested on a guess."""
    result = subprocess.run(
        [sys.executable, "-c", _NO_CLOCK, "evaluate", "lc", "kmeans", "--size", "1 MiB",
         "--platforms", "rans", "-f", fmt],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "2000"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1, result.stderr  # once, not once per app
    assert "this host states no clock" in warnings[0]
    assert "2.0 GHz is assumed" in warnings[0] and "(kmeans, lc)" in warnings[0]
    if fmt == "json":
        (warning,) = json.loads(result.stdout)["warnings"]
        assert warnings[0] == f"warning: {warning}"


@pytest.mark.parametrize("through_a_link", [False, True])
def test_save_profiles_onto_the_data_sets_manifest_is_refused(
    ndpkit, tmp_path: Path, through_a_link: bool
) -> None:
    """`--save-profiles DATA/manifest.json` replaced the manifest of the data set it had
    just read with a profile set: the data set could no longer be opened ("not an ndpkit
    data set manifest")."""
    data = tmp_path / "lc"
    made = ndpkit("data", "generate", "lc", "--size", "1 MiB", "--devices", "1", "--out", str(data))
    assert made.returncode == 0, made.stderr
    manifest = data / "manifest.json"
    before = manifest.read_bytes()
    target = manifest
    if through_a_link:
        target = tmp_path / "profiles.json"
        target.symlink_to(manifest)
    result = ndpkit(
        "evaluate", "--data", str(data), "--size", "1 MiB", "--platforms", "rans",
        "--save-profiles", str(target),
    )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: command line: --save-profiles: ")
    assert f"is the manifest of the data set {str(data)!r}" in line
    assert manifest.read_bytes() == before


@pytest.mark.parametrize(
    ("inside", "with_data"),
    [("profiles.json", True), ("device-00/profiles.json", False), ("link.json", False)],
)
def test_save_profiles_into_a_data_set_is_refused_before_any_work(
    ndpkit, tmp_path: Path, inside: str, with_data: bool
) -> None:
    """`--save-profiles DS/profiles.json` wrote the file, and DS's next `data generate
    --overwrite` was then refused: "holds profiles.json, which ndpkit did not write". `-o`
    inside a data set is refused for that reason; so is this, through a link too."""
    data = tmp_path / "lc"
    made = ndpkit("data", "generate", "lc", "--size", "1 MiB", "--devices", "1", "--out", str(data))
    assert made.returncode == 0, made.stderr
    target = data / inside
    if inside == "link.json":
        target = tmp_path / inside
        target.symlink_to(data / "device-00" / "profiles.json")
    source = ["--data", str(data)] if with_data else ["lc"]
    result = ndpkit(
        "evaluate", *source, "--size", "1 MiB", "--platforms", "rans",
        "--save-profiles", str(target),
    )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert result.stderr == (
        f"error: command line: --save-profiles: {str(target)!r} is inside the data set "
        f"{str(data)!r}, which holds its manifest.json and device-NN/ directories of shards "
        "only (anything else there stops its --overwrite): write the profiles elsewhere\n"
    )
    written = sorted(p.name for p in data.rglob("*"))
    assert written == ["device-00", "manifest.json", "shard-0000.npy"]
    again = ndpkit("data", "generate", "lc", "--size", "1 MiB", "--devices", "1", "--out",
                   str(data), "--overwrite")  # fmt: skip
    assert again.returncode == 0, again.stderr


def test_a_data_sets_manifest_given_as_profiles_says_what_it_is(ndpkit, tmp_path: Path) -> None:
    """`estimate --profiles DS/manifest.json` was 'format: unknown field; valid keys here:
    apps, platform, source, version (and 12 more problems)'."""
    made = ndpkit("data", "generate", "lc", "--size", "64KiB", "--devices", "1", "-o",
                  str(tmp_path / "ds"))  # fmt: skip
    assert made.returncode == 0, made.stderr
    manifest = tmp_path / "ds" / "manifest.json"
    result = ndpkit("estimate", "-p", "rans", "-a", "lc", "--profiles", str(manifest))
    assert result.returncode == 2
    assert result.stderr == (
        f"error: {manifest}: is the manifest of an ndpkit data set, not a profile set: write "
        "one with `ndpkit evaluate --data DIR --platforms PLATFORM --save-profiles FILE.json`\n"
    )


def test_evaluates_json_report_given_as_profiles_says_what_it_is(ndpkit, tmp_path: Path) -> None:
    """`evaluate -f json > ev.json`, then `estimate --profiles ev.json`: refused as
    'warnings: unknown field; valid keys here: apps, platform, source, version', which left
    the user to guess that --save-profiles writes what --profiles reads."""
    report = tmp_path / "ev.json"
    made = ndpkit("evaluate", "lc", "--size", "1MiB", "--platforms", "rans", "-f", "json")
    assert made.returncode == 0, made.stderr
    report.write_text(made.stdout)
    result = ndpkit("estimate", "-p", "rans", "-a", "lc", "--profiles", str(report))
    assert result.returncode == 2
    assert result.stderr == (
        f"error: {report}: is the report of `ndpkit evaluate -f json`, not a profile set: write "
        "one with `ndpkit evaluate … --platforms PLATFORM --save-profiles FILE.json`\n"
    )
