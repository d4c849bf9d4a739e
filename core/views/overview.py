"""One snapshot of everything the tray shows (DESIGN §12), decided here, not in Qt.

The tray's state is a domain rule: *needs a decision* wins over *error* (a failed or
timed-out run nobody has looked at, a quarantined or broken routine, a failing scheduler),
which wins over *running*, *paused* and *idle*; the GUI only draws it, with the counts
(:class:`Counts`) and the sentence :func:`coven_core.views.tooltip.tooltip` builds.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import apsw

from coven_core.model import RoutineState
from coven_core.operations.seen import unseen_failures
from coven_core.scheduling import lease, routines
from coven_core.store.codec import instant_from, instant_text, maybe_instant_from
from coven_core.store.query import scalar
from coven_core.store.store import Store
from coven_core.views.glance import scheduling_paused

#: A leader whose last pass failed within this long puts the tray in the error state.
RECENT_ERROR = timedelta(minutes=15)
#: A cancel not acknowledged within this (beyond the routine's stop grace) is "stuck". Here,
#: not with the attention view that also asks it: the tray reads it before it is ready, and
#: the evidence's code only when a person looks (bench_idle: launch to tray ready).
CANCEL_PATIENCE = timedelta(minutes=2)


class TrayState(enum.StrEnum):
    IDLE = "idle"
    RUNNING = "running"
    ATTENTION = "attention"
    PAUSED = "paused"
    ERROR = "error"


@dataclass(frozen=True)
class RunningRun:
    run_id: str
    routine: str
    started_at: datetime | None


@dataclass(frozen=True)
class RoutineLine:
    name: str
    state: RoutineState
    next_due: datetime | None


@dataclass(frozen=True)
class Counts:
    """What the tray counts: each a reason to look (issue #21)."""

    attention: int = 0  # runs that need a person's decision (and stuck cancels, deliveries)
    failed_unseen: int = 0  # failed or timed-out runs nobody has opened yet
    quarantined: int = 0  # routines stopped by their failures
    broken: int = 0  # routines whose revision cannot be loaded
    running: int = 0  # runs claimed or running now

    @property
    def errors(self) -> int:
        return self.failed_unseen + self.quarantined + self.broken


@dataclass(frozen=True)
class Overview:
    state: TrayState
    standby: bool  # another process (coven daemon) is the leader
    paused_all: bool
    attention: int
    error: str | None
    next_run: tuple[str, datetime] | None
    running: list[RunningRun] = field(default_factory=list)
    routines: list[RoutineLine] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)  # routines that plan nothing, by name
    counts: Counts = field(default_factory=Counts)


def overview(store: Store, now: datetime, holder_token: str | None = None) -> Overview:
    """The tray's snapshot. ``next_run`` is None while all scheduling is paused: nothing
    will run then, whatever the routines' own next moments say."""
    with store.read() as conn:
        lines = _lines(conn)
        running = _running(conn)
        broken = [routine.name for routine, _ in routines.broken(conn)]
        counts = Counts(
            _attention(conn, now), unseen_failures(conn),
            sum(line.state is RoutineState.QUARANTINED for line in lines), len(broken),
            len(running),
        )  # fmt: skip
        error = _recent_error(conn, now) or _broken_text(broken)
        paused_all = scheduling_paused(conn)
        held = lease.current(conn)
    standby = held is not None and holder_token is not None and held.holder != holder_token
    state = _state(counts, error, paused_all, lines)
    upcoming = None if paused_all else _next_run(lines)
    return Overview(
        state, standby, paused_all, counts.attention, error, upcoming, running, lines, broken,
        counts,
    )  # fmt: skip


def _lines(conn: apsw.Connection) -> list[RoutineLine]:
    """Every live routine's line, by name: only the three columns the tray reads, since it
    reads them after every change (whole routines doubled the overview's time)."""
    rows = conn.execute(
        "SELECT name, state, next_due FROM routines WHERE state != 'deleted' ORDER BY name"
    )
    return [
        RoutineLine(name, RoutineState(state), maybe_instant_from(due)) for name, state, due in rows
    ]


def _broken_text(names: list[str]) -> str | None:
    if not names:
        return None
    return f"broken, plans nothing until edited or deleted: {', '.join(names)}"


def _state(
    counts: Counts, error: str | None, paused_all: bool, lines: list[RoutineLine]
) -> TrayState:
    if counts.attention:
        return TrayState.ATTENTION
    if error or counts.errors:
        return TrayState.ERROR
    if counts.running:
        return TrayState.RUNNING
    if paused_all or (lines and all(line.state is not RoutineState.ACTIVE for line in lines)):
        return TrayState.PAUSED
    return TrayState.IDLE


def _running(conn: apsw.Connection) -> list[RunningRun]:
    rows = conn.execute(
        "SELECT o.run_id, r.name, (SELECT max(a.started_at) FROM attempts a "
        "WHERE a.occurrence_id = o.id) FROM occurrences o JOIN routines r ON r.id = o.routine_id "
        "WHERE o.state IN ('claimed', 'running') ORDER BY o.scheduled_utc"
    )
    return [RunningRun(run_id, name, maybe_instant_from(at)) for run_id, name, at in rows]


def _attention(conn: apsw.Connection, now: datetime) -> int:
    stuck = instant_text(now - CANCEL_PATIENCE)
    # "state != 'delivered'": the partial index's condition (delivering.earliest says why)
    return int(
        scalar(
            conn,
            "SELECT (SELECT count(*) FROM occurrences WHERE disposition = 'recovery_required') + "
            "(SELECT count(*) FROM attempts WHERE cancel_requested_at <= ? AND state != 'settled') "
            "+ (SELECT count(*) FROM deliveries WHERE state = 'failed' AND state != 'delivered')",
            (stuck,),
        )
    )


def _recent_error(conn: apsw.Connection, now: datetime) -> str | None:
    row = conn.execute(
        "SELECT started_at, error FROM passes WHERE role = 'leader' ORDER BY id DESC LIMIT 1"
    ).fetchone()
    if row is None or row[1] is None:
        return None
    return str(row[1]) if now - instant_from(row[0]) <= RECENT_ERROR else None


def _next_run(lines: list[RoutineLine]) -> tuple[str, datetime] | None:
    upcoming = [
        (line.next_due, line.name)
        for line in lines
        if line.state is RoutineState.ACTIVE and line.next_due is not None
    ]
    if not upcoming:
        return None
    at, name = min(upcoming)
    return name, at
