"""Retention keeps the store bounded over a long simulated history and never loses what matters
(DESIGN §11, issue #5). Virtual time throughout: no test sleeps."""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import apsw
import pytest

from coven_core.clock import VirtualClock
from coven_core.integrity import retention
from coven_core.integrity.retention import RetentionPolicy, Sweeper, SweepReport, growth, sweep
from coven_core.store.codec import instant_text
from coven_core.store.connection import open_connection
from coven_core.store.store import Store
from coven_core.store.wal import log_pages
from tests.core.conftest import T0, Engine, make_engine

MINUTES_PER_DAY = 24 * 60
YEAR = 365 * MINUTES_PER_DAY
ATTEMPT_FILES = ("stdout", "stderr", "journal.jsonl", "spec.json", "runner.log")


# --- a long history, written in bulk the way the engine writes it -----------------------------

_MINUTES = (  # each minute's instant, id stamp and run id, computed once per chunk
    "CREATE TEMP TABLE t AS WITH RECURSIVE m(i) AS "
    "(SELECT :lo UNION ALL SELECT i + 1 FROM m WHERE i + 1 < :hi) SELECT i, "
    "strftime('%Y-%m-%dT%H:%M:%S.000000Z', :start, '+' || i || ' minutes') AS at, "
    "strftime('%Y%m%dT%H%M%SZ', :start, '+' || i || ' minutes') AS stamp, "
    "'run' || printf('%06x%06x', :family, :salt + i) AS run FROM m"
)
_HISTORY = (
    # core/scheduling/occurrences.py insert_moment + claim + mark_running, settlement.py settle
    "INSERT INTO occurrences (id, routine_id, revision, kind, scheduled_utc, local_time, "
    "utc_offset, fold, local_kind, zone, tzdb_version, state, disposition, run_id, planned_at, "
    "settled_at, generation) SELECT :rid || '@' || stamp, :rid, 1, 'scheduled', at, "
    "substr(at, 1, 19), 0, 0, 'regular', 'UTC', '2026a', 'settled', 'succeeded', run, at, at, 1 "
    "FROM t",
    # claim, mark_dispatching, mark_running (the runner's pid, start, directory), settle_attempt
    "INSERT INTO attempts (id, occurrence_id, number, state, generation, claimed_at, "
    "dispatched_at, started_at, exited_at, settled_at, pid, exit_code, message, attempt_dir, "
    "runner_pid, runner_start, command_pid) SELECT run || '.1', :rid || '@' || stamp, 1, "
    "'settled', 1, at, at, at, at, at, NULL, 0, 'exited with status 0', "
    ":root || '/' || run || '.1', 4242 + i % 30000, 1.7e9 + i * 60, 4243 + i % 30000 FROM t",
    # settlement._succeeded queues the delivery; delivering.record commits its receipt
    "INSERT INTO deliveries (occurrence_id, state, path, size, sha256, delivered_at, tries) "
    "SELECT :rid || '@' || stamp, 'delivered', :out || '/' || stamp || '-' || substr(run, 4) "
    "|| '.out', 42, printf('%064x', i), at, 1 FROM t",
    # events.record in the same transactions, in the order the engine records them
    "INSERT INTO events (at, kind, routine_id, occurrence_id, data) SELECT at, k.kind, :rid, "
    ":rid || '@' || stamp, CASE k.n WHEN 2 THEN json_object('run_id', run) "
    "WHEN 3 THEN json_object('pid', 4242) "
    'WHEN 4 THEN \'{"disposition": "succeeded", "reason": null}\' '
    "WHEN 5 THEN json_object('path', :out || '/' || stamp || '.out') ELSE '{}' END "
    "FROM t, (SELECT 1 AS n, 'planned' AS kind UNION ALL SELECT 2, 'claimed' "
    "UNION ALL SELECT 3, 'started' UNION ALL SELECT 4, 'settled' "
    "UNION ALL SELECT 5, 'delivered') k ORDER BY i, k.n",
    # passes.insert_pass: the deadline pass that planned and started it, the one that settled it
    "INSERT INTO passes (holder, generation, role, scheduled_at, started_at, duration_ms, "
    "wake_reason, planned, claimed, dispatched, recovered, settled) SELECT "
    "'host/4242/1700000000.000/0a1b2c3d', 1, 'leader', at, at, 0.8, k.reason, k.did, k.did, "
    "k.did, 0, 1 - k.did FROM t, (SELECT 1 AS n, 'deadline' AS reason, 1 AS did "
    "UNION ALL SELECT 2, 'run_finished', 0) k ORDER BY i, k.n",
)


def write_history(
    store: Store, routine_id: str, start: datetime, minutes: int, *, chunk: int = 100_000
) -> None:
    """``minutes`` minutely occurrences of ``routine_id`` from ``start``, as the engine leaves
    them with the runner runtime: each succeeded, with its settled attempt (and an attempt
    directory path under ``<data>/attempts`` that does not exist on disk), the receipt of
    its delivered output, five events and two pass records. Pure SQL, ``chunk`` minutes per
    transaction."""
    params = {
        "rid": routine_id,
        "start": start.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"),
        "root": os.fspath(store.data_dir / "attempts"),
        "out": os.fspath(store.data_dir / "output" / routine_id),
        # run ids: unique per routine and minute, 12 hex digits like ids.new_run_id()
        "family": zlib.crc32(routine_id.encode()) & 0xFFFFFF,
        "salt": int((start - datetime(2020, 1, 1, tzinfo=UTC)).total_seconds()) // 60,
    }
    store.conn.execute("PRAGMA cache_size = -262144")  # 256 MiB: the year's indexes fit
    for lo in range(0, minutes, chunk):
        with store.write() as conn:
            conn.execute(_MINUTES, {**params, "lo": lo, "hi": min(minutes, lo + chunk)})
            for statement in _HISTORY:
                conn.execute(statement, params)
            conn.execute("DROP TABLE temp.t")


def occurrence_id(routine_id: str, at: datetime) -> str:
    return f"{routine_id}@{at.strftime('%Y%m%dT%H%M%SZ')}"


def attempt_of(store: Store, oid: str) -> tuple[str, str]:
    row = store.conn.execute(
        "SELECT id, attempt_dir FROM attempts WHERE occurrence_id = ?", (oid,)
    ).fetchone()
    return row[0], row[1]


def make_attempt_dir(store: Store, oid: str) -> Path:
    """Put the runner's files on disk for this occurrence's attempt."""
    path = Path(attempt_of(store, oid)[1])
    path.mkdir(parents=True)
    for name in ATTEMPT_FILES:
        (path / name).write_text(f"{name} of {oid}\n")
    return path


def set_state(store: Store, oid: str, occurrence: str, attempt: str, delivery: str | None) -> None:
    """Turn one written occurrence into another kind: unfinished, awaiting a person, …"""
    with store.write() as conn:
        conn.execute(
            f"UPDATE occurrences SET {occurrence} WHERE id = ?", (oid,)
        )  # fmt: skip
        conn.execute(f"UPDATE attempts SET {attempt} WHERE occurrence_id = ?", (oid,))
        if delivery is None:
            conn.execute("DELETE FROM deliveries WHERE occurrence_id = ?", (oid,))
        else:
            conn.execute(f"UPDATE deliveries SET {delivery} WHERE occurrence_id = ?", (oid,))
        conn.execute(
            "UPDATE events SET data = '{}' WHERE occurrence_id = ? AND kind = 'settled'", (oid,)
        )


def count(store: Store, sql: str, params: tuple = ()) -> int:
    return int(store.conn.execute(sql, params).fetchone()[0])


def rows(store: Store, table: str) -> int:
    return count(store, f"SELECT count(*) FROM {table}")


def assert_consistent(store: Store) -> None:
    assert store.conn.execute("PRAGMA foreign_key_check").fetchall() == []
    orphans = "SELECT count(*) FROM {} c LEFT JOIN occurrences o ON o.id = c.occurrence_id WHERE o.id IS NULL"
    assert count(store, orphans.format("attempts")) == 0
    assert count(store, orphans.format("deliveries")) == 0


# --- a month, and a year ---------------------------------------------------------------------


def swept(store: Store, now: datetime, policy: RetentionPolicy, **options) -> SweepReport:
    """A sweep that never sleeps: under virtual time no other writer waits for the lock."""
    return sweep(store, now, policy, pause=None, **options)


def scaled(policy: RetentionPolicy, share: float) -> RetentionPolicy:
    """The policy in proportion to a shorter history: every age and count times ``share``."""
    changes = {}
    for name, value in vars(policy).items():
        changes[name] = (
            value * share if isinstance(value, timedelta) else max(1, int(value * share))
        )
    return replace(policy, **changes)


@dataclass
class History:
    """A minutely routine that has run for ``days``; now is T0, the end of those days."""

    engine: Engine
    routine_id: str
    days: int
    policy: RetentionPolicy

    @property
    def store(self) -> Store:
        return self.engine.store

    def ago(self, share: float) -> datetime:
        """A moment ``share`` of the way back through the history, on a whole minute."""
        return T0 - timedelta(minutes=int(self.days * MINUTES_PER_DAY * share))


@pytest.fixture(
    params=[
        pytest.param(30, id="month"),  # the default policy scaled to 30/365
        pytest.param(365, id="year", marks=pytest.mark.slow),  # the default policy itself
    ]
)
def history(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[History]:
    days = request.param
    start = T0 - timedelta(days=days)
    engine = make_engine(tmp_path / "data", VirtualClock(start))
    rid = engine.add("minutely", "* * * * *")
    write_history(engine.store, rid, start, days * MINUTES_PER_DAY)
    engine.clock.advance_to(T0)
    yield History(engine, rid, days, scaled(RetentionPolicy(), days / 365))
    engine.store.close()


def protect_some(history: History) -> dict[str, str]:
    """Rows that must survive any sweep, with attempt directories on disk."""
    store, rid = history.store, history.routine_id
    ids = {
        "recovery_required": occurrence_id(rid, history.ago(335 / 365)),  # 11 months of 12
        "running": occurrence_id(rid, history.ago(200 / 365)),  # its runner may still be alive
        "pending_delivery": occurrence_id(rid, history.ago(300 / 365)),
        "failed_delivery": occurrence_id(rid, history.ago(250 / 365)),
    }
    set_state(store, ids["recovery_required"],
              "disposition = 'recovery_required', settled_at = NULL",
              "failure_class = 'ambiguous', exit_code = NULL", None)  # fmt: skip
    set_state(store, ids["running"], "state = 'running', disposition = NULL, settled_at = NULL",
              "state = 'running', exited_at = NULL, settled_at = NULL, exit_code = NULL",
              None)  # fmt: skip
    set_state(store, ids["pending_delivery"], "state = 'settled'", "state = 'settled'",
              "state = 'pending', path = NULL, sha256 = NULL, delivered_at = NULL")  # fmt: skip
    set_state(store, ids["failed_delivery"], "state = 'settled'", "state = 'settled'",
              "state = 'failed', tries = 5, last_error = 'the disk is full'")  # fmt: skip
    for oid in ids.values():
        make_attempt_dir(store, oid)
    return ids


def sample_dirs(history: History) -> dict[datetime, Path]:
    """Attempt directories on disk for about fifty ordinary runs across the history."""
    moments = [history.ago(k / 50) + timedelta(minutes=7) for k in range(1, 50)]
    return {
        at: make_attempt_dir(history.store, occurrence_id(history.routine_id, at)) for at in moments
    }


def test_a_minutely_routine_stays_bounded_and_keeps_what_matters(history: History) -> None:
    store, policy = history.store, history.policy
    protected = protect_some(history)
    dirs = sample_dirs(history)
    minutes = history.days * MINUTES_PER_DAY
    assert rows(store, "occurrences") == minutes

    report = swept(store, T0, policy, batch=500)

    assert report.finished and report.most_rows_in_transaction <= 500
    kept_for_age = int(policy.history_keep_for / timedelta(minutes=1))
    history_bound = max(policy.history_keep_newest, kept_for_age) + len(protected)
    assert rows(store, "occurrences") <= min(history_bound, policy.history_max_rows)
    young = "SELECT count(*) FROM occurrences WHERE scheduled_utc >= ?"
    assert count(store, young, (instant_text(T0 - policy.history_keep_for),)) == kept_for_age
    assert rows(store, "events") <= policy.events_max_rows + 5 * 2  # + the evidence below
    assert rows(store, "passes") <= policy.passes_max_rows
    assert_consistent(store)
    for what, oid in protected.items():
        assert Path(attempt_of(store, oid)[1], "journal.jsonl").exists(), what
    for what in ("recovery_required", "running"):  # their events are evidence too
        assert count(store, "SELECT count(*) FROM events WHERE occurrence_id = ?",
                     (protected[what],)) == 5, what  # fmt: skip
    cutoff = T0 - policy.attempt_dirs_keep_for
    assert {at for at, path in dirs.items() if path.exists()} == {at for at in dirs if at >= cutoff}
    assert report.attempt_dir_errors == 0

    again = swept(store, T0, policy)
    assert sum(again.deleted.values()) == 0 and again.transactions == 0


def test_the_store_file_stops_growing_once_retention_keeps_up(tmp_path: Path) -> None:
    """Freed pages are reused: swept every few days, the file levels off."""
    start = T0 - timedelta(days=10)
    engine = make_engine(tmp_path / "data", VirtualClock(start))
    rid = engine.add("minutely", "* * * * *")
    store, policy = engine.store, scaled(RetentionPolicy(), 10 / 365)
    write_history(store, rid, start, 10 * MINUTES_PER_DAY)
    swept(store, T0, policy)
    store.conn.execute("VACUUM")  # from here on the file holds only what the policy keeps
    sizes = []
    for day in range(8):
        at = T0 + timedelta(days=day)
        write_history(store, rid, at, MINUTES_PER_DAY)
        assert swept(store, at + timedelta(days=1), policy).most_rows_in_transaction <= 500
        sizes.append(growth(store)["file_bytes"])
    assert sizes[-1] <= sizes[-4] * 1.01, sizes  # the last rounds reuse what retention frees
    engine.store.close()


# --- what a sweep must never remove, on a small store -----------------------------------------

TINY = RetentionPolicy(
    history_keep_newest=10,
    history_keep_for=timedelta(hours=1),
    history_max_rows=100,
    events_keep_for=timedelta(hours=1),
    events_max_rows=200,
    passes_keep_for=timedelta(hours=1),
    passes_max_rows=50,
    attempt_dirs_keep_for=timedelta(minutes=30),
)


@pytest.fixture
def small(tmp_path: Path) -> tuple[Engine, str]:
    """Two days of a minutely routine; now is their end."""
    start = T0 - timedelta(days=2)
    engine = make_engine(tmp_path / "data", VirtualClock(start))
    rid = engine.add("minutely", "* * * * *")
    write_history(engine.store, rid, start, 2 * MINUTES_PER_DAY)
    engine.clock.advance_to(T0)
    yield engine, rid
    engine.store.close()


def test_each_transaction_touches_at_most_batch_rows(small) -> None:
    engine, _ = small
    hours = timedelta(hours=44)  # four hours of the two days go: a few hundred transactions
    policy = replace(TINY, history_keep_for=hours, events_keep_for=hours, passes_keep_for=hours,
                     events_max_rows=10**6, passes_max_rows=10**6, history_max_rows=10**6)  # fmt: skip
    report = swept(engine.store, T0, policy, batch=7)
    assert report.most_rows_in_transaction <= 7
    assert report.transactions > sum(report.deleted.values()) // 7
    assert report.longest_transaction > 0
    assert_consistent(engine.store)


def test_history_is_kept_by_count_or_age_whichever_keeps_more(small) -> None:
    engine, rid = small
    policy = replace(TINY, history_max_rows=10_000)  # keeps the newest 10 and the last hour
    kept = "SELECT count(*) FROM occurrences WHERE routine_id = ?"
    swept(engine.store, T0, replace(policy, history_keep_newest=100))
    assert count(engine.store, kept, (rid,)) == 100  # the newest 100 are more than an hour
    swept(engine.store, T0, policy)
    assert count(engine.store, kept, (rid,)) == 60  # an hour is more than the newest 10


def test_the_overall_bound_takes_age_kept_rows_first_oldest_first(small, tmp_path) -> None:
    engine, _ = small
    quiet = engine.add("hourly", "0 * * * *")
    write_history(engine.store, quiet, T0 - timedelta(days=2) + timedelta(seconds=30), 48)
    policy = replace(TINY, history_keep_newest=20, history_keep_for=timedelta(hours=3),
                     history_max_rows=150)  # fmt: skip
    swept(engine.store, T0, policy)
    by = dict(engine.store.conn.execute("SELECT routine_id, count(*) FROM occurrences GROUP BY 1"))
    assert sum(by.values()) <= 150
    assert by[quiet] >= 20  # its newest 20 outlive the busy routine's rows kept only for age


def test_protected_rows_survive_even_the_overall_bound(small) -> None:
    engine, rid = small
    ids = protect_some_recent(engine, rid)
    report = swept(engine.store, T0, replace(TINY, history_keep_newest=1, history_max_rows=1))
    left = {oid for (oid,) in engine.store.conn.execute("SELECT id FROM occurrences")}
    assert set(ids.values()) <= left
    newest = occurrence_id(rid, T0 - timedelta(minutes=1))
    assert newest in left  # the routine's last result
    assert len(left) == len(ids) + 1
    assert report.attempt_dir_errors == 0
    for oid in ids.values():
        assert Path(attempt_of(engine.store, oid)[1], "stdout").exists()
    assert_consistent(engine.store)


def protect_some_recent(engine: Engine, rid: str) -> dict[str, str]:
    ago = {"recovery_required": 2000, "running": 1500, "pending_delivery": 1000,
           "failed_delivery": 900}  # minutes  # fmt: skip
    ids = {what: occurrence_id(rid, T0 - timedelta(minutes=m)) for what, m in ago.items()}
    store = engine.store
    set_state(store, ids["recovery_required"],
              "disposition = 'recovery_required', settled_at = NULL", "state = 'settled'", None)  # fmt: skip
    set_state(store, ids["running"], "state = 'running', disposition = NULL",
              "state = 'running', settled_at = NULL", None)  # fmt: skip
    set_state(store, ids["pending_delivery"], "state = 'settled'", "state = 'settled'",
              "state = 'pending'")  # fmt: skip
    set_state(store, ids["failed_delivery"], "state = 'settled'", "state = 'settled'",
              "state = 'failed'")  # fmt: skip
    for oid in ids.values():
        make_attempt_dir(store, oid)
    return ids


def test_an_occurrence_another_table_refers_to_is_kept(small) -> None:
    """A reconciliation (or any table with a foreign key to occurrences or attempts) keeps
    the run it refers to, instead of the sweep failing on the foreign key."""
    engine, rid = small
    old = occurrence_id(rid, T0 - timedelta(days=1))
    attempt, _ = attempt_of(engine.store, occurrence_id(rid, T0 - timedelta(days=1, minutes=1)))
    with engine.store.write() as conn:
        conn.execute("CREATE TABLE notes (occurrence_id TEXT REFERENCES occurrences (id), "
                     "attempt_id TEXT REFERENCES attempts)")  # fmt: skip
        conn.execute("INSERT INTO notes VALUES (?, NULL), (NULL, ?)", (old, attempt))
    swept(engine.store, T0, TINY)
    left = {oid for (oid,) in engine.store.conn.execute("SELECT occurrence_id FROM attempts")}
    assert old in left and occurrence_id(rid, T0 - timedelta(days=1, minutes=1)) in left
    assert_consistent(engine.store)


def test_attempt_dirs_go_by_age_but_never_the_last_results(small) -> None:
    engine, rid = small
    old = make_attempt_dir(engine.store, occurrence_id(rid, T0 - timedelta(hours=5)))
    young = make_attempt_dir(engine.store, occurrence_id(rid, T0 - timedelta(minutes=10)))
    policy = replace(TINY, history_keep_for=timedelta(days=3), history_max_rows=10_000)
    report = swept(engine.store, T0, policy)
    assert not old.exists() and young.exists()
    assert report.attempt_dirs_removed == 1
    oid = occurrence_id(rid, T0 - timedelta(hours=5))
    assert attempt_of(engine.store, oid)[1] is None  # forgotten, so never tried again


def test_a_last_result_keeps_its_attempt_dir_however_old(tmp_path) -> None:
    start = T0 - timedelta(days=40)
    engine = make_engine(tmp_path / "data", VirtualClock(start))
    rid = engine.add("monthly", "0 0 1 * *")
    write_history(engine.store, rid, start, 1)
    path = make_attempt_dir(engine.store, occurrence_id(rid, start))
    swept(engine.store, T0, RetentionPolicy())
    assert path.exists()
    engine.store.close()


def test_a_path_that_is_not_the_attempts_own_directory_is_never_removed(small, tmp_path) -> None:
    engine, rid = small
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    oid = occurrence_id(rid, T0 - timedelta(hours=5))
    with engine.store.write() as conn:
        conn.execute("UPDATE attempts SET attempt_dir = ? WHERE occurrence_id = ?",
                     (os.fspath(precious), oid))  # fmt: skip
    report = swept(engine.store, T0, TINY)
    assert (precious / "thesis.tex").exists()
    assert report.attempt_dir_errors == 1 and report.failed_dirs == [os.fspath(precious)]


def test_events_and_passes_go_by_age_and_count_keeping_the_newest(small) -> None:
    engine, _ = small
    store = engine.store
    swept(store, T0, replace(TINY, events_max_rows=100_000, passes_max_rows=100_000))
    cutoff = instant_text(T0 - TINY.events_keep_for)
    assert count(store, "SELECT count(*) FROM events WHERE at < ?", (cutoff,)) == 0
    assert count(store, "SELECT count(*) FROM passes WHERE started_at < ?", (cutoff,)) == 0
    swept(store, T0, replace(TINY, events_max_rows=10, passes_max_rows=1))
    assert rows(store, "events") == 10 and rows(store, "passes") == 1
    swept(store, T0 + timedelta(days=365), TINY)
    assert rows(store, "passes") == 1  # the newest pass tells how long the scheduler was off


def test_events_of_runs_awaiting_a_person_are_kept(small) -> None:
    engine, rid = small
    ids = protect_some_recent(engine, rid)
    swept(engine.store, T0, replace(TINY, events_max_rows=1))
    for what in ("recovery_required", "running"):
        assert count(engine.store, "SELECT count(*) FROM events WHERE occurrence_id = ?",
                     (ids[what],)) == 5, what  # fmt: skip


def test_a_time_budget_stops_between_transactions_and_the_next_sweep_goes_on(small) -> None:
    engine, _ = small
    first = swept(engine.store, T0, TINY, batch=100, budget=0.0)
    assert not first.finished and first.transactions == 1  # always some progress
    while not swept(engine.store, T0, TINY, batch=100, budget=0.05).finished:
        pass
    assert rows(engine.store, "passes") <= TINY.passes_max_rows


def test_after_each_transaction_the_sweep_leaves_the_lock_free_for_a_waiting_claim(small) -> None:
    engine, _ = small
    pauses: list[float] = []
    report = sweep(engine.store, T0, TINY, batch=200, pause=pauses.append)
    assert len(pauses) == report.transactions > 1
    assert min(pauses) >= 0.002  # longer than a busy handler's first sleeps (1 ms, 2 ms)
    assert max(pauses) >= 2 * report.longest_transaction


def synchronous(store: Store) -> int:
    return int(store.conn.execute("PRAGMA synchronous").get)


def test_the_sweeps_commits_skip_their_fsync_and_every_other_write_keeps_it(small) -> None:
    """A deletion is redone by the next sweep if a power cut loses it: its COMMIT need not hold
    the write lock through an fsync (2 = FULL, 1 = NORMAL)."""
    engine, _ = small
    during: list[int] = []
    sweep(
        engine.store, T0, TINY, batch=200, pause=lambda _: during.append(synchronous(engine.store))
    )
    assert during and set(during) == {1}
    assert synchronous(engine.store) == 2


def test_a_failed_sweep_leaves_the_connection_syncing_every_commit(small) -> None:
    engine, _ = small

    def interrupted(_: float) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sweep(engine.store, T0, TINY, batch=200, pause=interrupted)
    assert synchronous(engine.store) == 2


class BusyCheckpoints:
    """A connection on which another process is always checkpointing."""

    def __init__(self, conn: apsw.Connection) -> None:
        self._conn = conn

    def __getattr__(self, name: str) -> object:
        return getattr(self._conn, name)

    def wal_checkpoint(self, *args: object, **kwargs: object) -> None:
        raise apsw.BusyError("database is locked")


def test_a_checkpoint_another_connection_is_running_is_left_to_it(small) -> None:
    engine, _ = small
    store = Store(BusyCheckpoints(engine.store.conn), engine.store.data_dir)  # type: ignore[arg-type]
    report = swept(store, T0, TINY)
    assert report.finished and report.transactions > 16


def test_the_sweep_checkpoints_once_its_log_reaches_its_threshold(small, monkeypatch) -> None:
    """Two days of history deleted in a few hundred transactions, the log never far past the
    threshold: the sweep defers the per-commit checkpoint but keeps its own."""
    engine, _ = small
    monkeypatch.setattr(retention, "_CHECKPOINT_PAGES", 40)
    logged: list[int] = []
    report = sweep(engine.store, T0, TINY, batch=50,
                   pause=lambda _: logged.append(log_pages(engine.store.conn) or 0))  # fmt: skip
    assert report.finished and report.transactions > 50
    assert max(logged) < 40 + report.most_rows_in_transaction  # a page holds several rows
    assert logged.count(0) > report.transactions // 10  # checkpointed, again and again


def test_the_policy_refuses_bounds_that_would_empty_the_store() -> None:
    with pytest.raises(ValueError, match="history_keep_newest"):
        RetentionPolicy(history_keep_newest=0)
    with pytest.raises(ValueError, match="events_keep_for"):
        RetentionPolicy(events_keep_for=timedelta(days=-1))


# --- the sweeper in the loop, and growth for `coven doctor` -----------------------------------


def test_the_sweeper_runs_when_due_and_resumes_an_unfinished_sweep(small) -> None:
    engine, _ = small
    sweeper = Sweeper(TINY, every=timedelta(hours=6), budget=0.0, pause=None)
    first = sweeper.maybe_sweep(engine.store, T0)
    assert isinstance(first, SweepReport) and not first.finished and sweeper.unfinished
    sweeper.budget = None
    assert sweeper.maybe_sweep(engine.store, T0 + timedelta(minutes=1)) is not None
    assert not sweeper.unfinished and sweeper.last == T0 + timedelta(minutes=1)
    assert sweeper.maybe_sweep(engine.store, T0 + timedelta(hours=1)) is None
    assert sweeper.maybe_sweep(engine.store, T0 + timedelta(hours=7)) is not None


def test_the_sweeper_gives_way_to_the_next_pass_and_backs_off_after_a_store_error(small) -> None:
    engine, _ = small
    sweeper = Sweeper(TINY, pause=None)
    assert sweeper._budget(T0, T0 + timedelta(seconds=0.1)) == 0.05  # half the gap
    report = sweeper.maybe_sweep(engine.store, T0, deadline=T0)  # a pass is due right now
    assert report is not None and report.transactions == 1 and sweeper.unfinished
    other = open_connection(engine.store.path)  # another process holds the write lock …
    other.execute("BEGIN IMMEDIATE")
    engine.store.conn.set_busy_timeout(0)  # (fail at once instead of after 5 s)
    assert sweeper.maybe_sweep(engine.store, T0) is None
    other.execute("ROLLBACK")
    other.close()
    assert sweeper.not_before == T0 + timedelta(minutes=5)  # … so the sweep tries again later
    assert sweeper.maybe_sweep(engine.store, T0 + timedelta(minutes=1)) is None
    assert sweeper.maybe_sweep(engine.store, T0 + timedelta(minutes=5)) is not None


def test_growth_reports_rows_bytes_and_folders(small) -> None:
    engine, rid = small
    make_attempt_dir(engine.store, occurrence_id(rid, T0 - timedelta(hours=1)))
    found = growth(engine.store)
    assert found["tables"]["occurrences"]["rows"] == 2 * MINUTES_PER_DAY
    assert found["tables"]["events"]["rows"] == rows(engine.store, "events")
    assert found["measured_by"] == "dbstat"  # apsw's SQLite has it
    assert found["tables"]["events"]["bytes"] > found["tables"]["passes"]["bytes"] > 0
    assert found["file_bytes"] >= sum(t["bytes"] or 0 for t in found["tables"].values())
    assert found["attempts"]["files"] == len(ATTEMPT_FILES) and found["attempts"]["bytes"] > 0
    assert found["output"]["files"] == 0


# --- end to end: the real scheduler keeps running while the store stays bounded ---------------


@pytest.mark.parametrize(
    ("days", "sweep_every"),
    [
        (0.25, timedelta(hours=1)),
        pytest.param(7, timedelta(days=1), marks=pytest.mark.slow),
    ],
)
def test_the_store_stays_bounded_while_a_minutely_routine_keeps_running(
    tmp_path: Path, days: float, sweep_every: timedelta
) -> None:
    engine = make_engine(tmp_path / "data", VirtualClock(T0))
    rid = engine.add("minutely", "* * * * *")
    policy = replace(TINY, history_keep_newest=30, history_keep_for=timedelta(minutes=20))
    bound = {"occurrences": 31, "events": 200 + 5, "passes": 50}
    end, at = T0 + timedelta(days=days), T0
    while at < end:
        at += sweep_every
        engine.run_until(at)
        report = swept(engine.store, at, policy, batch=50)
        assert report.most_rows_in_transaction <= 50
        for table, most in bound.items():
            assert rows(engine.store, table) <= most, (at, table)
        assert_consistent(engine.store)
    last = engine.store.conn.execute(
        "SELECT scheduled_utc, disposition FROM occurrences WHERE routine_id = ? "
        "AND state = 'settled' ORDER BY scheduled_utc DESC LIMIT 1", (rid,)).fetchone()  # fmt: skip
    assert last == (instant_text(end), "succeeded")
    assert len(engine.runtime.launches) == days * MINUTES_PER_DAY + 1
    engine.store.close()
