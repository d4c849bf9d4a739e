"""``preview``: the moments of a schedule over a range, without a routine (a dry run)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from coven_core.notation.utc import utc_text as utc_text  # re-exported: its old home
from coven_core.schedule.exclusions import EXCLUDED_DATE, excludes
from coven_core.schedule.timetable import ScheduleKind, Timetable
from coven_core.tz import tzdb
from coven_core.tz.binding import BoundTime
from coven_core.tz.notes import format_offset, localized_note, note

DEFAULT_COUNT = 10


@dataclass(frozen=True)
class Preview:
    """A schedule's moments in a range, with the facts needed to explain each one."""

    timetable: Timetable
    tzdb: tzdb.Tzdb
    moments: tuple[BoundTime, ...]
    except_dates: tuple[date, ...] = ()  # local dates whose moments are skipped (§14)

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
    """Moments in ``[start, end)``; ``count`` defaults to 10 when there is no end. Moments on
    ``except_dates`` are listed, as skipped."""
    if end is None and count is None:
        count = DEFAULT_COUNT
    moments = tuple(timetable.moments_between(start, end, count))
    return Preview(timetable, tzdb.active(), moments, except_dates)
