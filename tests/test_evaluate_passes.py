"""An iterative app's predictions cover every pass it ran: its measured rates are per byte
streamed, so the models see D x passes bytes; a one-pass app is modelled at D as before."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ndpkit import evaluate as ev
from ndpkit.errors import SpecError
from ndpkit.hw import load_platform
from ndpkit.kernels import Kernel
from ndpkit.kernels.kmeans import KMeansKernel
from ndpkit.model import Estimate, estimate
from ndpkit.runtime import generate_dataset, profiling
from ndpkit.runtime.profiling import Measurement, to_profile

PLATFORMS = ["cns", "rfns", "risp-64ch"]


def _steady_measure(
    kernel: Kernel, data: np.ndarray, params: dict[str, Any], **_: Any
) -> Measurement:
    """The real passes, α and bytes, but the same seconds per pass on every run: the
    ratios below are then exact, not at the mercy of a shared machine's timing."""
    m = profiling.measure(kernel, data, params, repeat=1, counters=None)
    return replace(m, device_s=0.01 * m.passes, host_s=0.001 * m.passes)


def _kmeans(monkeypatch: pytest.MonkeyPatch, max_iter: int) -> ev.AppRun:
    params = KMeansKernel.params
    monkeypatch.setattr(
        KMeansKernel, "params", lambda self, seed: params(self, seed) | {"max_iter": max_iter}
    )
    monkeypatch.setattr(ev, "measure", _steady_measure)
    (run,) = ev.evaluate(["kmeans"], PLATFORMS, size_bytes=1 << 20)
    return run


def _estimates(run: ev.AppRun) -> dict[str, Estimate]:
    found = {name: e for name, e in run.estimates.items() if isinstance(e, Estimate)}
    assert set(found) == set(PLATFORMS), run.estimates
    return found


def test_kmeans_time_and_energy_scale_with_its_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    one, ten = _kmeans(monkeypatch, 1), _kmeans(monkeypatch, 10)
    assert (one.passes, ten.passes) == (1, 10)
    assert one.model_bytes == ten.model_bytes == 0.3e9  # RISP's D for K-Means, read per pass
    assert ten.modelled_bytes == pytest.approx(3e9)
    first, tenth = _estimates(one), _estimates(ten)
    for name in PLATFORMS:
        assert tenth[name].data_bytes == pytest.approx(10 * first[name].data_bytes)
        assert tenth[name].time_s == pytest.approx(10 * first[name].time_s, rel=1e-9), name
        # RISP's cells add a fixed pipeline fill (15 cycles), hence the looser bound.
        assert tenth[name].energy_j == pytest.approx(10 * first[name].energy_j, rel=1e-5), name
    rows = {r["platform"]: r for r in ev.predicted_rows(ten)}
    assert rows["cns"]["passes"] == 10
    assert rows["cns"]["modelled_gb"] == pytest.approx(3.0)
    assert rows["cns"]["model_gb"] == pytest.approx(0.3)
    # MB/J counts the data set once: ten passes cost ten times the joules for the same D.
    first_rows = {r["platform"]: r for r in ev.predicted_rows(one)}
    assert rows["cns"]["ee_mb_per_j"] == pytest.approx(first_rows["cns"]["ee_mb_per_j"] / 10)
    doc = ev.document([ten])["apps"][0]
    assert doc["passes"] == 10 and doc["modelled_bytes"] == pytest.approx(3e9)
    assert doc["predicted"]["cns"]["modelled_gb"] == pytest.approx(3.0)


def test_a_one_pass_app_is_modelled_at_d(monkeypatch: pytest.MonkeyPatch) -> None:
    """LC reads its data once: the profile's size is the paper's D, as before passes counted."""
    monkeypatch.setattr(ev, "measure", _steady_measure)
    (run,) = ev.evaluate(["lc"], ["cns", "rfns"], size_bytes=1 << 20)
    assert run.passes == 1 and run.modelled_bytes == run.model_bytes == 37 * 2**30
    for name in ("cns", "rfns"):
        spec = load_platform(name)
        once = to_profile(run.measurement, data_bytes=run.model_bytes, target_host=spec.host)
        assert once.data_bytes == 37 * 2**30
        e = run.estimates[name]
        assert isinstance(e, Estimate)
        assert e.time_s == estimate(spec, once).time_s
        assert e.energy_j == estimate(spec, once).energy_j


def test_to_profile_models_d_once_per_pass() -> None:
    m = Measurement(
        app="x",
        input_bytes=4_000_000,
        output_bytes=4_000,
        device_s=0.04,
        host_s=0.004,
        host_frequency_hz=2e9,
        passes=4,
    )
    assert m.data_bytes == 1_000_000
    assert to_profile(m).data_bytes == 4_000_000  # the profiled data, four times
    assert to_profile(m, data_bytes=1e9).data_bytes == 4e9
    assert to_profile(m, data_bytes=1e9, passes=2).data_bytes == 2e9
    assert "data_size = D x 4 passes" in to_profile(m).description
    with pytest.raises(SpecError, match="passes: must be at least 1"):
        to_profile(m, passes=0)


def test_on_a_data_set_the_runs_passes_are_modelled(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Profiling measures the data set's first bytes, which may settle in fewer passes than
    the whole: the passes modelled are the run's over the whole data set."""
    data = generate_dataset("kmeans", 1 << 20, 2, tmp_path / "km", seed=5, shard_bytes=300_000)
    # On a data set the initial centres come from its sample (`params_for_data`).
    params = KMeansKernel.params_for_data
    monkeypatch.setattr(
        KMeansKernel,
        "params_for_data",
        lambda self, sample, seed: params(self, sample, seed) | {"max_iter": 3},
    )

    def one_pass(kernel: Kernel, sample: np.ndarray, p: dict[str, Any], **_: Any) -> Measurement:
        m = _steady_measure(kernel, sample, p)
        return replace(
            m, input_bytes=m.data_bytes, output_bytes=m.output_bytes // m.passes, passes=1
        )

    monkeypatch.setattr(ev, "measure", one_pass)
    (run,) = ev.evaluate(["kmeans"], ["cns"], data=data, workers=1, verify_shards=False)
    assert run.measurement.passes == 1 and run.passes == 3
    e = run.estimates["cns"]
    assert isinstance(e, Estimate) and e.data_bytes == pytest.approx(3 * 0.3e9)
