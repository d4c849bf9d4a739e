"""One snapshot of everything the tray shows (DESIGN §12), decided here, not in Qt.

The tray's state is a domain rule: *needs attention* wins over *error*, which wins over
*running*, *paused* and *idle*; the GUI only draws it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import apsw

from coven_core.model import RoutineState
from coven_core.scheduling import lease, routines
from coven_core.store.codec import instant_from, instant_text, maybe_instant_from
from coven_core.store.query import scalar
from coven_core.store.store import Store
from coven_core.views.attention import CANCEL_PATIENCE
from coven_core.views.glance import scheduling_paused

#: A leader whose last pass failed within this long puts the tray in the error state.
RECENT_ERROR = timedelta(minutes=15)


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


def overview(store: Store, now: datetime, holder_token: str | None = None) -> Overview:
    with store.read() as conn:
        lines = [RoutineLine(r.name, r.state, r.next_due) for r in routines.live(conn)]
        running = _running(conn)
        attention = _attention(conn, now)
        broken = [routine.name for routine, _ in routines.broken(conn)]
        error = _recent_error(conn, now) or _broken_text(broken)
        paused_all = scheduling_paused(conn)
        held = lease.current(conn)
    standby = held is not None and holder_token is not None and held.holder != holder_token
    state = _state(attention, error, running, paused_all, lines)
    return Overview(
        state, standby, paused_all, attention, error, _next_run(lines), running, lines, broken
    )


def _broken_text(names: list[str]) -> str | None:
    if not names:
        return None
    return f"broken, plans nothing until edited or deleted: {', '.join(names)}"


def _state(
    attention: int,
    error: str | None,
    running: list[RunningRun],
    paused_all: bool,
    lines: list[RoutineLine],
) -> TrayState:
    if attention:
        return TrayState.ATTENTION
    if error:
        return TrayState.ERROR
    if running:
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
