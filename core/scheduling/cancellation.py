"""Cancellation: requested → acknowledged → terminal (DESIGN §7).

A request is recorded on the exact attempt it is for (who, when, scope, reason). The leader
sends it to the runtime on its next pass; the runner acknowledges it in its journal and stops
the whole process group. Whichever of completion and cancellation commits first wins; the
loser is recorded on the attempt (``race_note``).
"""

from __future__ import annotations

from collections.abc import Collection

import apsw

from coven_core import events
from coven_core.events import EventKind
from coven_core.scheduling.occurrences import Stamp


def to_send(conn: apsw.Connection, generation: int, already: Collection[str]) -> list[str]:
    """Attempts of this generation with a cancel request not yet sent to the runtime."""
    rows = conn.execute(f"SELECT id FROM {_REQUESTED}", {"generation": generation})
    return [row[0] for row in rows if row[0] not in already]


_REQUESTED = (
    "attempts WHERE cancel_requested_at IS NOT NULL AND state != 'settled' "
    "AND generation = :generation"
)
ANY_REQUESTED = f"EXISTS (SELECT 1 FROM {_REQUESTED})"
"""Whether :func:`to_send` may find anything: a pass asks this first
(:mod:`coven_core.scheduling.agenda`)."""


def record_sent(conn: apsw.Connection, attempt_ids: list[str], stamp: Stamp) -> None:
    for attempt_id in attempt_ids:
        events.record(conn, stamp.now, EventKind.CANCEL_SENT, attempt_id=attempt_id)
