"""A run's times for people, in the viewer's zone and locale (Babel): short enough for a
table cell ("Mar 30, 2:30 PM", "1 min 35 sec"), with the routine's own wall time where its
zone differs from the viewer's."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from babel.dates import (
    format_date,
    format_datetime,
    format_skeleton,
    format_time,
    format_timedelta,
    get_datetime_format,
    get_timezone_name,
)

from coven_core import queries
from coven_core.errors import CovenError
from coven_core.queries import _

if TYPE_CHECKING:
    from PySide6.QtWidgets import QLabel

Unit = Literal["day", "hour", "minute", "second"]
_UNITS: tuple[tuple[Unit, int], ...] = (("day", 86400), ("hour", 3600), ("minute", 60),
                                        ("second", 1))  # fmt: skip


def when(at: datetime | None, locale: str, now: datetime | None = None) -> str:
    """A local date and time without seconds, the year only when it is not this year's:
    "Mar 30, 2:30 PM" / "30. März, 14:30". A naive ``at`` is a wall time, shown as it is."""
    if at is None:
        return "—"
    local = at.astimezone() if at.tzinfo is not None else at
    this_year = now is not None and now.astimezone().year == local.year
    return _dated(local, format_time(local, "short", locale=locale), this_year, locale)


def clock(at: datetime | None, locale: str, same_day_as: datetime | None = None) -> str:
    """A local time with seconds ("2:30:05 PM"); with its date when not on ``same_day_as``'s
    ("Dec 7, 7:21:47 PM"), and the year only when that is not the same either."""
    if at is None:
        return "—"
    local = at.astimezone()
    time = format_time(local, "medium", locale=locale)
    if same_day_as is None or (day := same_day_as.astimezone()).date() == local.date():
        return time
    return _dated(local, time, day.year == local.year, locale)


def _dated(local: datetime, time: str, this_year: bool, locale: str) -> str:
    """``time`` after the short date, as the locale joins the two ("{1}, {0}")."""
    day = format_skeleton("MMMd" if this_year else "yMMMd", local, locale=locale)
    pattern = str(get_datetime_format("medium", locale=locale))
    return pattern.replace("{1}", str(day)).replace("{0}", time)


def full(at: datetime | None, locale: str) -> str:
    """A local date and time in full, with the zone's name: for the detail's header."""
    if at is None:
        return "—"
    local = at.astimezone()
    day, time = (
        format_date(local, "full", locale=locale),
        format_time(local, "medium", locale=locale),
    )
    return f"{day}, {time}"


def length(seconds: float | None, locale: str) -> str:
    """An exact length in its two largest units, short: "1 min 35 sec" / "1 Min. 35 Sek."."""
    if seconds is None:
        return "—"
    remaining, parts = round(max(seconds, 0)), list[str]()
    for unit, size in _UNITS:
        count, remaining = divmod(remaining, size)
        if count and len(parts) < 2:
            parts.append(_unit(count * size, unit, locale))
        elif parts:
            break  # "2 days 30 sec" would hide the hours between: stop at a zero unit
    return " ".join(parts) or _unit(0, "second", locale)


def _unit(seconds: int, unit: Unit, locale: str) -> str:
    return str(format_timedelta(timedelta(seconds=seconds), threshold=100, granularity=unit,
                                format="short", locale=locale))  # fmt: skip


def viewer_zone_key() -> str:
    """The viewer's IANA zone (the host's); ``UTC`` when it cannot be proven."""
    from coven_desktop.osnotify import host_zone  # the platform layer, imported when needed

    try:
        return str(host_zone())
    except CovenError:
        return "UTC"


def same_clock(at: datetime, zone: str, other: str) -> bool:
    """Whether two zones' clocks read alike at ``at`` ("UTC" and "Etc/UTC", say, or Paris and
    Berlin): then one of them says it all. Not when either is unknown."""
    try:
        return (
            at.astimezone(queries.zone(zone)).utcoffset()
            == at.astimezone(queries.zone(other)).utcoffset()
        )
    except CovenError:
        return False


def show_times_caption(label: QLabel, at: datetime, locale: str) -> None:
    """ "Times in Central European Summer Time", the zone's key as its tip: said once on a page
    whose times are all the viewer's, beside columns that name other zones."""
    zone = viewer_zone_key()
    label.setText(_("Times in {zone}").format(zone=zone_name(zone, at, locale)))
    label.setToolTip(zone)


def zone_name(key: str, at: datetime, locale: str) -> str:
    """ "Central European Summer Time" at ``at`` (the key itself for UTC and unknown keys)."""
    if key in ("UTC", "Etc/UTC"):
        return "UTC"
    try:
        return str(get_timezone_name(at.astimezone(queries.zone(key)), width="long",
                                     locale=locale))  # fmt: skip
    except (CovenError, LookupError):
        return key


def stored_wall(planned_local: str | None) -> datetime | None:
    """A stored wall time (ISO), naive; None when there is none."""
    if not planned_local:
        return None
    try:
        return datetime.fromisoformat(planned_local).replace(tzinfo=None)
    except ValueError:
        return None


def planned(at: datetime, planned_local: str | None, dst: str | None, zone: str, locale: str,
            now: datetime | None = None) -> str:  # fmt: skip
    """When a moment was planned, for the viewer: a wall time in a DST gap as the routine's
    clock read it (2:30, which never came) when the viewer shares its zone — read through
    the zone it would show as the hour after — else the instant in the viewer's zone."""
    wall = stored_wall(planned_local) if dst == "gap" else None
    if wall is not None and zone == viewer_zone_key():
        return when(wall, locale, now)
    return when(at, locale, now)


def wall_in(planned_local: str | None, at: datetime, zone: str, locale: str) -> str:
    """The moment as the routine's wall clock read it, with its zone: "2:30 AM (America/
    New_York)". The stored wall time when there is one: a time in a DST gap, read through its
    zone, would show as the hour after it."""
    wall = stored_wall(planned_local)
    if wall is None:
        try:
            wall = at.astimezone(queries.zone(zone)).replace(tzinfo=None)
        except CovenError:
            return f"{format_datetime(at, 'medium', locale=locale)} (UTC)"
    return f"{format_datetime(wall, 'medium', locale=locale)} ({zone})"
