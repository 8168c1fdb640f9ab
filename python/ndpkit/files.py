"""Writing result files: whole or not at all (a temporary name in the same directory, then
a rename), so an interrupted run never leaves a half-written file under the real name.

The cleanups (removing a temporary, the rename pair that swaps a directory) run with SIGINT,
SIGTERM and SIGHUP held (`signals_held`): a second Ctrl-C or `kill` during one waits until it is
done instead of leaving the temporary behind."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from ndpkit.errors import SpecError

HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM) + (
    (signal.SIGHUP,) if hasattr(signal, "SIGHUP") else ()
)
_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers
_counters: list[Callable[[int], bool]] = []
"""The counter `count_held_signals` set, if any (a list, so it is set without `global`)."""


_CTRL_C_TO_PARENT = [False]


def leave_ctrl_c_to_the_parent() -> None:
    """Say that this process handles Ctrl-C itself and stops its workers (the `ndpkit`
    command does): the executor then starts multiprocessing's fork server, and so every
    worker, with Ctrl-C ignored (`executor._start_fork_server`). A library user's program
    keeps Python's default."""
    _CTRL_C_TO_PARENT[0] = True


def ctrl_c_left_to_the_parent() -> bool:
    return _CTRL_C_TO_PARENT[0]


def count_held_signals(counter: Callable[[int], bool] | None) -> None:
    """Let `counter(signum)` see every signal that arrives while held. It returns True when it
    has dealt with the signal (counted it; it may also kill the process, which is the point:
    a command's "third Ctrl-C stops at once" must work during a hung cleanup too), False to
    have it held and delivered after the block as usual."""
    _counters[:] = [] if counter is None else [counter]


@contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP (`HELD_SIGNALS`) that arrive inside the block are
    delivered when it ends.

    Python runs signal handlers in the main thread whichever thread the kernel delivers a
    signal to, so blocking the signals in this thread (`pthread_sigmask`) would not stop a
    KeyboardInterrupt once BLAS or Arrow have started threads. Instead, the handlers are
    swapped for one that only records the signal (unless `count_held_signals`'s counter
    takes it); afterwards the old ones are put back and
    each recorded signal is raised again (at most once per kind). A signal that is ignored
    stays ignored. Outside the main thread (where handlers cannot be set) this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []

    def record(signum: int, frame: FrameType | None) -> None:
        if not any(count(signum) for count in _counters):
            pending.append(signum)

    held: dict[int, _Handler] = {}
    try:  # a stop raised mid-swap (by a handler not swapped yet) still puts back the rest
        for signum in HELD_SIGNALS:
            handler = signal.getsignal(signum)
            if handler is not None and handler != signal.SIG_IGN:  # None: set outside Python
                held[signum] = handler
                signal.signal(signum, record)
        yield
    finally:
        _put_back(list(held.items()), pending)


def _put_back(held: list[tuple[int, _Handler]], pending: list[int]) -> None:
    """Each held handler put back, even if one put back first raises a stop as it lands
    (which would otherwise leave the others recording for good), then the pending signals
    raised again."""
    if not held:
        for number in dict.fromkeys(pending):
            signal.raise_signal(number)
        return
    (number, previous), rest = held[0], held[1:]
    try:
        signal.signal(number, previous)
    finally:
        _put_back(rest, pending)


def cleanup_held(clean: Callable[[], object]) -> None:
    """`clean()`, which must be safe to run twice, with `HELD_SIGNALS` held
    (`signals_held`). A first signal that lands while the hold is being set up, before its
    handlers are swapped in, raises there and would skip `clean` (a data set's staging
    directory was left behind): `clean` then runs again outside the hold, where nothing can
    stop it (only the first signal raises), and the stop goes on."""
    try:
        with signals_held():
            clean()
    except (KeyboardInterrupt, SystemExit) as stop:
        try:
            clean()
        except Exception as error:  # it must not replace the stop, but is not hidden
            stop.add_note(f"the cleanup after this stop failed: {error!r}")
        raise


def cache_root() -> Path | None:
    """Where ndpkit keeps what it parsed or measured once for later commands (pint's unit
    definitions, TPC-H's mean row size): $NDPKIT_CACHE_DIR (empty: nowhere), else
    $XDG_CACHE_HOME/ndpkit, else ~/.cache/ndpkit. Everything kept there is a shortcut only:
    a cache that cannot be read or written costs time, never a wrong result."""
    root = os.environ.get("NDPKIT_CACHE_DIR")
    if root is None:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(xdg, "ndpkit")
    return Path(root) if root else None


_NUMBER = re.compile(r"([0-9]+)")


def is_left_out(name: str) -> bool:
    """Whether a file or directory of this name, inside a directory read as one table, is no
    part of the table, nor anything in it: hidden ones, and those pyarrow and Spark pass over
    (`_SUCCESS`, `_temporary/`, `_metadata`, Hadoop's `.crc` checksums)."""
    return name.startswith((".", "_")) or name.lower().endswith(".crc")


def path_order(relative: Path) -> tuple[tuple[tuple[str | int, ...], ...], tuple[str, ...]]:
    """The sort key of a relative path in which its files are read as one whole (a table's
    parts, a directory of images, a sharded table): directory by directory, the numbers in
    a name compared as numbers (`part-2` before `part-10`, `device-99/` before
    `device-100/`: DuckDB, pyarrow and tpchgen-cli do not pad their numbers), and names
    equal as numbers (`p-01`, `p-1`) in code-point order."""
    names = relative.parts
    # re.split alternates text and digits, starting with text, so the same positions of
    # two keys always hold the same type.
    natural = tuple(
        tuple(int(piece) if i % 2 else piece for i, piece in enumerate(_NUMBER.split(name)))
        for name in names
    )
    return natural, names


def walk_real_dirs(
    root: Path, onerror: Callable[[OSError], None]
) -> Iterator[tuple[str, str, list[str], list[str]]]:
    """`os.walk(root)` following links to directories, each real directory once: (top, its
    real path, its subdirectories, its files). A link to an ancestor does not loop and no
    file is listed twice; the caller may prune or order the subdirectories in place, as
    with `os.walk`."""
    seen: set[str] = set()
    for top, dirs, files in os.walk(root, onerror=onerror, followlinks=True):
        real = os.path.realpath(top)
        if real in seen:
            dirs.clear()
            continue
        seen.add(real)
        yield top, real, dirs, files


def write_atomic(path: Path, content: str | bytes) -> None:
    """Write `content` to `path` atomically; an unwritable path is a clear error."""
    path = destination(path)
    tmp = temporary_sibling(path)
    try:
        if isinstance(content, str):
            tmp.write_text(content, encoding="utf-8")
        else:
            tmp.write_bytes(content)
        keep_mode(tmp, path)
        os.replace(tmp, path)
    except OSError as exc:
        cleanup_held(lambda: tmp.unlink(missing_ok=True))
        raise SpecError(f"cannot write: {exc.strerror or exc}", source=str(path)) from None
    except BaseException:  # Ctrl-C or SIGTERM mid-write
        cleanup_held(lambda: tmp.unlink(missing_ok=True))
        raise


@contextmanager
def replacing(path: Path, *, overwrite: bool = True, field: str | None = None) -> Iterator[Path]:
    """A temporary sibling of `path` to build a file or a directory in. On success it takes
    `path`'s place with a rename (an old directory there is removed after); on any error
    it is deleted, so `path` is either the old content or the whole new one. Without
    `overwrite` it takes the place only if it is still free (`put_new`): another run may
    have written `path` since the caller checked. `field` (an option such as `--out`)
    names where `path` came from in a failed write's error."""
    path = destination(path)
    if not path.parent.is_dir():  # before a writer names its temporary file in an error
        raise SpecError(
            f"cannot write: no directory {str(path.parent)!r}", source=str(path), field=field
        )
    tmp = temporary_sibling(path)
    try:
        yield tmp
        with signals_held():  # between the two renames `path` does not exist
            if overwrite:
                _put_in_place(tmp, path)
            else:
                put_new(tmp, path)
    except OSError as exc:
        _remove(tmp)
        raise SpecError(
            f"cannot write: {exc.strerror or exc}", source=str(path), field=field
        ) from None
    except BaseException:  # SpecError, KeyboardInterrupt, a writer's own error
        _remove(tmp)
        raise


def destination(path: Path) -> Path:
    """Where a write to `path` lands, checked before any work: through a symbolic link to
    the file it names (the link stays a link), and never onto a device, FIFO or socket,
    which the rename into place would replace (`/dev/null` would become a file). `os.stat`,
    not pathlib's `exists()`, which newer Pythons make quietly False on a name too long or
    a loop of links."""
    try:
        target = Path(os.path.realpath(path)) if _mode(path, follow=False) == "link" else path
        mode = _mode(target, follow=True)
    except OSError as exc:  # a name too long, a loop of links
        raise SpecError(f"cannot write: {exc.strerror or exc}", source=str(path)) from None
    stream = _std_stream(path)
    if stream is not None:
        # /dev/stdout resolves to the file stdout was sent to (which the rename would
        # replace, and the tables printed there would be lost) or to a pipe's name under
        # /proc, where nothing can be made.
        raise SpecError(
            f"cannot write: this is the command's standard {stream}, which a file written "
            "whole and renamed into place cannot be; give a file name",
            source=str(path),
        )
    if mode not in (None, "file", "directory"):
        raise SpecError(
            "cannot write: not a regular file (a device, FIFO or socket); give a file name",
            source=str(path),
        )
    return target


def _std_stream(path: Path) -> str | None:
    """`"output"` or `"error"` if `path` is this process's stdout or stderr (`/dev/stdout`,
    `/proc/self/fd/1`, or the file either was sent to), else None."""
    try:
        here = os.stat(path)
    except OSError:
        return None
    for fd, stream in ((1, "output"), (2, "error")):
        try:
            there = os.fstat(fd)
        except OSError:  # closed
            continue
        if (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino):
            return stream
    return None


def _mode(path: Path, *, follow: bool) -> str | None:
    """What is at `path`: None if nothing; any error but a missing file is raised."""
    try:
        mode = os.stat(path).st_mode if follow else os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(mode):
        return "link"
    return "file" if stat.S_ISREG(mode) else "directory" if stat.S_ISDIR(mode) else "other"


def check_writable(path: Path) -> None:
    """That a file can be made beside `path` (the directory is not read-only, full of
    inodes, or ours to write), by making and removing one: before a long run, not after."""
    probe = temporary_sibling(path, "probe")
    try:
        with signals_held():  # made and removed, or neither
            os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            os.unlink(probe)
    except OSError as exc:
        raise SpecError(
            f"cannot write in {str(path.parent)!r}: {exc.strerror or exc}", source=str(path)
        ) from None


_NAME_KEPT_BYTES = 200
"""How much of a name its temporary sibling keeps: the prefix and suffix added must not push
a name the file system accepts (255 bytes on most) over its limit."""


def temporary_sibling(path: Path, tag: str = "tmp") -> Path:
    """A hidden name beside `path`, free now, that a new file or directory is built under
    (`tag` "tmp"), or that an old directory is moved to before it is removed ("old"):
    `.NAME.tmp-PID`, or with random hex digits after it where that is taken. A name that is
    taken is never reused: whatever holds it (a user's own file, or what a killed run with
    the same PID left) was removed, or replaced by the rename, when the name alone decided."""
    base = f".{name_kept(path.name)}.{tag}-{os.getpid()}"
    candidate = path.with_name(base)
    while os.path.lexists(candidate):
        candidate = path.with_name(f"{base}-{secrets.token_hex(4)}")
    return candidate


def name_kept(name: str) -> str:
    """`name`, cut to leave room for a temporary name's prefix and suffix."""
    while len(os.fsencode(name)) > _NAME_KEPT_BYTES:
        name = name[:-1]
    return name


TAKEN_MEANWHILE = (
    "already exists (made while this run wrote; another run's?); pass --overwrite to replace it"
)


def put_new(tmp: Path, path: Path, taken: str = TAKEN_MEANWHILE) -> None:
    """`tmp` renamed to `path` only if nothing is there: a file by a hard link and an unlink
    (a rename would replace a file that another run wrote meanwhile), a directory by a
    rename (which refuses a non-empty one). A SpecError saying `taken` if `path` was
    taken."""
    try:
        if tmp.is_dir():
            os.rename(tmp, path)
            return
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise
        except OSError:  # no hard links on this file system: the check is all there is
            if os.path.lexists(path):
                raise
            os.replace(tmp, path)
            return
        with contextlib.suppress(OSError):  # `path` is whole: a second name left is no failure
            os.unlink(tmp)
    except OSError:
        if not os.path.lexists(path):
            raise
        raise SpecError(taken, source=str(path)) from None


def _put_in_place(tmp: Path, path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        if not tmp.is_dir():
            raise SpecError("is a directory; a file cannot replace it", source=str(path))
        old = temporary_sibling(path, "old")
        os.replace(path, old)
        try:
            os.replace(tmp, path)
        except OSError:
            # Another run put a directory at `path` between the two renames: put the old
            # one back if there is room, else it goes (it was to be replaced anyway); if
            # neither is there, the old one stays where it is, for the user to take back.
            with contextlib.suppress(OSError):
                os.replace(old, path)
            if os.path.lexists(path):
                _remove(old)
            raise
        _remove(old)
    else:
        keep_mode(tmp, path)
        os.replace(tmp, path)


def keep_mode(tmp: Path, path: Path) -> None:
    """Give `tmp` the permissions of the file at `path` it is to replace: a rewritten output
    keeps its mode (a 600 file stayed 600 before the writes became renames, and became 644
    after), as an editor that saves by rename keeps it."""
    try:
        old = os.stat(path)
    except FileNotFoundError:
        return
    if stat.S_ISREG(old.st_mode) and not tmp.is_dir():
        os.chmod(tmp, stat.S_IMODE(old.st_mode))


def _remove(path: Path) -> None:
    def remove() -> None:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)

    cleanup_held(remove)


MAX_SPEC_BYTES = 16 * 2**20
"""The largest platform, profile or device file read: they are a few KiB, and a path such
as /dev/zero would otherwise be read until memory runs out."""


class NotASpecFileError(Exception):
    """A path that names no small regular file (its message says what it is instead)."""


def literal_path(path: str | os.PathLike[str]) -> str:
    """`path` as a string that Polars and pyarrow take literally: absolute, so that neither
    expands a leading `~` (`./~/t.parquet`, a directory named "~", was read from and written
    to $HOME). Not normalised: `..` keeps the meaning the system gives it."""
    text = os.fspath(path)
    return text if os.path.isabs(text) else os.path.join(os.getcwd(), text)


def read_spec_text(path: Path, encoding: str = "utf-8-sig") -> str:
    """The text of a small input file (TOML, JSON). A FIFO, device or socket is refused
    without blocking on it, and a file over MAX_SPEC_BYTES without reading it all
    (`NotASpecFileError`); FileNotFoundError, other OSErrors and UnicodeDecodeError pass
    through for the caller's wording. (utf-8-sig: a byte-order mark, which Windows editors
    write, is not TOML or JSON.) An empty or blank file is refused too."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotASpecFileError("not a regular file (a device, FIFO or socket)")
        data = f.read(MAX_SPEC_BYTES + 1)
    if len(data) > MAX_SPEC_BYTES:
        raise NotASpecFileError(
            f"larger than {MAX_SPEC_BYTES // 2**20} MiB, far beyond any platform, profile or "
            "device file"
        )
    text = data.decode(encoding)
    if not text.strip():
        # Else "malformed JSON: Expecting value: line 1 column 1", or a TOML file's first
        # required field "missing": a truncated or unsaved file should say so.
        raise NotASpecFileError("the file is empty (truncated, or not saved yet?)")
    return text


def read_spec_file(path: Path, source: str) -> str:
    """`read_spec_text`, every failure a SpecError of `source` (the file as the user named
    it) saying why."""
    try:
        return read_spec_text(path)
    except NotASpecFileError as exc:
        raise SpecError(str(exc), source=source) from None
    except FileNotFoundError:
        raise SpecError("file not found", source=source) from None
    except OSError as exc:
        raise SpecError(f"cannot read file ({exc.strerror or exc})", source=source) from None
    except UnicodeDecodeError as exc:
        raise SpecError(f"cannot read file: not UTF-8 ({exc})", source=source) from None
