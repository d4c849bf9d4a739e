"""The audit log: every operator action (who, when, what, target, why, result), chained by hash.

Each row stores the hash of the one before it, so an edit, a deletion or a reordering is found
by :func:`verify`, which names the first broken link. Retention (:func:`prune`) replaces the
oldest entries with one **checkpoint** row that stands where the last pruned entry stood: it
keeps that entry's seq and its hash as ``prev_hash``, so the chain still verifies from there.

The chain proves the log was not edited *without rehashing*; it holds no secret, so whoever can
write the store file can forge a consistent log, and it cannot see entries cut from the end.

Like :mod:`coven_core.events`, every writer runs inside the caller's write transaction, so an
action and its audit entry commit together or not at all.
"""

from __future__ import annotations

import enum
import getpass
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

import apsw

from coven_core.errors import CovenError
from coven_core.store.codec import instant_from, instant_text
from coven_core.store.errors import StoreBug
from coven_core.store.query import scalar
from coven_core.store.store import Store

GENESIS = "0" * 64
"""The ``prev_hash`` of the first entry ever written."""

_NOT_GENESIS = "prev_hash is not the genesis hash (64 zeros)"

CHECKPOINT_WHO = "coven"
CHECKPOINT_ACTION = "checkpoint"


class AuditKind(enum.StrEnum):
    ENTRY = "entry"
    CHECKPOINT = "checkpoint"


@dataclass(frozen=True)
class AuditEntry:
    """One row of the log. A checkpoint's ``details`` hold ``pruned`` (how many entries it
    stands for), ``last_hash`` (the last pruned entry's hash) and ``from``/``through`` (the
    times of the first and last pruned entries)."""

    seq: int
    at: datetime
    who: str
    action: str
    target: str | None
    why: str | None
    result: str
    details: dict[str, Any]
    prev_hash: str
    hash: str
    kind: AuditKind


@dataclass(frozen=True)
class ChainReport:
    """What :func:`verify` found. ``entries`` counts the entries found intact (all of them when
    ``ok``, those before the break otherwise); ``pruned`` how many a checkpoint stands for."""

    ok: bool
    entries: int
    first_broken_seq: int | None
    problem: str | None
    pruned: int = 0


class AuditLogBroken(CovenError):
    """The audit log was edited or damaged; ``report`` says where when it is known."""

    def __init__(self, message: str, report: ChainReport | None = None) -> None:
        super().__init__(message)
        self.report = report


class _Row(NamedTuple):
    """A row as stored, column for column."""

    seq: int
    at: str
    who: str
    action: str
    target: str | None
    why: str | None
    result: str
    details: str
    prev_hash: str
    hash: str
    kind: str


class _Break(NamedTuple):
    seq: int
    problem: str


_COLUMNS = ", ".join(_Row._fields)
_SELECT = f"SELECT {_COLUMNS} FROM audit_log"


# Writing


def append(
    conn: apsw.Connection,
    *,
    at: datetime,
    who: str,
    action: str,
    target: str | None,
    why: str | None,
    result: str,
    details: Mapping[str, Any] | None = None,
) -> AuditEntry:
    """Append one entry after the current head, inside the caller's write transaction.

    ``details`` must be JSON-serializable (other values are stored as their ``str``); NaN and
    infinities are refused with :class:`ValueError`.
    """
    _require_transaction(conn, "append")
    seq, prev_hash = _next_link(conn)
    row = _Row(
        seq,
        instant_text(at),
        who,
        action,
        target,
        why,
        result,
        _details_text(details or {}),
        prev_hash,
        "",
        AuditKind.ENTRY.value,
    )
    return _entry(_insert(conn, row))


def prune(conn: apsw.Connection, *, keep: int) -> int:
    """Fold all entries but the newest ``keep`` into the one checkpoint; return how many went.

    Runs inside the caller's write transaction. A prefix that does not verify is never pruned
    (that would erase the evidence): :class:`AuditLogBroken` is raised and nothing changes.
    """
    if keep < 0:
        raise ValueError(f"keep must be zero or more, not {keep}")
    _require_transaction(conn, "prune")
    excess = _entry_count(conn) - keep
    if excess <= 0:
        return 0
    last = _oldest_entry(conn, offset=excess - 1)
    _refuse_broken_prefix(conn, last.seq)
    checkpoint = _checkpoint_through(conn, last, excess)
    conn.execute("DELETE FROM audit_log WHERE seq <= ?", (last.seq,))
    _insert(conn, checkpoint)
    return excess


def _require_transaction(conn: apsw.Connection, verb: str) -> None:
    # Outside a transaction two writers could both chain onto the same head.
    if not conn.in_transaction:
        raise StoreBug(f"audit.{verb} must run inside the caller's write transaction")


def _next_link(conn: apsw.Connection) -> tuple[int, str]:
    head = conn.execute(f"{_SELECT} ORDER BY seq DESC LIMIT 1").fetchone()
    if head is None:
        return 1, GENESIS
    row = _Row(*head)
    return row.seq + 1, _head_hash(row)


def _insert(conn: apsw.Connection, row: _Row) -> _Row:
    sealed = row._replace(hash=_content_hash(row))
    placeholders = ", ".join("?" * len(_Row._fields))
    conn.execute(f"INSERT INTO audit_log ({_COLUMNS}) VALUES ({placeholders})", sealed)
    return sealed


def _entry_count(conn: apsw.Connection) -> int:
    row = conn.execute("SELECT COUNT(*) FROM audit_log WHERE kind = 'entry'").fetchone()
    return int(row[0]) if row else 0


def _oldest_entry(conn: apsw.Connection, *, offset: int) -> _Row:
    found = conn.execute(
        f"{_SELECT} WHERE kind = 'entry' ORDER BY seq LIMIT 1 OFFSET ?", (offset,)
    ).fetchone()
    if found is None:
        raise StoreBug(f"audit.prune: no entry at offset {offset}")
    return _Row(*found)


def _refuse_broken_prefix(conn: apsw.Connection, through: int) -> None:
    report = _walk(_rows(conn, through=through))
    if not report.ok:
        raise AuditLogBroken(
            f"the audit log is broken ({report.problem}); nothing was pruned, so the evidence "
            "is kept. Run `coven audit verify`.",
            report,
        )


def _first_row(conn: apsw.Connection) -> _Row:
    found = conn.execute(f"{_SELECT} ORDER BY seq LIMIT 1").fetchone()
    if found is None:
        raise StoreBug("audit.prune: the log is empty")
    return _Row(*found)


def _checkpoint_through(conn: apsw.Connection, last: _Row, excess: int) -> _Row:
    """The checkpoint that stands for everything up to and including ``last``."""
    first = _first_row(conn)
    if first.kind == AuditKind.CHECKPOINT:
        earlier = json.loads(first.details)
        pruned, since = int(earlier["pruned"]) + excess, str(earlier["from"])
    else:
        pruned, since = excess, first.at
    details = {"pruned": pruned, "last_hash": last.hash, "from": since, "through": last.at}
    return _Row(
        last.seq,
        last.at,
        CHECKPOINT_WHO,
        CHECKPOINT_ACTION,
        None,
        None,
        "ok",
        _details_text(details),
        last.hash,
        "",
        AuditKind.CHECKPOINT.value,
    )


# Hashing


def _canonical(value: Any) -> str:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def _details_text(details: Mapping[str, Any]) -> str:
    return json.dumps(
        dict(details),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=str,
    )


def _content_hash(row: _Row) -> str:
    """sha256 of every field but ``hash``, details as the JSON object they hold."""
    payload = row._asdict()
    del payload["hash"]
    payload["details"] = json.loads(row.details)
    return hashlib.sha256(_canonical(payload).encode("utf-8")).hexdigest()


def _intact(row: _Row) -> bool:
    """Its hash matches its contents, and its details are the canonical text they were."""
    try:
        canonical = _canonical(json.loads(row.details))
        return canonical == row.details and _content_hash(row) == row.hash
    except ValueError:
        return False


def _head_hash(row: _Row) -> str:
    """What the next row must carry as ``prev_hash``: a checkpoint passes its own through."""
    return row.prev_hash if row.kind == AuditKind.CHECKPOINT else row.hash


# Verifying


def verify(conn: apsw.Connection) -> ChainReport:
    """Check the whole chain, oldest first, and report the first broken link.

    Reads only; run it in a snapshot (``store.read()``) so a concurrent append is not half seen.
    """
    return _walk(_rows(conn))


def _rows(conn: apsw.Connection, *, through: int | None = None) -> Iterator[_Row]:
    if through is None:
        cursor = conn.execute(f"{_SELECT} ORDER BY seq")
    else:
        cursor = conn.execute(f"{_SELECT} WHERE seq <= ? ORDER BY seq", (through,))
    for found in cursor:
        yield _Row(*found)


def _walk(rows: Iterable[_Row]) -> ChainReport:
    previous: _Row | None = None
    intact = pruned = 0
    for row in rows:
        broken = _first_problem(row, previous)
        if broken is not None:
            return ChainReport(False, intact, broken.seq, broken.problem, pruned)
        if row.kind == AuditKind.CHECKPOINT:
            pruned = row.seq
        else:
            intact += 1
        previous = row
    return ChainReport(True, intact, None, None, pruned)


def _first_problem(row: _Row, previous: _Row | None) -> _Break | None:
    # Contents first: an edit that was not rehashed is then reported at the row it touched.
    if not _intact(row):
        changed = f"entry {row.seq} was changed: its hash does not match its contents"
        return _Break(row.seq, changed)
    if row.kind == AuditKind.CHECKPOINT:
        return _checkpoint_problem(row, previous)
    return _gap(row, previous) or _link(row, previous)


def _gap(row: _Row, previous: _Row | None) -> _Break | None:
    expected = 1 if previous is None else previous.seq + 1
    if row.seq == expected:
        return None
    if row.seq < expected:
        return _Break(row.seq, f"entry {row.seq} is out of sequence: the log starts at entry 1")
    if previous is None:
        return _Break(1, f"{_missing(1, row.seq - 1)} (the log starts at entry {row.seq})")
    jump = f"seq jumps from {previous.seq} to {row.seq}"
    return _Break(expected, f"{_missing(expected, row.seq - 1)} ({jump})")


def _missing(first: int, last: int) -> str:
    if first == last:
        return f"entry {first} is missing"
    return f"entries {first}–{last} are missing"


def _link(row: _Row, previous: _Row | None) -> _Break | None:
    expected = GENESIS if previous is None else _head_hash(previous)
    if row.prev_hash == expected:
        return None
    if previous is None:
        return _Break(row.seq, f"entry {row.seq} does not start the chain: {_NOT_GENESIS}")
    return _Break(
        row.seq, f"entry {row.seq} does not follow entry {previous.seq}: prev_hash differs"
    )


def _checkpoint_problem(row: _Row, previous: _Row | None) -> _Break | None:
    if previous is not None:
        return _Break(row.seq, f"checkpoint {row.seq} is not at the start of the log")
    details = json.loads(row.details)
    if _accounts_for(details, row):
        return None
    return _Break(
        row.seq,
        f"checkpoint {row.seq} is inconsistent: it must stand for entries 1–{row.seq} "
        f"and carry the hash of entry {row.seq}",
    )


def _accounts_for(details: Any, row: _Row) -> bool:
    """The checkpoint at seq N stands for entries 1..N and passes entry N's hash on."""
    if not isinstance(details, dict):
        return False
    return details.get("pruned") == row.seq and details.get("last_hash") == row.prev_hash


# Reading


def entries(
    conn: apsw.Connection, *, limit: int = 100, target: str | None = None
) -> list[AuditEntry]:
    """The newest ``limit`` rows, newest first; only those about ``target`` if given.

    Without ``target`` the checkpoint, if reached, comes last: it says how much was pruned.
    """
    if limit < 0:
        raise ValueError(f"limit must be zero or more, not {limit}")
    if target is None:
        cursor = conn.execute(f"{_SELECT} ORDER BY seq DESC LIMIT ?", (limit,))
    else:
        cursor = conn.execute(
            f"{_SELECT} WHERE target = ? ORDER BY seq DESC LIMIT ?", (target, limit)
        )
    return [_entry(_Row(*found)) for found in cursor]


def count(conn: apsw.Connection, *, target: str | None = None) -> int:
    """How many rows :func:`entries` could return without a limit."""
    if target is None:
        return int(scalar(conn, "SELECT count(*) FROM audit_log"))
    return int(scalar(conn, "SELECT count(*) FROM audit_log WHERE target = ?", (target,)))


def recent(store: Store, *, limit: int = 20, target: str | None = None) -> list[AuditEntry]:
    """:func:`entries` in a read snapshot of its own (for the GUI's operator thread)."""
    with store.read() as conn:
        return entries(conn, limit=limit, target=target)


def _entry(row: _Row) -> AuditEntry:
    try:
        at, details, kind = instant_from(row.at), json.loads(row.details), AuditKind(row.kind)
    except ValueError as exc:
        raise AuditLogBroken(
            f"audit entry {row.seq} cannot be read ({exc}); run `coven audit verify`"
        ) from exc
    fields = row._asdict()
    fields.update(at=at, details=details, kind=kind)
    return AuditEntry(**fields)


# Who


def who_am_i() -> str:
    """The OS user running this process, for the ``who`` of an entry."""
    try:
        return getpass.getuser()
    except (OSError, KeyError, ImportError):
        # getpass found no login name in the environment and no passwd entry for our uid.
        getuid = getattr(os, "getuid", None)
        return f"uid {getuid()}" if getuid is not None else "unknown user"
