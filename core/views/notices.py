"""Notifications a person can act on (issue #21.2): an engine event as a :class:`Notice` that
names the routine and the outcome (``backup failed``), says why (``exit 1: rsync: connection
refused``) and which run to open; :func:`throttle` keeps a storm to a few notices and folds
the rest into one; :func:`wake_summary` says once what was missed while the machine slept or
Coven was not running, and what Coven did about it.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import apsw

from coven_core.events import Event, EventKind
from coven_core.notation.i18n import N_, _, ngettext
from coven_core.notation.reasons import reason_text
from coven_core.scheduling import overrun
from coven_core.store.codec import maybe_instant_from
from coven_core.store.store import Store

#: At most this many notices per window; the rest fold into one.
BURST, WINDOW = 3, timedelta(seconds=60)


class NoticeKind(enum.StrEnum):
    """Each kind can be turned off on its own."""

    FAILED = "failed"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"
    NEEDS_DECISION = "needs_decision"
    OVERRUN = "overrun"
    QUARANTINED = "quarantined"
    BROKEN = "broken"
    STOPPED = "stopped"
    WAKE = "wake"  # what was missed while asleep or not running
    FOLDED = "folded"  # several notices in one


@dataclass(frozen=True)
class Notice:
    kind: NoticeKind
    title: str
    body: str
    routine: str | None = None
    run_id: str | None = None  # the run to open when the notice is clicked
    seq: int = 0  # the event it tells of

    @property
    def text(self) -> str:
        return f"{self.title}: {self.body}" if self.body else self.title


_SETTLED = {
    "failed": (NoticeKind.FAILED, N_("{routine} failed")),
    "timed_out": (NoticeKind.TIMED_OUT, N_("{routine} timed out")),
    "cancelled": (NoticeKind.CANCELLED, N_("{routine} was cancelled")),
    "recovery_required": (NoticeKind.NEEDS_DECISION, N_("{routine} needs your decision")),
}


def notice(store: Store, event: Event, locale: str | None = None) -> Notice | None:
    """The notice for ``event``, or None when it is not worth one."""
    with store.read() as conn:
        routine = _routine_name(conn, event.routine_id)
        if event.kind is EventKind.SETTLED:
            return _settled(conn, event, routine, locale)
        return _other(event, routine, locale)


def _routine_name(conn: apsw.Connection, routine_id: str | None) -> str:
    row = conn.execute("SELECT name FROM routines WHERE id = ?", (routine_id,)).fetchone()
    return "?" if row is None else str(row[0])


def _settled(
    conn: apsw.Connection, event: Event, routine: str, locale: str | None
) -> Notice | None:
    found = _SETTLED.get(str(event.data.get("disposition")))
    if found is None:
        return None
    kind, title = found
    row = conn.execute(
        "SELECT o.run_id, a.exit_code, a.exit_signal, a.attempt_dir, a.cancel_reason "
        "FROM occurrences o LEFT JOIN attempts a ON a.occurrence_id = o.id WHERE o.id = ? "
        "ORDER BY a.number DESC LIMIT 1",
        (event.occurrence_id,),
    ).fetchone()
    run_id, code, signal, directory, cancel_reason = row or (None, None, None, None, None)
    why = cancel_reason or _said(event.data.get("reason"), locale)  # a person's words as typed
    body = _body(code, signal, directory, why, locale)
    return Notice(kind, _(title, locale).format(routine=routine), body, routine, run_id, event.seq)


def _body(
    code: int | None, signal: int | None, directory: str | None, why: object, locale: str | None
) -> str:
    """``exit 1: rsync: connection refused`` — the exit and the last line of stderr."""
    if signal is not None:
        status = _("signal {signal}", locale).format(signal=signal)
    elif code is not None:
        status = _("exit {code}", locale).format(code=code)
    else:
        return str(why or "")
    # Imported here: the tray needs this module (NoticeKind) before it is ready, and no
    # run's output until one has ended (bench_idle: launch to tray ready, idle RSS).
    from coven_core.views.attention import last_error_line

    line = last_error_line(Path(directory) if directory else None)
    return f"{status}: {line}" if line else status


def _said(written: object, locale: str | None) -> str:
    """What the engine wrote down in English (the event keeps it), in the reader's words."""
    return reason_text(str(written), locale) if written else ""


def _other(event: Event, routine: str, locale: str | None) -> Notice | None:
    data, seq = event.data, event.seq
    run_id = data.get("run_id")
    if event.kind is EventKind.QUARANTINED:
        title = _("{routine} quarantined", locale).format(routine=routine)
        body = _said(data.get("reason"), locale)
        return Notice(NoticeKind.QUARANTINED, title, body, routine, None, seq)
    if event.kind is EventKind.ROUTINE_BROKEN:
        title = _("{routine} is broken", locale).format(routine=routine)
        body = _said(data.get("reason"), locale)
        return Notice(NoticeKind.BROKEN, title, body, routine, None, seq)
    if event.kind is EventKind.OVERRUN:
        title = _("{routine} is taking much longer than usual", locale).format(routine=routine)
        body = overrun.describe(data.get("running_seconds"), data.get("usual_seconds"),
                                locale or "en_US")  # fmt: skip
        return Notice(NoticeKind.OVERRUN, title, body, routine, run_id, seq)
    if event.kind is EventKind.STOPPED:
        title = _("{routine}: run stopped", locale).format(routine=routine)
        body = _said(data.get("result"), locale)
        return Notice(NoticeKind.STOPPED, title, body, routine, run_id, seq)
    return None


def throttle(
    pending: Sequence[Notice],
    shown_at: Sequence[datetime],
    now: datetime,
    *,
    burst: int = BURST,
    window: timedelta = WINDOW,
    off: frozenset[NoticeKind] = frozenset(),
) -> tuple[list[Notice], list[Notice]]:
    """Which of ``pending`` to show now, given when earlier notices were shown: at most
    ``burst`` in ``window``, the last of them folding the rest ("3 more runs failed"). Returns
    (to show, to hold until the window has room); kinds in ``off`` are dropped."""
    wanted = [n for n in pending if n.kind not in off]
    room = burst - sum(1 for at in shown_at if now - at < window)
    if room <= 0:
        return [], wanted
    if len(wanted) <= room:
        return wanted, []
    return [*wanted[: room - 1], fold(wanted[room - 1 :])], []


def fold(notices: Sequence[Notice], locale: str | None = None) -> Notice:
    """Several notices as one: ``3 more runs failed`` when they are all failures."""
    kinds = Counter(n.kind for n in notices)
    failures = kinds[NoticeKind.FAILED] + kinds[NoticeKind.TIMED_OUT]
    count = len(notices)
    if failures == count:
        title = _("{count} more runs failed", locale).format(count=count)
    else:
        title = _("{count} more notices from Coven", locale).format(count=count)
    names = ", ".join(dict.fromkeys(n.routine for n in notices if n.routine))
    return Notice(NoticeKind.FOLDED, title, names, None, None, max(n.seq for n in notices))


_HEADINGS = {
    EventKind.SLEPT: N_("While asleep"),
    EventKind.DOWNTIME: N_("While Coven was not running"),
}


def wake_summary(store: Store, since_seq: int, locale: str | None = None) -> Notice | None:
    """After a wake or a start after downtime (a ``slept`` or ``downtime`` event after
    ``since_seq``): what was missed, per routine, and whether its latest moment ran."""
    with store.read() as conn:
        heading = _heading(conn, since_seq)
        if heading is None:
            return None
        parts = [_missed_part(conn, *row, locale) for row in _windows(conn, since_seq)]
    body = "; ".join(parts) if parts else _("nothing was missed", locale)
    return Notice(NoticeKind.WAKE, _(heading, locale), body, seq=since_seq)


def _heading(conn: apsw.Connection, since_seq: int) -> str | None:
    row = conn.execute(
        "SELECT kind FROM events WHERE seq > ? AND kind IN ('slept', 'downtime') "
        "ORDER BY seq DESC LIMIT 1",
        (since_seq,),
    ).fetchone()
    return None if row is None else _HEADINGS[EventKind(row[0])]


def _windows(conn: apsw.Connection, since_seq: int) -> list[tuple[str, str, str, str, int | None]]:
    return list(
        conn.execute(
            "SELECT r.id, r.name, o.zone, o.scheduled_utc, o.window_count FROM events e "
            "JOIN occurrences o ON o.id = e.occurrence_id JOIN routines r ON r.id = o.routine_id "
            "WHERE e.seq > ? AND e.kind = 'skipped' AND o.kind = 'coalesced' "
            "AND o.reason = 'missed' ORDER BY e.seq",
            (since_seq,),
        )
    )


def _missed_part(
    conn: apsw.Connection, routine_id: str, name: str, zone: str, first: str,
    count: int | None, locale: str | None,
) -> str:  # fmt: skip
    if count is None:
        text = _("moments of {routine} missed", locale).format(routine=name)
    else:
        many = ngettext(
            "{count} moment of {routine} missed", "{count} moments of {routine} missed", count,
            locale,
        )  # fmt: skip
        text = many.format(count=count, routine=name)
    from coven_core.views.runs import latest_ran  # a wake's summary, as the output above
    from coven_core.views.story import clock_time

    window_first = maybe_instant_from(first)
    ran = latest_ran(conn, routine_id, window_first) if window_first else None
    if ran is None:
        return text
    at = clock_time(ran, zone, locale)
    return text + _("; the latest ran at {time}", locale).format(time=at)
