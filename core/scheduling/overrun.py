"""A run that takes far longer than its routine usually does (DESIGN §6, issue #18).

When an attempt is claimed, the routine's recent successful durations say what is usual, and
the attempt records when it would be overrunning: after :data:`FACTOR` times the median of
the last :data:`HISTORY` successes and at least :data:`MARGIN` more than it (a two-second
command is not "overrunning" at seven seconds); with fewer than :data:`MIN_HISTORY` successes,
after half its timeout (half the built-in default when it has none). Past that instant the
leader raises one ``overrun`` event and marks the attempt, in one transaction, so neither a
later pass nor a restart raises it again; ``coven attention`` lists the run until it ends. A
run is never stopped for overrunning: its timeout does that. The instant is part of the
pass's next deadline, so nothing polls for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from statistics import median
from typing import Any

import apsw

from coven_core import events
from coven_core.events import EventKind
from coven_core.notation.durations import NO_TIMEOUT
from coven_core.notation.i18n import _
from coven_core.operations import settings
from coven_core.store.codec import instant_from, instant_text

HISTORY = 20
MIN_HISTORY = 3
FACTOR = 3
MARGIN = timedelta(minutes=10)
NO_HISTORY_FRACTION = 0.5


def applied_timeout(
    own: timedelta | None, stored_default: str | None
) -> tuple[timedelta | None, str]:
    """The timeout an attempt runs under (None: no limit) and where it came from: the
    routine's own (``routine``, ``none`` included) or the global setting (``default``)."""
    if own is not None:
        return (None if own == NO_TIMEOUT else own), "routine"
    default = settings.default_timeout(stored_default)
    return (None if default == NO_TIMEOUT else default), "default"


def durations_sql(routine: str) -> str:
    """SQL for the durations, in seconds and comma-separated, of the routine's last
    :data:`HISTORY` successful attempts; ``routine`` is the SQL naming the routine's id."""
    return (
        "(SELECT group_concat(seconds) FROM (SELECT "
        "(julianday(a.exited_at) - julianday(a.started_at)) * 86400.0 AS seconds "
        "FROM occurrences o JOIN attempts a ON a.occurrence_id = o.id "
        f"WHERE o.routine_id = {routine} AND o.disposition = 'succeeded' "
        "AND a.failure_class IS NULL AND a.started_at IS NOT NULL AND a.exited_at IS NOT NULL "
        f"ORDER BY o.scheduled_utc DESC LIMIT {HISTORY}))"
    )


def durations_from(text: str | None) -> list[float]:
    return [float(part) for part in text.split(",")] if text else []


def budget(
    durations: Sequence[float], timeout: timedelta | None
) -> tuple[timedelta | None, timedelta | None]:
    """What the routine usually takes (None: too little history) and how long after its
    start an attempt is overrunning (None: its timeout comes first)."""
    usual = timedelta(seconds=median(durations)) if len(durations) >= MIN_HISTORY else None
    if usual is not None:
        after = max(usual * FACTOR, usual + MARGIN)
    else:
        reference = timeout or settings.default_timeout(None)
        after = reference * NO_HISTORY_FRACTION
    if timeout is not None and after >= timeout:
        return usual, None
    return usual, after


def describe(running: float | None, usual: float | None, locale: str) -> str:
    """``running for 3 hr; usually 4 min`` (Babel, in the user's locale)."""
    text = _("running for {running}", locale).format(running=_short(running, locale))
    if usual is None:
        return text + _("; no usual time yet", locale)
    return text + _("; usually {usual}", locale).format(usual=_short(usual, locale))


def _short(seconds: float | None, locale: str) -> str:
    if seconds is None:
        return "—"
    from babel.dates import format_timedelta  # only where an overrun is shown

    return format_timedelta(timedelta(seconds=seconds), format="short", threshold=1, locale=locale)


def earliest(conn: apsw.Connection) -> datetime | None:
    """When the next running attempt starts overrunning (already past: now)."""
    row = conn.execute(f"SELECT {EARLIEST}").fetchone()
    return None if row is None or row[0] is None else instant_from(row[0])


def _pending(table: str) -> str:
    """The partial index ``attempts_overrun``'s condition: not yet raised, still running."""
    return (f"{table}.overrun_after IS NOT NULL AND {table}.overrun_at IS NULL "
            f"AND {table}.state != 'settled'")  # fmt: skip


EARLIEST = f"(SELECT min(overrun_after) FROM attempts WHERE {_pending('attempts')})"
"""SQL for :func:`earliest`, by the partial index ``attempts_overrun`` (the agenda asks it)."""


def raise_due(conn: apsw.Connection, now: datetime) -> int:
    """Raise the overruns that are due, each once: returns how many."""
    rows: list[tuple[Any, ...]] = conn.execute(_DUE, (instant_text(now),)).fetchall()
    for attempt_id, occurrence_id, routine_id, run_id, name, started, usual in rows:
        conn.execute(
            "UPDATE attempts SET overrun_at = ? WHERE id = ?", (instant_text(now), attempt_id)
        )
        running = (now - instant_from(started)).total_seconds() if started else None
        events.record(
            conn, now, EventKind.OVERRUN, routine_id=routine_id, occurrence_id=occurrence_id,
            attempt_id=attempt_id, run_id=run_id, routine=name, running_seconds=running,
            usual_seconds=usual,
        )  # fmt: skip
    return len(rows)


_DUE = (
    "SELECT a.id, o.id, o.routine_id, o.run_id, r.name, a.started_at, a.usual_seconds "
    "FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id "
    f"JOIN routines r ON r.id = o.routine_id WHERE {_pending('a')} AND a.overrun_after <= ?"
)
