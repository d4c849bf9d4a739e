"""Chains: a routine triggered by another's outcome (DESIGN §14).

A downstream routine names its upstream (``--after backup`` or ``--after backup:finished``).
When an upstream occurrence settles as ``succeeded`` (or, for ``finished``, as anything
that ran to an end: failed, timed out, cancelled), each live downstream routine gets one
occurrence, ``<routine>@after:<upstream occurrence>``, planned in the same transaction that
settles the upstream: a crash loses both or neither, and the derived id makes a second plan
of it a no-op. It then waits like any moment, under the downstream's own policies (paused,
overlap, group, cooldown, budget). A chain never loops: a revision that would close a loop
is refused, naming it.
"""

from __future__ import annotations

import json

import apsw

from coven_core import events
from coven_core.errors import ValidationError
from coven_core.events import EventKind
from coven_core.model import Disposition, OccurrenceKind
from coven_core.notation.i18n import _
from coven_core.scheduling import ids
from coven_core.scheduling.occurrences import Stamp
from coven_core.store.codec import instant_text

SUCCEEDED, FINISHED = "succeeded", "finished"
OUTCOMES = (SUCCEEDED, FINISHED)

#: What settles a run that ran to an end (``recovery_required`` is not an end; a skipped or
#: shadowed moment did not run).
_FINISHED = frozenset(
    {Disposition.SUCCEEDED, Disposition.FAILED, Disposition.TIMED_OUT, Disposition.CANCELLED}
)

#: Downstream routines of an upstream, by the upstream's name: their newest revision names it.
_DOWNSTREAM = (
    "SELECT d.id, v.number, v.timezone, v.tzdb_version, v.after_outcome, u.name "
    "FROM routines u JOIN revisions v ON v.after_routine = u.name JOIN routines d "
    "ON d.id = v.routine_id AND d.revision = v.number WHERE u.id = ? AND d.state != 'deleted'"
)

#: Whether anything is downstream of the routine ``r``: read with the settlement's own row.
HAS_DOWNSTREAM_SQL = (
    "EXISTS (SELECT 1 FROM revisions v JOIN routines d ON d.id = v.routine_id "
    "AND d.revision = v.number WHERE v.after_routine = r.name AND d.state != 'deleted')"
)


def trigger(
    conn: apsw.Connection,
    upstream_id: str,
    upstream_routine: str,
    disposition: Disposition,
    stamp: Stamp,
) -> int:
    """Plan the downstream occurrences of an upstream that just settled; how many were new."""
    if disposition not in _FINISHED:
        return 0
    planned = 0
    for rid, number, zone, tzdb_version, outcome, name in list(
        conn.execute(_DOWNSTREAM, (upstream_routine,))
    ):
        if outcome == SUCCEEDED and disposition is not Disposition.SUCCEEDED:
            continue
        inputs = {"upstream": upstream_id, "upstream_routine": name, "outcome": disposition.value}
        planned += _plan(conn, rid, number, (zone, tzdb_version), inputs, stamp)
    return planned


def _plan(
    conn: apsw.Connection, routine_id: str, number: int, zone: tuple[str, str],
    inputs: dict[str, str], stamp: Stamp,
) -> int:  # fmt: skip
    oid = ids.triggered_id(routine_id, inputs["upstream"])
    now = instant_text(stamp.now)
    conn.execute(
        "INSERT OR IGNORE INTO occurrences (id, routine_id, revision, kind, scheduled_utc, zone, "
        "tzdb_version, state, decision, planned_at, generation) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, 'planned', ?, ?, ?)",
        (oid, routine_id, number, OccurrenceKind.TRIGGERED, now, *zone,
         json.dumps(inputs, sort_keys=True), now, stamp.generation),
    )  # fmt: skip
    if conn.changes() != 1:
        return 0
    events.record(conn, stamp.now, EventKind.PLANNED, routine_id=routine_id, occurrence_id=oid)
    return 1


def parse_after(text: str) -> tuple[str, str]:
    """``backup`` or ``backup:succeeded`` → (``backup``, ``succeeded``); ``backup:finished``."""
    name, colon, outcome = text.strip().rpartition(":")
    if not colon or outcome not in OUTCOMES:
        name, outcome = text.strip(), SUCCEEDED
    if not name:
        raise ValidationError(_("--after needs a routine's name, e.g. --after backup:succeeded"))
    return name, outcome


def check_no_loop(conn: apsw.Connection, name: str, after: str | None) -> None:
    """Refuse a revision of ``name`` whose upstream chain leads back to it, naming the loop;
    and an upstream that is no live routine."""
    if after is None:
        return
    path = [name]
    current: str | None = after
    while current is not None and current not in path[1:]:  # an old loop is not this one's
        path.append(current)
        if current == name:
            raise ValidationError(_("a chain cannot loop: {path}").format(path=" → ".join(path)))
        current = _upstream_of(conn, current, first=len(path) == 2)


def _upstream_of(conn: apsw.Connection, name: str, *, first: bool) -> str | None:
    row = conn.execute(
        "SELECT v.after_routine FROM routines r JOIN revisions v ON v.routine_id = r.id "
        "AND v.number = r.revision WHERE r.name = ? AND r.state != 'deleted'",
        (name,),
    ).fetchone()
    if row is None and first:
        raise ValidationError(_("--after: no routine named {name!r}").format(name=name))
    return None if row is None else row[0]
