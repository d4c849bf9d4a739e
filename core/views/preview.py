"""``preview``: the moments of a schedule over a range, without a routine (a dry run)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from coven_core.notation.utc import utc_text as utc_text  # re-exported: its old home
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
            "occurrences": [self._moment_json(m) for m in self.moments],
        }

    def _moment_json(self, moment: BoundTime) -> dict[str, Any]:
        return {
            "local": moment.local.strftime("%Y-%m-%dT%H:%M:%S"),
            "utc": utc_text(moment.utc),
            "offset": format_offset(moment.offset),
            "fold": moment.fold,
            "disposition": "skipped" if moment.skipped else "planned",
            "reason": moment.reason,
            "note": self.note(moment),
        }


def preview(
    timetable: Timetable, start: datetime, end: datetime | None = None, count: int | None = None
) -> Preview:
    """Moments in ``[start, end)``; ``count`` defaults to 10 when there is no end."""
    if end is None and count is None:
        count = DEFAULT_COUNT
    moments = tuple(timetable.moments_between(start, end, count))
    return Preview(timetable, tzdb.active(), moments)
