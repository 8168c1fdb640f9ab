"""`sensitivity(0.1, 1.0)` (the SFs, not their analyses) ended in "'float' object has no
attribute 'columns'": it names the argument."""

from __future__ import annotations

import pytest

from ndpkit.errors import SpecError
from ndpkit.tpc.analysis import sensitivity


def test_sensitivity_names_an_argument_that_is_not_an_analysis() -> None:
    with pytest.raises(SpecError) as e:
        sensitivity(0.1, 1.0)  # type: ignore[arg-type]
    assert e.value.field == "a"
    assert "analyse(sf)" in str(e.value)
