"""A person decides what happened to a run the machine cannot know about (DESIGN §5).

The decision — succeeded, failed, or retry — needs a reason, and records the evidence it was
based on (the item as shown, and its digest). The occurrence becomes ``reconciled`` with the
chosen outcome; ``retry`` is allowed only when the person states they verified there was no
side effect, and starts a new attempt. The routine stays paused until a person resumes it.
Every decision is refused while the run's runner or command still lives (pid and start
time, as adoption checks): ``coven stop`` first (:mod:`coven_core.operations.stopping`).
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from datetime import datetime

import apsw

from coven_core import events
from coven_core.errors import Conflict, ValidationError
from coven_core.events import EventKind
from coven_core.model import Disposition, RoutineState
from coven_core.notation import reasons
from coven_core.notation.i18n import _
from coven_core.operations import stopping
from coven_core.operations.runs import operator_name
from coven_core.scheduling import routines
from coven_core.scheduling.occurrences import operator_stamp, settle
from coven_core.store.codec import instant_text
from coven_core.views.attention import Item, item_for_run


class Outcome(enum.StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    RETRY = "retry"


@dataclass(frozen=True)
class Decision:
    run_id: str
    outcome: Outcome
    reason: str
    evidence_digest: str
    routine: str
    routine_state: str

    def to_json(self) -> dict[str, str]:
        return {
            "run_id": self.run_id,
            "outcome": self.outcome.value,
            "reason": self.reason,
            "evidence_digest": self.evidence_digest,
            "routine": self.routine,
            "routine_state": self.routine_state,
        }


def reconcile(
    conn: apsw.Connection,
    run_id: str,
    outcome: Outcome,
    reason: str,
    now: datetime,
    *,
    verified_no_side_effect: bool = False,
    seen_digest: str | None = None,
) -> Decision:
    """Record a person's decision on a run awaiting one, inside the caller's transaction."""
    if not reason.strip():
        raise ValidationError(_("a reconciliation needs a reason (--reason TEXT)"))
    item = _awaiting(conn, run_id, now)
    stopping.refuse_while_alive(conn, run_id, item.occurrence_id)
    if seen_digest is not None and seen_digest != item.digest():
        raise Conflict(
            _("the evidence for run {run} changed since it was shown; look again").format(
                run=run_id
            )
        )
    if outcome is Outcome.RETRY and not verified_no_side_effect:
        raise ValidationError(
            _("retry only after you verified it had no side effect (--verified-no-side-effect)")
        )
    _record(conn, item, outcome, reason, now)
    _apply(conn, item, outcome, reason, now)
    state = _keep_paused(conn, item, now)
    return Decision(run_id, outcome, reason, item.digest(), item.routine, state.value)


def _awaiting(conn: apsw.Connection, run_id: str, now: datetime) -> Item:
    row = conn.execute(
        "SELECT disposition, state FROM occurrences WHERE run_id = ?", (run_id,)
    ).fetchone()
    if row is None:
        raise ValidationError(_("no run {run!r} (see: coven attention)").format(run=run_id))
    if row[0] != Disposition.RECOVERY_REQUIRED.value:
        raise Conflict(
            _("run {run} is {state}, not awaiting a decision").format(
                run=run_id, state=row[0] or row[1]
            )
        )
    item = item_for_run(conn, run_id, now)
    assert item is not None
    return item


def _record(
    conn: apsw.Connection, item: Item, outcome: Outcome, reason: str, now: datetime
) -> None:
    conn.execute(
        "INSERT INTO reconciliations (occurrence_id, run_id, outcome, reason, decided_by, "
        "decided_at, evidence_digest, evidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            item.occurrence_id, item.run_id, outcome.value, reason, operator_name(),
            instant_text(now), item.digest(), json.dumps(item.to_json(), default=str),
        ),
    )  # fmt: skip


def _apply(conn: apsw.Connection, item: Item, outcome: Outcome, reason: str, now: datetime) -> None:
    stamp = operator_stamp(conn, now)
    if outcome is Outcome.RETRY:
        conn.execute(
            "UPDATE occurrences SET state = 'planned', disposition = NULL, reason = NULL, "
            "settled_at = NULL, not_before = NULL, forced = 1 WHERE id = ?",
            (item.occurrence_id,),
        )
        events.record(conn, now, EventKind.RECONCILED, routine_id=item.routine_id,
                      occurrence_id=item.occurrence_id, outcome=outcome.value)  # fmt: skip
        return
    why = reasons.DECIDED_AS.format(outcome=outcome.value, who=operator_name(), note=reason)
    settle(conn, item.occurrence_id, item.routine_id, Disposition.RECONCILED, why, stamp)
    conn.execute(
        "UPDATE occurrences SET reconciled_as = ? WHERE id = ?",
        (outcome.value, item.occurrence_id),
    )


def _keep_paused(conn: apsw.Connection, item: Item, now: datetime) -> RoutineState:
    """DESIGN §5: after a decision the routine stays paused until a person resumes it
    (a quarantined or deleted routine keeps that state); returns the routine's state."""
    routine = routines.by_id(conn, item.routine_id)
    if routine.state not in (RoutineState.ACTIVE, RoutineState.PAUSED):
        return routine.state
    why = reasons.KEPT_PAUSED.format(run=item.run_id)
    routines.set_state(conn, routine.id, RoutineState.PAUSED, why, now)
    return RoutineState.PAUSED
