"""`errors.brief` (a library's error quoted in ours, short) and `errors.finite_number`."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from ndpkit.errors import SpecError, UnknownNameError, brief, finite_number


def test_brief_keeps_the_first_line_with_blanks_closed_up() -> None:
    assert brief(ValueError("bad   header:  'x'      \nsecond line")) == "bad header: 'x'"


def test_brief_cuts_a_long_message() -> None:
    text = brief(ValueError("y" * 500), limit=50)
    assert len(text) == 50 and text.endswith("…")


def test_brief_names_the_type_of_an_empty_message() -> None:
    assert brief(KeyError()) == "KeyError"
    assert brief(OSError("   ")) == "OSError"


@pytest.mark.parametrize("value", [0, -1.5, float("nan"), float("inf"), 10**400, True, "1", None])
def test_finite_number_refuses_what_is_no_finite_number_above_its_floor(value: object) -> None:
    # 10**400 raised OverflowError from math.isfinite in the helpers this one replaced.
    with pytest.raises(SpecError) as caught:
        finite_number(value, "model_bytes", "a finite number > 0", above=0)
    assert caught.value.field == "model_bytes"
    assert f"must be a finite number > 0, got {value!r}" in str(caught.value)


def test_finite_number_takes_any_real_at_or_past_its_floor() -> None:
    assert finite_number(0, "x", "≥ 0", least=0) == 0.0
    assert finite_number(np.float32(0.5), "x", "> 0", above=0) == 0.5
    assert finite_number(Fraction(1, 4), "x", "> 0", above=0) == 0.25
    assert finite_number(np.int64(3), "x", "> 0", above=0) == 3.0


@pytest.mark.parametrize(
    ("name", "guess"),
    [("CNS", "cns"), ("knn88", "knn8"), (" Rans", "rans"), ("zzz", None), ("", None)],
)
def test_an_unknown_name_guesses_the_one_meant(name: str, guess: str | None) -> None:
    known = ["cns", "rans", "rfns", "knn8"]
    message = str(UnknownNameError("platform", name, known))
    assert message.startswith(f"unknown platform {name!r}; known: cns, rans, rfns, knn8")
    if guess is None:
        assert "did you mean" not in message
    else:
        assert message.endswith(f"; did you mean {guess!r}?")


def test_a_callers_hint_replaces_the_guess() -> None:
    message = str(UnknownNameError("app", "knn8-topk", ["knn8"], source="s", hint="measure it"))
    assert message == "s: unknown app 'knn8-topk'; known: knn8; measure it"
