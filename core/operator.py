"""The operator API: the one door for people (CLI and GUI) to change routines (CONTRACT §10).

Neither the CLI nor the GUI writes lifecycle rows; they call this. Every command validates
first and changes nothing on bad input, writes its change and its event in one transaction,
and then wakes the scheduler — in this process and in any other on the same store.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

import apsw

from coven_core import events, ids, occurrences, routines, runs
from coven_core.clock import Clock, WakeReason
from coven_core.errors import ValidationError
from coven_core.events import EventKind
from coven_core.model import (
    MissedCause,
    Revision,
    RevisionSpec,
    Routine,
    RoutineState,
    SkipReason,
)
from coven_core.occurrences import operator_stamp
from coven_core.planner import MissedWindow, next_due
from coven_core.planning import scheduling_paused, segments
from coven_core.reconcile import Decision, Outcome, reconcile
from coven_core.runs import RunRef
from coven_core.schedule.timetable import Timetable
from coven_core.store.codec import instant_from, maybe_instant_text
from coven_core.store.query import scalar
from coven_core.store.store import Store
from coven_core.tz.local import resolve_local_zone

Notify = Callable[[WakeReason], None]
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_JUST_AFTER = timedelta(microseconds=1)


class DuplicateRoutine(ValidationError):
    def __init__(self, name: str) -> None:
        super().__init__(f"a routine named {name!r} already exists (choose another name)")


class Operator:
    def __init__(self, store: Store, clock: Clock, notify: Notify) -> None:
        self.store, self.clock, self._notify = store, clock, notify

    # -- definitions ------------------------------------------------------------------------
    def add_routine(self, name: str, spec: RevisionSpec, anchor: datetime | None = None) -> str:
        """Create a routine; returns its id. Nothing is stored if anything is invalid."""
        now = self.clock.now_utc()
        spec = validated(name, spec)
        anchor = anchor or now
        table = Timetable.build(spec.schedule, spec.timezone, anchor)
        routine_id = ids.new_routine_id()
        routine = Routine(
            routine_id, name, RoutineState.ACTIVE, None, 1, now, _first_due(table, now), now
        )
        with self.store.write() as conn:
            if _name_taken(conn, name):
                raise DuplicateRoutine(name)
            routines.insert(conn, routine)
            routines.insert_revision(conn, routines.new_revision(routine_id, 1, spec, anchor, now))
            events.record(conn, now, EventKind.ROUTINE_ADDED, routine_id=routine_id, name=name)
        self._notify(WakeReason.DEFINITION_CHANGED)
        return routine_id

    def edit_routine(
        self,
        name: str,
        change: Callable[[RevisionSpec], RevisionSpec],
        anchor: datetime | None = None,
    ) -> int:
        """A new revision from the current one; re-plans only moments from now on.

        The anchor (RRULE DTSTART, interval origin) is kept while the schedule is unchanged;
        a new schedule is anchored at ``anchor`` or now."""
        now = self.clock.now_utc()
        with self.store.write() as conn:
            routine = routines.by_name(conn, name)
            current = routines.current_revision(conn, routine)
            spec = validated(name, change(current.spec))
            if anchor is None:
                anchor = current.anchor if spec.schedule == current.spec.schedule else now
            table = Timetable.build(spec.schedule, spec.timezone, anchor)
            number = current.number + 1
            routines.insert_revision(
                conn, routines.new_revision(routine.id, number, spec, anchor, now)
            )
            start = max(now, routine.planned_through)
            conn.execute(
                "UPDATE routines SET next_due = ? WHERE id = ?",
                (_text(_first_due(table, start)), routine.id),
            )
            events.record(
                conn, now, EventKind.ROUTINE_EDITED, routine_id=routine.id, revision=number
            )
        self._notify(WakeReason.DEFINITION_CHANGED)
        return number

    def delete_routine(self, name: str) -> None:
        """No future planning; history is kept; a run in flight is not touched."""
        now = self.clock.now_utc()
        with self.store.write() as conn:
            routine = routines.by_name(conn, name)
            routines.set_state(conn, routine.id, RoutineState.DELETED, "deleted by a person", now)
            _skip_waiting(conn, routine.id, SkipReason.DELETED, now)
            events.record(conn, now, EventKind.ROUTINE_DELETED, routine_id=routine.id, name=name)
        self._notify(WakeReason.DEFINITION_CHANGED)

    # -- pause and resume (idempotent: pausing a paused routine changes nothing) ------------
    def pause(self, name: str, reason: str | None = None) -> None:
        now = self.clock.now_utc()
        with self.store.write() as conn:
            routine = routines.by_name(conn, name)
            if routine.state is RoutineState.PAUSED:
                return
            _require_state(routine, RoutineState.ACTIVE, "paused")
            routines.set_state(conn, routine.id, RoutineState.PAUSED, reason, now)
            events.record(conn, now, EventKind.PAUSED, routine_id=routine.id, reason=reason)
        self._notify(WakeReason.OPERATOR_COMMAND)

    def resume(self, name: str) -> int:
        """Active again; moments that passed while paused become one skipped window."""
        now = self.clock.now_utc()
        with self.store.write() as conn:
            routine = routines.by_name(conn, name)
            if routine.state is RoutineState.ACTIVE:
                return 0
            _require_state(routine, RoutineState.PAUSED, "resumed")
            occurrences.refuse_while_awaiting(conn, routine.id, name, "resume")
            paused_at = instant_from(
                scalar(conn, "SELECT state_changed_at FROM routines WHERE id = ?", (routine.id,))
            )
            routines.set_state(conn, routine.id, RoutineState.ACTIVE, None, now)
            skipped = _close_paused_window(conn, routine, paused_at, now)
            events.record(conn, now, EventKind.RESUMED, routine_id=routine.id, skipped=skipped)
        self._notify(WakeReason.OPERATOR_COMMAND)
        return skipped

    def pause_all(self, reason: str | None = None) -> None:
        now = self.clock.now_utc()
        with self.store.write() as conn:
            if scheduling_paused(conn):
                return
            conn.execute(
                "UPDATE scheduler_state SET paused = 1, paused_reason = ?, paused_at = ?",
                (reason, _text(now)),
            )
            events.record(conn, now, EventKind.PAUSED, scope="all", reason=reason)
        self._notify(WakeReason.OPERATOR_COMMAND)

    def resume_all(self) -> int:
        now = self.clock.now_utc()
        with self.store.write() as conn:
            if not scheduling_paused(conn):
                return 0
            paused_at = instant_from(scalar(conn, "SELECT paused_at FROM scheduler_state"))
            conn.execute("UPDATE scheduler_state SET paused = 0, paused_reason = NULL")
            skipped = sum(
                _close_paused_window(conn, routine, paused_at, now)
                for routine in routines.live(conn)
                if routine.state is RoutineState.ACTIVE
            )
            events.record(conn, now, EventKind.RESUMED, scope="all", skipped=skipped)
        self._notify(WakeReason.OPERATOR_COMMAND)
        return skipped

    # -- runs -------------------------------------------------------------------------------
    def run_now(self, name: str, key: str | None = None) -> RunRef:
        return self._run_command(lambda conn, now: runs.run_now(conn, name, key, now))

    def probe(self, name: str) -> RunRef:
        """One attempt now on a quarantined routine; it stays quarantined (§6)."""
        return self._run_command(lambda conn, now: runs.run_now(conn, name, None, now, probe=True))

    def cancel(self, run_id: str, reason: str | None = None) -> RunRef:
        return self._run_command(lambda conn, now: runs.cancel(conn, run_id, reason, now))

    def cancel_routine(self, name: str, reason: str | None = None) -> list[RunRef]:
        """Cancel every active run of a routine."""
        now = self.clock.now_utc()
        with self.store.write() as conn:
            routine = routines.by_name(conn, name)
            refs = [
                runs.cancel(conn, run_id, reason, now, scope="routine")
                for run_id in runs.active_runs(conn, routine.id)
            ]
        self._notify(WakeReason.OPERATOR_COMMAND)
        return refs

    def retry(self, run_id: str) -> RunRef:
        return self._run_command(lambda conn, now: runs.retry(conn, run_id, now))

    def _run_command(self, command: Callable[[apsw.Connection, datetime], RunRef]) -> RunRef:
        now = self.clock.now_utc()
        with self.store.write() as conn:
            ref = command(conn, now)
        self._notify(WakeReason.OPERATOR_COMMAND)
        return ref

    # -- decisions ----------------------------------------------------------------------------
    def reconcile(
        self,
        run_id: str,
        outcome: Outcome,
        reason: str,
        *,
        verified_no_side_effect: bool = False,
        seen_digest: str | None = None,
    ) -> Decision:
        """A person's decision on a run awaiting one; the routine stays paused (§5.2)."""
        now = self.clock.now_utc()
        with self.store.write() as conn:
            decision = reconcile(
                conn, run_id, outcome, reason, now,
                verified_no_side_effect=verified_no_side_effect, seen_digest=seen_digest,
            )  # fmt: skip
        self._notify(WakeReason.OPERATOR_COMMAND)
        return decision

    # -- quarantine -------------------------------------------------------------------------
    def quarantine(self, name: str, reason: str | None = None) -> None:
        now = self.clock.now_utc()
        with self.store.write() as conn:
            routine = routines.by_name(conn, name)
            if routine.state is RoutineState.QUARANTINED:
                return
            _require_state(routine, RoutineState.ACTIVE, "quarantined")  # keeps a pause's reason
            why = reason or f"quarantined by {runs.operator_name()}"
            routines.set_state(conn, routine.id, RoutineState.QUARANTINED, why, now)
            events.record(conn, now, EventKind.QUARANTINED, routine_id=routine.id, reason=why)
        self._notify(WakeReason.OPERATOR_COMMAND)

    def release(self, name: str) -> int:
        """Active again with its failure count reset; moments that passed while quarantined
        become one skipped window (reason ``quarantined``)."""
        now = self.clock.now_utc()
        with self.store.write() as conn:
            routine = routines.by_name(conn, name)
            if routine.state is RoutineState.ACTIVE:
                return 0
            _require_state(routine, RoutineState.QUARANTINED, "released")
            since = instant_from(
                scalar(conn, "SELECT state_changed_at FROM routines WHERE id = ?", (routine.id,))
            )
            routines.set_state(conn, routine.id, RoutineState.ACTIVE, None, now)
            conn.execute("UPDATE routines SET consecutive_failures = 0 WHERE id = ?", (routine.id,))
            skipped = _close_paused_window(conn, routine, since, now, SkipReason.QUARANTINED)
            events.record(conn, now, EventKind.RELEASED, routine_id=routine.id, skipped=skipped)
        self._notify(WakeReason.OPERATOR_COMMAND)
        return skipped


def _require_state(routine: Routine, state: RoutineState, verb: str) -> None:
    if routine.state is not state:
        raise ValidationError(
            f"routine {routine.name!r} is {routine.state.value}; only {_article(state.value)} "
            f"routine can be {verb}"
        )


def _article(word: str) -> str:
    return f"an {word}" if word[0] in "aeiou" else f"a {word}"


def validated(name: str, spec: RevisionSpec) -> RevisionSpec:
    """Check everything a revision says before anything is written."""
    if not name.strip():
        raise ValidationError("a routine needs a name")
    if not spec.argv or not spec.argv[0]:
        raise ValidationError("the command is empty: give it after --, e.g. -- /usr/bin/backup")
    if spec.shell and len(spec.argv) != 1:
        raise ValidationError("with --shell, give the whole command as one argument after --")
    if spec.retries < 0:
        raise ValidationError("--retries must be 0 or more")
    for key, _ in spec.env:
        if not _ENV_NAME.fullmatch(key):
            raise ValidationError(f"environment name {key!r} is not valid (letters, digits, _)")
    if spec.cwd is not None and not os.path.isabs(spec.cwd):
        raise ValidationError(f"working directory {spec.cwd!r} must be an absolute path")
    if spec.timezone.strip().lower() == "local":
        local = resolve_local_zone()
        spec = replace(spec, timezone=local.key, zone_source=f"local: {local.source}")
    return spec


def _name_taken(conn: apsw.Connection, name: str) -> bool:
    try:
        routines.by_name(conn, name)
    except routines.UnknownRoutine:
        return False
    return True


def _first_due(table: Timetable, start: datetime) -> datetime | None:
    """The first instant at or after ``start`` that needs deciding."""
    return next_due(table, start - _JUST_AFTER)


def _text(instant: datetime | None) -> str | None:
    return maybe_instant_text(instant)


def _skip_waiting(
    conn: apsw.Connection, routine_id: str, reason: SkipReason, now: datetime
) -> None:
    rows = conn.execute(
        "SELECT id, revision, scheduled_utc FROM occurrences "
        "WHERE routine_id = ? AND state = 'planned'",
        (routine_id,),
    )
    stamp = operator_stamp(conn, now)
    for oid, revision, at in list(rows):
        item = occurrences.Waiting(oid, routine_id, revision, instant_from(at))
        occurrences.skip(conn, item, reason, stamp)


def _close_paused_window(
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
    revisions = routines.revisions(conn, routine.id)
    by_number = {revision.number: revision for revision in revisions}
    stamp = operator_stamp(conn, now)
    start = routine.planned_through
    windows = (
        (_window(revisions, start, min(paused_at, now), MissedCause.APP_NOT_RUNNING),
         SkipReason.MISSED),
        (_window(revisions, max(start, paused_at), now + _JUST_AFTER, MissedCause(reason.value)),
         reason),
    )  # fmt: skip
    for window, reason in windows:
        if window is not None:
            revision = by_number[window.revision]
            occurrences.insert_missed(conn, routine.id, window, revision, stamp, reason)
    upcoming = next_due(routines.timetable(revisions[-1]), now)
    routines.advance(conn, routine.id, now + _JUST_AFTER, upcoming)
    during = windows[1][0]
    return 0 if during is None else during.count


def _window(
    revisions: list[Revision], start: datetime, end: datetime, cause: MissedCause
) -> MissedWindow | None:
    """Every moment in ``[start, end)`` folded into one window (None if there are none)."""
    window: MissedWindow | None = None
    for segment in segments(revisions, start, end):
        for moment in segment.timetable.moments_between(segment.start, segment.end):
            if window is None:
                window = MissedWindow(segment.revision, moment.utc, moment.utc, 1, cause)
            else:
                window.add(moment)
    return window
