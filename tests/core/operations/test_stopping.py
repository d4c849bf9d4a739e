"""No decision while a command lives, and ``stop`` as the way out (issue #18, DESIGN §8).

The run awaiting a decision is made by a leader that died under virtual time; its runner or
command is then a real ``sleep`` in a session of its own (liveness is pid *and* start time,
so it must be a real process)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from coven_core.errors import Conflict
from coven_core.operations import stopping
from coven_core.operations.reconcile import Outcome
from coven_core.runner.process import start_time
from tests.core.conftest import T0, Engine, after_a_dead_leader


@pytest.fixture
def awaiting(tmp_path: Path, clock) -> Iterator[tuple[Engine, str]]:  # type: ignore[no-untyped-def]
    new, _ = after_a_dead_leader(tmp_path / "d", clock, "backup", stop_grace=timedelta(seconds=2))
    new.run_until(clock.now_utc())
    run_id = new.store.conn.execute("SELECT run_id FROM occurrences").fetchone()[0]
    yield new, run_id
    new.store.close()


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "60"], start_new_session=True)
    yield process
    process.kill()
    process.wait()


def _live_command(engine: Engine, process: subprocess.Popen[bytes], directory: Path) -> None:
    """The attempt's journal shows this process spawned as the command; its runner is gone."""
    directory.mkdir()
    record = {"event": "spawned", "at": T0.isoformat(), "pid": process.pid,
              "pid_start": start_time(process.pid)}  # fmt: skip
    (directory / "journal.jsonl").write_text(json.dumps(record) + "\n")
    engine.store.conn.execute(
        "UPDATE attempts SET attempt_dir = ?, command_pid = ?", (str(directory), process.pid)
    )


def test_a_decision_is_refused_while_the_command_lives_and_allowed_after_stop(
    awaiting: tuple[Engine, str], sleeper: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    engine, run_id = awaiting
    _live_command(engine, sleeper, tmp_path / "attempt")
    for outcome in (Outcome.SUCCEEDED, Outcome.FAILED, Outcome.RETRY):
        with pytest.raises(Conflict, match=rf"its command \(pid {sleeper.pid}, attempt 1\)"):
            engine.operator.reconcile(run_id, outcome, "done", verified_no_side_effect=True)
    stopped = engine.operator.stop(run_id, "it hangs")
    # the polite signal sufficed (its status is lost: the stop reaped it, the test's child)
    assert stopped.confirmed and f"command group {sleeper.pid} stopped (SIGTERM)" in stopped.result
    ((note, scope, reason),) = engine.store.conn.execute(
        "SELECT stop_result, cancel_scope, cancel_reason FROM attempts"
    )
    assert note.startswith("stopped by ") and (scope, reason) == ("stop", "it hangs")
    decision = engine.operator.reconcile(run_id, Outcome.FAILED, "it hung; stopped")
    assert decision.outcome is Outcome.FAILED
    audited = [row[0] for row in engine.store.conn.execute("SELECT action FROM audit_log")]
    assert audited[-6:] == ["reconcile.succeeded", "reconcile.failed", "reconcile.retry",
                            "stop", "stop.result", "reconcile.failed"]  # fmt: skip


def test_a_live_runner_is_asked_to_stop_as_a_cancel_asks_it(
    awaiting: tuple[Engine, str], sleeper: subprocess.Popen[bytes]
) -> None:
    engine, run_id = awaiting
    engine.store.conn.execute(
        "UPDATE attempts SET runner_pid = ?, runner_start = ?",
        (sleeper.pid, start_time(sleeper.pid)),
    )
    with pytest.raises(Conflict, match=rf"its runner \(pid {sleeper.pid}, attempt 1\)"):
        engine.operator.reconcile(run_id, Outcome.SUCCEEDED, "done")
    stopped = engine.operator.stop(run_id)
    assert stopped.confirmed and f"runner {sleeper.pid} asked to stop (SIGUSR1)" in stopped.result


def test_stop_with_nothing_running_is_refused(awaiting: tuple[Engine, str]) -> None:
    engine, run_id = awaiting
    with pytest.raises(Conflict, match=r"nothing of run .* is running"):
        engine.operator.stop(run_id)
    engine.operator.reconcile(run_id, Outcome.FAILED, "nothing runs: decide at once")


def test_a_process_that_ends_between_the_request_and_the_signal_is_not_said_to_have_ended_before(
    awaiting: tuple[Engine, str], sleeper: subprocess.Popen[bytes]
) -> None:
    """With a scheduler running, the recorded request wakes its cancel pass, which may stop
    the runner before ``stop`` signals it: the result must not read as if it ended alone."""
    engine, run_id = awaiting
    engine.store.conn.execute(
        "UPDATE attempts SET runner_pid = ?, runner_start = ?",
        (sleeper.pid, start_time(sleeper.pid)),
    )
    target = stopping.request(engine.store.conn, run_id, "it hangs", engine.clock.now_utc())
    sleeper.kill()  # as the live scheduler's cancel pass would, first
    sleeper.wait()
    stopped = stopping.perform(target)
    assert stopped.confirmed
    assert stopped.result == f"runner {sleeper.pid} ended after the stop was requested; all gone"


def test_a_runner_that_journaled_the_outcome_holds_no_decision_though_it_lives(
    awaiting: tuple[Engine, str], sleeper: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    """A pooled runner goes on to other attempts once it has journaled one's end (DESIGN §8):
    alive, it must not hold a decision on the run it finished, nor be stopped for it."""
    engine, run_id = awaiting
    directory = tmp_path / "attempt"
    directory.mkdir()
    exited = {"event": "exited", "at": T0.isoformat(), "exit_code": 1, "signal": None,
              "cancelled": False, "timed_out": False, "stop_confirmed": True,
              "stdout_bytes": 0, "stderr_bytes": 0, "stdout_truncated": False,
              "stderr_truncated": False}  # fmt: skip
    (directory / "journal.jsonl").write_text(json.dumps(exited) + "\n")
    engine.store.conn.execute(
        "UPDATE attempts SET attempt_dir = ?, runner_pid = ?, runner_start = ?",
        (str(directory), sleeper.pid, start_time(sleeper.pid)),
    )
    with pytest.raises(Conflict, match=r"nothing of run .* is running"):
        engine.operator.stop(run_id)
    assert sleeper.poll() is None  # not signalled: it is another attempt's runner now
    decision = engine.operator.reconcile(run_id, Outcome.FAILED, "it failed")
    assert decision.outcome is Outcome.FAILED
