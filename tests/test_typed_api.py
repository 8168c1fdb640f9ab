"""A user's script type-checks against ndpkit under `mypy --strict`, as it would against the
installed package: ndpkit ships the py.typed marker (PEP 561), without which mypy skips the
package ("missing library stubs or py.typed marker") and every import is an error."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ndpkit

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_PARENT = Path(ndpkit.__file__).resolve().parents[1]
DOCUMENTED = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _python_examples() -> list[tuple[str, str]]:
    """(where, code) of every ```python block of the docs but the interactive (>>>) ones."""
    found = []
    for page in DOCUMENTED:
        text = page.read_text(encoding="utf-8")
        for block in re.finditer(r"^```python\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL):
            line = text.count("\n", 0, block.start()) + 2
            if not block.group(1).lstrip().startswith(">>>"):
                found.append((f"{page.stem}_{line}", block.group(1)))
    return found


def test_the_package_is_marked_typed() -> None:
    assert (PACKAGE_PARENT / "ndpkit" / "py.typed").is_file()


def test_the_documented_python_examples_type_check_strictly(tmp_path: Path) -> None:
    """Each example as its own script, checked as a user's would be: mypy finds ndpkit on
    the path (PYTHONPATH, as a site-packages directory), not as the project's own source."""
    pytest.importorskip("mypy")
    examples = _python_examples()
    assert len(examples) >= 5, examples  # README's, api.md's, kernels.md's, nascent2's, …
    scripts = []
    for where, code in examples:
        script = tmp_path / f"example_{re.sub(r'[^0-9A-Za-z]', '_', where)}.py"
        script.write_text(code, encoding="utf-8")
        scripts.append(script.name)
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_PARENT)}
    mypy = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache")]
    checked = subprocess.run(
        [*mypy, *scripts],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
