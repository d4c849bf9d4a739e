"""The app reacts to the OS through a fake logind and timedated on a private bus (issue #7):
a resume from sleep applies the misfire policy at once; a zone change asks keep-or-follow."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import qasync
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtDBus import QDBusConnection

from coven_core.clock import VirtualClock
from coven_core.events import Event, EventKind
from coven_core.model import RevisionSpec
from coven_desktop.desktop import Desktop
from coven_desktop.osnotify import start_notifiers
from tests.desktop.osnotify.conftest import FakeServices

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def loop(qapp: Any) -> Iterator[qasync.QEventLoop]:
    event_loop = qasync.QEventLoop(qapp, already_running=False)
    asyncio.set_event_loop(event_loop)
    yield event_loop
    event_loop.close()
    asyncio.set_event_loop(None)
    gc.collect()  # on the GUI thread: see tests/desktop/conftest.py's loop


@pytest.fixture
def app_on_fake_bus(
    tmp_path: Path, loop: qasync.QEventLoop, connect_bus: Callable[[], QDBusConnection],
    monkeypatch: pytest.MonkeyPatch, fake_system: Any,
) -> Iterator[Desktop]:  # fmt: skip
    """The fake logind and timedated own their names before the app looks for them."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    yield from running_app(tmp_path, loop, connect_bus())


def running_app(tmp_path: Path, loop: qasync.QEventLoop, bus: QDBusConnection) -> Iterator[Desktop]:
    """The app with its OS notifications and its host's state on ``bus``, started, then closed."""
    clock = VirtualClock(T0, autojump=False)

    def notifier(parent):  # type: ignore[no-untyped-def]
        return start_notifiers(parent, now=clock.now_utc, monotonic=clock.monotonic,
                               boot_time=clock.boot_time, local_zone=lambda: "Europe/Berlin",
                               bus=bus)  # fmt: skip

    desktop = Desktop(tmp_path / "data", clock, notifier_factory=notifier, system_bus=lambda: bus)
    loop.run_until_complete(desktop.start())
    yield desktop
    loop.run_until_complete(desktop.close(5))
    desktop.deleteLater()
    loop.run_until_complete(asyncio.sleep(0))
    # Freed here, on the GUI thread: a collection a worker thread happens to start must not
    # destroy a widget with live timers ("Timers cannot be stopped from another thread").
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


def next_event(desktop: Desktop, loop: qasync.QEventLoop, wanted: Callable[[Event], bool]) -> Event:
    found: asyncio.Future[Event] = loop.create_future()

    def look(events: list[Event]) -> None:
        for event in events:
            if wanted(event) and not found.done():
                found.set_result(event)

    desktop.service.eventsArrived.connect(look)
    try:
        return loop.run_until_complete(asyncio.wait_for(found, 20))
    finally:
        desktop.service.eventsArrived.disconnect(look)


def add(desktop: Desktop, loop: qasync.QEventLoop, spec: RevisionSpec) -> None:
    loop.run_until_complete(desktop.service.call(lambda e: e.operator.add_routine("r", spec)))


def test_a_resume_from_sleep_applies_the_misfire_policy_at_once(
    app_on_fake_bus: Desktop, loop: qasync.QEventLoop, fake_system: Any
) -> None:
    desktop = app_on_fake_bus
    add(desktop, loop, RevisionSpec("*/5 * * * *", "UTC", ("/bin/true",)))
    next_event(desktop, loop, lambda e: e.kind is EventKind.SETTLED)  # 12:00 ran
    fake_system.prepare_for_sleep(True)
    desktop.clock.suspend(timedelta(hours=3), notify=False)  # only the OS says so
    fake_system.prepare_for_sleep(False)
    missed = next_event(desktop, loop, lambda e: e.data.get("reason") == "missed")
    assert (missed.data["cause"], missed.data["count"]) == ("asleep", 35)


def test_a_zone_change_asks_and_following_makes_a_new_revision(
    app_on_fake_bus: Desktop, loop: qasync.QEventLoop, fake_system: Any
) -> None:
    desktop = app_on_fake_bus
    add(desktop, loop, RevisionSpec("30 2 * * *", "local", ("/bin/true",)))
    fake_system.timezone_set("America/New_York")
    next_event(desktop, loop, lambda e: e.kind is EventKind.TIMEZONE_CHANGED)
    loop.run_until_complete(desktop.settle())
    (prompt,) = desktop.zone_prompts
    assert (prompt.choice.kept_zone, prompt.choice.host_zone) == (
        "Europe/Berlin",
        "America/New_York",
    )
    prompt.follow_button.click()
    loop.run_until_complete(desktop.settle())
    view = loop.run_until_complete(desktop.service.call(
        lambda e: e.store.conn.execute(
            "SELECT number, timezone, zone_source FROM revisions ORDER BY number").fetchall()))  # fmt: skip
    assert view == [
        (1, "Europe/Berlin", "local: TZ"),
        (2, "America/New_York", "local: followed the host"),
    ]


@pytest.fixture
def app_with_upower(
    tmp_path: Path, loop: qasync.QEventLoop, connect_bus: Callable[[], QDBusConnection],
    fake_system: Any,
) -> Iterator[tuple[Desktop, Any]]:  # fmt: skip
    """The app on a bus where a fake UPower runs too (issue #23): conditions follow it."""
    upower = FakeServices(connect_bus(), ("org.freedesktop.UPower",))
    for desktop in running_app(tmp_path, loop, connect_bus()):
        yield desktop, upower


def test_a_moment_on_battery_runs_when_upower_says_the_mains_came_back(
    app_with_upower: tuple[Desktop, Any], loop: qasync.QEventLoop, qtbot: Any
) -> None:
    from coven_core.host import Power
    from coven_desktop.osnotify.hoststate import UPOWER

    desktop, upower = app_with_upower
    upower.changed(UPOWER, {"OnBattery": True})
    qtbot.waitUntil(lambda: desktop.host.state().power is Power.BATTERY, timeout=5000)
    spec = RevisionSpec("0 12 * * *", "UTC", ("/bin/true",), on_ac_power=True,
                        grace=timedelta(hours=1))  # fmt: skip
    add(desktop, loop, spec)
    assert until(loop, lambda: states(desktop, loop) == [("planned",)])  # it waits
    upower.changed(UPOWER, {"OnBattery": False})
    settled = next_event(desktop, loop, lambda e: e.kind is EventKind.SETTLED)
    assert settled.data["disposition"] == "succeeded"


def states(desktop: Desktop, loop: qasync.QEventLoop) -> list[tuple[str]]:
    return loop.run_until_complete(desktop.service.call(
        lambda e: e.store.conn.execute("SELECT state FROM occurrences").fetchall()))  # fmt: skip


def until(loop: qasync.QEventLoop, done: Callable[[], bool], seconds: float = 10) -> bool:
    """Let the app run (its scheduler plans on its own thread) until ``done``."""
    for _ in range(int(seconds / 0.05)):
        if done():
            return True
        loop.run_until_complete(asyncio.sleep(0.05))
    return done()


def test_a_coming_sleep_is_recorded_with_the_runs_in_flight(
    app_with_upower: tuple[Desktop, Any], loop: qasync.QEventLoop, fake_system: Any
) -> None:
    desktop, _upower = app_with_upower
    fake_system.prepare_for_sleep(True)
    sleeping = next_event(desktop, loop, lambda e: e.kind is EventKind.SLEEPING)
    assert sleeping.data == {"in_flight": []}
