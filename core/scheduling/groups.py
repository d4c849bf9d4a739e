"""Exclusion groups: at most one routine of a group runs at a time (DESIGN §14).

A claim asks whether another member holds the group: a run of it claimed or running, or —
for a first attempt — between two attempts, as a routine's own overlap rule counts it (a
retry never waits for another retry, so two members never wait for each other).
"""

from __future__ import annotations

import apsw

from coven_core.model import OccurrenceKind, OverlapPolicy, Revision, SkipReason
from coven_core.scheduling import occurrences
from coven_core.scheduling.occurrences import Stamp, Waiting


def _group_members(index: str, where: str) -> str:
    return (
        f"SELECT o.run_id, r.name FROM occurrences o INDEXED BY {index} JOIN routines r "
        "ON r.id = o.routine_id JOIN revisions v ON v.routine_id = o.routine_id AND "
        f"v.number = o.revision WHERE {where} AND o.routine_id != :routine "
        "AND v.group_name = :group LIMIT 1"
    )


# Another member's run, claimed or running; or between two attempts (a retry not yet claimed).
_GROUP_RUNNING = _group_members("occurrences_active", "o.state IN ('claimed', 'running')")
_GROUP_BETWEEN = _group_members(
    "occurrences_between",
    "o.state = 'planned' AND o.run_id IS NOT NULL "
    "AND EXISTS (SELECT 1 FROM attempts a WHERE a.occurrence_id = o.id)",
)


def busy(conn: apsw.Connection, item: Waiting, revision: Revision, stamp: Stamp) -> bool:
    """Another routine of the group holds it (a run claimed or running; for a first attempt,
    also a run between two attempts — a retry never waits for another retry): a moment
    follows its overlap policy (``group_busy``, with the holder), a run already begun or a
    person's run waits its turn (DESIGN §14)."""
    holder = _holder(conn, item, revision.spec.group or "")
    if holder is None:
        return False
    if item.kind is not OccurrenceKind.MANUAL and not item.attempts:
        inputs = {"group": revision.spec.group, "holder": holder[1], "holder_run": holder[0]}
        waits = revision.spec.overlap is OverlapPolicy.QUEUE_ONE
        if not (waits and occurrences.oldest_waiting_id(conn, item.routine_id) == item.id):
            occurrences.skip(conn, item, SkipReason.GROUP_BUSY, stamp, inputs)
    return True


def _holder(conn: apsw.Connection, item: Waiting, group: str) -> tuple[str, str] | None:
    """The run and routine holding the group, if another member holds it."""
    params = {"routine": item.routine_id, "group": group}
    for sql in (_GROUP_RUNNING,) if item.attempts else (_GROUP_RUNNING, _GROUP_BETWEEN):
        row = conn.execute(sql, params).fetchone()
        if row is not None:
            return str(row[0]), str(row[1])
    return None
