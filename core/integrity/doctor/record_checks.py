"""Checks of the records: derived ids, failure counters, references, the audit chain."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import NamedTuple

import apsw

from coven_core.integrity import audit
from coven_core.integrity.doctor.base import (
    ERROR,
    INFO,
    WARNING,
    Context,
    Finding,
    counted,
    finding,
    said,
    shown,
)
from coven_core.model import MissedCause
from coven_core.notation.i18n import N_
from coven_core.scheduling import ids
from coven_core.store.codec import instant_from
from coven_core.tz.binding import BoundTime, LocalTimeKind

# --- ids ----------------------------------------------------------------------------------


class _Row(NamedTuple):
    id: str
    routine_id: str
    kind: str
    scheduled_utc: str
    local_kind: str | None
    manual_key: str | None
    window_first: str | None
    cause: str | None
    decision: str | None


def check_ids(context: Context) -> Iterator[Finding]:
    rows = context.conn.execute(
        "SELECT id, routine_id, kind, scheduled_utc, local_kind, manual_key, window_first, "
        "cause, decision FROM occurrences ORDER BY id"
    )
    for row in map(_Row._make, rows):
        expected = _derived_id(row)
        if expected is not None and expected != row.id:
            yield finding(
                ERROR, said(N_("occurrence id {oid} is not the one its routine and moment give "
                               "({expected}): planning that moment again would make a second row "
                               "for it"), oid=row.id, expected=expected),
                occurrence_id=row.id, expected=expected,
            )  # fmt: skip
    yield from _moments_decided_twice(context.conn)


def _derived_id(row: _Row) -> str | None:
    if row.kind == "manual":
        return None if row.manual_key is None else ids.manual_id(row.routine_id, row.manual_key)
    if row.kind == "triggered":  # derived from the upstream occurrence (a chain, DESIGN §14)
        upstream = _upstream(row.decision)
        return None if upstream is None else ids.triggered_id(row.routine_id, upstream)
    if row.kind == "coalesced":
        first = instant_from(row.window_first or row.scheduled_utc)
        broken = row.cause == MissedCause.ROUTINE_BROKEN.value
        return ids.coalesced_id(row.routine_id, first, broken=broken)
    gap = row.local_kind == LocalTimeKind.NONEXISTENT.value
    return ids.occurrence_id(row.routine_id, _moment(instant_from(row.scheduled_utc), gap))


def _upstream(decision: str | None) -> str | None:
    try:
        found = json.loads(decision or "{}")
    except ValueError:
        return None
    upstream = found.get("upstream") if isinstance(found, dict) else None
    return upstream if isinstance(upstream, str) else None


def _moment(instant: datetime, gap: bool) -> BoundTime:
    """Enough of a bound time to derive its id: the instant and whether it is a gap."""
    kind = LocalTimeKind.NONEXISTENT if gap else LocalTimeKind.REGULAR
    return BoundTime(instant.replace(tzinfo=None), instant, timedelta(0), 0, kind)


def _moments_decided_twice(conn: apsw.Connection) -> Iterator[Finding]:
    rows = conn.execute(
        "SELECT routine_id, scheduled_utc, group_concat(id, ', ') FROM occurrences "
        "WHERE kind = 'scheduled' GROUP BY routine_id, scheduled_utc, "
        "coalesce(local_kind, '') = 'nonexistent' HAVING count(*) > 1"
    )
    for rid, at, both in rows:
        yield finding(ERROR, said(N_("routine {routine} has two rows for the moment {at} "
                                    "({both}): each moment has exactly one"),
                                 routine=rid, at=shown(at), both=both), routine_id=rid)  # fmt: skip


# --- counters -----------------------------------------------------------------------------

# Newest first: the settled attempts of a routine's non-probe runs, and its releases.
_SETTLEMENTS = (
    "SELECT a.settled_at, a.failure_class, a.not_before IS NOT NULL, a.dispatched_at IS NOT NULL "
    "FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id "
    "WHERE o.routine_id = ?1 AND o.probe = 0 AND a.state = 'settled' "
    "UNION ALL SELECT at, 'released', 0, 1 FROM events WHERE routine_id = ?1 AND kind = 'released' "
    "ORDER BY 1 DESC"
)
# Failure classes that settle an occurrence as cancelled or recovery_required: not counted.
_NOT_COUNTED = frozenset({"cancelled", "ambiguous"})


class _Counter(NamedTuple):
    routine_id: str
    name: str
    stored: int


def check_counters(context: Context) -> Iterator[Finding]:
    rows = context.conn.execute("SELECT id, name, consecutive_failures FROM routines ORDER BY id")
    for counter in map(_Counter._make, rows.fetchall()):
        streak = _failure_streak(context.conn, counter.routine_id)
        if streak != counter.stored:
            yield finding(
                WARNING, counted("routine {name!r} counts {count} consecutive failure but its "
                                 "history shows {history} since its last success or release: "
                                 "quarantine decisions use this count",
                                 "routine {name!r} counts {count} consecutive failures but its "
                                 "history shows {history} since its last success or release: "
                                 "quarantine decisions use this count",
                                 counter.stored, name=counter.name, history=streak),
                routine_id=counter.routine_id, stored=counter.stored, history=streak,
            )  # fmt: skip


def _failure_streak(conn: apsw.Connection, routine_id: str) -> int:
    """The failures the engine counted since the last reset: a success or a release resets;
    an attempt that ended its occurrence failed or timed out counts (one followed by an
    automatic retry, or never dispatched, does not)."""
    failures = 0
    for _, failure, retried, dispatched in conn.execute(_SETTLEMENTS, (routine_id,)):
        if failure is None or failure == "released":
            break
        if failure not in _NOT_COUNTED and not retried and dispatched:
            failures += 1
    return failures


# --- references ---------------------------------------------------------------------------


def check_references(context: Context) -> Iterator[Finding]:
    conn = context.conn
    for aid, oid in conn.execute(
        "SELECT a.id, a.occurrence_id FROM attempts a WHERE NOT EXISTS "
        "(SELECT 1 FROM occurrences o WHERE o.id = a.occurrence_id) ORDER BY a.id"
    ):
        yield finding(ERROR, said(N_("attempt {aid} belongs to occurrence {oid}, which does not "
                                    "exist"), aid=aid, oid=oid),
                      attempt_id=aid, occurrence_id=oid)  # fmt: skip
    yield from _deliveries(conn)
    for (oid,) in conn.execute(
        "SELECT o.id FROM occurrences o WHERE o.disposition = 'reconciled' AND NOT EXISTS "
        "(SELECT 1 FROM reconciliations r WHERE r.occurrence_id = o.id) ORDER BY o.id"
    ):
        yield finding(ERROR, said(N_("occurrence {oid} is reconciled but no decision is "
                                    "recorded for it in reconciliations"), oid=oid),
                      occurrence_id=oid)  # fmt: skip


def _deliveries(conn: apsw.Connection) -> Iterator[Finding]:
    rows = conn.execute(
        "SELECT d.occurrence_id, d.state, o.id IS NOT NULL, o.disposition FROM deliveries d "
        "LEFT JOIN occurrences o ON o.id = d.occurrence_id "
        "WHERE o.disposition IS NOT 'succeeded' ORDER BY d.occurrence_id"
    )
    for oid, state, exists, disposition in rows:
        if not exists:
            what = said(N_("does not exist"))
        elif disposition is None:
            what = said(N_("is not settled"))
        else:
            what = said(N_("is {disposition}"), disposition=disposition)
        yield finding(
            ERROR, said(N_("a delivery ({state}) is recorded for occurrence {oid}, which {what}: "
                           "only a success's output is delivered"),
                        state=state, oid=oid, what=what),
            occurrence_id=oid, disposition=disposition,
        )  # fmt: skip


# --- the audit chain ----------------------------------------------------------------------


def check_audit(context: Context) -> Iterator[Finding]:
    report = audit.verify(context.conn)
    if not report.ok:
        yield finding(
            ERROR, said(N_("the audit log does not verify at entry {seq}: {problem}"),
                        seq=report.first_broken_seq, problem=report.problem),
            first_broken_seq=report.first_broken_seq,
        )  # fmt: skip
        return
    verifies = counted(
        "the audit chain verifies: {count} entry",
        "the audit chain verifies: {count} entries",
        report.entries,
    )
    if report.pruned:
        verifies = said(N_("{verifies}, after a checkpoint for {pruned} pruned"),
                        verifies=verifies, pruned=report.pruned)  # fmt: skip
    yield finding(INFO, verifies, entries=report.entries, pruned=report.pruned)
