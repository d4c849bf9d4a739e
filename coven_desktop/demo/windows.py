"""The demo's extra pictures: states of a page beyond the one it opens in.

:data:`EXTRA_WINDOWS` maps a page's key (:data:`coven_desktop.windows.PAGES`) to pairs
``(name, make)``, where ``make(page)`` returns the widget to draw (or an awaitable of it) — a
dialog the page opened, the page after an action — drawn as ``<name>.png`` after every page
is drawn (an action may change the store). They live here, not in the page modules: the
product holds no demo hooks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QWidget

from coven_core.events import Event, EventKind
from coven_core.queries import runs
from coven_desktop.windows.explanation import open_explanation

if TYPE_CHECKING:
    from coven_desktop.desktop import Desktop

Make = Callable[[Any], QWidget | Awaitable[QWidget]]


async def _with_doctor(page: Any) -> QWidget:
    """The diagnostics page with the doctor's report."""
    await page.run_doctor()
    return page.window()  # type: ignore[no-any-return]


def _with_events(page: Any) -> QWidget:
    """The diagnostics page on the machine's time (its host events)."""
    page.tabs.setCurrentIndex(1)
    return page.window()  # type: ignore[no-any-return]


async def _decided(page: Any) -> QWidget:
    """The window right after a confirmed decision: the receipt, its audit entry, Resume."""
    from coven_desktop.demo.attention import decided  # it draws with render's helpers

    return await decided(page)


async def _inspector(page: Any) -> QWidget:
    """The inspector of an occurrence in view: one a DST rule decided, if there is one."""
    assert page.data is not None
    seen = [(lane.name, o) for lane in page.data.lanes for o in lane.recorded]
    name, chosen = next(((n, o) for n, o in seen if o.local_kind != "regular"), seen[-1])
    return await _loaded(page.inspect(name, chosen.id))


async def _explanation(page: Any) -> QWidget:
    """A routine's explanation: one in a zone with daylight saving, if there is one."""
    assert page.data is not None
    lanes = page.data.lanes
    chosen = next((lane for lane in lanes if lane.transitions), lanes[0])
    return await _loaded(open_explanation(page.desktop, chosen.name, parent=page))


#: The routine the pictures show running (its program is held by the demo's PictureRuntime).
RUNNING = "backup"


async def _running_routines(page: Any) -> QWidget:
    """The Routines page while backup runs: its elapsed time, and Cancel run… enabled."""
    await held_run(page.desktop)
    await page.reload()
    page.select(RUNNING)
    return page.window()  # type: ignore[no-any-return]


async def _one_routine(page: Any) -> QWidget:
    """The Runs page filtered to the running routine (as its Routines row's Runs opens it)."""
    await held_run(page.desktop)
    page.desktop.window.show_runs(RUNNING)
    await page.settle()
    return page.window()  # type: ignore[no-any-return]


async def _failed_run(page: Any) -> QWidget:
    """A failed run's detail: photo-import ran out of disk space, with both streams."""
    desktop = page.desktop
    rows = await desktop.service.call(lambda e: runs(e.store, "photo-import", 100))
    failed = next(row for row in rows if row.outcome == "failed")
    return await _run_window(desktop, failed.occurrence_id)


async def _timed_out_story(page: Any) -> QWidget:
    """A timed-out run's story: the attempt, its timeout and what Coven did, in sentences."""
    desktop = page.desktop
    rows = await desktop.service.call(lambda e: runs(e.store, "photo-import", 100))
    timed_out = next(row for row in rows if row.outcome == "timed_out")
    window: Any = await _run_window(desktop, timed_out.occurrence_id)
    window.tabs.setCurrentWidget(window.story)
    return window  # type: ignore[no-any-return]


async def _running_run(page: Any) -> QWidget:
    """A running run's detail: its elapsed time, the output so far, and Cancel."""
    return await _run_window(page.desktop, await held_run(page.desktop))


async def _run_window(desktop: Desktop, occurrence_id: str) -> QWidget:
    desktop.window.open_run(occurrence_id)
    return await _loaded(desktop.window.run_windows[occurrence_id])


async def held_run(desktop: Desktop) -> str:
    """Start the run the pictures show running (once), 3 minutes 12 seconds ago; its id."""
    ids = await desktop.service.call(lambda e: [
        row.occurrence_id for row in runs(e.store, RUNNING, 5) if row.outcome == "running"
    ])  # fmt: skip
    if ids:
        return ids[0]
    started: asyncio.Future[Event] = asyncio.get_running_loop().create_future()

    def look(events: list[Event]) -> None:
        if not started.done() and any(e.kind is EventKind.STARTED for e in events):
            started.set_result(events[0])

    desktop.service.eventsArrived.connect(look)
    try:
        ref = await desktop.service.call(lambda e: e.operator.run_now(RUNNING, key="pictures"))
        await asyncio.wait_for(started, 60)
    finally:
        desktop.service.eventsArrived.disconnect(look)
    desktop.clock.advance(timedelta(minutes=3, seconds=12))  # type: ignore[attr-defined]
    await desktop.refresh()
    return ref.occurrence_id


async def _editor(page: Any) -> QWidget:
    """The routine editor with the policies of a trial routine typed in (DESIGN §14)."""
    page.open_editor("verify-backup", "0 4 * * *", "/usr/local/bin/verify /mnt/backup")
    editor = page.editor
    editor.policies_toggle.setChecked(True)
    editor.except_dates.setText("2026-04-03, 2026-12-24")
    editor.shadow.setChecked(True)
    editor.max_runs.setValue(2)
    editor.cooldown.setText("30m")
    editor.group.setText("disk")
    editor.after.setText("backup")
    editor.on_ac_power.setChecked(True)
    editor.keep_awake.setChecked(True)
    await editor.check()
    bar = editor.fields.verticalScrollBar()
    bar.setValue(bar.maximum())  # the picture shows the policies
    return page.window()  # type: ignore[no-any-return]


async def _loaded(window: QWidget) -> QWidget:
    """The window once its own loading has finished (never a second, overlapping load)."""
    settle = getattr(window, "settle", None)
    if settle is not None:
        await settle()
    return window


EXTRA_WINDOWS: dict[str, tuple[tuple[str, Make], ...]] = {
    "routines": (("routines-running", _running_routines), ("routines-editor", _editor)),
    "runs": (
        ("runs-one-routine", _one_routine),
        ("run-detail-failed", _failed_run),
        ("run-detail-story", _timed_out_story),
        ("run-detail-running", _running_run),
    ),
    "diagnostics": (("diagnostics-events", _with_events), ("diagnostics-doctor", _with_doctor)),
    "reconciliation": (("reconciliation-decided", _decided),),
    "timeline": (("timeline-inspector", _inspector), ("explanation", _explanation)),
}
