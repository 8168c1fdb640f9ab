"""Writing result files: whole or not at all (a temporary name in the same directory, then
a rename), so an interrupted run never leaves a half-written file under the real name."""

from __future__ import annotations

import os
from pathlib import Path

from ndpkit.errors import SpecError


def write_atomic(path: Path, content: str | bytes) -> None:
    """Write `content` to `path` atomically; an unwritable path is a clear error."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        if isinstance(content, str):
            tmp.write_text(content, encoding="utf-8")
        else:
            tmp.write_bytes(content)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise SpecError(f"cannot write: {exc.strerror or exc}", source=str(path)) from None
