"""``start_notifiers``: pick the notification sources this machine has, and the fallback."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import datetime

from PySide6.QtCore import QObject
from PySide6.QtDBus import QDBusConnection

from coven_core.queries import resolve_local_zone
from coven_desktop.osnotify.clocks import Clocks
from coven_desktop.osnotify.drift import FALLBACK_KINDS, DriftFallback
from coven_desktop.osnotify.linux import TimerOpener, linux_sources
from coven_desktop.osnotify.notifier import Notifier, Source, ZoneLookup
from coven_desktop.osnotify.timerfd import open_clock_set_timer

#: How often the drift fallback looks, when it runs at all.
FALLBACK_INTERVAL_MS = 30_000


def host_zone() -> str:
    """The host's zone as a proven IANA key (DESIGN §3); raises ZoneError otherwise.

    It reads ``TZ`` first, as the C library does: a process started with ``TZ`` set keeps
    that zone, whatever timedated says.
    """
    return resolve_local_zone().key


def start_notifiers(
    parent: QObject | None,
    *,
    now: Callable[[], datetime],
    monotonic: Callable[[], float],
    boot_time: Callable[[], float],
    local_zone: ZoneLookup,
    bus: QDBusConnection | None = None,
    open_timer: TimerOpener = open_clock_set_timer,
    platform: str = sys.platform,
    fallback_interval_ms: int = FALLBACK_INTERVAL_MS,
) -> Notifier:
    """Start every source available here; connect to the returned notifier's ``occurred``.

    ``bus`` is the system bus to use on Linux (default: ``QDBusConnection.systemBus()``, which
    Qt caches per process; tests pass ``QDBusConnection.connectToBus(address, name)``).
    ``open_timer`` opens the wall-clock timer, or returns None when there is none.
    ``platform`` is ``sys.platform``. The drift fallback runs only for the kinds no source
    covers.
    """
    clocks = Clocks(now, monotonic, boot_time)
    notifier = Notifier(clocks, local_zone, parent)
    for source in platform_sources(notifier, platform, bus, open_timer):
        notifier.add_source(source)
    _start_fallback(notifier, clocks, fallback_interval_ms)
    return notifier


def platform_sources(
    notifier: Notifier, platform: str, bus: QDBusConnection | None, open_timer: TimerOpener
) -> list[Source]:
    if platform.startswith("linux"):
        return linux_sources(notifier, bus, open_timer)
    # Each platform's sources are imported on that platform only (bench_idle: "launch to
    # tray ready").
    if platform == "win32":
        from coven_desktop.osnotify.windows import windows_sources

        return list(windows_sources(notifier))
    if platform == "darwin":
        from coven_desktop.osnotify.macos import macos_sources

        return macos_sources(notifier)
    return []


def _start_fallback(notifier: Notifier, clocks: Clocks, interval_ms: int) -> None:
    missing = FALLBACK_KINDS - notifier.covered
    if not missing:
        return
    fallback = DriftFallback(notifier, clocks, missing, interval_ms)
    notifier.add_source(fallback)
    fallback.start()
