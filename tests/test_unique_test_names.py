"""pytest imports a test file outside a package (a directory without `__init__.py`) by its
base name alone: two such files of one name (tests/model/ and tests/plan/
test_python_arguments.py) stop the whole run at collection ("import file mismatch")."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).parent


def test_test_files_outside_packages_have_distinct_names() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(TESTS.rglob("test_*.py")):
        if not (path.parent / "__init__.py").exists():
            where[path.name].append(str(path.relative_to(TESTS)))
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}
