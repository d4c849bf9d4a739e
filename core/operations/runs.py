"""Operator commands on runs: run now, cancel, retry (DESIGN §5, §6, §7).

Each runs in one write transaction and records its event there; the caller wakes the
scheduler afterwards. ``BEGIN IMMEDIATE`` serialises concurrent callers, so five callers
with one idempotency key all get the same run.
"""

from __future__ import annotations

import getpass
import secrets
from dataclasses import dataclass
from datetime import datetime

import apsw

from coven_core import events
from coven_core.errors import Conflict as Conflict  # re-exported: its old home
from coven_core.errors import ValidationError
from coven_core.events import EventKind
from coven_core.model import (
    Disposition,
    FailureClass,
    OccurrenceKind,
    Routine,
    RoutineState,
)
from coven_core.notation.i18n import N_, _
from coven_core.scheduling import chains, ids, routines
from coven_core.scheduling.occurrences import operator_stamp, refuse_while_awaiting, settle
from coven_core.store.codec import instant_text
from coven_core.tz.binding import at_instant


@dataclass(frozen=True)
class RunRef:
    run_id: str
    occurrence_id: str
    state: str
    disposition: str | None = None
    already_ended: bool = False  # a cancel found it settled and changed nothing
    already_waiting: bool = False  # run-now found this manual run not yet started: no other
    key: str | None = None  # a manual run's idempotency key (given, or made by Coven)

    def to_json(self) -> dict[str, str | None]:
        return {
            "run_id": self.run_id,
            "occurrence_id": self.occurrence_id,
            "state": self.state,
            "disposition": self.disposition,
        }


def operator_name() -> str:
    """Who is acting: the OS user."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


# -- run now ----------------------------------------------------------------------------------
def run_now(
    conn: apsw.Connection,
    name: str,
    key: str | None,
    now: datetime,
    *,
    probe: bool = False,
    join_waiting: bool = False,
) -> RunRef:
    """A manual occurrence now. The same key returns the same run; the same key for another
    routine is a conflict. ``join_waiting`` (a window's or the tray's Run now): while a
    manual run of the routine has not started yet (it waits behind a running one), that run,
    so that a second click makes no second run of the same command."""
    routine = routines.by_name(conn, name)
    if key is not None and not key.strip():
        raise ValidationError(_("an idempotency key must not be empty"))
    if key is not None:
        existing = _by_key(conn, key)
        if existing is not None:
            return _same_routine(existing, routine, key)
    _may_run_now(routine, probe)
    refuse_while_awaiting(conn, routine.id, routine.name, "probe" if probe else "run")
    waiting = _manual_waiting(conn, routine.id, probe) if join_waiting and key is None else None
    return waiting or _insert_manual(conn, routine, key or secrets.token_hex(8), now, probe)


def _manual_waiting(conn: apsw.Connection, routine_id: str, probe: bool) -> RunRef | None:
    # A person's run has its id from the start, so it is among the few planned rows with one:
    # through the routine's history, SQLite read every occurrence the routine ever had.
    row = conn.execute(
        "SELECT run_id, id, manual_key FROM occurrences INDEXED BY occurrences_between "
        "WHERE routine_id = ? AND kind = ? AND state = 'planned' AND run_id IS NOT NULL "
        "AND probe = ? ORDER BY scheduled_utc LIMIT 1",
        (routine_id, OccurrenceKind.MANUAL.value, int(probe)),
    ).fetchone()
    if row is None:
        return None
    return RunRef(row[0], row[1], "planned", key=row[2], already_waiting=True)


def _by_key(conn: apsw.Connection, key: str) -> tuple[RunRef, str] | None:
    row = conn.execute(
        "SELECT run_id, id, state, disposition, routine_id FROM occurrences WHERE manual_key = ?",
        (key,),
    ).fetchone()
    return None if row is None else (RunRef(row[0], row[1], row[2], row[3], key=key), row[4])


def _same_routine(existing: tuple[RunRef, str], routine: Routine, key: str) -> RunRef:
    ref, routine_id = existing
    if routine_id != routine.id:
        raise Conflict(
            _("key {key!r} was already used for another routine's run ({run})").format(
                key=key, run=ref.run_id
            )
        )
    return ref


def _may_run_now(routine: Routine, probe: bool) -> None:
    if probe and routine.state is not RoutineState.QUARANTINED:
        raise ValidationError(
            _("routine {name!r} is not quarantined: use run-now").format(name=routine.name)
        )
    if routine.state is RoutineState.QUARANTINED and not probe:
        raise ValidationError(
            _(
                "routine {name!r} is quarantined ({why}): try one attempt with 'coven probe "
                "{name}', or release it with 'coven release {name}'"
            ).format(name=routine.name, why=routine.state_reason)
        )


def _insert_manual(
    conn: apsw.Connection, routine: Routine, key: str, now: datetime, probe: bool
) -> RunRef:
    revision = routines.current_revision(conn, routine)
    moment = at_instant(now, routines.timetable(revision).zone)
    oid, run_id = ids.manual_id(routine.id, key), ids.new_run_id()
    conn.execute(
        "INSERT INTO occurrences (id, routine_id, revision, kind, scheduled_utc, local_time, "
        "utc_offset, fold, local_kind, zone, tzdb_version, state, run_id, manual_key, probe, "
        "planned_at, generation) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'planned', ?, ?, ?, ?, "
        "coalesce((SELECT generation FROM lease WHERE id = 1), 0))",
        (
            oid, routine.id, revision.number, OccurrenceKind.MANUAL.value, instant_text(now),
            moment.local.isoformat(), int(moment.offset.total_seconds()), moment.fold,
            moment.kind.value, revision.spec.timezone, revision.tzdb_version, run_id, key,
            int(probe), instant_text(now),
        ),
    )  # fmt: skip
    events.record(
        conn, now, EventKind.MANUAL_RUN, routine_id=routine.id, occurrence_id=oid,
        run_id=run_id, probe=probe, by=operator_name(),
    )  # fmt: skip
    return RunRef(run_id, oid, "planned", key=key)


# -- cancel -----------------------------------------------------------------------------------
def cancel(
    conn: apsw.Connection, run_id: str, reason: str | None, now: datetime, scope: str = "run"
) -> RunRef:
    """Request the cancellation of one run, fenced to its current attempt. A run that has
    already ended is left as it is and returned with its outcome: a cancel repeated (a retry
    after a lost answer, a second click) is not an error."""
    ref, routine_id = _run(conn, run_id)
    if ref.state == "planned":
        ran = _last_failure(conn, ref.occurrence_id) is not None
        waited = "while waiting to retry" if ran else "before it started"
        why = f"cancelled {waited}{': ' + reason if reason else ''}"
        stamp = operator_stamp(conn, now)
        settle(conn, ref.occurrence_id, routine_id, Disposition.CANCELLED, why, stamp)
        if ran:  # its run ended, here: the routines after it that wait for any end (§14)
            chains.trigger(conn, ref.occurrence_id, routine_id, Disposition.CANCELLED, stamp)
        return RunRef(ref.run_id, ref.occurrence_id, "settled", Disposition.CANCELLED.value)
    if ref.state == "settled":
        return RunRef(ref.run_id, ref.occurrence_id, ref.state, ref.disposition, True)
    _request_on_attempt(conn, ref, scope, reason, now)
    events.record(
        conn, now, EventKind.CANCEL_REQUESTED, routine_id=routine_id,
        occurrence_id=ref.occurrence_id, run_id=run_id, by=operator_name(), reason=reason,
    )  # fmt: skip
    return ref


def _request_on_attempt(
    conn: apsw.Connection, ref: RunRef, scope: str, reason: str | None, now: datetime
) -> None:
    conn.execute(
        "UPDATE attempts SET cancel_requested_at = ?, cancel_by = ?, cancel_scope = ?, "
        "cancel_reason = ? WHERE id = (SELECT id FROM attempts WHERE occurrence_id = ? "
        "ORDER BY number DESC LIMIT 1) AND cancel_requested_at IS NULL",
        (instant_text(now), operator_name(), scope, reason, ref.occurrence_id),
    )


def active_runs(conn: apsw.Connection, routine_id: str) -> list[str]:
    rows = conn.execute(
        "SELECT run_id FROM occurrences WHERE routine_id = ? AND run_id IS NOT NULL "
        "AND state IN ('planned', 'claimed', 'running') ORDER BY scheduled_utc",
        (routine_id,),
    )
    return [row[0] for row in rows]


def _run(conn: apsw.Connection, run_id: str) -> tuple[RunRef, str]:
    row = conn.execute(
        "SELECT run_id, id, state, disposition, routine_id FROM occurrences WHERE run_id = ?",
        (run_id,),
    ).fetchone()
    if row is None:
        raise ValidationError(_("no run {run!r} (see: coven history NAME)").format(run=run_id))
    return RunRef(*row[:4]), row[4]


# -- retry ------------------------------------------------------------------------------------
_RETRYABLE = {
    FailureClass.ACTION_FAILED,
    FailureClass.RUNTIME_UNAVAILABLE,
    FailureClass.TIMED_OUT,
    FailureClass.CANCELLED,
}


def retry(conn: apsw.Connection, run_id: str, now: datetime) -> RunRef:
    """A new attempt for an explicitly retryable failed run."""
    ref, routine_id = _run(conn, run_id)
    if _redeliver(conn, ref, routine_id, now):
        return ref  # it succeeded; only its output's delivery is tried again (§6)
    _check_retryable(conn, ref, routine_id)
    conn.execute(  # forced: a person asked for this attempt, so a pause does not skip it;
        # unseen again: if the retry fails too, the tray counts it anew
        "UPDATE occurrences SET state = 'planned', disposition = NULL, reason = NULL, "
        "settled_at = NULL, not_before = NULL, forced = 1, seen_at = NULL WHERE id = ?",
        (ref.occurrence_id,),
    )
    events.record(conn, now, EventKind.RETRY_SCHEDULED, routine_id=routine_id,
                  occurrence_id=ref.occurrence_id, by=operator_name(), manual=True)  # fmt: skip
    return RunRef(ref.run_id, ref.occurrence_id, "planned")


def retry_refusal(conn: apsw.Connection, run_id: str) -> str | None:
    """Why :func:`retry` would refuse this run now, in its words; None when it would not.
    A window asks this before it offers Retry (it changes nothing)."""
    ref, routine_id = _run(conn, run_id)
    try:
        _check_retryable(conn, ref, routine_id)
    except Conflict as refusal:
        return str(refusal)
    return None


def _check_retryable(conn: apsw.Connection, ref: RunRef, routine_id: str) -> None:
    """Raises Conflict, saying why, unless a new attempt of this run may be planned."""
    run_id, failure = ref.run_id, _last_failure(conn, ref.occurrence_id)
    if ref.disposition == Disposition.RECOVERY_REQUIRED.value or failure is FailureClass.AMBIGUOUS:
        raise Conflict(
            _(
                "run {run} may have run (outcome unknown): decide with 'coven reconcile {run}'"
            ).format(run=run_id)
        )
    routine = routines.by_id(conn, routine_id)
    name = routine.name
    if routine.state is RoutineState.DELETED:  # planned again, it would only be skipped, and
        raise Conflict(  # its failure overwritten by that skip
            _("run {run} belongs to the deleted routine {name}: it never runs again").format(
                run=run_id, name=name
            )
        )
    never_started = failure is None and ref.disposition == Disposition.CANCELLED.value
    if ref.state != "settled" or not (failure in _RETRYABLE or never_started):
        raise Conflict(
            _("run {run} {why}").format(run=run_id, why=_why_not_retryable(ref, failure, name))
        )
    refuse_while_awaiting(conn, routine_id, name, "retry a run of")


#: Failure classes a person cannot retry either: what to tell them instead.
_NOT_BY_HAND = {
    FailureClass.VALIDATION: N_("the routine itself is invalid, so another attempt would fail "
                                "the same way: fix the routine, then start a new run with "
                                "'coven run-now {name}'"),
    FailureClass.REFUSED: N_("the system refused it (not permitted): once that is settled, "
                             "start a new run with 'coven run-now {name}'"),
}  # fmt: skip
_NEVER_BY_HAND = N_("that failure class is never retried")


def _why_not_retryable(ref: RunRef, failure: FailureClass | None, name: str) -> str:
    """The true reason a retry is refused (it said "run X is failed: only a failed … run can
    be retried" for a run that failed validation)."""
    if ref.state == "planned":
        return _("already waits for its next attempt") if failure else _("has not started yet")
    if ref.state != "settled":
        return _("has not ended yet (it is {state})").format(state=ref.state)
    if failure is not None and ref.disposition == Disposition.FAILED.value:
        advice = _(_NOT_BY_HAND.get(failure, _NEVER_BY_HAND))
        return _("failed with a {failure} failure: {advice}").format(
            failure=failure.value, advice=advice.format(name=name)
        )
    return _(
        "already ended ({disposition}): only a failed, timed-out or cancelled run can be retried"
    ).format(disposition=ref.disposition)


def _redeliver(conn: apsw.Connection, ref: RunRef, routine_id: str, now: datetime) -> bool:
    """A success whose delivery gave up: deliver again (never run the action again)."""
    conn.execute(
        "UPDATE deliveries SET state = 'pending', not_before = NULL "
        "WHERE occurrence_id = ? AND state = 'failed'",
        (ref.occurrence_id,),
    )
    if conn.changes() == 0:
        return False
    events.record(conn, now, EventKind.RETRY_SCHEDULED, routine_id=routine_id,
                  occurrence_id=ref.occurrence_id, by=operator_name(), delivery=True)  # fmt: skip
    return True


def _last_failure(conn: apsw.Connection, occurrence_id: str) -> FailureClass | None:
    row = conn.execute(
        "SELECT failure_class FROM attempts WHERE occurrence_id = ? ORDER BY number DESC LIMIT 1",
        (occurrence_id,),
    ).fetchone()
    return None if row is None or row[0] is None else FailureClass(row[0])


def cancel_routine(
    conn: apsw.Connection, name: str, reason: str | None, now: datetime
) -> list[RunRef]:
    """Cancel every active run of a routine (scope ``routine`` on each request)."""
    routine = routines.by_name(conn, name)
    return [
        cancel(conn, run_id, reason, now, scope="routine")
        for run_id in active_runs(conn, routine.id)
    ]
