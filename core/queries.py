"""The query API: what the CLI and the GUI read (CONTRACT §10). Read-only, one snapshot each."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import islice
from typing import Any

import apsw

from coven_core import routines
from coven_core.durations import NO_TIMEOUT, format_timeout
from coven_core.glance import scheduling_paused
from coven_core.model import Revision, Routine, RoutineState
from coven_core.preview import Preview, preview
from coven_core.store.codec import instant_from, maybe_instant_from
from coven_core.store.store import Store
from coven_core.tz.binding import BoundTime
from coven_core.utc import utc_text


@dataclass(frozen=True)
class RoutineView:
    routine: Routine
    revision: Revision | None  # None: the newest revision cannot be read (see ``broken``)
    last_disposition: str | None
    last_at: datetime | None
    broken: str | None = None  # why the routine plans nothing, and how to mend it
    paused_all: bool = False  # all scheduling is paused (coven pause --all)

    @property
    def state(self) -> str:
        """The routine's state as a person reads it: ``broken`` outranks the stored one, and
        an active routine is ``paused`` while all scheduling is."""
        if self.broken:
            return "broken"
        if self.paused_all and self.routine.state is RoutineState.ACTIVE:
            return RoutineState.PAUSED.value
        return self.routine.state.value

    @property
    def state_reason(self) -> str | None:
        if self.paused_all and self.routine.state is RoutineState.ACTIVE:
            return ALL_PAUSED
        return self.routine.state_reason

    @property
    def next_due(self) -> datetime | None:
        """The next moment that will run: none while the routine is not active (paused —
        by itself or with everything — quarantined or broken): nothing runs until a person
        acts, and moments that pass meanwhile are skipped."""
        return self.routine.next_due if self.state == RoutineState.ACTIVE.value else None

    @property
    def zone(self) -> str:
        """The zone to show its times in: its own, or UTC while that does not bind."""
        return "UTC" if self.broken or self.revision is None else self.revision.spec.timezone

    def to_json(self) -> dict[str, Any]:
        fields = {
            "id": self.routine.id,
            "name": self.routine.name,
            "state": self.state,
            "state_reason": self.state_reason,
            "paused_all": self.paused_all,
            "broken": self.broken,
            "next_due": _iso(self.next_due),
            "last_disposition": self.last_disposition,
            "last_at": _iso(self.last_at),
        }
        if self.revision is not None:
            fields |= _revision_json(self.revision)
        return fields


def _revision_json(revision: Revision) -> dict[str, Any]:
    spec = revision.spec
    return {
        "schedule": spec.schedule,
        "timezone": spec.timezone,
        "zone_source": spec.zone_source,
        "revision": revision.number,
        "tzdb_version": revision.tzdb_version,
        "dst_policy": revision.dst_policy,
        "misfire": spec.misfire.value,
        "grace_seconds": None if spec.grace is None else spec.grace.total_seconds(),
        "overlap": spec.overlap.value,
        "timeout": format_timeout(spec.timeout),  # 2h, none (said so) or default
        "timeout_seconds": _limit_seconds(spec.timeout),
        "retries": spec.retries,
        "idempotent": spec.idempotent,
        "shell": spec.shell,
        "stop_grace_seconds": spec.stop_grace.total_seconds(),
        "quarantine_after": spec.quarantine_after,
        "command": list(spec.argv),
        "cwd": spec.cwd,
        "env": sorted(key for key, _ in spec.env),  # values may be secret (§13)
    }


def _limit_seconds(timeout: timedelta | None) -> float | None:
    """A timeout's seconds; null for ``none`` and ``default`` (``timeout`` tells which)."""
    if timeout is None or timeout == NO_TIMEOUT:
        return None
    return timeout.total_seconds()


def _iso(instant: datetime | None) -> str | None:
    return None if instant is None else utc_text(instant)


ALL_PAUSED = "all scheduling is paused"


def routine_view(
    conn: apsw.Connection, routine: Routine, paused_all: bool | None = None
) -> RoutineView:
    """``paused_all``: whether all scheduling is paused, when the caller already knows."""
    revision, broken = _loaded(conn, routine)
    if paused_all is None:
        paused_all = scheduling_paused(conn)
    row = conn.execute(
        "SELECT disposition, settled_at FROM occurrences WHERE routine_id = ? "
        "AND disposition IS NOT NULL ORDER BY scheduled_utc DESC, id DESC LIMIT 1",
        (routine.id,),
    ).fetchone()
    last, at = (row[0], maybe_instant_from(row[1])) if row else (None, None)
    return RoutineView(routine, revision, last, at, broken, paused_all)


def _loaded(conn: apsw.Connection, routine: Routine) -> tuple[Revision | None, str | None]:
    """The routine's newest revision, and why it cannot be used (None when it can)."""
    try:
        revision = routines.current_revision(conn, routine)
    except routines.BrokenRevision as broken:
        return None, broken.reason(routine.name)
    try:
        routines.timetable(revision)
    except routines.BrokenRevision as broken:
        return revision, broken.reason(routine.name)
    return revision, None


def usable(view: RoutineView) -> Revision:
    """The view's revision, or the error a person reads when the routine is broken."""
    if view.broken is not None or view.revision is None:
        raise routines.BrokenRoutine(view.routine.name, view.broken or "its revision is missing")
    return view.revision


def show(store: Store, name: str) -> RoutineView:
    with store.read() as conn:
        return routine_view(conn, routines.by_name(conn, name))


def list_routines(store: Store) -> list[RoutineView]:
    with store.read() as conn:
        paused_all = scheduling_paused(conn)
        return [routine_view(conn, routine, paused_all) for routine in routines.live(conn)]


@dataclass(frozen=True)
class HistoryRow:
    occurrence_id: str
    run_id: str | None
    kind: str
    utc: datetime
    local: str | None
    offset_seconds: int | None
    state: str
    disposition: str | None
    reason: str | None
    window_first: datetime | None
    window_last: datetime | None
    window_count: int | None
    cause: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "occurrence_id": self.occurrence_id,
            "run_id": self.run_id,
            "kind": self.kind,
            "utc": _iso(self.utc),
            "local": self.local,
            "offset": _offset_text(self.offset_seconds),
            "disposition": self.disposition,
            "state": self.state,
            "reason": self.reason,
            "window": None
            if self.window_count is None
            else {
                "first": _iso(self.window_first),
                "last": _iso(self.window_last),
                "count": self.window_count,
                "cause": self.cause,
            },
        }


def _offset_text(seconds: int | None) -> str | None:
    if seconds is None:
        return None
    sign, minutes = ("-" if seconds < 0 else "+"), abs(seconds) // 60
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def history(store: Store, name: str, limit: int = 20) -> tuple[RoutineView, list[HistoryRow]]:
    """Occurrences newest first (deleted routines' names are not searched)."""
    with store.read() as conn:
        view = routine_view(conn, routines.by_name(conn, name))
        rows = conn.execute(
            "SELECT id, run_id, kind, scheduled_utc, local_time, utc_offset, state, disposition, "
            "reason, window_first, window_last, window_count, cause FROM occurrences "
            "WHERE routine_id = ? ORDER BY scheduled_utc DESC, id DESC LIMIT ?",
            (view.routine.id, limit),
        )
        return view, [_history_row(row) for row in rows]


def _history_row(row: tuple[Any, ...]) -> HistoryRow:
    (oid, run_id, kind, at, local, offset, state, disposition, reason, first, last, count,
     cause) = row  # fmt: skip
    return HistoryRow(
        oid, run_id, kind, instant_from(at), local, offset, state, disposition, reason,
        maybe_instant_from(first), maybe_instant_from(last), count, cause,
    )  # fmt: skip


@dataclass(frozen=True)
class Explanation:
    view: RoutineView
    upcoming: Preview
    verdict: str  # why it would or would not run next, in one sentence
    next_run: BoundTime | None = None  # the first moment that will really run
    paused_all: bool = False  # all scheduling is paused


def explain(store: Store, name: str, now: datetime, count: int = 10) -> Explanation:
    with store.read() as conn:
        paused_all = scheduling_paused(conn)
        view = routine_view(conn, routines.by_name(conn, name), paused_all)
    start = max(now, view.routine.planned_through)
    upcoming = preview(routines.timetable(usable(view)), start, None, count)
    next_run = _next_run(view, start)
    verdict = _verdict(view, paused_all, next_run, bool(upcoming.moments))
    return Explanation(view, upcoming, verdict, next_run, paused_all)


def _next_run(view: RoutineView, start: datetime) -> BoundTime | None:
    """The first moment that will really run — looking past skipped ones, not just the
    range shown (a yearly rule's next few moments may all fall in DST gaps)."""
    moments = routines.timetable(usable(view)).moments_from(start)
    return next((m for m in islice(moments, 10_000) if not m.skipped), None)


def _verdict(
    view: RoutineView, paused_all: bool, first: BoundTime | None, any_moments: bool
) -> str:
    routine = view.routine
    because = f" ({routine.state_reason})" if routine.state_reason else ""
    if routine.state is not RoutineState.ACTIVE:
        return f"It will not run: the routine is {routine.state.value}{because}."
    if paused_all:
        return "It will not run: all scheduling is paused (coven resume --all)."
    if first is None and any_moments:
        zone = view.zone
        return (
            f"It will not run: its upcoming times do not exist in {zone} (they fall in "
            "daylight-saving gaps, and Coven never moves a run to another time)."
        )
    if first is None:
        return "It will not run again: its schedule has no further occurrences."
    return f"It will run next at {_iso(first.utc)} ({first.local:%Y-%m-%d %H:%M} local)."
