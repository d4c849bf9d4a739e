"""``every N{m,h,d}``: absolute time from an anchor instant; DST does not apply."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from coven_core.errors import ScheduleError
from coven_core.notation.durations import DurationError, parse_duration
from coven_core.notation.i18n import _
from coven_core.schedule.base import Counted

_UNITS = {"m": timedelta(minutes=1), "h": timedelta(hours=1), "d": timedelta(days=1)}
_PATTERN = re.compile(r"every\s+([0-9]+)\s*([mhd])", re.IGNORECASE)  # ASCII digits only


@dataclass(frozen=True, slots=True)
class IntervalSchedule:
    """Instants ``anchor + k * step`` for k >= 0 — a fixed number of seconds apart."""

    step: timedelta
    text: str

    @classmethod
    def parse(cls, text: str) -> IntervalSchedule:
        match = _PATTERN.fullmatch(text.strip())
        if match is None:
            raise ScheduleError(
                _("interval: {text!r} is not like 'every 30m', 'every 2h' or 'every 1d'").format(
                    text=text.strip()
                )
            )
        digits, unit = match[1].lstrip("0"), match[2].lower()
        if not digits:
            raise ScheduleError(_("interval: the interval must be at least 1 minute"))
        try:
            step = parse_duration(f"{digits}{unit}")  # the one bound on every duration
        except DurationError as error:
            raise ScheduleError(_("interval: {problem}").format(problem=error)) from None
        return cls(step, f"every {digits}{unit}")

    def instants_from(self, anchor: datetime, start: datetime) -> Iterator[datetime]:
        """Instants on the anchor's grid that are ``>= start`` (both aware), ascending."""
        anchor = anchor.astimezone(UTC)
        instant = anchor + self._steps_to(anchor, start) * self.step
        while True:
            yield instant
            instant += self.step

    def counted(self, anchor: datetime, start: datetime, end: datetime) -> Counted | None:
        """The instants in ``[start, end)`` (aware), counted: the grid needs no walking."""
        anchor = anchor.astimezone(UTC)
        first, past = self._steps_to(anchor, start), self._steps_to(anchor, end)
        if past <= first:
            return None
        last = anchor + (past - 1) * self.step
        second_last = last - self.step if past - first >= 2 else None
        return Counted(past - first, anchor + first * self.step, second_last, last)

    def _steps_to(self, anchor: datetime, instant: datetime) -> int:
        """How many steps from the anchor to the first instant on its grid ``>= instant``."""
        return max(0, -((anchor - instant) // self.step))  # ceil((instant - anchor) / step)

    def __str__(self) -> str:
        return self.text
