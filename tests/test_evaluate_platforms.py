"""`ndpkit evaluate --platforms` names each platform once: results are keyed by platform
name, so a second platform of the same name would silently replace the first's row."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ndpkit import evaluate as ev
from ndpkit.errors import SpecError
from ndpkit.hw import Platform, load_platform
from ndpkit.runtime.profiling import EngineScaling

NDPKIT = Path(sys.executable).parent / "ndpkit"
DOCS = Path(__file__).resolve().parents[1] / "docs"


def _evaluate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(NDPKIT), "evaluate", "lc", "--size", "1 MiB", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={"NO_COLOR": "1", "COLUMNS": "200", "PATH": "/usr/bin:/bin"},
        check=False,
    )


def _one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def test_a_file_under_the_name_of_the_preset_it_extends_is_refused(tmp_path: Path) -> None:
    mine = tmp_path / "mine3.toml"
    mine.write_text(
        'version = 1\nextends = "rfns"\nname = "rfns"\n[host]\npower_active = "1000 W"\n'
    )
    line = _one_error_line(_evaluate("--platforms", f"rfns,{mine}"))
    assert line.startswith(f"error: {mine}: name: 'rfns' is the name of preset rfns")


def test_two_files_of_one_name_are_refused(tmp_path: Path) -> None:
    one, two = tmp_path / "one.toml", tmp_path / "two.toml"
    one.write_text('version = 1\nextends = "rfns"\nname = "lab"\n')
    two.write_text('version = 1\nextends = "rans"\nname = "lab"\n')
    line = _one_error_line(_evaluate("--platforms", f"{one},{two}"))
    assert line.startswith("error: command line: --platforms: ")
    assert f"'{one}' and '{two}' are both named 'lab'" in line


def test_a_platform_named_twice_is_refused() -> None:
    line = _one_error_line(_evaluate("--platforms", "cns,rfns,rfns"))
    assert line == (
        "error: command line: --platforms: names platform 'rfns' twice; give each platform once"
    )


def test_in_process_the_field_is_platforms(tmp_path: Path) -> None:
    named = tmp_path / "mine.toml"
    named.write_text('version = 1\nextends = "rfns"\nname = "mine"\n')
    assert list(ev.load_platforms(["rfns", str(named)])) == ["rfns", "mine"]
    same_name = tmp_path / "copy.toml"
    same_name.write_text('version = 1\nextends = "rans"\nname = "mine"\n')
    with pytest.raises(SpecError, match=r"^platforms: '.*mine.toml' and '.*copy.toml' are both"):
        ev.evaluate(["lc"], [str(named), str(same_name)])


@pytest.mark.parametrize(
    ("keys", "refused"),
    [
        # rfns renamed "cns" replaced cns's results, and became the × CNS baseline
        (("cns", "other"), "platforms['other']: is platform 'cns'"),
        (("mine", "rfns"), "platforms['mine']: is platform 'cns'"),  # reported as "cns"
    ],
)
def test_loaded_platforms_are_keyed_by_their_names(
    monkeypatch: pytest.MonkeyPatch, keys: tuple[str, str], refused: str
) -> None:
    def no_work(*_: object) -> None:
        raise AssertionError("an app ran")

    monkeypatch.setattr(ev, "_run", no_work)
    cns = load_platform("cns")
    second = load_platform("rfns")
    if keys[1] != "rfns":
        second = second.model_copy(update={"name": "cns"})
    with pytest.raises(SpecError) as caught:
        ev.evaluate(["lc"], {keys[0]: cns, keys[1]: second}, size_bytes=2**20)
    assert str(caught.value).startswith(refused)


def test_a_platform_that_costs_nothing_is_infinitely_better_than_cns(tmp_path: Path) -> None:
    """All powers 0 W price the run at 0 J: × CNS (MB/J) is +∞, not a ZeroDivisionError."""
    free = tmp_path / "free.toml"
    free.write_text(
        'version = 1\nextends = "cns"\nname = "free"\n'
        '[host]\npower_active = "0 W"\npower_idle = "0 W"\n'
    )
    result = _evaluate("--platforms", f"cns,{free}", "--format", "json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)["apps"][0]["predicted"]
    assert rows["free"]["energy_j"] == 0
    assert rows["free"]["ee_vs_cns"] == "inf"
    assert rows["free"]["ee_mb_per_j"] == "inf"
    assert rows["cns"]["ee_vs_cns"] == 1


@pytest.mark.parametrize(
    ("apps", "named"),
    [
        (("lc", "lc"), "'lc' more than once; "),
        (("knn", "knn8"), "'knn8' more than once (the group"),
    ],
)
def test_an_app_named_twice_is_refused(apps: tuple[str, ...], named: str) -> None:
    result = subprocess.run(
        [str(NDPKIT), "evaluate", *apps, "--size", "1 MiB"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"NO_COLOR": "1", "COLUMNS": "200", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    line = _one_error_line(result)
    assert line.startswith("error: command line: APPS: names ") and named in line
    with pytest.raises(SpecError, match=r"^apps: names 'lc' more than once"):
        ev.evaluate(["lc", "lc"], ["cns"])


def _rfns_with_designs(designs: dict[str, float], name: str = "rfns-design") -> Platform:
    """RFNS whose engines run at 100 MHz with cell designs (bytes per cycle) for `designs`,
    their throughput entries taken out."""
    rfns = load_platform("rfns")
    engines = rfns.engines
    assert engines is not None
    throughput = {app: r for app, r in engines.throughput.items() if app not in designs}
    update = {"throughput": throughput, "bytes_per_cycle": designs, "frequency_hz": 1e8}
    return rfns.model_copy(update={"name": name, "engines": engines.model_copy(update=update)})


def _modelled_rates(app: str, designs: dict[str, float]) -> tuple[float, float, ev.AppRun]:
    """(the engine rate `app` was modelled at, the rate its saved profile holds, the run) on
    RFNS with `designs`."""
    platform = _rfns_with_designs(designs)
    (run,) = ev.evaluate([app], {platform.name: platform}, size_bytes=2**20)
    estimate = run.estimates[platform.name]
    assert not isinstance(estimate, str)
    profile = run.profiles[platform.name][0]
    return estimate.pipeline.engine_bytes_per_s, profile.engine_bytes_per_s["fpga"], run


def test_a_server_platforms_cell_design_wins_over_the_scaled_measurement() -> None:
    """A design's bytes per cycle x clock is the platform's own rate for the app, as a
    throughput entry is (the profiling audit: evaluate used the scaled host measurement,
    estimate the design)."""
    modelled, measured, _ = _modelled_rates("kmeans", {"kmeans": 9.0})
    assert modelled == pytest.approx(9.0 * 1e8)
    assert measured != pytest.approx(9.0 * 1e8)  # the profile's own, unused


def test_a_design_entry_is_carried_to_the_top_k_split() -> None:
    _, _, run = _modelled_rates("knn2", {"knn2": 4.0})
    (name,) = run.splits
    ratio = run.splits[name].carried["knn2-topk"]
    topk = next(p for p in run.profiles[name] if p.app == "knn2-topk")
    assert topk.engine_bytes_per_s["fpga"] == pytest.approx(4.0 * 1e8 * ratio)


def test_he_remap_takes_a_design_entry_for_he_as_its_rate() -> None:
    """The papers' HE engine equalised the images (he-remap): an `he` cell design is given
    to he-remap as a rate, the one a saved profile holds."""
    modelled, saved, _ = _modelled_rates("he-remap", {"he": 2.0})
    assert modelled == pytest.approx(2.0 * 1e8) and saved == pytest.approx(2.0 * 1e8)


def test_the_host_of_a_platform_file_scales_evaluates_host_rates_as_documented(
    tmp_path: Path,
) -> None:
    """docs/platforms.md said the RANS/RFNS models use none of the host's cores or clock;
    `evaluate` maps its one-core measurement onto them (cores x f_target / f_here)."""
    text = " ".join((DOCS / "platforms.md").read_text(encoding="utf-8").split())
    assert (
        "scales the measured one-core host rates by `sockets x cores_per_socket` and by "
        "`frequency` over this machine's clock" in text
    )
    bigger = tmp_path / "big-host.toml"
    bigger.write_text(
        'version = 1\nextends = "rans"\nname = "big-host"\n'
        '[host]\nsockets = 4\nfrequency = "4.5 GHz"\n'
    )
    (run,) = ev.evaluate(["lc"], ["rans", str(bigger)], size_bytes=2**20)
    base, big = run.profiles["rans"][0], run.profiles["big-host"][0]
    assert base.host_part_bytes_per_s is not None and big.host_part_bytes_per_s is not None
    # twice the sockets (2 -> 4 x 18 cores), 1.5 times the clock (3.0 -> 4.5 GHz)
    assert big.host_part_bytes_per_s == pytest.approx(3 * base.host_part_bytes_per_s)
    assert big.host_only_bytes_per_s == pytest.approx(3 * base.host_only_bytes_per_s)


def test_the_output_says_a_throughput_entry_in_a_platform_file_won(tmp_path: Path) -> None:
    """An engine entry added to a platform file wins over the scaled measurement, and the
    predicted row says which was used (before, the note was empty either way, so a user
    could not tell whether the entry they added was read)."""
    mine = tmp_path / "rans-km.toml"
    mine.write_text(
        'version = 1\nextends = "rans"\nname = "rans-km"\n[engines.throughput]\nkmeans = "5 GB/s"\n'
    )
    (run,) = ev.evaluate(["kmeans"], ["rans", str(mine)], size_bytes=2**20)
    entry = run.estimates["rans-km"]
    assert not isinstance(entry, str)
    assert entry.pipeline.engine_bytes_per_s == pytest.approx(5e9)
    rows = {row["platform"]: row for row in ev.predicted_rows(run)}
    assert rows["rans-km"]["engine_rate_from"] == "platform"
    assert rows["rans-km"]["note"] == "engine rate: rans-km's kmeans entry"
    assert rows["rans"]["engine_rate_from"] == "scaled"
    assert rows["rans"]["note"] == (
        "engine rate: this host's measurement, scaled: arm, 4 cores at 1.1 GHz, 0.35 of a "
        "host core's work per clock"
    )
    assert "engine_rate_from" not in rows.get("cns", {})


def test_the_output_names_the_design_and_the_papers_entry_used() -> None:
    platform = _rfns_with_designs({"kmeans": 9.0})
    runs = ev.evaluate(["kmeans", "lc", "he-remap"], {platform.name: platform}, size_bytes=2**20)
    notes = {r.app: r.notes[platform.name] for r in runs}
    assert notes == {
        "kmeans": "engine rate: rfns-design's kmeans design (bytes_per_cycle)",
        "lc": "engine rate: rfns-design's lc entry",
        "he-remap": "engine rate: rfns-design's he entry",
    }


def test_the_scaling_rule_named_is_the_one_applied() -> None:
    """The note's fpga rule follows the engine's clock: 100 MHz RISP cells are 3.2 host
    cores; with `follow_platform=False`, the defaults whatever the platform says."""
    risp = load_platform("risp-64ch")
    assert risp.engines is not None
    assert EngineScaling().describe(risp.engines, 2e9) == (
        "fpga, 3.2 host cores (8 at 250 MHz; the engine at 100 MHz)"
    )
    fixed = EngineScaling(follow_platform=False)
    assert fixed.describe(risp.engines, 2e9) == (
        "fpga, 8 host cores (8 at 250 MHz; the engine at 250 MHz)"
    )
    (run,) = ev.evaluate(["lc"], ["risp-64ch"], size_bytes=2**20, scaling=fixed)
    assert run.engine_rate_from == {"risp-64ch": "scaled"}
    assert run.notes["risp-64ch"].endswith(fixed.describe(risp.engines, 2e9))
