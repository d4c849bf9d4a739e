"""A timetable's moments over a long range, counted where they need not be listed (DESIGN §3).

After a month switched off, a routine every five minutes has thousands of missed moments, and
all the planner records of most of them is one coalesced window: its first, last and count
(bench_recovery). :func:`tallied` yields what :meth:`Timetable.moments_between` yields, in the
same order, except that runs of moments that are all alike — real (no gap) and on no date the
caller names — may come as one :class:`Tally`. Each tally is followed by
the moment after it on its own, so a caller that treats the latest moment apart sees it.

Only what can be counted is: cron by its matching days, an interval by arithmetic, and neither
near a zone's offset change, a named date or the end of planning — there, and for RRULE and
one-off schedules, the moments are walked one by one as ever.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from functools import lru_cache
from zoneinfo import ZoneInfo

from coven_core.notation.limits import END_OF_PLANNING
from coven_core.schedule.cron import CronSchedule
from coven_core.schedule.timetable import Timetable
from coven_core.tz.binding import BoundTime, at_instant, bind, wall_of
from coven_core.tz.transitions import transitions_between

#: How far from an offset change a wall time must lie for its binding to be plain: further
#: than the binding's probe (25 h) plus the widest offset (26 h) and the longest gap (26 h).
_QUIET = timedelta(days=3)
#: How far from a named date's midnight (read as UTC) its moments may lie: wider than any
#: zone's offset.
_APART = timedelta(days=2)
_DAY = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class Tally:
    """``count`` real moments, from ``first`` to ``last`` (UTC instants)."""

    first: datetime
    last: datetime
    count: int


def tallied(
    table: Timetable, start: datetime, end: datetime, apart: Collection[date] = ()
) -> Iterator[BoundTime | Tally]:
    """The moments of ``[start, end)``, with runs of them counted; none on a date in
    ``apart`` (local) is ever in a tally."""
    for low, high, countable in _pieces(table, start, end, apart):
        if countable:
            yield from _counted(table, low, high)
        else:
            yield from table.moments_between(low, high)


def _pieces(
    table: Timetable, start: datetime, end: datetime, apart: Collection[date]
) -> Iterator[tuple[datetime, datetime, bool]]:
    """``[start, end)`` cut into pieces to count and pieces to walk, in order."""
    if start >= end:
        return
    if not _can_count(table):
        yield start, end, False
        return
    at = start
    for low, high in _walked(table, start, end, apart):
        if at < low:
            yield at, low, True
        yield low, high, False
        at = high
    if at < end:
        yield at, end, True


def _can_count(table: Timetable) -> bool:
    return table.interval is not None or isinstance(table.calendar, CronSchedule)


def _walked(
    table: Timetable, start: datetime, end: datetime, apart: Collection[date]
) -> list[tuple[datetime, datetime]]:
    """The stretches of ``[start, end)`` whose moments are walked, merged and in order."""
    near = [(_midnight(day) - _APART, _midnight(day) + _DAY + _APART) for day in apart]
    near.append((END_OF_PLANNING - _QUIET, datetime.max.replace(tzinfo=UTC)))
    if table.calendar is not None:  # an interval's instants bind the same near a change
        changes = _changes(table.zone, start, min(end, END_OF_PLANNING))  # walked beyond
        near += [(at - _QUIET, at + _QUIET) for at in changes]
    merged: list[tuple[datetime, datetime]] = []
    for low, high in sorted(near):
        low, high = max(low, start), min(high, end)
        if low >= high:
            continue
        if merged and low <= merged[-1][1]:
            merged[-1] = merged[-1][0], max(high, merged[-1][1])
        else:
            merged.append((low, high))
    return merged


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(), UTC)


def _changes(zone: ZoneInfo, start: datetime, end: datetime) -> tuple[datetime, ...]:
    """The zone's offset changes within ``_QUIET`` of ``[start, end)``, found for whole UTC
    days: every routine a pass decides in one zone asks for the same days."""
    first = _midnight((start - _QUIET).date())
    return _changes_in_days(zone, first, _midnight((end + _QUIET).date()) + _DAY)


@lru_cache(maxsize=64)
def _changes_in_days(zone: ZoneInfo, start: datetime, end: datetime) -> tuple[datetime, ...]:
    return tuple(change.utc for change in transitions_between(zone, start, end))


def _counted(table: Timetable, start: datetime, end: datetime) -> Iterator[BoundTime | Tally]:
    """A countable piece: a tally of its moments but the last, then the last on its own."""
    moment: Callable[[datetime, tzinfo], BoundTime]
    if table.interval is not None:
        counted, moment = table.interval.counted(table.anchor, start, end), at_instant
    else:
        assert isinstance(table.calendar, CronSchedule)  # one offset all through the piece
        walls = wall_of(start, table.zone), wall_of(end, table.zone)
        counted, moment = table.calendar.counted(*walls), bind
    if counted is None:
        return
    zone = table.zone
    if counted.second_last is not None:
        first, second_last = moment(counted.first, zone), moment(counted.second_last, zone)
        yield Tally(first.utc, second_last.utc, counted.count - 1)
    yield moment(counted.last, zone)
