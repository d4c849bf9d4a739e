"""The demo's extra pictures: states of a page beyond the one it opens in.

:data:`EXTRA_WINDOWS` maps a page's key (:data:`coven_desktop.windows.PAGES`) to pairs
``(name, make)``, where ``make(page)`` returns the widget to draw (or an awaitable of it) — a
dialog the page opened, the page after an action — drawn as ``<name>.png`` after every page
is drawn (an action may change the store). They live here, not in the page modules: the
product holds no demo hooks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from PySide6.QtWidgets import QWidget

from coven_core.operator import Outcome
from coven_desktop.windows.explanation import open_explanation

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
    """The window right after a decision: the result, its audit entry, and Resume."""
    page.reason.setText(page.tr("the digest was not sent: no mail in the outbox since 09:00"))
    page.decide(Outcome.FAILED)
    await page.settle()
    return page.window()  # type: ignore[no-any-return]


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
    await editor.check()
    return page.window()  # type: ignore[no-any-return]


async def _loaded(window: QWidget) -> QWidget:
    """The window once its own loading has finished (never a second, overlapping load)."""
    settle = getattr(window, "settle", None)
    if settle is not None:
        await settle()
    return window


EXTRA_WINDOWS: dict[str, tuple[tuple[str, Make], ...]] = {
    "diagnostics": (("diagnostics-events", _with_events), ("diagnostics-doctor", _with_doctor)),
    "reconciliation": (("reconciliation-decided", _decided),),
    "routines": (("routines-editor", _editor),),
    "timeline": (("timeline-inspector", _inspector), ("explanation", _explanation)),
}
