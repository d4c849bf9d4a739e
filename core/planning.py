"""The scheduler's decisions written to the store: plan a routine's due window, claim a
waiting occurrence under its overlap policy, recover an attempt a previous leader left.

Each function runs inside the caller's fenced write transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import apsw

from coven_core import occurrences, routines
from coven_core.model import (
    MissedCause,
    OccurrenceKind,
    OverlapPolicy,
    Revision,
    Routine,
    RoutineState,
    SkipReason,
)
from coven_core.occurrences import Stamp, Waiting
from coven_core.planner import Segment, next_due, plan_window
from coven_core.revision_cache import RevisionCache
from coven_core.runtime.base import Launch

_JUST_AFTER = timedelta(microseconds=1)


def segments(revisions: Sequence[Revision], start: datetime, end: datetime) -> list[Segment]:
    """Split ``[start, end)`` at revision boundaries: each moment is decided under the
    revision that was in force at its time (an edit re-plans only the future).

    A revision is in force from its ``effective_from`` until a *later* revision takes effect
    — the earliest start of any later one, not merely the next one's: after a backward clock
    jump an edit can take effect before its predecessor was due to, and then the predecessor
    is superseded whole and governs nothing. So the windows never overlap."""
    result: list[Segment] = []
    superseded_at = end
    for revision in reversed(revisions):
        low, high = max(start, revision.effective_from), min(end, superseded_at)
        if low < high:
            table = routines.timetable(revision)
            result.append(Segment(revision.number, revision.spec, table, low, high))
        superseded_at = min(superseded_at, revision.effective_from)
    return result[::-1]


def plan_routine(
    conn: apsw.Connection,
    routine: Routine,
    now: datetime,
    cause: MissedCause,
    stamp: Stamp,
    cache: RevisionCache,
) -> int:
    """Decide every moment of ``routine`` due by ``now``; returns how many rows were written."""
    revisions = cache.of(conn, routine)
    plan = plan_window(segments(revisions, routine.planned_through, now + _JUST_AFTER), now, cause)
    written = 0
    for planned in [*plan.gaps, *plan.to_run]:
        revision = cache.numbered(conn, routine, planned.revision)
        written += occurrences.insert_moment(conn, routine.id, planned, revision, stamp)
    if plan.missed is not None:
        revision = cache.numbered(conn, routine, plan.missed.revision)
        written += occurrences.insert_missed(conn, routine.id, plan.missed, revision, stamp)
    upcoming = next_due(routines.timetable(revisions[-1]), now)
    routines.advance(conn, routine.id, now + _JUST_AFTER, upcoming)
    return written


def claim_one(
    conn: apsw.Connection, item: Waiting, stamp: Stamp, cache: RevisionCache
) -> Launch | None:
    """Claim a waiting occurrence, or settle it as skipped if it must not run now."""
    routine, awaiting, active = _claim_context(conn, item)
    blocked = _blocked_reason(routine, item)
    if blocked is not None:
        occurrences.skip(conn, item, blocked, stamp)
        return None
    if awaiting:
        return None  # nothing new starts while a run of the routine waits for a person
    revision = cache.numbered(conn, routine, item.revision)
    if active:
        # A person's "run now" and a run's next attempt wait their turn; a moment obeys
        # the overlap policy.
        if item.kind is not OccurrenceKind.MANUAL and not item.attempts:
            _overlap(conn, item, revision, stamp)
        return None
    return occurrences.claim(conn, item, revision, stamp)


_CLAIM_CONTEXT = (
    f"SELECT {routines.COLUMNS}, EXISTS (SELECT 1 FROM occurrences WHERE routine_id = ?1 "
    f"AND disposition = 'recovery_required'), (SELECT count(*) FROM {occurrences.ACTIVE} "
    f"AND routine_id = ?1) + (SELECT count(*) FROM {occurrences.BETWEEN_ATTEMPTS} "
    "AND routine_id = ?1 AND ?2) FROM routines WHERE id = ?1"
)


def _claim_context(conn: apsw.Connection, item: Waiting) -> tuple[Routine, bool, int]:
    """The routine, whether a run of it awaits a person (``awaiting_decision``) and how many
    of its runs are in the item's way: what a claim decides on, in one read.

    Its active occurrences (by ``occurrences.ACTIVE``) are in every item's way; for a first
    attempt, so are runs waiting out a retry's backoff: such a run is not over, and a later
    moment that overtook it made its retry, due seconds later, wait as long as that moment
    ran. (A retry never waits for another retry: two would wait for each other.)"""
    first_attempt = not item.attempts
    row = conn.execute(_CLAIM_CONTEXT, (item.routine_id, first_attempt)).fetchone()
    if row is None:
        raise routines.UnknownRoutine(item.routine_id)
    *columns, awaiting, active = row
    return routines.from_row(columns), bool(awaiting), int(active)


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
