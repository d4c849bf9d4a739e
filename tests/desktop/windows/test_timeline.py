"""The Timeline window driven for real (issue #8): the wheel, the keys and a drag move the view,
hovering shows the occurrence, a click opens its inspector with the DST explanation."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import qasync
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QHelpEvent, QMouseEvent, QWheelEvent
from PySide6.QtWidgets import QApplication, QPushButton, QToolTip, QWidget
from pytestqt.qtbot import QtBot

from coven_core.views.timeline import Lane, PlannedMoment, RecordedOccurrence, Timeline
from coven_desktop.desktop import Desktop
from coven_desktop.windows.run_detail import RunDetailWindow
from coven_desktop.windows.timeline import Page
from coven_desktop.windows.timeline_canvas import (
    AXIS_HEIGHT,
    LANE_HEIGHT,
    MAX_SPAN,
    MIN_SPAN,
    TimelineCanvas,
    axis_label,
)
from coven_desktop.windows.timeline_colours import STATE_COLOURS as COLOURS
from coven_desktop.windows.timeline_geometry import CATEGORIES, LaneGeometry, Palette, Strip, View
from tests.desktop.windows.conftest import NOW


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
    ran = every5.recorded[0]
    assert ran.ran_from is not None and ran.ran_until is not None  # the run's bar, read
    assert ran.utc <= ran.ran_from <= ran.ran_until
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
    assert text.startswith("nightly · ")
    assert text.endswith(" · It was skipped (the time does not exist).")
    assert "2:30" in text  # the wall time in the routine's own zone
    assert (
        canvas.tooltip_at(QPointF(canvas.view().left + 1, AXIS_HEIGHT + 2 * LANE_HEIGHT + 5))
        is None
    )


def test_hovering_a_dst_change_or_a_sleep_says_what_it_was(page: Page) -> None:
    canvas = page.canvas
    change = point_of(canvas, "nightly", datetime(2026, 3, 8, 7, tzinfo=UTC))
    assert canvas.tooltip_at(QPointF(change)).replace("\u202f", " ") == (
        "On Sunday, March 8, 2026 clocks in New York jump forward from 2:00 AM to 3:00 AM."
    )
    asleep = point_of(canvas, "nightly", datetime(2026, 3, 8, 3, 30, tzinfo=UTC))
    assert canvas.tooltip_at(QPointF(asleep)).startswith("Computer asleep from Mar 8, 2026")


def test_a_click_opens_the_runs_detail_with_the_time_zone_tab_first_for_a_gap(
    page: Page, qtbot: QtBot, loop: qasync.QEventLoop
) -> None:
    with qtbot.waitSignal(page.inspectorOpened) as opened:
        qtbot.mouseClick(page.canvas, Qt.MouseButton.LeftButton,
                         pos=point_of(page.canvas, "nightly", GAP))  # fmt: skip
    window = opened.args[0]
    assert isinstance(window, RunDetailWindow)
    loop.run_until_complete(asyncio.wait_for(window.settle(), 20))
    assert window.isVisible() and not window.isModal()
    assert window.result is not None and window.result.detail.row.dst == "gap"
    assert window.tabs.currentWidget() is window.zone_tab  # a time-zone rule decided it
    assert "does not exist in New York" in window.zone_tab.sentence.text()
    assert window.sentence.text().startswith("Skipped: this wall time does not exist")
    window.close()


def test_a_click_on_an_ordinary_run_opens_its_detail_on_its_output(
    page: Page, qtbot: QtBot, loop: qasync.QEventLoop
) -> None:
    ran = next(o for o in page.canvas.lanes[0].lane.recorded if o.disposition == "succeeded")
    routine = page.canvas.lanes[0].lane.name
    page.canvas.set_view(ran.utc.timestamp() - 1800, 3600)
    with qtbot.waitSignal(page.inspectorOpened) as opened:
        qtbot.mouseClick(page.canvas, Qt.MouseButton.LeftButton,
                         pos=point_of(page.canvas, routine, ran.utc))  # fmt: skip
    window = opened.args[0]
    assert isinstance(window, RunDetailWindow) and window.identifier == ran.id
    loop.run_until_complete(asyncio.wait_for(window.settle(), 20))
    assert window.tabs.currentWidget() is window.output
    assert window.tabs.indexOf(window.zone_tab) == window.tabs.count() - 1  # last
    window.close()


def test_panning_past_what_was_read_reads_again(page: Page, loop: qasync.QEventLoop) -> None:
    canvas = page.canvas
    canvas.pan(3 * canvas.span)  # beyond the one-view margin on the right
    loop.run_until_complete(asyncio.wait_for(page.settle(), 20))
    assert page.data is not None
    assert page.data.start.timestamp() <= canvas.start
    assert canvas.start + canvas.span <= page.data.end.timestamp()


def lane_of(*marks: tuple[float, str]) -> LaneGeometry:
    """A row with one recorded occurrence per (POSIX seconds, disposition)."""
    recorded = tuple(occurrence(f"o{n}", at, kind) for n, (at, kind) in enumerate(marks))
    return LaneGeometry.of(Lane("r", "r", "UTC", "active", recorded, (), (), (), False))


def occurrence(oid: str, at: float, disposition: str) -> RecordedOccurrence:
    when = datetime.fromtimestamp(at, UTC)
    return RecordedOccurrence(oid, "scheduled", when, None, 0, "regular", "settled", disposition,
                              None)  # fmt: skip


PALETTE = Palette([(c.red(), c.green(), c.blue()) for c in (COLOURS[k] for k in CATEGORIES)])


def colour_at(strip: Strip, view: View, x: float) -> str:
    """The colour a view's pixel column shows, as #rrggbb ("transparent" where none)."""
    pixel = strip.image.pixelColor(int(strip.source(view).x() + x), 0)
    return pixel.name() if pixel.alpha() else "transparent"


def test_ten_thousand_marks_a_minute_apart_fill_the_row_at_a_wide_zoom() -> None:
    row = lane_of(*((n * 60.0, "succeeded") for n in range(10_000)))
    view = View(start=0.0, span=10_000 * 60.0, left=0.0, width=1000.0)
    strip = row.strip_for(view, PALETTE)
    green = COLOURS["succeeded"].name()
    assert [colour_at(strip, view, x) for x in (2, 250, 500, 997)] == [green] * 4
    assert strip.width < 2 * view.width  # the view and a margin, not every loaded mark


def test_sparse_marks_each_get_their_own_columns_and_the_rest_stays_clear() -> None:
    row = lane_of(*((n * 3600.0, "failed") for n in range(11)))
    view = View(start=0.0, span=36_000.0, left=0.0, width=1000.0)
    strip = row.strip_for(view, PALETTE)
    red = COLOURS["failed"].name()
    assert [colour_at(strip, view, x) for x in (99, 100, 101, 300)] == [red, red, red, red]
    assert [colour_at(strip, view, x) for x in (97, 103, 150, 250)] == ["transparent"] * 4


def test_in_a_shared_column_the_colour_that_needs_attention_shows() -> None:
    row = lane_of((1000.0, "failed"), (1001.0, "succeeded"), (5000.0, "succeeded"))
    view = View(start=0.0, span=100_000.0, left=0.0, width=1000.0)  # 100 s per pixel
    strip = row.strip_for(view, PALETTE)
    assert colour_at(strip, view, 10) == COLOURS["failed"].name()
    assert colour_at(strip, view, 50) == COLOURS["succeeded"].name()


def test_a_pan_inside_the_strip_reuses_it_and_a_zoom_renders_anew() -> None:
    row = lane_of(*((n * 60.0, "succeeded") for n in range(1_000)))
    view = View(start=0.0, span=60_000.0, left=0.0, width=1000.0)
    strip = row.strip_for(view, PALETTE)
    assert row.strip_for(View(600.0, 60_000.0, 0.0, 1000.0), PALETTE) is strip  # 10 px on
    assert row.strip_for(View(0.0, 30_000.0, 0.0, 1000.0), PALETTE) is not strip
    assert row.strip_for(View(59_000.0, 30_000.0, 0.0, 1000.0), PALETTE).start > strip.start


def test_keys_and_buttons_zoom_around_now(page: Page, qtbot: QtBot) -> None:
    canvas = page.canvas
    assert canvas.now is not None
    before = canvas.view().x(canvas.now)
    qtbot.keyClick(canvas, Qt.Key.Key_Plus)
    assert canvas.view().x(canvas.now) == pytest.approx(before, abs=1)
    zoom_out = next(b for b in page.findChildren(QPushButton) if b.text() == "Zoom out")
    zoom_out.click()
    assert canvas.view().x(canvas.now) == pytest.approx(before, abs=1)


def test_the_axis_writes_hours_as_the_locale_does() -> None:
    """12-hour where the locale's clock is (whatever space CLDR puts before PM), else 24."""
    tick = datetime(2026, 3, 30, 14, tzinfo=UTC).timestamp()
    english, german = (axis_label(tick, 3600, UTC, locale) for locale in ("en_US", "de_DE"))
    assert english.startswith("2:00") and english.endswith("PM")
    assert german == "14:00"


def test_a_trial_routine_is_a_hatched_lane_with_a_trial_chip(qtbot: QtBot) -> None:
    """Nothing in a trial's row starts a command: the row is hatched in the trial colour, its
    name carries a Trial chip, and its planned moments say they will only be decided."""
    noon = datetime(2026, 3, 1, 12, tzinfo=UTC)
    moment = PlannedMoment(noon, noon.replace(tzinfo=None), 0, "regular", False)
    lanes = tuple(Lane(name, name, "UTC", "active", (), (), (moment,), (), False, trial)
                  for name, trial in (("live", False), ("sync", True)))  # fmt: skip
    canvas = TimelineCanvas("en_US", UTC)
    qtbot.addWidget(canvas)
    canvas.resize(800, 120)
    canvas.set_timeline(Timeline(noon, noon + timedelta(days=1), noon, lanes, (), "test"))
    canvas.set_view(noon.timestamp() - 6 * 3600, 12 * 3600)
    image = canvas.grab().toImage()
    hatch = canvas.colours.trial.name()

    def hatched(row: int) -> int:  # trial-coloured pixels along the row, beside its marks
        y = round(AXIS_HEIGHT + row * LANE_HEIGHT + 4)
        return sum(image.pixelColor(x, y).name() == hatch for x in range(200, 400))

    assert hatched(0) == 0 and hatched(1) > 20
    chip = canvas._pens.trial_chip.name()
    label_y = round(AXIS_HEIGHT + LANE_HEIGHT * 1.5)
    assert any(image.pixelColor(x, label_y).name() == chip for x in range(60, 150))
    at = point_of(canvas, "sync", noon)
    said = canvas.tooltip_at(QPointF(at))
    assert said is not None and said.startswith("sync · ")
    assert said.endswith(" · Planned as a trial: it will be decided, the command will not start.")


def test_a_running_run_is_a_bar_that_grows_with_the_clock() -> None:
    """Started at 10:00 and still going: a bar from its start to now, found under the pointer
    anywhere along it, reaching further each time the clock moves on."""
    ten = datetime(2026, 3, 1, 10, tzinfo=UTC).timestamp()
    when = datetime.fromtimestamp(ten, UTC)
    running = RecordedOccurrence("o", "scheduled", when, None, 0, "regular", "running", None,
                                 None, ran_from=when)  # fmt: skip
    lane = LaneGeometry.of(Lane("r", "r", "UTC", "active", (running,), (), (), (), False),
                           now=ten + 3600)  # fmt: skip
    view = View(ten - 3600, 4 * 3600, 0, 400)  # 09:00–13:00, 100 px an hour
    live = COLOURS["in_progress"].name()

    def colour(hours_after_ten: float) -> str:
        strip = lane.strip_for(view, PALETTE)
        return colour_at(strip, view, view.x(ten + hours_after_ten * 3600))

    assert [colour(h) for h in (0.5, 0.9, 1.5)] == [live, live, "transparent"]
    assert lane.nearest(ten + 1800, tolerance=60) is running
    assert lane.grow(ten + 2 * 3600)
    assert [colour(h) for h in (1.5, 2.5)] == [live, "transparent"]
    assert lane.nearest(ten + 5400, tolerance=60) is running


def test_the_clock_ticks_only_while_the_page_is_shown(
    page: Page, seeded_desktop: Desktop, loop: qasync.QEventLoop
) -> None:
    assert page.ticker.isActive()
    seeded_desktop.window.show_page("routines")
    loop.run_until_complete(seeded_desktop.window.settle())
    assert not page.ticker.isActive()  # a hidden page costs nothing
