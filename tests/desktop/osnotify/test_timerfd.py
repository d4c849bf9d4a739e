"""The wall-clock timer: its reading and re-arming with an injected descriptor (a pipe whose
read fails with ECANCELED, as a cancelled timerfd's does), and a real timerfd armed on Linux
without setting it off (that would take changing the system clock)."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable, Iterator

import pytest
from PySide6.QtDBus import QDBusConnection
from pytestqt.qtbot import QtBot

from coven_core.clock import VirtualClock
from coven_desktop.osnotify import Notifier, OsEvent
from coven_desktop.osnotify.timerfd import CancelOnSetTimer, open_clock_set_timer

Start = Callable[..., Notifier]
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="timerfd is Linux's")


class PipeTimer:
    """A pipe standing in for the timerfd: a byte written makes it readable."""

    def __init__(self, failure: int | None = errno.ECANCELED) -> None:
        self.read_end, self.write_end = os.pipe()
        self.failure = failure
        self.armed: list[int] = []
        self.timer = CancelOnSetTimer(self.read_end, arm=self.armed.append, read=self._read)

    def _read(self, fd: int, size: int) -> bytes:
        data = os.read(fd, size)  # drain, or the notifier would fire again at once
        if self.failure == errno.EAGAIN:
            raise BlockingIOError(errno.EAGAIN, "nothing to read")
        if self.failure is not None:
            raise OSError(self.failure, os.strerror(self.failure))
        return data

    def set_off(self) -> None:
        os.write(self.write_end, b"x")


@pytest.fixture
def pipe_timer() -> Iterator[PipeTimer]:
    """The read end belongs to the notifier, which closes it when the test's notifier stops."""
    pipe = PipeTimer()
    yield pipe
    os.close(pipe.write_end)


def started(start: Start, pipe: PipeTimer) -> tuple[Notifier, list[OsEvent]]:
    notifier = start(open_timer=lambda: pipe.timer)
    events: list[OsEvent] = []
    notifier.occurred.connect(events.append)
    return notifier, events


@pytest.fixture
def start_linux(start: Start, no_bus: QDBusConnection) -> Start:
    """Linux's sources, on a machine without a system bus."""
    return lambda **options: start(platform="linux", bus=no_bus, **options)


def test_a_cancelled_read_reports_the_step_and_rearms(
    qtbot: QtBot, start_linux: Start, pipe_timer: PipeTimer, clock: VirtualClock
) -> None:
    notifier, _ = started(start_linux, pipe_timer)
    assert "timerfd" in notifier.source_names
    clock.advance(60)
    clock.jump_wall(-3600, notify=False)
    with qtbot.waitSignal(notifier.occurred, timeout=5000) as changed:
        pipe_timer.set_off()
    event = changed.args[0]
    assert (event.kind, event.jump_seconds, event.source) == ("clock_changed", -3600.0, "timerfd")
    assert pipe_timer.armed == [pipe_timer.read_end]


def test_each_step_is_measured_from_the_previous_one(
    qtbot: QtBot, start_linux: Start, pipe_timer: PipeTimer, clock: VirtualClock
) -> None:
    notifier, events = started(start_linux, pipe_timer)
    for step in (120, -45):
        clock.jump_wall(step, notify=False)
        with qtbot.waitSignal(notifier.occurred, timeout=5000):
            pipe_timer.set_off()
    assert [e.jump_seconds for e in events] == [120.0, -45.0]


def test_a_cancel_without_a_step_is_not_reported(
    qtbot: QtBot, start_linux: Start, pipe_timer: PipeTimer, clock: VirtualClock
) -> None:
    """Linux cancels the timer on resume from sleep too; the sleep is no clock step."""
    _, events = started(start_linux, pipe_timer)
    clock.suspend(3600, notify=False)
    pipe_timer.set_off()
    qtbot.waitUntil(lambda: pipe_timer.armed != [], timeout=5000)
    assert events == []


def test_readiness_without_a_cancel_neither_reports_nor_rearms(
    qtbot: QtBot, start_linux: Start, clock: VirtualClock
) -> None:
    pipe = PipeTimer(failure=None)  # a plain read: the timer expired (never at the far future)
    try:
        _, events = started(start_linux, pipe)
        clock.jump_wall(600, notify=False)
        pipe.set_off()
        qtbot.waitUntil(lambda: _drained(pipe.read_end), timeout=5000)
        assert (events, pipe.armed) == ([], [])
    finally:
        os.close(pipe.write_end)


def test_an_unexpected_read_error_stops_the_watch_and_closes_it(
    qtbot: QtBot, start_linux: Start, caplog: pytest.LogCaptureFixture
) -> None:
    pipe = PipeTimer(failure=errno.EIO)
    try:
        started(start_linux, pipe)
        pipe.set_off()
        qtbot.waitUntil(lambda: pipe.timer.fileno() == -1, timeout=5000)
        assert "the wall-clock timer failed" in caplog.text
    finally:
        os.close(pipe.write_end)


def test_stopping_closes_the_descriptor(start_linux: Start, pipe_timer: PipeTimer) -> None:
    notifier, _ = started(start_linux, pipe_timer)
    notifier.stop()
    assert pipe_timer.timer.fileno() == -1


@linux_only
def test_a_real_timerfd_arms_and_stays_quiet() -> None:
    timer = CancelOnSetTimer.open()
    try:
        assert timer.fileno() >= 0
        assert timer.was_set() is False  # armed at the far future: nothing to read
        timer.arm()  # re-arming is what follows a cancel
        assert timer.was_set() is False
    finally:
        fd = timer.fileno()
        timer.close()
    with pytest.raises(OSError):
        os.fstat(fd)


@linux_only
def test_the_real_timer_is_the_default_source_for_clock_steps(start_linux: Start) -> None:
    notifier = start_linux(open_timer=open_clock_set_timer)
    assert "clock_changed" in notifier.covered
    assert "timerfd" in notifier.source_names


def test_no_timer_off_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert open_clock_set_timer() is None


def _drained(fd: int) -> bool:
    os.set_blocking(fd, False)
    try:
        return os.read(fd, 1) == b""
    except BlockingIOError:
        return True
