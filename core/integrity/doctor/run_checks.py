"""Checks of runs: no two attempts overlapped, every success has its exit evidence."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from itertools import groupby, pairwise
from pathlib import Path
from typing import Any, NamedTuple

from coven_core.integrity.doctor.base import (
    ERROR,
    LIVE_STATES,
    WARNING,
    Context,
    Finding,
    finding,
    shown,
)
from coven_core.runner.journal import ExitRecord, read_journal
from coven_core.runtime.runner import JOURNAL
from coven_core.store.codec import instant_from

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


def check_attempts(context: Context) -> Iterator[Finding]:
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
            yield finding(
                ERROR, f"attempt {later.id} was claimed (at {shown(later.claimed_at)}) before "
                f"attempt {earlier.id} settled (at {shown(str(earlier.settled_at))}): two "
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
        yield finding(ERROR, f"occurrence {oid} has {len(unsettled)} unsettled attempts "
                       f"({named}): at most one attempt may be in flight", **details)  # fmt: skip
    elif first.occurrence_state not in LIVE_STATES:
        yield finding(ERROR, f"attempt {first.id} is still {first.state} though occurrence "
                       f"{oid} is {first.occurrence_state}: nothing will settle it",
                       **details)  # fmt: skip
    elif first is not attempts[-1]:
        yield finding(ERROR, f"attempt {first.id} is still {first.state} though a later attempt "
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


def check_evidence(context: Context) -> Iterator[Finding]:
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


def _exit_evidence(success: _Success, context: Context) -> Finding | None:
    oid, aid = success.occurrence_id, success.attempt_id
    lacking = f"occurrence {oid} succeeded without exit evidence"
    if aid is None:
        return finding(ERROR, f"{lacking}: it has no attempt", occurrence_id=oid)
    if success.state != "settled" or success.exit_code != 0 or success.failure_class is not None:
        ended = f"status {success.exit_code}" if success.exit_code is not None else "no status"
        why = f"{success.state}, {ended}, failure {success.failure_class or 'none'}"
        return finding(ERROR, f"{lacking}: its last attempt {aid} is {why}",
                        occurrence_id=oid, attempt_id=aid)  # fmt: skip
    if success.attempt_dir is None:
        return None
    return _journal_evidence(success, Path(success.attempt_dir), context)


def _journal_evidence(success: _Success, directory: Path, context: Context) -> Finding | None:
    oid, aid = success.occurrence_id, success.attempt_id
    details = {"occurrence_id": oid, "attempt_id": aid, "attempt_dir": str(directory)}
    if not directory.is_dir():
        settled = instant_from(success.settled_at) if success.settled_at else context.now
        if settled <= context.now - context.keep_dirs_for:
            return None  # retention removed it, as it should
        kept = _duration(context.keep_dirs_for)
        return finding(WARNING, f"the directory of attempt {aid} is gone though retention keeps "
                        f"attempt directories for {kept}: its journal cannot back the success "
                        f"of occurrence {oid}", **details)  # fmt: skip
    try:
        journal = read_journal(directory / JOURNAL)
    except OSError as error:
        unread = f"the journal of attempt {aid} cannot be read ({error.strerror or error})"
        return finding(ERROR, f"occurrence {oid} succeeded without exit evidence: {unread}",
                        **details)  # fmt: skip
    problem = _exit_problem(journal.exit)
    if problem is None:
        return None
    if journal.problems:
        details["journal_problems"] = "; ".join(journal.problems)
    return finding(ERROR, f"occurrence {oid} succeeded without exit evidence: the journal of "
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
