"""The timeline query: what happened and what will happen, per routine, over a time range
(DESIGN §12, issue #8). Read-only, one snapshot, Qt-free.

For ``[start, end)`` and every live routine it returns

* the **recorded** occurrences whose scheduled instant lies in the range (any state: planned,
  claimed, running or settled with its disposition and reason);
* the **coalesced windows** (missed while asleep or not running, or paused) that overlap the
  range, each as one band with its first, last and count — never one row per missed moment;
* the **planned** future moments from the current revision's timetable, from the routine's
  ``planned_through`` on (only active routines plan), gaps marked as skipped;
* the **DST transitions** of each routine's zone in the range;

and, for the whole range, the machine's **sleep** and the app's **downtime** bands and *now*.

Bands come from the events the scheduler records (:mod:`coven_core.scheduling.watch`): ``slept``
with the
interval the clocks proved, and ``downtime`` — written by the first pass of a process, from
the previous process's last recorded pass to its own start. Both events are stamped at the
interval's *end*, so a band overlapping ``[start, end)`` is an event stamped in that range or
the first one stamped after it (intervals of one kind never overlap).

Every read is indexed (``occurrences_history``, ``events_intervals``) and bounded: by the range,
by :data:`MAX_RANGE`, and by ``limit`` items per routine and kind (``truncated`` says so).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

import apsw

from coven_core.errors import ValidationError
from coven_core.model import OccurrenceKind, Revision, Routine, RoutineState
from coven_core.notation.i18n import _
from coven_core.scheduling import routines
from coven_core.store.codec import instant_from, instant_text, maybe_instant_from
from coven_core.store.store import Store
from coven_core.tz import tzdb
from coven_core.tz.transitions import Transition, transitions_between

#: The widest range one query may cover (the timeline zooms out to a month; a year of
#: transitions is what the explanation lists).
MAX_RANGE = timedelta(days=400)
#: Items per routine and kind (recorded, planned) one query returns at most.
DEFAULT_LIMIT = 50_000
#: How far back from ``start`` to look for a coalesced window that began before the range.
#: Inside a window no other rows exist but gap skips and manual runs, so a few rows suffice.
_WINDOW_LOOKBACK_ROWS = 16

BAND_ASLEEP = "asleep"
BAND_APP_NOT_RUNNING = "app_not_running"


@dataclass(frozen=True, slots=True)
class RecordedOccurrence:
    """An occurrence in the store: ``disposition`` is None until it is settled."""

    id: str
    kind: str  # scheduled or manual
    utc: datetime
    local: datetime | None  # naive wall time in the routine's zone
    offset_seconds: int | None
    local_kind: str | None  # regular, nonexistent or repeated
    state: str
    disposition: str | None
    reason: str | None
    # When its command ran: the first attempt's start to the last one's end (an ambiguous
    # attempt's own start: nobody saw it end), None while an attempt still runs (the timeline
    # draws it as a bar growing to now); None if none started.
    ran_from: datetime | None = None
    ran_until: datetime | None = None


@dataclass(frozen=True, slots=True)
class CoalescedWindow:
    """One disposition for a whole window of moments (missed or paused), drawn as one band."""

    id: str
    first: datetime
    last: datetime
    count: int
    reason: str  # missed, paused, quarantined, …
    cause: str | None  # asleep, app_not_running, clock_jump, paused, …


@dataclass(frozen=True, slots=True)
class PlannedMoment:
    """A future moment from the timetable; ``skipped`` for a wall time in a DST gap."""

    utc: datetime
    local: datetime
    offset_seconds: int
    local_kind: str
    skipped: bool


@dataclass(frozen=True, slots=True)
class Band:
    """Time with nothing run: the machine asleep, or the app not running."""

    kind: str  # BAND_ASLEEP or BAND_APP_NOT_RUNNING
    start: datetime
    end: datetime


@dataclass(frozen=True)
class Lane:
    """One routine's row of the timeline."""

    routine_id: str
    name: str
    zone: str
    state: str
    recorded: tuple[RecordedOccurrence, ...]
    windows: tuple[CoalescedWindow, ...]
    planned: tuple[PlannedMoment, ...]
    transitions: tuple[Transition, ...]
    truncated: bool  # more items than ``limit`` in the range: narrow it to see them all
    #: The current revision is a trial (DESIGN §14): its moments are decided as if live and
    #: its command never starts, so the row is drawn as a trial lane.
    trial: bool = False


@dataclass(frozen=True)
class Timeline:
    start: datetime
    end: datetime
    now: datetime
    lanes: tuple[Lane, ...]
    bands: tuple[Band, ...]
    tzdb_version: str


def timeline(
    store: Store, start: datetime, end: datetime, now: datetime, limit: int = DEFAULT_LIMIT
) -> Timeline:
    """Everything the timeline draws for ``[start, end)`` (aware datetimes)."""
    _check_range(start, end)
    with store.read() as conn:
        lanes = tuple(_lane(conn, routine, start, end, limit) for routine in routines.live(conn))
        found = tuple(bands(conn, start, end))
    return Timeline(start, end, now, lanes, found, tzdb.active().version)


def _check_range(start: datetime, end: datetime) -> None:
    if start.utcoffset() is None or end.utcoffset() is None:
        raise ValidationError(_("a timeline range needs aware instants (with a UTC offset)"))
    if end <= start:
        raise ValidationError(
            _("the timeline range ends ({end}) before it starts ({start})").format(
                end=end, start=start
            )
        )
    if end - start > MAX_RANGE:
        raise ValidationError(
            _("a timeline range covers at most {days} days").format(days=MAX_RANGE.days)
        )


def _lane(
    conn: apsw.Connection, routine: Routine, start: datetime, end: datetime, limit: int
) -> Lane:
    revision = routines.current_revision(conn, routine)
    rows = _rows_in_range(conn, routine.id, start, end, limit + 1)
    windows = [*_window_reaching_in(conn, routine.id, start), *_windows(rows)]
    recorded = [_recorded(row) for row in rows if row[1] != OccurrenceKind.COALESCED.value]
    planned = _planned(routine, revision, start, end, limit + 1)
    truncated = len(rows) > limit or len(planned) > limit
    zone = revision.spec.timezone
    return Lane(
        routine.id, routine.name, zone, routine.state.value, tuple(recorded[:limit]),
        tuple(windows), tuple(planned[:limit]), zone_transitions(zone, start, end), truncated,
        revision.spec.shadow,
    )  # fmt: skip


# An ambiguous attempt's "end" is when recovery found it, not a time anyone measured: it
# ends the bar where it began (views.runs leaves it out of a run's duration the same way).
_ATTEMPT_END = (
    "CASE WHEN a.failure_class IS 'ambiguous' THEN a.started_at "
    "ELSE coalesce(a.exited_at, a.settled_at) END"
)
_COLUMNS = (
    "id, kind, scheduled_utc, local_time, utc_offset, local_kind, state, disposition, reason, "
    "window_first, window_last, window_count, cause, "
    # by the attempts' unique (occurrence_id, number) index: a few rows per occurrence
    "(SELECT min(a.started_at) FROM attempts a WHERE a.occurrence_id = occurrences.id), "
    "(SELECT CASE WHEN count(*) = count(coalesce(a.exited_at, a.settled_at)) "
    f"THEN max({_ATTEMPT_END}) END FROM attempts a "
    "WHERE a.occurrence_id = occurrences.id AND a.started_at IS NOT NULL)"
)


def _rows_in_range(
    conn: apsw.Connection, routine_id: str, start: datetime, end: datetime, limit: int
) -> list[tuple[Any, ...]]:
    return list(
        conn.execute(
            f"SELECT {_COLUMNS} FROM occurrences WHERE routine_id = ? AND scheduled_utc >= ? "
            "AND scheduled_utc < ? ORDER BY scheduled_utc, id LIMIT ?",
            (routine_id, instant_text(start), instant_text(end), limit),
        )
    )


def _window_reaching_in(
    conn: apsw.Connection, routine_id: str, start: datetime
) -> list[CoalescedWindow]:
    """A coalesced window that began before ``start`` and lasts into the range (its row is
    keyed by its first moment, so the range query cannot see it)."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM occurrences WHERE routine_id = ? AND scheduled_utc < ? "
        "ORDER BY scheduled_utc DESC LIMIT ?",
        (routine_id, instant_text(start), _WINDOW_LOOKBACK_ROWS),
    )
    reaching = [w for w in _windows(rows) if w.last >= start]
    return reaching[:1]


def _windows(rows: Iterable[tuple[Any, ...]]) -> list[CoalescedWindow]:
    return [_window(row) for row in rows if row[1] == OccurrenceKind.COALESCED.value]


def _window(row: tuple[Any, ...]) -> CoalescedWindow:
    oid, reason, first, last, count, cause = row[0], row[8], row[9], row[10], row[11], row[12]
    return CoalescedWindow(oid, instant_from(first), instant_from(last), int(count), reason, cause)


def _recorded(row: tuple[Any, ...]) -> RecordedOccurrence:
    oid, kind, utc, local, offset, local_kind, state, disposition, reason = row[:9]
    wall = None if local is None else datetime.fromisoformat(local)
    ran_from, ran_until = row[13], row[14]
    return RecordedOccurrence(
        oid, kind, instant_from(utc), wall, offset, local_kind, state, disposition, reason,
        maybe_instant_from(ran_from), None if ran_from is None else maybe_instant_from(ran_until),
    )  # fmt: skip


def _planned(
    routine: Routine, revision: Revision, start: datetime, end: datetime, limit: int
) -> list[PlannedMoment]:
    """Moments not yet decided: from ``planned_through`` (every earlier one is in the store)."""
    if routine.state is not RoutineState.ACTIVE:
        return []  # paused, quarantined: nothing will be planned until a person acts
    begin = max(start, routine.planned_through)
    if begin >= end:
        return []
    moments = routines.timetable(revision).moments_between(begin, end, limit)
    return [
        PlannedMoment(m.utc, m.local, int(m.offset.total_seconds()), m.kind.value, m.skipped)
        for m in moments
    ]


def zone_transitions(zone_key: str, start: datetime, end: datetime) -> tuple[Transition, ...]:
    """The offset changes of a zone in ``[start, end)``; none for UTC."""
    if zone_key in ("UTC", "Etc/UTC"):
        return ()
    return _cached_transitions(zone_key, tzdb.active().version, start, end)


@lru_cache(maxsize=256)
def _cached_transitions(
    key: str, version: str, start: datetime, end: datetime
) -> tuple[Transition, ...]:
    """Memoised per tz database: routines share zones, and the timeline asks again."""
    return tuple(transitions_between(tzdb.zone(key), start, end))


_BAND_KINDS = {"slept": BAND_ASLEEP, "downtime": BAND_APP_NOT_RUNNING}
_BAND_LIMIT = 10_000


def bands(conn: apsw.Connection, start: datetime, end: datetime) -> list[Band]:
    """Sleep and downtime intervals overlapping ``[start, end)``, in order of their start."""
    window = (instant_text(start), instant_text(end))
    rows = [
        *conn.execute(
            "SELECT kind, data FROM events WHERE kind IN ('slept', 'downtime') "
            "AND at >= ? AND at < ? ORDER BY at LIMIT ?",
            (*window, _BAND_LIMIT),
        ),
        *_band_after(conn, "slept", window[1]),
        *_band_after(conn, "downtime", window[1]),
    ]
    found = [band for band in map(_band, rows) if band.start < end and band.end >= start]
    return sorted(set(found), key=lambda band: (band.start, band.kind))


def _band_after(conn: apsw.Connection, kind: str, end: str) -> list[tuple[Any, ...]]:
    """The first interval of ``kind`` stamped at or after ``end``: it may have begun before."""
    return list(
        conn.execute(  # the IN term lets SQLite use the partial index
            "SELECT kind, data FROM events WHERE kind IN ('slept', 'downtime') AND kind = ? "
            "AND at >= ? ORDER BY at LIMIT 1",
            (kind, end),
        )
    )


def _band(row: tuple[Any, ...]) -> Band:
    kind, data = row
    interval = json.loads(data)
    return Band(_BAND_KINDS[kind], _instant(interval["start"]), _instant(interval["end"]))


def _instant(text: str) -> datetime:
    """The events write ``isoformat()`` or the store's own format; both parse here."""
    parsed = maybe_instant_from(text) if text.endswith("Z") and "." in text else None
    return parsed or datetime.fromisoformat(text)
