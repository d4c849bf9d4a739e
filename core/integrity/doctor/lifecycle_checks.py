"""Checks of the lifecycle: the lease, routines, occurrences."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any, NamedTuple

import apsw

from coven_core.integrity.doctor.base import (
    ERROR,
    INFO,
    START_COVEN,
    WARNING,
    Context,
    Finding,
    Leader,
    finding,
    iso,
    shown,
)
from coven_core.model import Disposition, OccurrenceState
from coven_core.scheduling import lease, routines
from coven_core.scheduling.lease import LEASE_TTL
from coven_core.store.codec import instant_text
from coven_core.views.glance import scheduling_paused

# --- the lease ----------------------------------------------------------------------------


def read_leader(conn: apsw.Connection, now: datetime) -> Leader:
    held = lease.current(conn)
    if held is None:
        return Leader(None, False, False, "there is no lease: no scheduler has run here")
    named = f"generation {held.generation} ({held.fingerprint()})"
    if lease.holder_is_gone(held.holder):
        return Leader(held, False, False, f"the scheduler holding {named} is gone")
    if held.expires_at > now:
        return Leader(held, True, False, "")
    if lease.holder_is_alive(held.holder):
        return Leader(held, True, True, "")
    return Leader(held, False, False, f"the lease at {named} expired at {iso(held.expires_at)}")


def check_lease(context: Context) -> Iterator[Finding]:
    leader = context.leader
    held = leader.lease
    if held is None or not leader.watching:
        yield finding(INFO, f"no scheduler watches the store now — {leader.why_not}")
    elif leader.late:
        yield finding(
            WARNING, f"the lease at generation {held.generation} expired at "
            f"{iso(held.expires_at)} but its holder ({held.fingerprint()}) is alive: the leader "
            "is late renewing it (asleep or stalled)", generation=held.generation,
        )  # fmt: skip
    else:
        yield finding(
            INFO, f"{held.fingerprint()} leads at generation {held.generation} (lease until "
            f"{iso(held.expires_at)})", generation=held.generation,
        )  # fmt: skip


# --- occurrences --------------------------------------------------------------------------

_DISPOSITIONS = tuple(d.value for d in Disposition)
_STATES = tuple(s.value for s in OccurrenceState)


def check_occurrences(context: Context) -> Iterator[Finding]:
    yield from _disposition_mismatches(context.conn)
    yield from _live_occurrences(context)
    yield from _awaiting_a_person(context.conn)
    yield from _due_and_waiting(context)
    yield from _unplanned_moments(context)


def _disposition_mismatches(conn: apsw.Connection) -> Iterator[Finding]:
    rows = conn.execute(
        "SELECT id, state, disposition FROM occurrences WHERE (state = 'settled') != "
        "(disposition IS NOT NULL) OR state NOT IN (SELECT value FROM json_each(?1)) OR "
        "(disposition IS NOT NULL AND disposition NOT IN (SELECT value FROM json_each(?2)))",
        (_json_list(_STATES), _json_list(_DISPOSITIONS)),
    )
    for oid, state, disposition in rows:
        yield finding(
            ERROR, f"occurrence {oid} is {state!r} with disposition {disposition!r}: a settled "
            "occurrence has exactly one known disposition, a live one none",
            occurrence_id=oid, state=state, disposition=disposition,
        )  # fmt: skip


def _json_list(values: Iterable[str]) -> str:
    return json.dumps(list(values))


class _InFlight(NamedTuple):
    occurrence_id: str
    state: str
    attempt_id: str | None
    generation: int | None


def _live_occurrences(context: Context) -> Iterator[Finding]:
    rows = context.conn.execute(
        "SELECT o.id, o.state, a.id, a.generation FROM occurrences o LEFT JOIN attempts a "
        "ON a.id = (SELECT id FROM attempts WHERE occurrence_id = o.id AND state != 'settled' "
        "ORDER BY number DESC LIMIT 1) WHERE o.state IN ('claimed', 'running') ORDER BY o.id"
    )
    for row in rows:
        found = _watched(_InFlight(*row), context.leader)
        if found is not None:
            yield found


def _watched(live: _InFlight, leader: Leader) -> Finding | None:
    """Error unless a live occurrence's attempt is fenced by the current, watched lease."""
    what = f"occurrence {live.occurrence_id} is {live.state}"
    details: dict[str, Any] = {"occurrence_id": live.occurrence_id, "attempt_id": live.attempt_id}
    if live.attempt_id is None or live.generation is None:
        return finding(ERROR, f"{what} but has no unsettled attempt: nothing will settle it. "
                        f"{START_COVEN}.", **details)  # fmt: skip
    details["generation"] = live.generation
    held = leader.lease
    if held is None or held.generation != live.generation:
        at = "missing" if held is None else f"at {held.generation}"
        return finding(ERROR, f"{what} under generation {live.generation} but the lease is "
                        f"{at}: nobody is watching it. {START_COVEN}.", **details)  # fmt: skip
    if not leader.watching:
        unwatched = f"{what} under generation {live.generation} but {leader.why_not}"
        return finding(ERROR, f"{unwatched}: nobody is watching it. {START_COVEN}.", **details)
    return None


def _awaiting_a_person(conn: apsw.Connection) -> Iterator[Finding]:
    rows = conn.execute(
        "SELECT id, run_id FROM occurrences WHERE disposition = 'recovery_required' ORDER BY id"
    )
    for oid, run_id in rows:
        yield finding(
            INFO, f"run {run_id} (occurrence {oid}) waits for a person's decision: see "
            "`coven attention`", occurrence_id=oid, run_id=run_id,
        )  # fmt: skip


def _due_and_waiting(context: Context) -> Iterator[Finding]:
    """A planned occurrence whose time came: the leader claims it as capacity allows; with no
    leader it waits for the next start (a warning: it has not run *yet*, nothing is lost)."""
    rows = context.conn.execute(
        "SELECT id, scheduled_utc FROM occurrences WHERE state = 'planned' AND scheduled_utc <= ?1 "
        "AND (not_before IS NULL OR not_before <= ?1) ORDER BY scheduled_utc, id",
        (context.now_text,),
    ).fetchall()
    if context.leader.watching:
        if rows:
            yield finding(INFO, f"{len(rows)} due occurrence(s) wait for a free slot")
        return
    for oid, at in rows:
        yield finding(
            WARNING, f"occurrence {oid} was due at {shown(str(at))} and waits for a scheduler: "
            f"{context.leader.why_not}. Start Coven (or `coven daemon`) to run it",
            occurrence_id=oid,
        )  # fmt: skip


def _unplanned_moments(context: Context) -> Iterator[Finding]:
    """Moments of an active routine that passed with no row yet (decided at the next pass)."""
    if scheduling_paused(context.conn):
        return
    watching = context.leader.watching
    cutoff = context.now - LEASE_TTL if watching else context.now
    rows = context.conn.execute(
        "SELECT id, name, next_due FROM routines WHERE state = 'active' AND next_due <= ? "
        "ORDER BY next_due, id",
        (instant_text(cutoff),),
    )
    for rid, name, due in rows:
        if watching:
            yield finding(WARNING, f"routine {name!r} was due at {shown(due)} and nothing has "
                           "planned it: the scheduler is behind", routine_id=rid)  # fmt: skip
        else:
            yield finding(INFO, f"routine {name!r} has moments since {shown(due)} not decided "
                           "yet: Coven decides them (run or missed) when it starts",
                           routine_id=rid)  # fmt: skip


# --- routines -----------------------------------------------------------------------------


def check_routines(context: Context) -> Iterator[Finding]:
    """Every live routine's newest revision loads and binds with the tz database in use: a
    broken one plans nothing until a person edits or deletes it (DESIGN §6)."""
    for routine in routines.live(context.conn):
        broken = routines.breakage(context.conn, routine)
        if broken is not None:
            reason = broken.reason(routine.name)
            yield finding(ERROR, f"routine {routine.name!r} is broken: {reason}",
                           routine_id=routine.id, revision=broken.number)  # fmt: skip
