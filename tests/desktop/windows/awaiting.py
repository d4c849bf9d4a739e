"""A run nobody can know the outcome of, made the real way: its runner is killed while the
command runs, so the journal says the command was spawned and nothing after that (the demo's
scene makes it: :func:`coven_desktop.demo.attention.leave_awaiting`)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass

import qasync

from coven_core.runner.process import group_gone
from coven_core.views.inspection import inspect
from coven_desktop.demo.attention import leave_awaiting
from coven_desktop.desktop import Desktop


@dataclass(frozen=True)
class Awaiting:
    run_id: str
    routine: str
    command_pid: int | None


def make_awaiting(desktop: Desktop, loop: qasync.QEventLoop, routine: str = "backup") -> Awaiting:
    argv = ("/bin/sh", "-c", "echo copying 1 of 3; exec sleep 60")
    run_id = loop.run_until_complete(leave_awaiting(desktop, routine, argv))
    after = loop.run_until_complete(desktop.service.call(lambda e: inspect(e.store, run_id)))
    return Awaiting(run_id, routine, after["attempts"][0].get("command_pid"))


def stop_command(awaiting: Awaiting) -> None:
    """The command outlived its runner (as it would for real): end its process group, and
    wait until it is gone — a decision is refused while it lives, and on a loaded machine
    a killed process takes a moment to go."""
    if not awaiting.command_pid:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(awaiting.command_pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while not group_gone(awaiting.command_pid):
        assert time.monotonic() < deadline, f"process group {awaiting.command_pid} outlived SIGKILL"
        time.sleep(0.01)  # real-time: waiting on another process to die
