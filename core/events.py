"""The event log: every change is recorded in the same transaction as the change itself, with
a sequence number, so a reader (the GUI bridge, a second process) can follow it and catch up
after a restart."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import apsw

from coven_core.store.codec import instant_from, instant_text


class EventKind(enum.StrEnum):
    ROUTINE_ADDED = "routine_added"
    ROUTINE_EDITED = "routine_edited"
    ROUTINE_DELETED = "routine_deleted"
    PAUSED = "paused"
    RESUMED = "resumed"
    PLANNED = "planned"
    SKIPPED = "skipped"
    CLAIMED = "claimed"
    STARTED = "started"
    SETTLED = "settled"
    REPLANNED = "replanned"  # a backward clock jump was seen
    SLEPT = "slept"  # the machine was asleep (an interval)
    SLEEPING = "sleeping"  # the machine is going to sleep, with the runs in flight (§14)
    CLOCK_JUMPED = "clock_jumped"
    DOWNTIME = "downtime"  # the scheduler was not running (an interval)
    LEADER_CHANGED = "leader_changed"
    SHUTDOWN = "shutdown"
    RETRY_SCHEDULED = "retry_scheduled"
    QUARANTINED = "quarantined"
    RELEASED = "released"
    ADOPTED = "adopted"
    CANCEL_REQUESTED = "cancel_requested"
    CANCEL_SENT = "cancel_sent"
    MANUAL_RUN = "manual_run"
    DELIVERED = "delivered"
    DELIVERY_FAILED = "delivery_failed"
    RECONCILED = "reconciled"
    TIMEZONE_CHANGED = "timezone_changed"
    ROUTINE_BROKEN = "routine_broken"  # its revision could not be loaded; it plans nothing
    OVERRUN = "overrun"  # a run far longer than its routine usually takes (once an attempt)
    STOPPED = "stopped"  # a person stopped a run's live processes (coven stop)


@dataclass(frozen=True)
class Event:
    seq: int
    at: datetime
    kind: EventKind
    routine_id: str | None
    occurrence_id: str | None
    data: dict[str, Any]


LAST_SEQ = "(SELECT seq FROM sqlite_sequence WHERE name = 'events')"
"""SQL for the newest event's sequence number, pruned events included (AUTOINCREMENT never
reuses one). It only grows, whatever the wall clock does: stamped on a row in the transaction
that changes it, it orders changes as they happened (an attempt's claim and settlement)."""


def record(
    conn: apsw.Connection,
    at: datetime,
    kind: EventKind,
    *,
    routine_id: str | None = None,
    occurrence_id: str | None = None,
    **data: Any,
) -> None:
    conn.execute(
        "INSERT INTO events (at, kind, routine_id, occurrence_id, data) VALUES (?, ?, ?, ?, ?)",
        (instant_text(at), kind, routine_id, occurrence_id, _json(data)),  # a StrEnum: its text
    )


def _json(data: dict[str, Any]) -> str:
    return _encode(data) if data else "{}"  # most events carry no data


# ``json.dumps(data, default=str)`` builds a new encoder on every call (any keyword does);
# this is the same encoder, built once: a pass records several events.
_encode = json.JSONEncoder(default=str).encode


def since(conn: apsw.Connection, seq: int, limit: int = 1000) -> list[Event]:
    """Events after ``seq``, oldest first (how a follower catches up)."""
    rows = conn.execute(
        "SELECT seq, at, kind, routine_id, occurrence_id, data FROM events "
        "WHERE seq > ? ORDER BY seq LIMIT ?",
        (seq, limit),
    )
    return [
        Event(s, instant_from(at), EventKind(kind), rid, oid, json.loads(data))
        for s, at, kind, rid, oid, data in rows
    ]
