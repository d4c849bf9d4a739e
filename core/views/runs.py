"""Every run's story (issue #21): the runs of one routine or all, newest first, and one run in
full — its attempts, the command line it ran, its output and its decisions in sentences.

``runs`` is the Runs window's list and ``coven runs``; ``run_detail`` is a run's page and
``coven run show``. Both read one snapshot; neither marks anything seen (opening a run in the
app does that, through :meth:`coven_core.operator.Operator.mark_seen`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import apsw

from coven_core.errors import ValidationError
from coven_core.notation.i18n import N_, _
from coven_core.notation.utc import local_seconds, utc_text
from coven_core.operations.seen import FAILURES
from coven_core.runner.process import liveness
from coven_core.scheduling import routines
from coven_core.store.codec import instant_from, instant_text, maybe_instant_from
from coven_core.store.query import one
from coven_core.store.store import Store
from coven_core.views.attention import command_line, last_error_line, output_tail
from coven_core.views.story import (
    Ending,
    caught_up_step,
    clock_time,
    ending,
    step_sentence,
    steps,
)

#: How much of each captured stream a run's detail carries (the files keep the rest).
DETAIL_TAIL_BYTES = 64 * 1024

_LIVE = {"planned": "waiting", "claimed": "starting", "running": "running"}


@dataclass(frozen=True)
class RunRow:
    occurrence_id: str
    run_id: str | None
    routine: str
    kind: str  # scheduled | manual | coalesced
    outcome: str  # the disposition, or while live: waiting | starting | running
    reason: str  # how it ended, in words
    planned_utc: datetime
    zone: str
    planned_local: str | None  # the wall time in ``zone`` (ISO), when the moment has one
    started_at: datetime | None  # its first attempt's start
    # How long its commands ran: each attempt from its start to its end, summed (a retry a
    # quarter of an hour later adds its own seconds, not the wait); an attempt whose end no
    # one saw (ambiguous: closed when recovery found it) adds nothing, so a run of only such
    # attempts has no duration; a live run: how long its current attempt has run, up to now.
    duration_seconds: float | None
    exit_code: int | None
    exit_signal: int | None
    attempts: int
    seen: bool  # a person opened it (only failures are counted until then)
    dst: str | None = None  # gap | fold: a time-zone rule decided this moment
    running_since: datetime | None = None  # a live run: when its current attempt started
    last_error: str | None = None  # a failure: the last line its command wrote on stderr
    #: Why it ran late: the cause of the missed moments it is the latest of (``latest_only``:
    #: asleep, app_not_running, clock_jump, scheduler_late).
    caught_up: str | None = None

    @property
    def by_hand(self) -> bool:
        """Someone asked for it (Run now): its planned instant is when they asked."""
        return self.kind == "manual"

    @property
    def unseen_failure(self) -> bool:
        """A failure nobody has opened yet: what the tray counts (``operations.seen``)."""
        return not self.seen and self.outcome in FAILURES

    def seconds_at(self, now: datetime | None) -> float | None:
        """``duration_seconds``, a live run's taken up to ``now`` (a window that ticks)."""
        if self.running_since is None or now is None:
            return self.duration_seconds
        return (now - self.running_since).total_seconds()

    def to_json(self) -> dict[str, Any]:
        fields = asdict(self)
        fields["planned_utc"] = utc_text(self.planned_utc)
        fields["planned_local"] = local_seconds(self.planned_local)
        fields["started_at"] = _evidence(self.started_at)
        fields["running_since"] = _evidence(self.running_since)
        return fields


@dataclass(frozen=True)
class AttemptLine:
    number: int
    state: str
    claimed_at: datetime | None
    started_at: datetime | None
    exited_at: datetime | None
    exit_code: int | None
    exit_signal: int | None
    failure_class: str | None
    timeout_seconds: float | None  # the timeout that applied (None: none)
    timeout_source: str | None  # routine | default
    message: str | None


@dataclass(frozen=True)
class OutputTail:
    path: str | None  # the whole file, for the GUI to open (or its folder)
    text: str  # at most DETAIL_TAIL_BYTES, the end of it
    truncated: bool
    on_disk: bool = True  # False: the command wrote nothing (the runner then makes no file)


@dataclass(frozen=True)
class RunDetail:
    row: RunRow
    attempts: list[AttemptLine]
    command: str  # argv joined as a shell would read it, or the shell string itself
    cwd: str | None
    revision: int
    stdout: OutputTail
    stderr: OutputTail
    decisions: list[str] = field(default_factory=list)  # the story, oldest first
    dst_note: str | None = None  # what the gap or fold rule decided, when one did

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["row"] = self.row.to_json()
        for attempt in data["attempts"]:
            for key in ("claimed_at", "started_at", "exited_at"):
                attempt[key] = _evidence(attempt[key])
        return data


def _evidence(instant: datetime | None) -> str | None:
    """An attempt's instant to the microsecond, as ``inspect`` and ``attention`` show it (the
    README's rule for JSON instants: one format per field)."""
    return None if instant is None else instant_text(instant)


_ROWS = """
SELECT o.id, o.run_id, r.name, o.kind, o.state, o.disposition, o.reason, o.scheduled_utc,
    o.zone, o.local_time, o.local_kind, o.window_count, o.cause, o.seen_at,
    (SELECT min(started_at) FROM attempts WHERE occurrence_id = o.id),
    (SELECT sum(julianday(exited_at) - julianday(started_at)) * 86400.0 FROM attempts
        WHERE occurrence_id = o.id AND failure_class IS NOT 'ambiguous'),
    (SELECT count(*) FROM attempts WHERE occurrence_id = o.id),
    a.exit_code, a.exit_signal, a.cancel_by, a.cancel_reason, a.started_at, a.attempt_dir,
    o.not_before, a.runner_pid, a.runner_start, a.boot_id
FROM occurrences o JOIN routines r ON r.id = o.routine_id
LEFT JOIN attempts a ON a.occurrence_id = o.id
    AND a.number = (SELECT max(number) FROM attempts WHERE occurrence_id = o.id)
"""


def runs(
    store: Store,
    routine: str | None = None,
    limit: int = 50,
    before: datetime | RunRow | None = None,
    now: datetime | None = None,
    locale: str | None = None,
) -> list[RunRow]:
    """Occurrences newest first, of one routine (by name) or all; ``before`` pages back: the
    oldest row shown (the rows after it, even those planned for the same instant — two
    routines at 02:30), or an instant (the rows planned before it); ``now`` gives a live run
    its elapsed time; ``locale`` the language of the sentences (the user's when None)."""
    where, params = ["1"], dict[str, object](limit=limit)
    if isinstance(before, RunRow):
        where.append("(o.scheduled_utc < :before OR (o.scheduled_utc = :before AND o.id < :id))")
        params |= {"before": instant_text(before.planned_utc), "id": before.occurrence_id}
    elif before is not None:
        where.append("o.scheduled_utc < :before")
        params["before"] = instant_text(before)
    with store.read() as conn:
        if routine is not None:
            where.append("o.routine_id = :routine")
            params["routine"] = routines.by_name(conn, routine).id
        sql = f"{_ROWS} WHERE {' AND '.join(where)} ORDER BY o.scheduled_utc DESC, o.id DESC "
        return [_row(row, now, locale) for row in conn.execute(sql + "LIMIT :limit", params)]


def _row(row: tuple[Any, ...], now: datetime | None, locale: str | None = None) -> RunRow:
    (oid, run_id, name, kind, state, disposition, reason, scheduled, zone, local, local_kind,
     count, cause, seen_at, started, ran, attempts, code, signal, by, why,
     latest, directory, retry_at, runner_pid, runner_mark, boot) = row  # fmt: skip
    live = disposition is None
    # Its attempt going now ticks; one waiting (for its first attempt or a retry) has run
    # only its ended attempts' time.
    since = maybe_instant_from(latest) if live and state != "planned" else None
    if since is not None:
        ran = (now - since).total_seconds() if now else None
    told = Ending(disposition, reason, code, signal, by, why, cause, count)
    said = last_error_line(Path(directory)) if disposition in FAILURES and directory else ""
    if live and state == "planned" and (code, signal) != (None, None) and retry_at:
        words = _retrying(told, directory, instant_from(retry_at), zone, locale)
    elif live and state == "running" and _runner_lost(runner_pid, runner_mark, boot):
        words = _(RUNNER_LOST, locale)
    else:
        words = _live_words(state, locale) if live else _ended(told, said, locale)
    return RunRow(
        oid, run_id, name, kind, _LIVE.get(state, state) if live else disposition, words,
        maybe_instant_from(scheduled) or _never(),
        zone, local, maybe_instant_from(started), ran,
        code, signal, attempts, seen_at is not None, _dst(local_kind, reason), since,
        said or None, None if kind == "coalesced" else cause,  # a window's cause is its own
    )  # fmt: skip


#: A run whose runner is gone while its command runs on, watched until it ends (an idempotent
#: routine's: DESIGN §8). Its timeout still holds (the runtime enforces it); its output does not
#: reach its files any more.
RUNNER_LOST = N_("Running without its runner, which was lost: its output is no longer kept")


def _runner_lost(pid: int | None, mark: float | None, boot: str | None) -> bool:
    """Whether the runner of a running attempt is provably gone (a look at /proc: only for a
    running row, of which a page shows a few at most)."""
    return pid is not None and mark is not None and liveness(pid, mark, boot) is False


def _ended(told: Ending, line: str, locale: str | None) -> str:
    """How it ended; a failure with what its command said last on stderr, the first thing a
    person wants to know of it ("Failed with exit 3: disk full")."""
    said = ending(told, locale)
    return _("{ending}: {line}", locale).format(ending=said, line=line) if line else said


def _retrying(
    told: Ending, directory: str | None, at: datetime, zone: str, locale: str | None
) -> str:
    """A run waiting for its retry: when it tries again, then how its last attempt failed
    ("Tries again at 14:16: Failed with exit 7: no connection"), not only "Waiting to run";
    the time first, where a narrow column still shows it."""
    line = last_error_line(Path(directory)) if directory else ""
    failed = _ended(Ending("failed", None, told.exit_code, told.exit_signal), line, locale)
    when = clock_time(at, zone, locale)
    return _("Tries again at {time}: {ending}", locale).format(ending=failed, time=when)


_LIVE_WORDS = {"planned": N_("Waiting to run"), "claimed": N_("Starting"), "running": N_("Running")}


def _live_words(state: str, locale: str | None) -> str:
    return _(_LIVE_WORDS[state], locale)


def _never() -> datetime:
    raise ValidationError("an occurrence without its scheduled instant")


def _dst(local_kind: str | None, reason: str | None) -> str | None:
    if local_kind == "nonexistent" or reason == "nonexistent_local_time":
        return "gap"
    return "fold" if local_kind == "repeated" else None


def run_detail(
    store: Store, identifier: str, now: datetime | None = None, locale: str | None = None
) -> RunDetail:
    """One run (by run id or occurrence id) in full; its sentences in ``locale``."""
    with store.read() as conn:
        found = list(conn.execute(f"{_ROWS} WHERE o.id = ?1 OR o.run_id = ?1", (identifier,)))
        if not found:
            raise ValidationError(
                _("no run or occurrence {id!r} (see: coven runs)").format(id=identifier)
            )
        row = _row(found[0], now, locale)
        routine_id, revision = one(
            conn, "SELECT routine_id, revision FROM occurrences WHERE id = ?", (row.occurrence_id,)
        )
        return _detail(conn, row, routine_id, revision, locale)


def _detail(
    conn: apsw.Connection, row: RunRow, routine_id: str, number: int, locale: str | None
) -> RunDetail:
    argv, cwd, shell, retries = conn.execute(
        "SELECT argv, cwd, shell, retries FROM revisions WHERE routine_id = ? AND number = ?",
        (routine_id, number),
    ).fetchone() or ("[]", None, 0, 0)
    command = command_line(argv, bool(shell))
    directory = _last_dir(conn, row.occurrence_id)
    decisions = _decisions(conn, row, routine_id, 1 + int(retries), locale)
    return RunDetail(
        row, _attempts(conn, row.occurrence_id), command, cwd, number,
        _tail(directory, "stdout"), _tail(directory, "stderr"), decisions,
        _dst_note(row, locale),
    )  # fmt: skip


def _last_dir(conn: apsw.Connection, occurrence_id: str) -> Path | None:
    row = conn.execute(
        "SELECT attempt_dir FROM attempts WHERE occurrence_id = ? AND attempt_dir IS NOT NULL "
        "ORDER BY number DESC LIMIT 1",
        (occurrence_id,),
    ).fetchone()
    return None if row is None else Path(row[0])


def _tail(directory: Path | None, name: str) -> OutputTail:
    if directory is None:
        return OutputTail(None, "", False)
    path = directory / name
    try:
        size = path.stat().st_size
    except OSError:
        return OutputTail(str(path), "", False, on_disk=False)
    return OutputTail(str(path), output_tail(directory, name, DETAIL_TAIL_BYTES),
                      size > DETAIL_TAIL_BYTES)  # fmt: skip


_ATTEMPTS = (
    "SELECT number, state, claimed_at, started_at, exited_at, exit_code, exit_signal, "
    "failure_class, timeout_seconds, timeout_source, message FROM attempts "
    "WHERE occurrence_id = ? ORDER BY number"
)


def _attempts(conn: apsw.Connection, occurrence_id: str) -> list[AttemptLine]:
    rows = conn.execute(_ATTEMPTS, (occurrence_id,))
    return [_attempt(*row) for row in rows]


def _attempt(number: int, state: str, claimed: str | None, started: str | None,
             exited: str | None, *rest: Any) -> AttemptLine:  # fmt: skip
    times = (maybe_instant_from(claimed), maybe_instant_from(started), maybe_instant_from(exited))
    return AttemptLine(number, state, *times, *rest)


def _decisions(
    conn: apsw.Connection, row: RunRow, routine_id: str, allowed: int, locale: str | None
) -> list[str]:
    told = [
        step_sentence(step, row.zone, allowed, locale)
        for step in steps(conn, row.occurrence_id)
        if step.kind not in ("planned", "claimed") or caught_up_step(step)
    ]
    if row.kind == "coalesced" and told:
        ran = latest_ran(conn, routine_id, row.planned_utc)
        if ran is not None:
            latest = _("the latest ran at {time}", locale)
            told[0] += "; " + latest.format(time=clock_time(ran, row.zone, locale))
    return told


def latest_ran(conn: apsw.Connection, routine_id: str, window_first: datetime) -> datetime | None:
    """When the moment that closed a missed window ran (``latest_only`` runs the most recent
    missed moment once): the first scheduled run after the window, if it started late."""
    row = conn.execute(
        "SELECT o.scheduled_utc, (SELECT min(started_at) FROM attempts a "
        "WHERE a.occurrence_id = o.id) FROM occurrences o WHERE o.routine_id = ?1 "
        "AND o.kind = 'scheduled' AND o.scheduled_utc > (SELECT window_last FROM occurrences "
        "WHERE routine_id = ?1 AND kind = 'coalesced' AND scheduled_utc = ?2) "
        "ORDER BY o.scheduled_utc LIMIT 1",
        (routine_id, instant_text(window_first)),
    ).fetchone()
    if row is None or row[1] is None:
        return None
    scheduled, started = maybe_instant_from(row[0]), maybe_instant_from(row[1])
    late = (
        scheduled is not None and started is not None and (started - scheduled).total_seconds() > 60
    )
    return started if late else None


def _dst_note(row: RunRow, locale: str | None = None) -> str | None:
    wall = row.planned_local or _("This wall time", locale)
    if row.dst == "gap":
        text = N_("{wall} does not exist in {zone} (the clocks moved forward): it was skipped, "
                  "never moved to another time.")  # fmt: skip
    elif row.dst == "fold":
        text = N_("{wall} happens twice in {zone} (the clocks moved back): it ran once, at the "
                  "first of the two.")  # fmt: skip
    else:
        return None
    return _(text, locale).format(wall=wall, zone=row.zone)
