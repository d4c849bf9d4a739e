"""A schedule in words: "Every day at 2:30 AM", "Every 15 minutes", "On the last day of each
month at 6:00 PM" (DESIGN §12, the Routines window).

The sentence is built from the *parsed* schedule (cron fields, RRULE parts, the interval's
step, the once wall time), never from its text, so it says what the planner will do. A shape
with no natural sentence gets a faithful generic one (the rule itself, or the cron fields read
out) — a short sentence that is wrong would be worse than a long one that is right.

Sentences go through gettext (:func:`coven_core.notation.i18n._`); times, dates, weekday and month
names, lists and units through Babel in the given locale.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from babel.dates import (
    format_date,
    format_skeleton,
    format_time,
    get_datetime_format,
    get_day_names,
    get_month_names,
)
from babel.lists import format_list
from babel.units import format_unit

from coven_core.notation.i18n import _
from coven_core.schedule.cron import CronSchedule
from coven_core.schedule.interval import IntervalSchedule
from coven_core.schedule.once import OnceSchedule
from coven_core.schedule.rrule import RRuleSchedule, RuleParts
from coven_core.schedule.timetable import Timetable

Schedule = CronSchedule | RRuleSchedule | IntervalSchedule | OnceSchedule

__all__ = ["Schedule", "describe", "describe_timetable"]

_ALL_MINUTES = tuple(range(60))
_ALL_HOURS = tuple(range(24))
_ALL_MONTH_DAYS = tuple(range(1, 32))
_ALL_WEEKDAYS = frozenset(range(7))
_ALL_MONTHS = frozenset(range(1, 13))
#: Up to this many clock times are listed one by one ("at 9:00 AM and 5:00 PM").
_LISTED_TIMES = 6
_MINUTES_PER_DAY = 24 * 60


def describe(schedule: Schedule, locale: str) -> str:
    """One sentence saying when ``schedule`` runs, in ``locale``."""
    words = _Words(locale)
    if isinstance(schedule, CronSchedule):
        return _cron(schedule, words)
    if isinstance(schedule, RRuleSchedule):
        return _rrule(schedule, words)
    if isinstance(schedule, IntervalSchedule):
        return _interval(schedule.step, words)
    return _("Once on {date} at {time}", locale).format(
        date=words.date(schedule.at.date()), time=words.time(schedule.at.time())
    )


def describe_timetable(table: Timetable, locale: str) -> str:
    """The sentence for a bound schedule (what a routine's revision plans with)."""
    if table.calendar is None and table.interval is None:  # ScheduleKind.AFTER
        return _("Only when another routine's run triggers it", locale)
    schedule = table.interval if table.interval is not None else table.calendar
    assert isinstance(schedule, CronSchedule | RRuleSchedule | IntervalSchedule | OnceSchedule)
    return describe(schedule, locale)


# -- Babel, in one locale -------------------------------------------------------------------


@dataclass(frozen=True)
class _Words:
    locale: str

    def __call__(self, message: str) -> str:
        return _(message, self.locale)

    def time(self, clock: time) -> str:
        return format_time(clock, format="short", locale=self.locale)

    def clock(self, hour: int, minute: int) -> str:
        return self.time(time(hour, minute))

    def date(self, day: date) -> str:
        return format_date(day, format="long", locale=self.locale)

    def month_day(self, month: int, day: int) -> str:
        # A leap year, so that February 29 can be named.
        return format_skeleton("MMMMd", date(2024, month, day), locale=self.locale)

    def wall(self, moment: datetime) -> str:
        """A naive wall time: date and clock time, joined the locale's way."""
        day = format_date(moment.date(), format="medium", locale=self.locale)
        pattern = str(get_datetime_format("medium", locale=self.locale)).replace("'", "")
        return pattern.format(self.time(moment.time()), day)

    def weekday(self, cron_day: int) -> str:
        """A weekday from cron's numbering (0 = Sunday)."""
        return str(get_day_names("wide", locale=self.locale)[(cron_day - 1) % 7])

    def month(self, month: int) -> str:
        return str(get_month_names("wide", locale=self.locale)[month])

    def listing(self, items: Iterable[str]) -> str:
        return format_list(list(items), locale=self.locale)

    def weekdays(self, cron_days: Iterable[int]) -> str:
        """ "Monday and Friday"; three or more days in a row as "Monday to Friday"."""
        # Monday first, as people list a week (cron counts from Sunday).
        days = sorted(set(cron_days), key=lambda d: (d - 1) % 7)
        positions = [(d - 1) % 7 for d in days]
        if len(days) >= 3 and positions == list(range(positions[0], positions[-1] + 1)):
            return _("{first} to {last}", self.locale).format(
                first=self.weekday(days[0]), last=self.weekday(days[-1])
            )
        return self.listing(self.weekday(d) for d in days)

    def months(self, months: Iterable[int]) -> str:
        return self.listing(self.month(m) for m in sorted(months))

    def unit(self, count: int, unit: str) -> str:
        return str(format_unit(count, f"duration-{unit}", length="long", locale=self.locale))


# -- the parts of a sentence ----------------------------------------------------------------


@dataclass(frozen=True)
class _Clock:
    """When in a day: clock times to list (``at``) or a frequency that leads the sentence."""

    at: str | None = None  # "9:00 AM and 5:00 PM"
    every: str | None = None  # "Every 15 minutes", "Every hour at minute 5"


@dataclass(frozen=True)
class _Days:
    """Which days, as the two sentence templates that take a clock phrase."""

    with_times: str  # has {times}: "Every {weekdays} at {times}"
    with_frequency: str  # has {frequency}: "{frequency} on {weekdays}"
    values: dict[str, str]

    def sentence(self, clock: _Clock) -> str:
        if clock.at is not None:
            return self.with_times.format(times=clock.at, **self.values)
        return self.with_frequency.format(frequency=clock.every, **self.values)


def _daily(w: _Words) -> _Days:
    return _Days(w("Every day at {times}"), "{frequency}", {})


def _weekly(cron_days: Iterable[int], w: _Words) -> _Days:
    values = {"weekdays": w.weekdays(cron_days)}
    return _Days(w("Every {weekdays} at {times}"), w("{frequency} on {weekdays}"), values)


def _month_days(days_text: str, w: _Words) -> _Days:
    return _Days(
        w("On {days} of each month at {times}"),
        w("{frequency} on {days} of each month"),
        {"days": days_text},
    )


def _month_days_on_weekdays(days_text: str, cron_days: Iterable[int], w: _Words) -> _Days:
    """Both must hold (cron with a ``*``-led day field, RRULE BYMONTHDAY with BYDAY)."""
    values = {"days": days_text, "weekdays": w.weekdays(cron_days)}
    return _Days(
        w("On {days} of each month, when it is a {weekdays}, at {times}"),
        w("{frequency} on {days} of each month, when it is a {weekdays}"),
        values,
    )


def _day_numbers(days: Iterable[int], w: _Words) -> str:
    """ "day 1 and day 15"; negative RRULE days count from the end of the month."""
    items = []
    for day in sorted(days, key=lambda d: (d < 0, d if d > 0 else -d)):
        if day == -1:
            items.append(w("the last day"))
        elif day < 0:
            items.append(w("day {day} counted from the end").format(day=-day))
        else:
            items.append(w("day {day}").format(day=day))
    return w.listing(items)


def _only_in_months(sentence: str, months: Iterable[int], w: _Words) -> str:
    return w("{sentence}, only in {months}").format(sentence=sentence, months=w.months(months))


def _step(values: Sequence[int], size: int) -> int | None:
    """n if ``values`` is 0, n, 2n, … and n divides ``size`` (so the step holds across the
    wrap-around), else None."""
    if len(values) < 2 or values[0] != 0:
        return 1 if tuple(values) == tuple(range(size)) else None
    step = values[1]
    if size % step or tuple(values) != tuple(range(0, size, step)):
        return None
    return step


def _clock(minutes: Sequence[int], hours: Sequence[int], w: _Words) -> _Clock:
    """The clock phrase for every pair of ``hours`` × ``minutes`` (both ascending)."""
    every_hour = tuple(hours) == _ALL_HOURS
    minute_step, hour_step = _step(minutes, 60), _step(hours, 24)
    if minute_step is not None:
        return _minutes_clock(minute_step, hours, every_hour, w)
    if len(minutes) == 1 and hour_step is not None:
        return _hours_clock(minutes[0], hour_step, w)
    if len(minutes) * len(hours) <= _LISTED_TIMES:
        return _Clock(at=w.listing(w.clock(h, m) for h in hours for m in minutes))
    listed = w.listing(str(m) for m in minutes)
    if every_hour:
        return _Clock(every=w("At minute {minutes} of every hour").format(minutes=listed))
    return _Clock(
        every=w("At minute {minutes} past hour {hours}").format(
            minutes=listed, hours=w.listing(str(h) for h in hours)
        )
    )


def _minutes_clock(step: int, hours: Sequence[int], every_hour: bool, w: _Words) -> _Clock:
    frequency = (
        w("Every minute")
        if step == 1
        else w("Every {minutes}").format(minutes=w.unit(step, "minute"))
    )
    if every_hour:
        return _Clock(every=frequency)
    if tuple(hours) == tuple(range(hours[0], hours[-1] + 1)):
        return _Clock(
            every=w("{frequency} from {first} to {last}").format(
                frequency=frequency,
                first=w.clock(hours[0], 0),
                last=w.clock(hours[-1], 60 - step),
            )
        )
    return _Clock(
        every=w("{frequency} during hours {hours}").format(
            frequency=frequency, hours=w.listing(str(h) for h in hours)
        )
    )


def _hours_clock(minute: int, step: int, w: _Words) -> _Clock:
    if step == 1:
        text = w("Every hour") if minute == 0 else w("Every hour at minute {minute}")
    elif minute == 0:
        text = w("Every {hours}")
    else:
        text = w("Every {hours} at minute {minute}")
    return _Clock(every=text.format(minute=minute, hours=w.unit(step, "hour")))


# -- cron -----------------------------------------------------------------------------------


def _cron(schedule: CronSchedule, w: _Words) -> str:
    clock = _clock(schedule.minutes, schedule.hours, w)
    dates = _cron_dates(schedule, w)
    if dates is not None:
        return dates.sentence(clock)
    sentence = _cron_days(schedule, w).sentence(clock)
    if schedule.months != _ALL_MONTHS:
        sentence = _only_in_months(sentence, schedule.months, w)
    return sentence


def _cron_dates(schedule: CronSchedule, w: _Words) -> _Days | None:
    """A few dates of the year (``0 0 1 1 *``): said as dates, not as month days."""
    if schedule.months == _ALL_MONTHS or not schedule.days_and:
        return None
    if schedule.days_of_week != _ALL_WEEKDAYS or schedule.days_of_month == _ALL_MONTH_DAYS:
        return None
    return _yearly_dates(schedule.months, schedule.days_of_month, w)


def _cron_days(schedule: CronSchedule, w: _Words) -> _Days:
    every_month_day = schedule.days_of_month == _ALL_MONTH_DAYS
    every_weekday = schedule.days_of_week == _ALL_WEEKDAYS
    days = _day_numbers(schedule.days_of_month, w)
    if not schedule.days_and:  # both restricted: a day matches if either matches
        if every_month_day or every_weekday:
            return _daily(w)
        values = {"days": days, "weekdays": w.weekdays(schedule.days_of_week)}
        return _Days(
            w("On {days} of each month and every {weekdays} at {times}"),
            w("{frequency} on {days} of each month and every {weekdays}"),
            values,
        )
    if every_month_day and every_weekday:
        return _daily(w)
    if every_month_day:
        return _weekly(schedule.days_of_week, w)
    if every_weekday:
        return _month_days(days, w)
    return _month_days_on_weekdays(days, schedule.days_of_week, w)


# -- RRULE ----------------------------------------------------------------------------------

_ORDINALS: dict[int, Callable[[_Words], str]] = {
    1: lambda w: w("the first {weekday}"),
    2: lambda w: w("the second {weekday}"),
    3: lambda w: w("the third {weekday}"),
    4: lambda w: w("the fourth {weekday}"),
    5: lambda w: w("the fifth {weekday}"),
    -1: lambda w: w("the last {weekday}"),
    -2: lambda w: w("the second-to-last {weekday}"),
    -3: lambda w: w("the third-to-last {weekday}"),
    -4: lambda w: w("the fourth-to-last {weekday}"),
    -5: lambda w: w("the fifth-to-last {weekday}"),
}


def _cron_weekday(rrule_day: int) -> int:
    """RRULE counts weekdays from Monday (0); cron from Sunday (0)."""
    return (rrule_day + 1) % 7


def _rrule(schedule: RRuleSchedule, w: _Words) -> str:
    rule, start = schedule.parts, schedule.dtstart
    sentence = _rrule_sentence(rule, start, w)
    if sentence is None:
        return w("Repeats by the rule {rule}, starting {start}").format(
            rule=str(rule), start=w.wall(start)
        )
    if rule.bymonth and rule.freq != "YEARLY":
        sentence = _only_in_months(sentence, rule.bymonth, w)
    return _bounds(sentence, rule, start, w)


def _bounds(sentence: str, rule: RuleParts, start: datetime, w: _Words) -> str:
    if rule.count is not None:
        sentence = w("{sentence}, {count} times from {start}").format(
            sentence=sentence, count=rule.count, start=w.wall(start)
        )
    if rule.until is not None:
        until = rule.until.moment
        text = w.wall(until.replace(tzinfo=None))
        if until.tzinfo is not None:
            text = w("{moment} UTC").format(moment=text)
        sentence = w("{sentence}, until {until}").format(sentence=sentence, until=text)
    return sentence


def _rrule_sentence(rule: RuleParts, start: datetime, w: _Words) -> str | None:
    """A natural sentence, or None when the rule has no shape this module can say exactly."""
    if rule.bysetpos:  # picks among a period's times: the rule itself says it exactly
        return None
    if rule.freq == "MINUTELY":
        return _rrule_minutely(rule, start, w)
    if rule.freq == "HOURLY":
        return _rrule_hourly(rule, start, w)
    clock = _clock(rule.byminute or (start.minute,), rule.byhour or (start.hour,), w)
    days = _rrule_days(rule, start, w)
    return None if days is None else days.sentence(clock)


def _aligned(step_minutes: int, start: datetime) -> bool:
    """Whether a step of this many minutes from ``start`` lands on the same clock times
    every day, counted from midnight (then the start need not be said)."""
    of_day = start.hour * 60 + start.minute
    return _MINUTES_PER_DAY % step_minutes == 0 and of_day % step_minutes == 0


def _rrule_minutely(rule: RuleParts, start: datetime, w: _Words) -> str | None:
    if rule.byday or rule.byhour or rule.byminute:
        return None
    if rule.interval == 1:
        return w("Every minute")
    frequency = w("Every {minutes}").format(minutes=w.unit(rule.interval, "minute"))
    if rule.interval % 60 == 0:
        frequency = w("Every {hours}").format(hours=w.unit(rule.interval // 60, "hour"))
    if _aligned(rule.interval, start):
        return frequency
    return w("{frequency}, counting from {start}").format(frequency=frequency, start=w.wall(start))


def _rrule_hourly(rule: RuleParts, start: datetime, w: _Words) -> str | None:
    # Stepping by a divisor of 24 hours reaches the same hours every day.
    if rule.byday or rule.byhour or 24 % rule.interval:
        return None
    hours = tuple(range(start.hour % rule.interval, 24, rule.interval))
    clock = _clock(rule.byminute or (start.minute,), hours, w)
    return _daily(w).sentence(clock)


def _rrule_days(rule: RuleParts, start: datetime, w: _Words) -> _Days | None:
    if rule.freq == "DAILY":
        return _rrule_daily(rule, start, w)
    if rule.freq == "WEEKLY":
        return _rrule_weekly(rule, start, w)
    if rule.interval != 1:
        return None
    if rule.freq == "MONTHLY":
        return _rrule_monthly(rule, start, w)
    return _rrule_yearly(rule, start, w)


def _rrule_daily(rule: RuleParts, start: datetime, w: _Words) -> _Days | None:
    if rule.interval == 1:
        if rule.byday:
            return _weekly((_cron_weekday(day) for day, _n in rule.byday), w)
        return _daily(w)
    if rule.byday:
        return None
    return _Days(
        w("Every {days}, counting from {start}, at {times}"),
        w("{frequency}, every {days}, counting from {start}"),
        {"days": w.unit(rule.interval, "day"), "start": w.date(start.date())},
    )


def _rrule_weekly(rule: RuleParts, start: datetime, w: _Words) -> _Days:
    weekdays = [day for day, _n in rule.byday] or [start.weekday()]
    cron_days = [_cron_weekday(day) for day in weekdays]
    if rule.interval == 1:
        return _weekly(cron_days, w)
    values = {
        "weeks": w.unit(rule.interval, "week"),
        "weekdays": w.weekdays(cron_days),
        "start": w.date(start.date()),
    }
    if rule.wkst != 0:  # which days share a week decides which weeks are skipped
        values["weekdays"] = w("{weekdays} (weeks starting on {first})").format(
            weekdays=values["weekdays"], first=w.weekday(_cron_weekday(rule.wkst))
        )
    return _Days(
        w("Every {weeks} on {weekdays}, counting from {start}, at {times}"),
        w("{frequency} on {weekdays}, every {weeks}, counting from {start}"),
        values,
    )


def _ordinal_weekdays(byday: Sequence[tuple[int, int]], w: _Words) -> str:
    items = []
    for day, ordinal in byday:
        name = w.weekday(_cron_weekday(day))
        items.append(_ORDINALS[ordinal](w).format(weekday=name) if ordinal else name)
    return w.listing(items)


def _rrule_monthly(rule: RuleParts, start: datetime, w: _Words) -> _Days | None:
    ordinals = any(n for _d, n in rule.byday)
    cron_days = [_cron_weekday(day) for day, _n in rule.byday]
    if rule.bymonthday and rule.byday:
        if ordinals:
            return None
        return _month_days_on_weekdays(_day_numbers(rule.bymonthday, w), cron_days, w)
    if rule.byday and not ordinals:
        return _weekly(cron_days, w)
    if rule.byday:
        return _month_days(_ordinal_weekdays(rule.byday, w), w)
    return _month_days(_day_numbers(rule.bymonthday or (start.day,), w), w)


def _rrule_yearly(rule: RuleParts, start: datetime, w: _Words) -> _Days | None:
    if rule.byday:
        if not rule.bymonth or not all(n for _d, n in rule.byday) or rule.bymonthday:
            return None  # ordinals counted in the year, or filters this module cannot say
        return _Days(
            w("On {days} of {months} at {times}"),
            w("{frequency} on {days} of {months}"),
            {"days": _ordinal_weekdays(rule.byday, w), "months": w.months(rule.bymonth)},
        )
    return _yearly_dates(rule.bymonth or (start.month,), rule.bymonthday or (start.day,), w)


def _yearly_dates(months: Iterable[int], days: Sequence[int], w: _Words) -> _Days | None:
    """ "Every year on March 5 and September 5" — for a few positive days of a few months
    (a day a month does not have, like April 31, never comes)."""
    months = sorted(months)
    if any(day < 0 for day in days) or len(months) * len(days) > _LISTED_TIMES:
        return None
    dates = [_month_day(m, d, w) for m in months for d in days if _exists(m, d)]
    return _Days(
        w("Every year on {dates} at {times}"),
        w("{frequency} on {dates} every year"),
        {"dates": w.listing(dates)},
    )


def _month_day(month: int, day: int, w: _Words) -> str:
    if (month, day) == (2, 29):
        return w("{date} (in leap years)").format(date=w.month_day(month, day))
    return w.month_day(month, day)


def _exists(month: int, day: int) -> bool:
    try:
        date(2024, month, day)
    except ValueError:
        return False
    return True


# -- interval -------------------------------------------------------------------------------


def _interval(step: timedelta, w: _Words) -> str:
    """Absolute time: a day-long step is said in hours, because it is not a calendar day
    (across a DST change it lands an hour off on the clock)."""
    minutes = int(step.total_seconds()) // 60
    if minutes == 1:
        return w("Every minute")
    if minutes == 60:
        return w("Every hour")
    if minutes % 60 == 0:
        return w("Every {hours}").format(hours=w.unit(minutes // 60, "hour"))
    return w("Every {minutes}").format(minutes=w.unit(minutes, "minute"))
