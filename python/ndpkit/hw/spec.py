"""The base of every hardware spec: strict, immutable, unknown keys rejected."""

from __future__ import annotations

import difflib
import re
import types
import weakref
from typing import Annotated, Any, Generic, TypeVar, Union, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic._internal._model_construction import ModelMetaclass

from ndpkit.errors import SpecError, closest


class _RefusedAsSpecs(ModelMetaclass):
    """Calling the class (building a model by hand) turns pydantic's ValidationError into
    one SpecError naming the model and the field. Not `__init__`: pydantic calls an
    overridden `__init__` for every nested model it validates too, without the validation
    context the platform loader passes (`si`), so the loaders would break."""

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        # `self` is the class called (this is its metaclass)
        try:
            return super().__call__(*args, **kwargs)
        except ValidationError as exc:
            raise spec_error(exc, self.__name__, model=cast("type[BaseModel]", self)) from None


class HandBuilt(BaseModel, metaclass=_RefusedAsSpecs):
    """A model that, built by hand in Python (`Link(bandwidth="-3 GB/s")`), refuses a bad
    value as its file would: one SpecError naming the model and the field, not pydantic's
    report of several lines and links. The loaders validate with `model_validate`, which
    does not come here, and name the file instead.

    No subclass may override `__init__`: pydantic then builds it, nested in a file's table,
    by calling the class, which comes here, and the file's error was this SpecError naming
    the class, past the loader's `except ValidationError` (which names the file)."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if cls.__pydantic_custom_init__:
            raise TypeError(
                f"{cls.__name__} overrides __init__, which a HandBuilt model may not: "
                "check its values in a validator"
            )


_Where = TypeVar("_Where")


class LoadedFrom(Generic[_Where]):
    """Where each live model was loaded from (a file, its table), by identity, dropped when
    the model is: not a field or a private attribute, which would make a loaded model
    unequal to the same one built in code."""

    def __init__(self) -> None:
        self._where: dict[int, _Where] = {}

    def note(self, model: BaseModel, where: _Where) -> None:
        self._where[id(model)] = where
        weakref.finalize(model, self._where.pop, id(model), None)

    def get(self, model: BaseModel) -> _Where | None:
        return self._where.get(id(model))


class Spec(HandBuilt):
    """A declared piece of hardware. Field aliases are the keys a TOML file uses."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        populate_by_name=True,
        validate_default=False,
        # TOML's inf and nan are floats; no hardware has an infinite or undefined figure.
        allow_inf_nan=False,
    )


def check_busy_power(active_w: float, idle_w: float | None, active_key: str) -> None:
    """Refuse a busy power below the idle one: form B of the energy model (O1) charges the
    host P_active - P_idle, which would then be negative, and elsewhere a part that draws
    less working than waiting is almost surely a swapped pair."""
    if idle_w is not None and active_w < idle_w:
        idle_key = "channel_power_idle" if active_key.startswith("channel_") else "power_idle"
        raise FieldValueError(
            active_key,
            f"{active_key} ({active_w:g} W) is below {idle_key} ({idle_w:g} W): a part "
            "draws at least its idle power while busy (are the two swapped?)",
            others=(idle_key,),
        )


def as_written(value: Any) -> str:
    """A parsed TOML value as the file spells it (`true`, not Python's `True`)."""
    return str(value).lower() if isinstance(value, bool) else repr(value)


def reported_error(exc: ValidationError) -> Any:
    """The one of pydantic's errors a message reports: an unknown key first, since a
    misspelt one ("alpah") also makes its real one missing, and "alpha: required field is
    missing" would hide the cause."""
    errors = exc.errors()
    return next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])


class FieldValueError(ValueError):
    """A check across fields (a model validator's, where pydantic reports no field) that
    names the field to blame, e.g. `shards.3.offset`."""

    def __init__(self, field: str, message: str, *, others: tuple[str, ...] = ()):
        super().__init__(message)
        self.field = field
        self.fields = (field, *others)
        """Every field the check compares, `field` first: a file that extends another is
        blamed for the one it wrote (`storage.count`, where `field` is `engines.count`)."""


def spec_error(
    exc: ValidationError,
    source: str,
    *,
    model: type[BaseModel] | None = None,
    top_keys: tuple[str, ...] = (),
) -> SpecError:
    """Pydantic's report as one SpecError naming the first bad field (and how many more).

    With the `model` that was validated, an unknown key gets the closest valid key, or
    the list of valid keys at that place; `top_keys` are valid at the top level besides the
    model's (a platform file's `extends`, which the loader takes out)."""
    first = reported_error(exc)
    field = ".".join(str(part) for part in first["loc"]) or "(top level)"
    blamed = first.get("ctx", {}).get("error")
    if isinstance(blamed, FieldValueError):  # in the table where the check failed
        field = ".".join([*(str(part) for part in first["loc"]), blamed.field])
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "missing":
        message = "required field is missing"
    elif first["type"] == "extra_forbidden":
        message = "unknown field" + _unknown_key_hint(model, first["loc"], top_keys)
    elif first["type"] == "bool_type":  # pydantic's "a valid boolean" names no spelling
        message = f"expected true or false, got {first['input']!r}"
    elif first["type"] == "literal_error":  # "Input should be 'arm', …" named no value given
        message = _literal_message(first["input"], first.get("ctx", {}).get("expected", ""))
    elif first["type"] in ("model_type", "model_attributes_type", "dict_type"):
        # Pydantic names its classes ("instance of StorageDevice"); a file has tables.
        message = f"expected a table of keys, got {first['input']!r}"
    elif first["type"] == "string_type":  # "Input should be a valid string" named no value
        message = f"expected a string (in quotes), got {as_written(first['input'])}"
    elif message.startswith("Input should be") and not isinstance(first.get("input"), dict):
        # pydantic's "Input should be greater than or equal to 1" named no value given
        message += f", got {as_written(first.get('input'))}"
    more = len(exc.errors()) - 1
    if more:
        message += f" (and {more} more problem{'s' if more > 1 else ''})"
    return SpecError(message, source=source, field=field)


def _literal_message(given: Any, expected: str) -> str:
    """A value outside a fixed set (`kind = "ARM"`), with the value given and the closest
    choice: pydantic's "Input should be 'arm', 'fpga' or 'cpu'" said neither, where a
    profile's engine table says "did you mean 'arm'?" of the same typo."""
    choices = re.findall(r"'([^']*)'", expected)
    message = f"must be {expected}, got {as_written(given)}"
    if not isinstance(given, str) or not choices:
        return message
    guess = closest(given, choices, cutoff=0.7)
    return message + (f"; did you mean {guess!r}?" if guess else "")


def _unknown_key_hint(
    model: type[BaseModel] | None, loc: tuple[str | int, ...], top_keys: tuple[str, ...] = ()
) -> str:
    keys = None if model is None or not loc else _keys_at(model, loc[:-1])
    if keys and len(loc) == 1:
        keys = sorted({*keys, *top_keys})
    if not keys:
        return " (check the spelling)"
    close = difflib.get_close_matches(str(loc[-1]), keys, n=1)
    if close:
        return f"; did you mean {close[0]!r}?"
    return f"; valid keys here: {', '.join(keys)}"


def _keys_at(model: type[BaseModel], path: tuple[str | int, ...]) -> list[str] | None:
    """The keys a file may write in the table at `path` inside `model` (None if that is
    not a table of known keys, e.g. a free `throughput` table)."""
    node: Any = model
    for part in path:
        node = _unwrap(node)
        if isinstance(node, type) and issubclass(node, BaseModel):
            fields = node.model_fields
            name = next((n for n, f in fields.items() if part in (n, f.alias)), None)
            if name is None:
                return None
            node = fields[name].annotation
        elif get_origin(node) is dict:
            node = get_args(node)[1]
        else:
            return None
    node = _unwrap(node)
    if isinstance(node, type) and issubclass(node, BaseModel):
        return sorted(f.alias or n for n, f in node.model_fields.items())
    return None


def _unwrap(annotation: Any) -> Any:
    """`X` from `Annotated[X, ...]` and from `X | None`."""
    if get_origin(annotation) is Annotated:
        return _unwrap(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        options = [a for a in get_args(annotation) if a is not type(None)]
        if len(options) == 1:
            return _unwrap(options[0])
    return annotation
