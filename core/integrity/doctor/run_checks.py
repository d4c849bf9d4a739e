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
    Said,
    counted,
    finding,
    said,
    shown,
)
from coven_core.notation.i18n import N_
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
                ERROR, said(N_("attempt {later} was claimed (at {claimed}) before attempt "
                               "{earlier} settled (at {settled}): two attempts of occurrence "
                               "{oid} overlapped"), later=later.id,
                            claimed=shown(later.claimed_at), earlier=earlier.id,
                            settled=shown(str(earlier.settled_at)), oid=later.occurrence_id),
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
        many = said(N_("occurrence {oid} has {count} unsettled attempts ({named}): at most one "
                       "attempt may be in flight"),
                    oid=oid, count=len(unsettled), named=named)  # fmt: skip
        yield finding(ERROR, many, **details)
    elif first.occurrence_state not in LIVE_STATES:
        yield finding(ERROR, said(N_("attempt {aid} is still {state} though occurrence {oid} is "
                                    "{occurrence_state}: nothing will settle it"),
                                 aid=first.id, state=first.state, oid=oid,
                                 occurrence_state=first.occurrence_state), **details)  # fmt: skip
    elif first is not attempts[-1]:
        yield finding(ERROR, said(N_("attempt {aid} is still {state} though a later attempt "
                                    "{later} exists"), aid=first.id, state=first.state,
                                 later=attempts[-1].id), **details)  # fmt: skip


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
    if aid is None:
        return finding(ERROR, _lacking(oid, said(N_("it has no attempt"))), occurrence_id=oid)
    if success.state != "settled" or success.exit_code != 0 or success.failure_class is not None:
        ended = (said(N_("status {code}"), code=success.exit_code)
                 if success.exit_code is not None else said(N_("no status")))  # fmt: skip
        why = said(N_("its last attempt {aid} is {state}, {ended}, failure {failure}"),
                   aid=aid, state=success.state, ended=ended,
                   failure=success.failure_class or "none")  # fmt: skip
        return finding(ERROR, _lacking(oid, why), occurrence_id=oid, attempt_id=aid)
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
        return finding(WARNING, said(N_("the directory of attempt {aid} is gone though retention "
                                        "keeps attempt directories for {kept}: its journal "
                                        "cannot back the success of occurrence {oid}"),
                                     aid=aid, kept=kept, oid=oid), **details)  # fmt: skip
    try:
        journal = read_journal(directory / JOURNAL)
    except OSError as error:
        unread = said(N_("the journal of attempt {aid} cannot be read ({error})"), aid=aid,
                      error=error.strerror or error)  # fmt: skip
        return finding(ERROR, _lacking(oid, unread), **details)
    problem = _exit_problem(journal.exit)
    if problem is None:
        return None
    if journal.problems:
        details["journal_problems"] = "; ".join(journal.problems)
    journal_says = said(N_("the journal of attempt {aid} {problem}"), aid=aid, problem=problem)
    return finding(ERROR, _lacking(oid, journal_says), **details)


def _lacking(oid: str, why: Said) -> Said:
    return said(N_("occurrence {oid} succeeded without exit evidence: {why}"), oid=oid, why=why)


def _duration(span: timedelta) -> Said:
    if span.days and not span.seconds:
        return counted("{count} day", "{count} days", span.days)
    hours = span.total_seconds() / 3600
    return said(N_("{hours} hours"), hours=f"{hours:g}")


def _exit_problem(record: ExitRecord | None) -> Said | None:
    if record is None:
        return said(N_("has no readable `exited` record"))
    if record.cancelled:
        return said(N_("says it was cancelled"))
    if record.timed_out:
        return said(N_("says it was timed out"))
    if record.exit_code is None:
        return said(N_("records exit signal {signal}, not 0"), signal=record.signal)
    if record.exit_code != 0:
        return said(N_("records exit {code}, not 0"), code=record.exit_code)
    return None
