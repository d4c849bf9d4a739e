"""The store's schema: named, ordered, transactional migrations (as sqlite-utils keeps them).

``PRAGMA user_version`` holds the schema version as ``major << 16 | minor``; a store whose
major is newer than this code refuses to open. ``PRAGMA application_id`` marks a file as a
Coven store so that another application's database is never mistaken for one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import apsw

from coven_core.store import constraints

APPLICATION_ID = 0x436F766E  # "Covn"


class Migration(NamedTuple):
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


def _statements(script: str) -> Callable[[apsw.Connection], None]:
    def apply(conn: apsw.Connection) -> None:
        for statement in script.split(";\n"):
            if statement.strip():
                conn.execute(statement)

    return apply


# Issue #4: the runner and its journal, retries, cancellation, manual runs, delivery.
_RUNTIME = """
ALTER TABLE revisions ADD COLUMN shell INTEGER NOT NULL DEFAULT 0;
ALTER TABLE revisions ADD COLUMN stop_grace_seconds REAL NOT NULL DEFAULT 5;
ALTER TABLE revisions ADD COLUMN quarantine_after INTEGER NOT NULL DEFAULT 3;
ALTER TABLE occurrences ADD COLUMN not_before TEXT;
ALTER TABLE occurrences ADD COLUMN manual_key TEXT;
ALTER TABLE occurrences ADD COLUMN probe INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX occurrences_manual_key ON occurrences (manual_key)
    WHERE manual_key IS NOT NULL;
ALTER TABLE attempts ADD COLUMN attempt_dir TEXT;
ALTER TABLE attempts ADD COLUMN runner_pid INTEGER;
ALTER TABLE attempts ADD COLUMN runner_start REAL;
ALTER TABLE attempts ADD COLUMN command_pid INTEGER;
ALTER TABLE attempts ADD COLUMN boot_id TEXT;
ALTER TABLE attempts ADD COLUMN policy TEXT;
ALTER TABLE attempts ADD COLUMN not_before TEXT;
ALTER TABLE attempts ADD COLUMN exhausted TEXT;
ALTER TABLE attempts ADD COLUMN cancel_requested_at TEXT;
ALTER TABLE attempts ADD COLUMN cancel_by TEXT;
ALTER TABLE attempts ADD COLUMN cancel_scope TEXT;
ALTER TABLE attempts ADD COLUMN cancel_reason TEXT;
ALTER TABLE attempts ADD COLUMN cancel_acknowledged_at TEXT;
ALTER TABLE attempts ADD COLUMN race_note TEXT;
CREATE INDEX attempts_cancel ON attempts (cancel_requested_at)
    WHERE cancel_requested_at IS NOT NULL AND state != 'settled';
CREATE TABLE deliveries (
    occurrence_id TEXT PRIMARY KEY REFERENCES occurrences (id),
    state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    path TEXT,
    size INTEGER,
    sha256 TEXT,
    delivered_at TEXT,
    tries INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    not_before TEXT
) STRICT;
CREATE INDEX deliveries_pending ON deliveries (state) WHERE state != 'delivered'
"""

# Issue #5: a person's decisions on runs the machine cannot know about.
_RECONCILIATION = """
ALTER TABLE occurrences ADD COLUMN forced INTEGER NOT NULL DEFAULT 0;
ALTER TABLE occurrences ADD COLUMN reconciled_as TEXT;
CREATE TABLE reconciliations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    occurrence_id TEXT NOT NULL REFERENCES occurrences (id),
    run_id TEXT,
    outcome TEXT NOT NULL CHECK (outcome IN ('succeeded', 'failed', 'retry')),
    reason TEXT NOT NULL,
    decided_by TEXT NOT NULL,
    decided_at TEXT NOT NULL,
    evidence_digest TEXT NOT NULL,
    evidence TEXT NOT NULL
) STRICT;
CREATE INDEX reconciliations_occurrence ON reconciliations (occurrence_id)
"""

# Issue #5: the hash-chained audit log of operator actions (coven_core.integrity.audit).
_AUDIT = """
CREATE TABLE audit_log (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    who TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT,
    why TEXT,
    result TEXT NOT NULL,
    details TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('entry', 'checkpoint'))
) STRICT;
CREATE INDEX audit_log_target ON audit_log (target, seq)
"""

# Issue #6: the order of claims and settlements, independent of the wall clock (which a
# backward jump sends back): the event sequence at each (coven_core.events.LAST_SEQ).
_ATTEMPT_ORDER = """
ALTER TABLE attempts ADD COLUMN claimed_seq INTEGER;
ALTER TABLE attempts ADD COLUMN settled_seq INTEGER
"""

# Issue #8: the timeline reads sleep and downtime intervals by time, over a bounded range.
_TIMELINE = """
CREATE INDEX events_intervals ON events (at) WHERE kind IN ('slept', 'downtime')
"""

# Issue #9: what a pass writes, cheaper. The claim step reads waiting occurrences in
# (scheduled_utc, id) order: with the id in the index that order needs no sort.
_WAITING_ORDER = """
DROP INDEX occurrences_due;
CREATE INDEX occurrences_due ON occurrences (scheduled_utc, id) WHERE state = 'planned'
"""


# Issue #18: nothing runs forever without anyone knowing. Global settings (the default
# timeout); on each attempt the timeout that applied and where it came from, when it would
# overrun (and what the routine usually takes), when the overrun was raised (once), and what
# a person's stop did.
_LIVENESS = """
CREATE TABLE settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    changed_at TEXT NOT NULL
) STRICT;
ALTER TABLE attempts ADD COLUMN timeout_seconds REAL;
ALTER TABLE attempts ADD COLUMN timeout_source TEXT;
ALTER TABLE attempts ADD COLUMN usual_seconds REAL;
ALTER TABLE attempts ADD COLUMN overrun_after TEXT;
ALTER TABLE attempts ADD COLUMN overrun_at TEXT;
ALTER TABLE attempts ADD COLUMN stop_result TEXT;
CREATE INDEX attempts_overrun ON attempts (overrun_after)
    WHERE overrun_after IS NOT NULL AND overrun_at IS NULL AND state != 'settled'
"""


# Issue #21: the tray counts failed runs nobody has looked at yet. ``seen_at`` is written by a
# person opening the run (Operator.mark_seen), never by a pass; the partial index holds only
# the unseen failures, so the tray's count reads a handful of entries and a pass that settles
# successes writes nothing more. Failures from before this migration count as seen: an
# upgrade must not light the tray up for years of history.
_SEEN = """
ALTER TABLE occurrences ADD COLUMN seen_at TEXT;
UPDATE occurrences SET seen_at = coalesce(settled_at, planned_at)
    WHERE disposition = 'failed' OR disposition = 'timed_out';
CREATE INDEX occurrences_unseen ON occurrences (settled_at)
    WHERE seen_at IS NULL AND (disposition = 'failed' OR disposition = 'timed_out')
"""


# Issue #23: policies decided per moment. Exclusion dates on a revision (a JSON list of local
# dates); on an occurrence, the inputs of the policy decision that settled it (JSON).
_CALENDAR = """
ALTER TABLE revisions ADD COLUMN except_dates TEXT NOT NULL DEFAULT '[]';
ALTER TABLE occurrences ADD COLUMN decision TEXT
"""


# Issue #23: a trial (shadow) revision decides its moments as if live and starts nothing.
_SHADOW = """
ALTER TABLE revisions ADD COLUMN shadow INTEGER NOT NULL DEFAULT 0
"""


# Issue #23: per-day budgets of runs and run time (days in the routine's zone).
_BUDGETS = """
ALTER TABLE revisions ADD COLUMN max_runs_per_day INTEGER;
ALTER TABLE revisions ADD COLUMN max_runtime_per_day_seconds REAL
"""


# Issue #23: a rest after failures, doubling up to a cap.
_COOLDOWN = """
ALTER TABLE revisions ADD COLUMN cooldown_seconds REAL;
ALTER TABLE revisions ADD COLUMN cooldown_max_seconds REAL
"""


# Issue #23: exclusion groups (at most one member runs at a time).
_GROUPS = """
ALTER TABLE revisions ADD COLUMN group_name TEXT
"""


# Issue #23: chains. A revision may name its upstream routine (and which of its outcomes
# triggers it); an occurrence may be triggered by an upstream one.
_CHAINS = """
ALTER TABLE revisions ADD COLUMN after_routine TEXT;
ALTER TABLE revisions ADD COLUMN after_outcome TEXT NOT NULL DEFAULT 'succeeded';
CREATE INDEX revisions_after ON revisions (after_routine) WHERE after_routine IS NOT NULL
"""


def _chains(conn: apsw.Connection) -> None:
    _statements(_CHAINS)(conn)
    constraints.widen_check(conn, "occurrences", "kind", "triggered")


# Issue #23: conditions (on AC power, online) and keeping the machine awake while a run lives.
_CONDITIONS = """
ALTER TABLE revisions ADD COLUMN on_ac_power INTEGER NOT NULL DEFAULT 0;
ALTER TABLE revisions ADD COLUMN when_online INTEGER NOT NULL DEFAULT 0;
ALTER TABLE revisions ADD COLUMN keep_awake INTEGER NOT NULL DEFAULT 0
"""


# The Runs page's newest runs of every routine, in (scheduled_utc, id) order: without an index
# in that order, SQLite read every occurrence and its attempts' subqueries before keeping 50
# (half a second per page at the retention bound of 129,600 occurrences; 0.2 ms with it).
_RUNS_ORDER = """
CREATE INDEX occurrences_planned_for ON occurrences (scheduled_utc, id)
"""


# Issue #24: runs between two attempts (a retry waiting to be claimed) by their own index. Found
# through ``occurrences_due``, a claim's count of its routine's such runs, and each pass's
# earliest retry, walked every planned row: a burst of 1,000 due at once made the drain
# quadratic (0.17 ms a claim at its start, 10 µs with this index). Only a run has a run id, and
# a run between attempts has one, so the index holds the few retries and person's runs waiting.
_BETWEEN_ATTEMPTS = """
CREATE INDEX occurrences_between ON occurrences (routine_id)
    WHERE state = 'planned' AND run_id IS NOT NULL
"""


def _write_costs(conn: apsw.Connection) -> None:
    constraints.rewrite_checks(conn)  # an IN list in a CHECK costs a b-tree per write
    _statements(_WAITING_ORDER)(conn)


MIGRATIONS: tuple[Migration, ...] = (
    Migration("0001_initial", 1, 0, _initial),
    Migration("0002_runtime", 1, 1, _statements(_RUNTIME)),
    Migration("0003_reconciliation", 1, 2, _statements(_RECONCILIATION)),
    Migration("0004_audit", 1, 3, _statements(_AUDIT)),
    Migration("0005_attempt_order", 1, 4, _statements(_ATTEMPT_ORDER)),
    Migration("0006_timeline", 1, 5, _statements(_TIMELINE)),
    Migration("0007_write_costs", 1, 6, _write_costs),
    Migration("0008_liveness", 1, 7, _statements(_LIVENESS)),
    Migration("0009_seen", 1, 8, _statements(_SEEN)),
    Migration("0010_calendar", 1, 9, _statements(_CALENDAR)),
    Migration("0011_shadow", 1, 10, _statements(_SHADOW)),
    Migration("0012_budgets", 1, 11, _statements(_BUDGETS)),
    Migration("0013_cooldown", 1, 12, _statements(_COOLDOWN)),
    Migration("0014_groups", 1, 13, _statements(_GROUPS)),
    Migration("0015_chains", 1, 14, _chains),
    Migration("0016_conditions", 1, 15, _statements(_CONDITIONS)),
    Migration("0017_runs_order", 1, 16, _statements(_RUNS_ORDER)),
    Migration("0018_between_attempts", 1, 17, _statements(_BETWEEN_ATTEMPTS)),
)

CURRENT = MIGRATIONS[-1]
