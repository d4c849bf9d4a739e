"""Retention: the store stays bounded for years and never loses what matters (DESIGN §11).

A :func:`sweep` removes old settled history, events, pass records and attempt directories in
small write transactions — at most ``batch`` rows each and, below that, as many as fit
:data:`~coven_core.scheduling.batching.TARGET_HOLD` (:class:`~coven_core.scheduling.batching.Pace`),
the write lock released in between — so it never holds the lock long enough to delay a claim
noticeably. It never removes:

* an occurrence that is not settled, or is ``recovery_required`` (it awaits a person);
* an occurrence whose delivery is pending or failed (its captured output is still needed);
* an occurrence another table refers to by foreign key (a reconciliation keeps its run);
* the newest settled occurrence of each routine (the GUI's "last result");
* the attempts and attempt directories of any of those, nor the events of unsettled or
  ``recovery_required`` occurrences (the evidence a pending reconciliation shows).

An occurrence goes together with its attempts and its delivery row, in one transaction; its
attempt directories are removed from disk just before (a failed transaction leaves a row
pointing at a removed directory, never a directory no row points at). Delivered output files
are pruned by :func:`coven_core.scheduling.delivery.prune_outputs` and the audit log by
:func:`coven_core.integrity.audit.prune` (its checkpoint keeps the chain verifiable): neither is
touched.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any, TypedDict

import apsw

from coven_core.scheduling.batching import Pace
from coven_core.store.codec import instant_from, instant_text
from coven_core.store.errors import StoreEnvironmentError, translate_errors
from coven_core.store.query import scalar
from coven_core.store.store import Store
from coven_core.store.wal import (
    CHECKPOINT_PAGES,
    checkpoint_now,
    checkpoints_deferred,
    log_pages,
)

log = logging.getLogger(__name__)

#: The tables a sweep deletes from (``audit_log`` is not one of them).
TABLES = ("occurrences", "attempts", "deliveries", "events", "passes")

_JUST_AFTER = timedelta(microseconds=1)
_LEAST_PAUSE = 0.002  # seconds: a busy handler's first sleeps are 1 ms and 2 ms
# The sweep checkpoints once its log holds four times SQLite's default, not at the default:
# the first COMMIT after a complete checkpoint starts the log over, and SQLite fsyncs the new
# log header inside that COMMIT even at synchronous=NORMAL. Those are the only sweep commits
# that wait on the disk (``benchmarks/bench_retention.py``), so there are a quarter as many,
# for a log of at most ~16 MB while a catch-up runs.
_CHECKPOINT_PAGES = 4 * CHECKPOINT_PAGES
_FAILED_DIRS_SHOWN = 10


@dataclass(frozen=True)
class RetentionPolicy:
    """What a sweep keeps; the defaults are meant to go unnoticed on a personal machine.

    History is kept per routine by count *or* age, whichever keeps more (a monthly routine
    keeps years, a minutely one 90 days), under a hard overall bound that first takes rows
    kept only for their age, oldest first. Events and passes go when beyond either bound.
    """

    #: Per routine: the newest N settled occurrences are kept whatever their age …
    history_keep_newest: int = 1_000
    #: … and so is every settled occurrence younger than this.
    history_keep_for: timedelta = timedelta(days=90)
    #: Overall: beyond this many occurrences the oldest settled ones go.
    history_max_rows: int = 200_000
    events_keep_for: timedelta = timedelta(days=90)
    events_max_rows: int = 500_000
    passes_keep_for: timedelta = timedelta(days=30)
    passes_max_rows: int = 50_000
    #: The directory of a settled attempt (stdout, stderr, journal, …) goes after this.
    attempt_dirs_keep_for: timedelta = timedelta(days=30)

    def __post_init__(self) -> None:
        counts = ("history_keep_newest", "history_max_rows", "events_max_rows", "passes_max_rows")
        for name in counts:
            if getattr(self, name) < 1:
                raise ValueError(f"retention: {name} must be at least 1")
        ages = ("history_keep_for", "events_keep_for", "passes_keep_for", "attempt_dirs_keep_for")
        for name in ages:
            if getattr(self, name) < timedelta(0):
                raise ValueError(f"retention: {name} cannot be negative")


@dataclass
class SweepReport:
    """What one sweep did, and how long it held the write lock at most."""

    deleted: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TABLES, 0))
    attempt_dirs_removed: int = 0
    attempt_dir_errors: int = 0
    failed_dirs: list[str] = field(default_factory=list)  # the first few, for `coven doctor`
    transactions: int = 0
    longest_transaction: float = 0.0  # seconds from BEGIN IMMEDIATE returning to COMMIT done
    longest_checkpoint: float = 0.0  # seconds; a passive checkpoint holds no write lock
    most_rows_in_transaction: int = 0
    duration: float = 0.0  # seconds, the whole sweep
    finished: bool = True  # False: the time budget ran out first; sweep again to go on

    def note_transaction(self, seconds: float, touched: dict[str, int]) -> None:
        self.transactions += 1
        self.longest_transaction = max(self.longest_transaction, seconds)
        self.most_rows_in_transaction = max(self.most_rows_in_transaction, sum(touched.values()))
        for table, rows in touched.items():
            if table in self.deleted:
                self.deleted[table] += rows

    def note_dir(self, path: str, removed: bool | None) -> None:
        if removed:
            self.attempt_dirs_removed += 1
        elif removed is False:
            self.attempt_dir_errors += 1
            if len(self.failed_dirs) < _FAILED_DIRS_SHOWN:
                self.failed_dirs.append(path)


def sweep(
    store: Store,
    now: datetime,
    policy: RetentionPolicy,
    *,
    batch: int = 500,
    budget: float | None = None,
    pause: Callable[[float], None] | None = time.sleep,
) -> SweepReport:
    """Apply ``policy`` to the store as of ``now``, in transactions of at most ``batch`` rows.

    After each transaction the sweep calls ``pause`` with a little more than twice the time it
    held the lock: another writer (a claim) waiting in SQLite's busy handler sleeps 1, 2, 5,
    10, … ms between tries, and a sweep that took the lock again at once would win every round
    and delay it for long (bench_retention's rows "another process's claim during it").
    ``pause=None`` does not wait (a test under virtual time).

    With ``budget`` (seconds), stops between transactions once it is spent (after at least
    one) and reports ``finished=False``; the next sweep goes on where this one stopped. Never
    call it inside a transaction. Store errors (busy, full disk) propagate as
    :class:`~coven_core.store.errors.StoreError`; what was committed stays committed.
    """
    if batch < 1:
        raise ValueError("retention: batch must be at least 1")
    run = _Sweep(store, now, policy, batch, budget, pause)
    # The sweep checkpoints on its own schedule, between its transactions, so that what it
    # reports as a transaction's lock hold is only that and each checkpoint is timed apart.
    conn = store.conn
    with translate_errors(path=store.path), checkpoints_deferred(conn), _commits_unsynced(conn):
        run.all_phases()
        run.checkpoint()  # it syncs the log first: what it copies is durable
    run.report.duration = time.perf_counter() - run.started
    return run.report


@contextmanager
def _commits_unsynced(conn: apsw.Connection) -> Iterator[None]:
    """The sweep's COMMITs do not wait for the disk (``synchronous=NORMAL``, then back).

    A COMMIT holds the write lock until its fsync of the log returns, and the disk's fsync
    alone has a long tail (bench_retention's row "the disk's own fsync during it (no lock),
    max"): with ``FULL`` the sweep's longest hold was a COMMIT whose own work was a small
    share of it (its row "longest hold: its COMMIT (writing the log)"). A deletion
    needs no fsync of its own: WAL with ``NORMAL`` stays consistent, the sweep's checkpoint
    (and any later commit's fsync of the same log) makes it durable, and one lost to a power
    cut only brings back rows the next sweep deletes again — a row whose attempt directory is
    already gone, the state a failed transaction leaves too. Every other write stays FULL."""
    previous = int(scalar(conn, "PRAGMA synchronous"))
    conn.execute("PRAGMA synchronous = NORMAL")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA synchronous = {previous}")


# --- what may go ------------------------------------------------------------------------------

# An occurrence ``o`` settled for good, with nothing left to deliver.
_SETTLED_FOR_GOOD = (
    "o.state = 'settled' AND o.disposition != 'recovery_required' AND NOT EXISTS "
    "(SELECT 1 FROM deliveries d WHERE d.occurrence_id = o.id AND d.state != 'delivered')"
)
# Links the sweep itself follows (it deletes the children first).
_OWN_LINKS = {("attempts", "occurrences"), ("deliveries", "occurrences")}
_KEYS = {"occurrences": "id", "attempts": "id", "deliveries": "occurrence_id"}


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _removable_sql(conn: apsw.Connection) -> str:
    """The condition on ``o`` under which an occurrence and its children may go.

    Any other table whose foreign key points at an occurrence, attempt or delivery (today:
    reconciliations) keeps that occurrence: deleting it would break the reference.
    """
    guards = [_SETTLED_FOR_GOOD]
    for child in _user_tables(conn):
        links = conn.execute(
            'SELECT "table", "from", "to" FROM pragma_foreign_key_list(?)', (child,)
        ).fetchall()
        for parent_name, column, key in links:
            parent = str(parent_name).lower()
            if parent in _KEYS and (child, parent) not in _OWN_LINKS:
                parent_key = _KEYS[parent] if key is None else str(key)
                guards.append(_reference_guard(child, str(column), parent, parent_key))
    return " AND ".join(guards)


def _user_tables(conn: apsw.Connection) -> list[str]:
    sql = "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    return _texts(conn, sql + " ORDER BY name")


def _int(value: object) -> int:
    if not isinstance(value, int):
        raise TypeError(f"expected an integer key, found {value!r}")
    return value


def _texts(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[str]:
    """The first column of every row, as text."""
    return [str(row[0]) for row in conn.execute(sql, params)]


def _reference_guard(child: str, column: str, parent: str, key: str) -> str:
    match = f"x.{_quote(column)}"
    if parent == "occurrences":
        return f"NOT EXISTS (SELECT 1 FROM {_quote(child)} x WHERE {match} = o.{_quote(key)})"
    return (
        f"NOT EXISTS (SELECT 1 FROM {parent} p JOIN {_quote(child)} x "
        f"ON {match} = p.{_quote(key)} WHERE p.occurrence_id = o.id)"
    )


@dataclass(frozen=True)
class _Mark:
    """Where a routine's history may be cut, as stored instants (text order is time order)."""

    routine_id: str
    newest_id: str  # the last result: always kept, with its attempt directories
    newest_at: str
    floor_at: str | None  # the history_keep_newest-th newest settled occurrence, if it has so many


def _marks(conn: apsw.Connection, removable: str, keep: int) -> list[_Mark]:
    sql = (
        f"SELECT o.id, o.scheduled_utc FROM occurrences o WHERE o.routine_id = ? AND {removable} "
        "ORDER BY o.scheduled_utc DESC LIMIT 1 OFFSET ?"
    )
    marks = []
    for routine_id in _texts(conn, "SELECT id FROM routines ORDER BY id"):
        newest = conn.execute(sql, (routine_id, 0)).fetchone()
        if newest is None:
            continue
        floor = conn.execute(sql, (routine_id, keep - 1)).fetchone()
        floor_at = None if floor is None else str(floor[1])
        marks.append(_Mark(routine_id, str(newest[0]), str(newest[1]), floor_at))
    return marks


# --- one sweep --------------------------------------------------------------------------------


class _Sweep:
    def __init__(
        self, store: Store, now: datetime, policy: RetentionPolicy, batch: int,
        budget: float | None, pause: Callable[[float], None] | None,
    ) -> None:  # fmt: skip
        self.store, self.now, self.policy, self.batch = store, now, policy, batch
        self.budget, self.pause = budget, pause
        self.report = SweepReport()
        self.started = time.perf_counter()
        self.removable = _SETTLED_FOR_GOOD  # completed from the schema when the sweep starts
        # One pace per table it deletes from: a batch of an occurrence's rows (eight indexes
        # between them) takes about three times as long as one of events or passes.
        self.paces = {table: Pace(batch) for table in ("occurrences", "events", "passes")}

    def all_phases(self) -> None:
        with self.store.read() as conn:
            self.removable = _removable_sql(conn)
            marks = _marks(conn, self.removable, self.policy.history_keep_newest)
        self.history_by_routine(marks)
        self.history_overall(marks)
        self.attempt_dirs([mark.newest_id for mark in marks])
        self.events()
        self.passes()

    def rows(self, table: str) -> int:
        """How many rows the next transaction deleting from ``table`` may touch."""
        return self.paces[table].rows

    def out_of_time(self) -> bool:
        """Spent the budget? Never before one transaction, so that every sweep makes progress."""
        spent = self.budget is not None and time.perf_counter() - self.started >= self.budget
        if spent and self.report.transactions > 0:
            self.report.finished = False
        return not self.report.finished

    def write(self, work: Callable[[apsw.Connection], dict[str, int]], paced: str = "") -> int:
        """One short write transaction; the lock is held from BEGIN returning to COMMIT.
        ``paced`` names the table whose pace the transaction's time steers."""
        with self.store.write() as conn:
            began = time.perf_counter()
            touched = work(conn)
        held = time.perf_counter() - began
        self.report.note_transaction(held, touched)
        if paced:
            self.paces[paced].note(sum(touched.values()), held)
        if self.checkpoint_due():
            self.checkpoint()
        if self.pause is not None:
            self.pause(2 * held + _LEAST_PAUSE)  # the waiter's next try comes within ~held
        return sum(touched.values())

    def checkpoint_due(self) -> bool:
        """A connection not opened by the store factory keeps SQLite's own checkpoint."""
        pages = log_pages(self.store.conn)
        return pages is not None and pages >= _CHECKPOINT_PAGES

    def checkpoint(self) -> None:
        """Copy the WAL into the database (passive: waits for no reader, blocks no writer).

        Housekeeping: when another connection is checkpointing at that moment, SQLite answers
        busy, and that connection does the work instead."""
        began = time.perf_counter()
        checkpoint_now(self.store.conn)
        elapsed = time.perf_counter() - began
        self.report.longest_checkpoint = max(self.report.longest_checkpoint, elapsed)

    def remove_dir(self, attempt_id: str, attempt_dir: str) -> bool:
        """Remove one attempt directory; True if it is gone (or was never there)."""
        removed = _remove_attempt_dir(attempt_id, attempt_dir)
        self.report.note_dir(attempt_dir, removed)
        return removed is not False

    # -- history -----------------------------------------------------------------------------
    def history_by_routine(self, marks: list[_Mark]) -> None:
        cutoff = instant_text(self.now - self.policy.history_keep_for)
        for mark in marks:
            if mark.floor_at is not None:
                self.delete_history(mark.routine_id, min(mark.floor_at, cutoff))

    def history_overall(self, marks: list[_Mark]) -> None:
        """The hard bound: first rows kept only for their age, then all but the newest."""
        for tier in (_floors(marks), {m.routine_id: m.newest_at for m in marks}):
            excess = self.occurrence_count() - self.policy.history_max_rows
            if excess <= 0:
                return
            for routine_id, below in self.oldest(tier, excess).items():
                self.delete_history(routine_id, below)

    def occurrence_count(self) -> int:
        return int(scalar(self.store.conn, "SELECT count(*) FROM occurrences"))

    def oldest(self, ceilings: dict[str, str], count: int) -> dict[str, str]:
        """Lower each routine's ceiling so that about the ``count`` oldest candidates go."""
        row = self.store.conn.execute(
            f"SELECT o.scheduled_utc FROM json_each(?) c JOIN occurrences o "
            f"ON o.routine_id = c.key AND o.scheduled_utc < c.value WHERE {self.removable} "
            "ORDER BY o.scheduled_utc LIMIT 1 OFFSET ?",
            (json.dumps(ceilings), count - 1),
        ).fetchone()
        if row is None:
            return ceilings  # fewer candidates than the excess: all of them go
        through = instant_text(instant_from(str(row[0])) + _JUST_AFTER)
        return {routine_id: min(below, through) for routine_id, below in ceilings.items()}

    def delete_history(self, routine_id: str, below: str) -> None:
        """Delete the routine's removable occurrences scheduled before ``below``."""
        while not self.out_of_time():
            candidates = _texts(
                self.store.conn,
                f"SELECT o.id FROM occurrences o WHERE o.routine_id = ? AND o.scheduled_utc < ? "
                f"AND {self.removable} ORDER BY o.scheduled_utc LIMIT ?",
                (routine_id, below, self.rows("occurrences")),
            )
            if not candidates or not self.delete_occurrences(candidates):
                return

    def delete_occurrences(self, candidates: list[str]) -> int:
        chosen, dirs = _fit(self.store.conn, candidates, self.rows("occurrences"))
        for attempt_id, attempt_dir in dirs:
            self.remove_dir(attempt_id, attempt_dir)
        work = partial(_delete_occurrences, chosen=chosen, removable=self.removable)
        return self.write(work, paced="occurrences")

    # -- attempt directories ------------------------------------------------------------------
    def attempt_dirs(self, newest_ids: list[str]) -> None:
        """Remove the directories of settled attempts older than the policy, oldest first."""
        cutoff = instant_text(self.now - self.policy.attempt_dirs_keep_for)
        after = 0
        while not self.out_of_time():
            rows = self.store.conn.execute(
                "SELECT a.rowid, a.id, a.attempt_dir FROM attempts a JOIN occurrences o "
                "ON o.id = a.occurrence_id WHERE a.rowid > ? AND a.attempt_dir IS NOT NULL "
                "AND a.state = 'settled' AND a.settled_at < ? "
                f"AND o.id NOT IN (SELECT value FROM json_each(?)) AND {self.removable} "
                "ORDER BY a.rowid LIMIT ?",
                (after, cutoff, json.dumps(newest_ids), self.batch),
            ).fetchall()
            if not rows:
                return
            after = _int(rows[-1][0])
            gone = [str(aid) for _, aid, path in rows if self.remove_dir(str(aid), str(path))]
            if gone:
                self.write(partial(_forget_dirs, attempt_ids=gone))

    # -- events and passes --------------------------------------------------------------------
    def events(self) -> None:
        with self.store.read() as conn:
            awaiting = _texts(conn, _AWAITING)
        bounds = _Log("events", "seq", "at", self.policy.events_keep_for,
                      self.policy.events_max_rows)  # fmt: skip
        self.prune_log(bounds, _EVENT_GUARD, {"awaiting": json.dumps(awaiting)})

    def passes(self) -> None:
        bounds = _Log("passes", "id", "started_at", self.policy.passes_keep_for,
                      self.policy.passes_max_rows)  # fmt: skip
        self.prune_log(bounds, "1", {})

    def prune_log(self, bounds: _Log, guard: str, params: dict[str, Any]) -> None:
        """Delete the log's old prefix (by age or count; never its newest row), oldest first."""
        ceiling = _log_ceiling(self.store.conn, bounds, self.now)
        table, key = bounds.table, bounds.key
        select = (
            f"SELECT {key} FROM {table} WHERE {key} > :after AND {key} < :ceiling AND {guard} "
            f"ORDER BY {key} LIMIT :batch"
        )
        after = 0
        while not self.out_of_time():
            values = {**params, "after": after, "ceiling": ceiling, "batch": self.rows(table)}
            keys = [_int(row[0]) for row in self.store.conn.execute(select, values)]
            if not keys:
                return
            work = partial(_delete_log_rows, bounds, guard, {**params, "keys": keys})
            self.write(work, paced=table)
            after = keys[-1]


def _floors(marks: list[_Mark]) -> dict[str, str]:
    return {m.routine_id: m.floor_at for m in marks if m.floor_at is not None}


def _fit(conn: apsw.Connection, candidates: list[str], batch: int) -> tuple[list[str], _Dirs]:
    """The leading candidates whose rows (with attempts and delivery) fit in one batch, and
    their attempt directories. The first always fits, however many attempts it has."""
    ids = json.dumps(candidates)
    attempts: dict[str, list[tuple[str, str | None]]] = {oid: [] for oid in candidates}
    for oid, aid, path in conn.execute(
        "SELECT occurrence_id, id, attempt_dir FROM attempts "
        "WHERE occurrence_id IN (SELECT value FROM json_each(?))",
        (ids,),
    ):
        attempts[oid].append((aid, path))
    delivered = {oid for (oid,) in conn.execute(_DELIVERY_ROWS, (ids,))}
    chosen: list[str] = []
    dirs: _Dirs = []
    rows = 0
    for oid in candidates:
        cost = 1 + len(attempts[oid]) + (oid in delivered)
        if chosen and rows + cost > batch:
            break
        chosen.append(oid)
        dirs.extend((aid, path) for aid, path in attempts[oid] if path is not None)
        rows += cost
    return chosen, dirs


_Dirs = list[tuple[str, str]]
_DELIVERY_ROWS = (
    "SELECT occurrence_id FROM deliveries WHERE occurrence_id IN (SELECT value FROM json_each(?))"
)


def _delete_occurrences(
    conn: apsw.Connection, *, chosen: list[str], removable: str
) -> dict[str, int]:
    """Children first (foreign keys are on), each occurrence re-checked inside the transaction."""
    confirmed = json.dumps(
        [
            oid
            for (oid,) in conn.execute(
                "SELECT o.id FROM occurrences o WHERE o.id IN (SELECT value FROM json_each(?)) "
                f"AND {removable}",
                (json.dumps(chosen),),
            )
        ]
    )
    touched = {}
    for table, column in (("deliveries", "occurrence_id"), ("attempts", "occurrence_id"),
                          ("occurrences", "id")):  # fmt: skip
        conn.execute(
            f"DELETE FROM {table} WHERE {column} IN (SELECT value FROM json_each(?))", (confirmed,)
        )
        touched[table] = conn.changes()
    return touched


def _delete_log_rows(
    bounds: _Log, guard: str, params: dict[str, Any], conn: apsw.Connection
) -> dict[str, int]:
    conn.execute(
        f"DELETE FROM {bounds.table} WHERE {bounds.key} IN (SELECT value FROM json_each(:keys)) "
        f"AND {guard}",
        {**params, "keys": json.dumps(params["keys"])},
    )
    return {bounds.table: conn.changes()}


def _forget_dirs(conn: apsw.Connection, *, attempt_ids: list[str]) -> dict[str, int]:
    conn.execute(
        "UPDATE attempts SET attempt_dir = NULL "
        "WHERE id IN (SELECT value FROM json_each(?)) AND state = 'settled'",
        (json.dumps(attempt_ids),),
    )
    return {"attempts.attempt_dir": conn.changes()}


def _remove_attempt_dir(attempt_id: str, attempt_dir: str) -> bool | None:
    """True: removed; None: nothing was there; False: it could not be (or must not be) removed.

    Only a directory named after its attempt, at an absolute path, is ever removed: a path
    in a damaged or edited store must not turn a sweep into ``rm -rf`` of anything else.
    """
    if not os.path.isabs(attempt_dir) or os.path.basename(attempt_dir) != attempt_id:
        log.warning(
            "retention: not removing %s: not attempt %s's directory", attempt_dir, attempt_id
        )
        return False
    try:
        shutil.rmtree(attempt_dir)  # refuses a symbolic link (OSError)
    except FileNotFoundError:
        return None
    except OSError as error:
        log.warning("retention: could not remove %s: %s", attempt_dir, error)
        return False
    return True


# Occurrences whose events are evidence still needed: unfinished, or awaiting a person.
_AWAITING = (
    "SELECT id FROM occurrences WHERE state = 'planned' "
    "UNION ALL SELECT id FROM occurrences WHERE state IN ('claimed', 'running') "
    "UNION ALL SELECT id FROM occurrences WHERE disposition = 'recovery_required'"
)
_EVENT_GUARD = (
    "(occurrence_id IS NULL OR occurrence_id NOT IN (SELECT value FROM json_each(:awaiting)))"
)


@dataclass(frozen=True)
class _Log:
    """An append-only table with an increasing integer key and a time column."""

    table: str
    key: str
    at: str
    keep_for: timedelta
    max_rows: int


def _log_ceiling(conn: apsw.Connection, bounds: _Log, now: datetime) -> int:
    """Rows keyed below this are old (by age or by count); the newest row never is."""
    table, key = bounds.table, bounds.key
    newest = _key(conn, f"SELECT max({key}) FROM {table}")
    if newest is None:
        return 0
    young = _key(
        conn,
        f"SELECT {key} FROM {table} WHERE {bounds.at} >= ? ORDER BY {key} LIMIT 1",
        (instant_text(now - bounds.keep_for),),
    )
    nth = _key(
        conn,
        f"SELECT {key} FROM {table} ORDER BY {key} DESC LIMIT 1 OFFSET ?",
        (bounds.max_rows - 1,),
    )
    by_age = newest if young is None else young
    by_count = 0 if nth is None else nth
    return min(newest, max(by_age, by_count))


def _key(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> int | None:
    row = conn.execute(sql, params).fetchone()
    value = None if row is None else row[0]
    return value if isinstance(value, int) else None


# --- when to sweep ----------------------------------------------------------------------------


@dataclass
class Sweeper:
    """Runs :func:`sweep` from the scheduler loop: at most once per ``every``, at most
    ``budget`` seconds at a time, picking an unfinished sweep up again on the next call.

    Call :meth:`maybe_sweep` after a pass, holding no transaction, as the leader only, on the
    thread that owns the store's connection.
    """

    policy: RetentionPolicy = field(default_factory=RetentionPolicy)
    every: timedelta = timedelta(hours=6)
    budget: float | None = 0.25
    batch: int = 500
    pause: Callable[[float], None] | None = time.sleep
    retry_after: timedelta = timedelta(minutes=5)  # after a store error (busy, full disk)
    last: datetime | None = None  # when the last sweep finished
    unfinished: bool = False
    not_before: datetime | None = None

    def due(self, now: datetime) -> bool:
        if self.not_before is not None and now < self.not_before:
            return False
        return self.unfinished or self.last is None or now - self.last >= self.every

    def maybe_sweep(
        self, store: Store, now: datetime, deadline: datetime | None = None
    ) -> SweepReport | None:
        """Sweep if due, for at most half the time until ``deadline`` (the scheduler's next
        pass), so that a sweep never makes a due claim wait; it always makes some progress."""
        if not self.due(now):
            return None
        try:
            report = sweep(store, now, self.policy, batch=self.batch,
                           budget=self._budget(now, deadline), pause=self.pause)  # fmt: skip
        except StoreEnvironmentError as error:
            log.warning("retention sweep failed, trying again later: %s", error)
            self.unfinished, self.not_before = True, now + self.retry_after
            return None
        self.unfinished, self.not_before = not report.finished, None
        if report.finished:
            self.last = now
        return report

    def next_due(self, now: datetime) -> datetime:
        """When :meth:`maybe_sweep` will next do something — part of the loop's deadline,
        so retention needs no timer of its own."""
        if self.not_before is not None:
            return self.not_before
        if self.unfinished or self.last is None:
            return now
        return self.last + self.every

    def _budget(self, now: datetime, deadline: datetime | None) -> float | None:
        if deadline is None:
            return self.budget
        half = max(0.0, (deadline - now).total_seconds() / 2)
        return half if self.budget is None else min(self.budget, half)


# --- growth, for `coven doctor` ---------------------------------------------------------------


class TableGrowth(TypedDict):
    rows: int
    bytes: int | None  # pages of the table and its indexes; None without dbstat


class FolderGrowth(TypedDict):
    path: str
    files: int
    bytes: int


class Growth(TypedDict):
    tables: dict[str, TableGrowth]
    file_bytes: int  # page_count * page_size
    free_bytes: int  # pages freed by deletions, reused before the file grows again
    wal_bytes: int
    measured_by: str  # "dbstat" or "pages"
    attempts: FolderGrowth
    output: FolderGrowth


def growth(store: Store) -> Growth:
    """Rows and approximate bytes per table, and the size of the attempts and output folders."""
    with store.read() as conn:
        tables = _table_rows(conn)
        sizes = _table_bytes(conn)
        page_size, pages, free = (
            int(scalar(conn, f"PRAGMA {name}"))
            for name in ("page_size", "page_count", "freelist_count")
        )
    return Growth(
        tables={
            name: TableGrowth(rows=rows, bytes=_bytes_of(sizes, name)) for name, rows in tables
        },
        file_bytes=pages * page_size,
        free_bytes=free * page_size,
        wal_bytes=_file_size(store.path.with_name(store.path.name + "-wal")),
        measured_by="pages" if sizes is None else "dbstat",
        attempts=_folder(store.data_dir / "attempts"),
        output=_folder(store.data_dir / "output"),
    )


def _table_rows(conn: apsw.Connection) -> list[tuple[str, int]]:
    return [
        (name, int(scalar(conn, f"SELECT count(*) FROM {_quote(name)}")))
        for name in _user_tables(conn)
    ]


def _table_bytes(conn: apsw.Connection) -> dict[str, int] | None:
    """Bytes per table, its indexes included, if this SQLite has the ``dbstat`` table."""
    has = conn.execute("SELECT 1 FROM pragma_module_list WHERE name = 'dbstat'").fetchone()
    if has is None:
        return None
    rows = conn.execute(
        "SELECT s.tbl_name, sum(d.pgsize) FROM dbstat d JOIN sqlite_schema s ON s.name = d.name "
        "GROUP BY s.tbl_name"
    )
    return {name: int(size) for name, size in rows}


def _bytes_of(sizes: dict[str, int] | None, table: str) -> int | None:
    return None if sizes is None else sizes.get(table, 0)


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _folder(path: Path) -> FolderGrowth:
    files = size = 0
    for entry in _walk(path):
        files += 1
        size += entry
    return FolderGrowth(path=os.fspath(path), files=files, bytes=size)


def _walk(path: Path) -> Iterator[int]:
    """Sizes of the regular files under ``path``, not following links; errors skipped."""
    try:
        entries = list(os.scandir(path))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                yield from _walk(Path(entry.path))
            elif entry.is_file(follow_symlinks=False):
                yield entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue
