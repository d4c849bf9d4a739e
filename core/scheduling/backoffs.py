"""Backoffs are elapsed time (DESIGN §3): a retry told to wait ten minutes waits ten minutes
of the machine's time, whatever happens to the wall clock meanwhile. The engine stores a
backoff as the wall instant it ends (``not_before``), so when a pass finds that the wall
clock was set, every backoff still waiting moves by the same step. Without this, a clock set
back six hours made a retry that had already served its backoff — and waited only for a free
slot — wait those six hours again (simulation seed 2048113717, issue 18)."""

from __future__ import annotations

from datetime import timedelta

import apsw

from coven_core.store.codec import instant_from, instant_text

#: What waits on a ``not_before``: a retry's occurrence, and a result's delivery.
_WAITING = (
    ("occurrences", "id", "state = 'planned'"),
    ("deliveries", "occurrence_id", "state = 'pending' AND state != 'delivered'"),  # its index
)


def follow_the_clock(conn: apsw.Connection, step: timedelta) -> int:
    """Move every waiting backoff by the wall clock's ``step``; how many moved."""
    moved = 0
    for table, key, waiting in _WAITING:
        rows = conn.execute(
            f"SELECT {key}, not_before FROM {table} WHERE {waiting} AND not_before IS NOT NULL"
        ).fetchall()
        for row_id, at in rows:
            conn.execute(
                f"UPDATE {table} SET not_before = ? WHERE {key} = ?",
                (instant_text(instant_from(str(at)) + step), row_id),
            )
        moved += len(rows)
    return moved
