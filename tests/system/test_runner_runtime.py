"""The runner and its journal with the real daemon: outcomes, faults and adoption (issue #4).

Each command appends to a marker file: the witness of how many times it really ran.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from coven_core.system import failpoints
from tests.system.conftest import Harness, wait_for


def _marker_lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def test_success_is_settled_and_its_output_delivered(harness: Harness, tmp_path: Path) -> None:
    rid = harness.add("hello", ("sh", "-c", f"echo hello; echo ran >> {tmp_path}/m"))
    harness.start_daemon()
    assert wait_for(lambda: harness.query(
        "SELECT state FROM deliveries WHERE state = 'delivered'"))  # fmt: skip
    harness.stop_all()
    assert harness.disposition(rid) == "succeeded"
    ((path, size),) = harness.query("SELECT path, size FROM deliveries")
    assert Path(path).read_text() == "hello\n" and size == 6
    assert _marker_lines(tmp_path / "m") == ["ran"]


def test_missing_executable_and_cwd_are_validation_failures(harness: Harness, tmp_path) -> None:
    missing = harness.add("missing", ("/no/such/program",), retries=3)
    no_cwd = harness.add("nocwd", ("/bin/true",), cwd=str(tmp_path / "gone"), retries=3)
    harness.start_daemon()
    assert wait_for(lambda: harness.disposition(missing) and harness.disposition(no_cwd))
    harness.stop_all()
    rows = harness.query("SELECT number, failure_class FROM attempts ORDER BY occurrence_id")
    assert rows == [(1, "validation"), (1, "validation")]  # never retried


def test_timeout_stops_a_command_that_ignores_sigterm(harness: Harness, tmp_path: Path) -> None:
    from datetime import timedelta

    rid = harness.add(
        "stubborn", ("sh", "-c", f"trap '' TERM; echo start >> {tmp_path}/m; sleep 60"),
        timeout=timedelta(seconds=1), stop_grace=timedelta(seconds=0.5),
    )  # fmt: skip
    harness.start_daemon()
    assert wait_for(lambda: harness.disposition(rid))
    harness.stop_all()
    assert harness.disposition(rid) == "timed_out"
    assert _marker_lines(tmp_path / "m") == ["start"]


def test_cancel_stops_the_whole_group_including_children(harness: Harness, tmp_path) -> None:
    pids = tmp_path / "pids"
    script = f"sleep 60 & echo $! >> {pids}; sleep 60 & echo $! >> {pids}; wait"
    rid = harness.add("forker", ("sh", "-c", script))
    harness.start_daemon()
    assert wait_for(lambda: len(_marker_lines(pids)) == 2)
    ((run_id,),) = harness.query("SELECT run_id FROM occurrences WHERE routine_id = ?", (rid,))
    engine = harness.engine()
    engine.operator.cancel(run_id, "test")
    engine.close()
    assert wait_for(lambda: harness.disposition(rid))
    harness.stop_all()
    assert harness.disposition(rid) == "cancelled"
    for pid in map(int, _marker_lines(pids)):
        assert not _alive(pid)


def test_engine_killed_while_the_command_runs_is_adopted(harness: Harness, tmp_path) -> None:
    release = tmp_path / "release"
    script = f"echo ran >> {tmp_path}/m; while [ ! -e {release} ]; do sleep 0.05; done"
    rid = harness.add("long", ("sh", "-c", script))
    first = harness.start_daemon()
    assert wait_for(lambda: _marker_lines(tmp_path / "m"))
    harness.kill(first)
    harness.start_daemon()
    assert wait_for(lambda: harness.query("SELECT 1 FROM events WHERE kind = 'adopted'"))
    release.touch()
    assert wait_for(lambda: harness.disposition(rid))
    harness.stop_all()
    assert harness.disposition(rid) == "succeeded"
    assert _marker_lines(tmp_path / "m") == ["ran"]
    ((run_id,),) = harness.query("SELECT run_id FROM occurrences")
    shown = _coven(harness, "run", "show", run_id)
    assert "Adopted the still-running command after a restart" in shown.stdout, shown.stderr


def test_engine_and_runner_killed_is_ambiguous_never_rerun(harness: Harness, tmp_path) -> None:
    script = f"echo ran >> {tmp_path}/m; sleep 60"
    rid = harness.add("doomed", ("sh", "-c", script), retries=3)
    first = harness.start_daemon()
    assert wait_for(lambda: _marker_lines(tmp_path / "m"))
    ((runner_pid,),) = harness.query("SELECT runner_pid FROM attempts")
    harness.kill(first)
    os.kill(runner_pid, signal.SIGKILL)  # a machine crash would take both at once
    harness.start_daemon()
    assert wait_for(lambda: harness.disposition(rid))
    harness.stop_all()
    assert harness.disposition(rid) == "recovery_required"
    assert _marker_lines(tmp_path / "m") == ["ran"]  # retries=3, yet never run again


def _runner_killed_alone(harness: Harness, tmp_path: Path, then: str) -> str:
    """The command marks ``m`` and goes on with ``then``; its runner is killed (the command
    runs on); the daemon settles what it can and stops. Returns the routine's id."""
    rid = harness.add("victim", ("sh", "-c", f"echo ran >> {tmp_path}/m; {then}"))
    harness.start_daemon()
    assert wait_for(lambda: _marker_lines(tmp_path / "m"))
    # The command can write before its runner has journaled the spawn (a loaded machine):
    # killed then, the runner would leave no record of the command's pid to check.
    assert wait_for(lambda: _journaled(harness, "spawned"))
    ((runner_pid,),) = harness.query("SELECT runner_pid FROM attempts")
    os.kill(runner_pid, signal.SIGKILL)
    assert wait_for(lambda: harness.disposition(rid))
    harness.stop_all()
    return rid


def _journaled(harness: Harness, event: str) -> bool:
    """Whether the attempt's journal holds ``event`` (its directory, once the store has it)."""
    found = harness.query("SELECT attempt_dir FROM attempts WHERE attempt_dir IS NOT NULL")
    if not found:
        return False
    try:
        lines = (Path(found[0][0]) / "journal.jsonl").read_text().splitlines()
    except OSError:
        return False
    return any(json.loads(line).get("event") == event for line in lines if line.strip())


def test_runner_killed_alone_is_ambiguous(harness: Harness, tmp_path) -> None:
    rid = _runner_killed_alone(harness, tmp_path, "sleep 60")
    assert harness.disposition(rid) == "recovery_required"
    assert _marker_lines(tmp_path / "m") == ["ran"]


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _coven(harness: Harness, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "coven_core.testing", *args], env={**os.environ, **harness.env()},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_no_decision_while_the_command_lives_until_it_is_stopped(
    harness: Harness, tmp_path: Path
) -> None:
    """Issue #18: the runner died, its command runs on; a decision now could run it twice."""
    _runner_killed_alone(harness, tmp_path, "exec sleep 60")
    ((run_id,),) = harness.query("SELECT run_id FROM occurrences")
    item = json.loads(_coven(harness, "attention", "--json").stdout)["items"][0]
    command_pid = item["attempts"][0]["command_pid"]
    assert item["attempts"][0]["command_alive"] and _alive(command_pid)
    decide = ("reconcile", run_id, "--as", "retry", "--verified-no-side-effect", "--reason", "x")
    refused = _coven(harness, *decide)
    assert refused.returncode == 3 and f"its command (pid {command_pid}" in refused.stderr
    assert f"coven stop {run_id}" in refused.stderr and _alive(command_pid)
    stopped = _coven(harness, "stop", run_id, "--reason", "hung after its runner died")
    assert stopped.returncode == 0, stopped.stderr
    assert not _alive(command_pid)
    assert _coven(harness, *decide).returncode == 0
    assert _marker_lines(tmp_path / "m") == ["ran"]  # never two copies at once


def test_a_command_no_pid_names_still_blocks_a_decision_until_it_is_stopped(
    harness: Harness, tmp_path: Path
) -> None:
    """The runner died between the spawn and its record of it (crash point
    ``runner.spawn_unrecorded``): its journal names no command, yet the command runs on. It
    is found by its environment's tag, and no decision is taken until it is stopped."""
    rid = harness.add("victim", ("sh", "-c", f"echo ran >> {tmp_path}/m; exec sleep 60"))
    harness.start_daemon(env={failpoints.ENV: "runner.spawn_unrecorded:crash"})
    assert wait_for(lambda: harness.disposition(rid))
    harness.stop_all()
    assert harness.disposition(rid) == "recovery_required"
    assert wait_for(lambda: _marker_lines(tmp_path / "m"))
    ((run_id,),) = harness.query("SELECT run_id FROM occurrences")
    item = json.loads(_coven(harness, "attention", "--json").stdout)["items"][0]
    attempt = item["attempts"][0]
    assert not any(record["event"] == "spawned" for record in attempt["journal"])
    command_pid = attempt["command_pid"]
    assert attempt["command_alive"] and _alive(command_pid)
    decide = ("reconcile", run_id, "--as", "retry", "--verified-no-side-effect", "--reason", "x")
    refused = _coven(harness, *decide)
    assert refused.returncode == 3 and f"its command (pid {command_pid}" in refused.stderr
    stopped = _coven(harness, "stop", run_id, "--reason", "orphaned by its runner")
    assert stopped.returncode == 0, stopped.stderr
    assert not _alive(command_pid)
    assert _coven(harness, *decide).returncode == 0
    assert _marker_lines(tmp_path / "m") == ["ran"]  # never two copies at once


# -- an idempotent routine's command whose runner is gone ----------------------------------------
@pytest.fixture
def release(tmp_path: Path) -> Iterator[Path]:
    """A file whose existence ends a command that waits for it: made at the end of the test
    whatever happened, so that no command outlives it."""
    path = tmp_path / "release"
    yield path
    path.touch()


def _waiting_script(tmp_path: Path, release: Path) -> tuple[str, str, str]:
    return "sh", "-c", f"echo ran >> {tmp_path}/m; while [ ! -e {release} ]; do sleep 0.05; done"


_ATTEMPT = "SELECT a.state, o.state FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id"


def test_an_idempotent_retry_waits_for_the_command_its_runner_left(
    harness: Harness, tmp_path: Path, release: Path
) -> None:
    """The runner died, its command runs on: an automatic retry now would run two copies at
    once. The command is watched as a runner is: the attempt runs until the command ends, and
    only then is it settled, its retry planned."""
    harness.add("mirror", _waiting_script(tmp_path, release), idempotent=True, retries=1)
    harness.start_daemon()
    assert wait_for(lambda: _marker_lines(tmp_path / "m") and _journaled(harness, "spawned"))
    ((runner_pid, directory),) = harness.query("SELECT runner_pid, attempt_dir FROM attempts")
    lines = (Path(directory) / "journal.jsonl").read_text().splitlines()
    command = next(int(r["pid"]) for r in map(json.loads, lines) if r["event"] == "spawned")
    os.kill(runner_pid, signal.SIGKILL)
    assert not wait_for(lambda: harness.query(_ATTEMPT) != [("running", "running")], timeout=3)
    assert _alive(command)
    release.touch()
    assert wait_for(lambda: harness.query(_ATTEMPT) == [("settled", "planned")])
    harness.stop_all()
    ((failure, message),) = harness.query("SELECT failure_class, message FROM attempts")
    assert failure == "ambiguous" and "ran on" in message
    ((not_before,),) = harness.query("SELECT not_before FROM occurrences")
    assert not_before is not None and _marker_lines(tmp_path / "m") == ["ran"]


def test_an_idempotent_command_is_adopted_after_its_engine_and_runner_died(
    harness: Harness, tmp_path: Path, release: Path
) -> None:
    """After a restart too: the next engine adopts the command as it adopts a live runner,
    and the retry comes only once it has ended."""
    harness.add("mirror", _waiting_script(tmp_path, release), idempotent=True, retries=1)
    first = harness.start_daemon()
    assert wait_for(lambda: _marker_lines(tmp_path / "m") and _journaled(harness, "spawned"))
    ((runner_pid,),) = harness.query("SELECT runner_pid FROM attempts")
    harness.kill(first)
    os.kill(runner_pid, signal.SIGKILL)  # a machine crash would take the command too
    harness.start_daemon()
    assert wait_for(lambda: harness.query("SELECT 1 FROM events WHERE kind = 'adopted'"))
    assert not wait_for(lambda: harness.query(_ATTEMPT) != [("running", "running")], timeout=2)
    release.touch()
    assert wait_for(lambda: harness.query(_ATTEMPT) == [("settled", "planned")])
    harness.stop_all()
    assert _marker_lines(tmp_path / "m") == ["ran"]
