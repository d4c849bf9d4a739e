"""systemd's ``OnCalendar=`` (systemd.time(7)) to and from Coven's cron, for the part where
the two mean the same moments; anything else is refused with the part named.

Both are wall-clock schedules read in a zone. They differ in one rule that matters: systemd
requires a weekday *and* a day of month when both are given, while cron (when neither field
starts with ``*``) takes *either*. So an either-day cron becomes two ``OnCalendar=`` lines,
and a both-day ``OnCalendar=`` with a restricted day of month has no cron form.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from coven_core.errors import ScheduleError, ZoneError
from coven_core.notation.i18n import _
from coven_core.schedule.cron import CronSchedule
from coven_core.tz import tzdb

_DAYS = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")
_SHORTHANDS = {
    "minutely": "*-*-* *:*:00",
    "hourly": "*-*-* *:00:00",
    "daily": "*-*-* 00:00:00",
    "weekly": "Mon *-*-* 00:00:00",
    "monthly": "*-*-01 00:00:00",
    "yearly": "*-01-01 00:00:00",
    "annually": "*-01-01 00:00:00",
    "quarterly": "*-01,04,07,10-01 00:00:00",
    "semiannually": "*-01,07-01 00:00:00",
}
_ITEM = re.compile(r"(\*|\d+)(?:\.\.(\d+))?(?:/(\d+))?")
_HIGHEST = {"minute": 59, "hour": 23, "day": 31, "month": 12}


# -- Coven → systemd ------------------------------------------------------------------------
def oncalendar_lines(cron: str, zone: str) -> list[str]:
    """The ``OnCalendar=`` values (one or two) for a cron spec in ``zone``."""
    schedule = CronSchedule.parse(cron)
    time = f"{_listed(schedule.hours)}:{_listed(schedule.minutes)}:00"
    months = "*" if len(schedule.months) == 12 else _listed(sorted(schedule.months))
    days = "*" if len(schedule.days_of_month) == 31 else _listed(schedule.days_of_month)
    weekdays = "" if len(schedule.days_of_week) == 7 else _weekdays(schedule.days_of_week)
    if schedule.days_and or not weekdays:
        return [_line(weekdays, f"*-{months}-{days}", time, zone)]
    # Either day: one line per day field; systemd elapses at the union of its lines.
    by_week = _line(weekdays, f"*-{months}-*", time, zone)
    return [by_week, _line("", f"*-{months}-{days}", time, zone)]


def _line(weekdays: str, date: str, time: str, zone: str) -> str:
    return " ".join(part for part in (weekdays, date, time, zone) if part)


def _listed(numbers: Iterable[int]) -> str:
    """``0,15,30,45``; a run of three or more becomes ``a..b``."""
    values = sorted(numbers)
    parts: list[str] = []
    start = 0
    while start < len(values):
        end = start
        while end + 1 < len(values) and values[end + 1] == values[end] + 1:
            end += 1
        if end - start >= 2:
            parts.append(f"{values[start]:02d}..{values[end]:02d}")
        else:
            parts.extend(f"{value:02d}" for value in values[start : end + 1])
        start = end + 1
    return ",".join(parts)


def _weekdays(days: Iterable[int]) -> str:
    return ",".join(_DAYS[day] for day in sorted(days))


# -- systemd → Coven ------------------------------------------------------------------------
def cron_of(value: str) -> tuple[str, str | None]:
    """A cron spec for one ``OnCalendar=`` value, and its trailing zone (None: none given)."""
    words = value.split()
    zone = _trailing_zone(words)
    if len(words) == 1 and words[0].lower() in _SHORTHANDS:
        words = _SHORTHANDS[words[0].lower()].split()
    weekdays = words.pop(0) if words and words[0][:1].isalpha() else None
    date = words.pop(0) if words and "-" in words[0] else "*-*-*"
    time = words.pop(0) if words and ":" in words[0] else "00:00:00"
    if words:
        raise ScheduleError(
            _("OnCalendar={value}: cannot read {words!r}").format(
                value=value, words=" ".join(words)
            )
        )
    month, day = _date(date)
    hour, minute = _time(time)
    dow = _weekday_field(weekdays) if weekdays else "*"
    if weekdays and not day.startswith("*"):
        raise ScheduleError(
            _(
                "OnCalendar={value}: a weekday and a day of month together (systemd needs both,"
                " cron either) has no cron form"
            ).format(value=value)
        )
    cron = f"{minute} {hour} {day} {month} {dow}"
    CronSchedule.parse(cron)
    return cron, zone


def _trailing_zone(words: list[str]) -> str | None:
    if len(words) > 1 and ":" not in words[-1] and "-" not in words[-1][:5]:
        try:
            tzdb.zone(words[-1])
        except ZoneError:
            return None
        return words.pop()
    return None


def _date(text: str) -> tuple[str, str]:
    if "~" in text:
        raise ScheduleError(
            _("OnCalendar date {text!r}: '~' (days before the month's end)").format(text=text)
        )
    parts = text.split("-")
    if len(parts) == 3:
        if parts[0] != "*":
            raise ScheduleError(
                _("OnCalendar date {text!r}: a year has no cron form").format(text=text)
            )
        parts = parts[1:]
    if len(parts) != 2:
        raise ScheduleError(
            _("OnCalendar date {text!r}: expected [YEAR-]MONTH-DAY").format(text=text)
        )
    return _component(parts[0], "month"), _component(parts[1], "day")


def _time(text: str) -> tuple[str, str]:
    parts = text.split(":")
    if len(parts) == 3:
        if parts[2].lstrip("0"):
            raise ScheduleError(
                _("OnCalendar time {text!r}: seconds other than 00").format(text=text)
            )
        parts = parts[:2]
    if len(parts) != 2:
        raise ScheduleError(
            _("OnCalendar time {text!r}: expected HOUR:MINUTE[:SECOND]").format(text=text)
        )
    return _component(parts[0], "hour"), _component(parts[1], "minute")


def _unreadable(unit: str, text: str, item: str) -> ScheduleError:
    return ScheduleError(
        _("OnCalendar {unit} {text!r}: cannot read {item!r}").format(
            unit=unit, text=text, item=item
        )
    )


def _component(text: str, unit: str) -> str:
    """``*``, ``5``, ``1..5``, ``0/15``, ``1..10/2`` and lists of them, as cron text."""
    items = []
    for item in text.split(","):
        match = _ITEM.fullmatch(item)
        if not match:
            raise _unreadable(unit, text, item)
        first, last, step = match.groups()
        if first == "*" and last:
            raise _unreadable(unit, text, item)
        start = first if first == "*" else str(int(first))
        if step and not last and first != "*":
            last = str(_HIGHEST[unit])  # systemd's "0/15" repeats to the end: cron's 0-59/15
        span = f"{start}-{int(last)}" if last else start
        items.append(f"{span}/{int(step)}" if step else span)
    return ",".join(items)


def _weekday_field(text: str) -> str:
    days: list[str] = []
    for item in text.split(","):
        ends = re.split(r"\.\.|-", item)
        numbers = [_weekday(end, text) for end in ends]
        if len(numbers) == 2:
            days.append(f"{numbers[0]}-{numbers[1]}")
        elif len(numbers) == 1:
            days.append(str(numbers[0]))
        else:
            raise ScheduleError(
                _("OnCalendar weekdays {text!r}: cannot read {item!r}").format(text=text, item=item)
            )
    return ",".join(days)


def _weekday(name: str, text: str) -> int:
    for number, day in enumerate(_DAYS):
        if name[:3].lower() == day.lower() and day.lower().startswith(name[:3].lower()):
            return number
    raise ScheduleError(
        _("OnCalendar weekdays {text!r}: unknown day {name!r}").format(text=text, name=name)
    )
