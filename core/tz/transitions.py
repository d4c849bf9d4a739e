"""Finding a zone's offset transitions, for explanations and the timeline."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

from coven_core.tz.binding import BoundTime, LocalTimeKind

_PROBE_STEP = timedelta(hours=6)  # shorter than any real interval between two transitions


@dataclass(frozen=True, slots=True)
class Transition:
    """The instant a zone's UTC offset changes, and the wall clock on either side of it."""

    utc: datetime
    offset_before: timedelta
    offset_after: timedelta

    @property
    def wall_before(self) -> datetime:
        """The wall time at which the old offset stops (the clocks' "from")."""
        return (self.utc + self.offset_before).replace(tzinfo=None)

    @property
    def wall_after(self) -> datetime:
        """The wall time the clocks show right after (the clocks' "to")."""
        return (self.utc + self.offset_after).replace(tzinfo=None)

    @property
    def is_gap(self) -> bool:
        return self.offset_after > self.offset_before


def _offset(utc: datetime, zone: tzinfo) -> timedelta:
    offset = utc.astimezone(zone).utcoffset()
    assert offset is not None
    return offset


def _bisect(low: datetime, high: datetime, zone: tzinfo) -> Transition:
    """The transition in (low, high], given the offsets at the two ends differ."""
    before = _offset(low, zone)
    while high - low > timedelta(seconds=1):
        middle = low + (high - low) / 2
        if _offset(middle, zone) == before:
            low = middle
        else:
            high = middle
    instant = high.replace(microsecond=0)
    if _offset(instant, zone) == before:
        instant += timedelta(seconds=1)
    return Transition(instant, before, _offset(instant, zone))


def transition_for(bound: BoundTime, zone: tzinfo) -> Transition | None:
    """The transition that makes a wall time nonexistent or repeated (None if regular)."""
    if bound.kind is LocalTimeKind.REGULAR or bound.other_offset is None:
        return None
    offsets = sorted((bound.offset, bound.other_offset))
    low = (bound.local - offsets[1]).replace(tzinfo=UTC) - timedelta(seconds=1)
    high = (bound.local - offsets[0]).replace(tzinfo=UTC)
    if bound.kind is LocalTimeKind.REPEATED:  # the change lies between the two passes
        low, high = high - (offsets[1] - offsets[0]) - timedelta(seconds=1), high
    return _bisect(min(low, high), max(low, high), zone)


def transitions_between(zone: tzinfo, start: datetime, end: datetime) -> Iterator[Transition]:
    """Every offset change of ``zone`` in ``[start, end)`` (aware datetimes), in order."""
    low = start.astimezone(UTC) - timedelta(seconds=1)
    end = end.astimezone(UTC)
    while low < end:
        high = min(low + _PROBE_STEP, end)
        if _offset(low, zone) != _offset(high, zone):
            found = _bisect(low, high, zone)
            if start <= found.utc < end:
                yield found
            low = found.utc
        else:
            low = high
