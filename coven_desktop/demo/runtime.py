"""A runtime for the demo store: nothing is executed, but every attempt leaves what a real
runner leaves — an attempt directory with a journal (``runner_started``, ``intent``,
``spawned``, ``timeout``, ``exited``) and captured output — so the windows show real evidence.

Each attempt follows a :class:`Plan` chosen by the demo for its launch: exit with a status
after a while, run into the routine's timeout, or *hang* (the journal stops after ``spawned``:
when the "runner" is later found gone, the outcome is ambiguous, as it would be for real).
Ends are due at a virtual instant; the demo's driver moves its clock there.

While the pictures are drawn, :class:`PictureRuntime` ends every command at once but keeps the
one the pictures show running.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from coven_core.clock import Clock, WakeReason, WakeSignal
from coven_core.runner.journal import read_journal
from coven_core.runtime.base import Exit, Launch, Started, Unfinished, as_recorded
from coven_core.runtime.instant import InstantRuntime
from coven_core.runtime.runner import JOURNAL, exit_from_journal

#: Pids no process on this machine has with these start times: the demo's runners are
#: provably not running, as a person would find them after a crash.
_FIRST_PID = 31000


@dataclass(frozen=True)
class Plan:
    """What one attempt does."""

    takes: timedelta = timedelta(minutes=2)
    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""
    hang: bool = False  # never ends: the journal stops after ``spawned``


@dataclass
class _Running:
    launch: Launch
    plan: Plan
    directory: Path
    ends_at: datetime
    timed_out: bool


class DemoRuntime:
    def __init__(
        self, clock: Clock, wake: WakeSignal, root: Path, plan_for: Callable[[Launch], Plan]
    ) -> None:
        self._clock, self._wake, self._root, self._plan_for = clock, wake, root, plan_for
        self._running: dict[str, _Running] = {}
        self._exits: list[Exit] = []
        self._next_pid = _FIRST_PID

    # -- starting ---------------------------------------------------------------------------
    def start(self, launch: Launch) -> Started:
        plan, now = self._plan_for(launch), self._clock.now_utc()
        directory = self._root / launch.attempt_id
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        runner_pid, command_pid = self._pids()
        started = now.timestamp()
        self._journal(
            directory,
            now,
            "runner_started",
            runner_pid=runner_pid,
            runner_start=started,
            boot_id="demo-boot",
        )
        self._journal(directory, now, "intent")
        self._journal(directory, now, "spawned", pid=command_pid, pid_start=started + 0.002)
        _write_private(directory / "stdout", plan.stdout)
        _write_private(directory / "stderr", plan.stderr)
        if not plan.hang:
            timeout = launch.timeout
            timed_out = timeout is not None and plan.takes > timeout
            ends = now + (timeout if timed_out and timeout is not None else plan.takes)
            self._running[launch.attempt_id] = _Running(launch, plan, directory, ends, timed_out)
        return Started(runner_pid, started, str(directory))

    def _pids(self) -> tuple[int, int]:
        self._next_pid += 2
        return self._next_pid, self._next_pid + 1

    @staticmethod
    def _journal(directory: Path, at: datetime, event: str, **fields: object) -> None:
        line = json.dumps(
            {"event": event, "at": at.isoformat(timespec="microseconds"), **fields},
            separators=(",", ":"),
        )
        _write_private(directory / JOURNAL, line + "\n", append=True)

    # -- ending -----------------------------------------------------------------------------
    def next_end(self) -> datetime | None:
        return min((run.ends_at for run in self._running.values()), default=None)

    def end_due(self) -> None:
        """End every attempt whose time has come (the demo's driver calls this)."""
        now = self._clock.now_utc()
        for attempt_id, run in list(self._running.items()):
            if run.ends_at <= now:
                del self._running[attempt_id]
                self._exits.append(self._end(attempt_id, run))
                self._wake.set(WakeReason.RUN_FINISHED)

    def _end(self, attempt_id: str, run: _Running) -> Exit:
        at, code = run.ends_at, (None if run.timed_out else run.plan.exit_code)
        if run.timed_out:
            self._journal(run.directory, at, "timeout")
        self._journal(
            run.directory,
            at,
            "exited",
            exit_code=code,
            signal=15 if run.timed_out else None,
            cancelled=False,
            timed_out=run.timed_out,
            stop_confirmed=True,
            stdout_bytes=len(run.plan.stdout.encode()),
            stderr_bytes=len(run.plan.stderr.encode()),
            stdout_truncated=False,
            stderr_truncated=False,
        )
        return Exit(attempt_id, at, code, 15 if run.timed_out else None, timed_out=run.timed_out)

    # -- the rest of the runtime contract ----------------------------------------------------
    def recover(self, attempt: Unfinished, now: datetime) -> Exit | None:
        """A later scheduler finds the runner gone: the journal decides, as for real."""
        directory = Path(attempt.attempt_dir or self._root / attempt.attempt_id)
        return exit_from_journal(attempt.attempt_id, read_journal(directory / JOURNAL), now)

    def locate(self, attempt: Unfinished) -> Unfinished:
        return as_recorded(attempt)

    def cancel(self, attempt_id: str) -> bool:
        return False

    def collect(self) -> list[Exit]:
        exits, self._exits = self._exits, []
        return exits

    def active(self) -> int:
        return len(self._running)

    def drain(self, timeout: float) -> None:
        return None


def _write_private(path: Path, text: str, *, append: bool = False) -> None:
    """0600 whatever the umask, as a runner writes them: the doctor checks every file."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    with os.fdopen(os.open(path, flags, 0o600), "w", encoding="utf-8") as file:
        file.write(text)


def private_root(data_dir: Path) -> Path:
    root = data_dir / "attempts"
    root.mkdir(mode=0o700, exist_ok=True)
    os.chmod(root, 0o700)
    return root


class PictureRuntime(InstantRuntime):
    """The pictures' runtime: nothing runs and every command ends the moment it starts, but
    one the demo asks to see running (by its program, :data:`HELD`) keeps running — with the
    attempt directory and first lines of output a runner would have left — until cancelled."""

    def __init__(self, clock: Clock, root: Path) -> None:
        super().__init__(clock)
        self._root = root
        self._held: set[str] = set()

    def start(self, launch: Launch) -> Started:
        plan = HELD.get(launch.argv[0] if launch.argv else "")
        if plan is None:
            return super().start(launch)
        directory = self._root / launch.attempt_id
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        _write_private(directory / "stdout", plan.stdout)
        _write_private(directory / "stderr", plan.stderr)
        self._held.add(launch.attempt_id)
        return Started(None, self._clock.now_utc().timestamp(), str(directory))

    def cancel(self, attempt_id: str) -> bool:
        if attempt_id not in self._held:
            return False
        self._held.discard(attempt_id)
        self._exits.append(Exit(attempt_id, self._clock.now_utc(), None, 15, cancelled=True))
        return True

    def active(self) -> int:
        return super().active() + len(self._held)


#: The programs the pictures show running, and what they have written so far.
HELD = {
    "/usr/bin/rsync": Plan(
        stdout="sending incremental file list\nDocuments/2026/taxes.pdf\n"
        "Documents/2026/invoices/march.ods\nDocuments/photos/2026-03-29/IMG_0457.JPG\n"
    ),
}
