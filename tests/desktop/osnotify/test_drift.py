"""The drift fallback, with the virtual clock: a suspend moves boot time past monotonic time, a
wall-clock step moves the wall clock alone; and it runs only when some kind is uncovered."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

from coven_core.clock import VirtualClock
from coven_desktop.osnotify import FALLBACK_INTERVAL_MS, Notifier, OsEvent
from coven_desktop.osnotify.drift import DriftFallback
from tests.desktop.osnotify.conftest import HostZone

Start = Callable[..., Notifier]


@pytest.fixture
def notifier(start: Start) -> Notifier:
    """A platform with no notification source: the fallback covers everything."""
    return start(platform="plan9")


@pytest.fixture
def fallback(notifier: Notifier) -> DriftFallback:
    found = notifier.findChild(DriftFallback)
    assert found is not None
    return found


@pytest.fixture
def events(notifier: Notifier) -> list[OsEvent]:
    seen: list[OsEvent] = []
    notifier.occurred.connect(seen.append)
    return seen


def test_without_sources_the_fallback_watches_every_kind_every_30_seconds(
    notifier: Notifier, fallback: DriftFallback
) -> None:
    assert notifier.source_names == ("drift",)
    assert fallback.kinds == {"resumed", "clock_changed", "timezone_changed"}
    assert fallback.is_running()
    assert notifier.findChild(QTimer).interval() == FALLBACK_INTERVAL_MS == 30_000


def test_a_suspend_is_a_resume_with_the_time_asleep(
    fallback: DriftFallback, events: list[OsEvent], clock: VirtualClock
) -> None:
    clock.advance(10)
    clock.suspend(900, notify=False)
    fallback.check()
    assert [(e.kind, e.slept_seconds, e.source) for e in events] == [("resumed", 900.0, "drift")]
    assert events[0].at == clock.now_utc()


@pytest.mark.parametrize("step", [7200.0, -3600.0])
def test_a_wall_clock_step_is_a_clock_change_of_its_size(
    fallback: DriftFallback, events: list[OsEvent], clock: VirtualClock, step: float
) -> None:
    clock.advance(10)
    clock.jump_wall(step, notify=False)
    fallback.check()
    assert [(e.kind, e.jump_seconds) for e in events] == [("clock_changed", step)]


def test_a_step_during_a_sleep_is_both(
    fallback: DriftFallback, events: list[OsEvent], clock: VirtualClock
) -> None:
    clock.suspend(600, notify=False)
    clock.jump_wall(-120, notify=False)
    fallback.check()
    assert [(e.kind, e.slept_seconds or e.jump_seconds) for e in events] == [
        ("resumed", 600.0),
        ("clock_changed", -120.0),
    ]


def test_time_passing_normally_or_within_tolerance_is_not_news(
    fallback: DriftFallback, events: list[OsEvent], clock: VirtualClock
) -> None:
    clock.advance(3600)
    clock.jump_wall(1.5, notify=False)  # an NTP correction
    fallback.check()
    assert events == []


def test_a_zone_change_on_the_host_is_noticed(
    fallback: DriftFallback, events: list[OsEvent], host_zone: HostZone
) -> None:
    host_zone.key = "America/New_York"
    fallback.check()
    fallback.check()
    assert [(e.kind, e.old_zone, e.new_zone) for e in events] == [
        ("timezone_changed", "Europe/Berlin", "America/New_York")
    ]


def test_the_timer_drives_the_checks(qtbot: QtBot, start: Start, clock: VirtualClock) -> None:
    notifier = start(platform="plan9", fallback_interval_ms=5)
    clock.suspend(60, notify=False)
    with qtbot.waitSignal(notifier.occurred, timeout=5000) as resumed:
        pass
    assert (resumed.args[0].kind, resumed.args[0].slept_seconds) == ("resumed", 60.0)


def test_macos_has_no_native_source_yet_and_falls_back(start: Start) -> None:
    notifier = start(platform="darwin")
    assert notifier.source_names == ("drift",)


def test_with_every_kind_covered_no_timer_exists(start: Start) -> None:
    notifier = start(platform="win32")
    assert notifier.findChild(DriftFallback) is None
    assert not any(timer.isActive() for timer in notifier.findChildren(QTimer))


def test_stopping_stops_the_timer(notifier: Notifier, fallback: DriftFallback) -> None:
    notifier.stop()
    assert not fallback.is_running()
    assert notifier.source_names == ()
