"""The store's schema: named, ordered, transactional migrations (as sqlite-utils keeps them).

``PRAGMA user_version`` holds the schema version as ``major << 16 | minor``; a store whose
major is newer than this code refuses to open. ``PRAGMA application_id`` marks a file as a
Coven store so that another application's database is never mistaken for one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import apsw

APPLICATION_ID = 0x436F766E  # "Covn"


@dataclass(frozen=True)
class Migration:
    name: str
    major: int
    minor: int
    apply: Callable[[apsw.Connection], None]

    @property
    def user_version(self) -> int:
        return self.major << 16 | self.minor


def _initial(conn: apsw.Connection) -> None:
    for statement in _INITIAL.split(";\n"):
        if statement.strip():
            conn.execute(statement)


_INITIAL = """
CREATE TABLE routines (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('active', 'paused', 'quarantined', 'deleted')),
    state_reason TEXT,
    state_changed_at TEXT NOT NULL,
    revision INTEGER NOT NULL,
    planned_through TEXT NOT NULL,
    next_due TEXT,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
) STRICT;
CREATE UNIQUE INDEX routines_live_name ON routines (name) WHERE state != 'deleted';
CREATE INDEX routines_due ON routines (next_due) WHERE state = 'active';

CREATE TABLE revisions (
    routine_id TEXT NOT NULL REFERENCES routines (id),
    number INTEGER NOT NULL,
    schedule TEXT NOT NULL,
    timezone TEXT NOT NULL,
    zone_source TEXT NOT NULL,
    anchor TEXT NOT NULL,
    tzdb_version TEXT NOT NULL,
    dst_policy TEXT NOT NULL,
    misfire TEXT NOT NULL,
    grace_seconds REAL,
    overlap TEXT NOT NULL,
    timeout_seconds REAL,
    retries INTEGER NOT NULL,
    idempotent INTEGER NOT NULL,
    argv TEXT NOT NULL,
    cwd TEXT,
    env TEXT NOT NULL,
    effective_from TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (routine_id, number)
) STRICT;

CREATE TABLE occurrences (
    id TEXT PRIMARY KEY,
    routine_id TEXT NOT NULL REFERENCES routines (id),
    revision INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('scheduled', 'manual', 'coalesced')),
    scheduled_utc TEXT NOT NULL,
    local_time TEXT,
    utc_offset INTEGER,
    fold INTEGER,
    local_kind TEXT,
    zone TEXT NOT NULL,
    tzdb_version TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('planned', 'claimed', 'running', 'settled')),
    disposition TEXT,
    reason TEXT,
    run_id TEXT UNIQUE,
    window_first TEXT,
    window_last TEXT,
    window_count INTEGER,
    cause TEXT,
    planned_at TEXT NOT NULL,
    settled_at TEXT,
    generation INTEGER NOT NULL,
    CHECK ((state = 'settled') = (disposition IS NOT NULL))
) STRICT;
CREATE INDEX occurrences_due ON occurrences (scheduled_utc) WHERE state = 'planned';
CREATE INDEX occurrences_active ON occurrences (routine_id) WHERE state IN ('claimed', 'running');
CREATE INDEX occurrences_history ON occurrences (routine_id, scheduled_utc);
CREATE INDEX occurrences_attention ON occurrences (disposition)
    WHERE disposition = 'recovery_required';

CREATE TABLE attempts (
    id TEXT PRIMARY KEY,
    occurrence_id TEXT NOT NULL REFERENCES occurrences (id),
    number INTEGER NOT NULL,
    state TEXT NOT NULL
        CHECK (state IN ('claimed', 'dispatching', 'running', 'exited', 'settled')),
    generation INTEGER NOT NULL,
    claimed_at TEXT NOT NULL,
    dispatched_at TEXT,
    started_at TEXT,
    exited_at TEXT,
    settled_at TEXT,
    pid INTEGER,
    exit_code INTEGER,
    exit_signal INTEGER,
    failure_class TEXT,
    message TEXT,
    UNIQUE (occurrence_id, number)
) STRICT;
CREATE INDEX attempts_active ON attempts (state) WHERE state != 'settled';

CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    routine_id TEXT,
    occurrence_id TEXT,
    data TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX events_routine ON events (routine_id, seq);

CREATE TABLE passes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    holder TEXT NOT NULL,
    generation INTEGER,
    role TEXT NOT NULL,
    scheduled_at TEXT,
    started_at TEXT NOT NULL,
    duration_ms REAL NOT NULL,
    wake_reason TEXT NOT NULL,
    planned INTEGER NOT NULL,
    claimed INTEGER NOT NULL,
    dispatched INTEGER NOT NULL,
    recovered INTEGER NOT NULL,
    settled INTEGER NOT NULL,
    error_class TEXT,
    error TEXT
) STRICT;

CREATE TABLE lease (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    holder TEXT NOT NULL,
    generation INTEGER NOT NULL,
    acquired_at TEXT NOT NULL,
    renewed_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
) STRICT;

CREATE TABLE scheduler_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    paused INTEGER NOT NULL DEFAULT 0,
    paused_reason TEXT,
    paused_at TEXT
) STRICT;
INSERT INTO scheduler_state (id, paused) VALUES (1, 0);

CREATE TABLE migrations (
    name TEXT PRIMARY KEY,
    applied_at TEXT NOT NULL
) STRICT
"""

MIGRATIONS: tuple[Migration, ...] = (Migration("0001_initial", 1, 0, _initial),)

CURRENT = MIGRATIONS[-1]
