"""The journal reader: a journal cut short or damaged still reads, and says what it skipped."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from coven_core.model import FailureClass
from coven_core.runner.journal import (
    SPAWN_FAILURE_CLASSES,
    ExitRecord,
    Journal,
    JournalFile,
    SpawnFailure,
    append,
    read_journal,
    record,
)

AT = "2026-03-01T12:00:00.000000+00:00"
STARTED = {
    "event": "runner_started",
    "at": AT,
    "runner_pid": 10,
    "runner_start": 1.5,
    "boot_id": "b",
}
INTENT = {"event": "intent", "at": AT}
SPAWNED = {"event": "spawned", "at": AT, "pid": 11, "pid_start": 2.25}
EXIT = ExitRecord(
    at=datetime(2026, 3, 1, 12, 0, 1, tzinfo=UTC), exit_code=0, signal=None, cancelled=False,
    timed_out=False, stop_confirmed=True, stdout_bytes=3, stderr_bytes=0,
)  # fmt: skip
EXITED = EXIT.to_record()


def write(path: Path, *records: dict[str, object] | str) -> None:
    lines = (r if isinstance(r, str) else json.dumps(r) for r in records)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "journal.jsonl"


def test_a_missing_journal_reads_as_never_started(path: Path) -> None:
    journal = read_journal(path)
    assert journal == Journal()
    assert journal.never_started and not journal.outcome_known


def test_a_whole_journal_reads_back(path: Path) -> None:
    write(path, STARTED, INTENT, SPAWNED, {"event": "timeout", "at": AT}, EXITED)
    journal = read_journal(path)
    assert (journal.runner_pid, journal.runner_start, journal.boot_id) == (10, 1.5, "b")
    assert (journal.intent, journal.command_pid, journal.command_start) == (True, 11, 2.25)
    assert journal.spawned_at == datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    assert journal.timed_out_seen and not journal.cancel_acknowledged
    assert journal.exit == EXIT
    assert journal.outcome_known and not journal.never_started
    assert journal.problems == ()


def test_intent_without_an_outcome_is_neither_never_started_nor_known(path: Path) -> None:
    write(path, STARTED, INTENT)
    journal = read_journal(path)
    assert not journal.never_started and not journal.outcome_known


def test_a_spawn_failure_is_an_outcome(path: Path) -> None:
    failed = {"event": "spawn_failed", "at": AT, "failure_class": "validation", "message": "no"}
    write(path, STARTED, INTENT, failed)
    journal = read_journal(path)
    assert journal.spawn_failure == SpawnFailure("validation", "no")
    assert journal.spawn_failure == ("validation", "no")
    assert journal.outcome_known


def test_a_truncated_last_line_is_ignored_and_noted(path: Path) -> None:
    write(path, STARTED, INTENT, SPAWNED)
    with path.open("a", encoding="utf-8") as file:
        file.write(json.dumps(EXITED)[:40])  # the runner died mid-write
    journal = read_journal(path)
    assert journal.command_pid == 11 and journal.exit is None
    assert journal.problems == ("line 4: incomplete last line ignored",)


def test_a_complete_record_without_its_newline_is_not_trusted(path: Path) -> None:
    write(path, STARTED, INTENT, SPAWNED)
    with path.open("a", encoding="utf-8") as file:
        file.write(json.dumps(EXITED))
    assert read_journal(path).exit is None


def test_a_corrupt_middle_line_is_skipped_and_the_rest_still_reads(path: Path) -> None:
    write(path, STARTED, '{"event": "intent", "at"', SPAWNED, "\x00\x00", "[1, 2]", EXITED)
    journal = read_journal(path)
    assert journal.command_pid == 11 and journal.exit == EXIT
    assert not journal.intent
    assert [p.split(":")[0] for p in journal.problems] == ["line 2", "line 4", "line 5"]


def test_an_unknown_event_is_skipped_and_noted(path: Path) -> None:
    write(path, STARTED, {"event": "exploded", "at": AT}, INTENT)
    journal = read_journal(path)
    assert journal.intent
    assert journal.problems == ("line 2: unknown event 'exploded' skipped",)


def test_the_first_of_each_record_wins(path: Path) -> None:
    second_exit = {**EXITED, "exit_code": 1}
    write(path, STARTED, INTENT, SPAWNED, {**SPAWNED, "pid": 99}, EXITED, second_exit, STARTED)
    journal = read_journal(path)
    assert journal.command_pid == 11
    assert journal.exit is not None and journal.exit.exit_code == 0
    assert len(journal.problems) == 3
    assert all("duplicate" in problem for problem in journal.problems)


def test_spawned_and_spawn_failed_are_one_kind_first_wins(path: Path) -> None:
    failed = {"event": "spawn_failed", "at": AT, "failure_class": "refused", "message": "no"}
    write(path, STARTED, INTENT, SPAWNED, failed)
    journal = read_journal(path)
    assert journal.command_pid == 11 and journal.spawn_failure is None
    assert journal.problems == ("line 4: duplicate spawn_failed ignored (the first counts)",)


@pytest.mark.parametrize(
    "bad",
    [
        {**SPAWNED, "pid": "11"},
        {**SPAWNED, "pid": True},
        {"event": "spawned", "at": AT, "pid": 11},
        {**SPAWNED, "at": "yesterday"},
        {"event": "spawn_failed", "at": AT, "failure_class": "ambiguous", "message": "?"},
    ],
)
def test_a_malformed_record_is_skipped_and_does_not_block_a_good_one(
    path: Path, bad: dict[str, object]
) -> None:
    write(path, STARTED, INTENT, bad, SPAWNED)
    journal = read_journal(path)
    assert journal.command_pid == 11
    assert len(journal.problems) == 1 and journal.problems[0].startswith("line 3:")


def test_a_signalled_exit_reads_back(path: Path) -> None:
    killed = {**EXITED, "exit_code": None, "signal": 9, "cancelled": True}
    write(path, STARTED, INTENT, SPAWNED, killed)
    exit_record = read_journal(path).exit
    assert exit_record is not None
    assert (exit_record.exit_code, exit_record.signal, exit_record.cancelled) == (None, 9, True)


def test_append_writes_whole_lines_and_creates_the_file(path: Path) -> None:
    append(path, record("intent"))
    append(path, record("timeout"))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["event"] for line in lines] == ["intent", "timeout"]
    assert datetime.fromisoformat(json.loads(lines[0])["at"]).tzinfo is not None


def test_a_runners_journal_refuses_an_existing_journal(path: Path) -> None:
    """One journal, one runner: the journal a runner opens must be new."""
    first = JournalFile(path)
    first.append(record("intent"))
    first.close()
    with pytest.raises(FileExistsError):
        JournalFile(path)
    assert len(path.read_text(encoding="utf-8").splitlines()) == 1


def test_the_runner_reports_only_the_engines_failure_classes() -> None:
    assert {member.value for member in FailureClass} >= SPAWN_FAILURE_CLASSES
