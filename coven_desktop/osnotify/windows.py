"""Windows sleep, resume and clock/zone changes, from window messages through a native filter.

Windows broadcasts ``WM_POWERBROADCAST`` (``PBT_APMSUSPEND`` before sleeping,
``PBT_APMRESUMEAUTOMATIC`` on every resume) and ``WM_TIMECHANGE`` (the clock or the zone was
set) to top-level windows. Qt passes the messages of its own windows to native event filters as
``windows_generic_MSG`` with the address of a ``MSG``. A tray app may have no window open, so
the source creates one hidden native window to receive them.

This module imports on every platform (ctypes only, no ``wintypes``) so that the mapping and
the filter are tested everywhere by feeding them ``MSG`` structures built here. What is not
tested outside Windows is that Qt delivers the broadcasts to the hidden window.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

from PySide6.QtCore import QAbstractNativeEventFilter, QByteArray, QCoreApplication, QObject
from PySide6.QtGui import QGuiApplication, QWindow

from coven_desktop.osnotify.event import OsEventKind
from coven_desktop.osnotify.notifier import Notifier

WM_TIMECHANGE = 0x001E
WM_POWERBROADCAST = 0x0218
PBT_APMSUSPEND = 0x0004
PBT_APMRESUMESUSPEND = 0x0007  # follows RESUMEAUTOMATIC only after user input: not used
PBT_APMRESUMEAUTOMATIC = 0x0012
EVENT_TYPES = frozenset({b"windows_generic_MSG", b"windows_dispatcher_MSG"})

_POWER_KINDS: dict[int, OsEventKind] = {
    PBT_APMSUSPEND: "sleeping",
    PBT_APMRESUMEAUTOMATIC: "resumed",
}


class MSG(ctypes.Structure):
    """The Win32 ``MSG`` layout, spelled with portable fixed-width types."""

    _fields_ = (
        ("hwnd", ctypes.c_void_p),
        ("message", ctypes.c_uint32),
        ("wParam", ctypes.c_size_t),
        ("lParam", ctypes.c_ssize_t),
        ("time", ctypes.c_uint32),
        ("pt_x", ctypes.c_int32),
        ("pt_y", ctypes.c_int32),
    )


def kind_for(message: int, wparam: int) -> OsEventKind | None:
    """The OS event a window message means, if any."""
    if message == WM_TIMECHANGE:
        return "clock_changed"
    if message == WM_POWERBROADCAST:
        return _POWER_KINDS.get(wparam)
    return None


NativeEventType = QByteArray | bytes | bytearray | memoryview


def kind_of_native(event_type: NativeEventType, address: int) -> OsEventKind | None:
    """Read the ``MSG`` at ``address`` when ``event_type`` says it is one."""
    raw = event_type.data() if isinstance(event_type, QByteArray) else bytes(event_type)
    if raw not in EVENT_TYPES or not address:
        return None
    msg = MSG.from_address(address)
    return kind_for(msg.message, msg.wParam)


class PowerEventFilter(QAbstractNativeEventFilter):
    """Hands each OS event kind to ``deliver``; never swallows a message."""

    def __init__(self, deliver: Callable[[OsEventKind], None]) -> None:
        super().__init__()
        self._deliver = deliver

    def nativeEventFilter(self, event_type: NativeEventType, message: int) -> tuple[bool, int]:
        kind = kind_of_native(event_type, message)
        if kind is not None:
            self._deliver(kind)
        return False, 0


class WindowsEvents(QObject):
    name = "windows"
    kinds = frozenset({"sleeping", "resumed", "clock_changed", "timezone_changed"})

    def __init__(self, notifier: Notifier, app: QCoreApplication) -> None:
        super().__init__(notifier)
        self._notifier = notifier
        self._app = app
        self.filter = PowerEventFilter(self.deliver)
        app.installNativeEventFilter(self.filter)
        self._window = _hidden_native_window(app)

    def deliver(self, kind: OsEventKind) -> None:
        if kind == "sleeping":
            self._notifier.report_sleeping(self.name)
        elif kind == "resumed":
            self._notifier.report_resumed(self.name)
        else:  # WM_TIMECHANGE: the clock, the zone, or both
            self._notifier.report_clock_set(self.name)
            self._notifier.check_zone(self.name)

    def stop(self) -> None:
        self._app.removeNativeEventFilter(self.filter)
        if self._window is not None:
            self._window.destroy()
            self._window = None


def _hidden_native_window(app: QCoreApplication) -> QWindow | None:
    if not isinstance(app, QGuiApplication):
        return None
    window = QWindow()
    window.create()  # a native top-level window that is never shown
    return window


def windows_sources(notifier: Notifier) -> list[WindowsEvents]:
    app = QCoreApplication.instance()
    return [WindowsEvents(notifier, app)] if app is not None else []
