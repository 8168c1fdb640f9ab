"""`ndpkit evaluate` end to end on small data, through the installed command."""

from __future__ import annotations

import json

import pytest


def test_evaluate_json_runs_verifies_and_models(ndpkit) -> None:
    result = ndpkit("evaluate", "lc", "binarize", "--size", "1 MiB", "--format", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    apps = {a["app"]: a for a in doc["apps"]}
    assert set(apps) == {"lc", "binarize"}
    for app in apps.values():
        assert app["verified"] is True
        assert set(app["estimates"]) == {"cns", "rans", "rfns"}
        cns = app["estimates"]["cns"]
        assert cns["split"] == "host" and cns["time_s"] > 0
        assert app["plans"]["rfns"]["engines_on"] <= app["plans"]["rfns"]["engines_total"]
    # LC's device part emits one byte-sized label per 8 float32 features (α = 32/… ≥ 8).
    assert apps["lc"]["measurement"]["alpha"] >= 8
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
        (("nosuchapp",), "unknown app 'nosuchapp'"),
        (("lc", "--size", "1 MiZ"), "--size"),
        (("lc", "--size", "1 MiB", "--platforms", "nosuch"), "unknown platform 'nosuch'"),
        (("lc", "--data", "/nonexistent/dataset"), "/nonexistent/dataset"),
    ],
)
def test_evaluate_bad_input_exits_2(ndpkit, args: tuple[str, ...], needle: str) -> None:
    result = ndpkit("evaluate", *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert needle in result.stderr
    assert "Traceback" not in result.stderr
