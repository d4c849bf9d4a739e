"""``coven doctor``: a healthy store after a realistic run passes every check; each violation,
injected with raw SQL on a connection of its own, is found and named (DESIGN §10, §13)."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import apsw
import pytest

from coven_core.clock import VirtualClock
from coven_core.integrity import audit
from coven_core.integrity import doctor as doctor_module
from coven_core.integrity.doctor import CHECKS, Report, doctor
from coven_core.integrity.doctor import base as doctor_base
from coven_core.integrity.retention import RetentionPolicy
from coven_core.model import RevisionSpec
from coven_core.operations.reconcile import Outcome
from coven_core.runner import journal
from coven_core.runner.journal import ExitRecord
from coven_core.runtime.base import Launch, Started
from coven_core.runtime.runner import JOURNAL
from coven_core.scheduling.lease import LEASE_TTL
from coven_core.store import schema
from coven_core.store.codec import instant_text
from coven_core.store.store import Store
from tests.core.conftest import (
    Engine,
    ScriptedRuntime,
    after_a_dead_leader,
    make_engine,
    real_runners,
)

# Berlin springs forward on 2026-03-29 at 02:00 local (01:00 UTC): hourly runs there meet a gap.
START = datetime(2026, 3, 28, 18, 0, tzinfo=UTC)


def hours(n: float) -> timedelta:
    return timedelta(hours=n)


@dataclass
class JournalingRuntime(ScriptedRuntime):
    """The scripted runtime, but every attempt leaves what a runner leaves: a directory with a
    journal (intent, spawned, exited) and the captured stdout. ``codes`` script each routine's
    exit statuses in turn (None: it keeps running until ``finish``); then it exits 0."""

    root: Path = Path()
    codes: dict[str, list[int | None]] = field(default_factory=dict)

    def start(self, launch: Launch) -> Started:
        directory = self.root / launch.attempt_id
        self.root.mkdir(mode=0o700, exist_ok=True)  # as private as a real runtime makes it
        directory.mkdir(mode=0o700)
        _journal(directory, journal.record("intent"))
        _journal(directory, journal.record("spawned", pid=4242, pid_start=1.0))
        with open(directory / "stdout", "w", opener=_private) as stdout:
            stdout.write(f"{launch.occurrence_id} did its work\n")
        script = self.codes.get(launch.routine_id) or []
        self.auto_exit = script.pop(0) if script else 0
        super().start(launch)
        if self.auto_exit is not None:
            _journal_exit(directory, self.auto_exit)
        return Started(4242, 1.0, str(directory))

    def finish(self, launch: Launch, code: int = 0, **details: object) -> None:
        _journal_exit(self.root / launch.attempt_id, code, cancelled=bool(details.get("cancelled")))
        super().finish(launch, code, **details)


def _journal_exit(directory: Path, code: int, *, cancelled: bool = False) -> None:
    record = ExitRecord(datetime.now(UTC), None if cancelled else code, 15 if cancelled else None,
                        cancelled, False, True)  # fmt: skip
    _journal(directory, record.to_record())


def _journal(directory: Path, record: dict[str, object]) -> None:
    """As a runner writes it, less the fsync (the test needs the lines, not the durability)."""
    with open(directory / JOURNAL, "a", opener=_private) as file:
        file.write(json.dumps(record, separators=(",", ":")) + "\n")


def _private(path: str, flags: int) -> int:
    """Create files 0600, as a runner does."""
    return os.open(path, flags, 0o600)


def journaled_engine(data_dir: Path, clock: VirtualClock) -> Engine:
    engine = make_engine(data_dir, clock)
    runtime = JournalingRuntime(clock, engine.wake, root=data_dir / "attempts")
    engine.runtime = engine.scheduler.runtime = runtime  # type: ignore[assignment]
    return engine


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(START)


@pytest.fixture
def engine(tmp_path: Path, clock: VirtualClock) -> Iterator[Engine]:
    built = journaled_engine(tmp_path / "data", clock)
    yield built
    built.store.close()


@dataclass(frozen=True)
class Ids:
    backup: str
    flaky: str
    report: str
    broken: str
    sync: str
    archive: str


@pytest.fixture
def realistic(engine: Engine) -> Ids:
    """A night and a day of six routines: hourly Berlin backups across the DST gap (journaled,
    delivered), a flaky routine that retries, a report failing twice in a row, a routine
    quarantined then probed and released, a run now, a cancelled sync, and an archive still
    running at the end under the leader's lease."""
    runtime: JournalingRuntime = engine.runtime  # type: ignore[assignment]
    ids = Ids(
        engine.add("backup", "0 * * * *", tz="Europe/Berlin"),
        engine.add("flaky", "15 */3 * * *", retries=1),
        engine.add("report", "0 */6 * * *"),
        engine.add("broken", "30 */3 * * *"),
        engine.add("sync", "0 0 * * *"),
        engine.add("archive", "0 12 * * *"),
    )
    runtime.codes.update({ids.flaky: [1, 0, 1, 1], ids.report: [1, 0, 1, 1],
                          ids.broken: [2, 2, 2], ids.sync: [None], ids.archive: [None]})  # fmt: skip
    engine.run_until(START + hours(7))
    engine.operator.run_now("backup", key="before-upgrade")
    engine.operator.probe("broken")
    engine.run_until(engine.clock.now_utc())
    engine.operator.release("broken")
    engine.run_until(START + hours(7.1))  # sync started at midnight UTC
    _cancel_sync(engine, runtime, ids.sync)
    engine.run_until(START + hours(18.5))  # the archive started at noon and still runs
    return ids


def _cancel_sync(engine: Engine, runtime: JournalingRuntime, sync: str) -> None:
    run_id = engine.store.conn.execute(
        "SELECT run_id FROM occurrences WHERE routine_id = ? AND state = 'running'", (sync,)
    ).fetchone()[0]
    engine.operator.cancel(run_id, "wrong disk")
    engine.run_until(engine.clock.now_utc())
    (launch,) = [launch for launch in runtime.running.values() if launch.routine_id == sync]
    runtime.finish(launch, -15, cancelled=True)
    engine.run_until(engine.clock.now_utc())


def checked(engine: Engine, **options: Any) -> Report:
    """The doctor's view right after a pass (a live leader's pass checks its lease, renewing it once a minute)."""
    engine.scheduler.pass_once("doctor")
    return doctor(engine.store, engine.clock.now_utc(), **options)


def inject(engine: Engine, sql: str, *params: object) -> None:
    """Change the store behind the engine's back, as a bug or a person with sqlite3 would."""
    conn = apsw.Connection(str(engine.store.path))
    try:
        conn.execute(sql, params)
    finally:
        conn.close()


def one(engine: Engine, sql: str, *params: object) -> Any:
    return engine.store.conn.execute(sql, params).fetchone()[0]


def problems(report: Report, check: str | None = None) -> list[tuple[str, str, str]]:
    """(check, severity, message) of every error and warning, of one check if given."""
    return [
        (f.check, f.severity, f.message)
        for f in report.findings
        if f.severity != "info" and (check is None or f.check == check)
    ]


def the_error(report: Report) -> doctor_module.Finding:
    (error,) = report.errors
    return error


# --- a healthy store ------------------------------------------------------------------------


def test_a_healthy_store_after_a_realistic_run_keeps_every_promise(
    engine: Engine, realistic: Ids
) -> None:
    report = checked(engine)
    assert problems(report) == []
    assert report.ok and report.verdicts() == dict.fromkeys(CHECKS, "ok")
    assert [f.check for f in report.findings] == sorted(
        (f.check for f in report.findings), key=CHECKS.index
    )


def test_the_realistic_run_has_what_it_claims(engine: Engine, realistic: Ids) -> None:
    outcomes = set(engine.store.conn.execute("SELECT kind, disposition FROM occurrences"))
    assert {("scheduled", "succeeded"), ("scheduled", "failed"), ("scheduled", "cancelled"),
            ("scheduled", "skipped"), ("manual", "succeeded"), ("scheduled", None)} <= outcomes  # fmt: skip
    assert one(engine, "SELECT count(*) FROM occurrences WHERE id LIKE '%~gap'") == 1
    assert one(engine, "SELECT max(number) FROM attempts") == 2  # a retry
    assert one(engine, "SELECT count(*) FROM deliveries WHERE state = 'delivered'") > 15
    assert one(engine, "SELECT count(*) FROM events WHERE kind = 'released'") == 1
    failures = dict(engine.store.conn.execute("SELECT name, consecutive_failures FROM routines"))
    assert (failures["report"], failures["broken"]) == (2, 0)
    assert one(engine, "SELECT count(*) FROM occurrences WHERE state = 'running'") == 1


def test_growth_reports_tables_folders_and_files(engine: Engine, realistic: Ids) -> None:
    report = checked(engine)
    assert report.growth is not None
    assert report.growth["tables"]["occurrences"]["rows"] > 40
    assert report.growth["attempts"]["files"] > 40 and report.growth["output"]["files"] > 0
    messages = [f.message for f in report.findings if f.check == "growth"]
    assert messages[0].startswith("store file ") and "write-ahead log" in messages[0]
    assert any(m.startswith("largest tables: ") for m in messages)


def test_quick_skips_growth(engine: Engine, realistic: Ids) -> None:
    report = checked(engine, quick=True)
    assert report.ok and report.growth is None
    assert not [f for f in report.findings if f.check == "growth"]


# --- the invariant audit ------------------------------------------------------------------


def test_a_success_whose_last_attempt_exited_1_has_no_exit_evidence(
    engine: Engine, realistic: Ids
) -> None:
    attempt = one(engine, "SELECT a.id FROM attempts a JOIN occurrences o ON o.id = "
                  "a.occurrence_id WHERE o.disposition = 'succeeded' AND a.number = (SELECT "
                  "max(number) FROM attempts WHERE occurrence_id = o.id) ORDER BY a.id LIMIT 1")  # fmt: skip
    inject(engine, "UPDATE attempts SET exit_code = 1 WHERE id = ?", attempt)
    error = the_error(checked(engine))
    assert (error.check, error.details["attempt_id"]) == ("evidence", attempt)
    assert "succeeded without exit evidence" in error.message and "status 1" in error.message


def test_a_success_whose_journal_has_no_exit_has_no_exit_evidence(
    engine: Engine, realistic: Ids
) -> None:
    attempt, directory = engine.store.conn.execute(
        "SELECT a.id, a.attempt_dir FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id "
        "WHERE o.disposition = 'succeeded' ORDER BY a.settled_at DESC LIMIT 1"
    ).fetchone()
    path = Path(directory) / JOURNAL
    path.write_text("".join(line + "\n" for line in path.read_text().splitlines()[:-1]))
    error = the_error(checked(engine))
    assert error.check == "evidence" and error.details["attempt_id"] == attempt
    assert "has no readable `exited` record" in error.message


def test_an_unreadable_journal_is_no_evidence_and_the_other_checks_go_on(
    engine: Engine, realistic: Ids
) -> None:
    attempt, directory = engine.store.conn.execute(
        "SELECT a.id, a.attempt_dir FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id "
        "WHERE o.disposition = 'succeeded' ORDER BY a.settled_at DESC LIMIT 1"
    ).fetchone()
    (Path(directory) / JOURNAL).unlink()
    (Path(directory) / JOURNAL).mkdir()
    report = checked(engine)
    error = the_error(report)
    assert error.check == "evidence" and error.details["attempt_id"] == attempt
    assert f"the journal of attempt {attempt} cannot be read (Is a directory)" in error.message
    assert report.verdicts()["audit"] == "ok"


def test_a_check_that_sqlite_stops_is_an_error_and_the_rest_still_run(
    engine: Engine, realistic: Ids, monkeypatch: pytest.MonkeyPatch
) -> None:
    def malformed(conn: object) -> None:
        raise apsw.CorruptError("database disk image is malformed")

    monkeypatch.setattr(audit, "verify", malformed)
    report = checked(engine)
    assert [(f.check, f.message) for f in report.errors] == [
        ("audit", "the audit check stopped: SQLite said database disk image is "
         "malformed — the store file may be damaged (see the integrity check)"),
    ]  # fmt: skip
    assert report.verdicts()["growth"] == "ok"


def test_two_unsettled_attempts_of_one_occurrence(engine: Engine, realistic: Ids) -> None:
    occurrence, attempt = engine.store.conn.execute(
        "SELECT occurrence_id, id FROM attempts WHERE state = 'running'"
    ).fetchone()
    inject(engine, "INSERT INTO attempts (id, occurrence_id, number, state, generation, "
           "claimed_at) SELECT id || 'x', occurrence_id, number + 1, 'running', generation, "
           "claimed_at FROM attempts WHERE id = ?", attempt)  # fmt: skip
    error = the_error(checked(engine))
    assert (error.check, error.details["occurrence_id"]) == ("attempts", occurrence)
    assert "has 2 unsettled attempts" in error.message
    assert "at most one attempt may be in flight" in error.message


def first_and_retry(engine: Engine) -> tuple[str, str, str, int]:
    """A run with a retry: its first attempt, its settlement time and sequence, the retry."""
    first, settled, seq = engine.store.conn.execute(
        "SELECT id, settled_at, settled_seq FROM attempts WHERE occurrence_id IN "
        "(SELECT occurrence_id FROM attempts WHERE number = 2) AND number = 1"
    ).fetchone()
    return first, settled, first.removesuffix(".1") + ".2", seq


def assert_overlap_found(engine: Engine, first: str, second: str) -> None:
    error = the_error(checked(engine))
    assert error.check == "attempts" and (error.details["attempt_id"], error.details["earlier"]) \
        == (second, first)  # fmt: skip
    assert "overlapped" in error.message


def test_a_retry_claimed_before_its_first_attempt_settled_overlapped(
    engine: Engine, realistic: Ids
) -> None:
    """The claim's event came before the first attempt's settlement: whatever the stamps say."""
    first, _, second, settled_seq = first_and_retry(engine)
    inject(engine, "UPDATE attempts SET claimed_seq = ? WHERE id = ?", settled_seq, second)
    assert_overlap_found(engine, first, second)


def test_an_overlap_is_judged_by_sequence_not_by_the_wall_clock(
    engine: Engine, realistic: Ids
) -> None:
    """A backward clock jump can stamp a retry before its first attempt settled."""
    _, settled, second, _ = first_and_retry(engine)
    inject(engine, "UPDATE attempts SET claimed_at = ? WHERE id = ?", minute_before(settled),
           second)  # fmt: skip
    assert checked(engine).ok


def test_attempts_from_before_the_sequence_are_judged_by_their_stamps(
    engine: Engine, realistic: Ids
) -> None:
    first, settled, second, _ = first_and_retry(engine)
    inject(engine, "UPDATE attempts SET claimed_seq = NULL, settled_seq = NULL")
    assert checked(engine).ok
    inject(engine, "UPDATE attempts SET claimed_at = ? WHERE id = ?", minute_before(settled),
           second)  # fmt: skip
    assert_overlap_found(engine, first, second)


def minute_before(stamp: str) -> str:
    at = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    return instant_text(at - timedelta(minutes=1))


def test_a_run_fenced_by_an_old_generation_under_an_expired_lease_is_unwatched(
    engine: Engine, realistic: Ids
) -> None:
    engine.scheduler.pass_once("doctor")
    expired = instant_text(engine.clock.now_utc() - timedelta(minutes=1))
    inject(engine, "UPDATE lease SET generation = generation + 1, expires_at = ?", expired)
    report = doctor(engine.store, engine.clock.now_utc())
    error = the_error(report)
    assert error.check == "occurrences"
    assert error.message.startswith(
        f"occurrence {realistic.archive}@20260329T120000Z is running under generation 1 "
        "but the lease is at 2: nobody is watching it."
    )
    assert error.details["generation"] == 1


def test_a_run_whose_leader_is_gone_is_unwatched(engine: Engine, realistic: Ids) -> None:
    engine.scheduler.pass_once("doctor")
    dead = f"{socket.gethostname()}/{_a_pid_that_is_not_running()}/1.000/dead"
    inject(engine, "UPDATE lease SET holder = ?", dead)
    error = the_error(doctor(engine.store, engine.clock.now_utc()))
    assert error.check == "occurrences"
    assert "under generation 1 but the scheduler holding generation 1" in error.message
    assert "is gone: nobody is watching it" in error.message


def _a_pid_that_is_not_running() -> int:
    pid = 4_000_000
    while os.path.exists(f"/proc/{pid}"):
        pid += 1
    return pid


def test_an_expired_lease_whose_holder_lives_is_a_late_leader_not_an_error(
    engine: Engine, realistic: Ids
) -> None:
    engine.clock.advance(LEASE_TTL * 2)  # no pass: the leader (this process) is "asleep"
    report = doctor(engine.store, engine.clock.now_utc())
    assert report.ok
    ((check, severity, message),) = problems(report)
    assert (check, severity) == ("lease", "warning") and "late renewing" in message


def test_a_planned_occurrence_long_past_with_no_lease_waits_for_a_scheduler(
    engine: Engine, realistic: Ids
) -> None:
    """A decision, documented in coven_core.integrity.doctor: a warning, not an error. The row is
    durable and the next scheduler runs it; nothing is lost or run twice."""
    _finish_the_archive(engine)
    month_ago = engine.clock.now_utc() - timedelta(days=30)
    oid = f"{realistic.report}@{month_ago:%Y%m%dT%H%M%SZ}"
    inject(engine, "INSERT INTO occurrences (id, routine_id, revision, kind, scheduled_utc, "
           "local_kind, zone, tzdb_version, state, planned_at, generation) VALUES "
           "(?, ?, 1, 'scheduled', ?, 'regular', 'UTC', '2025a', 'planned', ?, 1)",
           oid, realistic.report, instant_text(month_ago), instant_text(month_ago))  # fmt: skip
    inject(engine, "DELETE FROM lease")
    report = doctor(engine.store, engine.clock.now_utc())
    assert report.ok
    assert problems(report) == [(
        "occurrences", "warning",
        f"occurrence {oid} was due at {month_ago:%Y-%m-%dT%H:%M:%SZ} and waits for a scheduler: "
        "there is no lease: no scheduler has run here. Start Coven (or `coven daemon`) to run it",
    )]  # fmt: skip


def _finish_the_archive(engine: Engine) -> None:
    (launch,) = engine.runtime.running.values()
    engine.runtime.finish(launch, 0)
    engine.run_until(engine.clock.now_utc())


def test_an_edited_audit_entry_is_named(engine: Engine, realistic: Ids) -> None:
    inject(engine, "UPDATE audit_log SET why = 'nothing happened' WHERE seq = 2")
    error = the_error(checked(engine))
    assert (error.check, error.details["first_broken_seq"]) == ("audit", 2)
    assert error.message == (
        "the audit log does not verify at entry 2: entry 2 was changed: its hash does not "
        "match its contents"
    )


def test_a_delivery_for_a_failed_occurrence(engine: Engine, realistic: Ids) -> None:
    failed = one(engine, "SELECT id FROM occurrences WHERE disposition = 'failed' LIMIT 1")
    inject(engine, "INSERT INTO deliveries (occurrence_id, state) VALUES (?, 'pending')", failed)
    error = the_error(checked(engine))
    assert (error.check, error.details["occurrence_id"]) == ("references", failed)
    assert "which is failed: only a success's output is delivered" in error.message


def test_an_attempt_of_no_occurrence(engine: Engine, realistic: Ids) -> None:
    inject(engine, "INSERT INTO attempts (id, occurrence_id, number, state, generation, "
           "claimed_at, settled_at) VALUES ('ghost.1', 'nowhere', 1, 'settled', 1, "
           "'2026-03-28T12:00:00.000000Z', '2026-03-28T12:00:00.000000Z')")  # fmt: skip
    report = checked(engine)
    assert ("references", "error",
            "attempt ghost.1 belongs to occurrence nowhere, which does not exist") in problems(
        report)  # fmt: skip
    assert any(f.check == "integrity" and "ghost" not in f.message for f in report.errors)


def test_a_failure_counter_that_disagrees_with_the_history_is_a_warning(
    engine: Engine, realistic: Ids
) -> None:
    inject(engine, "UPDATE routines SET consecutive_failures = 0 WHERE name = 'report'")
    report = checked(engine)
    assert report.ok
    assert problems(report) == [("counters", "warning",
        "routine 'report' counts 0 consecutive failures but its history shows 2 since its "
        "last success or release: quarantine decisions use this count")]  # fmt: skip


def test_an_id_not_derived_from_its_moment_and_a_moment_decided_twice(
    engine: Engine, realistic: Ids
) -> None:
    oid = one(engine, "SELECT id FROM occurrences WHERE routine_id = ? AND "
              "disposition = 'succeeded' AND kind = 'scheduled' LIMIT 1", realistic.flaky)  # fmt: skip
    inject(engine, "INSERT INTO occurrences (id, routine_id, revision, kind, scheduled_utc, "
           "local_kind, zone, tzdb_version, state, disposition, reason, planned_at, settled_at, "
           "generation) SELECT id || '-again', routine_id, revision, kind, scheduled_utc, "
           "local_kind, zone, tzdb_version, 'settled', 'skipped', 'overlap', planned_at, "
           "planned_at, generation FROM occurrences WHERE id = ?", oid)  # fmt: skip
    found = problems(checked(engine), "ids")
    assert [severity for _, severity, _ in found] == ["error", "error"]
    assert found[0][2].startswith(f"occurrence id {oid}-again is not the one its routine")
    assert f"({oid}, {oid}-again): each moment has exactly one" in found[1][2]


def test_a_settled_occurrence_without_a_disposition(engine: Engine, realistic: Ids) -> None:
    oid = one(engine, "SELECT id FROM occurrences WHERE disposition = 'cancelled'")
    conn = apsw.Connection(str(engine.store.path))
    conn.execute("PRAGMA ignore_check_constraints = ON")
    conn.execute("UPDATE occurrences SET disposition = NULL WHERE id = ?", (oid,))
    conn.close()
    report = checked(engine)
    assert [(f.check, f.message) for f in report.errors] == [
        (
            "integrity",
            "SQLite integrity_check: CHECK constraint failed in occurrences — a row "
            "breaks the schema's rules: the store was changed outside Coven",
        ),
        (
            "occurrences",
            f"occurrence {oid} is 'settled' with disposition None: a settled "
            "occurrence has exactly one known disposition, a live one none",
        ),
    ]


def test_a_missing_attempt_directory_is_a_warning_until_retention_would_remove_it(
    engine: Engine, realistic: Ids
) -> None:
    attempt, directory = engine.store.conn.execute(
        "SELECT a.id, a.attempt_dir FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id "
        "WHERE o.disposition = 'succeeded' ORDER BY a.settled_at LIMIT 1"
    ).fetchone()
    for child in Path(directory).iterdir():
        child.unlink()
    Path(directory).rmdir()
    report = checked(engine)
    assert report.ok
    ((check, severity, message),) = problems(report)
    assert (check, severity) == ("evidence", "warning")
    assert f"the directory of attempt {attempt} is gone" in message and "30 days" in message
    expired = RetentionPolicy(attempt_dirs_keep_for=timedelta(hours=1))
    assert problems(checked(engine, retention=expired)) == []


# --- a person's decisions -----------------------------------------------------------------


def test_a_run_awaiting_a_person_is_information_and_a_decision_needs_its_record(
    tmp_path: Path, clock: VirtualClock
) -> None:
    new, _ = after_a_dead_leader(tmp_path / "d", clock, "backup")
    new.run_until(clock.now_utc())
    report = checked(new)
    assert report.ok and problems(report) == []
    run_id, oid = new.store.conn.execute("SELECT run_id, id FROM occurrences").fetchone()
    assert any(f.message.startswith(f"run {run_id} (occurrence {oid}) waits for a person")
               for f in report.findings)  # fmt: skip
    new.operator.reconcile(run_id, Outcome.FAILED, "the disk was full; it did not finish")
    assert checked(new).ok
    inject(new, "DELETE FROM reconciliations")
    error = the_error(checked(new))
    assert error.check == "references" and "no decision is recorded" in error.message
    new.store.close()


# --- the store itself ---------------------------------------------------------------------


def test_a_damaged_index_fails_the_integrity_check(engine: Engine, realistic: Ids) -> None:
    conn = apsw.Connection(str(engine.store.path))
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_schema SET sql = 'CREATE INDEX occurrences_history ON "
                 "occurrences (kind, zone)' WHERE name = 'occurrences_history'")  # fmt: skip
    conn.close()
    engine.store.close()
    engine.store = Store.open(engine.store.data_dir, engine.clock.now_utc())
    report = doctor(engine.store, engine.clock.now_utc())
    assert report.verdicts()["integrity"] == "error"
    first = report.errors[0].message
    assert first.startswith("SQLite integrity_check: row 1 missing from index occurrences_history")
    assert first.endswith(f"then restore a backup or rebuild it with `sqlite3 "
                          f"{engine.store.path} .recover`")  # fmt: skip


def test_a_schema_version_or_application_id_that_is_not_coven_s(
    engine: Engine, realistic: Ids
) -> None:
    inject(engine, "PRAGMA user_version = 65536")
    inject(engine, "PRAGMA application_id = 7")
    found = problems(checked(engine), "schema")
    assert [severity for _, severity, _ in found] == ["error", "error"]
    assert found[0][2].startswith("application_id is 0x7, not Coven's 0x436f766e")
    current = f"{schema.CURRENT.major}.{schema.CURRENT.minor}"
    assert found[1][2].startswith(f"schema version 1.0 is not this Coven's {current}")


def test_loose_permissions_are_named_with_their_fix(engine: Engine, realistic: Ids) -> None:
    data_dir = engine.store.data_dir
    os.chmod(data_dir, 0o755)
    os.chmod(engine.store.path, 0o644)
    os.chmod(data_dir / "output", 0o755)
    found = problems(checked(engine), "location")
    assert [severity for _, severity, _ in found] == ["error", "error", "warning"]
    assert found[0][2].endswith(f"Run: chmod 700 {data_dir}")
    assert found[1][2].endswith(f"Run: chmod 600 {engine.store.path}")
    assert found[2][2].endswith(f"Run: chmod 700 {data_dir / 'output'}")


def test_every_file_and_folder_in_the_data_directory_is_judged(
    engine: Engine, realistic: Ids
) -> None:
    data_dir = engine.store.data_dir
    attempt = data_dir / "attempts" / "run1.1"
    attempt.mkdir(mode=0o700)
    (attempt / "spec.json").write_text("{}")
    os.chmod(attempt / "spec.json", 0o644)
    (data_dir / "logs").mkdir(mode=0o700)
    os.chmod(data_dir / "logs", 0o755)
    found = problems(checked(engine), "location")
    assert sorted(message.rsplit("Run: ", 1)[1] for _, _, message in found) == [
        f"chmod 600 {attempt / 'spec.json'}", f"chmod 700 {data_dir / 'logs'}",
    ]  # fmt: skip
    assert all(severity == "warning" for _, severity, _ in found)


def test_findings_are_capped_per_check(
    engine: Engine, realistic: Ids, monkeypatch: pytest.MonkeyPatch
) -> None:
    inject(engine, "UPDATE routines SET consecutive_failures = 7")
    monkeypatch.setattr(doctor_base, "MAX_FINDINGS_PER_CHECK", 2)
    found = problems(checked(engine), "counters")
    assert len(found) == 3 and found[2] == ("counters", "warning",
                                            "… and 4 more findings like these")  # fmt: skip


# --- a real runner ------------------------------------------------------------------------


def test_a_real_runner_s_journal_is_evidence_until_its_exit_line_is_corrupted(
    tmp_path: Path, clock: VirtualClock
) -> None:
    with real_runners(tmp_path / "data", clock) as real:
        store = real.store
        spec = RevisionSpec("@yearly", "UTC", ("/bin/sh", "-c", "echo real"))
        real.operator.add_routine("real", spec)
        real.run_now_to_the_end("real")
        report = doctor(store, clock.now_utc())
        assert report.ok and problems(report) == []
        (directory,) = store.conn.execute("SELECT attempt_dir FROM attempts").fetchone()
        path = Path(directory) / JOURNAL
        written = path.read_text()
        assert written.count('"exit_code":0') == 1
        path.write_text(written.replace('"exit_code":0', '"exit_code":"0"'))
        error = the_error(doctor(store, clock.now_utc()))
    assert error.check == "evidence"
    assert "has no readable `exited` record" in error.message
    assert "malformed exited skipped" in error.details["journal_problems"]
