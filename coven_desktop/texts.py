"""What the desktop says, in the user's locale: Babel for dates, times and durations, and
every sentence through gettext so it can be translated."""

from __future__ import annotations

from datetime import datetime

from babel.dates import format_date, format_time, format_timedelta

from coven_core.queries import _


def when(at: datetime, now: datetime, locale: str) -> str:
    """ "today 02:30, in 5 hours" / "tomorrow 02:30, in 17 hours" / "Sat, 5 Dec 02:30, in …"."""
    local_at, local_now = at.astimezone(), now.astimezone()
    time = format_time(local_at, format="short", locale=locale)
    days = (local_at.date() - local_now.date()).days
    if days == 0:
        day = _("today", locale)
    elif days == 1:
        day = _("tomorrow", locale)
    else:
        day = format_date(local_at, format="medium", locale=locale)
    delta = format_timedelta(at - now, add_direction=True, locale=locale)
    return f"{day} {time}, {delta}"


def tz_database(version: str, source: str) -> str:
    """``2026f, the system's`` / ``2026f, bundled (tzdata)``: which tz database is in use."""
    words = _("the system's") if source == "system" else _("bundled (tzdata)")
    return _("{version}, {source}").format(version=version, source=words)
