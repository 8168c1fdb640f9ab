"""The references import scikit-learn, whose joblib warns when it cannot make a POSIX
semaphore (a read-only /dev/shm, or one out of inodes): nothing is said, and under `-W
error` the reference still runs (the warning stopped it)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import _multiprocessing, warnings

    class NoSemaphores:
        def __init__(self, *args, **kwargs):
            raise OSError(30, "Read-only file system")

    _multiprocessing.SemLock = NoSemaphores  # as a read-only /dev/shm refuses them
    warnings.simplefilter("error")
    from ndpkit.kernels import get_kernel

    kernel = get_kernel(APP)
    params = kernel.params(0)
    data = kernel.generate(2**14, seed=0)
    kernel.reference(data, params)
    print("ran")
    """
)


@pytest.mark.parametrize("app", ["knn8", "kmeans"])
def test_a_reference_runs_without_a_word_where_joblib_has_no_semaphores(app: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.replace("APP", repr(app))],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ran\n"
    assert done.stderr == ""
