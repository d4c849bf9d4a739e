"""Pooled runners (``runner.pool``, ``runtime.pool``; DESIGN §8): one runner process takes
attempts one after another, and each attempt keeps every promise a runner of its own made."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from coven_core.clock import VirtualClock, WakeSignal
from coven_core.model import FailureClass
from coven_core.runner.process import group_gone, is_running
from coven_core.runtime.base import Launch, Unfinished
from coven_core.runtime.runner import JOURNAL, RunnerRuntime
from tests.core.runtime.test_runner_runtime import NOW, launch, next_exit

DEADLINE = 20.0


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[RunnerRuntime]:
    built = RunnerRuntime(VirtualClock(NOW), WakeSignal(), tmp_path / "attempts")
    yield built
    built.close()


def run(runtime: RunnerRuntime, attempt: str, *argv: str) -> tuple[int, int | None]:
    """Start ``argv`` as ``attempt`` and wait for its end: its runner's pid, its exit code."""
    started = runtime.start(launch(attempt, *argv))
    exit_ = next_exit(runtime, runtime._wake)
    assert exit_.attempt_id == attempt
    return started.pid, exit_.exit_code


def journal(runtime: RunnerRuntime, attempt: str) -> list[dict[str, object]]:
    path = runtime._root / attempt / JOURNAL
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def wait_for(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.01)  # real-time: another process journals or exits on its own time


def spawned(runtime: RunnerRuntime, attempt: str) -> bool:
    return any(record["event"] == "spawned" for record in journal(runtime, attempt))


def gone(pid: int) -> bool:
    return not os.path.exists(f"/proc/{pid}") or _zombie(pid)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_one_runner_runs_attempts_one_after_another_and_keeps_nothing_of_them(
    runtime: RunnerRuntime,
) -> None:
    first, code = run(runtime, "p0", "/bin/sh", "-c", "echo out; echo err >&2; exit 3")
    assert code == 3
    descriptors = len(os.listdir(f"/proc/{first}/fd"))
    for number in range(1, 20):
        assert run(runtime, f"p{number}", "/bin/sh", "-c", f"exit {number % 4}") == (
            first, number % 4
        )  # fmt: skip
    assert len(os.listdir(f"/proc/{first}/fd")) == descriptors  # no pipe or file left open
    assert {record["runner_pid"] for number in range(20)
            for record in journal(runtime, f"p{number}")[:1]} == {first}  # fmt: skip
    assert (runtime._root / "p0" / "stdout").read_text() == "out\n"


def test_a_late_cancel_stops_nothing_of_the_next_attempt(runtime: RunnerRuntime) -> None:
    """SIGUSR1 is the cancel of the attempt whose directory holds the cancel file: one that
    arrives after its attempt ended (here: sent by hand) must not stop the next."""
    runner, _ = run(runtime, "done", "/bin/true")
    runtime.start(launch("next", "/bin/sh", "-c", "sleep 0.5; exit 4"))
    wait_for(lambda: spawned(runtime, "next"), "the next command spawned")
    os.kill(runner, signal.SIGUSR1)  # a cancel of "done", late
    exit_ = next_exit(runtime, runtime._wake)
    assert (exit_.attempt_id, exit_.exit_code, exit_.cancelled) == ("next", 4, False)
    runtime.start(launch("stopped", "/bin/sleep", "30"))
    wait_for(lambda: spawned(runtime, "stopped"), "the command spawned")
    assert runtime.cancel("stopped")
    exit_ = next_exit(runtime, runtime._wake)
    assert exit_.classify() is FailureClass.CANCELLED and exit_.stop_confirmed
    assert exit_.describe() == "cancelled"  # the engine's own cancel says only that


def test_a_cancel_written_before_the_attempt_begins_is_taken(runtime: RunnerRuntime) -> None:
    """The runner may be busy ending the last attempt when the signal comes: the cancel file
    is read again as the attempt begins, so nothing runs."""
    for number in range(5):
        attempt = f"early{number}"
        runtime.start(launch(attempt, "/bin/sleep", "30"))
        assert runtime.cancel(attempt)
        assert next_exit(runtime, runtime._wake).classify() is FailureClass.CANCELLED


def test_an_engine_that_lets_go_leaves_the_attempt_to_finish_then_the_runner_exits(
    tmp_path: Path,
) -> None:
    """As when the app quits or dies: the runner journals the attempt in hand, then exits,
    and the next engine reads the outcome (or adopts the runner while it still runs)."""
    gate = tmp_path / "gate"
    old = RunnerRuntime(VirtualClock(NOW), WakeSignal(), tmp_path / "attempts")
    started = old.start(
        launch("held", "/bin/sh", "-c", f"while [ ! -e {gate} ]; do sleep 0.02; done")
    )
    wait_for(lambda: spawned(old, "held"), "the command spawned")
    old.close()
    new = RunnerRuntime(VirtualClock(NOW), WakeSignal(), tmp_path / "attempts")
    left = Unfinished("held", "running", started.attempt_dir, started.pid, started.process_start)
    assert new.recover(left, NOW) is None  # adopted: still running
    gate.touch()
    exit_ = next_exit(new, new._wake)
    assert (exit_.attempt_id, exit_.exit_code) == ("held", 0)
    wait_for(lambda: gone(started.pid), "the runner exited")
    new.close()


def test_an_idle_runner_is_let_go(tmp_path: Path) -> None:
    runtime = RunnerRuntime(VirtualClock(NOW), WakeSignal(), tmp_path / "attempts", pool_idle=0.1)
    runner, _ = run(runtime, "once", "/bin/true")
    wait_for(lambda: gone(runner), "the idle runner exited")
    again, code = run(runtime, "later", "/bin/true")  # a new runner, as the first was
    assert code == 0 and again != runner
    runtime.close()


def test_a_runner_killed_while_idle_is_replaced_and_its_next_attempt_runs(
    runtime: RunnerRuntime,
) -> None:
    runner, _ = run(runtime, "before", "/bin/true")
    os.kill(runner, signal.SIGKILL)
    wait_for(lambda: gone(runner), "the runner died")
    replaced, code = run(runtime, "after", "/bin/true")
    assert code == 0 and replaced != runner  # it ran nothing when it died: no failure


def test_a_runner_killed_mid_attempt_leaves_the_journal_to_decide(runtime: RunnerRuntime) -> None:
    started = runtime.start(launch("cut", "/bin/sleep", "30"))
    wait_for(lambda: spawned(runtime, "cut"), "the command spawned")
    command = int(journal(runtime, "cut")[-1]["pid"])  # type: ignore[call-overload]
    try:
        os.kill(started.pid, signal.SIGKILL)
        exit_ = next_exit(runtime, runtime._wake)
        assert exit_.classify() is FailureClass.AMBIGUOUS and exit_.command_pid == command
        assert is_running(command, float(journal(runtime, "cut")[-1]["pid_mark"]))  # type: ignore[arg-type]
    finally:
        os.killpg(command, signal.SIGKILL)
    assert run(runtime, "next", "/bin/true")[1] == 0  # the pool goes on without it


def test_an_idempotent_attempts_command_is_watched_once_its_runner_is_killed(
    runtime: RunnerRuntime,
) -> None:
    """Its retry may follow an ambiguous end: settled while the command runs on, the retry
    would run beside it. The attempt is not over until the command ends, and then no runner
    saw the exit."""
    started = runtime.start(launch("cut", "/bin/sleep", "30", idempotent=True))
    wait_for(lambda: spawned(runtime, "cut"), "the command spawned")
    command = int(journal(runtime, "cut")[-1]["pid"])  # type: ignore[call-overload]
    try:
        os.kill(started.pid, signal.SIGKILL)
        wait_for(lambda: runtime._watched["cut"].orphan, "the command watched")
        assert runtime.collect() == [] and runtime.active() == 1
    finally:
        os.killpg(command, signal.SIGKILL)
    exit_ = next_exit(runtime, runtime._wake)
    assert exit_.classify() is FailureClass.AMBIGUOUS and exit_.command_pid == command
    assert "the command ran on and has ended" in exit_.describe()
    assert run(runtime, "next", "/bin/true")[1] == 0  # the pool goes on without it


def test_what_a_watched_command_left_in_its_group_is_stopped_when_it_ends(
    runtime: RunnerRuntime,
) -> None:
    """As its runner would: the attempt is its process group, and nothing of it outlives it
    (a child left running beside the retry would be a second copy)."""
    argv = ("/bin/sh", "-c", "sleep 30 & sleep 0.5")  # the shell ends, its child would not
    started = runtime.start(launch("left", *argv, idempotent=True))
    wait_for(lambda: spawned(runtime, "left"), "the command spawned")
    command = int(journal(runtime, "left")[-1]["pid"])  # type: ignore[call-overload]
    os.kill(started.pid, signal.SIGKILL)
    exit_ = next_exit(runtime, runtime._wake)
    assert exit_.classify() is FailureClass.AMBIGUOUS and exit_.command_pid == command
    assert group_gone(command)  # its sleep 30 too, before the attempt was reported


def test_a_cancel_stops_the_group_of_a_command_its_runner_left(runtime: RunnerRuntime) -> None:
    """No runner to ask: the cancel stops the command's group itself (SIGTERM, and SIGKILL
    after the grace), and the attempt ends with it, cancelled, as a runner would say it."""
    started = runtime.start(launch("orphan", "/bin/sh", "-c", "sleep 30 & wait", idempotent=True))
    wait_for(lambda: spawned(runtime, "orphan"), "the command spawned")
    command = int(journal(runtime, "orphan")[-1]["pid"])  # type: ignore[call-overload]
    os.kill(started.pid, signal.SIGKILL)
    wait_for(lambda: runtime._watched.get("orphan", None) is not None
             and runtime._watched["orphan"].orphan, "the command watched")  # fmt: skip
    assert runtime.cancel("orphan")
    exit_ = next_exit(runtime, runtime._wake)
    assert exit_.classify() is FailureClass.CANCELLED and exit_.command_pid == command
    assert exit_.stop_confirmed and group_gone(command)  # the shell and its sleep (or zombies)


def test_the_timeout_of_a_command_its_runner_left_still_holds(runtime: RunnerRuntime) -> None:
    """The Runs page said of such a run: "no timeout applies". Its runner enforced it; with
    the runner gone, the runtime stops the command's group once the timeout has passed, and
    the attempt ends timed out, as a runner says it, rather than running on for ever."""
    argv = ("/bin/sh", "-c", "sleep 30 & wait")
    limit = timedelta(seconds=1)
    started = runtime.start(Launch("slow", "o", "r", argv, None, (), limit, idempotent=True))
    wait_for(lambda: spawned(runtime, "slow"), "the command spawned")
    command = int(journal(runtime, "slow")[-1]["pid"])  # type: ignore[call-overload]
    os.kill(started.pid, signal.SIGKILL)
    exit_ = next_exit(runtime, runtime._wake)
    assert exit_.classify() is FailureClass.TIMED_OUT and exit_.command_pid == command
    assert exit_.stop_confirmed and group_gone(command)  # the shell and its sleep
    assert exit_.describe() == "stopped after its timeout"


def test_a_stopped_runner_cancels_its_attempt_and_takes_no_other(runtime: RunnerRuntime) -> None:
    """SIGTERM to a pooled runner stops the runner itself, as it stopped a runner of its own:
    the attempt in hand is journaled as cancelled, and the next goes to another runner."""
    started = runtime.start(launch("term", "/bin/sleep", "30"))
    wait_for(lambda: spawned(runtime, "term"), "the command spawned")
    os.kill(started.pid, signal.SIGTERM)
    stopped = next_exit(runtime, runtime._wake)
    assert stopped.classify() is FailureClass.CANCELLED
    # nobody cancelled it through Coven (seen on X: "cancelled by a person" after a kill)
    assert stopped.describe() == "stopped from outside Coven (SIGTERM to its runner)"
    wait_for(lambda: gone(started.pid), "the stopped runner exited")
    assert run(runtime, "after", "/bin/true")[0] != started.pid


def test_a_pooled_attempt_gets_its_spec_over_the_socket_and_writes_it_nowhere(
    runtime: RunnerRuntime,
) -> None:
    """The scheduler's thread makes no file to start an attempt, and the routine's
    environment is kept in the runner's memory only."""
    argv = ("/bin/sh", "-c", 'test "$TOKEN" = s3cret')
    started = runtime.start(Launch("env", "o", "r", argv, None, (("TOKEN", "s3cret"),), None))
    assert next_exit(runtime, runtime._wake).exit_code == 0
    directory = Path(started.attempt_dir or "")
    # The command printed nothing: it has no output files (runner.process.OutputPumps).
    assert sorted(path.name for path in directory.iterdir()) == ["journal.jsonl"]
    assert not any(b"s3cret" in path.read_bytes() for path in directory.iterdir())


def test_a_directory_that_cannot_be_made_is_said_as_nothing_ran(runtime: RunnerRuntime) -> None:
    """The runner is the witness: without a directory it wrote no journal and ran nothing,
    so the attempt is a runtime failure retried within bounds, not an unknown outcome."""
    runtime._root.mkdir(parents=True, exist_ok=True)
    (runtime._root / "blocked").write_text("a file where the directory should be")
    runner = runtime.start(launch("blocked", "/bin/true")).pid
    exit_ = next_exit(runtime, runtime._wake)
    assert exit_.classify() is FailureClass.RUNTIME_UNAVAILABLE
    assert exit_.message is not None and exit_.message.startswith("cannot prepare ")
    assert run(runtime, "after", "/bin/true") == (runner, 0)  # the same runner goes on
