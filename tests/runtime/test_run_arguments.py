"""`LocalExecutor.run`'s arguments, checked before any worker starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ndpkit.errors import SpecError
from ndpkit.kernels import get_kernel
from ndpkit.runtime import LocalExecutor, engine_devices, generate_dataset


@pytest.mark.parametrize("params", [None, "weights"], ids=repr)
def test_params_that_are_no_dict_are_named(tmp_path: Path, params: Any) -> None:
    """None ended in "argument of type 'NoneType' is not iterable" from the kernel's init."""
    kernel = get_kernel("lc")
    dataset = generate_dataset(kernel, 4096, 2, tmp_path / "lc")
    with pytest.raises(SpecError, match=r"^params: must be a dict of the kernel's parameters"):
        LocalExecutor(1).run(kernel, dataset, params)


@pytest.mark.parametrize("devices", [2.0, "2", 0], ids=repr)
def test_engine_devices_names_a_device_count_that_is_no_whole_number(devices: Any) -> None:
    """2.0 was "'float' object cannot be interpreted as an integer" from range()."""
    with pytest.raises(SpecError, match=r"^devices: must be a whole number of devices ≥ 1"):
        engine_devices(devices, None, None)
    assert engine_devices(np.int64(2), None, None) == {0: (0,), 1: (1,)}


@pytest.mark.parametrize(
    ("field", "value"),
    [("workers", 0), ("workers", 1.5), ("mapped_budget_bytes", -1), ("mapped_budget_bytes", 2.0)],
    ids=repr,
)
def test_settings_set_after_construction_are_checked_as_in_it(field: str, value: Any) -> None:
    """`ex.workers = 0` was a ZeroDivisionError at the next run, and
    `ex.mapped_budget_bytes = -1` failed every worker's start, an error that blamed the
    script's `if __name__ == "__main__":` guard."""
    executor = LocalExecutor(2, mapped_budget_bytes=0)
    with pytest.raises(SpecError, match=rf"^{field}: must be "):
        setattr(executor, field, value)
    assert (executor.workers, executor.mapped_budget_bytes) == (2, 0)
    setattr(executor, field, np.int64(3))
    assert getattr(executor, field) == 3
