"""`ndpkit evaluate` end to end on small data, through the installed command."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_env import NDPKIT

from ndpkit.kernels import get_kernel
from ndpkit.runtime import generate_dataset, import_dataset, open_dataset
from ndpkit.runtime.profiling import measure


def test_evaluate_json_runs_verifies_and_models(ndpkit) -> None:
    result = ndpkit("evaluate", "lc", "binarize", "--size", "1 MiB", "--format", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    apps = {a["app"]: a for a in doc["apps"]}
    assert set(apps) == {"lc", "binarize"}
    for app in apps.values():
        # verified: the reference's check read every record the kernel ran on.
        assert app["verified"] is True
        assert app["verification"]["records"] == app["input_records"] > 0
        assert set(app["estimates"]) == {"cns", "rans", "rfns"}
        cns = app["estimates"]["cns"]
        assert cns["split"] == "host" and cns["time_s"] > 0
        assert app["plans"]["rfns"]["engines_on"] <= app["plans"]["rfns"]["engines_total"]
    # LC's device part emits one float32 score (4 B) per point of 8 float32 features (32 B);
    # the host turns the scores into labels: α = 32 / 4 = 8.
    assert apps["lc"]["measurement"]["alpha"] == 8
    # CPB names its source: counted cycles where perf counters work, else the clock.
    measurement = apps["lc"]["measurement"]
    assert measurement["cpb_source"] in ("perf", "clock")
    if measurement["cpb_source"] == "clock":
        assert measurement["device_cycles"] is None and measurement["cpb_frequency_hz"] > 0
    # The modelled size is the paper's D (37 GiB for LC), not the 1 MiB that was run.
    assert apps["lc"]["model_bytes"] == pytest.approx(37 * 2**30)


def test_evaluate_group_and_in_storage_platform(ndpkit) -> None:
    result = ndpkit(
        "evaluate", "sobel", "--size", "1 MiB", "--platforms", "risp-64ch,cns", "-f", "json"
    )
    assert result.returncode == 0, result.stderr
    (app,) = json.loads(result.stdout)["apps"]
    risp = app["estimates"]["risp-64ch"]
    assert risp["bottleneck"] == "cell"  # Sobel's cells take 1 B/cycle at 100 MHz
    assert app["model_bytes"] == pytest.approx(0.5e9)


def test_evaluate_table_output(ndpkit) -> None:
    result = ndpkit("evaluate", "he", "--size", "1 MiB")
    assert result.returncode == 0, result.stderr
    assert "verified" in result.stdout and "rfns" in result.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("nosuchapp",), "APPS: unknown app 'nosuchapp'"),
        (("lc", "--size", "1 MiZ"), "--size"),
        (
            ("lc", "--size", "1 MiB", "--platforms", "cns,nosuch"),
            "error: command line: --platforms: unknown platform 'nosuch'; known: cns,",
        ),
        (("lc", "--data", "/nonexistent/dataset"), "/nonexistent/dataset"),
    ],
)
def test_evaluate_bad_input_exits_2(ndpkit, args: tuple[str, ...], needle: str) -> None:
    result = ndpkit("evaluate", *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert needle in result.stderr
    assert "Traceback" not in result.stderr


def test_evaluate_knn_compares_both_splits(ndpkit) -> None:
    result = ndpkit("evaluate", "knn2", "--size", "1 MiB", "--format", "json")
    assert result.returncode == 0, result.stderr
    (app,) = json.loads(result.stdout)["apps"]
    (other,) = app["other_splits"]
    assert other["app"] == "knn2-topk" and other["verified"] is True
    assert other["measurement"]["alpha"] > 100 * app["measurement"]["alpha"]
    assert set(app["splits"]) == {"cns", "rans", "rfns"}
    assert app["splits"]["cns"]["chosen"] is None
    for name in ("rans", "rfns"):
        comparison = app["splits"][name]
        assert [s["split"] for s in comparison["splits"]] == ["knn2", "knn2-topk"]
        assert comparison["chosen"] in ("knn2", "knn2-topk") and comparison["reason"]
        # The top-k split takes the paper's engine entry, scaled by the measured ratio.
        assert set(comparison["carried_engine_rate_ratio"]) == {"knn2-topk"}
        # Each split's estimate says its units, as `estimates` do (the table's are decimal).
        for split in comparison["splits"]:
            assert split["estimate"]["units"] == app["estimates"][name]["units"]
    table = ndpkit("evaluate", "knn2", "--size", "1 MiB")
    assert table.returncode == 0, table.stderr
    assert "Splits compared" in table.stdout and "knn2-topk" in table.stdout


def _knn_data_sets(tmp_path: Path) -> tuple[Path, Path]:
    """The same k-NN_2 points as .npy shards and as Parquet shards imported from a table."""
    npy = generate_dataset("knn2", 1 << 20, 3, tmp_path / "npy", seed=4, shard_bytes=200_000)
    points = npy.read_all()
    pq.write_table(pa.table({"u": points[:, 0], "v": points[:, 1]}), tmp_path / "t.parquet")
    import_dataset(tmp_path / "t.parquet", 3, tmp_path / "pq", "knn2", shard_bytes=200_000)
    return npy.path, tmp_path / "pq"


def test_evaluate_parquet_data(ndpkit, tmp_path: Path) -> None:
    """An imported table runs, verifies (streamed) and profiles like its .npy twin; the
    answers are compared bit for bit in tests/runtime/test_parquet.py."""
    npy, parquet = _knn_data_sets(tmp_path)
    result = ndpkit("evaluate", "--data", str(parquet), "--workers", "2", "-f", "json")
    assert result.returncode == 0, result.stderr
    (app,) = json.loads(result.stdout)["apps"]
    assert app["verified"] and app["app"] == "knn2"
    assert app["verification"] == {
        "method": "merged top-k",
        "chunks": len(open_dataset(parquet).shards),
        "passes": 1,
        "records": (1 << 20) // 8,
    }
    assert app["other_splits"][0]["verification"]["method"] == "merged top-k"
    kernel = get_kernel("knn2")
    same = measure(kernel, open_dataset(npy).read_all(), kernel.params(4), repeat=1)
    assert app["measurement"]["alpha"] == same.alpha
    assert app["measurement"]["input_bytes"] == same.input_bytes


def test_evaluate_corrupt_parquet_shard_exits_2(ndpkit, tmp_path: Path) -> None:
    _, path = _knn_data_sets(tmp_path)
    victim = sorted(path.glob("device-01/*.parquet"))[0]
    raw = bytearray(victim.read_bytes())
    raw[len(raw) // 2] ^= 0x08
    victim.write_bytes(raw)
    result = ndpkit("evaluate", "--data", str(path), "--workers", "1")
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"error: {victim}: " in result.stderr and "corrupt" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("budget", ["lots", "3 GBs", "-1 GiB"])
def test_a_bad_mapping_budget_in_the_environment_exits_2(budget: str) -> None:
    """NDPKIT_MAPPED_BYTES (the kept shard mappings' budget) is checked like a flag."""
    env = {"NO_COLOR": "1", "PATH": "/usr/bin:/bin", "NDPKIT_MAPPED_BYTES": budget}
    result = subprocess.run(
        [str(NDPKIT), "evaluate", "lc", "--size", "1 MiB"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "environment: NDPKIT_MAPPED_BYTES" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_app_that_cannot_read_a_small_data_set_is_one_error_without_a_warning(
    ndpkit, tmp_path: Path
) -> None:
    """The data set is below 1 MiB (a warning: its profile is unreliable) and holds images,
    which `lc` cannot read: the error alone, not the warning and then the error."""
    generate_dataset("he", 256 * 2**10, 2, tmp_path / "small", seed=0)
    result = ndpkit("evaluate", "lc", "--data", str(tmp_path / "small"), "--platforms", "cns")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "app 'lc' needs" in lines[0]


def test_the_measured_row_gives_the_runs_passes_not_the_samples(ndpkit, tmp_path: Path) -> None:
    """With --data, the profiled 1 MiB sample of K-Means converged in fewer passes than the
    run over the data set, and the measured row printed the sample's beside the run's time."""
    generate_dataset("kmeans", 4 << 20, 2, tmp_path / "km")  # 16 MiB took 25 s, 4 MiB 6 s
    args = ("evaluate", "--data", str(tmp_path / "km"), "--size", "1MiB", "--platforms", "rfns")
    doc = json.loads(ndpkit(*args, "-f", "json").stdout)["apps"][0]
    assert doc["measurement"]["passes"] != doc["passes"]  # the case the row got wrong
    rows = [line.split(",") for line in ndpkit(*args, "-f", "csv").stdout.splitlines()]
    header, measured = rows[0], next(r for r in rows if r[0] == "measured")
    assert int(measured[header.index("passes")]) == doc["passes"] == doc["verification"]["passes"]


def test_a_platform_entry_for_an_app_ndpkit_does_not_ship_is_a_warning(
    ndpkit, tmp_path: Path
) -> None:
    """evaluate runs only ndpkit's apps, so `throughput.sobell` is never used: Sobel was
    modelled at the scaled host rate without a word (only `platforms check` noted it)."""
    platform = tmp_path / "typo.toml"
    platform.write_text(
        'extends = "rans"\nname = "typo"\n[engines.throughput]\nsobell = "3 GB/s"\n'
    )
    result = ndpkit("evaluate", "lc", "--size", "1 MiB", "--platforms", str(platform), "-f", "json")
    assert result.returncode == 0, result.stderr
    expected = (
        f"{platform}: engines.throughput.sobell: no app ndpkit ships (did you mean 'sobel'?); "
        "evaluate runs ndpkit's apps alone, so it is not used"
    )
    assert f"warning: {expected}" in result.stderr
    assert json.loads(result.stdout)["warnings"] == [expected]


def test_a_platform_whose_host_draws_no_power_is_a_warning(ndpkit, tmp_path: Path) -> None:
    """A first platform file without host powers: evaluate printed LC at 2,806 MB/J on it,
    its host charged nothing, without a word."""
    platform = tmp_path / "box.toml"
    platform.write_text(
        'name = "box"\n[host]\ncores_per_socket = 8\nfrequency = "3 GHz"\n'
        '[host_link]\nbandwidth = "16 GB/s"\n[storage]\ncount = 4\nread_bandwidth = "3 GB/s"\n'
        '[engines]\nkind = "arm"\ncount = 4\npower_active = "5 W"\n'
    )
    result = ndpkit("evaluate", "lc", "--size", "1 MiB", "--platforms", str(platform), "-f", "json")
    assert result.returncode == 0, result.stderr
    (warning,) = json.loads(result.stdout)["warnings"]
    assert warning.startswith(f"{platform}: host: no power_active or power_idle: ")
    assert f"warning: {warning}" in result.stderr
