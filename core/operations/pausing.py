"""Pausing and quarantine, and what the time in between becomes (DESIGN §5, §6).

Pausing is idempotent. Resuming (or releasing) records the moments that passed meanwhile as
one skipped window — none of them runs. Each function runs inside the caller's write
transaction; :class:`coven_core.operator.Operator` audits and wakes.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import apsw

from coven_core import events
from coven_core.errors import ValidationError
from coven_core.events import EventKind
from coven_core.model import MissedCause, Revision, Routine, RoutineState, SkipReason
from coven_core.notation import reasons
from coven_core.notation.i18n import N_, _
from coven_core.operations import runs
from coven_core.scheduling import occurrences, routines
from coven_core.scheduling.decisions import load, record_broken
from coven_core.scheduling.occurrences import operator_stamp
from coven_core.scheduling.planner import MissedWindow, fold_all, next_due
from coven_core.store.codec import instant_from, instant_text
from coven_core.store.query import scalar
from coven_core.views.glance import scheduling_paused

_JUST_AFTER = timedelta(microseconds=1)


def pause(conn: apsw.Connection, now: datetime, name: str, reason: str | None) -> str:
    routine = routines.by_name(conn, name)
    if routine.state is RoutineState.PAUSED:
        return "already paused"
    require_state(routine, RoutineState.ACTIVE, "pause")
    routines.set_state(conn, routine.id, RoutineState.PAUSED, reason, now)
    events.record(conn, now, EventKind.PAUSED, routine_id=routine.id, reason=reason)
    return "paused"


def resume(conn: apsw.Connection, now: datetime, name: str) -> int:
    """Active again; moments that passed while paused become one skipped window."""
    routine = routines.by_name(conn, name)
    if routine.state is RoutineState.ACTIVE:
        return 0
    require_state(routine, RoutineState.PAUSED, "resume")
    since = activate(conn, routine, now, "resume")
    skipped = close_window(conn, routine, since, now)
    events.record(conn, now, EventKind.RESUMED, routine_id=routine.id, skipped=skipped)
    return skipped


def pause_all(conn: apsw.Connection, now: datetime, reason: str | None) -> str:
    if scheduling_paused(conn):
        return "already paused"
    conn.execute(
        "UPDATE scheduler_state SET paused = 1, paused_reason = ?, paused_at = ?",
        (reason, instant_text(now)),
    )
    events.record(conn, now, EventKind.PAUSED, scope="all", reason=reason)
    return "paused"


def resume_all(conn: apsw.Connection, now: datetime) -> int:
    if not scheduling_paused(conn):
        return 0
    paused_at = instant_from(scalar(conn, "SELECT paused_at FROM scheduler_state"))
    conn.execute("UPDATE scheduler_state SET paused = 0, paused_reason = NULL")
    skipped = sum(
        _close_unless_unreadable(conn, routine, paused_at, now)
        for routine in routines.live(conn)
        if routine.state is RoutineState.ACTIVE
    )
    events.record(conn, now, EventKind.RESUMED, scope="all", skipped=skipped)
    return skipped


def quarantine(conn: apsw.Connection, now: datetime, name: str, reason: str | None) -> str:
    routine = routines.by_name(conn, name)
    if routine.state is RoutineState.QUARANTINED:
        return "already quarantined"
    require_state(routine, RoutineState.ACTIVE, "quarantine")  # keeps a pause's reason
    why = reason or reasons.QUARANTINED_BY.format(who=runs.operator_name())
    routines.set_state(conn, routine.id, RoutineState.QUARANTINED, why, now)
    events.record(conn, now, EventKind.QUARANTINED, routine_id=routine.id, reason=why)
    return "quarantined"


def release(conn: apsw.Connection, now: datetime, name: str, reason: str | None = None) -> int:
    """Active again with its failure count reset; moments that passed while quarantined
    become one skipped window (reason ``quarantined``)."""
    routine = routines.by_name(conn, name)
    if routine.state is RoutineState.ACTIVE:
        return 0
    require_state(routine, RoutineState.QUARANTINED, "release")
    since = activate(conn, routine, now, "release")
    conn.execute("UPDATE routines SET consecutive_failures = 0 WHERE id = ?", (routine.id,))
    skipped = close_window(conn, routine, since, now, SkipReason.QUARANTINED)
    events.record(
        conn, now, EventKind.RELEASED, routine_id=routine.id, skipped=skipped, reason=reason
    )
    return skipped


def _close_unless_unreadable(
    conn: apsw.Connection, routine: Routine, paused_at: datetime, now: datetime
) -> int:
    """One routine's window after a pause of everything. A broken one keeps its undecided
    time for the edit or delete that mends it (``decisions.close_broken``): its moments
    cannot be computed, and its broken span is recorded once, whole."""
    try:
        if routines.breakage(conn, routine) is not None:
            return 0
        return close_window(conn, routine, paused_at, now)
    except routines.BrokenRevision:
        return 0


def activate(conn: apsw.Connection, routine: Routine, now: datetime, verb: str) -> datetime:
    """The one way a routine becomes active again (resume, release): never while one of its
    runs awaits a person's decision — an active routine plans and starts new work, and
    nothing new may start before that decision (DESIGN §5, issue #5). Returns when the
    routine stopped being active."""
    occurrences.refuse_while_awaiting(conn, routine.id, routine.name, verb)
    broken = routines.breakage(conn, routine)
    if broken is not None:  # it would plan nothing: mending it comes first
        raise routines.BrokenRoutine(routine.name, broken.reason(routine.name))
    since = _state_changed_at(conn, routine)
    routines.set_state(conn, routine.id, RoutineState.ACTIVE, None, now)
    return since


#: What a refusal says, by the action asked for and the routine's state: whole sentences, so
#: each language says them its own way. An action meets one state here: not the one it needs,
#: not the one it leads to (a no-op), and never ``deleted``.
_REFUSED: dict[tuple[str, RoutineState], str] = {
    ("pause", RoutineState.QUARANTINED): N_(
        "routine {name!r} is quarantined; only an active routine can be paused"
    ),
    ("resume", RoutineState.QUARANTINED): N_(
        "routine {name!r} is quarantined; only a paused routine can be resumed"
    ),
    ("quarantine", RoutineState.PAUSED): N_(
        "routine {name!r} is paused; only an active routine can be quarantined"
    ),
    ("release", RoutineState.PAUSED): N_(
        "routine {name!r} is paused; only a quarantined routine can be released"
    ),
}
#: Any other case: none today, but a new state must not make a refusal a crash.
_REFUSED_OTHERWISE = N_("routine {name!r} cannot be changed that way in its present state")


def require_state(routine: Routine, state: RoutineState, action: str) -> None:
    """Refuse ``action`` (``pause``, ``resume``, ``quarantine``, ``release``) unless the
    routine is in ``state``, in the reader's language."""
    if routine.state is not state:
        said = _REFUSED.get((action, routine.state), _REFUSED_OTHERWISE)
        raise ValidationError(_(said).format(name=routine.name))


def _state_changed_at(conn: apsw.Connection, routine: Routine) -> datetime:
    sql = "SELECT state_changed_at FROM routines WHERE id = ?"
    return instant_from(scalar(conn, sql, (routine.id,)))


def close_window(
    conn: apsw.Connection,
    routine: Routine,
    paused_at: datetime,
    now: datetime,
    reason: SkipReason = SkipReason.PAUSED,
) -> int:
    """Moments from the pause until now become one skipped window (reason ``paused``); none
    runs. Moments still undecided from *before* the pause (the scheduler was not running)
    become one missed window: the person paused before they could run, so none runs now.
    Returns how many moments the pause covered."""
    revisions = routines.revisions_of(conn, routine)
    by_number = {revision.number: revision for revision in revisions}
    stamp = operator_stamp(conn, now)
    start = routine.planned_through
    for span, _why in load(revisions, start, now + _JUST_AFTER).broken:  # mended by an edit since
        record_broken(conn, routine.id, span.revision.number, (span.start, span.end), stamp)
    # A wall clock set back behind the pause: all of the time since then was paused. Read
    # as the pause's own instant, it left both windows empty while the cursor moved past
    # now, and a moment due at the resume had no disposition (the soak, seed 672092034).
    paused_at = min(paused_at, now)
    before = _windows(revisions, start, paused_at, MissedCause.APP_NOT_RUNNING)
    during = _windows(revisions, max(start, paused_at), now + _JUST_AFTER,
                      MissedCause(reason.value))  # fmt: skip
    for windows, why in ((before, SkipReason.MISSED), (during, reason)):
        for window in windows:
            revision = by_number[window.revision]
            occurrences.insert_missed(conn, routine.id, window, revision, stamp, why)
    routines.advance(conn, routine.id, now + _JUST_AFTER, _upcoming(revisions[-1], now))
    return sum(window.count or 0 for window in during)


def _upcoming(current: Revision, now: datetime) -> datetime | None:
    """The next moment to decide; none while the current revision is broken (its span was
    just recorded as broken, and an edit gives it a due time again)."""
    try:
        return next_due(routines.timetable(current), now)
    except routines.BrokenRevision:
        return None


def _windows(
    revisions: list[Revision], start: datetime, end: datetime, cause: MissedCause
) -> list[MissedWindow]:
    """Every moment in ``[start, end)`` folded into windows: one, unless a broken revision's
    span lies between (recorded on its own: see close_window)."""
    if start >= end:
        return []
    return fold_all(load(revisions, start, end).segments, cause)
