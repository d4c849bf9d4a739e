"""Routines and their immutable revisions in the store (DESIGN §5)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import apsw

from coven_core.errors import CovenError, ScheduleError, ValidationError, ZoneError
from coven_core.model import (
    MisfirePolicy,
    OverlapPolicy,
    Revision,
    RevisionSpec,
    Routine,
    RoutineState,
)
from coven_core.notation.i18n import written_down
from coven_core.store.codec import (
    delta_from,
    instant_from,
    instant_text,
    maybe_instant_from,
    maybe_instant_text,
    seconds_of,
)
from coven_core.tz import tzdb
from coven_core.tz.binding import DST_POLICY
from coven_core.views.glance import SCHEDULING_PAUSED

if TYPE_CHECKING:
    from coven_core.schedule.timetable import Timetable


class UnknownRoutine(ValidationError):
    def __init__(self, name: str) -> None:
        super().__init__(f"no routine named {name!r} (see: coven routine list)")


class BrokenRevision(CovenError):
    """A stored revision that can no longer be loaded: a zone the tz database has lost, a
    schedule this version refuses, a damaged or missing row. Its routine is *broken* — it
    plans nothing until an edit supersedes the revision, or it is deleted — and every other
    routine goes on (DESIGN §6: each routine is its own fault domain)."""

    def __init__(self, number: int, problem: str, fix: str | None) -> None:
        self.number, self.problem, self.fix = number, problem, fix
        super().__init__(f"revision {number} cannot be loaded: {problem}")

    def reason(self, name: str) -> str:
        """What is wrong with routine ``name`` and how a person mends it."""
        if self.fix is None:  # nothing to edit from: the stored row itself is unusable
            mend = f"delete it (coven routine delete {name}) and add it again"
        else:
            mend = f"edit it (coven routine edit {name} {self.fix}) or delete it"
        return f"{self}; {mend}"


class BrokenRoutine(CovenError):
    """A request that needs a broken routine's schedule (explain it, resume it): refused,
    saying what is wrong and how to mend it."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"routine {name!r} is broken: {reason}")


COLUMNS = "id, name, state, state_reason, revision, planned_through, next_due, created_at"
"""A routine row's columns, in the order :func:`from_row` reads them."""


def from_row(row: Sequence[Any]) -> Routine:
    rid, name, state, reason, revision, through, next_due, created = row
    return Routine(
        rid, name, RoutineState(state), reason, revision, instant_from(through),
        maybe_instant_from(next_due), instant_from(created),
    )  # fmt: skip


def by_name(conn: apsw.Connection, name: str) -> Routine:
    """The live routine with this name (deleted ones keep their history, not their name)."""
    return _one(conn, "name = ? AND state != 'deleted'", name)


def by_id(conn: apsw.Connection, routine_id: str) -> Routine:
    return _one(conn, "id = ?", routine_id)


def _one(conn: apsw.Connection, where: str, key: str) -> Routine:
    row = conn.execute(f"SELECT {COLUMNS} FROM routines WHERE {where}", (key,)).fetchone()
    if row is None:
        raise UnknownRoutine(key)
    return from_row(row)


def live(conn: apsw.Connection) -> list[Routine]:
    rows = conn.execute(f"SELECT {COLUMNS} FROM routines WHERE state != 'deleted' ORDER BY name")
    return [from_row(row) for row in rows]


def active(conn: apsw.Connection) -> list[Routine]:
    rows = conn.execute(f"SELECT {COLUMNS} FROM routines WHERE state = 'active' ORDER BY name")
    return [from_row(row) for row in rows]


def broken(conn: apsw.Connection) -> list[tuple[Routine, BrokenRevision]]:
    """Active routines that plan nothing because their revision does not load. A pass (or a
    start's review) leaves such a routine with nothing due, so only those are looked at."""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM routines WHERE state = 'active' AND next_due IS NULL"
    )
    found = [(routine, breakage(conn, routine)) for routine in map(from_row, rows)]
    return [(routine, why) for routine, why in found if why is not None]


def due(conn: apsw.Connection, now: datetime, limit: int) -> list[Routine]:
    """Active routines with a moment to decide by ``now`` (indexed on next_due) — none while
    all scheduling is paused (asked in the same statement: a pass saves a read)."""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM routines WHERE state = 'active' AND next_due <= ? "
        f"AND NOT {SCHEDULING_PAUSED} ORDER BY next_due LIMIT ?",
        (instant_text(now), limit),
    )
    return [from_row(row) for row in rows]


def insert(conn: apsw.Connection, routine: Routine) -> None:
    conn.execute(
        "INSERT INTO routines (id, name, state, state_reason, state_changed_at, revision, "
        "planned_through, next_due, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            routine.id, routine.name, routine.state.value, routine.state_reason,
            instant_text(routine.created_at), routine.revision,
            instant_text(routine.planned_through), maybe_instant_text(routine.next_due),
            instant_text(routine.created_at),
        ),
    )  # fmt: skip


def set_state(
    conn: apsw.Connection, routine_id: str, state: RoutineState, reason: str | None, now: datetime
) -> None:
    conn.execute(
        "UPDATE routines SET state = ?, state_reason = ?, state_changed_at = ? WHERE id = ?",
        (state.value, reason, instant_text(now), routine_id),
    )


def advance(
    conn: apsw.Connection, routine_id: str, planned_through: datetime, next_due: datetime | None
) -> None:
    """Move the planning cursor forward; it never moves back (a backward clock jump must not
    re-plan anything already decided)."""
    conn.execute(
        "UPDATE routines SET planned_through = max(planned_through, ?), next_due = ? WHERE id = ?",
        (instant_text(planned_through), maybe_instant_text(next_due), routine_id),
    )


def insert_revision(conn: apsw.Connection, revision: Revision) -> None:
    spec = revision.spec
    conn.execute(
        "INSERT INTO revisions (routine_id, number, schedule, timezone, zone_source, anchor, "
        "tzdb_version, dst_policy, misfire, grace_seconds, overlap, timeout_seconds, retries, "
        "idempotent, argv, cwd, env, effective_from, created_at, shell, stop_grace_seconds, "
        "quarantine_after, except_dates, shadow, max_runs_per_day, max_runtime_per_day_seconds, "
        "cooldown_seconds, cooldown_max_seconds, group_name, after_routine, after_outcome, "
        "on_ac_power, when_online, keep_awake) "
        f"VALUES ({', '.join('?' * 34)})",
        (
            revision.routine_id, revision.number, spec.schedule, spec.timezone, spec.zone_source,
            instant_text(revision.anchor), revision.tzdb_version, revision.dst_policy,
            spec.misfire.value, seconds_of(spec.grace), spec.overlap.value,
            seconds_of(spec.timeout), spec.retries, int(spec.idempotent), json.dumps(spec.argv),
            spec.cwd, json.dumps(dict(spec.env)), instant_text(revision.effective_from),
            instant_text(revision.created_at), int(spec.shell), spec.stop_grace.total_seconds(),
            spec.quarantine_after, json.dumps([day.isoformat() for day in spec.except_dates]),
            int(spec.shadow), spec.max_runs_per_day, seconds_of(spec.max_runtime_per_day),
            seconds_of(spec.cooldown), seconds_of(spec.cooldown_max), spec.group, spec.after,
            spec.after_outcome, int(spec.on_ac_power), int(spec.when_online),
            int(spec.keep_awake),
        ),
    )  # fmt: skip
    conn.execute(
        "UPDATE routines SET revision = ? WHERE id = ?", (revision.number, revision.routine_id)
    )


_REVISION_COLUMNS = (
    "routine_id, number, schedule, timezone, zone_source, anchor, tzdb_version, "
    "dst_policy, misfire, grace_seconds, overlap, timeout_seconds, retries, idempotent, "
    "argv, cwd, env, effective_from, created_at, shell, stop_grace_seconds, quarantine_after, "
    "except_dates, shadow, max_runs_per_day, max_runtime_per_day_seconds, cooldown_seconds, "
    "cooldown_max_seconds, group_name, after_routine, after_outcome, on_ac_power, "
    "when_online, keep_awake"
)
"""A revision row's columns, in the order :func:`_revision` reads them."""


def revisions(conn: apsw.Connection, routine_id: str) -> list[Revision]:
    rows = conn.execute(
        f"SELECT {_REVISION_COLUMNS} FROM revisions WHERE routine_id = ? ORDER BY number",
        (routine_id,),
    )
    return [_decoded(row) for row in rows]


#: Stored revision rows decoded, by routine id and number, with the row each came from.
#: Decoding is a function of the row alone, so a row equal to the one kept decodes to the
#: revision kept: a damaged or different row (another store, a repair) is decoded anew.
#: Decoding every routine's revisions was most of the Routines page's read
#: (bench_routines_page, "its reload"); comparing a row costs a fraction of it.
_DECODED: dict[tuple[str, int], tuple[tuple[Any, ...], Revision]] = {}
_KEEP_DECODED = 8192  # rows; then the cache starts again (a bound, not an LRU)


def _decoded(row: tuple[Any, ...]) -> Revision:
    key = (row[0], row[1])
    kept = _DECODED.get(key)
    if kept is not None and kept[0] == row:
        return kept[1]
    try:
        revision = _revision(row)
    except (ValueError, TypeError, KeyError) as error:  # bad JSON, enum value or instant
        raise BrokenRevision(row[1], f"its stored row is damaged ({error})", None) from error
    if len(_DECODED) >= _KEEP_DECODED:
        _DECODED.clear()  # another thread may be reading: it only misses
    _DECODED[key] = (row, revision)
    return revision


def _revision(row: tuple[Any, ...]) -> Revision:
    (rid, number, schedule, zone, zone_source, anchor, tzdb_version, policy, misfire, grace,
     overlap, timeout, retries, idempotent, argv, cwd, env, effective, created, shell, grace_stop,
     quarantine_after, except_dates, shadow, max_runs, max_runtime, cooldown,
     cooldown_max, group, after, after_outcome, on_ac, online, keep_awake) = row  # fmt: skip
    spec = RevisionSpec(
        schedule=schedule, timezone=zone, argv=tuple(json.loads(argv)), zone_source=zone_source,
        misfire=MisfirePolicy(misfire), grace=delta_from(grace), overlap=OverlapPolicy(overlap),
        timeout=delta_from(timeout), retries=retries, idempotent=bool(idempotent), cwd=cwd,
        env=tuple(sorted(json.loads(env).items())), shell=bool(shell),
        stop_grace=timedelta(seconds=grace_stop), quarantine_after=quarantine_after,
        except_dates=tuple(date.fromisoformat(day) for day in json.loads(except_dates)),
        shadow=bool(shadow), max_runs_per_day=max_runs, max_runtime_per_day=delta_from(max_runtime),
        cooldown=delta_from(cooldown), cooldown_max=delta_from(cooldown_max), group=group,
        after=after, after_outcome=after_outcome, on_ac_power=bool(on_ac),
        when_online=bool(online), keep_awake=bool(keep_awake),
    )  # fmt: skip
    return Revision(
        rid, number, spec, instant_from(anchor), tzdb_version, policy,
        instant_from(effective), instant_from(created),
    )  # fmt: skip


def revisions_of(conn: apsw.Connection, routine: Routine) -> list[Revision]:
    """The routine's revisions, oldest first, up to the one its row names as newest."""
    return _up_to_newest(routine, revisions(conn, routine.id))


def _up_to_newest(routine: Routine, found: list[Revision]) -> list[Revision]:
    if not found or found[-1].number != routine.revision:
        raise BrokenRevision(routine.revision, "it is missing from the store", None)
    return found


def current_revision(conn: apsw.Connection, routine: Routine) -> Revision:
    return revisions_of(conn, routine)[-1]


def loaded(
    conn: apsw.Connection, routine: Routine
) -> tuple[Revision | None, BrokenRevision | None]:
    """The routine's newest revision (None if it cannot be read), and why it cannot be used
    (None when it binds)."""
    try:
        revision = current_revision(conn, routine)
    except BrokenRevision as broken:
        return None, broken
    return _binding(revision)


def loaded_live(
    conn: apsw.Connection,
) -> list[tuple[Routine, Revision | None, BrokenRevision | None]]:
    """Every live routine, by name, with what :func:`loaded` says of it. Their revisions are
    read in one query, not one a routine: a query per routine was a third of the Routines
    page's read (bench_routines_page, "its reload")."""
    return _all_loaded(conn, live(conn), "state != 'deleted'")


def loaded_active(
    conn: apsw.Connection,
) -> list[tuple[Routine, Revision | None, BrokenRevision | None]]:
    """Every active routine, by name, with what :func:`loaded` says of it, its revisions
    read in one query: what a start reviews (bench_idle, "launch", with 1,000 routines)."""
    return _all_loaded(conn, active(conn), "state = 'active'")


def _all_loaded(
    conn: apsw.Connection, found: list[Routine], which: str
) -> list[tuple[Routine, Revision | None, BrokenRevision | None]]:
    """``found`` with what :func:`loaded` says of each; ``which`` selects the same routines
    (their revisions are read in one query)."""
    rows_of: dict[str, list[tuple[Any, ...]]] = {}
    for row in conn.execute(
        f"SELECT {_REVISION_COLUMNS} FROM revisions WHERE routine_id IN "
        f"(SELECT id FROM routines WHERE {which}) ORDER BY routine_id, number"
    ):
        rows_of.setdefault(row[0], []).append(row)
    return [(routine, *_loaded_from(routine, rows_of.get(routine.id, []))) for routine in found]


def _loaded_from(
    routine: Routine, rows: list[tuple[Any, ...]]
) -> tuple[Revision | None, BrokenRevision | None]:
    try:
        revision = _up_to_newest(routine, [_decoded(row) for row in rows])[-1]
    except BrokenRevision as broken:
        return None, broken
    return _binding(revision)


def _binding(revision: Revision) -> tuple[Revision, BrokenRevision | None]:
    """The revision, and why its schedule does not bind (None when it does)."""
    try:
        timetable(revision)
    except BrokenRevision as broken:
        return revision, broken
    return revision, None


def breakage(conn: apsw.Connection, routine: Routine) -> BrokenRevision | None:
    """Why the routine's newest revision cannot be loaded, or None when it can."""
    return loaded(conn, routine)[1]


@lru_cache(maxsize=4096)
def timetable(revision: Revision) -> Timetable:
    """The revision's timetable. Revisions are immutable, so one build serves every pass.

    A stored revision that no longer binds (a tz database without its zone, a parser that
    now refuses its schedule) raises :class:`BrokenRevision`."""
    from coven_core.schedule.timetable import Timetable  # not for readers like `coven status`

    spec = revision.spec
    try:
        with written_down():  # why it is broken goes into the event log
            return Timetable.build(spec.schedule, spec.timezone, revision.anchor)
    except ZoneError as error:
        raise BrokenRevision(revision.number, str(error), "--tz ZONE") from error
    except ScheduleError as error:
        raise BrokenRevision(revision.number, str(error), "--schedule TEXT") from error


def new_revision(
    routine_id: str, number: int, spec: RevisionSpec, anchor: datetime, now: datetime
) -> Revision:
    """A revision bound to the active tz database and the current DST policy."""
    return Revision(routine_id, number, spec, anchor, tzdb.active().version, DST_POLICY, now, now)
