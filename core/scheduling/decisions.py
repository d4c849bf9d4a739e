"""The scheduler's decisions written to the store: plan a routine's due window, claim a
waiting occurrence under its overlap policy, recover an attempt a previous leader left.

Each function runs inside the caller's fenced write transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple

import apsw

from coven_core import events
from coven_core.events import EventKind
from coven_core.model import (
    Disposition,
    MissedCause,
    OccurrenceKind,
    OverlapPolicy,
    Revision,
    Routine,
    RoutineState,
    SkipReason,
)
from coven_core.operations import settings
from coven_core.runtime.base import Launch
from coven_core.scheduling import budgets, cooldown, groups, occurrences, overrun, routines
from coven_core.scheduling.conditions import Gate
from coven_core.scheduling.occurrences import Stamp, Waiting
from coven_core.scheduling.planner import MissedWindow, Planned, Segment, next_due, plan_window
from coven_core.scheduling.revision_cache import RevisionCache

_JUST_AFTER = timedelta(microseconds=1)
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Span:
    """The part of ``[start, end)`` one revision decides."""

    revision: Revision
    start: datetime
    end: datetime


def spans(revisions: Sequence[Revision], start: datetime, end: datetime) -> list[Span]:
    """Split ``[start, end)`` at revision boundaries: each moment is decided under the
    revision that was in force at its time (an edit re-plans only the future).

    A revision is in force from its ``effective_from`` until a *later* revision takes effect
    — the earliest start of any later one, not merely the next one's: after a backward clock
    jump an edit can take effect before its predecessor was due to, and then the predecessor
    is superseded whole and governs nothing. So the windows never overlap."""
    result: list[Span] = []
    superseded_at = end
    for revision in reversed(revisions):
        low, high = max(start, revision.effective_from), min(end, superseded_at)
        if low < high:
            result.append(Span(revision, low, high))
        superseded_at = min(superseded_at, revision.effective_from)
    return result[::-1]


def segments(revisions: Sequence[Revision], start: datetime, end: datetime) -> list[Segment]:
    """The spans of ``[start, end)`` with their timetables (BrokenRevision if one of them
    cannot be bound)."""
    return [_segment(span) for span in spans(revisions, start, end)]


def _segment(span: Span) -> Segment:
    table = routines.timetable(span.revision)
    return Segment(span.revision.number, span.revision.spec, table, span.start, span.end)


@dataclass
class Loaded:
    """The spans of a window that can be decided, and those whose revision is broken."""

    segments: list[Segment] = field(default_factory=list)
    broken: list[tuple[Span, routines.BrokenRevision]] = field(default_factory=list)


def load(revisions: Sequence[Revision], start: datetime, end: datetime) -> Loaded:
    loaded = Loaded()
    for span in spans(revisions, start, end):
        try:
            loaded.segments.append(_segment(span))
        except routines.BrokenRevision as broken:
            loaded.broken.append((span, broken))
    return loaded


def record_broken(
    conn: apsw.Connection, routine_id: str, number: int, span: tuple[datetime, datetime],
    stamp: Stamp,
) -> int:  # fmt: skip
    """A broken revision's span becomes one skipped window (reason ``routine_broken``): its
    moments cannot even be computed, so the window has bounds and no count. A window holds
    its last instant, a span does not hold its end (where the next revision's first moment
    may fall): the window ends just before it."""
    cause, reason = MissedCause.ROUTINE_BROKEN, SkipReason.ROUTINE_BROKEN
    start, end = span
    window = MissedWindow(number, start, max(start, end - _JUST_AFTER), None, cause)
    zone = _stored_zone(conn, routine_id, number)
    return int(occurrences.insert_window(conn, routine_id, window, zone, stamp, reason))


def _stored_zone(conn: apsw.Connection, routine_id: str, number: int) -> tuple[str, str]:
    """The zone key and tz database a revision's row names, as stored (it may not bind)."""
    row = conn.execute(
        "SELECT timezone, tzdb_version FROM revisions WHERE routine_id = ? AND number = ?",
        (routine_id, number),
    ).fetchone()
    return ("UTC", "unknown") if row is None else (str(row[0]), str(row[1]))


def close_broken(conn: apsw.Connection, routine: Routine, end: datetime, stamp: Stamp) -> int:
    """A broken routine's undecided time, from its cursor to ``end``, becomes its skipped
    window, and the routine is decided through ``end`` (at an edit that mends it, or at its
    delete)."""
    broken = routines.breakage(conn, routine)
    if broken is None or routine.planned_through >= end:
        return 0
    span = routine.planned_through, end
    written = record_broken(conn, routine.id, broken.number, span, stamp)
    routines.advance(conn, routine.id, end, None)  # the edit then sets the next moment due
    return written


def plan_routine(
    conn: apsw.Connection,
    routine: Routine,
    now: datetime,
    cause: MissedCause,
    stamp: Stamp,
    cache: RevisionCache,
) -> int:
    """Decide every moment of ``routine`` due by ``now``; returns how many rows were written.

    A broken revision in force now stops the routine's planning where its span begins
    (:func:`_stop_broken`); the span is recorded once an edit supersedes it or the routine is
    deleted. A broken span already superseded is recorded at once."""
    try:
        revisions = cache.of(conn, routine)
    except routines.BrokenRevision as broken:
        return _stop_broken(conn, routine, routine.planned_through, broken, stamp)
    loaded = load(revisions, routine.planned_through, now + _JUST_AFTER)
    tail = loaded.broken[-1] if loaded.broken and loaded.broken[-1][0].end > now else None
    written = _plan_segments(conn, routine, loaded.segments, now, cause, stamp, cache)
    for span, _ in loaded.broken:
        if tail is None or span is not tail[0]:
            bounds = span.start, span.end
            written += record_broken(conn, routine.id, span.revision.number, bounds, stamp)
    if tail is not None:
        return written + _stop_broken(conn, routine, tail[0].start, tail[1], stamp)
    upcoming = next_due(routines.timetable(revisions[-1]), now)
    routines.advance(conn, routine.id, now + _JUST_AFTER, upcoming)
    return written


def review(conn: apsw.Connection, stamp: Stamp) -> None:
    """Once per start: stop every active routine that no longer loads (a tz database upgrade
    lost its zone, a newer version refuses its schedule) before its next moment comes due,
    and plan again each broken one that binds with this process's tz database."""
    for routine, revision, broken in routines.loaded_active(conn):
        if broken is not None and routine.next_due is not None:
            _stop_broken(conn, routine, routine.planned_through, broken, stamp)
        elif revision is not None and broken is None and routine.next_due is None:
            table = routines.timetable(revision)
            if next_due(table, routine.planned_through) is not None:  # not an ended schedule
                routines.advance(conn, routine.id, routine.planned_through, routine.planned_through)


def _plan_segments(
    conn: apsw.Connection, routine: Routine, segments: list[Segment], now: datetime,
    cause: MissedCause, stamp: Stamp, cache: RevisionCache,
) -> int:  # fmt: skip
    plan = plan_window(segments, now, cause)
    written = 0
    for planned in [*plan.gaps, *plan.to_run]:
        revision = cache.numbered(conn, routine, planned.revision)
        written += occurrences.insert_moment(conn, routine.id, planned, revision, stamp)
    for planned in plan.excluded:
        revision = cache.numbered(conn, routine, planned.revision)
        decided = _excluded(planned)
        written += occurrences.insert_moment(conn, routine.id, planned, revision, stamp, decided)
    for window in plan.missed:
        revision = cache.numbered(conn, routine, window.revision)
        written += occurrences.insert_missed(conn, routine.id, window, revision, stamp)
    return written


def _excluded(planned: Planned) -> occurrences.Decided:
    day = planned.moment.local.date().isoformat()
    return occurrences.Decided(Disposition.SKIPPED, SkipReason.EXCLUDED_DATE, {"date": day})


def _stop_broken(
    conn: apsw.Connection, routine: Routine, since: datetime, broken: routines.BrokenRevision,
    stamp: Stamp,
) -> int:  # fmt: skip
    """Decided through ``since``, nothing due: the pass no longer picks the routine until an
    edit (or a start with a tz database that binds it again) gives it a due time."""
    routines.advance(conn, routine.id, since, None)
    reason = broken.reason(routine.name)
    log.warning("routine %r is broken and plans nothing: %s", routine.name, reason)
    events.record(conn, stamp.now, EventKind.ROUTINE_BROKEN, routine_id=routine.id, reason=reason)
    return 0


def claim_one(
    conn: apsw.Connection, item: Waiting, stamp: Stamp, cache: RevisionCache,
    gate: Gate | None = None,
) -> Launch | None:  # fmt: skip
    """Claim a waiting occurrence, or settle it as skipped if it must not run now; ``gate``
    holds back a new run whose conditions the host does not meet (none: no host state)."""
    routine, awaiting, active, context = _claim_context(conn, item)
    blocked = _blocked_reason(routine, item)
    if blocked is not None:
        occurrences.skip(conn, item, blocked, stamp)
        return None
    if awaiting:
        return None  # nothing new starts while a run of the routine waits for a person
    try:
        revision = cache.numbered(conn, routine, item.revision)
    except routines.BrokenRevision:
        occurrences.skip(conn, item, SkipReason.ROUTINE_BROKEN, stamp)
        return None
    if active:
        # A person's "run now" and a run's next attempt wait their turn; a moment obeys
        # the overlap policy.
        if item.kind is not OccurrenceKind.MANUAL and not item.attempts:
            _overlap(conn, item, revision, stamp)
        return None
    if revision.spec.group is not None and groups.busy(conn, item, revision, stamp):
        return None
    if not item.attempts and _held_by_policy(conn, item, revision, stamp):
        return None
    if not item.attempts and gate is not None and gate.holds(conn, item, revision, stamp):
        return None
    timeout, source = overrun.applied_timeout(revision.spec.timeout, context.default_timeout)
    usual, after = overrun.budget(overrun.durations_from(context.durations), timeout)
    limits = occurrences.Limits(timeout, source, usual, after)
    if _trial(revision):  # decided as if live, and the command never starts
        occurrences.shadow_run(conn, item, revision, stamp, limits)
        return None
    return occurrences.claim(conn, item, revision, stamp, limits)


def _trial(revision: Revision) -> bool:
    return revision.spec.shadow


def _held_by_policy(conn: apsw.Connection, item: Waiting, revision: Revision, stamp: Stamp) -> bool:
    """Whether a policy of DESIGN §14 settled a new run's occurrence instead of starting it."""
    return _cooling_down(conn, item, revision, stamp) or _over_budget(conn, item, revision, stamp)


def _cooling_down(conn: apsw.Connection, item: Waiting, revision: Revision, stamp: Stamp) -> bool:
    """A scheduled moment that comes due while the routine rests after failures is skipped
    (``cooldown``, with the rest's end); a person's run is not held back."""
    if item.kind is OccurrenceKind.MANUAL:
        return False
    rest = cooldown.active(conn, item.routine_id, revision.spec, stamp.now)
    if rest is not None:
        occurrences.skip(conn, item, SkipReason.COOLDOWN, stamp, rest.inputs())
    return rest is not None


def _over_budget(conn: apsw.Connection, item: Waiting, revision: Revision, stamp: Stamp) -> bool:
    """A new run of a routine with a budget: a scheduled moment over it is skipped
    (``budget_exhausted``); a person's run goes ahead, counted and marked (DESIGN §14)."""
    budget = budgets.state(conn, item.routine_id, revision.spec, stamp.now)
    if budget is None:
        return False
    if item.kind is OccurrenceKind.MANUAL:
        marked = {"budget": budget.inputs(), "over_budget": budget.exhausted}
        occurrences.note_decision(conn, item.id, marked)
        return False
    if budget.exhausted:
        occurrences.skip(conn, item, SkipReason.BUDGET_EXHAUSTED, stamp, budget.inputs())
    return budget.exhausted


_CLAIM_CONTEXT = (
    f"SELECT {routines.COLUMNS}, EXISTS (SELECT 1 FROM occurrences WHERE routine_id = ?1 "
    f"AND disposition = 'recovery_required'), (SELECT count(*) FROM {occurrences.ACTIVE} "
    f"AND routine_id = ?1) + (SELECT count(*) FROM {occurrences.BETWEEN_ATTEMPTS} "
    f"AND routine_id = ?1 AND ?2), {settings.DEFAULT_TIMEOUT_SQL}, "
    f"{overrun.durations_sql('?1')} FROM routines WHERE id = ?1"
)


class _TimeContext(NamedTuple):
    default_timeout: str | None  # the stored setting (None: never set)
    durations: str | None  # the routine's recent successes (overrun.durations_sql)


def _claim_context(conn: apsw.Connection, item: Waiting) -> tuple[Routine, bool, int, _TimeContext]:
    """The routine, whether a run of it awaits a person (``awaiting_decision``), how many of
    its runs are in the item's way, and what its attempt's timeout and overrun are decided
    on: what a claim decides on, in one read.

    Its active occurrences (by ``occurrences.ACTIVE``) are in every item's way; for a first
    attempt, so are runs waiting out a retry's backoff: such a run is not over, and a later
    moment that overtook it made its retry, due seconds later, wait as long as that moment
    ran. (A retry never waits for another retry: two would wait for each other.)"""
    first_attempt = not item.attempts
    row = conn.execute(_CLAIM_CONTEXT, (item.routine_id, first_attempt)).fetchone()
    if row is None:
        raise routines.UnknownRoutine(item.routine_id)
    *columns, awaiting, active, default_timeout, durations = row
    context = _TimeContext(default_timeout, durations)
    return routines.from_row(columns), bool(awaiting), int(active), context


def _blocked_reason(routine: Routine, item: Waiting) -> SkipReason | None:
    """Why a waiting occurrence must not run now. A person's "run now" runs even while the
    routine is paused; on a quarantined routine only a probe does."""
    if routine.state is RoutineState.DELETED:
        return SkipReason.DELETED
    if routine.state is RoutineState.QUARANTINED and not item.probe:
        return SkipReason.QUARANTINED
    by_person = item.kind is OccurrenceKind.MANUAL or item.forced
    if routine.state is RoutineState.PAUSED and not by_person:
        return SkipReason.PAUSED
    return None


def _overlap(conn: apsw.Connection, item: Waiting, revision: Revision, stamp: Stamp) -> None:
    """The routine's previous run is still active: skip, or let exactly one wait."""
    waits = revision.spec.overlap is OverlapPolicy.QUEUE_ONE
    if not (waits and occurrences.oldest_waiting_id(conn, item.routine_id) == item.id):
        occurrences.skip(conn, item, SkipReason.OVERLAP, stamp)
