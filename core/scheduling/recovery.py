"""Attempts an earlier scheduler left unfinished (DESIGN §8, §9).

Run once per leader generation, inside the pass's fenced transaction:

* ``claimed`` — no dispatch decision was committed, so nothing ran: plan it again;
* anything later — ask the runtime. A runner still alive (pid *and* start time) is adopted
  and settles when it ends, and so is an idempotent routine's command still alive whose
  runner is gone (its retry must not run beside it); otherwise
  its journal decides: an exit is settled as it was; no intent means nothing ran
  (``runtime_unavailable``, retried within bounds); intent without an outcome is
  ``ambiguous`` and waits for a person (or an idempotent routine's retry).
"""

from __future__ import annotations

import apsw

from coven_core import events
from coven_core.events import EventKind
from coven_core.model import FailureClass
from coven_core.runtime.base import Runtime, Unfinished
from coven_core.scheduling.occurrences import Stamp
from coven_core.scheduling.settlement import settle_attempt
from coven_core.store.codec import instant_text
from coven_core.store.query import one


def unfinished(conn: apsw.Connection, generation: int) -> list[Unfinished]:
    rows = conn.execute(
        "SELECT a.id, a.state, a.attempt_dir, a.runner_pid, a.runner_start, a.boot_id, "
        "v.idempotent, a.timeout_seconds FROM attempts a "
        "JOIN occurrences o ON o.id = a.occurrence_id "
        "JOIN revisions v ON v.routine_id = o.routine_id AND v.number = o.revision "
        "WHERE a.state != 'settled' AND a.generation < ? ORDER BY a.id",
        (generation,),
    )
    return [
        Unfinished(attempt_id, state, directory, pid, start, boot, bool(idempotent), timeout)
        for attempt_id, state, directory, pid, start, boot, idempotent, timeout in rows
    ]


def recover(conn: apsw.Connection, attempt: Unfinished, runtime: Runtime, stamp: Stamp) -> None:
    if attempt.state == "claimed":
        _replan(conn, attempt, stamp)
        return
    located = runtime.locate(attempt)
    if located != attempt:  # a crash right after the start: record what the evidence shows
        conn.execute(
            "UPDATE attempts SET attempt_dir = ?, runner_pid = ?, runner_start = ?, boot_id = ? "
            "WHERE id = ?",
            (
                located.attempt_dir,
                located.runner_pid,
                located.runner_start,
                located.boot_id,
                attempt.attempt_id,
            ),
        )
        attempt = located
    exit_ = runtime.recover(attempt, stamp.now)
    if exit_ is not None:
        settle_attempt(conn, exit_, stamp)
        return
    conn.execute(  # adopted: this generation owns it now
        "UPDATE attempts SET generation = ? WHERE id = ?", (stamp.generation, attempt.attempt_id)
    )
    occurrence_id, routine_id = one(
        conn,
        "SELECT o.id, o.routine_id FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id "
        "WHERE a.id = ?",
        (attempt.attempt_id,),
    )
    events.record(  # with its run, whose story says so
        conn, stamp.now, EventKind.ADOPTED, routine_id=routine_id, occurrence_id=occurrence_id,
        attempt_id=attempt.attempt_id,
    )  # fmt: skip


def _replan(conn: apsw.Connection, attempt: Unfinished, stamp: Stamp) -> None:
    conn.execute(
        f"UPDATE attempts SET state = 'settled', settled_at = ?, settled_seq = {events.LAST_SEQ}, "
        "failure_class = ?, "
        "message = 'never dispatched: the scheduler stopped first' WHERE id = ?",
        (instant_text(stamp.now), FailureClass.RUNTIME_UNAVAILABLE.value, attempt.attempt_id),
    )
    conn.execute(
        "UPDATE occurrences SET state = 'planned' WHERE id = "
        "(SELECT occurrence_id FROM attempts WHERE id = ?)",
        (attempt.attempt_id,),
    )
