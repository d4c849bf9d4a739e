"""``preview``: the moments of a schedule over a range, without a routine (a dry run)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from coven_core.notation.limits import MOST_LISTED
from coven_core.notation.utc import utc_text as utc_text  # re-exported: its old home
from coven_core.schedule.exclusions import EXCLUDED_DATE, excludes
from coven_core.schedule.timetable import ScheduleKind, Timetable
from coven_core.tz import tzdb
from coven_core.tz.binding import BoundTime, LocalTimeKind
from coven_core.tz.notes import format_offset, localized_note, note
from coven_core.tz.transitions import transitions_between

DEFAULT_COUNT = 10
#: How far past its last moment a preview looks for the next one a time-zone rule decides:
#: a zone with daylight saving changes its clocks at least once a year.
RULE_HORIZON = timedelta(days=400)


@dataclass(frozen=True)
class Preview:
    """A schedule's moments in a range, with the facts needed to explain each one."""

    timetable: Timetable
    tzdb: tzdb.Tzdb
    moments: tuple[BoundTime, ...]
    except_dates: tuple[date, ...] = ()  # local dates whose moments are skipped (§14)
    #: The next moment a time-zone rule decides (skipped in a gap, once in a fold), when the
    #: listed ones hold none: a person sees it however far ahead it is.
    ruled: BoundTime | None = None
    #: A range asked for by its end alone held more than MOST_LISTED moments: only the first
    #: MOST_LISTED are listed (a range to the year 9000 had eaten gigabytes).
    capped: bool = False

    def skip_reason(self, moment: BoundTime) -> str | None:
        """Why the moment will be skipped (a DST gap, an exclusion date), or None."""
        if excludes(self.except_dates, moment):
            return EXCLUDED_DATE
        return moment.reason

    def note(self, moment: BoundTime, locale: str | None = None) -> str | None:
        absolute = self.timetable.kind is ScheduleKind.INTERVAL
        zone, key = self.timetable.zone, self.timetable.zone_key
        if locale is None:
            return note(moment, key, zone, absolute=absolute)
        return localized_note(moment, key, zone, locale, absolute=absolute)

    def to_json(self) -> dict[str, Any]:
        return {
            "schedule": self.timetable.spec,
            "timezone": self.timetable.zone_key,
            "tzdb_version": self.tzdb.version,
            "tzdb_source": self.tzdb.source,
            "except_dates": [day.isoformat() for day in self.except_dates],
            "occurrences": [self._moment_json(m) for m in self.moments],
            "next_ruled": None if self.ruled is None else self._moment_json(self.ruled),
            "capped": self.capped,
        }

    def _moment_json(self, moment: BoundTime) -> dict[str, Any]:
        reason = self.skip_reason(moment)
        return {
            "local": moment.local.strftime("%Y-%m-%dT%H:%M:%S"),
            "utc": utc_text(moment.utc),
            "offset": format_offset(moment.offset),
            "fold": moment.fold,
            "disposition": "planned" if reason is None else "skipped",
            "reason": reason,
            "note": self.note(moment),
        }


def preview(
    timetable: Timetable,
    start: datetime,
    end: datetime | None = None,
    count: int | None = None,
    except_dates: tuple[date, ...] = (),
) -> Preview:
    """Moments in ``[start, end)``; ``count`` defaults to 10 when there is no end, and to at
    most MOST_LISTED when there is. Moments on ``except_dates`` are listed, as skipped."""
    if end is None and count is None:
        count = DEFAULT_COUNT
    capped = False
    if count is None:
        moments = tuple(timetable.moments_between(start, end, MOST_LISTED + 1))
        capped = len(moments) > MOST_LISTED
        moments = moments[:MOST_LISTED]
    else:
        moments = tuple(timetable.moments_between(start, end, count))
    ruled = None
    if not any(moment.kind is not LocalTimeKind.REGULAR for moment in moments):
        ruled = next_ruled(timetable, moments[-1].utc if moments else start)
    return Preview(timetable, tzdb.active(), moments, except_dates, ruled, capped)


def next_ruled(timetable: Timetable, after: datetime) -> BoundTime | None:
    """The first moment after ``after`` that a clock change decides, within RULE_HORIZON."""
    for change in transitions_between(timetable.zone, after, after + RULE_HORIZON):
        size = abs(change.offset_after - change.offset_before) + timedelta(minutes=1)
        for moment in timetable.moments_between(change.utc - size, change.utc + size):
            if moment.kind is not LocalTimeKind.REGULAR and moment.utc > after:
                return moment
    return None
