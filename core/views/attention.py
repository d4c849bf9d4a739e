"""What needs a person, with the evidence to decide (DESIGN §1, §10; issue #5).

Four kinds of item: a run whose outcome is unknown (``recovery_required``), a cancellation
that was requested but not acknowledged in time, a delivery that keeps failing, and a run
still going far past its routine's usual time (``overrun``, until it ends). Each item
carries its evidence — the runner's journal, whether the runner and the command are still
alive (pid *and* start time), the tail of the captured output, timestamps, the attempts and
what the engine already tried — and a digest of exactly that evidence, which a decision
records so that it can later be shown what the person saw.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw

from coven_core.operations.stopping import AttemptRecord, attempt_alive
from coven_core.runner.journal import read_journal
from coven_core.store.codec import instant_from, instant_text
from coven_core.store.query import one
from coven_core.store.store import Store
from coven_core.views import story
from coven_core.views.overview import CANCEL_PATIENCE

OUTPUT_TAIL_BYTES = 4096


@dataclass(frozen=True)
class ProcessFact:
    """The runner or the command of an attempt: pid, when it started, whether it still runs
    (the same pid *and* start time)."""

    role: str  # runner | command
    pid: int | None
    started_at: datetime | None
    alive: bool


@dataclass(frozen=True)
class AttemptEvidence:
    number: int
    attempt_id: str
    state: str
    failure_class: str | None
    message: str | None
    claimed_at: str | None
    started_at: str | None
    exited_at: str | None
    runner_pid: int | None
    runner_alive: bool
    command_pid: int | None
    command_alive: bool
    cancel_requested_at: str | None
    journal: list[dict[str, Any]] = field(default_factory=list)
    journal_problems: list[str] = field(default_factory=list)
    stdout_tail: str = ""
    stderr_tail: str = ""
    #: The still-running command's own command line, as the system reports it (``sleep 60``
    #: after ``sh -c '…; exec sleep 60'``): what a person would find with ``ps``.
    command_line: str | None = None
    #: A command found by its environment's tag, not named by the journal: its start (epoch).
    command_started: float | None = None

    @property
    def settled_without_exit(self) -> bool:
        """Settled with no record of how it ended: ``exited_at`` is then when Coven gave up on
        its runner, not when its command ended (which may still run)."""
        ended = any(record.get("event") in _OUTCOMES for record in self.journal)
        return self.exited_at is not None and not ended

    def processes(self) -> list[ProcessFact]:
        """The runner and the command, with their start times from the journal."""
        runner = _journal_value(self.journal, "runner_started", "runner_start")
        command = _journal_value(self.journal, "spawned", "pid_start") or self.command_started
        return [
            ProcessFact("runner", self.runner_pid, _epoch(runner), self.runner_alive),
            ProcessFact("command", self.command_pid, _epoch(command), self.command_alive),
        ]


#: The journal's records that say how an attempt ended (``runner.journal``).
_OUTCOMES = frozenset({"exited", "spawn_failed"})


def _journal_value(records: list[dict[str, Any]], event: str, key: str) -> object:
    for record in records:
        if record.get("event") == event:
            return record.get(key)
    return None


def _epoch(value: object) -> datetime | None:
    """A process start time as the journal holds it (seconds since the epoch)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        return datetime.fromtimestamp(float(value), UTC)
    except (OverflowError, OSError, ValueError):
        return None


@dataclass(frozen=True)
class Item:
    kind: str  # recovery_required | stuck_cancel | delivery_failing
    run_id: str | None
    occurrence_id: str
    routine: str
    routine_id: str
    scheduled_utc: str
    disposition: str | None
    reason: str | None
    attempts: list[AttemptEvidence]
    tried: list[str]  # the engine's own steps, from the event log, oldest first
    delivery_error: str | None = None
    running_seconds: float | None = None  # an overrun: how long it has run so far
    usual_seconds: float | None = None  # an overrun: what the routine usually takes
    tried_words: list[str] = field(default_factory=list)  # ``tried`` as sentences (story.tried)
    command: str = ""  # the command line the run ran (its revision's), as a shell reads it
    cwd: str | None = None  # the folder it ran in (None: the runner's default)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "evidence_digest": self.digest()}

    def digest(self) -> str:
        """sha256 of the evidence exactly as shown (canonical JSON)."""
        shown = json.dumps(asdict(self), sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(shown.encode()).hexdigest()


def attention(store: Store, now: datetime) -> list[Item]:
    with store.read() as conn:
        rows = _candidates(conn, now)
        return [_item(conn, now, *row) for row in rows]


def item_for_run(conn: apsw.Connection, run_id: str, now: datetime) -> Item | None:
    for row in _candidates(conn, now):
        if row[1] == run_id:
            return _item(conn, now, *row)
    return None


_CANDIDATES = """
SELECT 'recovery_required', o.run_id, o.id FROM occurrences o
    WHERE o.disposition = 'recovery_required'
UNION ALL
SELECT 'stuck_cancel', o.run_id, o.id FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id
    WHERE a.cancel_requested_at IS NOT NULL AND a.cancel_requested_at <= ? AND a.state != 'settled'
UNION ALL
SELECT 'delivery_failing', o.run_id, o.id FROM deliveries d JOIN occurrences o
    ON o.id = d.occurrence_id WHERE d.state = 'failed' OR d.tries >= 2
UNION ALL
SELECT 'overrun', o.run_id, o.id FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id
    WHERE a.overrun_at IS NOT NULL AND a.state != 'settled'
"""


def _candidates(conn: apsw.Connection, now: datetime) -> list[tuple[str, str | None, str]]:
    stuck_since = instant_text(now - CANCEL_PATIENCE)
    return [(kind, run, oid) for kind, run, oid in conn.execute(_CANDIDATES, (stuck_since,))]


def _item(
    conn: apsw.Connection, now: datetime, kind: str, run_id: str | None, occurrence_id: str
) -> Item:
    row = one(
        conn,
        "SELECT r.name, r.id, o.scheduled_utc, o.disposition, o.reason, "
        "(SELECT last_error FROM deliveries d WHERE d.occurrence_id = o.id), "
        "(SELECT a.started_at FROM attempts a WHERE a.occurrence_id = o.id "
        "ORDER BY a.number DESC LIMIT 1), "
        "(SELECT a.usual_seconds FROM attempts a WHERE a.occurrence_id = o.id "
        "ORDER BY a.number DESC LIMIT 1), o.zone, v.argv, v.shell, v.cwd "
        "FROM occurrences o JOIN routines r ON r.id = o.routine_id LEFT JOIN revisions v "
        "ON v.routine_id = o.routine_id AND v.number = o.revision WHERE o.id = ?",
        (occurrence_id,),
    )
    (name, routine_id, scheduled, disposition, reason, delivery_error, started, usual, zone,
     argv, shell, cwd) = row  # fmt: skip
    running = None
    if kind == "overrun" and started is not None:
        running = (now - instant_from(started)).total_seconds()
    return Item(
        kind, run_id, occurrence_id, name, routine_id, scheduled, disposition, reason,
        _attempts(conn, occurrence_id), _tried(conn, occurrence_id), delivery_error,
        running, usual if kind == "overrun" else None, story.tried(conn, occurrence_id, zone),
        command_line(argv, bool(shell)) if argv is not None else "", cwd,
    )  # fmt: skip


def command_line(argv: str, shell: bool) -> str:
    """A revision's stored command (JSON argv) as a shell would read it; a shell routine's
    string as it is."""
    try:
        words = [str(word) for word in json.loads(argv)]
    except ValueError:
        return argv
    return words[0] if shell and words else shlex.join(words)


def _attempts(conn: apsw.Connection, occurrence_id: str) -> list[AttemptEvidence]:
    rows = conn.execute(
        "SELECT number, id, state, failure_class, message, claimed_at, started_at, exited_at, "
        "runner_pid, runner_start, command_pid, cancel_requested_at, attempt_dir, boot_id "
        "FROM attempts WHERE occurrence_id = ? ORDER BY number",
        (occurrence_id,),
    )
    return [_attempt(*row) for row in rows]


def _attempt(
    number: int, attempt_id: str, state: str, failure: str | None, message: str | None,
    claimed: str | None, started: str | None, exited: str | None, runner_pid: int | None,
    runner_start: float | None, command_pid: int | None, cancel: str | None,
    attempt_dir: str | None, boot: str | None,
) -> AttemptEvidence:  # fmt: skip
    directory = Path(attempt_dir) if attempt_dir else None
    journal = read_journal(directory / "journal.jsonl") if directory else None
    record = AttemptRecord(attempt_id, number, runner_pid, runner_start, command_pid,
                           attempt_dir, boot)  # fmt: skip
    alive = {process.role: process for process in attempt_alive(record, journal)}
    runner_alive, command_alive = "runner" in alive, "command" in alive
    command = alive.get("command")  # one found by its tag has no pid on record
    if command is not None:
        command_pid = command.pid
    elif command_pid is None and journal is not None:
        command_pid = journal.command_pid
    command_started = command.started if command else None
    return AttemptEvidence(
        number, attempt_id, state, failure, message, claimed, started, exited, runner_pid,
        runner_alive, command_pid, command_alive,
        cancel, _journal_records(directory), list(journal.problems) if journal else [],
        output_tail(directory, "stdout"), output_tail(directory, "stderr"),
        _own_command_line(command_pid) if command_alive else None, command_started,
    )  # fmt: skip


def _own_command_line(pid: int | None) -> str | None:
    """What the system says a live process runs; None when it cannot be read."""
    import psutil  # only asked once a process is found alive, which has loaded it

    try:
        words = psutil.Process(pid).cmdline()
    except psutil.Error:
        return None
    return shlex.join(words) if words else None


def _journal_records(directory: Path | None) -> list[dict[str, Any]]:
    if directory is None:
        return []
    records = []
    try:
        lines = (directory / "journal.jsonl").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    for line in lines.splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            records.append({"unreadable": line[:200]})
    return records


def output_tail(directory: Path | None, name: str, limit: int = OUTPUT_TAIL_BYTES) -> str:
    """The last ``limit`` bytes of an attempt's captured ``stdout`` or ``stderr``."""
    if directory is None:
        return ""
    try:
        with open(directory / name, "rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            return handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def last_error_line(directory: Path | None) -> str:
    """The last line an attempt wrote to ``stderr`` that says anything (200 characters at
    most): what a failure said last, beside its exit, in notices and the list of runs."""
    lines = [line.strip() for line in output_tail(directory, "stderr").splitlines()]
    said = [line for line in lines if line]
    return said[-1][:200] if said else ""


def _tried(conn: apsw.Connection, occurrence_id: str) -> list[str]:
    rows = conn.execute(
        "SELECT at, kind, data FROM events WHERE occurrence_id = ? ORDER BY seq",
        (occurrence_id,),
    )
    return [f"{at[:19]}Z {kind} {data}" for at, kind, data in rows]
