"""A second signal whose handler runs inside the first's (Python checks for signals between
bytecodes, so `kill -TERM pid; kill -INT pid` can do that) must not leave both handlers
taking themselves for the second: the command then ran on to the end and printed its
output as if never stopped."""

from __future__ import annotations

import signal

import pytest

from ndpkit import cli


class _SecondArrivesAt(list[int]):
    """`_received`, with the other signal's handler run at the first append (`after=True`)
    or at the first look at the list (before the append)."""

    def __init__(self, second: signal.Signals, *, after: bool) -> None:
        super().__init__()
        self.second, self.after, self.fired = second, after, False

    def _fire(self) -> None:
        if not self.fired:
            self.fired = True
            cli._on_signal(self.second, None)

    def append(self, signum: int) -> None:
        super().append(signum)
        if self.after:
            self._fire()

    def __len__(self) -> int:
        if not self.after:
            self._fire()
        return super().__len__()


STOPS = {signal.SIGINT: KeyboardInterrupt, signal.SIGTERM: cli.Terminated}


@pytest.mark.parametrize("after", [True, False], ids=["after-append", "before-append"])
@pytest.mark.parametrize(
    ("first", "second"),
    [(signal.SIGTERM, signal.SIGINT), (signal.SIGINT, signal.SIGTERM), (signal.SIGINT,) * 2],
)
def test_exactly_one_stop_comes_out(
    monkeypatch: pytest.MonkeyPatch, first: signal.Signals, second: signal.Signals, after: bool
) -> None:
    received = _SecondArrivesAt(second, after=after)
    monkeypatch.setattr(cli, "_received", received)
    with pytest.raises((KeyboardInterrupt, cli.Terminated)) as stop:
        cli._on_signal(first, None)
    assert received.fired
    # Before its append, the first handler is cut short by the second's stop and goes
    # unrecorded: only the "third signal kills at once" count is one short.
    assert received == ([first, second] if after else [second])
    # The stop raised is the one of the signal recorded first, which the command reports.
    assert isinstance(stop.value, STOPS[signal.Signals(received[0])])
