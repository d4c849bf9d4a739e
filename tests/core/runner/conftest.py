"""Runner tests use real processes, and start the runner exactly as the engine does."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from coven_core.runner import process as proc
from coven_core.runner.journal import Journal, read_journal
from coven_core.runner.spec import JOURNAL_FILE, SPEC_FILE, RunnerSpec

#: A generous bound for a runner to finish a short command on a slow, busy machine.
DEADLINE = 30.0


def runner_argv(directory: Path) -> list[str]:
    return [sys.executable, "-m", "coven_core.runner", str(directory)]


def start_runner(directory: Path) -> subprocess.Popen[bytes]:
    devnull = subprocess.DEVNULL
    return subprocess.Popen(
        runner_argv(directory), start_new_session=True, stdin=devnull, stdout=devnull,
        stderr=devnull,
    )  # fmt: skip


def is_gone(pid: int) -> bool:
    """Gone, or a zombie (dead; some containers' init never reaps orphans)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_until(condition: Callable[[], bool], what: str, timeout: float = DEADLINE) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)  # real-time: waiting for another process


class Attempt:
    """One attempt directory, and the runners started on it."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.runners: list[subprocess.Popen[bytes]] = []

    def start(self, spec: RunnerSpec | None = None) -> subprocess.Popen[bytes]:
        if spec is not None:
            (self.directory / SPEC_FILE).write_text(spec.to_json(), encoding="utf-8")
        runner = start_runner(self.directory)
        self.runners.append(runner)
        return runner

    def run(self, spec: RunnerSpec | None) -> int:
        """Start a runner and wait for it; its exit status."""
        return self.start(spec).wait(timeout=DEADLINE)

    def journal(self) -> Journal:
        return read_journal(self.directory / JOURNAL_FILE)

    def events(self) -> list[str]:
        lines = (self.directory / JOURNAL_FILE).read_text(encoding="utf-8").splitlines()
        return [json.loads(line)["event"] for line in lines]

    def wait_for_event(self, event: str) -> None:
        path = self.directory / JOURNAL_FILE
        wait_until(lambda: path.exists() and event in self.events(), f"journal event {event}")

    def output(self, name: str) -> bytes:
        return (self.directory / name).read_bytes()

    def cleanup(self) -> None:
        """A failed test must not leave runners and their commands behind."""
        for runner in self.runners:
            if runner.poll() is None:
                runner.send_signal(signal.SIGTERM)  # the runner stops its command's group
                try:
                    runner.wait(timeout=DEADLINE)
                except subprocess.TimeoutExpired:
                    os.killpg(runner.pid, signal.SIGKILL)


@pytest.fixture
def attempt(tmp_path: Path) -> Iterator[Attempt]:
    directory = tmp_path / "attempt"
    directory.mkdir()
    attempt = Attempt(directory)
    yield attempt
    attempt.cleanup()


def command(*argv: str, **options: object) -> RunnerSpec:
    return RunnerSpec("attempt-1", argv, **options)  # type: ignore[arg-type]


def shell(script: str, **options: object) -> RunnerSpec:
    return RunnerSpec("attempt-1", (script,), shell=True, **options)  # type: ignore[arg-type]


def step_the_wall_clock(monkeypatch: pytest.MonkeyPatch, *, hours: float) -> None:
    """What Linux reports after the wall clock steps: the boot time, and every start time
    since the epoch derived from it, move by the step."""
    step = hours * 3600
    boot_time, create_time = proc._boot_time, psutil.Process.create_time
    monkeypatch.setattr(proc, "_boot_time", lambda: boot_time() + step)
    monkeypatch.setattr(psutil.Process, "create_time", lambda self: create_time(self) + step)
