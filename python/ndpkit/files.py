"""Writing result files: whole or not at all (a temporary name in the same directory, then
a rename), so an interrupted run never leaves a half-written file under the real name."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary sibling of `path` to build a file or a directory in. On success it takes
    `path`'s place with a rename (an old directory there is removed after); on any error
    it is deleted, so `path` is either the old content or the whole new one."""
    if not path.parent.is_dir():  # before a writer names its temporary file in an error
        raise SpecError(f"cannot write: no directory {str(path.parent)!r}", source=str(path))
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    _remove(tmp)
    try:
        yield tmp
        if path.is_dir() and not path.is_symlink():
            if not tmp.is_dir():
                raise SpecError("is a directory; a file cannot replace it", source=str(path))
            old = path.with_name(f".{path.name}.old-{os.getpid()}")
            os.replace(path, old)
            os.replace(tmp, path)
            _remove(old)
        else:
            os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        raise SpecError(f"cannot write: {exc.strerror or exc}", source=str(path)) from None
    except BaseException:  # SpecError, KeyboardInterrupt, a writer's own error
        _remove(tmp)
        raise


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
