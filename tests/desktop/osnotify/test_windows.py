"""The Windows source, tested on every platform by feeding its native filter ``MSG``
structures built with ctypes. Qt's own dispatch into the filter is not exercised off Windows:
PySide6 6.12's ``QAbstractEventDispatcher.filterNativeEvent`` binding cannot be called."""

from __future__ import annotations

import ctypes
from collections.abc import Callable

import pytest
from PySide6.QtCore import QByteArray

from coven_core.clock import VirtualClock
from coven_desktop.osnotify import Notifier, OsEvent
from coven_desktop.osnotify.event import OsEventKind
from coven_desktop.osnotify.windows import (
    MSG,
    PBT_APMRESUMEAUTOMATIC,
    PBT_APMRESUMESUSPEND,
    PBT_APMSUSPEND,
    WM_POWERBROADCAST,
    WM_TIMECHANGE,
    PowerEventFilter,
    WindowsEvents,
    kind_for,
)
from tests.desktop.osnotify.conftest import HostZone

Start = Callable[..., Notifier]
WM_PAINT = 0x000F
PBT_POWERSETTINGCHANGE = 0x8013


@pytest.mark.parametrize(
    ("message", "wparam", "kind"),
    [
        (WM_POWERBROADCAST, PBT_APMSUSPEND, "sleeping"),
        (WM_POWERBROADCAST, PBT_APMRESUMEAUTOMATIC, "resumed"),
        (WM_POWERBROADCAST, PBT_APMRESUMESUSPEND, None),  # follows RESUMEAUTOMATIC: no double
        (WM_POWERBROADCAST, PBT_POWERSETTINGCHANGE, None),
        (WM_TIMECHANGE, 0, "clock_changed"),
        (WM_PAINT, PBT_APMSUSPEND, None),
    ],
)
def test_window_messages_map_to_event_kinds(message: int, wparam: int, kind: str | None) -> None:
    assert kind_for(message, wparam) == kind


def filtered(event_type: bytes | QByteArray, message: int, wparam: int = 0) -> list[OsEventKind]:
    delivered: list[OsEventKind] = []
    msg = MSG(message=message, wParam=wparam)
    result = PowerEventFilter(delivered.append).nativeEventFilter(event_type, ctypes.addressof(msg))
    assert result == (False, 0)  # never swallows the message
    return delivered


def test_the_filter_reads_a_native_msg() -> None:
    assert filtered(b"windows_generic_MSG", WM_POWERBROADCAST, PBT_APMSUSPEND) == ["sleeping"]
    assert filtered(QByteArray(b"windows_dispatcher_MSG"), WM_TIMECHANGE) == ["clock_changed"]


def test_the_filter_ignores_other_platforms_events_and_null_messages() -> None:
    assert filtered(b"xcb_generic_event_t", WM_TIMECHANGE) == []
    delivered: list[OsEventKind] = []
    PowerEventFilter(delivered.append).nativeEventFilter(b"windows_generic_MSG", 0)
    assert delivered == []


@pytest.fixture
def windows(start: Start) -> tuple[Notifier, WindowsEvents, list[OsEvent]]:
    notifier = start(platform="win32")
    source = notifier.findChild(WindowsEvents)
    assert source is not None
    events: list[OsEvent] = []
    notifier.occurred.connect(events.append)
    return notifier, source, events


def feed(source: WindowsEvents, message: int, wparam: int = 0) -> None:
    msg = MSG(message=message, wParam=wparam)
    source.filter.nativeEventFilter(b"windows_generic_MSG", ctypes.addressof(msg))


def test_on_windows_the_filter_covers_every_kind(
    windows: tuple[Notifier, WindowsEvents, list[OsEvent]],
) -> None:
    notifier, _, _ = windows
    assert notifier.source_names == ("windows",)
    assert notifier.covered == {"sleeping", "resumed", "clock_changed", "timezone_changed"}


def test_suspend_then_resume_measures_the_sleep(
    windows: tuple[Notifier, WindowsEvents, list[OsEvent]], clock: VirtualClock
) -> None:
    _, source, events = windows
    feed(source, WM_POWERBROADCAST, PBT_APMSUSPEND)
    clock.suspend(1800, notify=False)
    feed(source, WM_POWERBROADCAST, PBT_APMRESUMEAUTOMATIC)
    feed(source, WM_POWERBROADCAST, PBT_APMRESUMESUSPEND)
    assert [(e.kind, e.slept_seconds, e.source) for e in events] == [
        ("sleeping", None, "windows"),
        ("resumed", 1800.0, "windows"),
    ]


def test_a_time_change_reports_the_clock_step_and_the_zone(
    windows: tuple[Notifier, WindowsEvents, list[OsEvent]],
    clock: VirtualClock,
    host_zone: HostZone,
) -> None:
    _, source, events = windows
    clock.jump_wall(300, notify=False)
    feed(source, WM_TIMECHANGE)
    host_zone.key = "Asia/Tokyo"  # a zone change also arrives as WM_TIMECHANGE, with no step
    feed(source, WM_TIMECHANGE)
    assert [(e.kind, e.jump_seconds, e.new_zone) for e in events] == [
        ("clock_changed", 300.0, None),
        ("timezone_changed", None, "Asia/Tokyo"),
    ]
