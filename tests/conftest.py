"""Run the installed `ndpkit` command as a user would (the `ndpkit` fixture, for every test
directory), and the Hypothesis settings every test directory shares."""

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

NDPKIT = Path(sys.executable).parent / "ndpkit"

# No per-example deadline: it is a timing assertion, and on a 2-core machine shared with the
# other test worker an example of 54 ms took 253 ms once and failed a property test that
# holds (test_profile_power, 2026-11-29). Slow code is found in benchmarks/, not here.
# Derandomised: the same examples every run, so a CI run's verdict is the code's, not the
# draw's. HYPOTHESIS_PROFILE=explore draws new examples (and keeps failures) to search wider.
settings.register_profile("ndpkit", deadline=None, derandomize=True)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ndpkit"))


@pytest.fixture
def ndpkit() -> Callable[..., subprocess.CompletedProcess[str]]:
    env = {"NO_COLOR": "1", "COLUMNS": "200", "PATH": "/usr/bin:/bin"}
    if "PYTHONPATH" in os.environ:  # a check of another checkout (a worktree) runs its code
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(NDPKIT), *args], capture_output=True, text=True, timeout=120, env=env, check=False
        )

    return run


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """An empty directory no one may create entries in, root included: mode 0555 for other
    users; for root (who writes through modes) the ext4/XFS immutable flag (`chattr +i`),
    else the test is skipped. Entries refused: EACCES ("Permission denied") under the mode,
    EPERM ("Operation not permitted") under the flag."""
    path = tmp_path / "ro"
    path.mkdir(mode=0o555)
    immutable = os.geteuid() == 0
    if immutable:
        chattr = shutil.which("chattr")
        if chattr is None:
            pytest.skip("root, and no chattr (e2fsprogs) to set the immutable flag")
        made = subprocess.run(
            [chattr, "+i", str(path)], capture_output=True, text=True, check=False
        )
        if made.returncode != 0 or _can_create_in(path):
            pytest.skip(f"root, and no immutable flag here: {made.stderr.strip()}")
    try:
        yield path
    finally:
        if immutable:
            subprocess.run([str(chattr), "-i", str(path)], capture_output=True, check=False)
        path.chmod(0o755)


def _can_create_in(path: Path) -> bool:
    probe = path / "probe"
    try:
        probe.mkdir()
    except OSError:
        return False
    probe.rmdir()
    return True
