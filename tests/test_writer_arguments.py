"""The writers of platform and profile files name an argument of the wrong kind:
`platform_toml("rfns")` ended in "'str' object has no attribute 'name'", and
`file_document("he")` in "type object 'str' has no attribute 'model_fields'"."""

from __future__ import annotations

import pytest

from ndpkit.errors import SpecError
from ndpkit.hw import load_platform, platform_toml
from ndpkit.profile import file_document, load_profile


def test_platform_toml_names_a_platform_of_the_wrong_kind() -> None:
    with pytest.raises(SpecError) as e:
        platform_toml("rfns")  # type: ignore[arg-type]
    assert e.value.field == "platform"
    assert "name = " in platform_toml(load_platform("rfns"), name="mine")


def test_file_document_names_a_model_of_the_wrong_kind() -> None:
    with pytest.raises(SpecError) as e:
        file_document("he")  # type: ignore[arg-type]
    assert e.value.field == "model"
    assert file_document(load_profile("he"))["alpha"] == load_profile("he").alpha
