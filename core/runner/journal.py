"""An attempt's journal: one JSON object per line, appended by its runner.

Events, in order (each with ``"event"`` and ``"at"``, an ISO 8601 UTC time)::

    runner_started  runner_pid, runner_start (psutil create_time), runner_mark, boot_id
    intent          written just before the command is spawned
    spawned         pid, pid_start, pid_mark     | spawn_failed  failure_class, message
    cancel_acknowledged  (optional; signal)      | timeout       (optional)
    exited          exit_code, signal, cancelled, timed_out, stop_confirmed,
                    stdout_bytes, stderr_bytes, stdout_truncated, stderr_truncated

No ``intent`` means the command never started (safe to retry); ``intent`` without an outcome
means it may have started (ambiguous). The reader is forgiving: a journal cut short by a crash
still reads, and what it had to skip is listed in ``Journal.problems``.

The outcome (``exited``, ``spawn_failed``) is fsync'd, and with it every record before it. The
records before it are not waited onto the disk (``runner.main``): a crash of any process leaves
them in the page cache, which every reader sees, but a restart of the machine may lose them.
So "no intent" proves that nothing ran only within the boot the attempt was claimed in; after
a restart the engine takes a journal without an outcome as ambiguous
(``runtime.runner._journal_of``). Where no boot can be named, the intent is fsync'd as well.

A process's ``*_start`` is when it started, for people; its ``*_mark`` is what proves it is the
same process later (``process.start_mark``: seconds since the boot named by ``boot_id`` on
Linux, which no clock step moves). A journal from before marks has none: its start serves.

``runner_started`` is written once the runner handles its signals. A runner is born holding
its stop signals (``runner.stops``), so a cancel sent before that waits and is answered as
"cancelled before the command started": nothing ran.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, NamedTuple

#: Failure classes a runner can report (the values of ``coven_core.model.FailureClass``).
VALIDATION = "validation"
REFUSED = "refused"
RUNTIME_UNAVAILABLE = "runtime_unavailable"
SPAWN_FAILURE_CLASSES = frozenset({VALIDATION, REFUSED, RUNTIME_UNAVAILABLE})

_Apply = Callable[["Journal", Mapping[str, Any]], "Journal"]
_WRITE_FLAGS = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)


class SpawnFailure(NamedTuple):
    failure_class: str
    message: str


@dataclass(frozen=True)
class ExitRecord:
    """How the command ended. ``*_bytes`` count what was kept in the output files."""

    at: datetime
    exit_code: int | None  # None when killed by a signal (or never reaped)
    signal: int | None
    cancelled: bool
    timed_out: bool
    stop_confirmed: bool  # nothing of the command's process group is left
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    stdout_truncated: bool = False
    stderr_truncated: bool = False

    def to_record(self) -> dict[str, object]:
        return {
            "event": "exited",
            "at": self.at.isoformat(timespec="microseconds"),
            **{name: getattr(self, name) for name in _EXIT_FIELDS},
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ExitRecord:
        return cls(
            at=_at(record),
            exit_code=_get(record, "exit_code", int, optional=True),
            signal=_get(record, "signal", int, optional=True),
            **{name: _get(record, name, bool) for name in _EXIT_FLAGS},
            stdout_bytes=_get(record, "stdout_bytes", int),
            stderr_bytes=_get(record, "stderr_bytes", int),
        )


_EXIT_FLAGS = ("cancelled", "timed_out", "stop_confirmed", "stdout_truncated", "stderr_truncated")
_EXIT_FIELDS = ("exit_code", "signal", "stdout_bytes", "stderr_bytes", *_EXIT_FLAGS)


@dataclass(frozen=True)
class Journal:
    """What one attempt's journal says. Missing facts are None (or False)."""

    runner_pid: int | None = None
    runner_start: float | None = None
    runner_mark: float | None = None
    boot_id: str | None = None
    intent: bool = False
    command_pid: int | None = None
    command_start: float | None = None
    command_mark: float | None = None
    spawned_at: datetime | None = None
    spawn_failure: SpawnFailure | None = None
    cancel_acknowledged: bool = False
    stop_signal: int | None = None  # what stopped it: SIGUSR1 is the engine's cancel
    timed_out_seen: bool = False
    exit: ExitRecord | None = None
    problems: tuple[str, ...] = ()

    @property
    def never_started(self) -> bool:
        """Nothing can have run: the runner never got as far as its intent to spawn."""
        return not self.intent and self.command_pid is None

    @property
    def outcome_known(self) -> bool:
        return self.exit is not None or self.spawn_failure is not None

    @property
    def spawn_unrecorded(self) -> bool:
        """The intent is on record, and neither the spawn nor an outcome: a command may run
        that no recorded pid names (its runner died between the spawn and its record)."""
        return self.intent and self.command_pid is None and not self.outcome_known


def utc_now() -> datetime:
    return datetime.now(UTC)


def record(event: str, **fields: object) -> dict[str, object]:
    """A journal record stamped with the current time."""
    return {"event": event, "at": utc_now().isoformat(timespec="microseconds"), **fields}


class JournalFile:
    """A new journal, held open by its runner for the whole attempt: one open for all its
    records (an open was a tenth of a pooled runner's time per attempt on a slow disk,
    bench_dispatch's "dispatch against that floor"). FileExistsError if it exists already:
    one journal, one runner."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._fd = os.open(path, _WRITE_FLAGS | os.O_CREAT | os.O_EXCL, 0o600)

    def append(self, record: Mapping[str, object], *, sync: bool = True) -> None:
        """Append one record; ``sync``: fsync it, and with it every record before it."""
        write_all(self._fd, _line(record))
        if sync:
            os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)


def append(path: str | os.PathLike[str], record: Mapping[str, object]) -> None:
    """Append one record to a journal, made if need be, and fsync it (and the directory, when
    this made the file): a journal written by hand, as tests and tools do. A runner keeps its
    own open (:class:`JournalFile`)."""
    try:
        fd, created = os.open(path, _WRITE_FLAGS | os.O_CREAT | os.O_EXCL, 0o600), True
    except FileExistsError:
        fd, created = os.open(path, _WRITE_FLAGS), False
    try:
        write_all(fd, _line(record))
        os.fsync(fd)
    finally:
        os.close(fd)
    if created:
        fsync_directory(os.path.dirname(os.path.abspath(path)))


def _line(record: Mapping[str, object]) -> bytes:
    return (json.dumps(record, separators=(",", ":")) + "\n").encode()


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def fsync_directory(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_journal(path: str | os.PathLike[str]) -> Journal:
    """Read a journal; a missing file reads as an empty journal (the runner never wrote)."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except FileNotFoundError:
        return Journal()
    return _Reader().read(data)


class _Reader:
    def __init__(self) -> None:
        self.journal = Journal()
        self.problems: list[str] = []
        self.seen: set[str] = set()

    def read(self, data: bytes) -> Journal:
        *lines, tail = data.split(b"\n")
        for number, line in enumerate(lines, start=1):
            self._line(number, line)
        if tail:
            self.problems.append(f"line {len(lines) + 1}: incomplete last line ignored")
        return replace(self.journal, problems=tuple(self.problems))

    def _line(self, number: int, line: bytes) -> None:
        try:
            event, entry = _parse(line)
        except ValueError as error:
            self.problems.append(f"line {number}: skipped: {error}")
            return
        apply = _APPLY.get(event)
        kind = "spawn" if event in ("spawned", "spawn_failed") else event
        if apply is None:
            self.problems.append(f"line {number}: unknown event {event!r} skipped")
        elif kind in self.seen:
            self.problems.append(f"line {number}: duplicate {event} ignored (the first counts)")
        elif self._apply(number, event, apply, entry):
            self.seen.add(kind)

    def _apply(self, number: int, event: str, apply: _Apply, entry: Mapping[str, Any]) -> bool:
        try:
            self.journal = apply(self.journal, entry)
            return True
        except KeyError as error:
            self.problems.append(f"line {number}: {event} without {error} skipped")
        except (TypeError, ValueError) as error:
            self.problems.append(f"line {number}: malformed {event} skipped: {error}")
        return False


def _parse(line: bytes) -> tuple[str, dict[str, Any]]:
    entry = json.loads(line.decode("utf-8"))
    if not isinstance(entry, dict) or not isinstance(entry.get("event"), str):
        raise ValueError("not a journal record")
    return entry["event"], entry


def _get(entry: Mapping[str, Any], name: str, kind: type, optional: bool = False) -> Any:
    value = entry[name]
    if value is None and optional:
        return None
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{name} is not {kind.__name__}")
    return value


def _mark(entry: Mapping[str, Any], name: str, before_marks: str) -> float:
    return float(_get(entry, name if name in entry else before_marks, float))


def _at(entry: Mapping[str, Any]) -> datetime:
    return datetime.fromisoformat(_get(entry, "at", str))


def _started(journal: Journal, entry: Mapping[str, Any]) -> Journal:
    return replace(
        journal,
        runner_pid=_get(entry, "runner_pid", int),
        runner_start=_get(entry, "runner_start", float),
        runner_mark=_mark(entry, "runner_mark", "runner_start"),
        boot_id=_get(entry, "boot_id", str),
    )


def _spawned(journal: Journal, entry: Mapping[str, Any]) -> Journal:
    return replace(
        journal,
        command_pid=_get(entry, "pid", int),
        command_start=_get(entry, "pid_start", float),
        command_mark=_mark(entry, "pid_mark", "pid_start"),
        spawned_at=_at(entry),
    )


def _spawn_failed(journal: Journal, entry: Mapping[str, Any]) -> Journal:
    failure_class = _get(entry, "failure_class", str)
    if failure_class not in SPAWN_FAILURE_CLASSES:
        raise ValueError(f"unknown failure class {failure_class}")
    return replace(journal, spawn_failure=SpawnFailure(failure_class, _get(entry, "message", str)))


def _stopped(journal: Journal, entry: Mapping[str, Any]) -> Journal:
    signum = _get(entry, "signal", int, optional=True)
    return replace(journal, cancel_acknowledged=True, stop_signal=signum)


_APPLY: dict[str, _Apply] = {
    "runner_started": _started,
    "intent": lambda journal, _: replace(journal, intent=True),
    "spawned": _spawned,
    "spawn_failed": _spawn_failed,
    "cancel_acknowledged": _stopped,
    "timeout": lambda journal, _: replace(journal, timed_out_seen=True),
    "exited": lambda journal, entry: replace(journal, exit=ExitRecord.from_record(entry)),
}
