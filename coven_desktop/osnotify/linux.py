"""Linux sources: logind (sleep/resume) and timedated (zone) on the system bus, and a timerfd
(wall-clock steps). Each is used when available; the rest falls to the drift fallback."""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtDBus import QDBusConnection

from coven_desktop.osnotify.logind import watch_logind
from coven_desktop.osnotify.notifier import Notifier, Source
from coven_desktop.osnotify.timedated import watch_timedated
from coven_desktop.osnotify.timerfd import ClockSetTimer, ClockSetWatch

log = logging.getLogger(__name__)

TimerOpener = Callable[[], ClockSetTimer | None]


def linux_sources(
    notifier: Notifier, bus: QDBusConnection | None, open_timer: TimerOpener
) -> list[Source]:
    sources = bus_sources(notifier, bus if bus is not None else QDBusConnection.systemBus())
    timer = open_timer()
    if timer is not None:
        sources.append(ClockSetWatch(notifier, timer))
    return sources


def bus_sources(notifier: Notifier, bus: QDBusConnection) -> list[Source]:
    if not bus.isConnected():
        log.info("no system bus (%s): sleep and zone changes by drift", bus.lastError().message())
        return []
    watches = (watch_logind(notifier, bus), watch_timedated(notifier, bus))
    return [watch for watch in watches if watch is not None]
