"""Linux sleep and resume from systemd-logind: ``PrepareForSleep(bool)`` on the system bus.

logind sends ``true`` just before the machine sleeps and ``false`` once it has resumed (or the
sleep failed). The slot takes the whole ``QDBusMessage`` and reads the boolean defensively: a
typed QtDBus slot that receives another signature aborts the process. Only the owner of the
``org.freedesktop.login1`` name is listened to, so no other peer on the bus can fake a resume.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import SLOT, QObject, Slot
from PySide6.QtDBus import QDBusConnection, QDBusMessage

from coven_desktop.osnotify.bus import service_available
from coven_desktop.osnotify.notifier import Notifier

SERVICE = "org.freedesktop.login1"
PATH = "/org/freedesktop/login1"
INTERFACE = "org.freedesktop.login1.Manager"
SIGNAL = "PrepareForSleep"
_SLOT: Any = SLOT(
    "on_prepare_for_sleep(QDBusMessage)"
)  # a str: the stubs say bytes, PySide6 refuses bytes


def going_to_sleep(arguments: list[Any]) -> bool | None:
    """``PrepareForSleep``'s boolean, or None when the message is not what logind sends."""
    if len(arguments) == 1 and isinstance(arguments[0], bool):
        return arguments[0]
    return None


class LogindWatch(QObject):
    name = "logind"
    kinds = frozenset({"sleeping", "resumed"})

    def __init__(self, notifier: Notifier, bus: QDBusConnection) -> None:
        super().__init__(notifier)
        self._notifier = notifier
        self._bus = bus

    def subscribe(self) -> bool:
        return bool(self._bus.connect(SERVICE, PATH, INTERFACE, SIGNAL, self, _SLOT))

    def stop(self) -> None:
        self._bus.disconnect(SERVICE, PATH, INTERFACE, SIGNAL, self, _SLOT)

    @Slot(QDBusMessage)
    def on_prepare_for_sleep(self, message: QDBusMessage) -> None:
        going = going_to_sleep(message.arguments())
        if going is True:
            self._notifier.report_sleeping(self.name)
        elif going is False:
            self._notifier.report_resumed(self.name)


def watch_logind(notifier: Notifier, bus: QDBusConnection) -> LogindWatch | None:
    """A subscribed watch, or None when logind is not on this bus."""
    if not service_available(bus, SERVICE):
        return None
    watch = LogindWatch(notifier, bus)
    if watch.subscribe():
        return watch
    watch.deleteLater()
    return None
