"""A run nobody can know the outcome of, made the real way: its runner is killed while the
command runs, so the journal says the command was spawned and nothing after that."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import qasync

from coven_core.events import EventKind
from coven_core.runner.process import group_gone
from coven_core.views.inspection import inspect
from coven_desktop.desktop import Desktop
from tests.desktop.helpers import add, wait_for_event


@dataclass(frozen=True)
class Awaiting:
    run_id: str
    routine: str
    command_pid: int | None


def make_awaiting(desktop: Desktop, loop: qasync.QEventLoop, routine: str = "backup") -> Awaiting:
    add(desktop, loop, routine, "/bin/sh", "-c", "echo copying 1 of 3; exec sleep 60")
    asked = desktop.act(lambda e: e.operator.run_now(routine))  # the loop runs in the wait:
    wait_for_event(desktop, loop, lambda e: e.kind is EventKind.STARTED)  # listen first
    ref = loop.run_until_complete(asked)
    attempt = loop.run_until_complete(desktop.service.call(lambda e: inspect(e.store, ref.run_id)))[
        "attempts"
    ][0]
    directory = Path(attempt["attempt_dir"])
    loop.run_until_complete(_journaled(directory / "journal.jsonl", '"event":"spawned"'))
    # and its first line captured, the evidence the page shows: the runner copies output in
    # its waits, and one killed the moment it journaled the spawn may not have copied any yet
    loop.run_until_complete(_journaled(directory / "stdout", "copying 1 of 3"))
    os.kill(attempt["runner_pid"], signal.SIGKILL)  # the runner dies; its command does not
    settled = wait_for_event(desktop, loop, lambda e: e.kind is EventKind.SETTLED)
    assert settled.data["disposition"] == "recovery_required", settled.data
    loop.run_until_complete(desktop.refresh())
    after = loop.run_until_complete(desktop.service.call(lambda e: inspect(e.store, ref.run_id)))
    return Awaiting(ref.run_id, routine, after["attempts"][0].get("command_pid"))


async def _journaled(path: Path, text: str, timeout: float = 20.0) -> None:
    """Until the runner has written ``text`` to ``path``: the STARTED event comes when the
    runner starts, and its files are the only news of the spawn and the output that follow."""
    deadline = time.monotonic() + timeout
    while not path.exists() or text not in path.read_text(encoding="utf-8"):
        assert time.monotonic() < deadline, f"no {text!r} in {path}"
        await asyncio.sleep(0.02)  # real-time: a real runner process writes these files


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
