"""Runtime chaos: real runners, the real scheduler, a virtual clock (issue #6; DESIGN §7, §8).

Journal records duplicated, late, cut short or corrupt; the attempt directory deleted while
the runner runs or after it ended; the wall clock jumping either way during a run. Each case
ends in the contract's disposition with a reason a person can read, and a marker file outside
the attempt directory counts how often the command really ran.

Commands wait for a gate file the test creates, so a test decides when a command ends. The
scheduler is driven pass by pass; the only real-time waits are for runner processes (bounded
and marked ``# real-time``): a runner's end arrives through the wake signal, as in production.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest

from coven_core.clock import VirtualClock, WakeReason, WakeSignal
from coven_core.model import RevisionSpec
from coven_core.operator import Operator
from coven_core.runner.process import is_running
from coven_core.runtime.runner import JOURNAL, RunnerRuntime
from coven_core.scheduling.lease import LEASE_TTL
from coven_core.scheduling.scheduler import Scheduler
from coven_core.store.store import Store
from tests.core.conftest import T0, minutes
from tests.core.simulation import audit_store

DEADLINE = 30.0  # seconds: a generous bound for a runner to start or end on a busy machine
#: Journals its run in $MARK, then waits for $GATE to exist and exits with the code in it.
SCRIPT = 'echo ran >> "$MARK"; while [ ! -e "$GATE" ]; do sleep 0.01; done; exit "$(cat "$GATE")"'


@dataclass
class Node:
    """What one engine process holds."""

    store: Store
    wake: WakeSignal
    runtime: RunnerRuntime
    scheduler: Scheduler
    operator: Operator


@dataclass
class Chaos:
    """An engine on a real runner runtime, which can crash and restart on the same store."""

    data: Path
    clock: VirtualClock
    node: Node = field(init=False)
    dead: list[Node] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.node = self.boot()

    def boot(self) -> Node:
        wake = WakeSignal()
        store = Store.open(self.data, self.clock.now_utc())
        runtime = RunnerRuntime(self.clock, wake, self.data / "attempts")
        scheduler = Scheduler(store, self.clock, runtime, wake)
        scheduler.sweeper.pause = None  # the loop's retention sweep: no real sleeps in a test
        return Node(store, wake, runtime, scheduler, Operator(store, self.clock, wake.set))

    # -- the test's levers ----------------------------------------------------------------
    def add(self, name: str, schedule: str, **options: object) -> str:
        env = (("GATE", str(self.gate)), ("MARK", str(self.mark)))
        spec = RevisionSpec(schedule, "UTC", ("/bin/sh", "-c", SCRIPT), env=env, **options)  # type: ignore[arg-type]
        return self.node.operator.add_routine(name, spec)

    @property
    def gate(self) -> Path:
        return self.data.parent / "gate"

    @property
    def mark(self) -> Path:
        return self.data.parent / "ran"

    def open_gate(self, code: int = 0) -> None:
        """Whole, at once: the command reads the gate the moment it exists, and an empty one
        (created, not yet written) made it ``exit ""``, status 2."""
        ready = self.gate.with_name("gate.tmp")
        ready.write_text(f"{code}\n")
        ready.replace(self.gate)

    def runs(self) -> int:
        """How often the command really started."""
        return len(self.mark.read_text().splitlines()) if self.mark.exists() else 0

    # -- driving the engine ---------------------------------------------------------------
    def pass_once(self, trigger: str = "deadline") -> None:
        self.node.wake.take()  # this pass handles whatever woke it so far
        report = self.node.scheduler.pass_once(trigger)
        assert report.error_class is None, report.error

    def at(self, instant: object) -> None:
        """Move to ``instant`` and run the pass due there."""
        self.clock.advance_to(instant)  # type: ignore[arg-type]
        self.pass_once()

    def settle_runs(self) -> None:
        """Wait until every runner this engine watches has ended — each end wakes the
        scheduler, and each wake runs a pass — then run one more pass to settle the last."""
        deadline = time.monotonic() + DEADLINE
        while self.node.runtime.active():
            wait_for_wake(self.node.wake, deadline - time.monotonic())
            reason = self.node.wake.take()
            self.pass_once(reason.value if reason else "run_finished")
        self.pass_once("run_finished")

    def crash(self) -> Node:
        """The engine dies: no shutdown, no drain; its runners go on (they outlive it)."""
        dead = self.node
        dead.scheduler.leader_lock.release()  # the kernel drops a dead process's flock
        dead.runtime.close()  # and closes its sockets: its pooled runners are let go
        dead.store.close()
        self.dead.append(dead)
        return dead

    def restart(self) -> None:
        """A new engine on the same store, once the dead one's lease has expired."""
        self.clock.advance(LEASE_TTL + timedelta(seconds=1))
        self.node = self.boot()
        self.pass_once("startup")

    def close(self) -> None:
        for node in (*self.dead, self.node):
            node.runtime.close()
        if self.node not in self.dead:
            self.node.store.close()

    # -- reading the outcome --------------------------------------------------------------
    def outcome(self, rid: str) -> list[tuple[str, str, str | None, str | None]]:
        rows = self.node.store.conn.execute(
            "SELECT substr(scheduled_utc, 12, 5), state, disposition, reason FROM occurrences "
            "WHERE routine_id = ? AND kind != 'coalesced' ORDER BY scheduled_utc",
            (rid,),
        )
        return [tuple(row) for row in rows]

    def attempt_dir(self, number: int = 1) -> Path:
        row = self.node.store.conn.execute(
            "SELECT attempt_dir FROM attempts WHERE number = ?", (number,)
        ).fetchone()
        return Path(row[0])

    def routine_state(self, rid: str) -> tuple[str, str | None]:
        row = self.node.store.conn.execute(
            "SELECT state, state_reason FROM routines WHERE id = ?", (rid,)
        ).fetchone()
        return row[0], row[1]

    def assert_invariants(self) -> None:
        assert audit_store(self.node.store, self.clock.now_utc()) == []


@pytest.fixture
def chaos(tmp_path: Path) -> Iterator[Chaos]:
    built = Chaos(tmp_path / "data", VirtualClock(T0))
    yield built
    built.open_gate()  # let any command still waiting end
    built.close()


# --- helpers on the journal -------------------------------------------------------------------


def wait_for_wake(wake: WakeSignal, timeout: float = DEADLINE) -> None:
    with wake.condition:  # real-time: a runner process ends on its own time
        assert wake.condition.wait_for(wake.is_set, timeout=max(0.0, timeout)), "no runner ended"


def wait_for_journal(directory: Path, event: str) -> None:
    path = directory / JOURNAL
    deadline = time.monotonic() + DEADLINE
    while not (path.exists() and f'"event":"{event}"' in path.read_text()):
        assert time.monotonic() < deadline, f"the runner never journaled {event}"
        time.sleep(0.01)  # real-time: waiting for another process to write its journal


def wait_until_gone(directory: Path) -> None:
    """The runner wrote its last record and ended (not adopted as still alive)."""
    record = json.loads((directory / JOURNAL).read_text().splitlines()[0])
    deadline = time.monotonic() + DEADLINE
    while is_running(record["runner_pid"], record["runner_start"]):
        assert time.monotonic() < deadline, "the runner did not end"
        time.sleep(0.01)  # real-time: waiting for another process to exit


def journal_lines(directory: Path) -> list[str]:
    return (directory / JOURNAL).read_text().splitlines(keepends=True)


def rewrite_journal(directory: Path, lines: list[str]) -> None:
    (directory / JOURNAL).write_text("".join(lines))


def line_of(lines: list[str], event: str) -> int:
    return next(i for i, line in enumerate(lines) if f'"event":"{event}"' in line)


def start_then_crash(chaos: Chaos, **options: object) -> tuple[str, Path]:
    """A routine's 13:00 run starts; the engine crashes while the command waits; the command
    then ends (exit 0) and its runner is gone before any engine looks again."""
    rid = chaos.add("r", "0 13 * * *", **options)
    chaos.pass_once("startup")
    chaos.at(T0 + minutes(60))
    directory = chaos.attempt_dir()
    wait_for_journal(directory, "spawned")
    chaos.crash()
    chaos.open_gate(0)
    wait_for_journal(directory, "exited")
    wait_until_gone(directory)
    return rid, directory


def run_any_retry(chaos: Chaos) -> None:
    """Past any retry's backoff: let a retry (if one was scheduled) start and end."""
    chaos.clock.advance(timedelta(minutes=10))
    chaos.pass_once()
    chaos.settle_runs()


AWAITS = "not retried: it may have run (the routine is not idempotent)"


# --- duplicate and late journal records -------------------------------------------------------


def test_a_duplicate_exited_record_counts_once_and_the_first_wins(chaos: Chaos) -> None:
    rid, directory = start_then_crash(chaos)
    lines = journal_lines(directory)
    forged = json.loads(lines[line_of(lines, "exited")]) | {"exit_code": 7}
    rewrite_journal(directory, [*lines, json.dumps(forged) + "\n"])
    chaos.restart()
    assert chaos.outcome(rid) == [("13:00", "settled", "succeeded", None)]
    assert chaos.runs() == 1
    chaos.assert_invariants()


def test_an_exited_record_after_settlement_changes_nothing(chaos: Chaos) -> None:
    rid = chaos.add("r", "0 13 * * *")
    chaos.pass_once("startup")
    chaos.open_gate(0)
    chaos.at(T0 + minutes(60))
    chaos.settle_runs()
    assert chaos.outcome(rid) == [("13:00", "settled", "succeeded", None)]
    directory = chaos.attempt_dir()
    late = {"event": "exited", "at": "2026-03-01T13:05:00.000000+00:00", "exit_code": 1,
            "signal": None, "cancelled": False, "timed_out": False, "stop_confirmed": True,
            "stdout_bytes": 0, "stderr_bytes": 0, "stdout_truncated": False,
            "stderr_truncated": False}  # fmt: skip
    rewrite_journal(directory, [*journal_lines(directory), json.dumps(late) + "\n"])
    chaos.crash()
    chaos.restart()  # a new leader recovers whatever is unfinished: nothing is
    assert chaos.outcome(rid) == [("13:00", "settled", "succeeded", None)]
    assert chaos.runs() == 1
    chaos.assert_invariants()


# --- a journal cut short or corrupt -----------------------------------------------------------


def test_a_journal_cut_mid_line_is_ambiguous_and_waits_for_a_person(chaos: Chaos) -> None:
    rid, directory = start_then_crash(chaos)
    lines = journal_lines(directory)
    cut = line_of(lines, "exited")
    rewrite_journal(directory, [*lines[:cut], lines[cut][: len(lines[cut]) // 2]])
    chaos.restart()
    ((at, state, disposition, reason),) = chaos.outcome(rid)
    assert (at, state, disposition) == ("13:00", "settled", "recovery_required")
    assert reason == (
        "ambiguous: the runner is gone and its journal shows no outcome "
        f"(line {cut + 1}: incomplete last line ignored); {AWAITS}"
    )
    state, why = chaos.routine_state(rid)
    assert state == "paused" and why is not None and "needs your decision" in why
    assert chaos.runs() == 1
    chaos.assert_invariants()


def test_an_idempotent_routine_is_retried_after_a_cut_journal(chaos: Chaos) -> None:
    rid, directory = start_then_crash(chaos, idempotent=True)
    lines = journal_lines(directory)
    cut = line_of(lines, "exited")
    rewrite_journal(directory, [*lines[:cut], lines[cut][:10]])
    chaos.restart()  # ambiguous, but idempotent: a second attempt is allowed (§8)
    chaos.clock.advance(timedelta(minutes=5))  # past the backoff
    chaos.pass_once()
    chaos.settle_runs()
    assert chaos.outcome(rid) == [("13:00", "settled", "succeeded", None)]
    assert chaos.runs() == 2
    chaos.assert_invariants()


def test_a_corrupt_exit_record_is_named_and_the_run_is_ambiguous(chaos: Chaos) -> None:
    rid, directory = start_then_crash(chaos)
    lines = journal_lines(directory)
    bad = line_of(lines, "exited")
    lines[bad] = '{"event":"exited","at":"2026-03-01T13:00:01+00:00","exit_code":"zero"}\n'
    rewrite_journal(directory, lines)
    chaos.restart()
    ((_, _, disposition, reason),) = chaos.outcome(rid)
    assert disposition == "recovery_required"
    assert reason is not None
    assert f"line {bad + 1}: malformed exited skipped" in reason and AWAITS in reason
    assert chaos.runs() == 1
    chaos.assert_invariants()


def test_a_corrupt_line_before_the_exit_does_not_hide_the_outcome(chaos: Chaos) -> None:
    rid, directory = start_then_crash(chaos)
    lines = journal_lines(directory)
    lines[line_of(lines, "spawned")] = "\x00\xff not json at all\n"
    rewrite_journal(directory, lines)
    chaos.restart()
    assert chaos.outcome(rid) == [("13:00", "settled", "succeeded", None)]
    assert chaos.runs() == 1


# --- the attempt directory deleted --------------------------------------------------------------


def test_the_attempt_directory_deleted_while_the_runner_runs_is_ambiguous(chaos: Chaos) -> None:
    rid = chaos.add("r", "0 13 * * *")
    chaos.pass_once("startup")
    chaos.at(T0 + minutes(60))
    directory = chaos.attempt_dir()
    wait_for_journal(directory, "spawned")
    shutil.rmtree(directory)
    chaos.open_gate(0)
    chaos.settle_runs()
    run_any_retry(chaos)
    ((_, _, disposition, reason),) = chaos.outcome(rid)
    assert (disposition, chaos.runs()) == ("recovery_required", 1), reason
    assert reason is not None and "journal" in reason  # its evidence is gone: a person decides


def test_the_attempt_directory_deleted_after_the_runner_ended_is_ambiguous(chaos: Chaos) -> None:
    rid, directory = start_then_crash(chaos)
    shutil.rmtree(directory)
    chaos.restart()
    run_any_retry(chaos)
    ((_, _, disposition, reason),) = chaos.outcome(rid)
    assert (disposition, chaos.runs()) == ("recovery_required", 1), reason
    assert reason is not None and "journal" in reason


def test_the_attempt_directory_deleted_after_settlement_changes_nothing(chaos: Chaos) -> None:
    rid = chaos.add("r", "0 13 * * *")
    chaos.pass_once("startup")
    chaos.open_gate(0)
    chaos.at(T0 + minutes(60))
    chaos.settle_runs()
    shutil.rmtree(chaos.attempt_dir())
    chaos.crash()
    chaos.restart()
    assert chaos.outcome(rid) == [("13:00", "settled", "succeeded", None)]
    assert chaos.runs() == 1
    chaos.assert_invariants()  # a missing directory of a settled attempt is no error


# --- the wall clock jumps during a run ---------------------------------------------------------


def test_a_forward_jump_during_a_run_neither_times_it_out_nor_runs_it_again(
    chaos: Chaos,
) -> None:
    rid = chaos.add("r", "*/10 * * * *", timeout=timedelta(hours=1))
    chaos.pass_once("startup")  # 12:00 starts
    wait_for_journal(chaos.attempt_dir(), "spawned")
    chaos.clock.jump_wall(timedelta(hours=3))
    chaos.node.wake.set(WakeReason.CLOCK_JUMPED)
    chaos.pass_once("clock_jumped")
    chaos.open_gate(0)
    chaos.settle_runs()
    outcome = chaos.outcome(rid)
    assert outcome[0] == ("12:00", "settled", "succeeded", None)  # 3 h of wall time is no timeout
    assert outcome[1:] == [("15:00", "settled", "skipped", "overlap")]
    window = chaos.node.store.conn.execute(
        "SELECT reason, cause, window_count, substr(window_first, 12, 5), "
        "substr(window_last, 12, 5) FROM occurrences WHERE kind = 'coalesced'"
    ).fetchall()
    assert window == [("missed", "clock_jump", 17, "12:10", "14:50")]
    assert chaos.runs() == 1
    chaos.assert_invariants()


def test_a_backward_jump_during_a_run_replans_nothing_and_runs_nothing_twice(
    chaos: Chaos,
) -> None:
    rid = chaos.add("r", "*/10 * * * *")
    chaos.pass_once("startup")  # 12:00 starts
    wait_for_journal(chaos.attempt_dir(), "spawned")
    chaos.clock.jump_wall(timedelta(hours=-3))  # 09:00
    chaos.pass_once("clock_jumped")
    chaos.open_gate(0)
    chaos.settle_runs()
    assert chaos.outcome(rid) == [("12:00", "settled", "succeeded", None)]
    moved = chaos.node.store.conn.execute(
        "SELECT json_extract(data, '$.seconds') FROM events WHERE kind = 'clock_jumped'"
    ).fetchall()
    assert moved == [(-3 * 3600.0,)]
    chaos.clock.advance(timedelta(hours=3))  # the wall clock is back at 12:00: nothing due
    chaos.pass_once()
    chaos.at(T0 + minutes(10))
    chaos.settle_runs()
    assert [row[:3] for row in chaos.outcome(rid)] == [
        ("12:00", "settled", "succeeded"), ("12:10", "settled", "succeeded"),
    ]  # fmt: skip
    assert chaos.runs() == 2
    chaos.assert_invariants()
