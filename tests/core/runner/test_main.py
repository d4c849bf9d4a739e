"""The runner as the engine starts it: a real process, a real command, a real journal."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from coven_core.runner import process as proc
from coven_core.runner.spec import LOG_FILE, SPEC_FILE, STDERR_FILE, STDOUT_FILE
from tests.core.runner.conftest import (
    DEADLINE,
    Attempt,
    command,
    is_gone,
    runner_argv,
    shell,
    wait_until,
)

MiB = 1024 * 1024


def test_a_command_that_succeeds_is_journaled_in_order(attempt: Attempt) -> None:
    runner = attempt.start(command("/bin/true"))
    assert runner.wait(timeout=DEADLINE) == 0
    assert attempt.events() == ["runner_started", "intent", "spawned", "exited"]
    journal = attempt.journal()
    assert journal.runner_pid == runner.pid and journal.boot_id == proc.boot_id()
    assert journal.command_pid is not None and journal.command_start is not None
    assert journal.exit is not None and journal.exit.exit_code == 0
    assert (journal.exit.signal, journal.exit.cancelled, journal.exit.timed_out) == (
        None,
        False,
        False,
    )
    assert journal.exit.stop_confirmed and journal.problems == ()


def test_the_runner_start_mark_identifies_the_live_runner(attempt: Attempt) -> None:
    runner = attempt.start(command("/bin/sleep", "30"))
    attempt.wait_for_event("spawned")
    journal = attempt.journal()
    boot = journal.boot_id
    assert journal.runner_pid is not None and journal.runner_mark is not None
    assert boot == proc.boot_id() and journal.runner_start is not None  # for people
    assert proc.is_running(journal.runner_pid, journal.runner_mark, boot)
    assert journal.command_pid is not None and journal.command_mark is not None
    assert proc.is_running(journal.command_pid, journal.command_mark, boot)
    runner.send_signal(signal.SIGUSR1)
    assert runner.wait(timeout=DEADLINE) == 0
    assert not proc.is_running(journal.runner_pid, journal.runner_mark, boot)


def test_a_failing_command_still_ends_the_runner_well(attempt: Attempt) -> None:
    assert attempt.run(shell("exit 3")) == 0
    exit_record = attempt.journal().exit
    assert exit_record is not None and exit_record.exit_code == 3


def test_output_env_and_cwd_are_the_specs(attempt: Attempt, tmp_path: Path) -> None:
    script = 'echo "$COVEN_TEST_VALUE in $(pwd)"; echo oops >&2; test -n "$HOME"'
    spec = shell(script, cwd=str(tmp_path), env=(("COVEN_TEST_VALUE", "hello"),))
    assert attempt.run(spec) == 0
    assert attempt.output(STDOUT_FILE) == f"hello in {tmp_path}\n".encode()
    assert attempt.output(STDERR_FILE) == b"oops\n"
    exit_record = attempt.journal().exit
    assert exit_record is not None and exit_record.exit_code == 0  # HOME was inherited
    assert (exit_record.stdout_bytes, exit_record.stderr_bytes) == (
        len(f"hello in {tmp_path}\n"),
        5,
    )


def test_argv_is_never_a_shell_unless_asked(attempt: Attempt) -> None:
    assert attempt.run(command("/bin/echo", "$HOME; exit 9")) == 0
    assert attempt.output(STDOUT_FILE) == b"$HOME; exit 9\n"


def test_a_missing_executable_fails_after_the_intent(attempt: Attempt) -> None:
    """Only the spawn can tell that an executable is missing, so the intent comes first."""
    assert attempt.run(command("/nonexistent/coven-test-command")) == 0
    assert attempt.events() == ["runner_started", "intent", "spawn_failed"]
    journal = attempt.journal()
    assert journal.spawn_failure is not None and journal.spawn_failure.failure_class == "validation"
    assert journal.outcome_known


def test_a_missing_cwd_fails_before_the_intent(attempt: Attempt, tmp_path: Path) -> None:
    assert attempt.run(command("/bin/true", cwd=str(tmp_path / "missing"))) == 0
    assert attempt.events() == ["runner_started", "spawn_failed"]
    journal = attempt.journal()
    assert journal.spawn_failure is not None and journal.spawn_failure.failure_class == "validation"
    assert journal.never_started and journal.outcome_known


@pytest.mark.parametrize("spec_text", [None, "{not json", '{"attempt_id": "a1", "argv": []}'])
def test_a_bad_or_missing_spec_is_a_validation_failure(
    attempt: Attempt, spec_text: str | None
) -> None:
    if spec_text is not None:
        (attempt.directory / SPEC_FILE).write_text(spec_text, encoding="utf-8")
    assert attempt.run(None) == 2
    assert attempt.events() == ["runner_started", "spawn_failed"]
    journal = attempt.journal()
    assert journal.spawn_failure is not None and journal.spawn_failure.failure_class == "validation"


def test_a_missing_attempt_directory_is_a_usage_error(tmp_path: Path) -> None:
    result = subprocess.run(
        runner_argv(tmp_path / "missing"), capture_output=True, timeout=DEADLINE
    )
    assert result.returncode == 2 and b"usage" in result.stderr


def test_an_output_flood_is_capped_without_blocking_the_command(attempt: Attempt) -> None:
    flood = shell("head -c 50000000 /dev/zero; echo done >&2", output_cap_bytes=MiB)
    assert attempt.run(flood) == 0
    assert attempt.output(STDOUT_FILE) == bytes(MiB)
    assert attempt.output(STDERR_FILE) == b"done\n"
    exit_record = attempt.journal().exit
    assert exit_record is not None and exit_record.exit_code == 0
    assert (exit_record.stdout_bytes, exit_record.stdout_truncated) == (MiB, True)
    assert (exit_record.stderr_bytes, exit_record.stderr_truncated) == (5, False)


def test_a_timeout_stops_the_command(attempt: Attempt) -> None:
    began = time.monotonic()
    assert attempt.run(command("/bin/sleep", "30", timeout_seconds=0.3)) == 0
    assert time.monotonic() - began < 10
    assert attempt.events() == ["runner_started", "intent", "spawned", "timeout", "exited"]
    journal = attempt.journal()
    assert journal.timed_out_seen and journal.exit is not None
    assert (journal.exit.timed_out, journal.exit.cancelled) == (True, False)
    assert (journal.exit.exit_code, journal.exit.signal) == (None, signal.SIGTERM)
    assert journal.exit.stop_confirmed


def test_a_command_that_ignores_sigterm_is_killed_after_the_grace(attempt: Attempt) -> None:
    stubborn = shell("trap '' TERM; sleep 30", timeout_seconds=0.3, stop_grace_seconds=0.5)
    began = time.monotonic()
    assert attempt.run(stubborn) == 0
    assert 0.8 <= time.monotonic() - began < 15
    exit_record = attempt.journal().exit
    assert exit_record is not None and exit_record.timed_out
    assert exit_record.signal == signal.SIGKILL and exit_record.stop_confirmed


def test_output_is_still_copied_while_a_stopped_command_winds_down(attempt: Attempt) -> None:
    """What a command writes after the SIGTERM is read as it goes: a pipe left full would
    block it until the SIGKILL instead of letting it finish its own way."""
    farewell = "trap 'head -c 300000 /dev/zero; exit 3' TERM; while :; do sleep 0.05; done"
    assert attempt.run(shell(farewell, timeout_seconds=0.3, stop_grace_seconds=20)) == 0
    exit_record = attempt.journal().exit
    assert exit_record is not None and exit_record.timed_out and exit_record.stop_confirmed
    assert (exit_record.exit_code, exit_record.stdout_bytes) == (3, 300_000)


def test_a_cancel_stops_every_process_of_the_group(attempt: Attempt, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    script = f"sleep 30 & echo $! >> {pids}; sleep 30 & echo $! >> {pids}; wait"
    runner = attempt.start(shell(script))
    wait_until(lambda: pids.exists() and len(pids.read_text().split()) == 2, "both children")
    children = [int(pid) for pid in pids.read_text().split()]
    assert not any(is_gone(pid) for pid in children)
    runner.send_signal(signal.SIGUSR1)
    assert runner.wait(timeout=DEADLINE) == 0
    assert attempt.events()[-2:] == ["cancel_acknowledged", "exited"]
    journal = attempt.journal()
    assert journal.cancel_acknowledged and journal.exit is not None
    assert (journal.exit.cancelled, journal.exit.timed_out, journal.exit.stop_confirmed) == (
        True,
        False,
        True,
    )
    assert all(is_gone(pid) for pid in children)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_stopping_the_runner_stops_the_command_and_counts_as_cancelled(
    attempt: Attempt, signum: signal.Signals
) -> None:
    runner = attempt.start(command("/bin/sleep", "30"))
    attempt.wait_for_event("spawned")
    runner.send_signal(signum)
    assert runner.wait(timeout=DEADLINE) == 0
    journal = attempt.journal()
    assert journal.exit is not None and journal.exit.cancelled and journal.exit.stop_confirmed
    assert journal.command_pid is not None and is_gone(journal.command_pid)


def test_what_a_command_leaves_in_its_group_is_stopped_when_it_exits(
    attempt: Attempt, tmp_path: Path
) -> None:
    pid_file = tmp_path / "pid"
    assert attempt.run(shell(f"sleep 30 & echo $! > {pid_file}; exit 0")) == 0
    exit_record = attempt.journal().exit
    assert exit_record is not None and exit_record.exit_code == 0
    assert not exit_record.cancelled and exit_record.stop_confirmed
    assert is_gone(int(pid_file.read_text()))


def test_the_command_runs_exactly_once(attempt: Attempt, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    assert attempt.run(shell(f"echo ran >> {marker}")) == 0
    assert attempt.run(None) == 3  # a second runner for the same attempt refuses
    assert marker.read_text() == "ran\n"
    assert attempt.events() == ["runner_started", "intent", "spawned", "exited"]


def test_the_runner_outlives_the_process_that_started_it(attempt: Attempt, tmp_path: Path) -> None:
    marker, go = tmp_path / "marker", tmp_path / "go"
    wait_for_go = f"while [ ! -e {go} ]; do sleep 0.01; done; echo ran >> {marker}"
    (attempt.directory / SPEC_FILE).write_text(shell(wait_for_go).to_json(), encoding="utf-8")
    launcher = textwrap.dedent(f"""
        import subprocess, sys
        argv = {runner_argv(attempt.directory)!r}
        devnull = subprocess.DEVNULL
        runner = subprocess.Popen(argv, start_new_session=True, stdin=devnull, stdout=devnull, stderr=devnull)
        print(runner.pid)
    """)
    started = subprocess.run(
        [sys.executable, "-c", launcher], capture_output=True, timeout=DEADLINE
    )
    runner_pid = int(started.stdout)  # the launcher has exited; its runner is an orphan
    assert attempt.journal().exit is None
    go.touch()
    wait_until(lambda: attempt.journal().exit is not None, "the orphaned runner's exit")
    exit_record = attempt.journal().exit
    assert exit_record is not None and exit_record.exit_code == 0
    assert marker.read_text() == "ran\n"
    wait_until(lambda: is_gone(runner_pid), "the orphaned runner to end")


def test_a_cancel_before_the_intent_means_the_command_never_runs(
    attempt: Attempt, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    (attempt.directory / SPEC_FILE).write_text(shell(f"echo ran >> {marker}").to_json())
    script = textwrap.dedent("""
        import os, signal, sys
        from coven_core.runner import main
        runner = main.Runner(sys.argv[1])  # its signal handlers are in place from here on
        os.kill(os.getpid(), signal.SIGUSR1)
        sys.exit(runner.run())
    """)
    assert (
        subprocess.run(
            [sys.executable, "-c", script, str(attempt.directory)], timeout=DEADLINE
        ).returncode
        == 0
    )
    assert attempt.events() == ["runner_started", "cancel_acknowledged", "exited"]
    journal = attempt.journal()
    assert journal.never_started and journal.exit is not None and journal.exit.cancelled
    assert not marker.exists()


def test_a_runner_failure_is_logged_and_leaves_no_command_behind(attempt: Attempt) -> None:
    (attempt.directory / SPEC_FILE).write_text(command("/bin/sleep", "30").to_json())
    script = textwrap.dedent("""
        import sys
        from coven_core.runner import main
        def broken(self, *arguments):
            raise RuntimeError("runner bug")
        main.Runner._await = broken
        sys.exit(main.main(sys.argv[1:]))
    """)
    result = subprocess.run(
        [sys.executable, "-c", script, str(attempt.directory)], timeout=DEADLINE
    )
    assert result.returncode == 1
    log = (attempt.directory / LOG_FILE).read_text(encoding="utf-8")
    assert "RuntimeError: runner bug" in log
    journal = attempt.journal()
    assert journal.intent and not journal.outcome_known  # the engine's "ambiguous"
    assert journal.command_pid is not None and is_gone(journal.command_pid)


FORBIDDEN = ("apsw", "babel", "dateutil", "PySide6", "qasync", "coven_core.engine")


def test_the_runner_imports_only_the_standard_library_until_it_needs_psutil() -> None:
    report = "import json, sys; print(json.dumps(sorted(sys.modules)))"
    before = json.loads(subprocess.check_output([sys.executable, "-c", report]))
    loaded = json.loads(
        subprocess.check_output([sys.executable, "-c", f"import coven_core.runner.main; {report}"])
    )
    new = {name.split(".")[0] for name in set(loaded) - set(before)}
    assert new <= set(sys.stdlib_module_names) | {"coven_core"}  # psutil only when needed
    assert not [name for name in loaded if name.startswith(FORBIDDEN)]
    ours = {name for name in loaded if name.startswith("coven_core.")}
    assert all(
        name.startswith("coven_core.runner")
        or name in ("coven_core.system", "coven_core.system.failpoints")
        for name in ours
    )


def test_the_fork_servers_image_leaves_out_subprocess_and_threading() -> None:
    """Each forked runner runs the after-fork hook of every module loaded: threading's (which
    subprocess loads) cost about 1 ms of CPU per runner. Only the Popen fallback needs it."""
    report = "import json, sys; print(json.dumps(sorted(sys.modules)))"
    before = json.loads(subprocess.check_output([sys.executable, "-c", report]))
    loaded = json.loads(subprocess.check_output(
        [sys.executable, "-c", f"import coven_core.runner.server; {report}"]
    ))  # fmt: skip
    assert not {"subprocess", "threading"} & (set(loaded) - set(before))
