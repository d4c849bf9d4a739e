"""Deciding a routine's moments whose time has come (DESIGN §3).

A pure function of the routine's timetable(s), the window to decide and the cause of any
lateness: no store, no clock. The scheduler writes what it returns in one transaction.

For every moment in the window, exactly one decision:

* a nonexistent wall time → skipped, ``nonexistent_local_time`` (one row each; they are rare);
* a moment on one of the revision's exclusion dates → skipped, ``excluded_date`` (one row each,
  on time or late: the person said in advance that it must not run);
* a moment reached on time (within :data:`ON_TIME_TOLERANCE`) → run;
* a moment reached late → *missed*. Under ``latest_only`` the most recent missed moment runs,
  if nothing ran on time after it and it is within the grace window; every other missed moment
  is folded into **one** coalesced window (first, last, count, cause) — never a row per minute.
  A window claims every moment from its first to its last, so it never reaches over a broken
  revision's span (left out of the segments; it is a skipped window of its own): the moments
  on either side of one are two windows.

The late moments are not walked one by one where the timetable can count them
(``coven_core.schedule.tally``): a month of them folds as one tally.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from coven_core.model import MisfirePolicy, MissedCause, RevisionSpec
from coven_core.schedule.exclusions import excludes
from coven_core.schedule.tally import Tally, tallied
from coven_core.schedule.timetable import Timetable
from coven_core.tz.binding import BoundTime

#: How late a moment may be reached and still count as on time: a scheduler pass that wakes
#: a little after its deadline has not *missed* anything.
ON_TIME_TOLERANCE = timedelta(seconds=60)

_JUST_AFTER = timedelta(microseconds=1)


@dataclass(frozen=True)
class Segment:
    """The part of a window one revision governs: moments in ``[start, end)``."""

    revision: int
    spec: RevisionSpec
    timetable: Timetable
    start: datetime
    end: datetime


@dataclass(frozen=True)
class Planned:
    revision: int
    moment: BoundTime
    #: Why it runs late, when it is the latest missed moment, run under ``latest_only``.
    caught_up: MissedCause | None = None


@dataclass
class MissedWindow:
    """A run of missed moments, recorded as one coalesced disposition."""

    revision: int
    first: datetime
    last: datetime
    count: int | None  # None: the moments could not be computed (a broken revision)
    cause: MissedCause

    def add(self, moment: BoundTime) -> None:
        self.last, self.count = moment.utc, (self.count or 0) + 1

    def add_tally(self, tally: Tally) -> None:
        self.last, self.count = tally.last, (self.count or 0) + tally.count


@dataclass
class WindowPlan:
    """What to write for one routine after a pass decided its window."""

    to_run: list[Planned] = field(default_factory=list)
    gaps: list[Planned] = field(default_factory=list)
    excluded: list[Planned] = field(default_factory=list)
    missed: list[MissedWindow] = field(default_factory=list)  # one per stretch of segments
    _stretch: int = -1  # the stretch the last missed window folds


def plan_window(segments: Iterable[Segment], now: datetime, cause: MissedCause) -> WindowPlan:
    """Decide every moment due by ``now`` (inclusive) in the given segments."""
    listed = list(segments)
    stretch = stretches(listed)
    plan = WindowPlan()
    latest_missed: tuple[Segment, Planned] | None = None
    for segment, item in _due(listed, now):
        if isinstance(item, Tally):  # late moments, none the latest: all of them fold
            if latest_missed is not None:
                _fold(plan, latest_missed[1], cause, stretch[id(latest_missed[0])])
            _fold_tally(plan, segment.revision, item, cause, stretch[id(segment)])
            latest_missed = None
            continue
        planned = Planned(segment.revision, item)
        if planned.moment.skipped:
            plan.gaps.append(planned)
        elif excludes(segment.spec.except_dates, planned.moment):
            plan.excluded.append(planned)
        elif now - planned.moment.utc <= ON_TIME_TOLERANCE:
            plan.to_run.append(planned)
        else:
            if latest_missed is not None:
                _fold(plan, latest_missed[1], cause, stretch[id(latest_missed[0])])
            latest_missed = (segment, planned)
    if latest_missed is not None:
        _settle_latest(plan, *latest_missed, now=now, cause=cause, stretch=stretch)
    return plan


def stretches(segments: list[Segment]) -> dict[int, int]:
    """Each segment's stretch (by ``id``): segments that meet share one; where one ends before
    the next begins, a broken revision's span lies between, and a new stretch starts."""
    found: dict[int, int] = {}
    number, previous = 0, None
    for segment in segments:
        if previous is not None and segment.start != previous.end:
            number += 1
        found[id(segment)], previous = number, segment
    return found


def fold_all(segments: list[Segment], cause: MissedCause) -> list[MissedWindow]:
    """Every moment of ``segments`` (none a gap), folded into one window a stretch."""
    stretch = stretches(segments)
    plan = WindowPlan()
    for segment in segments:
        for item in tallied(segment.timetable, segment.start, segment.end):
            if isinstance(item, Tally):
                _fold_tally(plan, segment.revision, item, cause, stretch[id(segment)])
            else:
                _fold(plan, Planned(segment.revision, item), cause, stretch[id(segment)])
    return plan.missed


def _due(segments: Iterable[Segment], now: datetime) -> Iterator[tuple[Segment, BoundTime | Tally]]:
    """Each segment's moments due by ``now``: the late ones counted where they can be (none on
    an excluded date), then those on time, walked."""
    late = now - ON_TIME_TOLERANCE  # a moment before it is late
    for segment in segments:
        end = min(segment.end, now + _JUST_AFTER)
        if segment.start >= end:
            continue
        split = min(max(segment.start, late), end)
        table, excluded = segment.timetable, segment.spec.except_dates
        for item in tallied(table, segment.start, split, excluded):
            yield segment, item
        if split < end:
            for moment in table.moments_between(split, end):
                yield segment, moment


def _fold(plan: WindowPlan, planned: Planned, cause: MissedCause, stretch: int) -> None:
    if plan.missed and plan._stretch == stretch:
        plan.missed[-1].add(planned.moment)
        return
    utc = planned.moment.utc
    plan.missed.append(MissedWindow(planned.revision, utc, utc, 1, cause))
    plan._stretch = stretch


def _fold_tally(
    plan: WindowPlan, revision: int, tally: Tally, cause: MissedCause, stretch: int
) -> None:
    if plan.missed and plan._stretch == stretch:
        plan.missed[-1].add_tally(tally)
        return
    plan.missed.append(MissedWindow(revision, tally.first, tally.last, tally.count, cause))
    plan._stretch = stretch


def _settle_latest(
    plan: WindowPlan, segment: Segment, planned: Planned, *, now: datetime, cause: MissedCause,
    stretch: dict[int, int],
) -> None:  # fmt: skip
    """The most recent missed moment runs under latest_only, unless something ran on time
    after it or it is past the grace window."""
    spec = segment.spec
    in_grace = spec.grace is None or now - planned.moment.utc <= spec.grace
    ran_after = any(p.moment.utc > planned.moment.utc for p in plan.to_run)
    if spec.misfire is MisfirePolicy.LATEST_ONLY and in_grace and not ran_after:
        plan.to_run.append(replace(planned, caught_up=cause))
        plan.to_run.sort(key=lambda p: p.moment.utc)
    else:
        _fold(plan, planned, cause, stretch[id(segment)])


def next_due(timetable: Timetable, after: datetime) -> datetime | None:
    """The earliest instant after ``after`` at which a moment needs deciding.

    A nonexistent wall time's nominal instant can lie after the next real moment, so look past
    skipped moments up to the first real one and take the earliest instant seen.
    """
    earliest: datetime | None = None
    for moment in timetable.moments_from(after + _JUST_AFTER):
        earliest = moment.utc if earliest is None else min(earliest, moment.utc)
        if not moment.skipped:
            break
    return earliest
