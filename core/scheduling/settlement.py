"""Settling an attempt from what the runtime observed (DESIGN §5, §6, §7).

One function decides, inside the pass's fenced transaction: classify the failure, then either
schedule a retry (the occurrence waits again, with ``not_before``) or settle the occurrence
with its disposition, count consecutive failures towards quarantine, and queue the delivery
of a success's output. A late duplicate of an exit is a no-op.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import apsw

from coven_core import events
from coven_core.events import EventKind
from coven_core.model import Disposition, FailureClass, Revision, RoutineState
from coven_core.notation import reasons
from coven_core.runtime.base import Exit
from coven_core.scheduling import chains, routines
from coven_core.scheduling.delivery import has_output
from coven_core.scheduling.occurrences import Stamp, settle
from coven_core.scheduling.retry import RetryPolicy, decide
from coven_core.store.codec import instant_text, maybe_instant_text
from coven_core.store.query import scalar
from coven_core.system import failpoints


@dataclass(frozen=True)
class _Attempt:
    id: str
    number: int
    occurrence_id: str
    routine_id: str
    revision: int
    probe: bool
    attempt_dir: str | None
    cancel_requested: bool
    failures: int  # the routine's consecutive failures before this settlement
    chained: bool = False  # some live routine runs after this one (a chain, DESIGN §14)


def _load(conn: apsw.Connection, attempt_id: str) -> _Attempt | None:
    row = conn.execute(
        "SELECT a.id, a.number, o.id, o.routine_id, o.revision, o.probe, a.attempt_dir, "
        "a.cancel_requested_at IS NOT NULL, r.consecutive_failures, "
        f"{chains.HAS_DOWNSTREAM_SQL} FROM attempts a "
        "JOIN occurrences o ON o.id = a.occurrence_id JOIN routines r ON r.id = o.routine_id "
        "WHERE a.id = ? AND a.state != 'settled'",
        (attempt_id,),
    ).fetchone()
    if row is None:
        return None
    aid, number, oid, rid, revision, probe, attempt_dir, cancel, failures, chained = row
    return _Attempt(
        aid, number, oid, rid, revision, bool(probe), attempt_dir, bool(cancel), failures,
        bool(chained),
    )  # fmt: skip


def settle_attempt(conn: apsw.Connection, exit_: Exit, stamp: Stamp) -> bool:
    """Record an attempt's end; False if it was already settled (a duplicate)."""
    attempt = _load(conn, exit_.attempt_id)
    if attempt is None:
        return False
    failure = exit_.classify()
    if attempt.cancel_requested and failure is FailureClass.RUNTIME_UNAVAILABLE:
        failure = FailureClass.CANCELLED  # stopped before the command started: nothing ran
    _record_attempt(conn, attempt, exit_, failure, stamp)
    if failure is None:
        _succeeded(conn, attempt, exit_, stamp)
        return True
    revision = _revision(conn, attempt)
    decision = decide(RetryPolicy.of(revision.spec), failure, attempt.number, attempt.occurrence_id,
                      stamp.now)  # fmt: skip
    if decision.retry and not attempt.cancel_requested:
        _schedule_retry(conn, attempt, failure, decision.not_before, stamp)
    else:
        _failed(conn, attempt, failure, exit_.describe(), decision.why, stamp)
    return True


def _revision(conn: apsw.Connection, attempt: _Attempt) -> Revision:
    by_number = {r.number: r for r in routines.revisions(conn, attempt.routine_id)}
    return by_number[attempt.revision]


def _record_attempt(
    conn: apsw.Connection,
    attempt: _Attempt,
    exit_: Exit,
    failure: FailureClass | None,
    stamp: Stamp,
) -> None:
    race = _race_note(attempt, exit_, failure)
    conn.execute(
        "UPDATE attempts SET state = 'settled', exited_at = ?, settled_at = ?, "
        f"settled_seq = {events.LAST_SEQ}, exit_code = ?, "
        "exit_signal = ?, failure_class = ?, message = ?, command_pid = coalesce(?, command_pid), "
        "race_note = ?, cancel_acknowledged_at = CASE WHEN ? THEN ? ELSE cancel_acknowledged_at "
        "END WHERE id = ?",
        (
            instant_text(exit_.ended_at), instant_text(stamp.now), exit_.exit_code,
            exit_.exit_signal, None if failure is None else failure.value, exit_.describe(),
            exit_.command_pid, race, exit_.cancelled, instant_text(stamp.now), attempt.id,
        ),
    )  # fmt: skip


def _race_note(attempt: _Attempt, exit_: Exit, failure: FailureClass | None) -> str | None:
    """Completion and cancellation race to one result; the loser is recorded (§7)."""
    if not attempt.cancel_requested or exit_.cancelled:
        return None
    if failure is None:
        return "cancel arrived after completion"
    return f"cancel arrived after it had already ended ({failure.value})"


def _succeeded(conn: apsw.Connection, attempt: _Attempt, exit_: Exit, stamp: Stamp) -> None:
    settle(conn, attempt.occurrence_id, attempt.routine_id, Disposition.SUCCEEDED, None, stamp)
    _trigger_downstream(conn, attempt, Disposition.SUCCEEDED, stamp)
    if attempt.failures and not attempt.probe:  # only a release resets a quarantine's count
        reset = "UPDATE routines SET consecutive_failures = 0 WHERE id = ?"
        conn.execute(reset, (attempt.routine_id,))
    if _has_output(attempt, exit_):
        conn.execute(
            "INSERT OR IGNORE INTO deliveries (occurrence_id, state) VALUES (?, 'pending')",
            (attempt.occurrence_id,),
        )


def _has_output(attempt: _Attempt, exit_: Exit) -> bool:
    """The journal's count when the runtime read one: no look at the folder from the
    scheduler's thread (bench_apscheduler, "drain": two stats an attempt)."""
    if exit_.stdout_bytes is not None:
        return exit_.stdout_bytes > 0
    return attempt.attempt_dir is not None and has_output(attempt.attempt_dir)


def _schedule_retry(
    conn: apsw.Connection,
    attempt: _Attempt,
    failure: FailureClass,
    not_before: object,
    stamp: Stamp,
) -> None:
    at = maybe_instant_text(not_before)  # type: ignore[arg-type]
    policy = RetryPolicy.of(_revision(conn, attempt).spec)
    conn.execute(
        "UPDATE attempts SET not_before = ?, policy = ? WHERE id = ?",
        (at, json.dumps(policy.to_json()), attempt.id),
    )
    conn.execute(
        "UPDATE occurrences SET state = 'planned', not_before = ? WHERE id = ?",
        (at, attempt.occurrence_id),
    )
    events.record(
        conn, stamp.now, EventKind.RETRY_SCHEDULED, routine_id=attempt.routine_id,
        occurrence_id=attempt.occurrence_id, failure=failure.value, not_before=at,
        attempt=attempt.number,
    )  # fmt: skip


_DISPOSITION = {
    FailureClass.CANCELLED: Disposition.CANCELLED,
    FailureClass.TIMED_OUT: Disposition.TIMED_OUT,
    FailureClass.AMBIGUOUS: Disposition.RECOVERY_REQUIRED,
}


def _failed(
    conn: apsw.Connection,
    attempt: _Attempt,
    failure: FailureClass,
    message: str | None,
    why: str,
    stamp: Stamp,
) -> None:
    disposition = _DISPOSITION.get(failure, Disposition.FAILED)
    reason = "; ".join(part for part in (f"{failure.value}: {message or 'failed'}", why) if part)
    conn.execute("UPDATE attempts SET exhausted = ? WHERE id = ?", (why or None, attempt.id))
    settle(conn, attempt.occurrence_id, attempt.routine_id, disposition, reason, stamp)
    _trigger_downstream(conn, attempt, disposition, stamp)
    if disposition is Disposition.RECOVERY_REQUIRED:
        _pause_for_decision(conn, attempt, stamp)
    elif disposition in (Disposition.FAILED, Disposition.TIMED_OUT) and not attempt.probe:
        _count_failure(conn, attempt, stamp)


def _trigger_downstream(
    conn: apsw.Connection, attempt: _Attempt, disposition: Disposition, stamp: Stamp
) -> None:
    """The routines chained after this one get their occurrence in this same transaction
    (DESIGN §14): a crash between the two writes loses both, and the settlement with them."""
    if attempt.chained:
        failpoints.hit("chain.before_plan")
        chains.trigger(conn, attempt.occurrence_id, attempt.routine_id, disposition, stamp)


def _pause_for_decision(conn: apsw.Connection, attempt: _Attempt, stamp: Stamp) -> None:
    """While a run awaits a person the routine plans no new work: it is paused, with a
    reason that says which run and where to decide."""
    routine = routines.by_id(conn, attempt.routine_id)
    if routine.state is not RoutineState.ACTIVE:
        return
    run_id = scalar(conn, "SELECT run_id FROM occurrences WHERE id = ?", (attempt.occurrence_id,))
    why = reasons.AWAITS_DECISION.format(run=run_id)
    routines.set_state(conn, routine.id, RoutineState.PAUSED, why, stamp.now)
    events.record(conn, stamp.now, EventKind.PAUSED, routine_id=routine.id, reason=why)


def _count_failure(conn: apsw.Connection, attempt: _Attempt, stamp: Stamp) -> None:
    """After K consecutive failed occurrences the routine is quarantined (§6)."""
    conn.execute(
        "UPDATE routines SET consecutive_failures = consecutive_failures + 1 WHERE id = ?",
        (attempt.routine_id,),
    )
    routine = routines.by_id(conn, attempt.routine_id)
    failures = int(
        scalar(
            conn, "SELECT consecutive_failures FROM routines WHERE id = ?", (attempt.routine_id,)
        )
    )
    limit = routines.current_revision(conn, routine).spec.quarantine_after
    if routine.state is RoutineState.ACTIVE and limit > 0 and failures >= limit:
        why = reasons.FAILED_IN_A_ROW.format(count=failures)
        routines.set_state(conn, routine.id, RoutineState.QUARANTINED, why, stamp.now)
        events.record(conn, stamp.now, EventKind.QUARANTINED, routine_id=routine.id, reason=why)
