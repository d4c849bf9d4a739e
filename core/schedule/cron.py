"""Classic 5-field cron schedules (DESIGN §4): parsing, validation and wall times.

The dialect is Vixie cron's: minute, hour, day of month, month, day of week; names, ranges,
steps, lists and the usual ``@`` aliases. When both day fields are restricted a day matches if
*either* matches; a field counts as unrestricted when its text starts with ``*``. Everything
else (``L``, ``W``, ``#``, ``?``, seconds, ``@reboot``) is refused, never approximated.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from datetime import MAXYEAR, date, datetime

from coven_core.errors import ScheduleError
from coven_core.notation.i18n import N_, _
from coven_core.notation.limits import MOST_CRON_STEP
from coven_core.schedule.base import Counted

__all__ = ["CronSchedule", "field_texts"]

_LAYOUT = N_("minute hour day-of-month month day-of-week")
_ALIASES: Mapping[str, str] = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
_MONTH_NAMES = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_DAY_NAMES = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
# Index = month; February counts its leap-year length, which is what "can ever match" needs.
_LONGEST_MONTH = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_COMMON_MONTH = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
# The Gregorian calendar repeats every 400 years, so a spec with no match in that span never
# matches. Parse-time validation already rules that out; this only bounds the search.
_MONTHS_SEARCHED = 400 * 12
_SPECIAL_PART = re.compile(r"\d*(LW|L|W)")


@dataclasses.dataclass(frozen=True, slots=True)
class _Field:
    """How one of the five positions reads its text."""

    number: int
    name: str  # marked with N_: said in the reader's language
    low: int
    high: int
    names: Mapping[str, int]
    every: tuple[int, ...] = dataclasses.field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "every", tuple(range(self.low, self.high + 1)))

    def fail(self, problem: str, **values: object) -> ScheduleError:
        """A refusal naming this field; ``problem`` is a template marked with N_."""
        return ScheduleError(
            _("cron field {number} ({name}): {problem}").format(
                number=self.number, name=_(self.name), problem=_(problem).format(**values)
            )
        )


_MINUTE = _Field(1, N_("minute"), 0, 59, {})
_HOUR = _Field(2, N_("hour"), 0, 23, {})
_DAY_OF_MONTH = _Field(3, N_("day of month"), 1, 31, {})
_MONTH = _Field(4, N_("month"), 1, 12, {name: i + 1 for i, name in enumerate(_MONTH_NAMES)})
# 7 is accepted as a second Sunday and folded onto 0 after parsing.
_DAY_OF_WEEK = _Field(5, N_("day of week"), 0, 7, {name: i for i, name in enumerate(_DAY_NAMES)})
_EVERY_MONTH = frozenset(_MONTH.every)
_EVERY_WEEKDAY = frozenset(range(7))


@dataclasses.dataclass(frozen=True, slots=True, repr=False)
class CronSchedule:
    """A parsed cron spec; build it with :meth:`parse`.

    ``days_and`` is True when either day field starts with ``*``: then a day must match both
    day fields, otherwise either one (Vixie cron). ``days_of_week`` uses 0 for Sunday.
    """

    text: str  # as written; "" when built from sets (``matching_all``), which str() writes
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days_of_month: tuple[int, ...]
    months: frozenset[int]
    days_of_week: frozenset[int]
    days_and: bool

    @classmethod
    def parse(cls, text: str) -> CronSchedule:
        """Parse and validate ``text``; raise :class:`ScheduleError` naming the bad part."""
        stripped = text.strip()
        if not stripped:
            raise ScheduleError(_("cron: the expression is empty"))
        if stripped.startswith("@"):
            return _parse_alias(cls, stripped)
        return _parse_fields(cls, stripped.split(), stripped)

    @classmethod
    def matching_all(
        cls,
        minutes: tuple[int, ...] | None,
        hours: tuple[int, ...] | None,
        days_of_month: tuple[int, ...] | None,
        months: tuple[int, ...] | None,
        days_of_week: frozenset[int] | None,
    ) -> CronSchedule:
        """The minutes that match every given set (None: any value), the day fields AND-ed.

        For a schedule already validated in another notation (an RRULE that steps through
        every period, ``coven_core.schedule.rrule``): the sets are sorted and in range, and
        its text is written from them when first asked for.
        """
        return cls(
            text="",
            minutes=minutes or _MINUTE.every,
            hours=hours or _HOUR.every,
            days_of_month=days_of_month or _DAY_OF_MONTH.every,
            months=_EVERY_MONTH if months is None else frozenset(months),
            days_of_week=days_of_week or _EVERY_WEEKDAY,
            days_and=True,
        )

    @property
    def until(self) -> datetime | None:
        """Cron never ends."""
        return None

    def wall_times_from(self, start: datetime) -> Iterator[datetime]:
        """Naive wall times ``>= start`` (rounded up to a whole minute), ascending, forever.

        Raises ValueError at once if ``start`` is aware: time zones are the binding's job.
        """
        return self._wall_times(*_first_minute(start))

    def counted(self, start: datetime, end: datetime) -> Counted | None:
        """The wall times in ``[start, end)`` (naive), counted day by day instead of one by one
        (recovery after a month switched off: bench_recovery); None if there are none."""
        per_day, end_day = len(self.hours) * len(self.minutes), end.date()
        count, days = 0, _LastTwo()
        for year, month, day in self._days_from(start.year, start.month, start.day):
            today = date(year, month, day)
            if today > end_day:
                break
            low = self._before(start) if today == start.date() else 0
            high = self._before(end) if today == end_day else per_day
            if high > low:
                count += high - low
                days.note(today, low, high)
        return None if days.last is None else self._counted(count, days)

    def _counted(self, count: int, days: _LastTwo) -> Counted:
        assert days.first is not None and days.last is not None
        day, low, high = days.last
        if high - low >= 2:
            second_last: datetime | None = self._nth(day, high - 2)
        elif days.previous is not None:
            second_last = self._nth(days.previous[0], days.previous[2] - 1)
        else:
            second_last = None
        first = self._nth(*days.first)
        return Counted(count, first, second_last, self._nth(day, high - 1))

    def _before(self, wall: datetime) -> int:
        """How many of a matching day's times come before ``wall``'s time of day."""
        hours, minutes = self.hours, self.minutes
        hour_index = bisect_left(hours, wall.hour)
        before = hour_index * len(minutes)
        if hour_index < len(hours) and hours[hour_index] == wall.hour:
            minute_index = bisect_left(minutes, wall.minute)
            at_minute = minute_index < len(minutes) and minutes[minute_index] == wall.minute
            before += minute_index + (at_minute and bool(wall.second or wall.microsecond))
        return before

    def _nth(self, day: date, index: int) -> datetime:
        """A matching day's time number ``index`` (from 0): hours by minutes, in order."""
        hour, minute = divmod(index, len(self.minutes))
        return datetime(day.year, day.month, day.day, self.hours[hour], self.minutes[minute])

    def _wall_times(
        self, year: int, month: int, day: int, hour: int, minute: int
    ) -> Iterator[datetime]:
        days = self._days_from(year, month, day)
        head = next(days, None)
        if head is None:
            return
        if head == (year, month, day):
            yield from self._rest_of_day(year, month, day, hour, minute)
        else:
            yield from self._whole_day(*head)
        for year, month, day in days:
            yield from self._whole_day(year, month, day)

    def __str__(self) -> str:
        return self.text or _written(self)

    def __repr__(self) -> str:
        return f"CronSchedule.parse({str(self)!r})"

    def _whole_day(self, year: int, month: int, day: int) -> Iterator[datetime]:
        minutes = self.minutes
        for hour in self.hours:
            for minute in minutes:
                yield datetime(year, month, day, hour, minute)

    def _rest_of_day(
        self, year: int, month: int, day: int, hour: int, minute: int
    ) -> Iterator[datetime]:
        hours = self.hours
        index = bisect_left(hours, hour)
        if index < len(hours) and hours[index] == hour:
            for later in self.minutes[bisect_left(self.minutes, minute) :]:
                yield datetime(year, month, day, hour, later)
            index += 1
        minutes = self.minutes
        for later_hour in hours[index:]:
            for later in minutes:
                yield datetime(year, month, day, later_hour, later)

    def _days_from(self, year: int, month: int, day: int) -> Iterator[tuple[int, int, int]]:
        """Matching days on or after the given one, jumping over months that cannot match."""
        months_left = _MONTHS_SEARCHED
        while months_left and year <= MAXYEAR:
            if month in self.months:
                found = self._first_day_in_month(year, month, day)
                if found:
                    yield year, month, found
                    day = found + 1
                    months_left = _MONTHS_SEARCHED
                    continue
            months_left -= 1
            day = 1
            month += 1
            if month == 13:
                year += 1
                month = 1

    def _first_day_in_month(self, year: int, month: int, day: int) -> int:
        """The first matching day ``>= day`` in this month, or 0."""
        last = _month_length(year, month)
        if len(self.days_of_week) == 7 and self.days_and:
            # The common case: only the day of month decides, so find it without scanning.
            days = self.days_of_month
            index = bisect_left(days, day)
            return days[index] if index < len(days) and days[index] <= last else 0
        if day > last:
            return 0
        return self._scan_month(year, month, day, last)

    def _scan_month(self, year: int, month: int, day: int, last: int) -> int:
        weekday = date(year, month, day).isoweekday() % 7
        days_of_month, days_of_week = self.days_of_month, self.days_of_week
        for candidate in range(day, last + 1):
            by_month = candidate in days_of_month
            by_week = weekday in days_of_week
            if (by_month and by_week) if self.days_and else (by_month or by_week):
                return candidate
            weekday = (weekday + 1) % 7
        return 0


class _LastTwo:
    """The first and the last two days with times in a range: (day, low, high) each, the
    times numbered ``low`` to ``high - 1`` falling in it."""

    def __init__(self) -> None:
        self.first: tuple[date, int] | None = None
        self.previous: tuple[date, int, int] | None = None
        self.last: tuple[date, int, int] | None = None

    def note(self, day: date, low: int, high: int) -> None:
        if self.first is None:
            self.first = day, low
        self.previous, self.last = self.last, (day, low, high)


def field_texts(text: str) -> tuple[str, ...]:
    """The five fields' texts of a valid spec, an alias expanded (``@daily`` → ``0 0 * * *``)."""
    stripped = text.strip()
    return tuple(_ALIASES.get(stripped.lower(), stripped).split())


def _parse_alias(cls: type[CronSchedule], text: str) -> CronSchedule:
    alias, *rest = text.split()
    alias = alias.lower()
    expansion = _ALIASES.get(alias)
    if expansion is None:
        raise _bad_alias(alias)
    if rest:
        raise ScheduleError(
            _("cron: alias {alias} takes no fields, got {fields!r}").format(
                alias=alias, fields=" ".join(rest)
            )
        )
    return _parse_fields(cls, expansion.split(), alias)


def _bad_alias(alias: str) -> ScheduleError:
    if alias == "@reboot":
        return ScheduleError(_("cron: unsupported alias @reboot"))
    return ScheduleError(
        _("cron: unknown alias {alias} (supported: {aliases})").format(
            alias=alias, aliases=", ".join(_ALIASES)
        )
    )


def _parse_fields(cls: type[CronSchedule], parts: list[str], text: str) -> CronSchedule:
    if len(parts) != 5:
        raise ScheduleError(_field_count_message(len(parts)))
    minute, hour, day_of_month, month, day_of_week = parts
    days_and = day_of_month[0] == "*" or day_of_week[0] == "*"
    schedule = cls(
        text=text if text.startswith("@") else " ".join(parts),
        minutes=_sorted_values(minute, _MINUTE),
        hours=_sorted_values(hour, _HOUR),
        days_of_month=_sorted_values(day_of_month, _DAY_OF_MONTH),
        months=_EVERY_MONTH if month == "*" else frozenset(_parse_list(month, _MONTH)),
        days_of_week=_parse_days_of_week(day_of_week),
        days_and=days_and,
    )
    if days_and and schedule.days_of_month[0] > 28:
        _check_can_match(schedule)
    return schedule


def _field_count_message(count: int) -> str:
    if count == 6:
        message = N_("cron: expected 5 fields ({layout}), got {count} — a seconds field is not "
                     "supported")  # fmt: skip
    elif count == 7:
        message = N_("cron: expected 5 fields ({layout}), got {count} — seconds and year fields "
                     "are not supported")  # fmt: skip
    else:
        message = N_("cron: expected 5 fields ({layout}), got {count}")
    return _(message).format(layout=_(_LAYOUT), count=count)


def _check_can_match(schedule: CronSchedule) -> None:
    """Refuse a spec whose day of month exists in none of its months (``0 0 30 2 *``).

    Only needed when the day fields are AND-ed: with OR the day of week always matches some
    day. Any existing month/day pair falls on every weekday within the 400-year cycle.
    """
    longest = max(_LONGEST_MONTH[month] for month in schedule.months)
    if schedule.days_of_month[0] > longest:
        raise ScheduleError(
            _("cron: {text!r} never matches: no month in field 4 (month) has day {day}").format(
                text=schedule.text, day=schedule.days_of_month[0]
            )
        )


def _sorted_values(text: str, field: _Field) -> tuple[int, ...]:
    if text == "*":
        return field.every
    if text.isascii() and text.isdigit():
        return (_parse_value(text, field, text),)
    return tuple(sorted(_parse_list(text, field)))


def _parse_days_of_week(text: str) -> frozenset[int]:
    if text == "*":
        return _EVERY_WEEKDAY
    # 7 is a second name for Sunday (0).
    return frozenset(day % 7 for day in _parse_list(text, _DAY_OF_WEEK))


def _parse_list(text: str, field: _Field) -> set[int]:
    for special in "#?":
        if special in text:
            raise _unsupported(special, field)
    values: set[int] = set()
    for item in text.split(","):
        values.update(_parse_item(item, field))
    return values


def _parse_item(item: str, field: _Field) -> range:
    """One list item: ``*``, ``a``, ``a-b``, each optionally with ``/step``."""
    if not item:
        raise field.fail(N_("empty item in list"))
    base, slash, step_text = item.partition("/")
    step = _parse_step(step_text, field) if slash else 1
    if base == "*":
        return range(field.low, field.high + 1, step)
    first_text, dash, last_text = base.partition("-")
    first = _parse_value(first_text, field, item)
    if dash:
        last = _parse_value(last_text, field, item)
        if last < first:
            raise field.fail(N_("range {range} is reversed"), range=base)
    else:
        # Vixie cron has no ``a/n``; cronie and cronsim read it as ``a-max/n``, and so do we.
        last = field.high if slash else first
    return range(first, last + 1, step)


def _parse_step(text: str, field: _Field) -> int:
    if not (text.isascii() and text.isdigit()):
        raise field.fail(N_("step {step!r} is not a number"), step=text)
    if len(text.lstrip("0")) > len(str(MOST_CRON_STEP)) or int(text) > MOST_CRON_STEP:
        raise field.fail(
            N_("step {step} is too large: the step must be at most {most}"),
            step=text[:20],
            most=MOST_CRON_STEP,
        )
    step = int(text)
    if step == 0:
        raise field.fail(N_("step 0 is not allowed"))
    return step


def _parse_value(token: str, field: _Field, item: str) -> int:
    if token.isascii() and token.isdigit():
        value = int(token)
        if not field.low <= value <= field.high:
            raise field.fail(
                N_("{value} is out of range {low}-{high}"),
                value=value,
                low=field.low,
                high=field.high,
            )
        return value
    named = field.names.get(token.upper())
    if named is not None:
        return named
    raise _bad_value(token, field, item)


def _bad_value(token: str, field: _Field, item: str) -> ScheduleError:
    if not token:
        return field.fail(N_("{item!r} is missing a number"), item=item)
    special = _SPECIAL_PART.fullmatch(token.upper())
    if special:
        return _unsupported(special.group(1), field)
    if "*" in token:
        return field.fail(
            N_("{item!r} is not valid: '*' can only stand alone or before a step"), item=item
        )
    if "-" in token:
        return field.fail(N_("{item!r} is not a valid range"), item=item)
    if field.names:
        return field.fail(N_("unknown name {name!r}"), name=token)
    return field.fail(N_("{token!r} is not a number"), token=token)


def _unsupported(part: str, field: _Field) -> ScheduleError:
    return ScheduleError(
        _("cron: unsupported part {part!r} in field {number} ({name})").format(
            part=part, number=field.number, name=_(field.name)
        )
    )


def _first_minute(start: datetime) -> tuple[int, int, int, int, int]:
    """``start`` rounded up to a whole minute, as plain numbers.

    The day may end up one past the month's last day (or past 9999-12-31); ``_days_from``
    rolls that over like any other day that does not exist.
    """
    if start.tzinfo is not None:
        raise ValueError(f"cron wall times start from a naive datetime, got {start!r}")
    year, month, day, hour, minute = start.year, start.month, start.day, start.hour, start.minute
    if start.second or start.microsecond:
        minute += 1
        if minute == 60:
            minute, hour = 0, hour + 1
            if hour == 24:
                hour, day = 0, day + 1
    return year, month, day, hour, minute


def _written(schedule: CronSchedule) -> str:
    """The text of a schedule built from sets (``matching_all``): lists, ``*`` for a whole
    field."""
    fields = (
        (schedule.minutes, _MINUTE),
        (schedule.hours, _HOUR),
        (schedule.days_of_month, _DAY_OF_MONTH),
        (schedule.months, _MONTH),
        (schedule.days_of_week, _DAY_OF_WEEK),
    )
    return " ".join(
        "*" if set(values) >= set(field.every) - {7} else ",".join(map(str, sorted(values)))
        for values, field in fields
    )


def _month_length(year: int, month: int) -> int:
    if month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0):
        return 29
    return _COMMON_MONTH[month]
