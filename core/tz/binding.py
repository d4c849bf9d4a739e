"""Binding a local wall time to an instant — the v1 DST policy (DESIGN §3).

* **Gap** (the wall time does not exist): the moment is *skipped* with reason
  ``nonexistent_local_time``. Its nominal instant is the wall time read with the offset in
  force before the transition. It is never shifted to another time.
* **Fold** (the wall time happens twice): one moment, at the *first* instant, ``fold=0``; the
  offset of the second pass is kept so that explanations can name it.

The policy is versioned: a revision records :data:`DST_POLICY` so that a later policy can
never be inferred for rows planned under this one.
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime, timedelta, tzinfo
from typing import NamedTuple

DST_POLICY = "v1-skip-gap-first-fold"

SKIPPED_NONEXISTENT = "nonexistent_local_time"


class LocalTimeKind(enum.Enum):
    """How a wall time relates to its zone's transitions."""

    REGULAR = "regular"
    NONEXISTENT = "nonexistent"  # in a gap
    REPEATED = "repeated"  # in a fold


class BoundTime(NamedTuple):
    """A wall time tied to an instant (or, in a gap, to its nominal instant).

    A named tuple rather than a dataclass: one is built for every planned moment, and a frozen
    dataclass costs several times more to construct.
    """

    local: datetime  # naive wall time in the zone
    utc: datetime  # aware UTC; the nominal instant for a nonexistent wall time
    offset: timedelta  # the offset used: first pass in a fold, pre-transition in a gap
    fold: int
    kind: LocalTimeKind
    other_offset: timedelta | None = None  # the second pass (fold) / post-transition (gap)

    @property
    def skipped(self) -> bool:
        return self.kind is LocalTimeKind.NONEXISTENT

    @property
    def reason(self) -> str | None:
        return SKIPPED_NONEXISTENT if self.skipped else None


#: Wider than any gap or fold (Pacific/Apia's lost day was 24 hours), narrower than the time
#: between two transitions of any zone.
_PROBE = timedelta(hours=25)
_EPOCH = datetime(1970, 1, 1)
_EPOCH_UTC = datetime(1970, 1, 1, tzinfo=UTC)


def bind(local: datetime, zone: tzinfo) -> BoundTime:
    """Apply the v1 policy to one naive wall time."""
    # Hot path (every planned moment): ``ZoneInfo.utcoffset`` reads a naive datetime as a wall
    # time. If the offset is the same a little before and after, no transition is near and the
    # wall time is regular; this avoids ``datetime.replace``, which costs ~20× more.
    first = zone.utcoffset(local)
    assert first is not None
    if local.fold == 0 and zone.utcoffset(local - _PROBE) == first == zone.utcoffset(
        local + _PROBE
    ):
        return BoundTime(
            local, _EPOCH_UTC + (local - first - _EPOCH), first, 0, LocalTimeKind.REGULAR
        )
    return _bind_near_transition(local, zone)


def _bind_near_transition(local: datetime, zone: tzinfo) -> BoundTime:
    first = local.replace(tzinfo=zone, fold=0).utcoffset()
    second = local.replace(tzinfo=zone, fold=1).utcoffset()
    assert first is not None and second is not None
    local = local.replace(fold=0)
    utc = (local - first).replace(tzinfo=UTC)
    if first == second:
        return BoundTime(local, utc, first, 0, LocalTimeKind.REGULAR)
    # Clocks jump forward in a gap (the offset grows) and back in a fold (it shrinks).
    kind = LocalTimeKind.NONEXISTENT if first < second else LocalTimeKind.REPEATED
    return BoundTime(local, utc, first, 0, kind, second)


def at_instant(utc: datetime, zone: tzinfo) -> BoundTime:
    """The wall time an absolute instant shows in a zone (interval schedules: no skipping)."""
    local = utc.astimezone(zone)
    offset = local.utcoffset()
    assert offset is not None
    naive = local.replace(tzinfo=None)
    other = local.replace(fold=1 - local.fold).utcoffset()
    if other == offset:
        return BoundTime(naive, utc.astimezone(UTC), offset, local.fold, LocalTimeKind.REGULAR)
    return BoundTime(naive, utc.astimezone(UTC), offset, local.fold, LocalTimeKind.REPEATED, other)


def wall_of(instant: datetime, zone: tzinfo) -> datetime:
    """The naive wall time an aware instant shows in ``zone`` (cheaper than ``replace``)."""
    offset = instant.astimezone(zone).utcoffset()
    assert offset is not None
    return _EPOCH + (instant - _EPOCH_UTC) + offset


def read_local(local: datetime, zone: tzinfo) -> datetime:
    """An instant for a wall time typed by a person: first pass in a fold, pre-transition
    offset in a gap (the same reading as :func:`bind`, so ranges and moments agree)."""
    return bind(local, zone).utc
