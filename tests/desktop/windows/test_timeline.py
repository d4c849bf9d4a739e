"""The Timeline window driven for real (issue #8): the wheel, the keys and a drag move the view,
hovering shows the occurrence, a click opens its inspector with the DST explanation."""

from __future__ import annotations

import asyncio
from array import array
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import qasync
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QHelpEvent, QMouseEvent, QWheelEvent
from PySide6.QtWidgets import QApplication, QToolTip, QWidget
from pytestqt.qtbot import QtBot

from coven_desktop.desktop import Desktop
from coven_desktop.windows.timeline import Page
from coven_desktop.windows.timeline_canvas import (
    AXIS_HEIGHT,
    LANE_HEIGHT,
    MAX_SPAN,
    MIN_SPAN,
    TimelineCanvas,
)
from coven_desktop.windows.timeline_geometry import View, runs
from tests.desktop.windows.conftest import NOW, on_signal


@pytest.fixture
def page(seeded_desktop: Desktop, loop: qasync.QEventLoop) -> Iterator[Page]:
    seeded_desktop.window.resize(1200, 500)
    seeded_desktop.window.show_page("timeline")
    loop.run_until_complete(seeded_desktop.window.settle())
    shown = seeded_desktop.window.pages["timeline"]
    assert isinstance(shown, Page)
    yield shown


def point_of(canvas: TimelineCanvas, routine: str, when: datetime) -> QPoint:
    row = [lane.lane.name for lane in canvas.lanes].index(routine)
    x = canvas.view().x(when.timestamp())
    return QPoint(round(x), round(AXIS_HEIGHT + row * LANE_HEIGHT + LANE_HEIGHT / 2))


GAP = datetime(2026, 3, 8, 7, 30, tzinfo=UTC)  # 02:30 in New York does not exist that day


def test_one_lane_per_routine_with_its_history_and_its_future(page: Page) -> None:
    lanes = {lane.lane.name: lane for lane in page.canvas.lanes}
    assert sorted(lanes) == ["every5", "nightly"]
    every5 = lanes["every5"].lane
    assert [w.cause for w in every5.windows] == ["asleep"]
    assert every5.planned and every5.recorded[0].disposition == "succeeded"
    assert [t.is_gap for t in lanes["nightly"].lane.transitions] == [True]
    assert page.data is not None and [b.kind for b in page.data.bands] == ["asleep"]
    assert not page.canvas.grab().isNull()  # paints without a warning


def wheel(widget: QWidget, at: QPointF, dy: int = 0, dx: int = 0, shift: bool = False) -> None:
    modifiers = Qt.KeyboardModifier.ShiftModifier if shift else Qt.KeyboardModifier.NoModifier
    event = QWheelEvent(at, widget.mapToGlobal(at), QPoint(), QPoint(dx, dy),
                        Qt.MouseButton.NoButton, modifiers, Qt.ScrollPhase.NoScrollPhase,
                        False)  # fmt: skip
    QApplication.sendEvent(widget, event)


def test_the_wheel_zooms_around_the_pointer_and_shift_wheel_pans(page: Page) -> None:
    canvas = page.canvas
    at = QPointF(canvas.view().left + 300, 50)
    under = canvas.view().instant(at.x())
    span = canvas.span
    wheel(canvas, at, dy=120)
    assert canvas.span < span
    assert canvas.view().instant(at.x()) == pytest.approx(under, abs=1)
    wheel(canvas, at, dy=-240)
    assert canvas.span > span
    start = canvas.start
    wheel(canvas, at, dy=-120, shift=True)
    assert canvas.start > start and canvas.span > span
    for _ in range(40):
        wheel(canvas, at, dy=120)
    assert canvas.span == MIN_SPAN  # no closer than an hour


def test_keys_zoom_and_pan_and_home_returns_to_now(page: Page, qtbot: QtBot) -> None:
    canvas = page.canvas
    span, start = canvas.span, canvas.start
    qtbot.keyClick(canvas, Qt.Key.Key_Plus)
    assert canvas.span < span
    qtbot.keyClick(canvas, Qt.Key.Key_Minus)
    qtbot.keyClick(canvas, Qt.Key.Key_Minus)
    assert canvas.span > span
    start = canvas.start
    qtbot.keyClick(canvas, Qt.Key.Key_Right)
    assert canvas.start == pytest.approx(start + 0.1 * canvas.span)
    qtbot.keyClick(canvas, Qt.Key.Key_Left)
    qtbot.keyClick(canvas, Qt.Key.Key_Left)
    assert canvas.start < start
    qtbot.keyClick(canvas, Qt.Key.Key_Home)
    assert canvas.start + canvas.span / 2 == pytest.approx(NOW.timestamp())
    for _ in range(40):
        qtbot.keyClick(canvas, Qt.Key.Key_Minus)
    assert canvas.span == MAX_SPAN  # no wider than a month


def test_a_drag_pans_and_is_not_a_click(page: Page, qtbot: QtBot) -> None:
    canvas = page.canvas
    start, scale = canvas.start, canvas.view().scale
    press = point_of(canvas, "nightly", GAP)
    opened: list[object] = []
    page.inspectorOpened.connect(opened.append)
    qtbot.mousePress(canvas, Qt.MouseButton.LeftButton, pos=press)
    moved = QPointF(press.x() - 100, press.y())
    QApplication.sendEvent(canvas, QMouseEvent(
        QEvent.Type.MouseMove, moved, canvas.mapToGlobal(moved), Qt.MouseButton.NoButton,
        Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier))  # fmt: skip
    qtbot.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=moved.toPoint())
    assert canvas.start == pytest.approx(start + 100 / scale)
    assert opened == []


def test_hovering_an_occurrence_shows_it_in_a_tooltip(page: Page) -> None:
    canvas = page.canvas
    at = point_of(canvas, "nightly", GAP)
    QApplication.sendEvent(canvas, QHelpEvent(QEvent.Type.ToolTip, at, canvas.mapToGlobal(at)))
    text = QToolTip.text()
    assert text.startswith("nightly · ") and "skipped (nonexistent_local_time)" in text
    assert "2:30" in text  # the wall time in the routine's own zone
    assert (
        canvas.tooltip_at(QPointF(canvas.view().left + 1, AXIS_HEIGHT + 2 * LANE_HEIGHT + 5))
        is None
    )


def test_a_click_opens_the_inspector_with_its_explanation(
    page: Page, qtbot: QtBot, loop: qasync.QEventLoop
) -> None:
    with qtbot.waitSignal(page.inspectorOpened) as opened:
        qtbot.mouseClick(page.canvas, Qt.MouseButton.LeftButton,
                         pos=point_of(page.canvas, "nightly", GAP))  # fmt: skip
    window = opened.args[0]
    loop.run_until_complete(asyncio.wait_for(on_signal(loop, window.loaded), 20))
    assert window.isVisible() and not window.isModal()
    assert "does not exist in New York" in window.sentence.text()
    assert window.result.occurrence.inspection["occurrence"]["reason"] == "nonexistent_local_time"
    ids = [window.details.topLevelItem(0).child(i).text(1) for i in range(3)]
    assert window.result.occurrence.occurrence_id in ids


def test_panning_past_what_was_read_reads_again(page: Page, loop: qasync.QEventLoop) -> None:
    canvas = page.canvas
    canvas.pan(3 * canvas.span)  # beyond the one-view margin on the right
    loop.run_until_complete(asyncio.wait_for(page.settle(), 20))
    assert page.data is not None
    assert page.data.start.timestamp() <= canvas.start
    assert canvas.start + canvas.span <= page.data.end.timestamp()


def test_ten_thousand_marks_in_view_become_one_run_per_touching_stretch() -> None:
    minutes = array("d", (i * 60.0 for i in range(10_000)))
    month = View(start=0.0, span=10_000 * 60.0, left=150.0, width=1000.0)
    [run] = runs(minutes, month, 10.0, 16.0, 3.0)  # every mark touches the next
    assert run.left() == pytest.approx(150 - 1.5)
    assert run.right() == pytest.approx(month.x(minutes[-1]) + 1.5)
    sparse = array("d", (i * 3600.0 for i in range(10)))
    rects = runs(sparse, View(0.0, 36_000.0, 0.0, 1000.0), 0.0, 16.0, 3.0)
    assert [round(r.center().x()) for r in rects] == [i * 100 for i in range(10)]
    daily = array("d", (i * 86_400.0 for i in range(0, 60, 2)))  # a gap between each
    gappy = runs(daily, View(0.0, 60 * 86_400.0, 0.0, 600.0), 0.0, 16.0, 3.0)
    assert len(gappy) == 30
    assert runs(minutes, View(-10_000.0, 5_000.0, 0.0, 500.0), 0.0, 16.0, 3.0) == []
