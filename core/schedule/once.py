"""``once YYYY-MM-DDTHH:MM``: a single local date-time in the bound zone."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from coven_core.errors import ScheduleError
from coven_core.notation.i18n import _
from coven_core.notation.limits import check_year


@dataclass(frozen=True, slots=True)
class OnceSchedule:
    """One wall time. In a gap it is skipped like any other calendar moment."""

    at: datetime  # naive wall time, whole minutes

    @classmethod
    def parse(cls, text: str) -> OnceSchedule:
        value = text.strip()
        try:
            at = datetime.strptime(value, "%Y-%m-%dT%H:%M")
        except ValueError:
            raise ScheduleError(
                _("once: {value!r} is not a local date-time like 2026-03-08T02:30").format(
                    value=value
                )
            ) from None
        return cls(check_year(at, "once", ScheduleError))

    @property
    def until(self) -> datetime:
        return self.at

    def wall_times_from(self, start: datetime) -> Iterator[datetime]:
        if self.at >= start:
            yield self.at

    def __str__(self) -> str:
        return f"once {self.at:%Y-%m-%dT%H:%M}"
