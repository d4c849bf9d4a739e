"""The D-Bus path end to end: a private "system" dbus-daemon, fake logind and timedated
emitting their real signals, and the notifier's events (DESIGN §3, §12)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtDBus import QDBusConnection, QDBusVariant
from pytestqt.qtbot import QtBot

from coven_core.clock import VirtualClock
from coven_desktop.osnotify import Notifier, OsEvent
from coven_desktop.osnotify.drift import DriftFallback
from coven_desktop.osnotify.timerfd import open_clock_set_timer
from tests.desktop.osnotify.conftest import TIMEDATED, FakeSystem, HostZone

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="logind, timedated and timerfd are Linux's"
)

Start = Callable[..., Notifier]


def recorded(notifier: Notifier) -> list[OsEvent]:
    events: list[OsEvent] = []
    notifier.occurred.connect(events.append)
    return events


def wait_for(qtbot: QtBot, notifier: Notifier, kind: str, **fields: Any) -> Any:
    """Wait for the event of ``kind`` (and ``fields``); earlier events do not end the wait."""

    def matches(event: OsEvent) -> bool:
        wanted = {"kind": kind, **fields}
        return all(getattr(event, name) == value for name, value in wanted.items())

    return qtbot.waitSignal(notifier.occurred, timeout=5000, check_params_cb=matches)


@pytest.fixture
def notifier(
    start: Start, connect_bus: Callable[[], QDBusConnection], fake_system: FakeSystem
) -> Notifier:
    return start(bus=connect_bus(), platform="linux")


def test_sleep_then_resume_is_one_resumed_event_with_the_time_asleep(
    qtbot: QtBot, notifier: Notifier, fake_system: FakeSystem, clock: VirtualClock
) -> None:
    events = recorded(notifier)
    with wait_for(qtbot, notifier, "sleeping"):
        fake_system.prepare_for_sleep(True)
    clock.suspend(600, notify=False)
    with wait_for(qtbot, notifier, "resumed") as resumed:
        fake_system.prepare_for_sleep(False)
    with wait_for(qtbot, notifier, "timezone_changed", new_zone="Asia/Tokyo"):  # a marker:
        fake_system.timezone_set("Asia/Tokyo")  # every earlier signal has been delivered

    event = resumed.args[0]
    assert (event.source, event.slept_seconds, event.at) == ("logind", 600.0, clock.now_utc())
    assert [e.kind for e in events] == ["sleeping", "resumed", "timezone_changed"]


def test_the_sleep_is_measured_even_when_both_signals_are_handled_after_the_resume(
    qtbot: QtBot, notifier: Notifier, fake_system: FakeSystem, clock: VirtualClock
) -> None:
    """Without an inhibitor lock the machine may sleep before "true" is handled."""
    clock.advance(30)
    clock.suspend(600, notify=False)
    fake_system.prepare_for_sleep(True)
    with wait_for(qtbot, notifier, "resumed") as resumed:
        fake_system.prepare_for_sleep(False)
    assert resumed.args[0].slept_seconds == 600.0


def test_each_sleep_is_measured_from_the_previous_resume(
    qtbot: QtBot, notifier: Notifier, fake_system: FakeSystem, clock: VirtualClock
) -> None:
    durations = []
    for asleep in (600, 45):
        clock.advance(120)
        fake_system.prepare_for_sleep(True)
        clock.suspend(asleep, notify=False)
        with wait_for(qtbot, notifier, "resumed") as resumed:
            fake_system.prepare_for_sleep(False)
        durations.append(resumed.args[0].slept_seconds)
    assert durations == [600.0, 45.0]


def test_a_failed_sleep_has_no_duration(
    qtbot: QtBot, notifier: Notifier, fake_system: FakeSystem
) -> None:
    fake_system.prepare_for_sleep(True)
    with wait_for(qtbot, notifier, "resumed") as resumed:
        fake_system.prepare_for_sleep(False)
    assert resumed.args[0].slept_seconds is None


def test_a_zone_change_carries_the_old_and_new_zone(
    qtbot: QtBot, notifier: Notifier, fake_system: FakeSystem
) -> None:
    with wait_for(qtbot, notifier, "timezone_changed") as changed:
        fake_system.timezone_set("America/New_York")
    event = changed.args[0]
    assert (event.old_zone, event.new_zone, event.source) == (
        "Europe/Berlin",
        "America/New_York",
        "timedated",
    )
    assert notifier.zone == "America/New_York"


def test_the_last_known_zone_is_kept_and_a_repeat_is_not_news(
    qtbot: QtBot, notifier: Notifier, fake_system: FakeSystem
) -> None:
    events = recorded(notifier)
    fake_system.timezone_set("America/New_York")
    fake_system.timezone_set("America/New_York")
    fake_system.properties_changed({"NTP": QDBusVariant(True)}, [])  # not about the zone
    with wait_for(qtbot, notifier, "timezone_changed", new_zone="Asia/Tokyo"):
        fake_system.timezone_set("Asia/Tokyo")
    with wait_for(qtbot, notifier, "timezone_changed", new_zone="Asia/Kolkata"):
        fake_system.timezone_set("Asia/Kolkata")
    assert [(e.old_zone, e.new_zone) for e in events] == [
        ("Europe/Berlin", "America/New_York"),
        ("America/New_York", "Asia/Tokyo"),
        ("Asia/Tokyo", "Asia/Kolkata"),
    ]


def test_a_zone_invalidated_without_its_value_is_looked_up_on_the_host(
    qtbot: QtBot, notifier: Notifier, fake_system: FakeSystem, host_zone: HostZone
) -> None:
    host_zone.key = "Asia/Tokyo"
    with wait_for(qtbot, notifier, "timezone_changed") as changed:
        fake_system.properties_changed({}, ["Timezone"])
    assert (changed.args[0].old_zone, changed.args[0].new_zone) == ("Europe/Berlin", "Asia/Tokyo")


def test_malformed_signals_are_ignored_without_harm(
    qtbot: QtBot, notifier: Notifier, fake_system: FakeSystem
) -> None:
    events = recorded(notifier)
    fake_system.prepare_for_sleep("yes")  # signature s, not b
    fake_system.emit(
        "/org/freedesktop/timedate1",
        "org.freedesktop.DBus.Properties",
        "PropertiesChanged",
        ["only"],
    )
    fake_system.properties_changed({"Timezone": QDBusVariant(5)}, ["Timezone", "x"])
    fake_system.properties_changed({"Timezone": QDBusVariant("")}, ["x"])
    with wait_for(qtbot, notifier, "timezone_changed", new_zone="Asia/Tokyo"):
        fake_system.timezone_set("Asia/Tokyo")
    assert [(e.kind, e.new_zone) for e in events] == [("timezone_changed", "Asia/Tokyo")]


def test_a_peer_that_does_not_own_logind_cannot_fake_a_resume(
    qtbot: QtBot,
    notifier: Notifier,
    fake_system: FakeSystem,
    connect_bus: Callable[[], QDBusConnection],
) -> None:
    events = recorded(notifier)
    impostor = FakeSystem(connect_bus(), ())
    impostor.prepare_for_sleep(False)
    impostor.flush()  # the bus has routed the impostor's signal before the marker is sent
    with wait_for(qtbot, notifier, "timezone_changed", new_zone="Asia/Tokyo"):
        fake_system.timezone_set("Asia/Tokyo")
    assert [e.kind for e in events] == ["timezone_changed"]


def test_with_every_source_available_no_fallback_timer_runs(
    start: Start, connect_bus: Callable[[], QDBusConnection], fake_system: FakeSystem
) -> None:
    notifier = start(bus=connect_bus(), open_timer=open_clock_set_timer, platform="linux")
    assert notifier.source_names == ("logind", "timedated", "timerfd")
    assert notifier.findChild(DriftFallback) is None
    assert not any(timer.isActive() for timer in notifier.findChildren(QTimer))


def test_without_logind_only_sleep_falls_back_to_drift(
    start: Start, connect_bus: Callable[[], QDBusConnection]
) -> None:
    FakeSystem(connect_bus(), (TIMEDATED,))
    notifier = start(bus=connect_bus(), open_timer=open_clock_set_timer, platform="linux")
    fallback = notifier.findChild(DriftFallback)
    assert notifier.source_names == ("timedated", "timerfd", "drift")
    assert fallback.kinds == {"resumed"} and fallback.is_running()


def test_without_a_system_bus_sleep_and_zone_fall_back_to_drift(
    start: Start, no_bus: QDBusConnection
) -> None:
    notifier = start(bus=no_bus, open_timer=open_clock_set_timer, platform="linux")
    fallback = notifier.findChild(DriftFallback)
    assert notifier.source_names == ("timerfd", "drift")
    assert fallback.kinds == {"resumed", "timezone_changed"}
