"""The command's processes, in-process: spawn errors, the output pump's cap, group stops."""

from __future__ import annotations

import os
import signal
import stat
import threading
import time
from pathlib import Path

import psutil
import pytest

from coven_core.runner import process as proc
from coven_core.runner.spec import RunnerSpec
from tests.core.runner.conftest import step_the_wall_clock, wait_until


def spec(*argv: str, **options: object) -> RunnerSpec:
    return RunnerSpec("a1", argv, **options)  # type: ignore[arg-type]


def test_a_missing_executable_is_a_validation_failure() -> None:
    with pytest.raises(proc.SpawnError) as raised:
        proc.spawn(spec("/nonexistent/coven-test-command"))
    assert raised.value.failure_class == "validation"


def test_a_file_that_is_not_executable_is_refused(tmp_path: Path) -> None:
    script = tmp_path / "script"
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    script.chmod(stat.S_IRUSR | stat.S_IWUSR)  # no execute bit for anyone, even root
    with pytest.raises(proc.SpawnError) as raised:
        proc.spawn(spec(str(script)))
    assert raised.value.failure_class == "refused"


def test_a_missing_or_non_directory_cwd_is_a_validation_failure(tmp_path: Path) -> None:
    (tmp_path / "file").touch()
    for cwd in (tmp_path / "missing", tmp_path / "file"):
        with pytest.raises(proc.SpawnError) as raised:
            proc.check_cwd(spec("/bin/true", cwd=str(cwd)))
        assert raised.value.failure_class == "validation"
    proc.check_cwd(spec("/bin/true", cwd=str(tmp_path)))


def test_the_command_leads_its_own_process_group() -> None:
    command = proc.spawn(spec("/bin/sleep", "30"))
    try:
        assert os.getpgid(command.pid) == command.pid != os.getpgrp()
    finally:
        assert proc.stop_group(command, grace=1.0)
    assert command.returncode == -signal.SIGTERM


@pytest.mark.parametrize("cwd", [None, "/"])  # posix_spawn, and Popen where a cwd is asked
def test_a_command_is_found_by_its_attempt_when_no_pid_names_it(cwd: str | None) -> None:
    """Its environment names its attempt, after the routine's own variables (which cannot
    hide it): what finds a command whose runner died before recording its pid."""
    routine_says = (("COVEN_ATTEMPT_ID", "someone else's"), ("KEPT", "yes"))
    command = proc.spawn(spec("/bin/sleep", "30", env=routine_says, cwd=cwd))
    try:
        environment = _after_exec(psutil.Process(command.pid), "/bin/sleep").environ()
        assert environment[proc.ATTEMPT_VARIABLE] == "a1" and environment["KEPT"] == "yes"
        found = proc.tagged("a1")
        assert list(found) == [command.pid]
        assert found[command.pid].mark == proc.start_mark(command.pid)
        assert proc.tagged("a2") == {}
    finally:
        assert proc.stop_group(command, grace=1.0)
    assert proc.tagged("a1") == {}  # gone (and reaped): nothing to find


def _after_exec(process: psutil.Process, program: str) -> psutil.Process:
    """``process`` once it runs ``program``: until its exec, a child just spawned still has
    its parent's environment (seen once in the suite: no COVEN_ATTEMPT_ID yet)."""
    deadline = time.monotonic() + 10
    while process.cmdline()[:1] != [program] and time.monotonic() < deadline:
        time.sleep(0.001)  # real-time: another process execs on its own time
    return process


def _status_mask(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1], 16)
    raise AssertionError(f"no {field} in /proc/{pid}/status")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_the_command_gets_sigpipe_back_and_none_of_our_descriptors() -> None:
    read, write = os.pipe()
    os.set_inheritable(write, True)  # one an exec would pass on, unless it is closed
    try:
        command = proc.spawn(spec("/bin/sleep", "30"))
        try:
            wait_until(lambda: os.readlink(f"/proc/{command.pid}/exe").endswith("sleep"),
                       "the exec")  # fmt: skip
            assert not _status_mask(command.pid, "SigIgn") & (1 << (signal.SIGPIPE - 1))
            # /bin/sleep's own start-up (its loader, its locale) opens and closes files of
            # its own for a moment; one of ours passed on would stay open
            wait_until(lambda: sorted(map(int, os.listdir(f"/proc/{command.pid}/fd"))) == [0, 1, 2],
                       "only stdin, stdout and stderr open in the command")  # fmt: skip
        finally:
            assert proc.stop_group(command, grace=1.0)
    finally:
        os.close(read)
        os.close(write)


def test_the_executable_is_searched_along_the_commands_own_path(tmp_path: Path) -> None:
    locked, runnable = tmp_path / "locked", tmp_path / "runnable"
    for folder in (locked, runnable):
        folder.mkdir()
        script = folder / "coven-test-tool"
        script.write_text("#!/bin/sh\nexit 7\n", encoding="utf-8")
    (runnable / "coven-test-tool").chmod(0o755)
    path = f"{tmp_path / 'missing'}:{runnable}"
    command = proc.spawn(spec("coven-test-tool", env=(("PATH", path),)))
    wait_until(lambda: command.poll() is not None, "the command to exit")
    assert command.returncode == 7
    with pytest.raises(proc.SpawnError) as raised:  # the first error other than "not there"
        proc.spawn(spec("coven-test-tool", env=(("PATH", f"{locked}:{tmp_path / 'x'}"),)))
    assert raised.value.failure_class == "refused"


def pump_through(data: bytes, cap: int, tmp_path: Path) -> tuple[proc.Capture, bytes | None]:
    """What the pump kept of ``data``, and the file it made (None: it made none)."""
    read, write = os.pipe()
    pumps = proc.OutputPumps([(read, str(tmp_path / "out"))], cap)
    writer = threading.Thread(target=lambda: (os.write(write, data), os.close(write)))
    writer.start()  # a pipe holds ~64 KiB: this only finishes if the pump keeps reading
    [capture] = pumps.finish(deadline=time.monotonic() + 30)
    writer.join(timeout=30)
    assert not writer.is_alive()
    pumps.close()
    os.close(read)
    out = tmp_path / "out"
    return capture, out.read_bytes() if out.is_file() else None


def test_output_beyond_the_cap_is_drained_and_discarded(tmp_path: Path) -> None:
    data = os.urandom(3 * 1024 * 1024)
    capture, kept = pump_through(data, 1024 * 1024, tmp_path)
    assert kept == data[: 1024 * 1024]
    assert capture == proc.Capture(1024 * 1024, truncated=True)


def test_output_within_the_cap_is_kept_whole(tmp_path: Path) -> None:
    capture, kept = pump_through(b"hello\n", 6, tmp_path)
    assert (kept, capture) == (b"hello\n", proc.Capture(6, truncated=False))
    assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == 0o600  # the output is private


def test_a_command_that_prints_nothing_leaves_no_file(tmp_path: Path) -> None:
    capture, kept = pump_through(b"", 1024, tmp_path)
    assert (kept, capture) == (None, proc.Capture(0, truncated=False))


def test_an_output_file_that_cannot_be_made_is_a_recorded_loss(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()  # the file's name is taken: opening it for writing fails
    capture, _ = pump_through(b"lost\n" * 100_000, 1024 * 1024, tmp_path)
    assert capture.kept_bytes == 0 and capture.truncated
    assert capture.error is not None and "directory" in capture.error.lower()


def test_is_running_checks_the_start_mark_not_just_the_pid() -> None:
    me, boot = os.getpid(), proc.boot_id()
    mark = proc.start_mark(me)
    assert proc.is_running(me, mark, boot)
    assert not proc.is_running(me, mark - 60, boot)  # same pid, another process
    assert proc.liveness(me, mark, "a-boot-that-is-over") is False


def test_a_start_time_from_before_marks_still_identifies_the_process() -> None:
    """Rows, tokens and journals written before marks hold psutil's start time."""
    me = os.getpid()
    started = proc.start_time(me)
    assert started == psutil.Process(me).create_time()
    assert proc.is_running(me, started)
    assert not proc.is_running(me, started - 3600)


def test_a_wall_clock_step_does_not_make_a_live_process_look_gone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Linux recomputes its boot time from the wall clock, so after a step (NTP, a VM paused
    and resumed) every start time since the epoch moves by the step: the soak saw a live lease
    holder taken for dead (issue #18). A mark since boot does not move."""
    command = proc.spawn(spec("/bin/sleep", "30"))
    try:
        mark, boot = proc.start_mark(command.pid), proc.boot_id()
        step_the_wall_clock(monkeypatch, hours=1)
        assert proc.is_running(command.pid, mark, boot)
        assert proc.start_mark(command.pid) == mark
        assert proc.liveness(command.pid, mark + 0.5, boot) is False  # a reused pid
    finally:
        proc.kill_group(command.pid)
        wait_until(lambda: command.poll() is not None, "the command to end")


def test_a_reaped_process_is_not_running() -> None:
    command = proc.spawn(spec("/bin/true"))
    started = proc.start_time(command.pid)
    mark = proc.start_mark(command.pid)
    assert started == psutil.Process(command.pid).create_time()  # psutil's value, exactly
    wait_until(lambda: command.poll() is not None, "the command to exit")
    assert not proc.is_running(command.pid, mark)
    assert proc.group_gone(command.pid)


def test_the_boot_id_is_this_boots() -> None:
    path = Path("/proc/sys/kernel/random/boot_id")
    expected = path.read_text(encoding="ascii").strip() if path.exists() else ""
    assert proc.boot_id() == expected
