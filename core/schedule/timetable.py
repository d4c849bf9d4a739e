"""A schedule bound to a zone and an anchor: the moments it yields (DESIGN §3, §4).

This is the one place where a spec, a time zone and the DST policy meet. Calendar schedules
give wall times and the binding turns each into an instant or a skip; interval schedules give
instants directly. Everything downstream (preview, explain, the planner) asks a
:class:`Timetable` for moments and never re-implements any of this.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cached_property
from itertools import repeat
from zoneinfo import ZoneInfo

from coven_core.errors import ScheduleError
from coven_core.notation.i18n import N_, _
from coven_core.notation.limits import END_OF_PLANNING
from coven_core.schedule.base import CalendarSchedule
from coven_core.schedule.cron import CronSchedule
from coven_core.schedule.interval import IntervalSchedule
from coven_core.schedule.once import OnceSchedule
from coven_core.schedule.rrule import RRuleSchedule
from coven_core.tz import tzdb
from coven_core.tz.binding import BoundTime, at_instant, bind, wall_of

_END_OF_PLANNING_WALL = END_OF_PLANNING.replace(tzinfo=None)
#: Longer than any gap ever seen (Pacific/Apia skipped a whole day in 2011).
_LONGEST_GAP = timedelta(hours=26)


class ScheduleKind(enum.StrEnum):
    CRON = "cron"
    RRULE = "rrule"
    INTERVAL = "interval"
    ONCE = "once"
    AFTER = "after"  # no moments of its own: only its upstream's runs trigger it (DESIGN §14)


#: The schedule of a routine that only a chain (``--after``) runs.
AFTER_ONLY = "after"


_HELP = N_("use 'cron:<5 fields>', 'rrule:<RRULE>', 'every 30m' or 'once 2026-03-08T02:30'")


def classify(spec: str) -> tuple[ScheduleKind, str]:
    """The kind of a spec and its body (the text after the kind's prefix)."""
    text = spec.strip()
    lowered = text.lower()
    if lowered == AFTER_ONLY:
        return ScheduleKind.AFTER, ""
    for prefix, kind in (("cron:", ScheduleKind.CRON), ("rrule:", ScheduleKind.RRULE)):
        if lowered.startswith(prefix):
            return kind, text[len(prefix) :].strip()
    if lowered.startswith("every"):
        return ScheduleKind.INTERVAL, text
    if lowered.startswith("once"):
        return ScheduleKind.ONCE, text[4:].strip()
    if text.startswith("@") or len(text.split()) >= 2:
        return ScheduleKind.CRON, text  # a bare cron expression
    raise ScheduleError(
        _("unrecognised schedule {text!r}: {help}").format(text=text, help=_(_HELP))
    )


@dataclass(frozen=True)
class Timetable:
    """The moments of one schedule in one zone."""

    kind: ScheduleKind
    zone_key: str
    zone: ZoneInfo
    anchor: datetime  # aware UTC: RRULE's DTSTART (read in the zone), the interval's origin
    calendar: CalendarSchedule | None
    interval: IntervalSchedule | None

    @classmethod
    def build(cls, spec: str, zone_key: str, anchor: datetime) -> Timetable:
        """Validate and bind a spec. Raises ScheduleError or ZoneError naming the problem."""
        zone = tzdb.zone(zone_key)
        anchor = _whole_minute(anchor if anchor.tzinfo is UTC else anchor.astimezone(UTC))
        kind, body = classify(spec)
        if kind is ScheduleKind.AFTER:
            return cls(kind, zone_key, zone, anchor, None, None)
        if kind is ScheduleKind.INTERVAL:
            return cls(kind, zone_key, zone, anchor, None, IntervalSchedule.parse(body))
        calendar = _parse_calendar(kind, body, anchor, zone)
        return cls(kind, zone_key, zone, anchor, calendar, None)

    @cached_property
    def spec(self) -> str:
        """The normalised spec, with its prefix: "cron:30 2 * * *", "every 15m", …

        Written when first asked: the planner builds a timetable for each stored revision
        and never reads it (bench row "next occurrence cold").
        """
        if self.interval is not None:
            return str(self.interval)
        if self.calendar is None:
            return AFTER_ONLY
        return _normalised(self.kind, self.calendar)

    def moments_from(self, start: datetime) -> Iterator[BoundTime]:
        """Moments at or after ``start`` (aware), skipped ones included, in wall-time order,
        up to the end of planning (``coven_core.notation.limits``: date arithmetic never
        overflows)."""
        for moment in self._unbounded_moments_from(start):
            if moment.utc >= END_OF_PLANNING or moment.local >= _END_OF_PLANNING_WALL:
                return
            yield moment

    def _unbounded_moments_from(self, start: datetime) -> Iterator[BoundTime]:
        # Iterators handed on, not generators stacked: each layer costs a cold start its
        # frame (bench row "next occurrence cold").
        if self.interval is not None:
            instants = self.interval.instants_from(self.anchor, start)
            return map(at_instant, instants, repeat(self.zone))
        if self.calendar is None:  # AFTER: no moments of its own
            return iter(())
        return self._calendar_moments(start.astimezone(UTC))

    def moments_between(
        self, start: datetime, end: datetime | None = None, limit: int | None = None
    ) -> Iterator[BoundTime]:
        """Moments in ``[start, end)``, at most ``limit`` of them."""
        horizon = None if end is None else end.astimezone(UTC)
        wall_horizon = None if end is None else wall_of(end, self.zone) + _LONGEST_GAP
        emitted = 0
        for moment in self.moments_from(start):
            if limit is not None and emitted >= limit:
                return
            if wall_horizon is not None and moment.local > wall_horizon:
                return
            if horizon is not None and moment.utc >= horizon:
                if moment.skipped:  # a gap's nominal instant may lie past the next real one
                    continue
                return
            emitted += 1
            yield moment

    def _calendar_moments(self, start: datetime) -> Iterator[BoundTime]:
        assert self.calendar is not None
        until = self.calendar.until
        aware_until = until if until is not None and until.tzinfo is not None else None
        for moment in self._bound(start):
            if aware_until is not None and moment.utc > aware_until:
                if moment.skipped:
                    continue
                return
            if moment.utc >= start:
                yield moment

    def _bound(self, start: datetime) -> Iterator[BoundTime]:
        """The calendar's wall times bound to the zone, from a little before ``start``'s."""
        calendar = self.calendar
        if isinstance(calendar, RRuleSchedule) and calendar.count is not None:
            return _counted(calendar, self.zone)
        assert calendar is not None
        walls = calendar.wall_times_from(self._first_wall(start))
        return map(bind, walls, repeat(self.zone))

    def _first_wall(self, start: datetime) -> datetime:
        """``start``'s wall time (``start`` is in UTC), less how far before it a skipped gap
        moment can still be due.

        A nonexistent wall time is read with the smaller pre-transition offset, so its nominal
        instant can lie after ``start`` although its wall time lies before.
        """
        now = start.astimezone(self.zone).utcoffset()
        before = (start - _LONGEST_GAP).astimezone(self.zone).utcoffset()
        assert now is not None and before is not None
        return start.replace(tzinfo=None) + now - max(timedelta(0), now - before)


def _counted(rule: RRuleSchedule, zone: ZoneInfo) -> Iterator[BoundTime]:
    """An RRULE with COUNT, from DTSTART: its first COUNT times that exist in the zone, with
    the nonexistent ones among them still yielded (skipped) but not counted — RFC 5545
    §3.3.10: such instances "MUST be ignored and MUST NOT be counted as part of the
    recurrence set". Invalid dates (February 30) dateutil never yields at all."""
    left = rule.count or 0
    for wall in rule.uncounted_wall_times():
        if left == 0:
            return
        moment = bind(wall, zone)
        left -= 0 if moment.skipped else 1
        yield moment


def _parse_calendar(
    kind: ScheduleKind, body: str, anchor: datetime, zone: ZoneInfo
) -> CalendarSchedule:
    if kind is ScheduleKind.CRON:
        return CronSchedule.parse(body)
    if kind is ScheduleKind.RRULE:
        return RRuleSchedule.parse(body, wall_of(anchor, zone))
    return OnceSchedule.parse(body)


def _normalised(kind: ScheduleKind, calendar: CalendarSchedule) -> str:
    text = str(calendar)
    return text if kind is ScheduleKind.ONCE else f"{kind.value}:{text}"


def _whole_minute(instant: datetime) -> datetime:
    """Coven's resolution is the minute: an anchor with seconds rounds up to the next minute."""
    if not (instant.second or instant.microsecond):
        return instant
    floor = instant.replace(second=0, microsecond=0)
    return floor if floor == instant else floor + timedelta(minutes=1)
