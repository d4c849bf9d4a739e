"""``coven list --state`` and ``coven inspect``: what is where, and one thing in full.

Tokens (the lease holder, the leader generation that fenced an attempt) are shown only as
short fingerprints (DESIGN §13).
"""

from __future__ import annotations

import enum
import hashlib
from datetime import datetime
from typing import Any

import apsw

from coven_core.errors import ValidationError
from coven_core.notation.i18n import _
from coven_core.notation.utc import local_seconds, utc_text
from coven_core.scheduling import lease
from coven_core.store.codec import instant_from, instant_text
from coven_core.store.store import Store


class ListState(enum.StrEnum):
    """What ``coven list --state`` accepts: every state its rows show (``planned`` — each row
    of ``due`` is one — ``claimed``, ``running``, ``recovery_required``, and the routine
    states ``quarantined`` and ``paused``), and ``due``, the planned ones whose time has come."""

    PLANNED = "planned"
    DUE = "due"
    CLAIMED = "claimed"
    RUNNING = "running"
    RECOVERY_REQUIRED = "recovery_required"
    QUARANTINED = "quarantined"
    PAUSED = "paused"


_OCCURRENCE_FILTERS = {
    ListState.PLANNED: "o.state = 'planned' AND ?1 IS NOT NULL",
    ListState.DUE: "o.state = 'planned' AND o.scheduled_utc <= ?1 "
    "AND (o.not_before IS NULL OR o.not_before <= ?1)",
    ListState.CLAIMED: "o.state = 'claimed' AND ?1 IS NOT NULL",
    ListState.RUNNING: "o.state = 'running' AND ?1 IS NOT NULL",
    ListState.RECOVERY_REQUIRED: "o.disposition = 'recovery_required' AND ?1 IS NOT NULL",
}


def list_by_state(store: Store, state: ListState, now: datetime) -> list[dict[str, Any]]:
    with store.read() as conn:
        if state in _OCCURRENCE_FILTERS:
            return _occurrences(conn, _OCCURRENCE_FILTERS[state], now)
        return _routines(conn, state.value)


def _occurrences(conn: apsw.Connection, where: str, now: datetime) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT o.id, o.run_id, r.name, o.kind, o.scheduled_utc, o.state, o.disposition, "
        f"o.reason FROM occurrences o JOIN routines r ON r.id = o.routine_id WHERE {where} "
        "ORDER BY o.scheduled_utc, o.id",
        (instant_text(now),),
    )
    keys = ("occurrence_id", "run_id", "routine", "kind", "utc", "state", "disposition",
            "reason")  # fmt: skip
    return [_seconds(dict(zip(keys, row, strict=True)), "utc") for row in rows]


def _routines(conn: apsw.Connection, state: str) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT id, name, state, state_reason, state_changed_at, consecutive_failures "
        "FROM routines WHERE state = ? ORDER BY name",
        (state,),
    )
    keys = ("routine_id", "routine", "state", "reason", "since", "consecutive_failures")
    return [_seconds(dict(zip(keys, row, strict=True)), "since") for row in rows]


def _seconds(item: dict[str, Any], key: str) -> dict[str, Any]:
    """A listing's instant to the second, as every listing says it (the README's rule for
    JSON instants); ``inspect`` shows the stored rows to the microsecond."""
    if item[key] is not None:
        item[key] = utc_text(instant_from(item[key]))
    return item


def inspect(store: Store, identifier: str) -> dict[str, Any]:
    """An occurrence (by occurrence id or run id) with its attempts, delivery, decisions and
    the lease, for a person or a script to read in full."""
    with store.read() as conn:
        occurrence = _one_row(conn, _OCCURRENCE, identifier)
        if occurrence is None:
            raise ValidationError(
                _("no occurrence or run {id!r} (see: coven history NAME)").format(id=identifier)
            )
        oid = occurrence["id"]
        occurrence["local_time"] = local_seconds(occurrence["local_time"])  # one format: README
        return {
            "occurrence": occurrence,
            "attempts": _all_rows(conn, _ATTEMPTS, oid),
            "delivery": _one_row(conn, _DELIVERY, oid),
            "decisions": _all_rows(conn, _DECISIONS, oid),
            "lease": _lease(conn),
        }


_OCCURRENCE = "SELECT * FROM occurrences WHERE id = ?1 OR run_id = ?1"
_ATTEMPTS = "SELECT * FROM attempts WHERE occurrence_id = ?1 ORDER BY number"
_DELIVERY = "SELECT * FROM deliveries WHERE occurrence_id = ?1"
_DECISIONS = (
    "SELECT id, outcome, reason, decided_by, decided_at, evidence_digest FROM reconciliations "
    "WHERE occurrence_id = ?1 ORDER BY id"
)


def _one_row(conn: apsw.Connection, sql: str, key: str) -> dict[str, Any] | None:
    rows = _all_rows(conn, sql, key)
    return rows[0] if rows else None


def _all_rows(conn: apsw.Connection, sql: str, key: str) -> list[dict[str, Any]]:
    """Rows as dicts. An attempt's ``generation`` is its fence: the leader generation that
    claimed it, which every later write about it was checked against."""
    cursor = conn.cursor()
    cursor.row_trace = _as_dict  # names are only known while the statement runs
    return list(cursor.execute(sql, (key,)))


def _as_dict(cursor: apsw.Cursor, row: tuple[Any, ...]) -> dict[str, Any]:
    return dict(zip((column[0] for column in cursor.getdescription()), row, strict=True))


def _lease(conn: apsw.Connection) -> dict[str, Any] | None:
    held = lease.current(conn)
    if held is None:
        return None
    return {
        "holder": held.fingerprint(),
        "token": fingerprint(held.holder),
        "generation": held.generation,
        "expires_at": utc_text(held.expires_at),  # as coven status says it
    }


def fingerprint(token: str) -> str:
    """Eight hex digits: enough to tell tokens apart, never enough to reuse one."""
    return hashlib.sha256(token.encode()).hexdigest()[:8]
