"""Runs made the real way for the run windows' tests: a real command, run now through the
operator, awaited on the engine's events (never a fixed wait); and its detail window opened."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import qasync

from coven_core.events import EventKind
from coven_core.queries import RunRow, run_detail, runs
from coven_core.runtime.runner import JOURNAL
from coven_desktop.demo.attention import journaled
from coven_desktop.desktop import Desktop
from coven_desktop.windows.run_detail import RunDetailWindow
from tests.desktop.helpers import add, wait_for_event


def run_once(desktop: Desktop, loop: qasync.QEventLoop, routine: str, *argv: str) -> str:
    """Add ``routine`` running ``argv``, run it now, wait until it has ended; its occurrence."""
    add(desktop, loop, routine, *argv)
    asked = desktop.act(lambda e: e.operator.run_now(routine))  # the loop runs in the wait:
    wait_for_event(desktop, loop, lambda e: e.kind is EventKind.SETTLED)  # listen first
    ref = loop.run_until_complete(asked)
    loop.run_until_complete(desktop.settle())
    return str(ref.occurrence_id)


def start(desktop: Desktop, loop: qasync.QEventLoop, routine: str, *argv: str) -> str:
    """Add ``routine`` running ``argv``, run it now, wait until its command runs; its
    occurrence. (The STARTED event comes when the runner starts; a cancel before the runner
    has journaled the spawn can leave the outcome unknown, so the tests wait for that.)"""
    add(desktop, loop, routine, *argv)
    asked = desktop.act(lambda e: e.operator.run_now(routine))
    wait_for_event(desktop, loop, lambda e: e.kind is EventKind.STARTED)
    ref = loop.run_until_complete(asked)
    detail = loop.run_until_complete(
        desktop.service.call(lambda e: run_detail(e.store, ref.occurrence_id))
    )
    assert detail.stdout.path is not None
    journal = Path(detail.stdout.path).parent / JOURNAL
    loop.run_until_complete(journaled(journal, '"event":"spawned"'))
    loop.run_until_complete(desktop.settle())
    return str(ref.occurrence_id)


def row_of(desktop: Desktop, loop: qasync.QEventLoop, occurrence_id: str) -> RunRow:
    """The run as the engine tells it now."""
    rows = loop.run_until_complete(desktop.service.call(lambda e: runs(e.store, limit=500)))
    return next(row for row in rows if row.occurrence_id == occurrence_id)


def open_detail(desktop: Desktop, loop: qasync.QEventLoop, occurrence_id: str) -> RunDetailWindow:
    """Open a run's detail as the app does, and wait until it has loaded (and marked seen)."""
    desktop.window.open_run(occurrence_id)
    window = desktop.window.run_windows[occurrence_id]
    assert isinstance(window, RunDetailWindow)
    quiet(loop, desktop, window)
    return window


def quiet(loop: qasync.QEventLoop, desktop: Desktop, widget: Any) -> None:
    """Until nothing is in flight: a window's or page's loads and the actions it started."""

    async def settle() -> None:
        for _ in range(2):  # an action's refresh may start one more load
            await desktop.window.settle()
            await desktop.settle()
            await widget.settle()
            await asyncio.sleep(0)

    loop.run_until_complete(settle())
