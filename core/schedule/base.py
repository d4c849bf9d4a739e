"""What every calendar schedule offers the planner.

Calendar schedules (cron, RRULE, once) are wall-clock schedules: they produce *local wall
times* (naive datetimes read in the routine's zone). Turning a wall time into an instant, or
into a skip, is the time-zone binding's job (``coven_core.tz.binding``), never the schedule's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Counted:
    """A schedule's times in a range, counted instead of listed: how many, the first, and the
    last two (the planner runs the latest missed moment apart from the rest it folds)."""

    count: int
    first: datetime
    second_last: datetime | None  # None when there is one
    last: datetime


class CalendarSchedule(Protocol):
    """A wall-clock schedule."""

    @property
    def until(self) -> datetime | None:
        """Inclusive end: an aware UTC instant, a naive local wall time, or None."""
        ...

    def wall_times_from(self, start: datetime) -> Iterator[datetime]:
        """Naive local wall times ``>= start`` in ascending order, at whole seconds.

        ``start`` is naive. The iterator ends only if the rule itself ends (COUNT, UNTIL, once).
        """
        ...
