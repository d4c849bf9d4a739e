"""Store faults: an I/O error, a full disk or a busy store at every write the engine makes
(issue #6; DESIGN §9, §11, §13).

The store is opened through :class:`~tests.core.faults.vfs.FaultVFS`, which fails the Nth write
to the write-ahead log (or the database file) after it is armed. Every case checks the same
promises: the error is classified (``StoreEnvironmentError`` of kind ``io``/``full``/``busy``,
pass report ``store_<kind>``), the pass fails cleanly and is retried 5 s later, every row that
was committed before is still there, nothing is reported as a success that did not happen, no
run is dispatched twice, and once the fault clears the engine carries on and every invariant
holds (:func:`tests.core.simulation.audit_store`, the doctor's audit included).
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import os
import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

import apsw
import pytest

from coven_core.clock import SAFETY_CAP, VirtualClock, WakeSignal
from coven_core.integrity import retention
from coven_core.integrity.retention import RetentionPolicy, Sweeper
from coven_core.model import FailureClass
from coven_core.operator import Operator
from coven_core.runner import journal
from coven_core.runner.journal import ExitRecord
from coven_core.runtime.base import Launch, LaunchError, Started
from coven_core.runtime.runner import JOURNAL
from coven_core.scheduling import delivery, receipts
from coven_core.scheduling.passes import PassReport
from coven_core.scheduling.scheduler import Limits, Scheduler
from coven_core.store.errors import StoreEnvironmentError
from coven_core.store.store import Store
from coven_core.store.wal import StoreConnection
from coven_core.system import failpoints
from tests.core.conftest import T0, Engine, ScriptedRuntime, minutes
from tests.core.faults.vfs import FaultKind, FaultVFS, registered_vfs
from tests.core.simulation import audit_store

RETRY_AFTER = timedelta(seconds=5)
#: (kind, nth, sticky): the first write of the commit, or one partway through it, failing once
#: or until cleared.
FAULTS = [("io", 1, True), ("full", 1, True), ("io", 3, False), ("full", 2, False)]


# --- fixtures ---------------------------------------------------------------------------------


@pytest.fixture
def vfs() -> Iterator[FaultVFS]:
    with registered_vfs() as built:
        yield built


class OutputRuntime(ScriptedRuntime):
    """Like ScriptedRuntime, but each command leaves captured output in its attempt
    directory, so that a success is delivered (DESIGN §9 points 10–12)."""

    root: Path = Path()

    def start(self, launch: Launch) -> Started:
        directory = self.root / launch.attempt_id
        directory.mkdir(parents=True)
        (directory / "stdout").write_bytes(b"hello from " + launch.occurrence_id.encode())
        exited = ExitRecord(self.clock.now_utc(), 0, None, False, False, True)
        journal.append(directory / JOURNAL, exited.to_record())  # the evidence of its success
        super().start(launch)
        return Started(4242, None, str(directory))


class CountingOutputRuntime(OutputRuntime):
    """Like OutputRuntime, but each exit says how much output it kept, as the runner's
    journal does (``Exit.stdout_bytes``): its settlement needs no look at the folder."""

    def start(self, launch: Launch) -> Started:
        started = super().start(launch)
        kept = (Path(started.attempt_dir or "") / "stdout").stat().st_size
        self._exits[-1] = dataclasses.replace(self._exits[-1], stdout_bytes=kept)
        return started


class RefusingRuntime(ScriptedRuntime):
    """No runner can be started: every start raises before anything runs."""

    def start(self, launch: Launch) -> Started:
        self.launches.append(launch)
        raise LaunchError(FailureClass.RUNTIME_UNAVAILABLE, "no runner could be started")


def faulty_engine(
    data_dir: Path, clock: VirtualClock, vfs: FaultVFS, runtime: type[ScriptedRuntime]
) -> Engine:
    """``make_engine``, with the store opened through the fault VFS."""
    wake = WakeSignal()
    store = Store.open(data_dir, clock.now_utc(), vfs=vfs.vfs_name)
    scripted = runtime(clock, wake)
    if isinstance(scripted, OutputRuntime):
        scripted.root = data_dir / "attempts"
    scheduler = Scheduler(store, clock, scripted, wake, limits=Limits())
    scheduler.sweeper.pause = None  # the loop's retention sweep: no real sleeps in a test
    return Engine(store, clock, wake, scripted, scheduler, Operator(store, clock, wake.set))


@pytest.fixture
def runtime_class() -> type[ScriptedRuntime]:
    return ScriptedRuntime


@pytest.fixture
def engine(
    tmp_path: Path, clock: VirtualClock, vfs: FaultVFS, runtime_class: type[ScriptedRuntime]
) -> Iterator[Engine]:
    built = faulty_engine(tmp_path / "data", clock, vfs, runtime_class)
    yield built
    vfs.clear()  # closing checkpoints the log: let it
    built.store.close()


class Boundaries:
    """Do something once when the engine reaches a named crash-matrix boundary: the one
    place to arm a fault between a pass's two transactions."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self._actions: dict[str, Callable[[], None]] = {}
        original = failpoints.hit

        def hit(name: str) -> None:
            action = self._actions.pop(name, None)
            if action is not None:
                action()
            original(name)

        monkeypatch.setattr(failpoints, "hit", hit)

    def on(self, name: str, action: Callable[[], None]) -> None:
        self._actions[name] = action


@pytest.fixture
def boundaries(monkeypatch: pytest.MonkeyPatch) -> Boundaries:
    return Boundaries(monkeypatch)


# --- what every case checks -------------------------------------------------------------------


def committed(store: Store) -> dict[str, tuple]:
    """Every row that matters, keyed by table and id, with the columns a loss would change."""
    conn = store.conn
    tables = {
        "routine": "SELECT id, state, revision FROM routines",
        "occurrence": "SELECT id, state, disposition, reason FROM occurrences",
        "attempt": "SELECT id, state, failure_class, exit_code FROM attempts",
        "delivery": "SELECT occurrence_id, state, sha256 FROM deliveries",
        "reconciliation": "SELECT id, outcome FROM reconciliations",
        "audit": "SELECT seq, hash FROM audit_log",
    }
    return {
        f"{table}:{row[0]}": tuple(row[1:])
        for table, sql in tables.items()
        for row in conn.execute(sql)
    }


def assert_nothing_lost(before: dict[str, tuple], store: Store) -> None:
    """Every row committed before is still there; a settled row has not changed."""
    after = committed(store)
    missing = sorted(set(before) - set(after))
    assert not missing, f"committed rows lost: {missing[:5]}"
    changed = [k for k, v in before.items() if "settled" in v and after[k] != v]
    assert not changed, f"settled rows changed: {changed[:5]}"


def assert_failed_cleanly(report: PassReport, kind: str, vfs: FaultVFS | None = None) -> None:
    assert report.error_class == f"store_{kind}", report.error
    assert report.deadline == report.started_at + RETRY_AFTER
    assert report.error and "coven.db" in report.error  # names the store, for a person
    if vfs is not None:
        assert vfs.raised >= 1, "the fault was never reached"


def assert_dispatched_at_most_once(engine: Engine) -> None:
    launched = Counter(launch.occurrence_id for launch in engine.runtime.launches)
    twice = [oid for oid, n in launched.items() if n > 1]
    assert not twice, f"dispatched twice: {twice}"


def assert_recovered(
    engine: Engine, vfs: FaultVFS, until: datetime, *, swept: bool = False
) -> None:
    """The fault clears: the engine settles everything due and every invariant holds (after a
    retention sweep, old moments have no rows by design: their ledger is not checked)."""
    vfs.clear()
    engine.run_until(until)
    assert engine.scheduler.last_report is not None
    assert engine.scheduler.last_report.error_class is None
    assert audit_store(engine.store, engine.clock.now_utc(), moments=not swept) == []


def states(engine: Engine, rid: str) -> list[tuple[str, str, str | None]]:
    return [(at[11:16], state, disposition) for at, _, state, disposition, *_ in
            engine.history(rid)]  # fmt: skip


def advance_to(engine: Engine, instant: datetime) -> None:
    engine.clock.advance_to(instant)


# --- planning, claims and settlement: the decide transaction ---------------------------------


@pytest.mark.parametrize(("kind", "nth", "sticky"), FAULTS)
def test_a_fault_while_planning_and_claiming_commits_and_dispatches_nothing(
    engine: Engine, vfs: FaultVFS, kind: FaultKind, nth: int, sticky: bool
) -> None:
    rid = engine.add("r", "*/5 * * * *")
    engine.run_until(T0 + minutes(12))  # 12:00, 12:05 and 12:10 ran
    before, launched = committed(engine.store), len(engine.runtime.launches)
    vfs.arm(kind, nth=nth, sticky=sticky)
    advance_to(engine, T0 + minutes(15))
    report = engine.scheduler.pass_once("deadline")
    assert_failed_cleanly(report, kind, vfs)
    assert len(engine.runtime.launches) == launched  # a claim that did not commit never runs
    assert_nothing_lost(before, engine.store)
    assert [at for at, *_ in states(engine, rid)] == ["12:00", "12:05", "12:10"]
    assert_recovered(engine, vfs, T0 + minutes(16))
    assert states(engine, rid)[-1] == ("12:15", "settled", "succeeded")
    assert_dispatched_at_most_once(engine)


@pytest.mark.parametrize("kind", ["io", "full"])
def test_a_fault_while_claiming_a_manual_run_keeps_it_waiting(
    engine: Engine, vfs: FaultVFS, kind: FaultKind
) -> None:
    engine.add("r", "0 13 * * *")
    engine.run_until(T0)
    ref = engine.operator.run_now("r", key="by-hand")
    vfs.arm(kind)
    report = engine.scheduler.pass_once("operator_command")
    assert_failed_cleanly(report, kind, vfs)
    assert engine.runtime.launches == []
    state = engine.store.conn.execute(
        "SELECT state FROM occurrences WHERE run_id = ?", (ref.run_id,)
    ).fetchone()
    assert state == ("planned",)
    assert_recovered(engine, vfs, T0 + minutes(1))
    assert engine.operator.run_now("r", key="by-hand").state == "settled"  # the same run
    assert [launch.occurrence_id for launch in engine.runtime.launches] == [ref.occurrence_id]


@pytest.mark.parametrize(("kind", "nth", "sticky"), FAULTS)
@pytest.mark.parametrize("code", [0, 1])
def test_a_fault_while_settling_keeps_the_exit_for_the_next_pass(
    engine: Engine, vfs: FaultVFS, kind: FaultKind, nth: int, sticky: bool, code: int
) -> None:
    engine.runtime.auto_exit = None
    rid = engine.add("r", "0 13 * * *", retries=1)
    engine.run_until(T0 + minutes(60))
    (launch,) = engine.runtime.launches
    before = committed(engine.store)
    vfs.arm(kind, nth=nth, sticky=sticky)
    engine.runtime.finish(launch, code)
    report = engine.scheduler.pass_once("run_finished")
    assert_failed_cleanly(report, kind, vfs)
    assert states(engine, rid) == [("13:00", "running", None)]  # not a success, not lost
    assert_nothing_lost(before, engine.store)
    engine.runtime.auto_exit = code
    assert_recovered(engine, vfs, T0 + timedelta(hours=3))
    outcome = "succeeded" if code == 0 else "failed"
    assert states(engine, rid) == [("13:00", "settled", outcome)]
    attempts = engine.store.conn.execute("SELECT count(*) FROM attempts").fetchone()[0]
    assert len(engine.runtime.launches) == attempts == (1 if code == 0 else 2)


# --- the record transaction: starts and delivery receipts ---------------------------------------


@pytest.mark.parametrize("kind", ["io", "full"])
def test_a_fault_while_recording_a_start_does_not_start_it_again(
    engine: Engine, vfs: FaultVFS, boundaries: Boundaries, kind: FaultKind
) -> None:
    engine.runtime.auto_exit = None
    rid = engine.add("r", "0 13 * * *")
    boundaries.on("decide.committed", lambda: vfs.arm(kind))
    advance_to(engine, T0 + minutes(60))
    report = engine.scheduler.pass_once("deadline")
    assert_failed_cleanly(report, kind, vfs)
    (launch,) = engine.runtime.launches  # it did start: the truth the store must not deny
    attempt = engine.store.conn.execute("SELECT state FROM attempts").fetchone()
    assert attempt == ("dispatching",)  # the decision is durable; the start is not recorded
    assert states(engine, rid) == [("13:00", "claimed", None)]
    vfs.clear()
    engine.run_until(T0 + minutes(61))
    assert len(engine.runtime.launches) == 1
    engine.runtime.finish(launch, 0)
    assert_recovered(engine, vfs, T0 + minutes(62))
    assert states(engine, rid) == [("13:00", "settled", "succeeded")]


@pytest.mark.parametrize("runtime_class", [RefusingRuntime])
def test_a_fault_while_recording_a_failed_start_still_settles_it(
    engine: Engine, vfs: FaultVFS, boundaries: Boundaries
) -> None:
    rid = engine.add("r", "0 13 * * *")
    boundaries.on("decide.committed", lambda: vfs.arm("io", sticky=False))
    advance_to(engine, T0 + minutes(60))
    assert_failed_cleanly(engine.scheduler.pass_once("deadline"), "io", vfs)
    engine.run_until(T0 + timedelta(days=1, hours=2))
    # Nothing ran: runtime_unavailable is retried (3 tries) and ends as failed; the next
    # day's occurrence is not blocked (skipped as an overlap) by an attempt nobody settles.
    history = states(engine, rid)
    assert history[0] == ("13:00", "settled", "failed")
    assert all(state == "settled" for _, state, _ in history), history
    assert len(history) == 2 and "overlap" not in str(engine.history(rid))


@pytest.mark.parametrize("runtime_class", [OutputRuntime, CountingOutputRuntime])
def test_a_start_recorded_after_its_end_still_delivers_its_output(
    engine: Engine, vfs: FaultVFS, boundaries: Boundaries
) -> None:
    """The start's record fails and the command ends before the next pass: the end is
    settled before anything knows the attempt's folder, so its output is found when the
    start is recorded at last (``occurrences.mark_running``)."""
    rid = engine.add("r", "0 13 * * *")
    boundaries.on("decide.committed", lambda: vfs.arm("io", sticky=False))
    advance_to(engine, T0 + minutes(60))
    assert_failed_cleanly(engine.scheduler.pass_once("deadline"), "io", vfs)
    engine.run_until(T0 + minutes(62))
    assert states(engine, rid) == [("13:00", "settled", "succeeded")]
    (delivered,) = (engine.store.data_dir / "output" / rid).iterdir()
    assert delivered.read_bytes() == f"hello from {rid}@{T0 + minutes(60):%Y%m%dT%H%M%SZ}".encode()


@pytest.mark.parametrize("runtime_class", [OutputRuntime])
@pytest.mark.parametrize("kind", ["io", "full"])
def test_a_fault_while_committing_a_receipt_repairs_the_delivery_without_a_rerun(
    engine: Engine, vfs: FaultVFS, boundaries: Boundaries, kind: FaultKind
) -> None:
    rid = engine.add("r", "0 13 * * *")
    boundaries.on(delivery.FAILPOINT_RENAMED, lambda: vfs.arm(kind))
    engine.run_until(T0 + minutes(60))  # starts, settles, delivers; the receipt fails
    report = engine.scheduler.last_report
    assert report is not None
    assert_failed_cleanly(report, kind, vfs)
    assert states(engine, rid) == [("13:00", "settled", "succeeded")]  # it did succeed
    pending = engine.store.conn.execute("SELECT state, sha256 FROM deliveries").fetchone()
    assert pending == ("pending", None)
    folder = engine.store.data_dir / "output" / rid
    (delivered,) = folder.iterdir()  # the file is in place; only its receipt is missing
    assert_recovered(engine, vfs, T0 + minutes(61))
    receipt = engine.store.conn.execute("SELECT state, path, sha256 FROM deliveries").fetchone()
    content = delivered.read_bytes()
    assert receipt == ("delivered", str(delivered), hashlib.sha256(content).hexdigest())
    assert content.startswith(b"hello from ")
    assert list(folder.iterdir()) == [delivered]
    assert len(engine.runtime.launches) == 1


# --- checkpoints: a failing write to the database file itself ---------------------------------


def test_a_failing_checkpoint_after_a_commit_does_not_strand_a_claim(
    engine: Engine, vfs: FaultVFS, caplog: pytest.LogCaptureFixture
) -> None:
    """The log is copied into the database file after a commit (here after every one). Found
    by this suite: SQLite's automatic checkpoint did that inside COMMIT, and when its write
    failed COMMIT raised though the commit was durable — the pass believed nothing was
    decided and never started the claim it had committed. The checkpoint now runs after
    COMMIT returned: its failure is logged, classified, and changes nothing."""
    assert isinstance(engine.store.conn, StoreConnection)
    engine.store.conn.wal.every = 1
    rid = engine.add("r", "*/5 * * * *")
    engine.run_until(T0 + minutes(6))
    before = committed(engine.store)
    vfs.arm("io", target="db")
    advance_to(engine, T0 + minutes(10))
    report = engine.scheduler.pass_once("deadline")
    assert report.error_class is None, report.error  # the pass did what it committed
    assert vfs.raised >= 1, "no checkpoint was tried"
    failure = engine.store.conn.wal.failed
    assert isinstance(failure, StoreEnvironmentError) and failure.kind == "io"
    assert "the write-ahead log was not checkpointed (every commit stands" in caplog.text
    assert states(engine, rid)[2] == ("12:10", "running", None)  # claimed and started
    assert_nothing_lost(before, engine.store)
    assert_recovered(engine, vfs, T0 + minutes(21))
    assert engine.store.conn.wal.failed is None  # the next checkpoint after the fault cleared
    assert states(engine, rid)[2:] == [
        ("12:10", "settled", "succeeded"), ("12:15", "settled", "succeeded"),
        ("12:20", "settled", "succeeded"),
    ]  # fmt: skip
    assert_dispatched_at_most_once(engine)


# --- retention ----------------------------------------------------------------------------------

SMALL = RetentionPolicy(
    history_keep_newest=3, history_keep_for=timedelta(minutes=30),
    events_keep_for=timedelta(minutes=30), passes_keep_for=timedelta(minutes=30),
    attempt_dirs_keep_for=timedelta(minutes=30),
)  # fmt: skip


def grow_history(engine: Engine) -> str:
    """Six hours of a five-minute routine, and its run at 18:00 still running at the end."""
    rid = engine.add("r", "*/5 * * * *")
    engine.run_until(T0 + timedelta(hours=6) - minutes(1))
    engine.runtime.auto_exit = None
    engine.run_until(T0 + timedelta(hours=6))
    return rid


def kept_for_good(store: Store) -> set[str]:
    """What no sweep may remove: live occurrences and each routine's newest result."""
    rows = store.conn.execute(
        "SELECT id FROM occurrences WHERE state != 'settled' UNION SELECT id FROM "
        "(SELECT id, max(scheduled_utc) FROM occurrences WHERE state = 'settled' "
        "GROUP BY routine_id)"
    )
    return {row[0] for row in rows}


def occurrence_ids(store: Store) -> set[str]:
    return {row[0] for row in store.conn.execute("SELECT id FROM occurrences")}


@pytest.mark.parametrize(("kind", "nth", "sticky"), [*FAULTS, ("io", 40, True)])
def test_a_fault_during_a_sweep_is_classified_and_keeps_what_matters(
    engine: Engine, vfs: FaultVFS, kind: FaultKind, nth: int, sticky: bool
) -> None:
    grow_history(engine)
    protected, everything = kept_for_good(engine.store), occurrence_ids(engine.store)
    vfs.arm(kind, nth=nth, sticky=sticky)
    with pytest.raises(StoreEnvironmentError) as failed:
        retention.sweep(engine.store, engine.clock.now_utc(), SMALL, batch=5, pause=None)
    assert failed.value.kind == kind
    assert vfs.raised >= 1
    left = occurrence_ids(engine.store)
    assert protected <= left <= everything  # what committed went; what must stay stayed
    vfs.clear()
    again = retention.sweep(engine.store, engine.clock.now_utc(), SMALL, batch=5, pause=None)
    assert again.finished
    assert protected <= occurrence_ids(engine.store)
    assert len(occurrence_ids(engine.store)) < len(everything)
    assert_recovered(engine, vfs, engine.clock.now_utc(), swept=True)


def test_the_sweeper_logs_a_failed_sweep_and_finishes_it_later(
    engine: Engine, vfs: FaultVFS
) -> None:
    grow_history(engine)
    now = engine.clock.now_utc()
    sweeper = Sweeper(policy=SMALL, budget=None, batch=5, pause=None)
    vfs.arm("full", nth=10)
    assert sweeper.maybe_sweep(engine.store, now) is None  # logged, not raised
    assert sweeper.unfinished and sweeper.next_due(now) == now + sweeper.retry_after
    vfs.clear()
    report = sweeper.maybe_sweep(engine.store, now + sweeper.retry_after)
    assert report is not None and report.finished and not sweeper.unfinished


@pytest.mark.parametrize("kind", ["io", "full"])
def test_a_fault_in_the_sweeps_own_checkpoint_is_classified(
    engine: Engine, vfs: FaultVFS, kind: FaultKind
) -> None:
    """Found by this suite: the sweep's explicit WAL checkpoint raised a raw apsw error (and,
    once the sweep ran from the loop, out of ``pass_once``); fixed upstream since."""
    engine.add("r", "*/5 * * * *")
    engine.run_until(T0 + minutes(9))  # the loop's first sweep is due at 12:10
    vfs.arm(kind, target="db")  # only a checkpoint writes the database file here
    advance_to(engine, T0 + minutes(10))
    report = engine.scheduler.pass_once("deadline")  # must not raise
    assert report.error_class is None
    assert vfs.raised >= 1 and engine.scheduler.sweeper.unfinished
    assert engine.scheduler.deadline == T0 + minutes(10) + engine.scheduler.sweeper.retry_after
    assert_recovered(engine, vfs, T0 + minutes(20))
    assert not engine.scheduler.sweeper.unfinished


# --- a busy store: a real second writer holds the lock ------------------------------------------


@pytest.fixture
def blocker(engine: Engine) -> Iterator[apsw.Connection]:
    """A second real connection to the store (WAL locks cannot be faked by a VFS)."""
    engine.store.conn.set_busy_timeout(20)
    other = apsw.Connection(str(engine.store.path))
    yield other
    if other.in_transaction:
        other.execute("ROLLBACK")
    other.close()


def test_a_busy_store_fails_the_pass_and_the_operator_cleanly(
    engine: Engine, vfs: FaultVFS, blocker: apsw.Connection
) -> None:
    rid = engine.add("r", "*/5 * * * *")
    engine.run_until(T0 + minutes(6))
    before = committed(engine.store)
    blocker.execute("BEGIN IMMEDIATE")
    advance_to(engine, T0 + minutes(10))
    assert_failed_cleanly(engine.scheduler.pass_once("deadline"), "busy")
    with pytest.raises(StoreEnvironmentError, match="busy") as refused:
        engine.operator.pause("r")
    assert refused.value.kind == "busy" and refused.value.transient
    blocker.execute("ROLLBACK")
    assert_nothing_lost(before, engine.store)
    assert_recovered(engine, vfs, T0 + minutes(11))
    assert [at for at, *_ in states(engine, rid)] == ["12:00", "12:05", "12:10"]
    assert_dispatched_at_most_once(engine)


def test_a_busy_store_while_recording_a_start_settles_once_it_is_free(
    engine: Engine, vfs: FaultVFS, blocker: apsw.Connection, boundaries: Boundaries
) -> None:
    rid = engine.add("r", "0 13 * * *")
    boundaries.on("decide.committed", lambda: blocker.execute("BEGIN IMMEDIATE"))
    advance_to(engine, T0 + minutes(60))
    assert_failed_cleanly(engine.scheduler.pass_once("deadline"), "busy")
    blocker.execute("ROLLBACK")
    assert_recovered(engine, vfs, T0 + minutes(61))
    assert states(engine, rid) == [("13:00", "settled", "succeeded")]
    assert len(engine.runtime.launches) == 1


def test_another_process_holding_the_write_lock_makes_the_pass_busy(
    engine: Engine, vfs: FaultVFS
) -> None:
    engine.store.conn.set_busy_timeout(20)
    rid = engine.add("r", "0 13 * * *")
    holder = hold_write_lock(engine.store.path)
    try:
        advance_to(engine, T0 + minutes(60))
        assert_failed_cleanly(engine.scheduler.pass_once("deadline"), "busy")
        assert engine.runtime.launches == []
    finally:
        holder.communicate(b"release\n", timeout=30)  # real-time: the other process lets go
    assert_recovered(engine, vfs, T0 + minutes(61))
    assert states(engine, rid) == [("13:00", "settled", "succeeded")]


def hold_write_lock(path: Path) -> subprocess.Popen[bytes]:
    """Another process takes the store's write lock and keeps it until told on stdin."""
    script = textwrap.dedent(f"""
        import sys, apsw
        conn = apsw.Connection({str(path)!r})
        conn.execute("BEGIN IMMEDIATE")
        print("locked", flush=True)
        sys.stdin.readline()
        conn.execute("ROLLBACK")
    """)
    process = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdout is not None
    assert process.stdout.readline() == b"locked\n"  # real-time: bounded by the child's start
    return process


# --- a full disk while delivering the captured output -------------------------------------------


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[bool], None]:
    """``os.write`` into the output folder fails with ENOSPC while the disk is full."""
    state = {"full": False}
    real_write = os.write
    output = str(tmp_path / "data" / "output")

    def write(fd: int, data: bytes) -> int:
        if state["full"] and os.readlink(f"/proc/self/fd/{fd}").startswith(output):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(delivery.os, "write", write)
    return lambda full: state.update(full=full)


def run_capped(engine: Engine, until: datetime) -> None:
    """``run_until`` with the production loop's safety cap: a pass at least every 5 minutes
    even without a deadline (DESIGN §3)."""
    while engine.clock.now_utc() < until:
        engine.run_until(min(until, engine.clock.now_utc() + SAFETY_CAP))
        engine.scheduler.pass_once("safety_cap")


def delivery_row(engine: Engine) -> tuple:
    return engine.store.conn.execute(
        "SELECT state, tries, last_error, not_before FROM deliveries"
    ).fetchone()


@pytest.mark.parametrize("runtime_class", [OutputRuntime])
def test_a_full_disk_while_delivering_is_retried_with_backoff_never_rerun(
    engine: Engine, vfs: FaultVFS, full_disk: Callable[[bool], None]
) -> None:
    rid = engine.add("r", "0 13 * * *")
    full_disk(True)
    engine.run_until(T0 + minutes(60))
    state, tries, error, not_before = delivery_row(engine)
    assert (state, tries) == ("pending", 1)
    assert error.startswith("the disk is full while delivering output to")
    assert not_before == "2026-03-01T13:00:30.000000Z"  # 30 s, then 60 s, 120 s, …
    assert states(engine, rid) == [("13:00", "settled", "succeeded")]  # the action did succeed
    run_capped(engine, T0 + minutes(70))  # 30 s, 60 s, 120 s, 240 s: five tries, then a person
    assert delivery_row(engine)[:2] == ("failed", 5)
    full_disk(False)
    run_id = engine.store.conn.execute("SELECT run_id FROM occurrences").fetchone()[0]
    engine.operator.retry(run_id)  # delivers again; never runs the action again
    run_capped(engine, T0 + minutes(80))
    assert_recovered(engine, vfs, T0 + minutes(80))
    assert delivery_row(engine)[0] == "delivered"
    assert len(engine.runtime.launches) == 1
    assert not any(
        p.name.startswith(".") for p in (engine.store.data_dir / "output" / rid).iterdir()
    )


@pytest.mark.parametrize("runtime_class", [OutputRuntime])
def test_a_failed_delivery_wakes_the_scheduler_for_its_retry(
    engine: Engine, vfs: FaultVFS, full_disk: Callable[[bool], None]
) -> None:
    engine.add("r", "0 13 * * *")
    full_disk(True)
    engine.run_until(T0 + minutes(60))
    not_before = delivery_row(engine)[3]
    assert engine.scheduler.deadline is not None
    assert engine.scheduler.deadline.strftime("%Y-%m-%dT%H:%M:%S.%fZ") == not_before


@pytest.mark.parametrize("runtime_class", [OutputRuntime])
def test_a_disk_that_stays_full_leaves_the_delivery_to_a_person(
    engine: Engine, vfs: FaultVFS, full_disk: Callable[[bool], None]
) -> None:
    rid = engine.add("r", "0 13 * * *")
    full_disk(True)
    run_capped(engine, T0 + timedelta(hours=3))
    state, tries, error, _ = delivery_row(engine)
    assert (state, tries) == ("failed", receipts.MAX_TRIES)
    assert "the disk is full" in error
    assert states(engine, rid) == [("13:00", "settled", "succeeded")]
    assert len(engine.runtime.launches) == 1
    assert audit_store(engine.store, engine.clock.now_utc()) == []
