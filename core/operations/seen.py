"""A person has looked at a failed run: ``seen_at`` on its occurrence (issue #21).

The tray counts failed and timed-out runs nobody has looked at yet; opening such a run (its
detail, its notification) marks it seen, and "mark all as read" marks every one. Seen is a
reading receipt, not a lifecycle change: it decides nothing about any run, so it is neither
audited nor a reason to wake the scheduler (:meth:`coven_core.operator.Operator.mark_seen`
says why). Only a settled run can be seen; a person's retry makes it unseen again.
"""

from __future__ import annotations

from datetime import datetime

import apsw

from coven_core.errors import ValidationError
from coven_core.notation.i18n import _
from coven_core.store.codec import instant_text
from coven_core.store.query import scalar

#: The dispositions of a failure: the tray counts one until it is seen, and its sentence ends
#: with what its command said last on stderr (``views.runs``).
FAILURES = ("failed", "timed_out")
#: The failures the tray counts until seen; the index ``occurrences_unseen`` is on exactly this
#: text ("seen_at IS NULL AND (disposition = 'failed' OR disposition = 'timed_out')").
UNSEEN_FAILURE = "seen_at IS NULL AND ({})".format(
    " OR ".join(f"disposition = '{failure}'" for failure in FAILURES)
)


def mark_seen(conn: apsw.Connection, run_id: str, now: datetime) -> bool:
    """Mark a settled run seen; True if it was not yet. A run still going, or waiting for a
    decision, is not marked: its ending would otherwise count as seen before anyone saw it."""
    row = conn.execute(
        "SELECT state, disposition, seen_at FROM occurrences WHERE run_id = ?1 OR id = ?1",
        (run_id,),
    ).fetchone()
    if row is None:
        raise ValidationError(_("no run {run!r} (see: coven runs)").format(run=run_id))
    state, disposition, seen_at = row
    if state != "settled" or disposition == "recovery_required" or seen_at is not None:
        return False
    conn.execute(
        "UPDATE occurrences SET seen_at = ?2 WHERE (run_id = ?1 OR id = ?1) AND seen_at IS NULL",
        (run_id, instant_text(now)),
    )
    return conn.changes() == 1


def mark_all_seen(conn: apsw.Connection, now: datetime) -> int:
    """Mark every unseen failure seen; returns how many."""
    conn.execute(f"UPDATE occurrences SET seen_at = ? WHERE {UNSEEN_FAILURE}", (instant_text(now),))
    return int(conn.changes())


def unseen_failures(conn: apsw.Connection) -> int:
    """How many failed or timed-out runs nobody has looked at (by ``occurrences_unseen``)."""
    return int(scalar(conn, f"SELECT count(*) FROM occurrences WHERE {UNSEEN_FAILURE}"))
