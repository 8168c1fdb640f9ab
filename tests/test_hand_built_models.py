"""Platform parts, profiles and a data set's manifest built by hand in Python refuse bad
values as their files do: one SpecError naming the model and the field, not pydantic's
multi-line ValidationError."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field, ValidationError

from ndpkit.errors import SpecError
from ndpkit.hw import Engine, Link, StorageDevice
from ndpkit.hw.spec import Spec
from ndpkit.profile import Profile, ProfileSet
from ndpkit.runtime import Manifest, ShardEntry


@pytest.mark.parametrize(
    ("model", "fields", "field", "message"),
    [
        (Link, {"bandwidth": "-3 GB/s"}, "bandwidth", "must be greater than zero"),
        (Profile, {"app": "x", "data_size": "1 GB", "alpha": 0}, "alpha", "greater than 0"),
        (Profile, {"app": "x", "data_size": "1 GB", "alpah": 2}, "alpah", "did you mean 'alpha'"),
        (Profile, {"app": "x", "alpha": 2}, "data_size", "required field is missing"),
        (ProfileSet, {"apps": {"x": 3}}, "apps.x", "expected a table of keys"),
        (
            ShardEntry,
            {
                "device": -1,
                "index": 0,
                "path": "x",
                "records": 1,
                "offset": 0,
                "file_bytes": 1,
                "crc32": "00000000",
            },
            "device",
            "greater than or equal to 0",
        ),
        (Manifest, {"app": "knn8"}, "seed", "required field is missing"),
    ],
)
def test_a_bad_value_is_one_spec_error_naming_the_model_and_field(
    model: Any, fields: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(SpecError) as caught:
        model(**fields)
    error = caught.value
    assert (error.source, error.field) == (model.__name__, field)
    assert message in error.detail, str(error)
    assert "\n" not in str(error) and "pydantic" not in str(error), str(error)


def test_good_values_build_the_same_model_as_validation() -> None:
    fields = {"app": "x", "data_size": "1 GB", "alpha": 2, "host_part": "1 GB/s"}
    assert Profile(**fields) == Profile.model_validate(fields)
    assert Link(bandwidth="3 GB/s") == Link.model_validate({"bandwidth": "3 GB/s"})


def test_every_spec_is_built_the_same_way() -> None:
    """The check lives in their common base, so a part added later has it too."""
    for model in (Engine, StorageDevice, Link, Profile, ProfileSet, Manifest, ShardEntry):
        with pytest.raises(SpecError, match=rf"^{model.__name__}: "):
            model(no_such_field=1)


def test_a_part_may_not_override_init() -> None:
    """Pydantic builds a model that overrides `__init__`, nested in a file's table, by
    calling its class, whose refusal is then the hand-built one, naming the class where the
    loader names the file (a SpecError the loader's `except ValidationError` let through)."""
    with pytest.raises(TypeError, match="Inner overrides __init__"):

        class Inner(Spec):
            x: int = Field(gt=0)

            def __init__(self, **data: Any) -> None:
                super().__init__(**data)

    class Checked(Spec):  # the way: a validator, which nested validation runs as it is
        x: int = Field(gt=0)

    class Outer(Spec):
        inner: Checked

    with pytest.raises(ValidationError, match=r"inner\.x"):
        Outer.model_validate({"inner": {"x": -1}})
