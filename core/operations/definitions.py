"""Routine definitions: add, edit, delete (DESIGN §5).

Each function runs inside the caller's write transaction, validates before it writes, and
records its event there; :class:`coven_core.operator.Operator` audits and wakes.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta

import apsw

from coven_core import events
from coven_core.errors import ScheduleError, ValidationError
from coven_core.events import EventKind
from coven_core.model import RevisionSpec, Routine, RoutineState, SkipReason
from coven_core.notation import reasons
from coven_core.notation.i18n import N_, _
from coven_core.notation.limits import (
    LATEST_YEAR,
    MOST_QUARANTINE_AFTER,
    MOST_RETRIES,
    at_most,
    check_duration,
)
from coven_core.operations.routine_names import check_name
from coven_core.schedule.timetable import AFTER_ONLY, ScheduleKind, Timetable
from coven_core.scheduling import chains, ids, occurrences, routines
from coven_core.scheduling.decisions import close_broken
from coven_core.scheduling.occurrences import operator_stamp
from coven_core.scheduling.planner import next_due
from coven_core.store.codec import instant_from, maybe_instant_text
from coven_core.tz.local import resolve_local_zone

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_JUST_AFTER = timedelta(microseconds=1)
#: How many moments from now ``check_can_run`` looks through for one that is not skipped.
_MOMENTS_TO_FIND_ONE = 1000


class DuplicateRoutine(ValidationError):
    def __init__(self, name: str) -> None:
        super().__init__(f"a routine named {name!r} already exists (choose another name)")


def add(
    conn: apsw.Connection, now: datetime, name: str, spec: RevisionSpec, anchor: datetime | None
) -> str:
    """Create a routine; returns its id."""
    check_name(name)  # here, not in validated: an edit keeps a name given before the rule
    spec = validated(name, spec)
    anchor = anchor or now
    table = Timetable.build(spec.schedule, spec.timezone, anchor)
    check_can_run(table, now)
    if _name_taken(conn, name):
        raise DuplicateRoutine(name)
    chains.check_no_loop(conn, name, spec.after)
    routine_id = ids.new_routine_id()
    routine = Routine(
        routine_id, name, RoutineState.ACTIVE, None, 1, now, first_due(table, now), now
    )
    routines.insert(conn, routine)
    routines.insert_revision(conn, routines.new_revision(routine_id, 1, spec, anchor, now))
    events.record(conn, now, EventKind.ROUTINE_ADDED, routine_id=routine_id, name=name)
    return routine_id


def edit(
    conn: apsw.Connection,
    now: datetime,
    name: str,
    change: Callable[[RevisionSpec], RevisionSpec],
    anchor: datetime | None,
) -> int:
    """A new revision from the current one; re-plans only moments from now on.

    The anchor (RRULE DTSTART, interval origin) is kept while the schedule is unchanged;
    a new schedule is anchored at ``anchor`` or now."""
    routine = routines.by_name(conn, name)
    current = routines.current_revision(conn, routine)
    spec = validated(name, change(current.spec))
    chains.check_no_loop(conn, name, spec.after)
    if anchor is None:
        anchor = current.anchor if spec.schedule == current.spec.schedule else now
    table = Timetable.build(spec.schedule, spec.timezone, anchor)
    if (spec.schedule, spec.timezone, anchor) != (
        current.spec.schedule,
        current.spec.timezone,
        current.anchor,
    ):
        check_can_run(table, now)  # a routine that ran out may still have its options edited
    number = current.number + 1
    # In force from now, but never over moments already decided (a backward clock jump can
    # put "now" before the planning cursor). It may start before the current revision was
    # due to take effect (an edit, a jump back, another edit): that one is then superseded
    # whole and decides nothing (planning.segments).
    effective = max(now, routine.planned_through)
    close_broken(conn, routine, effective, operator_stamp(conn, now))
    routines.insert_revision(
        conn, replace(routines.new_revision(routine.id, number, spec, anchor, now),
                      effective_from=effective),
    )  # fmt: skip
    conn.execute(
        "UPDATE routines SET next_due = ? WHERE id = ?",
        (maybe_instant_text(first_due(table, effective)), routine.id),
    )
    events.record(conn, now, EventKind.ROUTINE_EDITED, routine_id=routine.id, revision=number)
    return number


def delete(conn: apsw.Connection, now: datetime, name: str) -> str:
    """No future planning; history is kept; a run in flight is not touched."""
    routine = routines.by_name(conn, name)
    close_broken(conn, routine, now, operator_stamp(conn, now))
    routines.set_state(conn, routine.id, RoutineState.DELETED, reasons.DELETED_BY_A_PERSON, now)
    _skip_waiting(conn, routine.id, SkipReason.DELETED, now)
    events.record(conn, now, EventKind.ROUTINE_DELETED, routine_id=routine.id, name=name)
    return routine.id


def validated(name: str, spec: RevisionSpec) -> RevisionSpec:
    """Check everything a revision says before anything is written."""
    if not spec.argv or not spec.argv[0]:
        raise ValidationError(_("the command is empty: give it after --, e.g. -- /usr/bin/backup"))
    if spec.shell and len(spec.argv) != 1:
        raise ValidationError(_("with --shell, give the whole command as one argument after --"))
    if spec.retries < 0:
        raise ValidationError(_("{option} must be 0 or more").format(option="--retries"))
    at_most(spec.retries, MOST_RETRIES, "--retries")
    if spec.quarantine_after < 0:
        raise ValidationError(_("{option} must be 0 or more").format(option="--quarantine-after"))
    at_most(spec.quarantine_after, MOST_QUARANTINE_AFTER, "--quarantine-after")
    for what, duration in (("--grace", spec.grace), ("--timeout", spec.timeout),
                           ("--stop-grace", spec.stop_grace)):  # fmt: skip
        if duration is not None:
            check_duration(duration, what)
    if spec.schedule.strip().lower() == AFTER_ONLY and spec.after is None:
        raise ValidationError(
            _("{name!r} has no schedule of its own: give --after ROUTINE, or a --schedule").format(
                name=name
            )
        )
    if spec.after_outcome not in ("succeeded", "finished"):
        raise ValidationError(_("--after: the outcome is :succeeded or :finished"))
    _check_surroundings(spec)
    if spec.timezone.strip().lower() == "local":
        local = resolve_local_zone()
        spec = replace(spec, timezone=local.key, zone_source=f"local: {local.source}")
    return spec


def _check_surroundings(spec: RevisionSpec) -> None:
    """The command's environment names and working directory."""
    for key, _value in spec.env:
        if not _ENV_NAME.fullmatch(key):
            raise ValidationError(
                _("environment name {key!r} is not valid (letters, digits, _)").format(key=key)
            )
    if spec.cwd is not None and not os.path.isabs(spec.cwd):
        raise ValidationError(
            _("working directory {cwd!r} must be an absolute path").format(cwd=spec.cwd)
        )


def _name_taken(conn: apsw.Connection, name: str) -> bool:
    try:
        routines.by_name(conn, name)
    except routines.UnknownRoutine:
        return False
    return True


def check_can_run(table: Timetable, now: datetime) -> None:
    """Refuse a schedule with no moment from ``now`` on that can run (issue 19): a ``once``
    in the past or in a DST gap, an RRULE whose UNTIL has passed. Stored, it would sit
    silently forever; and Coven never moves a run to another time. A routine only a chain
    runs (``after``) has no moment of its own, by design."""
    if table.kind is ScheduleKind.AFTER:
        return
    seen = 0
    for moment in itertools.islice(table.moments_from(now), _MOMENTS_TO_FIND_ONE):
        if not moment.skipped:
            return
        if table.kind is ScheduleKind.ONCE:
            gap = N_("{schedule} can never run: {time} does not exist in {zone} (the clocks "
                     "skip it), and Coven never moves a run to another time")  # fmt: skip
            raise _never(table, gap, time=f"{moment.local:%Y-%m-%dT%H:%M}")
        seen += 1
    if seen < _MOMENTS_TO_FIND_ONE:  # so many skipped moments in a row is no proof
        raise _never(table, _why_never(table))


def _why_never(table: Timetable) -> str:
    if table.kind is ScheduleKind.ONCE:
        return N_("{schedule} can never run: its time has passed in {zone}")
    if table.kind is ScheduleKind.RRULE:
        return N_("{schedule} can never run: its last time (UNTIL or COUNT) has passed")
    return N_("{schedule} can never run: it has no time before the end of planning ({year})")


def _never(table: Timetable, problem: str, **values: str) -> ScheduleError:
    """``problem`` (marked with N_) about ``table``, in the reader's language."""
    return ScheduleError(
        _(problem).format(schedule=table.spec, zone=table.zone_key, year=LATEST_YEAR + 1, **values)
    )


def first_due(table: Timetable, start: datetime) -> datetime | None:
    """The first instant at or after ``start`` that needs deciding."""
    return next_due(table, start - _JUST_AFTER)


def _skip_waiting(
    conn: apsw.Connection, routine_id: str, reason: SkipReason, now: datetime
) -> None:
    rows = conn.execute(
        "SELECT id, revision, scheduled_utc FROM occurrences "
        "WHERE routine_id = ? AND state = 'planned'",
        (routine_id,),
    )
    stamp = operator_stamp(conn, now)
    for oid, revision, at in list(rows):
        item = occurrences.Waiting(oid, routine_id, revision, instant_from(at))
        occurrences.skip(conn, item, reason, stamp)
