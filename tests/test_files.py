"""`ndpkit.files`: outputs are written whole or not at all."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from ndpkit.errors import SpecError
from ndpkit.files import (
    MAX_SPEC_BYTES,
    NotASpecFileError,
    check_writable,
    read_spec_file,
    read_spec_text,
    replacing,
    signals_held,
    temporary_sibling,
    write_atomic,
)
from ndpkit.hw import load_platform
from ndpkit.nascent.devices import load_devices
from ndpkit.profile import load_profiles


def test_write_atomic_replaces_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    write_atomic(path, "old")
    write_atomic(path, b"new")
    assert path.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_replacing_swaps_a_whole_directory(tmp_path: Path) -> None:
    out = tmp_path / "parts"
    (out / "a").mkdir(parents=True)
    (out / "a" / "old.txt").write_text("old")
    with replacing(out) as tmp:
        (tmp / "b").mkdir(parents=True)
        (tmp / "b" / "new.txt").write_text("new")
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == ["b", "b/new.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["parts"]


def test_an_error_keeps_the_old_content(tmp_path: Path) -> None:
    out = tmp_path / "o.txt"
    out.write_text("old")
    with pytest.raises(KeyboardInterrupt), replacing(out) as tmp:
        tmp.write_text("half")
        raise KeyboardInterrupt
    assert out.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["o.txt"]


def test_a_file_never_replaces_a_directory(tmp_path: Path) -> None:
    out = tmp_path / "precious"
    out.mkdir()
    (out / "keep.txt").write_text("keep")
    with pytest.raises(SpecError, match="is a directory"), replacing(out) as tmp:
        tmp.write_text("file")
    assert (out / "keep.txt").read_text() == "keep"
    assert [p.name for p in tmp_path.iterdir()] == ["precious"]


def test_an_output_in_a_missing_directory_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    target = tmp_path / "missing" / "out.parquet"
    with (
        pytest.raises(SpecError, match=r"cannot write: no directory .*missing'") as info,
        replacing(target),
    ):
        pytest.fail("the writer must not run")
    assert "tmp-" not in str(info.value)  # no temporary name in what the user reads


def test_signals_held_delivers_a_signal_after_the_block(tmp_path: Path) -> None:
    done = []
    with pytest.raises(KeyboardInterrupt), signals_held():
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)  # twice: delivered once
        time.sleep(0.01)  # the handler has run by now, and only recorded the signal
        done.append("cleanup finished")
    assert done == ["cleanup finished"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_signals_held_leaves_an_ignored_signal_ignored() -> None:
    old = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with signals_held():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.01)
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, old)


def test_write_atomic_interrupted_mid_write_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(self: Path, data: bytes) -> int:
        with self.open("wb") as f:
            f.write(data[:3])  # half-written, then Ctrl-C
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "write_bytes", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(tmp_path / "out.bin", b"content")
    assert list(tmp_path.iterdir()) == []


def test_a_long_name_the_file_system_accepts_still_gets_a_temporary(tmp_path: Path) -> None:
    name = "é" * 120 + ".json"  # 245 bytes: within 255, but not with ".tmp-PID" added
    assert len(os.fsencode(temporary_sibling(tmp_path / name).name)) <= 255
    write_atomic(tmp_path / name, "whole")
    for _ in range(2):  # made, then replaced (the old one moved aside under a short name)
        with replacing(tmp_path / ("d" * 250)) as tmp:
            tmp.mkdir()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, "d" * 250])


def test_a_name_too_long_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    too_long = tmp_path / ("x" * 300)
    with pytest.raises(SpecError, match="too long"):
        write_atomic(too_long, "lost")
    with pytest.raises(SpecError, match="too long"), replacing(too_long):
        pytest.fail("the body must not run")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_a_device_or_fifo_is_never_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (fifo, Path(os.devnull)):
        with pytest.raises(SpecError, match="not a regular file"):
            write_atomic(path, "lost")
        with pytest.raises(SpecError, match="not a regular file"), replacing(path):
            pytest.fail("the body must not run")
    assert fifo.is_fifo() and Path(os.devnull).is_char_device()
    assert [p.name for p in tmp_path.iterdir()] == ["fifo"]


def test_a_symbolic_link_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "real" / "out.json")  # dangling until the first write
    write_atomic(link, "one")
    write_atomic(link, "two")
    assert link.is_symlink() and link.read_text() == "two"
    assert [p.name for p in (tmp_path / "real").iterdir()] == ["out.json"]


def test_a_loop_of_symbolic_links_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(SpecError, match="Too many levels of symbolic links"):
        write_atomic(tmp_path / "a", "lost")


def test_check_writable_makes_and_removes_a_probe(tmp_path: Path) -> None:
    check_writable(tmp_path / "out.json")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(SpecError, match="cannot write in"):
        check_writable(tmp_path / "missing" / "out.json")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_spec_files_that_are_no_small_regular_file_are_refused_without_blocking(
    tmp_path: Path,
) -> None:
    """/dev/zero was read until the OOM killer came, a FIFO nobody writes blocked forever."""
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    big = tmp_path / "big.toml"
    with big.open("wb") as f:
        f.truncate(MAX_SPEC_BYTES + 1)
    for path, message in [
        (Path("/dev/zero"), "not a regular file"),
        (fifo, "not a regular file"),
        (big, "larger than 16 MiB"),
    ]:
        with pytest.raises(NotASpecFileError, match=message):
            read_spec_text(path)
        for load in (load_platform, load_profiles, load_devices):
            with pytest.raises(SpecError, match=message) as caught:
                load(str(path))
            assert caught.value.source == str(path)
    (tmp_path / "ok.toml").write_text("\ufeffa = 1\n", encoding="utf-8")
    assert read_spec_text(tmp_path / "ok.toml") == "a = 1\n"  # a byte-order mark dropped


def test_a_file_that_has_a_temporary_name_already_is_left_alone(tmp_path: Path) -> None:
    """A temporary name was `.NAME.tmp-PID` whatever held it: `replacing` removed what was
    there first (a whole directory tree), `write_atomic` wrote over it, and the old
    directory was renamed onto `.NAME.old-PID`. A name that is taken is not used now."""
    pid = os.getpid()
    taken = {
        f".out.txt.tmp-{pid}": "a user's file",
        f".parts.tmp-{pid}": "a user's directory",
        f".parts.old-{pid}": "a user's empty directory",
        f".probe.json.probe-{pid}": "a user's probe",
    }
    for name, text in taken.items():
        if "directory" in text:
            (tmp_path / name).mkdir()
            if "empty" not in text:
                (tmp_path / name / "keep.txt").write_text(text)
        else:
            (tmp_path / name).write_text(text)
    write_atomic(tmp_path / "out.txt", "new")
    (tmp_path / "parts").mkdir()
    for _ in range(2):  # made, then replaced (the old one moved aside)
        with replacing(tmp_path / "parts") as tmp:
            tmp.mkdir()
            (tmp / "new.txt").write_text("new")
    check_writable(tmp_path / "probe.json")
    assert (tmp_path / "out.txt").read_text() == "new"
    assert (tmp_path / "parts" / "new.txt").read_text() == "new"
    assert (tmp_path / f".out.txt.tmp-{pid}").read_text() == "a user's file"
    assert (tmp_path / f".parts.tmp-{pid}" / "keep.txt").read_text() == "a user's directory"
    assert (tmp_path / f".parts.old-{pid}").is_dir()
    assert (tmp_path / f".probe.json.probe-{pid}").read_text() == "a user's probe"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*taken, "out.txt", "parts"])


@pytest.mark.parametrize("content", [b"", b"  \n\t\n", b"\xef\xbb\xbf\n"])
def test_an_empty_spec_file_says_so(tmp_path: Path, content: bytes) -> None:
    """Else JSON's "Expecting value: line 1 column 1", or a TOML file's first field missing."""
    path = tmp_path / "p.json"
    path.write_bytes(content)
    with pytest.raises(SpecError, match=r"^p\.json: the file is empty"):
        read_spec_file(path, "p.json")


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444], ids=["600", "640", "444"])
def test_a_replaced_file_keeps_its_mode(tmp_path: Path, mode: int) -> None:
    """Writes are renames of a new file, which had the umask's mode: a private 600 output
    became readable by everyone (644) at its next write."""
    for write in ("atomic", "replacing"):
        path = tmp_path / f"{write}.csv"
        path.write_text("old")
        path.chmod(mode)
        if write == "atomic":
            write_atomic(path, "new")
        else:
            with replacing(path) as tmp:
                tmp.write_text("new")
        assert path.read_text() == "new"
        assert path.stat().st_mode & 0o777 == mode, write


def test_a_new_file_gets_the_umasks_mode(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "new.csv", "new")
    finally:
        os.umask(old)
    assert (tmp_path / "new.csv").stat().st_mode & 0o777 == 0o640
