"""Preset name or file: a bare name is always a preset's (whatever is in the current
directory), a `.toml` name or one with a `/` is a file, and `extends` paths are relative to
the file that names them."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from ndpkit.errors import SpecError, UnknownNameError
from ndpkit.hw.loader import load_platform
from ndpkit.profile import load_profiles


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_directory_named_like_a_preset_does_not_hide_it(here: Path) -> None:
    """`rans/` and `cns/` here: `rans` is still the preset, and so is the `cns` that the
    presets extend."""
    (here / "rans").mkdir()
    (here / "cns").mkdir()
    assert load_platform("rans").name == "rans"
    assert load_platform("rfns").name == "rfns"  # rfns → … → cns


def test_a_file_named_like_a_preset_does_not_hide_it(here: Path) -> None:
    (here / "rans").write_text('name = "evil"\n')
    assert load_platform("rans").name == "rans"
    (here / "kid.toml").write_text('extends = "rans"\nname = "kid"\n')
    assert load_platform("kid.toml").name == "kid"
    with pytest.raises(SpecError, match="host") as caught:
        load_platform("./rans")  # the file, which is no whole platform
    assert caught.value.source == "./rans"


def test_a_file_without_toml_given_bare_is_unknown_with_a_hint(here: Path) -> None:
    (here / "edge16").write_text('extends = "rans"\nname = "edge16"\n')
    with pytest.raises(UnknownNameError, match=r"give it as \./edge16"):
        load_platform("edge16")
    assert load_platform("./edge16").name == "edge16"


def test_a_bare_name_beside_its_toml_file_says_to_give_the_file(here: Path) -> None:
    """`-p edge16` beside `edge16.toml`, as a user types it after writing the file: the
    error says which file is meant, not only the presets."""
    (here / "edge16.toml").write_text('extends = "rans"\nname = "edge16"\n')
    with pytest.raises(UnknownNameError, match=r"a file 'edge16.toml' is here: give it as edge16"):
        load_platform("edge16")
    with pytest.raises(UnknownNameError) as caught:
        load_platform("a" * 252)  # with ".toml" a name too long for the system: no hint
    assert "is here" not in str(caught.value)


def test_extends_with_a_slash_is_relative_to_the_file(here: Path) -> None:
    (here / "t1").mkdir()
    (here / "t1" / "parent").write_text('extends = "rans"\nname = "parent"\n')
    (here / "t1" / "child.toml").write_text('extends = "./parent"\nname = "child"\n')
    assert load_platform("t1/child.toml").name == "child"  # from here, not from t1/
    (here / "t1" / "orphan.toml").write_text('extends = "./nowhere"\nname = "orphan"\n')
    with pytest.raises(SpecError, match="file not found: t1/nowhere") as caught:
        load_platform("t1/orphan.toml")
    assert caught.value.source == "t1/orphan.toml"


@pytest.mark.parametrize("name", ["", "  "])
def test_an_empty_name_says_so(here: Path, name: str) -> None:
    with pytest.raises(SpecError, match="is empty"):
        load_platform(name)
    (here / "blank.toml").write_text(f'extends = "{name}"\nname = "blank"\n')
    with pytest.raises(SpecError, match="extends: is empty") as caught:
        load_platform("blank.toml")
    assert caught.value.source == "blank.toml"


def test_a_file_named_with_a_trailing_slash_is_not_taken(here: Path) -> None:
    (here / "mine.toml").write_text('extends = "rans"\nname = "mine"\n')
    with pytest.raises(SpecError, match="not a directory") as caught:
        load_platform("mine.toml/")
    assert caught.value.source == "mine.toml/"
    (here / "kid.toml").write_text('extends = "mine.toml/"\nname = "kid"\n')
    with pytest.raises(SpecError, match="not a directory") as caught:
        load_platform("kid.toml")  # in an extends too
    with pytest.raises(SpecError, match="file not found") as caught:
        load_platform("missing/")
    assert caught.value.source == "missing/"


def test_a_path_object_is_always_a_file(here: Path) -> None:
    """Only text can say "./rans"; a Path has lost the "./", so a Path is taken as a file."""
    (here / "edge16").write_text('extends = "rans"\nname = "edge16"\n')
    assert load_platform(Path("edge16")).name == "edge16"
    with pytest.raises(SpecError, match="file not found"):
        load_platform(Path("./rans"))


def test_profile_sets_follow_the_same_rule(here: Path) -> None:
    shipped = load_profiles("rans-rfns")
    (here / "rans-rfns").write_text("not a profile set")
    assert load_profiles("rans-rfns") == shipped
    shipped_text = resources.files("ndpkit.profiles").joinpath("rans-rfns.toml").read_text()
    (here / "mine").write_text(shipped_text)
    with pytest.raises(UnknownNameError, match=r"give it as \./mine"):
        load_profiles("mine")
    assert load_profiles("./mine").apps == shipped.apps
    assert load_profiles(Path("mine")).apps == shipped.apps
    (here / "measured.json").write_text("{}")
    with pytest.raises(UnknownNameError, match=r"'measured.json' is here: give it as measured"):
        load_profiles("measured")


def test_a_profile_set_and_a_platform_file_given_for_each_other_say_so(here: Path) -> None:
    """`-p my-profiles.toml` was 'apps: unknown field; valid keys here: description, engines,
    …' and `--profiles edge16.toml` 'name: unknown field; valid keys here: apps, …': the
    mix-up was left to be guessed."""
    (here / "p.toml").write_text('[apps.scan]\ndata_size = "2 TB"\nalpha = 20\n')
    (here / "edge.toml").write_text('extends = "rans"\nname = "edge"\n')
    with pytest.raises(SpecError) as caught:
        load_platform("p.toml")
    assert str(caught.value) == (
        "p.toml: is a profile set (a table `apps`), not a platform file: give it with "
        "--profiles, and the platform with -p"
    )
    (here / "kid.toml").write_text('extends = "p.toml"\nname = "kid"\n')
    with pytest.raises(SpecError) as caught:
        load_platform("kid.toml")
    assert str(caught.value) == (
        "kid.toml: extends: p.toml is a profile set (a table `apps`), not a platform file"
    )
    with pytest.raises(SpecError) as caught:
        load_profiles("edge.toml")
    assert str(caught.value) == (
        "edge.toml: is a platform file, not a profile set (a table `apps`): give it with -p, "
        "and the profiles with --profiles"
    )
    assert load_platform("edge.toml").name == "edge" and set(load_profiles("p.toml").apps) == {
        "scan"
    }


def test_a_preset_written_with_toml_says_how_to_name_it(here: Path) -> None:
    """`extends = "rans.toml"` is a path (it ends in .toml), so it was "file not found:
    rans.toml" with no word of the preset meant."""
    (here / "kid.toml").write_text('extends = "rans.toml"\nname = "kid"\n')
    with pytest.raises(SpecError) as info:
        load_platform("kid.toml")
    assert (info.value.source, info.value.field) == ("kid.toml", "extends")
    assert info.value.detail.endswith("the preset 'rans' is named without .toml: write 'rans'")
    with pytest.raises(SpecError, match=r"named without \.toml: write 'rfns'"):
        load_platform("rfns.toml")
    with pytest.raises(SpecError) as other:
        load_platform("edge.toml")  # no preset of that name: no hint
    assert other.value.detail == "file not found"


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "is empty or blank"),
        (" ", "is empty or blank"),
        ("\t  ", "is empty or blank"),  # was accepted, and printed as such in every report
        # passed the blank-name rule, matched no lookup by name, and looked like "rans"
        ("rans ", "has spaces at its start or end"),
        (" edge", "has spaces at its start or end"),
        ("\tedge", "has spaces at its start or end"),
    ],
)
def test_a_blank_or_padded_name_is_refused(here: Path, name: str, why: str) -> None:
    (here / "named.toml").write_text(f'extends = "rans"\nname = "{name}"\n')
    with pytest.raises(SpecError) as info:
        load_platform("named.toml")
    assert info.value.field == "name"
    assert f"{why}, got {name!r}" in info.value.detail


def test_a_name_with_spaces_inside_is_kept(here: Path) -> None:
    (here / "inside.toml").write_text('extends = "rans"\nname = "my server"\n')
    assert load_platform("inside.toml").name == "my server"
