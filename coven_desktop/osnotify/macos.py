"""macOS: no native source yet; the drift fallback covers every kind of event.

The native notifications are ``NSWorkspaceWillSleepNotification`` /
``NSWorkspaceDidWakeNotification`` on the workspace notification center and
``NSSystemClockDidChangeNotification`` / ``NSSystemTimeZoneDidChangeNotification``. PySide6
gives no access to them (it would take an Objective-C bridge such as PyObjC, which Coven does
not depend on), so this stub returns no source and ``start_notifiers`` falls back to drift.

Caveat for whoever injects the clocks on macOS: Python's ``time.monotonic`` stops while the Mac
sleeps, and so must ``monotonic``; ``boot_time`` must keep counting, which
``time.clock_gettime(time.CLOCK_MONOTONIC)`` does there. If both stand still in sleep, a sleep
shows up as a forward clock step instead of a resume.
"""

from __future__ import annotations

from coven_desktop.osnotify.notifier import Notifier, Source


def macos_sources(notifier: Notifier) -> list[Source]:
    return []
