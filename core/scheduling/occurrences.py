"""Occurrences and attempts in the store: planning rows, claims, and settlement (§5, §5).

Every function here runs inside the caller's write transaction and records its event in that
same transaction. Inserting an occurrence that already exists is a no-op (its id is derived
from the moment), so a crash or a second process can never make a second row for one moment.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import apsw

from coven_core import events
from coven_core.errors import ValidationError
from coven_core.events import EventKind
from coven_core.model import (
    WOULD_RUN,
    Disposition,
    MissedCause,
    OccurrenceKind,
    OccurrenceState,
    Revision,
    SkipReason,
)
from coven_core.operations.settings import MAX_ACTIVE_SQL
from coven_core.runner.process import boot_id
from coven_core.runtime.base import Launch, Started
from coven_core.scheduling import ids
from coven_core.scheduling.delivery import has_output
from coven_core.scheduling.planner import MissedWindow, Planned
from coven_core.store.codec import instant_from, instant_text, maybe_instant_text, seconds_of
from coven_core.store.errors import StoreBug
from coven_core.store.query import scalar


@dataclass(frozen=True)
class Stamp:
    """Who writes and when: the pass's instant and the leader generation (the fence)."""

    now: datetime
    generation: int


def operator_stamp(conn: apsw.Connection, now: datetime) -> Stamp:
    """A stamp for a person's command: it is not a scheduler write, so it carries the current
    generation (for the record) rather than being fenced by one."""
    row = conn.execute("SELECT generation FROM lease WHERE id = 1").fetchone()
    return Stamp(now, 0 if row is None else int(row[0]))


def insert_moment(
    conn: apsw.Connection,
    routine_id: str,
    planned: Planned,
    revision: Revision,
    stamp: Stamp,
    decided: Decided | None = None,
) -> bool:
    """One scheduled moment: planned to run, or settled at once — as skipped if it does not
    exist, or as ``decided`` by a policy (an exclusion date)."""
    moment = planned.moment
    oid = ids.occurrence_id(routine_id, moment)
    if decided is None and moment.skipped:
        decided = Decided(Disposition.SKIPPED, SkipReason.NONEXISTENT_LOCAL_TIME)
    if decided is not None and revision.spec.shadow:
        decided = decided.shadowed()
    now = instant_text(stamp.now)
    values = (  # the model's enums are StrEnums: SQLite binds their text
        oid, routine_id, planned.revision, OccurrenceKind.SCHEDULED,
        instant_text(moment.utc), moment.local.isoformat(), int(moment.offset.total_seconds()),
        moment.fold, moment.kind.value, revision.spec.timezone, revision.tzdb_version,
        *(_TO_RUN if decided is None else decided.columns()), now,
        None if decided is None else now, stamp.generation, planned.caught_up,
    )  # fmt: skip
    inserted = _insert(conn, _SCHEDULED_INSERT, values)
    if inserted:
        _record_planned(conn, stamp, routine_id, oid, decided, planned.caught_up)
    return inserted


@dataclass(frozen=True)
class Decided:
    """A policy's decision on an occurrence: its disposition, its stable decision code (the
    reason column) and the inputs it was made on (DESIGN §14), stored as JSON."""

    disposition: Disposition
    code: str
    inputs: dict[str, Any] | None = None

    def shadowed(self) -> Decided:
        """The same decision on a trial (shadow) revision: recorded, never acted on."""
        return Decided(Disposition.SHADOWED, self.code, {**(self.inputs or {}), "would": "skip"})

    def columns(self) -> tuple[str, str, str, str | None]:
        inputs = None if not self.inputs else json.dumps(self.inputs, sort_keys=True)
        return OccurrenceState.SETTLED, self.disposition, self.code, inputs


def _record_planned(
    conn: apsw.Connection, stamp: Stamp, routine_id: str, oid: str, decided: Decided | None,
    caught_up: MissedCause | None,
) -> None:  # fmt: skip
    if decided is None:
        late = {} if caught_up is None else {"caught_up": caught_up.value}  # the story says why
        events.record(conn, stamp.now, EventKind.PLANNED, routine_id=routine_id,
                      occurrence_id=oid, **late)  # fmt: skip
    else:
        events.record(
            conn, stamp.now, EventKind.SKIPPED, routine_id=routine_id, occurrence_id=oid,
            reason=decided.code,
        )  # fmt: skip


# A scheduled moment's state, disposition, reason and decision inputs while it waits to run.
_TO_RUN = (OccurrenceState.PLANNED, None, None, None)

_SCHEDULED_INSERT = (
    "INSERT OR IGNORE INTO occurrences (id, routine_id, revision, kind, scheduled_utc, "
    "local_time, utc_offset, fold, local_kind, zone, tzdb_version, state, disposition, reason, "
    "decision, planned_at, settled_at, generation, cause) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def insert_missed(
    conn: apsw.Connection,
    routine_id: str,
    window: MissedWindow,
    revision: Revision,
    stamp: Stamp,
    reason: SkipReason = SkipReason.MISSED,
) -> bool:
    """One coalesced row for a whole window of missed moments."""
    zone = revision.spec.timezone, revision.tzdb_version
    return insert_window(conn, routine_id, window, zone, stamp, reason, revision.spec.shadow)


def insert_window(
    conn: apsw.Connection,
    routine_id: str,
    window: MissedWindow,
    zone: tuple[str, str],
    stamp: Stamp,
    reason: SkipReason,
    shadow: bool = False,
) -> bool:
    """One coalesced row for a window, in ``zone`` (its key and tz database version); on a
    trial revision (``shadow``) it is shadowed: what would have been skipped."""
    broken = window.cause is MissedCause.ROUTINE_BROKEN
    oid = ids.coalesced_id(routine_id, window.first, broken=broken)
    disposition = Disposition.SHADOWED if shadow else Disposition.SKIPPED
    values = (
        oid, routine_id, window.revision, OccurrenceKind.COALESCED.value,
        instant_text(window.first), *zone,
        OccurrenceState.SETTLED.value, disposition.value, reason.value,
        instant_text(window.first), instant_text(window.last), window.count, window.cause.value,
        instant_text(stamp.now), instant_text(stamp.now), stamp.generation,
    )  # fmt: skip
    inserted = _insert(conn, _COALESCED_INSERT, values)
    if inserted:
        events.record(
            conn, stamp.now, EventKind.SKIPPED, routine_id=routine_id, occurrence_id=oid,
            reason=reason.value, count=window.count, cause=window.cause.value,
        )  # fmt: skip
    return inserted


_COALESCED_INSERT = (
    "INSERT OR IGNORE INTO occurrences (id, routine_id, revision, kind, scheduled_utc, zone, "
    "tzdb_version, state, disposition, reason, window_first, window_last, window_count, cause, "
    "planned_at, settled_at, generation) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _insert(conn: apsw.Connection, sql: str, values: tuple[Any, ...]) -> bool:
    conn.execute(sql, values)
    return conn.changes() == 1


@dataclass(frozen=True)
class Waiting:
    """A planned occurrence whose time has come, with what the claim step needs to decide."""

    id: str
    routine_id: str
    revision: int
    scheduled: datetime
    kind: OccurrenceKind = OccurrenceKind.SCHEDULED
    probe: bool = False
    forced: bool = False  # a person asked for this attempt (a reconciled retry)
    run_id: str | None = None  # its run, once a first attempt was claimed
    attempts: int = 0  # attempts of it so far


#: The rows a pass reads first: the slots a pass frees in a burst (one or two) and a few rows
#: it passes over. More, up to its batch, only when it asks for them (a page of 64 rows made
#: the waiting read the costliest of a drain's pass after its commits: bench_apscheduler's
#: drain, by statement).
FIRST_PAGE = 8


def waiting(
    conn: apsw.Connection, now: datetime, limit: int
) -> tuple[Iterator[Waiting] | None, int, str | None]:
    """What may be claimed now, oldest first, at most ``limit`` (None: nothing), how many
    occurrences are active and the stored ``max-active`` setting (what the claims are bounded
    by), in one read.

    Read a page at a time, as the caller takes them: a pass claims what its free slots allow
    and stops; only rows passed over (skipped, or waiting for a condition) ask for the next
    page. Each row becomes a :class:`Waiting` only when taken."""
    at = instant_text(now)
    size = min(limit, FIRST_PAGE)
    rows = _page(conn, at, size, after=("", ""))
    if not rows:
        return None, 0, None  # with nothing waiting, the active count bounds nothing
    active, most = rows[0][-2:]  # the same on every row
    return _pages(conn, at, limit, rows, size), int(active), most


def _page(
    conn: apsw.Connection, at: str, size: int, after: tuple[str, str]
) -> list[tuple[Any, ...]]:
    return conn.execute(_WAITING, (at, size, *after)).fetchall()


def _pages(
    conn: apsw.Connection, at: str, limit: int, rows: list[tuple[Any, ...]], size: int
) -> Iterator[Waiting]:
    """``rows``, then the rows after the last one read, in (scheduled_utc, id) order, until a
    page comes back short or ``limit`` rows were read. What the caller claimed or skipped in
    between has left the planned rows; what it passed over is not read twice."""
    read = 0
    while True:
        yield from map(_waiting_of, rows)
        read += len(rows)
        if len(rows) < size or read >= limit:
            return
        size, last = limit - read, rows[-1]
        rows = _page(conn, at, size, after=(last[3], last[0]))


def _waiting_of(row: tuple[Any, ...]) -> Waiting:
    oid, rid, rev, at, kind, probe, forced, run_id, attempts = row[:9]
    return Waiting(oid, rid, rev, instant_from(at), OccurrenceKind(kind), bool(probe),
                   bool(forced), run_id, attempts)  # fmt: skip


ACTIVE = "occurrences INDEXED BY occurrences_active WHERE state IN ('claimed', 'running')"
"""The active occurrences, by their partial index. Named: SQLite otherwise picks
``occurrences_history`` for a routine's count and walks the routine's whole history, a cost
that grows with every settled row (bench_bookkeeping's row "CPU (user + system) per
occurrence" guards it)."""


_HAS_ATTEMPTS = "EXISTS (SELECT 1 FROM attempts a WHERE a.occurrence_id = occurrences.id)"

_RETRYING = "state = 'planned' AND run_id IS NOT NULL"
"""The planned rows of ``occurrences_between``: a run that had an attempt has a run id (a claim
gives it one), and so does a person's run waiting for its first; a burst of moments due at
once has none."""

BETWEEN_ATTEMPTS = (
    f"occurrences INDEXED BY occurrences_between WHERE {_RETRYING} AND {_HAS_ATTEMPTS}"
)
"""Occurrences whose run is in progress between two attempts (a retry not yet claimed), by
their own partial index: there are few of those, however long the history and however many
moments wait for a slot (through the index of every planned row, a claim's count walked them
all: bench_apscheduler's drain)."""


_WAITING = (
    "SELECT id, routine_id, revision, scheduled_utc, kind, probe, forced, run_id, "
    "(SELECT count(*) FROM attempts a WHERE a.occurrence_id = occurrences.id), "
    f"(SELECT count(*) FROM {ACTIVE}), {MAX_ACTIVE_SQL} FROM occurrences "
    "WHERE state = 'planned' AND (not_before IS NULL OR not_before <= ?1) "
    "AND (scheduled_utc, id) > (?3, ?4) ORDER BY scheduled_utc, id LIMIT ?2"
)
"""Every planned row's time has come: the planner plans a moment once it is due, a person's run
at the moment it is asked for. So a wall clock set back before a moment that waits for a free
slot or for its retry does not make it wait for its time a second time (DESIGN §3; seed
2048113717)."""


def earliest_retry(conn: apsw.Connection, now: datetime) -> datetime | None:
    """When the next attempt still waiting out its backoff may start. (One whose time has
    come but waits for capacity is woken by a run finishing, not by a deadline.)"""
    at = scalar(conn, f"SELECT {EARLIEST_RETRY}", {"now": instant_text(now)})
    return None if at is None else instant_from(at)


EARLIEST_RETRY = (
    f"(SELECT min(not_before) FROM occurrences INDEXED BY occurrences_between WHERE {_RETRYING} "
    "AND not_before > :now)"
)
"""Only a retry waits on a ``not_before`` (settlement sets it), and a retry's run has an id."""


def awaiting_decision(conn: apsw.Connection, routine_id: str) -> list[str]:
    """Runs of the routine waiting for a person (``recovery_required``)."""
    rows = conn.execute(
        # the literal is the partial index's condition: store connections never plan on a
        # bound value (coven_core.store.connection)
        "SELECT run_id FROM occurrences WHERE routine_id = ? AND disposition = 'recovery_required'",
        (routine_id,),
    )
    return [row[0] for row in rows]


def refuse_while_awaiting(conn: apsw.Connection, routine_id: str, name: str, what: str) -> None:
    """While a run awaits a decision the routine does no new work (issue #5)."""
    waiting_runs = awaiting_decision(conn, routine_id)
    if waiting_runs:
        run = waiting_runs[0]
        raise ValidationError(
            f"cannot {what} {name!r}: run {run} awaits your decision "
            f"(see 'coven attention', then 'coven reconcile {run}')"
        )


def oldest_waiting_id(conn: apsw.Connection, routine_id: str) -> str | None:
    """The routine's oldest occurrence that waits for its first attempt: the one a
    ``queue_one`` policy lets wait (a run waiting to retry is in progress, not queued)."""
    # By the index of planned rows, in its order: through the routine's history, SQLite read
    # every occurrence the routine ever had (20 ms at the retention bound of 129,600).
    row = conn.execute(
        "SELECT id FROM occurrences INDEXED BY occurrences_due WHERE state = 'planned' "
        f"AND routine_id = ? AND NOT {_HAS_ATTEMPTS} ORDER BY scheduled_utc, id LIMIT 1",
        (routine_id,),
    ).fetchone()
    return None if row is None else str(row[0])


def skip(
    conn: apsw.Connection,
    item: Waiting,
    reason: SkipReason,
    stamp: Stamp,
    inputs: dict[str, Any] | None = None,
) -> None:
    """Settle a waiting occurrence as skipped — as shadowed if its revision is a trial —
    with the inputs of the policy that decided it, if one did (added to what it already
    records: a triggered occurrence keeps its upstream)."""
    stored = None if inputs is None else json.dumps(inputs, sort_keys=True)
    conn.execute(
        f"UPDATE occurrences SET state = 'settled', disposition = {_SKIPPED_OR_SHADOWED}, "
        f"reason = ?1, decision = {_WITH_INPUTS}, settled_at = ?3 "
        "WHERE id = ?4 AND state = 'planned'",
        (reason.value, stored, instant_text(stamp.now), item.id),
    )
    events.record(
        conn, stamp.now, EventKind.SKIPPED, routine_id=item.routine_id, occurrence_id=item.id,
        reason=reason.value,
    )  # fmt: skip


_SKIPPED_OR_SHADOWED = (
    "CASE WHEN EXISTS (SELECT 1 FROM revisions v WHERE v.routine_id = occurrences.routine_id "
    "AND v.number = occurrences.revision AND v.shadow) THEN 'shadowed' ELSE 'skipped' END"
)


def note_decision(conn: apsw.Connection, occurrence_id: str, inputs: dict[str, Any]) -> None:
    """Record what a policy saw when it let an occurrence run (a manual run's budget)."""
    conn.execute(
        f"UPDATE occurrences SET decision = {_WITH_INPUTS} WHERE id = ?4",
        (None, json.dumps(inputs, sort_keys=True), None, occurrence_id),
    )


#: The stored decision inputs with those in ?2 (JSON) merged over them; unchanged if NULL.
_WITH_INPUTS = (
    "CASE WHEN ?2 IS NULL THEN decision ELSE json_patch(coalesce(decision, '{}'), ?2) END"
)


def shadow_run(
    conn: apsw.Connection, item: Waiting, revision: Revision, stamp: Stamp, limits: Limits
) -> None:
    """A trial revision's occurrence whose claim would have started its command: settled as
    ``shadowed`` / ``would_run`` with what would have run, and nothing is started (§14)."""
    spec = revision.spec
    inputs = {
        "would": "run", "command": list(spec.argv), "shell": spec.shell,
        "timeout_seconds": seconds_of(limits.timeout), "manual": item.kind is OccurrenceKind.MANUAL,
    }  # fmt: skip
    decided = Decided(Disposition.SHADOWED, WOULD_RUN, inputs)
    state, disposition, code, stored = decided.columns()
    conn.execute(
        f"UPDATE occurrences SET state = ?1, disposition = ?3, reason = ?4, "
        f"decision = {_WITH_INPUTS}, settled_at = ?5 WHERE id = ?6 AND state = 'planned'",
        (state, stored, disposition, code, instant_text(stamp.now), item.id),
    )
    events.record(
        conn, stamp.now, EventKind.SETTLED, routine_id=item.routine_id, occurrence_id=item.id,
        disposition=disposition, reason=code,
    )  # fmt: skip


@dataclass(frozen=True)
class Limits:
    """What an attempt runs under, decided at its claim and recorded on it (issue #18)."""

    timeout: timedelta | None  # None: no limit
    timeout_source: str  # routine (its own, none included) or default (the global setting)
    usual: timedelta | None = None  # the median of the routine's recent successes
    overrun_after: timedelta | None = None  # from the claim; None: the timeout comes first


def claim(
    conn: apsw.Connection, item: Waiting, revision: Revision, stamp: Stamp, limits: Limits
) -> Launch:
    """Claim a planned occurrence: its run (kept across attempts) and its next attempt, with
    the dispatch decision (crash point 4) recorded on it — ``dispatching``, claimed and
    dispatched at once: the two always commit together, before the runtime is asked to start
    anything, so an attempt the scheduler claims is never on record as merely ``claimed``.
    The boot it is claimed in is recorded with it: a runner's journal proves that nothing ran
    only within that boot (``runner.journal``)."""
    run_id, number = item.run_id or ids.new_run_id(), item.attempts + 1
    _mark_claimed(conn, item.id, run_id)
    attempt = ids.attempt_id(run_id, number)
    events.record(
        conn, stamp.now, EventKind.CLAIMED, routine_id=item.routine_id, occurrence_id=item.id,
        run_id=run_id,
    )  # fmt: skip
    overrun_after = None if limits.overrun_after is None else stamp.now + limits.overrun_after
    conn.execute(  # claimed_seq: this claim's event, to order it against settlements
        "INSERT INTO attempts (id, occurrence_id, number, state, generation, claimed_at, "
        "dispatched_at, claimed_seq, timeout_seconds, timeout_source, usual_seconds, "
        "overrun_after, boot_id) "
        f"VALUES (?1, ?2, ?3, 'dispatching', ?4, ?5, ?5, {events.LAST_SEQ}, ?6, ?7, ?8, ?9, ?10)",
        (attempt, item.id, number, stamp.generation, instant_text(stamp.now),
         seconds_of(limits.timeout), limits.timeout_source, seconds_of(limits.usual),
         maybe_instant_text(overrun_after), boot_id()),
    )  # fmt: skip
    spec = revision.spec
    return Launch(
        attempt, item.id, item.routine_id, spec.argv, spec.cwd, spec.env, limits.timeout,
        spec.shell, spec.stop_grace, spec.idempotent,
    )  # fmt: skip


def _mark_claimed(conn: apsw.Connection, occurrence_id: str, run_id: str) -> None:
    """Mark the occurrence claimed, in its run. (Without RETURNING: SQLite buffers the rows
    of an UPDATE … RETURNING in an ephemeral table, built per execution; the run id and the
    attempt count came with the waiting read, in this same transaction.)"""
    conn.execute(
        "UPDATE occurrences SET state = 'claimed', run_id = ? WHERE id = ? AND state = 'planned'",
        (run_id, occurrence_id),
    )
    if conn.changes() != 1:
        raise StoreBug(f"claim: occurrence {occurrence_id} is not planned")


def mark_running(conn: apsw.Connection, launch: Launch, started: Started, stamp: Stamp) -> bool:
    """Record a start. It may be recorded late (its first record transaction failed) when the
    attempt has already been settled from its exit: then only the runner's identity is added,
    and its output, which nothing could find before, is queued for delivery (True)."""
    conn.execute(  # each CASE reads the row as it was, before this update
        "UPDATE attempts SET runner_pid = ?1, runner_start = ?2, attempt_dir = ?3, "
        "boot_id = coalesce(?6, boot_id), "
        "started_at = CASE WHEN state IN ('claimed', 'dispatching') THEN ?4 ELSE started_at END, "
        "state = CASE WHEN state IN ('claimed', 'dispatching') THEN 'running' ELSE state END "
        "WHERE id = ?5",
        (started.pid, started.process_start, started.attempt_dir, instant_text(stamp.now),
         launch.attempt_id, started.boot_id),
    )  # fmt: skip
    pid = started.pid
    conn.execute(
        "UPDATE occurrences SET state = 'running' WHERE id = ? AND state = 'claimed'",
        (launch.occurrence_id,),
    )
    settled_first = conn.changes() == 0  # its end was recorded before its start
    queued = settled_first and started.attempt_dir is not None and has_output(started.attempt_dir)
    if queued:  # here, or by a settlement that could not yet say where the output is
        conn.execute(
            "INSERT OR IGNORE INTO deliveries (occurrence_id, state) SELECT id, 'pending' "
            "FROM occurrences WHERE id = ? AND disposition = 'succeeded'",
            (launch.occurrence_id,),
        )
    events.record(
        conn, stamp.now, EventKind.STARTED, routine_id=launch.routine_id,
        occurrence_id=launch.occurrence_id, pid=pid,
    )  # fmt: skip
    return queued


def settle(
    conn: apsw.Connection,
    occurrence_id: str,
    routine_id: str,
    disposition: Disposition,
    reason: str | None,
    stamp: Stamp,
) -> None:
    settled = disposition is not Disposition.RECOVERY_REQUIRED
    conn.execute(
        "UPDATE occurrences SET state = ?, disposition = ?, reason = ?, settled_at = ? "
        "WHERE id = ?",
        (
            "settled", disposition.value, reason,
            instant_text(stamp.now) if settled else None, occurrence_id,
        ),
    )  # fmt: skip
    events.record(
        conn, stamp.now, EventKind.SETTLED, routine_id=routine_id, occurrence_id=occurrence_id,
        disposition=disposition.value, reason=reason,
    )  # fmt: skip
