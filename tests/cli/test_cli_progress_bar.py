"""The progress bar of `ndpkit data` at a terminal: lines said while it is shown (a
`--crop` summary, a large image's warning) are lines of their own, above it."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
from cli_env import command_env
from PIL import Image

NDPKIT = Path(sys.executable).parent / "ndpkit"

_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _stderr_at_a_terminal(*args: str, term: str = "xterm") -> tuple[int, str]:
    """Run `ndpkit ARGS` with stderr a terminal (a pseudo-terminal) of type `term`: its
    status and what it wrote there, as bytes decoded."""
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            [str(NDPKIT), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=follower,
            env=command_env(TERM=term, COLUMNS="120"),
        )
        os.close(follower)
        written = bytearray()
        while True:
            try:
                block = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's other end is closed
                break
            if not block:
                break
            written += block
        status = process.wait(timeout=120)
    finally:
        os.close(leader)
    return status, written.decode("utf-8", "replace")


def test_a_line_said_under_the_bar_starts_a_line_of_its_own(tmp_path: Path) -> None:
    """The --crop summary was printed by a console of its own after the bar's text, so the
    terminal showed `importing imgs ━━━━ 0.1/0.1 MiB 0:00:00crop: 1 of 1 images lost …`."""
    (tmp_path / "imgs").mkdir()
    pixels = np.random.default_rng(0).integers(0, 256, (300, 520), dtype=np.uint8)
    Image.fromarray(pixels).save(tmp_path / "imgs" / "a.png")
    status, written = _stderr_at_a_terminal(
        "data", "import", str(tmp_path / "imgs"), "--app", "he", "--devices", "1",
        "--out", str(tmp_path / "ds"), "--crop",
    )  # fmt: skip
    assert status == 0, written
    assert "importing" in written  # the bar was shown
    # What a terminal shows of each piece of a line: each \r returns to the line's start,
    # and the bar clears the line (ESC [2K) before it draws itself again.
    pieces = [_ESCAPE.sub("", piece) for line in written.split("\n") for piece in line.split("\r")]
    said = [piece for piece in pieces if "crop:" in piece]
    assert said and all(piece.startswith("crop: 1 of 1 images") for piece in said), said


def test_a_dumb_terminal_gets_no_bar_and_no_empty_line_before_an_error(tmp_path: Path) -> None:
    """TERM=dumb (Emacs's shell): Rich draws no bar there, but ended its display with an
    empty line, which came before the error."""
    (tmp_path / "t").mkdir()
    pixels = np.zeros((256, 256), dtype=np.uint8)
    Image.fromarray(pixels).save(tmp_path / "t" / "a.png")
    status, written = _stderr_at_a_terminal(
        "data", "import", str(tmp_path / "t"), "--app", "he", "--devices", "2",
        "--out", str(tmp_path / "ds"), term="dumb",
    )  # fmt: skip
    assert status == 2, written
    assert written.startswith("error: ") and written.count("\n") == 1, repr(written)


def test_evaluate_on_a_dumb_terminal_says_its_error_on_the_first_line(tmp_path: Path) -> None:
    """`ndpkit evaluate`'s own bar had the same empty line before an error on TERM=dumb."""
    from ndpkit.runtime import generate_dataset  # noqa: PLC0415

    ds = generate_dataset("knn8", 2**20, 2, tmp_path / "ds", shard_bytes=2**18)
    victim = ds.shard_path(ds.shards[-1])
    raw = bytearray(victim.read_bytes())
    raw[-1] ^= 0xFF
    victim.write_bytes(raw)
    status, written = _stderr_at_a_terminal(
        "evaluate", "knn8", "--data", str(ds.path), "--platforms", "rans", term="dumb"
    )
    assert status == 2, written
    assert written.startswith(f"error: {victim}: CRC-32 is "), repr(written)
    assert written.count("\n") == 1, repr(written)
