"""`reproduce risp` refuses a flag or `-o` option that changes none of the tables `--tables`
selects (`--tables E1 --channel-rounding ceil` printed E1 as if rounded, exit 0), and the
map of what each one changes (`risp.TABLES_CHANGED`) is checked against the tables
themselves, so the refusal never turns away a setting that would have changed a table."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cli_errors import one_error_line

from ndpkit.reproduce import risp

NON_DEFAULT: dict[str, dict[str, Any]] = {
    "inputs": {"inputs": "binary"},
    "rounding": {"rounding": "ceil"},
    "grouping": {"grouping": "ceil"},
    "n_cpu": {"n_cpu": 8},
    "measured": {"measured_s": {"kmeans": 2.1}},
    "cpu_energy": {"cpu_energy": "instructions"},
    "attribution": {"attribution": "all_active"},
    "nvm_power": {"nvm_power": "per_device"},
    "ru_power": {"ru_power": "proportional"},
    "host_stage": {"host_stage": "with_host_stage"},
    "reconfiguration": {"reconfiguration": "include"},
    "ru_time": {"ru_time": "configured"},
    "cell_load": {"cell_load": "max_group"},
}
SETTINGS = {"inputs", "rounding", "grouping", "n_cpu", "measured_s"}


def _tables(changes: dict[str, Any]) -> dict[str, str]:
    settings = {k: v for k, v in changes.items() if k in SETTINGS}
    model = {k: v for k, v in changes.items() if k not in SETTINGS}
    tables = risp.reproduce(risp.DEFAULT_OPTIONS.with_(**model), **settings)
    return {t.name: json.dumps([t.rows, t.note], sort_keys=True, default=str) for t in tables}


def test_every_setting_and_option_of_risp_is_mapped() -> None:
    assert set(risp.TABLES_CHANGED) == set(NON_DEFAULT)
    for tables in risp.TABLES_CHANGED.values():
        assert set(tables) <= set(risp.TABLE_NAMES)


@pytest.mark.parametrize("key", sorted(NON_DEFAULT))
def test_a_setting_changes_no_table_outside_its_map(key: str) -> None:
    """Tables outside the map print the same; so the refusal loses nothing."""
    default, changed = _tables({}), _tables(NON_DEFAULT[key])
    moved = {name for name in default if default[name] != changed[name]}
    assert moved <= set(risp.TABLES_CHANGED[key]), sorted(moved)


@pytest.mark.parametrize(
    ("args", "flag", "tables"),
    [
        (("--tables", "E1", "--channel-rounding", "ceil"), "--channel-rounding", "E7, E8"),
        (("--tables", "E5", "--grouping", "floor"), "--grouping", "E8"),
        (("--tables", "E3,E4b", "--inputs", "decimal"), "--inputs", "V0, E1,"),
        (("--tables", "E6", "--n-cpu", "8"), "--n-cpu", "V0, E1,"),
        (("--tables", "E1", "--measured", "kmeans=2"), "--measured", "V0"),
        (("--tables", "E8", "-o", "ru_time=configured"), "--option ru_time", "E5, E6, E7"),
        (("--tables", "E6,E8", "-o", "host_stage=with_host_stage"), "--option host_stage", "E3"),
        (("--tables", "E4", "-o", "cpu_energy=instructions"), "--option cpu_energy", "E5"),
    ],
)
def test_a_setting_no_selected_table_reads_is_refused(
    ndpkit, args: tuple[str, ...], flag: str, tables: str
) -> None:
    line = one_error_line(ndpkit("reproduce", "risp", *args))
    assert line.startswith(f"error: command line: {flag}: changes only table"), line
    assert tables in line and f"leave {flag} out" in line, line


@pytest.mark.parametrize(
    "args",
    [
        ("--tables", "E7,E1", "--channel-rounding", "ceil"),
        ("--tables", "E5", "-o", "ru_time=configured"),
        ("-o", "cell_load=max_group"),  # all tables
    ],
)
def test_a_setting_a_selected_table_reads_is_taken(ndpkit, args: tuple[str, ...]) -> None:
    result = ndpkit("reproduce", "risp", "-f", "json", *args)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["tables"]
