"""Quarantined routines and why: the failures that tripped the circuit breaker (DESIGN §6).

A routine is quarantined by the breaker (its last K occurrences failed) or by a person; it
plans nothing until released. What a person needs to decide is the reason, since when, and
the failures themselves — when, their class and message — newest first.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import apsw

from coven_core.model import RoutineState
from coven_core.store.codec import instant_from, maybe_instant_from
from coven_core.store.store import Store
from coven_core.views.attention import output_tail

#: How many of a routine's latest failures are shown.
FAILURES_SHOWN = 10


@dataclass(frozen=True)
class Failure:
    """One failed (or timed-out) occurrence, with its last attempt's classification."""

    occurrence_id: str
    run_id: str | None
    scheduled_utc: datetime
    settled_at: datetime | None
    disposition: str  # failed | timed_out
    failure_class: str | None
    message: str | None
    attempts: int
    output: str = ""  # the last lines the command wrote (stderr, else stdout)


@dataclass(frozen=True)
class Quarantined:
    routine_id: str
    name: str
    reason: str | None
    since: datetime
    consecutive_failures: int
    failures: list[Failure]  # newest first, at most FAILURES_SHOWN


def quarantined(store: Store, limit: int = FAILURES_SHOWN) -> list[Quarantined]:
    """Every quarantined routine, by name, with its latest failures."""
    with store.read() as conn:
        rows = list(
            conn.execute(
                "SELECT id, name, state_reason, state_changed_at, consecutive_failures "
                "FROM routines WHERE state = ? ORDER BY name",
                (RoutineState.QUARANTINED.value,),
            )
        )
        return [
            Quarantined(rid, name, reason, instant_from(since), count, failures(conn, rid, limit))
            for rid, name, reason, since, count in rows
        ]


def failures(conn: apsw.Connection, routine_id: str, limit: int) -> list[Failure]:
    rows = conn.execute(
        "SELECT o.id, o.run_id, o.scheduled_utc, o.settled_at, o.disposition, a.failure_class, "
        "coalesce(a.message, o.reason), (SELECT count(*) FROM attempts n "
        "WHERE n.occurrence_id = o.id), a.attempt_dir FROM occurrences o LEFT JOIN attempts a "
        "ON a.occurrence_id = o.id AND a.number = (SELECT max(number) FROM attempts m "
        "WHERE m.occurrence_id = o.id) WHERE o.routine_id = ? "
        "AND o.disposition IN ('failed', 'timed_out') "
        "ORDER BY o.settled_at DESC, o.scheduled_utc DESC LIMIT ?",
        (routine_id, limit),
    )
    return [
        Failure(oid, run, instant_from(at), maybe_instant_from(settled), disposition, failure,
                message, attempts, last_lines(Path(folder) if folder else None))
        for oid, run, at, settled, disposition, failure, message, attempts, folder in rows
    ]  # fmt: skip


def last_lines(directory: Path | None, count: int = 3) -> str:
    """What the command said last: the end of stderr, else of stdout (retention may have
    removed the folder of an old attempt: then nothing)."""
    for stream in ("stderr", "stdout"):
        lines = [line for line in output_tail(directory, stream).splitlines() if line.strip()]
        if lines:
            return "\n".join(lines[-count:])
    return ""
