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
    Said,
    counted,
    finding,
    iso,
    said,
    shown,
)
from coven_core.model import Disposition, OccurrenceState
from coven_core.notation.i18n import N_
from coven_core.scheduling import lease, routines
from coven_core.scheduling.lease import LEASE_TTL
from coven_core.store.codec import instant_text
from coven_core.views.glance import scheduling_paused

# --- the lease ----------------------------------------------------------------------------


def read_leader(conn: apsw.Connection, now: datetime) -> Leader:
    held = lease.current(conn)
    if held is None:
        return Leader(None, False, False, said(N_("there is no lease: no scheduler has run here")))
    named = said(N_("generation {generation} ({holder})"), generation=held.generation,
                 holder=held.fingerprint())  # fmt: skip
    if lease.holder_is_gone(held.holder):
        return Leader(held, False, False, said(N_("the scheduler holding {named} is gone"),
                                               named=named))  # fmt: skip
    if held.expires_at > now:
        return Leader(held, True, False, Said(""))
    if lease.holder_is_alive(held.holder):
        return Leader(held, True, True, Said(""))
    expired = said(N_("the lease at {named} expired at {at}"), named=named,
                   at=iso(held.expires_at))  # fmt: skip
    return Leader(held, False, False, expired)


def check_lease(context: Context) -> Iterator[Finding]:
    leader = context.leader
    held = leader.lease
    if held is None or not leader.watching:
        yield finding(INFO, said(N_("no scheduler watches the store now — {why}"),
                                 why=leader.why_not))  # fmt: skip
    elif leader.late:
        yield finding(
            WARNING, said(N_("the lease at generation {generation} expired at {at} but its "
                             "holder ({holder}) is alive: the leader is late renewing it (asleep "
                             "or stalled)"), generation=held.generation,
                          at=iso(held.expires_at), holder=held.fingerprint()),
            generation=held.generation,
        )  # fmt: skip
    else:
        yield finding(
            INFO, said(N_("{holder} leads at generation {generation} (lease until {until})"),
                       holder=held.fingerprint(), generation=held.generation,
                       until=iso(held.expires_at)),
            generation=held.generation,
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
            ERROR, said(N_("occurrence {oid} is {state!r} with disposition {disposition!r}: a "
                           "settled occurrence has exactly one known disposition, a live one "
                           "none"), oid=oid, state=state, disposition=disposition),
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
    oid, state = live.occurrence_id, live.state
    details: dict[str, Any] = {"occurrence_id": live.occurrence_id, "attempt_id": live.attempt_id}
    if live.attempt_id is None or live.generation is None:
        return finding(ERROR, said(N_("occurrence {oid} is {state} but has no unsettled attempt: "
                                      "nothing will settle it. {start}."),
                                   oid=oid, state=state, start=START_COVEN), **details)  # fmt: skip
    details["generation"] = live.generation
    held = leader.lease
    if held is None or held.generation != live.generation:
        lease_is = (said(N_("missing")) if held is None
                    else said(N_("at {generation}"), generation=held.generation))  # fmt: skip
        return finding(ERROR, said(N_("occurrence {oid} is {state} under generation "
                                      "{generation} but the lease is {lease}: nobody is watching "
                                      "it. {start}."), oid=oid, state=state,
                                   generation=live.generation, lease=lease_is,
                                   start=START_COVEN), **details)  # fmt: skip
    if not leader.watching:
        return finding(ERROR, said(N_("occurrence {oid} is {state} under generation "
                                      "{generation} but {why}: nobody is watching it. {start}."),
                                   oid=oid, state=state, generation=live.generation,
                                   why=leader.why_not, start=START_COVEN), **details)  # fmt: skip
    return None


def _awaiting_a_person(conn: apsw.Connection) -> Iterator[Finding]:
    rows = conn.execute(
        "SELECT id, run_id FROM occurrences WHERE disposition = 'recovery_required' ORDER BY id"
    )
    for oid, run_id in rows:
        yield finding(
            INFO, said(N_("run {run} (occurrence {oid}) waits for a person's decision: see "
                          "`coven attention`"), run=run_id, oid=oid),
            occurrence_id=oid, run_id=run_id,
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
            yield finding(INFO, counted("{count} due occurrence waits for a free slot",
                                        "{count} due occurrences wait for a free slot",
                                        len(rows)))  # fmt: skip
        return
    for oid, at in rows:
        yield finding(
            WARNING, said(N_("occurrence {oid} was due at {at} and waits for a scheduler: {why}. "
                             "Start Coven (or `coven daemon`) to run it"),
                          oid=oid, at=shown(str(at)), why=context.leader.why_not),
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
            yield finding(WARNING, said(N_("routine {name!r} was due at {at} and nothing has "
                                           "planned it: the scheduler is behind"),
                                        name=name, at=shown(due)), routine_id=rid)  # fmt: skip
        else:
            yield finding(INFO, said(N_("routine {name!r} has moments since {at} not decided "
                                        "yet: Coven decides them (run or missed) when it starts"),
                                     name=name, at=shown(due)), routine_id=rid)  # fmt: skip


# --- routines -----------------------------------------------------------------------------


def check_routines(context: Context) -> Iterator[Finding]:
    """Every live routine's newest revision loads and binds with the tz database in use: a
    broken one plans nothing until a person edits or deletes it (DESIGN §6)."""
    for routine in routines.live(context.conn):
        broken = routines.breakage(context.conn, routine)
        if broken is not None:
            reason = broken.reason(routine.name)
            yield finding(ERROR, said(N_("routine {name!r} is broken: {reason}"),
                                      name=routine.name, reason=reason),
                           routine_id=routine.id, revision=broken.number)  # fmt: skip
