"""Linux time-zone changes from systemd-timedated: ``PropertiesChanged`` on its object.

Why a typed slot here, against the rule of taking the whole ``QDBusMessage``: PySide6 (checked
with 6.12) cannot read an ``a{sv}`` out of a ``QDBusArgument`` — its map-entry calls bind to
the writer and ``asVariant`` yields null pointers — so only Qt itself can decode the changed
properties. The connection names the exact signature ``sa{sv}as`` that the D-Bus specification
fixes for ``PropertiesChanged``; Qt drops a message with any other signature before the slot, so
the slot never receives arguments it cannot convert (which is what aborts a process). The
values inside are still read defensively.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import SLOT, QObject, Slot
from PySide6.QtDBus import QDBusConnection

from coven_desktop.osnotify.bus import PROPERTIES, SIGNATURE, service_available, unwrapped
from coven_desktop.osnotify.notifier import Notifier

SERVICE = "org.freedesktop.timedate1"
PATH = "/org/freedesktop/timedate1"
INTERFACE = "org.freedesktop.timedate1"
SIGNAL = "PropertiesChanged"
# A str: the stubs say bytes, but PySide6 refuses bytes.
_SLOT: Any = SLOT("on_properties_changed(QString,QVariantMap,QStringList)")


def zone_news(interface: object, changed: object, invalidated: object) -> tuple[bool, str | None]:
    """Whether the message is about the time zone, and the new zone when it carries one."""
    if interface != INTERFACE:
        return False, None
    if isinstance(changed, dict) and "Timezone" in changed:
        value = unwrapped(changed["Timezone"])
        return True, value if isinstance(value, str) and value else None
    return isinstance(invalidated, list) and "Timezone" in invalidated, None


class TimedatedWatch(QObject):
    name = "timedated"
    kinds = frozenset({"timezone_changed"})

    def __init__(self, notifier: Notifier, bus: QDBusConnection) -> None:
        super().__init__(notifier)
        self._notifier = notifier
        self._bus = bus

    def subscribe(self) -> bool:
        return bool(self._bus.connect(SERVICE, PATH, PROPERTIES, SIGNAL, SIGNATURE, self, _SLOT))

    def stop(self) -> None:
        self._bus.disconnect(SERVICE, PATH, PROPERTIES, SIGNAL, SIGNATURE, self, _SLOT)

    @Slot(str, "QVariantMap", "QStringList")
    def on_properties_changed(
        self, interface: str, changed: dict[str, Any], invalidated: list[str]
    ) -> None:
        mentioned, zone = zone_news(interface, changed, invalidated)
        if zone is not None:
            self._notifier.report_zone(self.name, zone)
        elif mentioned:  # changed without its value: ask the host
            self._notifier.check_zone(self.name)


def watch_timedated(notifier: Notifier, bus: QDBusConnection) -> TimedatedWatch | None:
    """A subscribed watch, or None when timedated is neither running nor activatable."""
    if not service_available(bus, SERVICE):
        return None
    watch = TimedatedWatch(notifier, bus)
    if watch.subscribe():
        return watch
    watch.deleteLater()
    return None
