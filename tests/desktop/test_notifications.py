"""Notifications from engine events, through the desktop's one bridge (issue #18: overrun)."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from coven_core.events import Event, EventKind
from coven_desktop.desktop import Desktop
from tests.desktop.conftest import T0


def test_an_overrun_event_shows_one_notification_in_human_durations(
    desktop: Desktop, qtbot: QtBot
) -> None:
    shown: list[tuple[str, str]] = []
    desktop.notifications._show = lambda title, body: shown.append((title, body))
    desktop.notifications.locale = "en_US"
    data = {"routine": "backup", "running_seconds": 3 * 3600.0, "usual_seconds": 240.0}
    overran = Event(1, T0, EventKind.OVERRUN, "r", "r@1", data)
    desktop.service.eventsArrived.emit([overran])
    qtbot.waitUntil(lambda: bool(shown))
    assert shown == [
        ("A run is taking much longer than usual", "backup: running for 3 hr; usually 4 min")
    ]
