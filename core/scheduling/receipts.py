"""Delivering a success's output, and committing its receipt (DESIGN §9, points 10–12).

The file work (temp write, fsync, rename, directory fsync) happens between the pass's two
transactions, never inside one; the receipt (path, size, sha256) is committed in the second.
A crash anywhere in between is repaired on a later pass by
:func:`coven_core.scheduling.delivery.repair`:
a delivered file with the right hash just gets its receipt; the command never runs again.
A failing delivery is retried with backoff (``delivery_failed``: delivery only, never the
action), and after :data:`MAX_TRIES` it is left for a person.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import apsw

from coven_core import events
from coven_core.events import EventKind
from coven_core.runner.spec import STDOUT_FILE
from coven_core.scheduling.delivery import (
    DeliveryError,
    Receipt,
    output_name,
    prune_outputs,
    repair,
)
from coven_core.scheduling.occurrences import Stamp
from coven_core.store import query
from coven_core.store.codec import instant_from, instant_text
from coven_core.system import failpoints

MAX_TRIES = 5
_BASE = timedelta(seconds=30)
_CAP = timedelta(hours=1)

Outcome = Receipt | DeliveryError


@dataclass(frozen=True)
class Job:
    occurrence_id: str
    routine_id: str
    source: Path  # the attempt's captured stdout
    folder: Path
    name: str
    tries: int


def due(conn: apsw.Connection, data_dir: Path, now: datetime, limit: int) -> list[Job]:
    rows = conn.execute(
        "SELECT d.occurrence_id, o.routine_id, o.scheduled_utc, d.tries, "
        "(SELECT a.attempt_dir FROM attempts a WHERE a.occurrence_id = o.id "
        " ORDER BY a.number DESC LIMIT 1) "
        "FROM deliveries d JOIN occurrences o ON o.id = d.occurrence_id "
        "WHERE d.state = 'pending' AND d.state != 'delivered' "  # the index: see earliest()
        "AND (d.not_before IS NULL OR d.not_before <= ?) "
        "ORDER BY o.scheduled_utc LIMIT ?",
        (instant_text(now), limit),
    )
    jobs = []
    for oid, rid, at, tries, attempt_dir in rows:
        if attempt_dir is not None:
            source, folder = Path(attempt_dir) / STDOUT_FILE, data_dir / "output" / rid
            jobs.append(Job(oid, rid, source, folder, output_name(instant_from(at), oid), tries))
    return jobs


def perform(job: Job, now: datetime) -> Outcome:
    """Deliver (or finish delivering) one output. Holds no transaction."""
    try:
        receipt = repair(job.source, job.folder, job.name, now=now, failpoint=failpoints.hit)
    except DeliveryError as error:
        return error
    with contextlib.suppress(DeliveryError):  # housekeeping: the delivery itself succeeded
        prune_outputs(job.folder, protected={job.name})
    return receipt


def record(conn: apsw.Connection, job: Job, outcome: Outcome, stamp: Stamp) -> None:
    if isinstance(outcome, Receipt):
        conn.execute(
            "UPDATE deliveries SET state = 'delivered', path = ?, size = ?, sha256 = ?, "
            "delivered_at = ?, tries = tries + 1, last_error = NULL WHERE occurrence_id = ?",
            (outcome.path, outcome.size, outcome.sha256, instant_text(outcome.delivered_at),
             job.occurrence_id),
        )  # fmt: skip
        events.record(conn, stamp.now, EventKind.DELIVERED, occurrence_id=job.occurrence_id,
                      routine_id=job.routine_id, path=outcome.path)  # fmt: skip
        return
    _record_failure(conn, job, outcome, stamp)


def _record_failure(conn: apsw.Connection, job: Job, error: DeliveryError, stamp: Stamp) -> None:
    tries = job.tries + 1
    state = "failed" if tries >= MAX_TRIES else "pending"
    wait = min(_CAP, _BASE * 2 ** (tries - 1))
    conn.execute(
        "UPDATE deliveries SET state = ?, tries = ?, last_error = ?, not_before = ? "
        "WHERE occurrence_id = ?",
        (state, tries, str(error), instant_text(stamp.now + wait), job.occurrence_id),
    )
    events.record(conn, stamp.now, EventKind.DELIVERY_FAILED, occurrence_id=job.occurrence_id,
                  routine_id=job.routine_id, error=str(error), tries=tries)  # fmt: skip


def earliest(conn: apsw.Connection, now: datetime) -> datetime | None:
    """The next pending retry's time. ``state != 'delivered'`` is redundant beside ``state =
    'pending'`` but is the condition of the partial index ``deliveries_pending``, and SQLite
    uses a partial index only for a WHERE that contains its condition: without it this query
    and :func:`due`, each run every pass, scanned every delivered receipt: a cost that grows
    with the history (bench_bookkeeping's row "CPU (user + system) per occurrence" guards it)."""
    row = conn.execute(f"SELECT {EARLIEST}", {"now": instant_text(now)}).fetchone()
    return None if row is None or row[0] is None else instant_from(row[0])


def next_due(conn: apsw.Connection, now: datetime) -> datetime | None:
    """When the next pending delivery may be made: ``now`` when one already may."""
    (any_due,) = query.one(conn, f"SELECT {ANY_DUE}", {"now": instant_text(now)})
    if any_due:
        return now
    return earliest(conn, now)


_PENDING = "deliveries WHERE state = 'pending' AND state != 'delivered'"  # see earliest()
EARLIEST = f"(SELECT min(not_before) FROM {_PENDING} AND not_before > :now)"
ANY_DUE = f"EXISTS (SELECT 1 FROM {_PENDING} AND (not_before IS NULL OR not_before <= :now))"
"""Whether :func:`due` may find something: a pass reads this first
(:mod:`coven_core.scheduling.agenda`)."""
