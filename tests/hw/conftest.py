"""Fixtures shared by the platform-file tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ndpkit.errors import SpecError
from ndpkit.hw import load_platform


@pytest.fixture
def platform_error(tmp_path: Path) -> Callable[..., SpecError]:
    """`platform_error(body, name="mine.toml")`: write `body` as a platform file in
    `tmp_path`, load it, and return the SpecError it must raise."""

    def load(body: str, name: str = "mine.toml") -> SpecError:
        path = tmp_path / name
        path.write_text(body, encoding="utf-8")
        with pytest.raises(SpecError) as info:
            load_platform(path)
        return info.value

    return load
