"""A person stops what is left of a run: ``coven stop RUN`` (DESIGN §7, §8; issue #18).

A decision on a run is refused while its runner or its command still lives — pid *and*
process start time, the check the engine adopts a runner by — or two copies could run at
once. ``stop`` is the way out, through the cancel path: the request is recorded on the exact
attempt (who, when, why, scope ``stop``), in the operator's audited transaction; then,
holding no transaction, a live runner is asked to stop as a cancel asks it (SIGUSR1: it stops
the command's whole group, SIGTERM then SIGKILL after the routine's stop grace, and journals
it), and a command whose runner is gone is stopped the same way directly (its process group:
SIGTERM, then SIGKILL after the stop grace). Each process is signalled only while it is still
the one recorded (pid and start time). What happened is recorded on the attempt; if every
process is gone, the person may decide.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from datetime import datetime

import apsw

from coven_core import events
from coven_core.errors import Conflict, ValidationError
from coven_core.events import EventKind
from coven_core.notation.i18n import _
from coven_core.operations.runs import operator_name
from coven_core.runner.journal import Journal, read_journal
from coven_core.runner.process import (
    KILL_CONFIRM_SECONDS,
    boot_id,
    end_group,
    group_gone,
    group_of,
    unrecorded_commands,
)
from coven_core.runtime.runner import JOURNAL, is_alive, signal_cancel
from coven_core.store.codec import instant_text

#: Beyond the stop grace and the kill's confirmation: how long a runner may take to journal
#: the stop and exit.
RUNNER_MARGIN = 2.0


@dataclass(frozen=True)
class LiveProcess:
    """A runner or a command of an attempt that still runs (the same pid and start mark)."""

    attempt_id: str
    attempt: int
    role: str  # runner | command
    pid: int
    mark: float
    boot: str | None
    directory: str | None
    started: float | None = None  # for people: a command found by its tag, no pid on record

    def alive(self) -> bool:
        """Still there, and for a runner still holding the attempt: a runner that journaled
        its outcome is done with it (a pooled one goes on to other attempts, DESIGN §8)."""
        if self.role == "runner" and _outcome_journaled(self.directory):
            return False
        return is_alive(self.pid, self.mark, self.boot)

    def describe(self) -> str:
        return f"its {self.role} (pid {self.pid}, attempt {self.attempt})"


def live(conn: apsw.Connection, occurrence_id: str) -> list[LiveProcess]:
    """Every process of the occurrence's attempts that still runs, runners first."""
    found: list[LiveProcess] = []
    rows = conn.execute(
        "SELECT id, number, runner_pid, runner_start, command_pid, attempt_dir, boot_id "
        "FROM attempts "
        "WHERE occurrence_id = ? ORDER BY number",
        (occurrence_id,),
    )
    for attempt_id, number, runner_pid, runner_mark, command_pid, attempt_dir, boot in rows:
        journal = read_journal(os.path.join(attempt_dir, JOURNAL)) if attempt_dir else None
        found += attempt_alive(
            AttemptRecord(attempt_id, number, runner_pid, runner_mark, command_pid, attempt_dir,
                          boot), journal,
        )  # fmt: skip
    return sorted(found, key=lambda process: process.role != "runner")


@dataclass(frozen=True)
class AttemptRecord:
    """What the store holds of an attempt's processes (any of it may be missing)."""

    attempt_id: str
    number: int
    runner_pid: int | None
    runner_mark: float | None
    command_pid: int | None
    directory: str | None
    boot: str | None


def attempt_alive(attempt: AttemptRecord, journal: Journal | None) -> list[LiveProcess]:
    """The attempt's processes that still run: its runner while it holds the attempt (a
    runner that journaled the outcome is done with it, and a pooled one goes on to others),
    its command; a fact the store lacks is taken from the journal. The one check behind every
    "no decision while it lives" (DESIGN §8): ``refuse_while_alive``, ``stop`` and the
    Reconciliation window's evidence (``views.attention``)."""
    runner_pid = attempt.runner_pid or (journal.runner_pid if journal else None)
    runner_mark = attempt.runner_mark or (journal.runner_mark if journal else None)
    command_pid = attempt.command_pid or (journal.command_pid if journal else None)
    command_mark = journal.command_mark if journal else None
    boot = attempt.boot or (journal.boot_id if journal else None)
    found: list[LiveProcess] = []
    for role, pid, mark in (("runner", runner_pid, runner_mark),
                            ("command", command_pid, command_mark)):  # fmt: skip
        if role == "runner" and journal is not None and journal.outcome_known:
            continue
        if pid is not None and mark is not None and is_alive(pid, mark, boot):
            found.append(LiveProcess(attempt.attempt_id, attempt.number, role, pid, mark, boot,
                                     attempt.directory))  # fmt: skip
    unrecorded = unrecorded_commands(journal, attempt.attempt_id) if command_pid is None else {}
    for pid, start in unrecorded.items():  # its runner died before it could record it
        found.append(LiveProcess(attempt.attempt_id, attempt.number, "command", pid, start.mark,
                                 boot_id(), attempt.directory, start.time))  # fmt: skip
    return found


def _outcome_journaled(directory: str | None) -> bool:
    return directory is not None and read_journal(os.path.join(directory, JOURNAL)).outcome_known


def refuse_while_alive(conn: apsw.Connection, run_id: str, occurrence_id: str) -> None:
    """No decision while anything of the run lives (DESIGN §8)."""
    alive = live(conn, occurrence_id)
    if alive:
        what = " and ".join(process.describe() for process in alive)
        raise Conflict(
            f"run {run_id} is still running: {what}; a decision now could let two copies run "
            f"at once. Stop it first with: coven stop {run_id} --reason TEXT"
        )


@dataclass(frozen=True)
class StopTarget:
    run_id: str
    occurrence_id: str
    routine_id: str
    processes: tuple[LiveProcess, ...]
    grace: float  # the routine's stop grace, in seconds

    def to_json(self) -> dict[str, object]:
        return {"run_id": self.run_id,
                "processes": [{"role": p.role, "pid": p.pid, "attempt": p.attempt}
                              for p in self.processes]}  # fmt: skip


def request(conn: apsw.Connection, run_id: str, reason: str | None, now: datetime) -> StopTarget:
    """Record the stop on each attempt that still has a live process (inside the operator's
    transaction); refused when nothing of the run runs."""
    row = conn.execute(
        "SELECT o.id, o.routine_id, v.stop_grace_seconds FROM occurrences o JOIN revisions v "
        "ON v.routine_id = o.routine_id AND v.number = o.revision WHERE o.run_id = ?",
        (run_id,),
    ).fetchone()
    if row is None:
        raise ValidationError(_("no run {run!r} (see: coven attention)").format(run=run_id))
    occurrence_id, routine_id, grace = row
    alive = live(conn, occurrence_id)
    if not alive:
        raise Conflict(
            _("nothing of run {run} is running: there is nothing to stop").format(run=run_id)
        )
    for attempt_id in dict.fromkeys(process.attempt_id for process in alive):
        conn.execute(
            "UPDATE attempts SET cancel_requested_at = ?, cancel_by = ?, cancel_scope = 'stop', "
            "cancel_reason = ? WHERE id = ? AND cancel_requested_at IS NULL",
            (instant_text(now), operator_name(), reason, attempt_id),
        )
    events.record(
        conn, now, EventKind.CANCEL_REQUESTED, routine_id=routine_id, occurrence_id=occurrence_id,
        run_id=run_id, by=operator_name(), reason=reason, scope="stop",
    )  # fmt: skip
    return StopTarget(run_id, occurrence_id, routine_id, tuple(alive), float(grace))


@dataclass(frozen=True)
class Stopped:
    run_id: str
    confirmed: bool
    result: str  # what was done, in words, as recorded on the attempt

    def to_json(self) -> dict[str, object]:
        return {"run_id": self.run_id, "confirmed": self.confirmed, "result": self.result}


def perform(target: StopTarget) -> Stopped:
    """Signal what still runs (holding no transaction) and wait, bounded, for it to end."""
    done = []
    for process in target.processes:
        if not process.alive():  # it lived at the request: a live scheduler's cancel, or its end
            done.append(f"{process.role} {process.pid} ended after the stop was requested")
        elif process.role == "runner":
            done.append(_stop_runner(process, target.grace))
        else:
            done.append(_stop_group(process, target.grace))
    left = [p for p in target.processes if p.alive()]
    left += [p for p in target.processes if p.role == "command" and not _group_gone(p.pid)]
    if left:
        pids = ", ".join(str(p.pid) for p in dict.fromkeys(left))
        return Stopped(target.run_id, False, "; ".join(done) + f"; NOT confirmed: {pids} left")
    return Stopped(target.run_id, True, "; ".join(done) + "; all gone")


def _stop_runner(process: LiveProcess, grace: float) -> str:
    """As a cancel: the runner stops the command's group, polite then forced, journals it
    and is done with the attempt (a runner of its own exits; a pooled one goes on)."""
    if process.directory is not None:
        signal_cancel(process.pid, process.directory)
    else:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGUSR1)
    _wait_done(process, grace + KILL_CONFIRM_SECONDS + RUNNER_MARGIN)
    return f"runner {process.pid} asked to stop (SIGUSR1)"


def _stop_group(process: LiveProcess, grace: float) -> str:
    """A command whose runner is gone: its process group, SIGTERM then SIGKILL. A command is
    its group's leader; a process found by its tag may be one it started (DESIGN §8)."""
    group = group_of(process.pid)
    ended_by = end_group(group, grace)
    if ended_by is None:
        return f"command group {group} signalled (SIGTERM, SIGKILL)"
    return f"command group {group} stopped ({ended_by.name})"


def _wait_done(process: LiveProcess, seconds: float) -> None:
    """Until the runner has journaled the attempt's end, or is gone. A pooled runner lives on
    after it, so this looks (every 50 ms, bounded: a person waits on it) instead of waiting
    for an exit."""
    deadline = time.monotonic() + seconds
    while process.alive() and time.monotonic() < deadline:
        time.sleep(0.05)


def _group_gone(pgid: int) -> bool:
    return group_gone(pgid, leader_reaped=True)


def record(conn: apsw.Connection, target: StopTarget, stopped: Stopped, now: datetime) -> Stopped:
    """What the stop did, on each attempt it was for (the operator's second transaction)."""
    text = f"stopped by {operator_name()} at {instant_text(now)}: {stopped.result}"
    for attempt_id in dict.fromkeys(process.attempt_id for process in target.processes):
        conn.execute("UPDATE attempts SET stop_result = ? WHERE id = ?", (text, attempt_id))
    events.record(
        conn, now, EventKind.STOPPED, routine_id=target.routine_id,
        occurrence_id=target.occurrence_id, run_id=target.run_id, confirmed=stopped.confirmed,
        result=stopped.result,
    )  # fmt: skip
    return stopped
