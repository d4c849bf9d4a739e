"""``coven doctor``: does the store keep Coven's promises? (CONTRACT §10, §13)

:func:`doctor` reads the store (one snapshot, no write lock) and the attempt journals on disk,
and returns a :class:`Report` of findings. Each finding belongs to one check, has a severity
— ``error`` (the store contradicts a promise: something was lost, ran twice, claims a success
it cannot prove, or is stuck with nobody watching), ``warning`` (worth a look, nothing is
wrong yet) or ``info`` — and one line of text that names the problem and, where there is
one, the fix. ``Report.ok`` is true when there is no error.

The checks, in report order:

``integrity``
    SQLite ``PRAGMA integrity_check`` (``quick_check`` when ``quick``) and
    ``foreign_key_check``.
``schema``
    ``application_id`` is Coven's, ``user_version`` (major/minor) is this code's
    :data:`~coven_core.store.schema.CURRENT`, every migration up to it is recorded.
``location``
    The data directory and store files are private, owned by the user, not links and not on a
    network filesystem (:mod:`coven_core.store.location`); the attempts and output folders
    are private; the filesystem type (info).
``lease``
    Who leads, at which generation, and whether it is alive (info); a lease that expired
    while its holder is alive (a leader late renewing: asleep or stalled) is a warning.
``occurrences``
    A settled occurrence has exactly one disposition and a live one none. A ``claimed`` or
    ``running`` occurrence has an unsettled attempt fenced by the *current* generation of a
    lease that is watched (not expired, or its holder provably alive; never a holder that is
    gone) — otherwise nobody is watching it: error. ``recovery_required`` waits for a person:
    info. A ``planned`` occurrence whose time has passed while no scheduler watches the
    store is a **warning**, not an error: its row is durable and the next scheduler runs it
    (nothing is lost, nothing will run twice), it just has not happened yet. The same goes
    for an active routine's moments that passed unplanned (info without a scheduler,
    warning with one that fell behind by more than a lease's lifetime).
``attempts``
    At most one attempt of an occurrence is unsettled, it is the latest, and only a
    ``claimed``/``running`` occurrence has one; attempt n+1 was not claimed before attempt n
    settled (no two attempts overlapped) — judged by the event sequence stamped on each claim
    and settlement, never by wall-clock stamps, which a backward clock jump sends back.
``evidence``
    Every ``succeeded`` occurrence's last attempt exited 0, and when it has an attempt
    directory, its journal has an ``exited`` record with exit code 0 (not cancelled, not timed
    out). A directory that retention removed is fine once the attempt is older than the
    retention window (30 days by default); a missing directory of a newer attempt is a
    warning.
``ids``
    Every occurrence id is the one derived from its routine and moment (``~gap``, ``~missed``
    and ``manual~`` ids included), and no routine has two rows for one moment (a plain row
    and a ``~gap`` row at the same instant are fine).
``counters``
    ``routines.consecutive_failures`` matches the history: the failed or timed-out
    settlements of the routine's non-probe runs since its last success or release, counted as
    the engine counts them (a manual run counts; a retried-then-failed run counts once per
    settlement). A mismatch is a warning. (Retention keeps each routine's newest 1,000
    occurrences, so only a streak longer than that — quarantine disabled — could be
    misjudged.)
``references``
    Every attempt's and delivery's occurrence exists; a delivery belongs to a ``succeeded``
    occurrence; a ``reconciled`` occurrence has its row in ``reconciliations``.
``audit``
    The audit log's hash chain verifies (:func:`coven_core.integrity.audit.verify`); an error names
    the
    first broken entry.
``growth``
    Rows and bytes per table, the store file, its free pages and WAL, and the attempts and
    output folders (info; :func:`coven_core.integrity.retention.growth`). Skipped when ``quick``.

A check with no error or warning reports one ``info`` line saying what it verified (``lease``,
``audit`` and ``growth`` always report their own).
At most :data:`MAX_FINDINGS_PER_CHECK` findings are listed per check; the rest are counted
in one last finding of that check with their worst severity.

JSON (:meth:`Report.to_json`, printed by ``coven doctor --json``), stable::

    {
      "ok": true,                       # no error finding
      "checked_at": "2026-03-01T12:00:00Z",
      "summary": {"errors": 0, "warnings": 0, "info": 14},
      "checks": {"integrity": "ok", ...},   # per check, in order: "ok" | "warning" | "error"
      "findings": [
        {"check": "integrity", "severity": "info", "message": "…", "details": {…}},
        …
      ],
      "growth": {                       # null when quick
        "tables": {"occurrences": {"rows": 12, "bytes": 8192}, …},   # bytes null without dbstat
        "file_bytes": 90112, "free_bytes": 0, "wal_bytes": 4152, "measured_by": "dbstat",
        "attempts": {"path": "…/attempts", "files": 9, "bytes": 1234},
        "output": {"path": "…/output", "files": 3, "bytes": 15}
      }
    }

``details`` hold the ids a finding is about (``occurrence_id``, ``attempt_id``,
``routine_id``, ``generation``, …): strings, numbers, booleans or null; their keys may grow.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from itertools import groupby, pairwise
from pathlib import Path
from typing import Any, Literal, NamedTuple

import apsw

from coven_core.integrity import audit
from coven_core.integrity.privacy import loose_entries
from coven_core.integrity.retention import (
    FolderGrowth,
    Growth,
    RetentionPolicy,
    TableGrowth,
    growth,
)
from coven_core.model import Disposition, OccurrenceState
from coven_core.runner.journal import ExitRecord, read_journal
from coven_core.runtime.runner import JOURNAL
from coven_core.scheduling import ids, lease, routines
from coven_core.scheduling.lease import LEASE_TTL, Lease
from coven_core.store.codec import instant_from, instant_text
from coven_core.store.errors import StoreError, StoreLocationError
from coven_core.store.location import check_store_file, filesystem_type, prepare_data_dir
from coven_core.store.query import scalar
from coven_core.store.schema import APPLICATION_ID, CURRENT, MIGRATIONS
from coven_core.store.store import Store
from coven_core.tz.binding import BoundTime, LocalTimeKind
from coven_core.views.glance import scheduling_paused

Severity = Literal["error", "warning", "info"]
ERROR: Severity = "error"
WARNING: Severity = "warning"
INFO: Severity = "info"

MAX_FINDINGS_PER_CHECK = 50
_STORE_ENDS = ("", "-wal", "-shm", "-journal")
_START_COVEN = "Start Coven (or `coven daemon`) to adopt or settle it"
_LIVE_STATES = (OccurrenceState.CLAIMED.value, OccurrenceState.RUNNING.value)


@dataclass(frozen=True)
class Finding:
    """One thing the doctor found. ``message`` is one line; ``details`` name what it is about."""

    check: str
    severity: Severity
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "severity": self.severity,
            "message": self.message,
            "details": self.details,
        }


@dataclass(frozen=True)
class Report:
    """Every finding, in check order; ``growth`` is None when the check was skipped."""

    checked_at: datetime
    findings: list[Finding]
    growth: Growth | None = None

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def errors(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.severity == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.severity == WARNING]

    def count(self, severity: Severity) -> int:
        return sum(finding.severity == severity for finding in self.findings)

    def verdicts(self) -> dict[str, str]:
        """Per check, in order: ``error``, ``warning`` or ``ok``."""
        return {name: _verdict(self.findings, name) for name in CHECKS}

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "checked_at": _iso(self.checked_at),
            "summary": {
                "errors": self.count(ERROR),
                "warnings": self.count(WARNING),
                "info": self.count(INFO),
            },
            "checks": self.verdicts(),
            "findings": [finding.to_json() for finding in self.findings],
            "growth": None if self.growth is None else dict(self.growth),
        }


def _verdict(findings: list[Finding], check: str) -> str:
    severities = {finding.severity for finding in findings if finding.check == check}
    for severity in (ERROR, WARNING):
        if severity in severities:
            return severity
    return "ok"


def doctor(
    store: Store, now: datetime, *, quick: bool = False, retention: RetentionPolicy | None = None
) -> Report:
    """Check ``store`` as of ``now``. Reads only; never call it inside a transaction.

    ``quick`` runs SQLite's ``quick_check`` instead of the full ``integrity_check`` and skips
    the growth figures (for checking after every step of a simulation). ``retention`` says how
    long attempt directories are kept (the default policy when None).
    """
    keep_dirs_for = (retention or RetentionPolicy()).attempt_dirs_keep_for
    with store.read() as conn:
        context = _Context(conn, store, now, _leader(conn, now), keep_dirs_for, quick)
        findings = [found for check in _CHECKS for found in _run(check, context)]
    if quick:
        return Report(now, findings)
    usage = _measured(store)
    findings += _run(_Check("growth", lambda _: _growth_findings(usage)), context)
    return Report(now, findings, usage if isinstance(usage, dict) else None)


# --- running the checks -------------------------------------------------------------------


@dataclass(frozen=True)
class _Leader:
    """Whether a scheduler watches the store: a lease, not expired (or its holder provably
    alive), whose holder is not gone."""

    lease: Lease | None
    watching: bool
    late: bool  # expired, but its holder is alive: a leader late renewing
    why_not: str  # when not watching: why, as the end of a sentence


@dataclass(frozen=True)
class _Context:
    conn: apsw.Connection
    store: Store
    now: datetime
    leader: _Leader
    keep_dirs_for: timedelta
    quick: bool

    @property
    def now_text(self) -> str:
        return instant_text(self.now)


@dataclass(frozen=True)
class _Check:
    name: str
    find: Callable[[_Context], Iterable[Finding]]
    passed: str | None = None  # the info line when it finds no error or warning


def _run(check: _Check, context: _Context) -> list[Finding]:
    found = [replace(finding, check=check.name) for finding in _guarded(check, context)]
    if check.passed is not None and not any(f.severity != INFO for f in found):
        found.insert(0, Finding(check.name, INFO, check.passed))
    return _capped(check.name, found)


def _guarded(check: _Check, context: _Context) -> Iterator[Finding]:
    """A check that cannot read the store says so and lets the others run."""
    try:
        yield from check.find(context)
    except apsw.Error as error:
        yield _finding(ERROR, f"the {check.name} check stopped: SQLite said {_one_line(str(error))}"
                       " — the store file may be damaged (see the integrity check)")  # fmt: skip


def _capped(check: str, found: list[Finding]) -> list[Finding]:
    if len(found) <= MAX_FINDINGS_PER_CHECK:
        return found
    kept, rest = found[:MAX_FINDINGS_PER_CHECK], found[MAX_FINDINGS_PER_CHECK:]
    worst = next((s for s in (ERROR, WARNING) if any(f.severity == s for f in rest)), INFO)
    more = f"… and {len(rest)} more findings like these"
    return [*kept, Finding(check, worst, more, {"more": len(rest)})]


def _finding(severity: Severity, message: str, **details: Any) -> Finding:
    """A finding of the check that yields it (the runner fills in ``check``)."""
    return Finding("", severity, message, details)


def _iso(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def _shown(stored: str | None) -> str:
    """A stored instant as people read it elsewhere in the CLI."""
    return "—" if stored is None else _iso(instant_from(stored))


# --- integrity and schema -----------------------------------------------------------------


def _integrity(context: _Context) -> Iterator[Finding]:
    pragma = "quick_check" if context.quick else "integrity_check"
    lines = [str(row[0]) for row in context.conn.execute(f"PRAGMA {pragma}")]
    damaged = _damaged_fix(context.store.path)
    if lines != ["ok"]:
        for line in lines:
            fix = _EDITED if _breaks_a_rule(line) else damaged
            yield _finding(ERROR, f"SQLite {pragma}: {_one_line(line)} — {fix}")
    for table, rowid, parent, _ in context.conn.execute("PRAGMA foreign_key_check"):
        yield _finding(
            ERROR, f"row {rowid} of {table} refers to a {parent} row that does not exist — "
            f"{_EDITED}", table=table, rowid=rowid, parent=parent,
        )  # fmt: skip


_EDITED = "a row breaks the schema's rules: the store was changed outside Coven"


def _damaged_fix(path: Path) -> str:
    return (f"the store file is damaged: stop Coven, keep a copy of {path}, then restore a "
            f"backup or rebuild it with `sqlite3 {path} .recover`")  # fmt: skip


def _breaks_a_rule(line: str) -> bool:
    """A row that breaks a CHECK or NOT NULL rule: the file is sound, its contents are not."""
    return "constraint failed" in line or line.startswith("NULL value in")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _schema(context: _Context) -> Iterator[Finding]:
    conn = context.conn
    found_id = int(scalar(conn, "PRAGMA application_id"))
    if found_id != APPLICATION_ID:
        yield _finding(
            ERROR,
            f"application_id is {found_id:#x}, not Coven's {APPLICATION_ID:#x}: this file may "
            "belong to another application; move it away and restore Coven's store",
        )
    version = int(scalar(conn, "PRAGMA user_version"))
    yield from _version(version)
    yield from _missing_migrations(conn, version)


def _version(version: int) -> Iterator[Finding]:
    major, minor = version >> 16, version & 0xFFFF
    known = f"{CURRENT.major}.{CURRENT.minor}"
    if major != CURRENT.major or minor < CURRENT.minor:
        yield _finding(
            ERROR, f"schema version {major}.{minor} is not this Coven's {known}: the store was not "
            "migrated (or was downgraded); open it with this version's `coven status` to migrate",
            found=f"{major}.{minor}", expected=known,
        )  # fmt: skip
    elif minor > CURRENT.minor:
        yield _finding(
            WARNING, f"schema version {major}.{minor} is newer than this Coven's {known}: a newer "
            "Coven wrote it; these checks may not know its newest columns. Upgrade Coven.",
            found=f"{major}.{minor}", expected=known,
        )  # fmt: skip


def _missing_migrations(conn: apsw.Connection, version: int) -> Iterator[Finding]:
    recorded = {str(row[0]) for row in conn.execute("SELECT name FROM migrations")}
    for migration in MIGRATIONS:
        if migration.user_version <= version and migration.name not in recorded:
            yield _finding(
                WARNING, f"migration {migration.name} is not recorded in the migrations table",
                migration=migration.name,
            )  # fmt: skip


# --- location -----------------------------------------------------------------------------


def _location(context: _Context) -> Iterator[Finding]:
    store = context.store
    for refuse in (lambda: prepare_data_dir(store.data_dir), lambda: check_store_file(store.path)):
        try:
            refuse()
        except StoreLocationError as error:
            yield _finding(ERROR, _one_line(str(error)))
    yield from _loose_entries(store.data_dir, store.path)
    fstype = filesystem_type(store.data_dir)
    where = f"filesystem type {fstype}" if fstype else "filesystem type unknown"
    yield _finding(INFO, f"the store is in {store.data_dir}, {where}", fstype=fstype)


def _loose_entries(data_dir: Path, store_path: Path) -> Iterator[Finding]:
    """Specs, outputs and logs may hold secrets: everything in the data directory is as
    private as the store (which the refusals above already judged)."""
    store_files = {store_path.with_name(store_path.name + end) for end in _STORE_ENDS}
    for entry in loose_entries(data_dir):
        if entry.path not in store_files and entry.path != data_dir:
            kind = "folder" if entry.is_dir else "file"
            yield _finding(
                WARNING, f"{entry.path} has permissions {entry.mode:04o}; every {kind} in the "
                f"data directory is private to you. Run: {entry.fix}", path=str(entry.path),
            )  # fmt: skip


# --- the lease ----------------------------------------------------------------------------


def _leader(conn: apsw.Connection, now: datetime) -> _Leader:
    held = lease.current(conn)
    if held is None:
        return _Leader(None, False, False, "there is no lease: no scheduler has run here")
    named = f"generation {held.generation} ({held.fingerprint()})"
    if lease.holder_is_gone(held.holder):
        return _Leader(held, False, False, f"the scheduler holding {named} is gone")
    if held.expires_at > now:
        return _Leader(held, True, False, "")
    if lease.holder_is_alive(held.holder):
        return _Leader(held, True, True, "")
    return _Leader(held, False, False, f"the lease at {named} expired at {_iso(held.expires_at)}")


def _lease(context: _Context) -> Iterator[Finding]:
    leader = context.leader
    held = leader.lease
    if held is None or not leader.watching:
        yield _finding(INFO, f"no scheduler watches the store now — {leader.why_not}")
    elif leader.late:
        yield _finding(
            WARNING, f"the lease at generation {held.generation} expired at "
            f"{_iso(held.expires_at)} but its holder ({held.fingerprint()}) is alive: the leader "
            "is late renewing it (asleep or stalled)", generation=held.generation,
        )  # fmt: skip
    else:
        yield _finding(
            INFO, f"{held.fingerprint()} leads at generation {held.generation} (lease until "
            f"{_iso(held.expires_at)})", generation=held.generation,
        )  # fmt: skip


# --- occurrences --------------------------------------------------------------------------

_DISPOSITIONS = tuple(d.value for d in Disposition)
_STATES = tuple(s.value for s in OccurrenceState)


def _occurrences(context: _Context) -> Iterator[Finding]:
    yield from _disposition_mismatches(context.conn)
    yield from _live_occurrences(context)
    yield from _awaiting_a_person(context.conn)
    yield from _due_and_waiting(context)
    yield from _unplanned_moments(context)


def _disposition_mismatches(conn: apsw.Connection) -> Iterator[Finding]:
    rows = conn.execute(
        "SELECT id, state, disposition FROM occurrences WHERE (state = 'settled') != "
        "(disposition IS NOT NULL) OR state NOT IN (SELECT value FROM json_each(?1)) OR "
        "(disposition IS NOT NULL AND disposition NOT IN (SELECT value FROM json_each(?2)))",
        (_json_list(_STATES), _json_list(_DISPOSITIONS)),
    )
    for oid, state, disposition in rows:
        yield _finding(
            ERROR, f"occurrence {oid} is {state!r} with disposition {disposition!r}: a settled "
            "occurrence has exactly one known disposition, a live one none",
            occurrence_id=oid, state=state, disposition=disposition,
        )  # fmt: skip


def _json_list(values: Iterable[str]) -> str:
    return json.dumps(list(values))


class _InFlight(NamedTuple):
    occurrence_id: str
    state: str
    attempt_id: str | None
    generation: int | None


def _live_occurrences(context: _Context) -> Iterator[Finding]:
    rows = context.conn.execute(
        "SELECT o.id, o.state, a.id, a.generation FROM occurrences o LEFT JOIN attempts a "
        "ON a.id = (SELECT id FROM attempts WHERE occurrence_id = o.id AND state != 'settled' "
        "ORDER BY number DESC LIMIT 1) WHERE o.state IN ('claimed', 'running') ORDER BY o.id"
    )
    for row in rows:
        found = _watched(_InFlight(*row), context.leader)
        if found is not None:
            yield found


def _watched(live: _InFlight, leader: _Leader) -> Finding | None:
    """Error unless a live occurrence's attempt is fenced by the current, watched lease."""
    what = f"occurrence {live.occurrence_id} is {live.state}"
    details: dict[str, Any] = {"occurrence_id": live.occurrence_id, "attempt_id": live.attempt_id}
    if live.attempt_id is None or live.generation is None:
        return _finding(ERROR, f"{what} but has no unsettled attempt: nothing will settle it. "
                        f"{_START_COVEN}.", **details)  # fmt: skip
    details["generation"] = live.generation
    held = leader.lease
    if held is None or held.generation != live.generation:
        at = "missing" if held is None else f"at {held.generation}"
        return _finding(ERROR, f"{what} under generation {live.generation} but the lease is "
                        f"{at}: nobody is watching it. {_START_COVEN}.", **details)  # fmt: skip
    if not leader.watching:
        unwatched = f"{what} under generation {live.generation} but {leader.why_not}"
        return _finding(ERROR, f"{unwatched}: nobody is watching it. {_START_COVEN}.", **details)
    return None


def _awaiting_a_person(conn: apsw.Connection) -> Iterator[Finding]:
    rows = conn.execute(
        "SELECT id, run_id FROM occurrences WHERE disposition = 'recovery_required' ORDER BY id"
    )
    for oid, run_id in rows:
        yield _finding(
            INFO, f"run {run_id} (occurrence {oid}) waits for a person's decision: see "
            "`coven attention`", occurrence_id=oid, run_id=run_id,
        )  # fmt: skip


def _due_and_waiting(context: _Context) -> Iterator[Finding]:
    """A planned occurrence whose time came: the leader claims it as capacity allows; with no
    leader it waits for the next start (a warning: it has not run *yet*, nothing is lost)."""
    rows = context.conn.execute(
        "SELECT id, scheduled_utc FROM occurrences WHERE state = 'planned' AND scheduled_utc <= ?1 "
        "AND (not_before IS NULL OR not_before <= ?1) ORDER BY scheduled_utc, id",
        (context.now_text,),
    ).fetchall()
    if context.leader.watching:
        if rows:
            yield _finding(INFO, f"{len(rows)} due occurrence(s) wait for a free slot")
        return
    for oid, at in rows:
        yield _finding(
            WARNING, f"occurrence {oid} was due at {_shown(str(at))} and waits for a scheduler: "
            f"{context.leader.why_not}. Start Coven (or `coven daemon`) to run it",
            occurrence_id=oid,
        )  # fmt: skip


def _unplanned_moments(context: _Context) -> Iterator[Finding]:
    """Moments of an active routine that passed with no row yet (decided at the next pass)."""
    if scheduling_paused(context.conn):
        return
    watching = context.leader.watching
    cutoff = context.now - LEASE_TTL if watching else context.now
    rows = context.conn.execute(
        "SELECT id, name, next_due FROM routines WHERE state = 'active' AND next_due <= ? "
        "ORDER BY next_due, id",
        (instant_text(cutoff),),
    )
    for rid, name, due in rows:
        if watching:
            yield _finding(WARNING, f"routine {name!r} was due at {_shown(due)} and nothing has "
                           "planned it: the scheduler is behind", routine_id=rid)  # fmt: skip
        else:
            yield _finding(INFO, f"routine {name!r} has moments since {_shown(due)} not decided "
                           "yet: Coven decides them (run or missed) when it starts",
                           routine_id=rid)  # fmt: skip


# --- routines -----------------------------------------------------------------------------


def _routines(context: _Context) -> Iterator[Finding]:
    """Every live routine's newest revision loads and binds with the tz database in use: a
    broken one plans nothing until a person edits or deletes it (CONTRACT §6)."""
    for routine in routines.live(context.conn):
        broken = routines.breakage(context.conn, routine)
        if broken is not None:
            reason = broken.reason(routine.name)
            yield _finding(ERROR, f"routine {routine.name!r} is broken: {reason}",
                           routine_id=routine.id, revision=broken.number)  # fmt: skip


# --- attempts -----------------------------------------------------------------------------


class _Attempt(NamedTuple):
    occurrence_id: str
    id: str
    number: int
    state: str
    claimed_at: str
    settled_at: str | None
    occurrence_state: str
    claimed_seq: int | None  # the event sequence at its claim and its settlement
    settled_seq: int | None  # (None on attempts written before schema 1.4)


def _attempts(context: _Context) -> Iterator[Finding]:
    rows = context.conn.execute(
        "SELECT a.occurrence_id, a.id, a.number, a.state, a.claimed_at, a.settled_at, o.state, "
        "a.claimed_seq, a.settled_seq FROM attempts a JOIN occurrences o "
        "ON o.id = a.occurrence_id ORDER BY a.occurrence_id, a.number"
    )
    for _, run in groupby((_Attempt(*row) for row in rows), key=lambda a: a.occurrence_id):
        yield from _one_run(list(run))


def _one_run(attempts: list[_Attempt]) -> Iterator[Finding]:
    yield from _in_flight(attempts)
    for earlier, later in pairwise(attempts):
        if _claimed_before_settled(earlier, later):
            yield _finding(
                ERROR, f"attempt {later.id} was claimed (at {_shown(later.claimed_at)}) before "
                f"attempt {earlier.id} settled (at {_shown(str(earlier.settled_at))}): two "
                f"attempts of occurrence {later.occurrence_id} overlapped",
                occurrence_id=later.occurrence_id, attempt_id=later.id, earlier=earlier.id,
            )  # fmt: skip


def _claimed_before_settled(earlier: _Attempt, later: _Attempt) -> bool:
    """Judged by the event sequence, which only grows: a backward clock jump sends the wall
    stamps back, so a retry claimed after its first attempt settled can carry an earlier
    time. A settlement stamps the newest sequence number then, a claim its own event's, so
    the later claim came first exactly when its number is not greater. Attempts from before
    schema 1.4 have no sequence numbers: only their wall stamps can tell."""
    if earlier.settled_at is None:
        return False
    if earlier.settled_seq is not None and later.claimed_seq is not None:
        return later.claimed_seq <= earlier.settled_seq
    return later.claimed_at < earlier.settled_at


def _in_flight(attempts: list[_Attempt]) -> Iterator[Finding]:
    unsettled = [a for a in attempts if a.state != "settled"]
    if not unsettled:
        return
    first, oid = unsettled[0], attempts[0].occurrence_id
    details: dict[str, Any] = {"occurrence_id": oid, "attempt_id": first.id}
    if len(unsettled) > 1:
        named = ", ".join(a.id for a in unsettled)
        yield _finding(ERROR, f"occurrence {oid} has {len(unsettled)} unsettled attempts "
                       f"({named}): at most one attempt may be in flight", **details)  # fmt: skip
    elif first.occurrence_state not in _LIVE_STATES:
        yield _finding(ERROR, f"attempt {first.id} is still {first.state} though occurrence "
                       f"{oid} is {first.occurrence_state}: nothing will settle it",
                       **details)  # fmt: skip
    elif first is not attempts[-1]:
        yield _finding(ERROR, f"attempt {first.id} is still {first.state} though a later attempt "
                       f"{attempts[-1].id} exists", **details)  # fmt: skip


# --- exit evidence ------------------------------------------------------------------------


class _Success(NamedTuple):
    occurrence_id: str
    attempt_id: str | None
    state: str | None
    exit_code: int | None
    failure_class: str | None
    attempt_dir: str | None
    settled_at: str | None


def _evidence(context: _Context) -> Iterator[Finding]:
    rows = context.conn.execute(
        "SELECT o.id, a.id, a.state, a.exit_code, a.failure_class, a.attempt_dir, a.settled_at "
        "FROM occurrences o LEFT JOIN attempts a ON a.id = (SELECT id FROM attempts "
        "WHERE occurrence_id = o.id ORDER BY number DESC LIMIT 1) "
        "WHERE o.disposition = 'succeeded' ORDER BY o.id"
    )
    for row in rows:
        found = _exit_evidence(_Success(*row), context)
        if found is not None:
            yield found


def _exit_evidence(success: _Success, context: _Context) -> Finding | None:
    oid, aid = success.occurrence_id, success.attempt_id
    lacking = f"occurrence {oid} succeeded without exit evidence"
    if aid is None:
        return _finding(ERROR, f"{lacking}: it has no attempt", occurrence_id=oid)
    if success.state != "settled" or success.exit_code != 0 or success.failure_class is not None:
        ended = f"status {success.exit_code}" if success.exit_code is not None else "no status"
        why = f"{success.state}, {ended}, failure {success.failure_class or 'none'}"
        return _finding(ERROR, f"{lacking}: its last attempt {aid} is {why}",
                        occurrence_id=oid, attempt_id=aid)  # fmt: skip
    if success.attempt_dir is None:
        return None
    return _journal_evidence(success, Path(success.attempt_dir), context)


def _journal_evidence(success: _Success, directory: Path, context: _Context) -> Finding | None:
    oid, aid = success.occurrence_id, success.attempt_id
    details = {"occurrence_id": oid, "attempt_id": aid, "attempt_dir": str(directory)}
    if not directory.is_dir():
        settled = instant_from(success.settled_at) if success.settled_at else context.now
        if settled <= context.now - context.keep_dirs_for:
            return None  # retention removed it, as it should
        kept = _duration(context.keep_dirs_for)
        return _finding(WARNING, f"the directory of attempt {aid} is gone though retention keeps "
                        f"attempt directories for {kept}: its journal cannot back the success "
                        f"of occurrence {oid}", **details)  # fmt: skip
    try:
        journal = read_journal(directory / JOURNAL)
    except OSError as error:
        unread = f"the journal of attempt {aid} cannot be read ({error.strerror or error})"
        return _finding(ERROR, f"occurrence {oid} succeeded without exit evidence: {unread}",
                        **details)  # fmt: skip
    problem = _exit_problem(journal.exit)
    if problem is None:
        return None
    if journal.problems:
        details["journal_problems"] = "; ".join(journal.problems)
    return _finding(ERROR, f"occurrence {oid} succeeded without exit evidence: the journal of "
                    f"attempt {aid} {problem}", **details)  # fmt: skip


def _duration(span: timedelta) -> str:
    if span.days and not span.seconds:
        return f"{span.days} days"
    return f"{span.total_seconds() / 3600:g} hours"


def _exit_problem(record: ExitRecord | None) -> str | None:
    if record is None:
        return "has no readable `exited` record"
    if record.cancelled or record.timed_out:
        return "says it was " + ("cancelled" if record.cancelled else "timed out")
    if record.exit_code != 0:
        ended = f"signal {record.signal}" if record.exit_code is None else record.exit_code
        return f"records exit {ended}, not 0"
    return None


# --- ids ----------------------------------------------------------------------------------


class _Row(NamedTuple):
    id: str
    routine_id: str
    kind: str
    scheduled_utc: str
    local_kind: str | None
    manual_key: str | None
    window_first: str | None


def _ids(context: _Context) -> Iterator[Finding]:
    rows = context.conn.execute(
        "SELECT id, routine_id, kind, scheduled_utc, local_kind, manual_key, window_first "
        "FROM occurrences ORDER BY id"
    )
    for row in map(_Row._make, rows):
        expected = _derived_id(row)
        if expected is not None and expected != row.id:
            yield _finding(
                ERROR, f"occurrence id {row.id} is not the one its routine and moment give "
                f"({expected}): planning that moment again would make a second row for it",
                occurrence_id=row.id, expected=expected,
            )  # fmt: skip
    yield from _moments_decided_twice(context.conn)


def _derived_id(row: _Row) -> str | None:
    if row.kind == "manual":
        return None if row.manual_key is None else ids.manual_id(row.routine_id, row.manual_key)
    if row.kind == "coalesced":
        return ids.coalesced_id(row.routine_id, instant_from(row.window_first or row.scheduled_utc))
    gap = row.local_kind == LocalTimeKind.NONEXISTENT.value
    return ids.occurrence_id(row.routine_id, _moment(instant_from(row.scheduled_utc), gap))


def _moment(instant: datetime, gap: bool) -> BoundTime:
    """Enough of a bound time to derive its id: the instant and whether it is a gap."""
    kind = LocalTimeKind.NONEXISTENT if gap else LocalTimeKind.REGULAR
    return BoundTime(instant.replace(tzinfo=None), instant, timedelta(0), 0, kind)


def _moments_decided_twice(conn: apsw.Connection) -> Iterator[Finding]:
    rows = conn.execute(
        "SELECT routine_id, scheduled_utc, group_concat(id, ', ') FROM occurrences "
        "WHERE kind = 'scheduled' GROUP BY routine_id, scheduled_utc, "
        "coalesce(local_kind, '') = 'nonexistent' HAVING count(*) > 1"
    )
    for rid, at, both in rows:
        yield _finding(ERROR, f"routine {rid} has two rows for the moment {_shown(at)} ({both}): "
                       "each moment has exactly one", routine_id=rid)  # fmt: skip


# --- counters -----------------------------------------------------------------------------

# Newest first: the settled attempts of a routine's non-probe runs, and its releases.
_SETTLEMENTS = (
    "SELECT a.settled_at, a.failure_class, a.not_before IS NOT NULL, a.dispatched_at IS NOT NULL "
    "FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id "
    "WHERE o.routine_id = ?1 AND o.probe = 0 AND a.state = 'settled' "
    "UNION ALL SELECT at, 'released', 0, 1 FROM events WHERE routine_id = ?1 AND kind = 'released' "
    "ORDER BY 1 DESC"
)
# Failure classes that settle an occurrence as cancelled or recovery_required: not counted.
_NOT_COUNTED = frozenset({"cancelled", "ambiguous"})


class _Counter(NamedTuple):
    routine_id: str
    name: str
    stored: int


def _counters(context: _Context) -> Iterator[Finding]:
    rows = context.conn.execute("SELECT id, name, consecutive_failures FROM routines ORDER BY id")
    for counter in map(_Counter._make, rows.fetchall()):
        counted = _failure_streak(context.conn, counter.routine_id)
        if counted != counter.stored:
            yield _finding(
                WARNING, f"routine {counter.name!r} counts {counter.stored} consecutive "
                f"failure(s) but its history shows {counted} since its last success or "
                "release: quarantine decisions use this count", routine_id=counter.routine_id,
                stored=counter.stored, history=counted,
            )  # fmt: skip


def _failure_streak(conn: apsw.Connection, routine_id: str) -> int:
    """The failures the engine counted since the last reset: a success or a release resets;
    an attempt that ended its occurrence failed or timed out counts (one followed by an
    automatic retry, or never dispatched, does not)."""
    failures = 0
    for _, failure, retried, dispatched in conn.execute(_SETTLEMENTS, (routine_id,)):
        if failure is None or failure == "released":
            break
        if failure not in _NOT_COUNTED and not retried and dispatched:
            failures += 1
    return failures


# --- references ---------------------------------------------------------------------------


def _references(context: _Context) -> Iterator[Finding]:
    conn = context.conn
    for aid, oid in conn.execute(
        "SELECT a.id, a.occurrence_id FROM attempts a WHERE NOT EXISTS "
        "(SELECT 1 FROM occurrences o WHERE o.id = a.occurrence_id) ORDER BY a.id"
    ):
        yield _finding(ERROR, f"attempt {aid} belongs to occurrence {oid}, which does not exist",
                       attempt_id=aid, occurrence_id=oid)  # fmt: skip
    yield from _deliveries(conn)
    for (oid,) in conn.execute(
        "SELECT o.id FROM occurrences o WHERE o.disposition = 'reconciled' AND NOT EXISTS "
        "(SELECT 1 FROM reconciliations r WHERE r.occurrence_id = o.id) ORDER BY o.id"
    ):
        yield _finding(ERROR, f"occurrence {oid} is reconciled but no decision is recorded for it "
                       "in reconciliations", occurrence_id=oid)  # fmt: skip


def _deliveries(conn: apsw.Connection) -> Iterator[Finding]:
    rows = conn.execute(
        "SELECT d.occurrence_id, d.state, o.id IS NOT NULL, o.disposition FROM deliveries d "
        "LEFT JOIN occurrences o ON o.id = d.occurrence_id "
        "WHERE o.disposition IS NOT 'succeeded' ORDER BY d.occurrence_id"
    )
    for oid, state, exists, disposition in rows:
        what = f"is {disposition or 'not settled'}" if exists else "does not exist"
        yield _finding(
            ERROR, f"a delivery ({state}) is recorded for occurrence {oid}, which {what}: only a "
            "success's output is delivered", occurrence_id=oid, disposition=disposition,
        )  # fmt: skip


# --- the audit chain ----------------------------------------------------------------------


def _audit(context: _Context) -> Iterator[Finding]:
    report = audit.verify(context.conn)
    if not report.ok:
        yield _finding(
            ERROR, f"the audit log does not verify at entry {report.first_broken_seq}: "
            f"{report.problem}", first_broken_seq=report.first_broken_seq,
        )  # fmt: skip
        return
    pruned = f", after a checkpoint for {report.pruned} pruned" if report.pruned else ""
    yield _finding(INFO, f"the audit chain verifies: {report.entries} entries{pruned}",
                   entries=report.entries, pruned=report.pruned)  # fmt: skip


# --- growth -------------------------------------------------------------------------------


def _measured(store: Store) -> Growth | Exception:
    try:
        return growth(store)
    except (apsw.Error, StoreError) as error:
        return error


def _growth_findings(usage: Growth | Exception) -> Iterator[Finding]:
    if isinstance(usage, Exception):
        yield _finding(ERROR, f"the store's growth cannot be measured: {_one_line(str(usage))}")
        return
    yield _finding(
        INFO, f"store file {_size(usage['file_bytes'])} ({_size(usage['free_bytes'])} free for "
        f"reuse), write-ahead log {_size(usage['wal_bytes'])}",
        file_bytes=usage["file_bytes"], wal_bytes=usage["wal_bytes"],
    )  # fmt: skip
    yield _finding(INFO, f"largest tables: {_largest_tables(usage)}")
    yield _folder_finding("attempt directories", usage["attempts"])
    yield _folder_finding("delivered output", usage["output"])


def _folder_finding(label: str, folder: FolderGrowth) -> Finding:
    return _finding(INFO, f"{label}: {folder['files']} file(s), {_size(folder['bytes'])} in "
                    f"{folder['path']}", files=folder["files"], bytes=folder["bytes"])  # fmt: skip


def _largest_tables(usage: Growth, shown: int = 3) -> str:
    tables = usage["tables"]
    ranked = sorted(tables, key=lambda name: (tables[name]["bytes"] or 0, tables[name]["rows"]),
                    reverse=True)  # fmt: skip
    return "; ".join(_table_text(name, tables[name]) for name in ranked[:shown]) or "none"


def _table_text(name: str, table: TableGrowth) -> str:
    size = table["bytes"]
    return f"{name} {table['rows']} rows" + ("" if size is None else f", {_size(size)}")


def _size(size: int) -> str:
    """SI units, one decimal: ``12.3 MB``."""
    for step, unit in ((10**9, "GB"), (10**6, "MB"), (10**3, "kB")):
        if size >= step:
            return f"{size / step:.1f} {unit}"
    return f"{size} B"


_CHECKS: tuple[_Check, ...] = (
    _Check("integrity", _integrity, "SQLite finds the store file intact; every reference resolves"),
    _Check("schema", _schema,
           f"schema {CURRENT.major}.{CURRENT.minor}, Coven's application id, migrations recorded"),
    _Check("location", _location, "the data directory and store files are private and local"),
    _Check("lease", _lease),
    _Check("routines", _routines, "every routine's revision loads and binds its time zone"),
    _Check("occurrences", _occurrences,
           "every past occurrence has one disposition or a live state someone watches"),
    _Check("attempts", _attempts, "no two attempts of one occurrence overlapped"),
    _Check("evidence", _evidence, "every success has its exit evidence"),
    _Check("ids", _ids, "every occurrence id is derived from its moment; no moment twice"),
    _Check("counters", _counters, "failure counters match the history"),
    _Check("references", _references, "attempts, deliveries and decisions match their runs"),
    _Check("audit", _audit),
)  # fmt: skip

CHECKS: tuple[str, ...] = (*(check.name for check in _CHECKS), "growth")
"""Every check's name, in report order."""
