"""What the Diagnostics window shows, read in one snapshot (DESIGN §3, §12, §13).

The scheduler's status (:func:`coven_core.views.status.status`), its last passes with their
durations and counts, what happened to the machine's time (sleep, downtime, clock jumps,
time-zone changes, a change of leader), where the data directory is and whether it is as
private as §13 requires, and which tz database plans occurrences. The GUI only draws it.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import apsw

from coven_core.events import EventKind
from coven_core.store.codec import any_instant_from, instant_from, maybe_instant_from
from coven_core.store.errors import StoreLocationError
from coven_core.store.location import check_store_file, filesystem_type, prepare_data_dir
from coven_core.store.store import Store
from coven_core.tz import tzdb
from coven_core.views.status import Status, status

#: The events that say something happened to the machine's time or to who schedules.
HOST_EVENT_KINDS = (
    EventKind.SLEPT,
    EventKind.DOWNTIME,
    EventKind.CLOCK_JUMPED,
    EventKind.REPLANNED,
    EventKind.TIMEZONE_CHANGED,
    EventKind.LEADER_CHANGED,
    EventKind.SHUTDOWN,
)


@dataclass(frozen=True)
class PassLine:
    """One scheduler pass, as recorded (§3)."""

    started_at: datetime
    scheduled_for: datetime | None
    duration_ms: float
    role: str
    trigger: str
    planned: int
    claimed: int
    dispatched: int
    recovered: int
    settled: int
    error_class: str | None
    error: str | None

    @property
    def late_ms(self) -> float | None:
        """How long after its deadline a timed pass started (its lag); None for a pass that
        something woke early (an operator command, a finished run, a wake from sleep)."""
        if self.scheduled_for is None or self.trigger != "deadline":
            return None
        return (self.started_at - self.scheduled_for).total_seconds() * 1000.0


@dataclass(frozen=True)
class HostEvent:
    """Sleep, downtime, a clock jump, a time-zone change, a new leader or a shutdown."""

    seq: int
    at: datetime
    kind: EventKind
    data: dict[str, Any]

    @property
    def interval(self) -> tuple[datetime, datetime] | None:
        """For sleep and downtime: when it began and ended."""
        start, end = self.data.get("start"), self.data.get("end")
        if not isinstance(start, str) or not isinstance(end, str):
            return None
        try:  # written as ``isoformat``, or in the store's own format
            return any_instant_from(start), any_instant_from(end)
        except ValueError:
            return None


@dataclass(frozen=True)
class PathFacts:
    """One path of the store: its mode and owner, as §13 judges them."""

    path: Path
    exists: bool
    mode: int | None  # the permission bits
    owned_by_you: bool
    private: bool  # no bits for group or others (always true where POSIX modes do not apply)
    symlink: bool


@dataclass(frozen=True)
class DataDirectory:
    directory: PathFacts
    files: list[PathFacts]  # the store file and its -wal / -shm companions that exist
    filesystem: str | None
    problems: list[str]  # what the store's own checks refuse, with the fix; empty when safe

    @property
    def safe(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class Diagnostics:
    status: Status
    passes: list[PassLine]  # newest first
    host_events: list[HostEvent]  # newest first
    data_directory: DataDirectory
    tzdb: tzdb.Tzdb


def diagnostics(store: Store, now: datetime, *, passes: int = 25, events: int = 50) -> Diagnostics:
    """Everything Diagnostics shows, as of ``now``. Reads only."""
    with store.read() as conn:
        recent, host = recent_passes(conn, passes), host_events(conn, events)
    return Diagnostics(status(store, now), recent, host, data_directory(store), tzdb.active())


def recent_passes(conn: apsw.Connection, limit: int) -> list[PassLine]:
    rows = conn.execute(
        "SELECT started_at, scheduled_at, duration_ms, role, wake_reason, planned, claimed, "
        "dispatched, recovered, settled, error_class, error FROM passes ORDER BY id DESC LIMIT ?",
        (limit,),
    )
    return [
        PassLine(instant_from(started), maybe_instant_from(scheduled), *rest)
        for started, scheduled, *rest in rows
    ]


def host_events(conn: apsw.Connection, limit: int) -> list[HostEvent]:
    marks = ", ".join("?" for _ in HOST_EVENT_KINDS)
    rows = conn.execute(
        f"SELECT seq, at, kind, data FROM events WHERE kind IN ({marks}) ORDER BY seq DESC LIMIT ?",
        (*[kind.value for kind in HOST_EVENT_KINDS], limit),
    )
    return [
        HostEvent(seq, instant_from(at), EventKind(kind), _data(data))
        for seq, at, kind, data in rows
    ]


def _data(text: str) -> dict[str, Any]:
    try:
        found = json.loads(text)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def data_directory(store: Store) -> DataDirectory:
    """Where the store is and whether it is private (§13), with the store's own refusals."""
    files = [store.path.with_name(store.path.name + suffix) for suffix in ("", "-wal", "-shm")]
    return DataDirectory(
        path_facts(store.data_dir),
        [path_facts(path) for path in files if os.path.lexists(path)],
        filesystem_type(store.data_dir),
        _problems(store),
    )


def path_facts(path: Path) -> PathFacts:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return PathFacts(path, False, None, False, False, False)
    mode = stat.S_IMODE(info.st_mode)
    posix = os.name == "posix"
    owned = not posix or info.st_uid == os.geteuid()
    return PathFacts(
        path, True, mode, owned, not posix or not mode & 0o077, stat.S_ISLNK(info.st_mode)
    )


def _problems(store: Store) -> list[str]:
    problems = []
    for check in (lambda: prepare_data_dir(store.data_dir), lambda: check_store_file(store.path)):
        try:
            check()
        except StoreLocationError as error:
            problems.append(str(error))
    return problems
