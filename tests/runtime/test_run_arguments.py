"""`LocalExecutor.run`'s arguments, checked before any worker starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ndpkit.errors import SpecError
from ndpkit.kernels import get_kernel
from ndpkit.runtime import LocalExecutor, generate_dataset


@pytest.mark.parametrize("params", [None, "weights"], ids=repr)
def test_params_that_are_no_dict_are_named(tmp_path: Path, params: Any) -> None:
    """None ended in "argument of type 'NoneType' is not iterable" from the kernel's init."""
    kernel = get_kernel("lc")
    dataset = generate_dataset(kernel, 4096, 2, tmp_path / "lc")
    with pytest.raises(SpecError, match=r"^params: must be a dict of the kernel's parameters"):
        LocalExecutor(1).run(kernel, dataset, params)
