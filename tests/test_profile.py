"""Profiles: the shipped paper set and a user's files."""

import math
import re
from pathlib import Path

import pytest

from ndpkit.errors import SpecError, UnknownNameError
from ndpkit.profile import load_profile, load_profiles, save_profiles

GIB = 2**30


def test_paper_profiles_have_section_8_1_inputs() -> None:
    apps = load_profiles("rans-rfns").apps
    assert set(apps) == {"lc", "he", "fft2d", "knn2", "knn6", "knn8"}
    assert apps["lc"].data_bytes == 37 * GIB
    assert apps["he"].alpha == 1
    assert apps["fft2d"].data_bytes == pytest.approx(238.54 * 2**20)
    assert math.isinf(apps["lc"].host_stage_bytes_per_s)
    assert apps["knn2"].host_stage_bytes_per_s == pytest.approx(130 * GIB / 0.62)
    assert apps["knn6"].published_ndp_time_s["rans"] == 51.21


def test_user_profile_file(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('[apps.scan]\ndata_size = "1 TB"\nalpha = 100\nengine = { arm = "1 GB/s" }\n')
    profile = load_profile("scan", path)
    assert profile.data_bytes == 1e12 and profile.engine_bytes_per_s["arm"] == 1e9


def test_json_profile_file(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"apps": {"scan": {"data_size": "1 GB", "alpha": 2}}}')
    assert load_profile("scan", path).alpha == 2


@pytest.mark.parametrize("name", ["P.JSON", "p.Json"])
def test_a_json_suffix_in_capitals_is_read_as_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Read as TOML ("malformed TOML" for valid JSON), and named without a directory it was
    taken for a shipped profile set's name."""
    (tmp_path / name).write_text('{"apps": {"scan": {"data_size": "1 GB", "alpha": 2}}}')
    monkeypatch.chdir(tmp_path)
    assert load_profile("scan", name).alpha == 2


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ('{"apps": {"scan": {"data_size": "1 GB", "alpha": 8, "alpha": 0.5}}}', "apps.scan.alpha"),
        ('{"apps": {"scan": {"data_size": "1 GB", "alpha": 8}, "scan": {}}}', "apps.scan"),
        ('{"apps": {"a": {"alpha": 8}, "b": {"alpha": 8, "x": 1, "alpha": 2}}}', "apps.b.alpha"),
        ('{"v": [{"k": 1}, {"k": 1, "k": 2}]}', "v[1].k"),
        ('{"": {"a": 1, "a": 2}}', ".a"),
        ('{"version": 1, "version": 1, "apps": {}}', "version"),
    ],
)
def test_a_json_key_named_twice_is_refused_as_toml_refuses_it(
    tmp_path: Path, body: str, key: str
) -> None:
    """json kept the last `alpha` without a word: the bottleneck and the plan changed, where
    the same TOML file is refused (found by an audit of evaluate and the profiles). The
    field is the key's whole path: every app has an `alpha`."""
    path = tmp_path / "dup.json"
    path.write_text(body)
    with pytest.raises(SpecError, match="named twice in one object") as caught:
        load_profiles(path)
    assert caught.value.source == str(path) and caught.value.field == key


@pytest.mark.parametrize(
    ("body", "field", "detail"),
    [
        ('[apps.x]\ndata_size = "1 GB"\nalpha = 0\n', "apps.x.alpha", "greater than 0, got 0"),
        ("[apps.x]\nalpha = 2\n", "apps.x.data_size", "required field is missing"),
        ('[apps.x]\ndata_size = "1 GB/s"\nalpha = 2\n', "apps.x.data_size", "'1 GB/s' is not"),
        ("[apps.x\n", None, "malformed TOML: "),  # no field: the file does not parse
    ],
)
def test_bad_profiles(tmp_path: Path, body: str, field: str | None, detail: str) -> None:
    """Each error names the file and the field (a match on part of the message passed
    whichever file or field it named, or none)."""
    path = tmp_path / "bad.toml"
    path.write_text(body)
    with pytest.raises(SpecError) as caught:
        load_profiles(path)
    assert (caught.value.source, caught.value.field) == (str(path), field)
    assert detail in caught.value.detail
    assert str(caught.value).startswith(f"{path}: ")


def test_unknown_app_lists_known() -> None:
    with pytest.raises(
        UnknownNameError,
        match=r"unknown app 'knn9'; known: fft2d, he, knn2, knn6, knn8, lc; did you mean 'knn8'",
    ):
        load_profile("knn9")


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ('engine = { arm = "inf GB/s" }', "apps.x.engine.arm", "not a finite number"),
        ('engine = { arm = "3e400 GB/s" }', "apps.x.engine.arm", "not a finite number"),
        ('engine = { arm = "GB/s" }', "apps.x.engine.arm", "has no number"),
        ('host_part = "0 GB/s"', "apps.x.host_part", "greater than zero"),
        ('host_only = "nan GB/s"', "apps.x.host_only", "not a finite number"),
        ("cycles_per_byte = inf", "apps.x.cycles_per_byte", "finite number"),
        ("cycles_per_byte = 1e-300", "apps.x.cycles_per_byte", "between"),
        ('published_ndp_time = { rans = "0 s" }', "apps.x.published_ndp_time.rans", "than zero"),
        ("fpga_cell = { bytes_per_cycle = inf }", "apps.x.fpga_cell.bytes_per_cycle", "finite"),
        # Said in the user's own size and time, not as the "8.59e+29 bit/s" made of them.
        (
            'host_part = { size = "1 GiB", time = "1e-20 s" }',
            "apps.x.host_part",
            "'1 GiB' in '1e-20 s' is 1.07e+29 bytes/s, out of range",
        ),
    ],
)
def test_a_value_that_cannot_be_right_is_an_error(
    tmp_path: Path, body: str, field: str, message: str
) -> None:
    path = tmp_path / "p.toml"
    path.write_text(f'[apps.x]\ndata_size = "1 GB"\nalpha = 2\n{body}\n')
    with pytest.raises(SpecError) as info:
        load_profiles(path)
    assert (info.value.source, info.value.field) == (str(path), field)
    assert message in info.value.detail


def test_toml_inf_and_json_infinity_are_no_alpha(tmp_path: Path) -> None:
    toml = tmp_path / "p.toml"
    toml.write_text('[apps.x]\ndata_size = "1 GB"\nalpha = inf\n')
    json = tmp_path / "p.json"
    json.write_text('{"apps": {"x": {"data_size": "1 GB", "alpha": Infinity}}}')
    for path in (toml, json):
        with pytest.raises(SpecError, match=r"apps\.x\.alpha: Input should be a finite number"):
            load_profiles(path)


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("p.toml", '[apps.x]\ndata_size = "1 GB"\nalpha = 2\n'),
        ("p.json", '{"apps": {"x": {"data_size": "1 GB", "alpha": 2}}}'),
    ],
)
def test_a_byte_order_mark_is_accepted(tmp_path: Path, name: str, body: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + body.encode())
    assert load_profile("x", path).alpha == 2


def test_a_file_that_is_not_utf8_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_bytes(b"[apps.x]\ndescription = '\xff'\n")
    with pytest.raises(SpecError, match="not UTF-8") as caught:
        load_profiles(path)
    assert caught.value.source == str(path)


def test_an_unknown_key_lists_the_profile_keys(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('[apps.x]\ndata_size = "1 GB"\nalpha = 2\nturbo = 1\n')
    with pytest.raises(SpecError) as info:
        load_profiles(path)
    assert info.value.field == "apps.x.turbo"
    assert "valid keys here: alpha, app, cpi" in info.value.detail
    assert "platforms show" not in info.value.detail


def test_a_misspelt_key_gets_the_closest(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('[apps.x]\ndata_size = "1 GB"\nalpha = 2\nhost_prat = "1 GB/s"\n')
    with pytest.raises(
        SpecError, match=r"apps\.x\.host_prat: unknown field; did you mean 'host_part'"
    ):
        load_profiles(path)


def test_an_app_missing_from_a_profile_set_names_the_set(tmp_path: Path) -> None:
    path = tmp_path / "mine.json"
    path.write_text('{"apps": {}}')
    with pytest.raises(
        UnknownNameError, match=re.escape(f"{path}: unknown app 'he'; known: (none)")
    ):
        load_profile("he", path)
    with pytest.raises(UnknownNameError, match=r"^profiles rans-rfns: unknown app 'hex'; known: "):
        load_profile("hex")


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("deep.json", '{"apps": ' + "[" * 100_000 + "]" * 100_000 + "}"),  # RecursionError
        ("deep.toml", "[apps.he]\nalpha = " + "[" * 100_000 + "]" * 100_000 + "\n"),
        ("deep40.json", '{"apps": {"he": {"alpha": ' + "[" * 40 + "]" * 40 + "}}}"),
    ],
)
def test_a_profile_set_nested_too_deeply_is_one_error(tmp_path: Path, name: str, body: str) -> None:
    path = tmp_path / name
    path.write_text(body)
    with pytest.raises(SpecError) as info:
        load_profiles(path)
    assert info.value.source == str(path)
    assert info.value.detail.startswith("nested too deeply")


def test_an_app_key_that_differs_from_its_tables_name_is_refused(tmp_path: Path) -> None:
    """`-a x` found table apps.x, whose profile then ran as 'y' (the docs audit): the
    platform's entries for x would not have applied to it."""
    body = '[apps.x]\napp = "{}"\ndata_size = "1 GiB"\nalpha = 2\n'
    path = tmp_path / "p.toml"
    path.write_text(body.format("y"))
    with pytest.raises(SpecError) as caught:
        load_profiles(path)
    assert caught.value.field == "apps.x.app"
    assert caught.value.detail.startswith("is 'y' in the table apps.x: leave it out")
    path.write_text(body.format("x"))
    assert load_profiles(path).apps["x"].app == "x"


def test_a_missing_profile_file_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as caught:
        load_profiles(tmp_path / "none.toml")
    assert str(caught.value) == f"{tmp_path / 'none.toml'}: file not found"


def test_a_profile_sets_platform_must_be_text(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    app = '"apps": {"x": {"data_size": "1 GiB", "alpha": 2}}'
    path.write_text('{"version": 1, "platform": 5, ' + app + "}")
    with pytest.raises(SpecError, match=r"p\.json: platform"):
        load_profiles(path)
    path.write_text('{"version": 1, "platform": "rans", ' + app + "}")
    assert load_profiles(path).platform == "rans"


@pytest.mark.parametrize(("toml", "json"), [("true", "true"), ("false", "false")])
def test_host_only_in_memory_reads_from_toml_and_json(tmp_path: Path, toml: str, json: str) -> None:
    toml_path, json_path = tmp_path / "p.toml", tmp_path / "p.json"
    toml_path.write_text(f'[apps.x]\ndata_size = "1 GB"\nalpha = 2\nhost_only_in_memory = {toml}\n')
    json_path.write_text(
        '{"apps": {"x": {"data_size": "1 GB", "alpha": 2, "host_only_in_memory": ' + json + "}}}"
    )
    want = toml == "true"
    assert load_profile("x", toml_path).host_only_in_memory is want
    assert load_profile("x", json_path).host_only_in_memory is want


@pytest.mark.parametrize(
    ("name", "value", "shown"),
    [
        ("p.toml", "1", "1"),
        ("p.toml", '"yes"', "'yes'"),
        ("p.toml", '"false"', "'false'"),
        ("p.json", "1", "1"),
        ("p.json", '"on"', "'on'"),
        ("p.json", "1.0", "1.0"),
    ],
)
def test_host_only_in_memory_must_be_a_boolean(
    tmp_path: Path, name: str, value: str, shown: str
) -> None:
    """The flag moves a host-only run's time by the whole transfer: pydantic's lax bool took
    1, 1.0, "yes", "on" and "false" (as false), where every other field of a profile is
    refused in a type it does not hold (a `platform` of 5, a bool for a number)."""
    path = tmp_path / name
    if name.endswith(".toml"):
        path.write_text(f'[apps.x]\ndata_size = "1 GB"\nalpha = 2\nhost_only_in_memory = {value}\n')
    else:
        body = '{"data_size": "1 GB", "alpha": 2, "host_only_in_memory": ' + value + "}"
        path.write_text('{"apps": {"x": ' + body + "}}")
    with pytest.raises(SpecError) as caught:
        load_profiles(path)
    assert (caught.value.source, caught.value.field) == (str(path), "apps.x.host_only_in_memory")
    assert caught.value.detail == f"expected true or false, got {shown}"


def test_save_profiles_takes_a_str_path(tmp_path: Path) -> None:
    """`runtime.profiling.save` takes a str; `save_profiles` ended in "'str' object has no
    attribute 'name'"."""
    lc = load_profile("lc")
    path = tmp_path / "set.json"
    save_profiles([lc], str(path))
    assert load_profiles(path).apps["lc"] == lc


@pytest.mark.parametrize("name", ["set.toml", "set", "set.json.bak"])
def test_save_profiles_refuses_a_name_load_profiles_would_not_read_as_json(
    tmp_path: Path, name: str
) -> None:
    """`load_profiles` reads a file by its suffix: JSON written under set.toml was refused
    as malformed TOML at the next load, and nothing said so when it was written."""
    with pytest.raises(SpecError) as caught:
        save_profiles([load_profile("lc")], tmp_path / name)
    assert caught.value.field == "path"
    assert ".json" in caught.value.detail
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("profiles", "detail"),
    [
        ("one", "must be a list of profiles: save_profiles([profile], path) for one"),
        ("dicts", "must be a list of Profile, got [{'app': 'lc'}]"),
        ("none", "is empty: a profile set of no apps, which no command could use"),
    ],
)
def test_save_profiles_refuses_what_is_no_list_of_profiles(
    tmp_path: Path, profiles: str, detail: str
) -> None:
    """One profile, a list of dicts (AttributeErrors: 'tuple'/'dict' object has no attribute
    'app'), and no profiles at all (a set of no apps was written)."""
    given = {"one": load_profile("lc"), "dicts": [{"app": "lc"}], "none": []}[profiles]
    with pytest.raises(SpecError) as caught:
        save_profiles(given, tmp_path / "set.json")  # type: ignore[arg-type]
    assert (caught.value.field, caught.value.detail) == ("profiles", detail)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("given", [5, None])
def test_load_profiles_names_an_argument_of_another_kind(given: object) -> None:
    """5 or None was a TypeError from pathlib."""
    with pytest.raises(SpecError) as caught:
        load_profiles(given)  # type: ignore[arg-type]
    assert caught.value.field == "name_or_path"
