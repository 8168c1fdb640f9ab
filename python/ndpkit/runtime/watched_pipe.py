"""Whole messages over a worker's pipe that the parent sends and reads without blocking for
ever: multiprocessing's framing (`Connection.send_bytes`: a 4-byte big-endian length, or -1
and an 8-byte one), written and read as the socket takes and gives the bytes. Whenever the
other side takes or gives none for `every_s`, `quiet(seconds)` hears how long nothing has
moved, and may raise: a worker stopped (SIGSTOP) while the parent sends it a task larger
than the socket's buffer, or while it sends a large answer, is then reported as any other
stalled worker is, not waited for for ever (`executor._Pool`).

Only where the pipe is a socket the system can poll (`WATCHED`: not Windows' pipes)."""

from __future__ import annotations

import array
import contextlib
import os
import select
import socket
import struct
import sys
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection

WATCHED = sys.platform != "win32" and hasattr(select, "poll")
_LONG = 0x7FFFFFFF
"""The longest message with a 4-byte length; a longer one is sent as -1 and 8 bytes."""

Quiet = Callable[[float], None]


@contextlib.contextmanager
def blocking_kept(conn: Connection) -> Iterator[None]:
    """Around a `socket.fromfd` of `conn` (here and in `multiprocessing.reduction`'s handle
    passing): the pipe left as blocking as it was. A socket made while a default timeout is
    set (`socket.setdefaulttimeout`, in the caller's program) makes the descriptor, which
    it shares with `conn`, non-blocking for good; multiprocessing then failed a send or
    read that had to wait with BlockingIOError. Nothing to keep on Windows (handles)."""
    if not WATCHED:
        yield
        return
    fd = conn.fileno()
    blocking = os.get_blocking(fd)
    try:
        yield
    finally:
        os.set_blocking(fd, blocking)


def send_watched(conn: Connection, data: bytes | memoryview, every_s: float, quiet: Quiet) -> None:
    """`conn.send_bytes(data)`, hearing `quiet` while the other side reads nothing."""
    size = len(data)
    header = struct.pack("!i", size) if size <= _LONG else struct.pack("!iQ", -1, size)
    fd = conn.fileno()
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    blocking = os.get_blocking(fd)
    os.set_blocking(fd, False)  # only while this writes: multiprocessing reads it blocking
    try:
        for part in (header, data):
            view = memoryview(part).cast("B")
            waited = 0.0
            while view:
                try:
                    view = view[os.write(fd, view) :]
                    waited = 0.0
                except BlockingIOError:
                    if not poller.poll(every_s * 1000):
                        waited = _quiet_for(every_s, waited, quiet)
    finally:
        os.set_blocking(fd, blocking)


def send_fd_watched(conn: Connection, fd: int, every_s: float, quiet: Quiet) -> None:
    """`multiprocessing.reduction.send_handle(conn, fd, ...)` (one byte carrying `fd`),
    hearing `quiet` while the other side reads nothing. A task that only just fits the
    socket's buffer goes in whole, but leaves no room for this byte: sent blocking, it held
    the parent for ever behind a worker stopped while idle. Not where the receiver answers
    each handle (`reduction.ACKNOWLEDGE`: macOS)."""
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLOUT)
    fds = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))]
    with (
        blocking_kept(conn),
        socket.fromfd(conn.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock,
    ):
        sock.settimeout(None)  # else it waits out a default timeout, not `every_s`
        waited = 0.0
        while True:
            try:  # MSG_DONTWAIT: the pipe itself stays blocking, as multiprocessing needs it
                sock.sendmsg([bytes([1])], fds, socket.MSG_DONTWAIT)
                return
            except BlockingIOError:
                if not poller.poll(every_s * 1000):
                    waited = _quiet_for(every_s, waited, quiet)


def recv_watched(conn: Connection, every_s: float, quiet: Quiet) -> bytearray:
    """`conn.recv_bytes()`, hearing `quiet` while the other side sends nothing mid-message.
    EOFError where the other side closed the pipe, as multiprocessing raises."""
    fd = conn.fileno()
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    (size,) = struct.unpack("!i", _read(fd, 4, poller, every_s, quiet))
    if size == -1:
        (size,) = struct.unpack("!Q", _read(fd, 8, poller, every_s, quiet))
    return _read(fd, size, poller, every_s, quiet)


def _read(fd: int, size: int, poller: select.poll, every_s: float, quiet: Quiet) -> bytearray:
    data = bytearray(size)
    view = memoryview(data)
    got, waited = 0, 0.0
    while got < size:
        if not poller.poll(every_s * 1000):
            waited = _quiet_for(every_s, waited, quiet)
            continue
        n = os.readv(fd, [view[got:]])
        if n == 0:
            raise EOFError
        got, waited = got + n, 0.0
    return data


def _quiet_for(every_s: float, waited: float, quiet: Quiet) -> float:
    """One more poll of `every_s` with nothing moved, told to `quiet`. Counted as `every_s`
    however long it took: a longer one is time the parent itself was stopped, not the
    worker's doing."""
    waited += every_s
    quiet(waited)
    return waited
