"""The timeline's QPainter canvas: one row per routine, zoom and pan, hover and click.

Geometry is prepared when data arrives (:mod:`.timeline_geometry`); a paint only maps the
visible instants to pixels per colour with bisection (level of detail) and draws each colour's
rectangles in one ``drawRects`` call. Axis labels are cached per tick instant, so panning does
not format dates again.

Mouse: the wheel zooms around the pointer (with Shift, or a horizontal wheel, it pans); a drag
pans; a click on a mark or a coalesced window activates it. Keyboard: ``+``/``-`` zoom,
``←``/``→`` pan, ``Home`` centres on now.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, tzinfo
from functools import lru_cache

from babel.dates import format_datetime, format_skeleton, get_time_format
from PySide6.QtCore import QEvent, QPointF, QRect, QRectF, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QWheelEvent,
)
from PySide6.QtWidgets import QToolTip, QWidget

from coven_core import queries
from coven_core.queries import (
    BAND_ASLEEP,
    CoalescedWindow,
    PlannedMoment,
    RecordedOccurrence,
    Timeline,
    _,
    cause_text,
    change_sentence,
    outcome_sentence,
)
from coven_desktop.windows.chips import chip_colour, text_on
from coven_desktop.windows.timeline_colours import TimelineColours, timeline_colours
from coven_desktop.windows.timeline_geometry import (
    CATEGORIES,
    MARK_HEIGHT,
    MARK_WIDTH,
    LaneGeometry,
    Palette,
    View,
    span_rect,
)

HOUR, DAY = 3600.0, 86400.0
MIN_SPAN, MAX_SPAN = HOUR, 31 * DAY  # zoom: an hour to a month
ZOOM_STEP = 1.25
PAN_FRACTION = 0.1  # of the visible span, per arrow key
LABEL_WIDTH, AXIS_HEIGHT, LANE_HEIGHT = 150.0, 26.0, 30.0
DRAG_THRESHOLD = 4  # pixels the pointer must move before a press becomes a pan


#: Axis steps, in seconds: the first that leaves this many pixels between two labels wins.
_STEPS = (300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400)
_MIN_TICK_PIXELS = 90.0

Activated = RecordedOccurrence | PlannedMoment | CoalescedWindow


class TimelineCanvas(QWidget):
    viewChanged = Signal(float, float)  # start, end (POSIX seconds)
    #: routine name, occurrence id (None for a planned moment not yet in the store)
    activated = Signal(str, object)

    def __init__(self, locale: str, zone: tzinfo, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.locale_name, self.zone = locale, zone
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)
        self.setMinimumSize(480, 160)
        now = time.time()
        self.start, self.span = now - DAY / 2, DAY
        self.now: float | None = None
        self.lanes: list[LaneGeometry] = []
        self.bands: list[tuple[float, float, str]] = []
        self._press: QPointF | None = None
        self._press_start = 0.0
        self._dragged = False
        self._labels: dict[tuple[float, int], str] = {}
        self._font = QFont(self.font())
        self._use_palette()

    def _use_palette(self) -> None:
        """Colours from the palette (light or dark), and the marks drawn again in them."""
        self.colours = timeline_colours(self.palette())
        self._pens = _Pens(self.palette().color(QPalette.ColorRole.Text), self.colours)
        for lane in self.lanes:
            lane.forget_strip()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._use_palette()
            self.update()
        super().changeEvent(event)

    # -- data and view --------------------------------------------------------------------
    def advance_now(self, now: float) -> None:
        """Time passed with no news from the engine: the now line moves on and running runs'
        bars grow with it (no store read: nothing but the clock changed)."""
        self.now = now
        for lane in self.lanes:
            lane.grow(now)
        self.update()

    def set_timeline(self, timeline: Timeline, rows: list[LaneGeometry] | None = None) -> None:
        """Show ``timeline``; ``rows`` is its geometry when already built (off this thread)."""
        self.lanes = (
            rows
            if rows is not None
            else [LaneGeometry.of(lane, timeline.now.timestamp()) for lane in timeline.lanes]
        )
        self.bands = [(b.start.timestamp(), b.end.timestamp(), b.kind) for b in timeline.bands]
        self.now = timeline.now.timestamp()
        self.setMinimumHeight(int(AXIS_HEIGHT + LANE_HEIGHT * max(len(self.lanes), 1) + 4))
        self.update()

    def set_view(self, start: float, span: float) -> None:
        span = min(max(span, MIN_SPAN), MAX_SPAN)
        if (start, span) == (self.start, self.span):
            return
        self.start, self.span = start, span
        self.update()
        self.viewChanged.emit(self.start, self.start + self.span)

    def view(self) -> View:
        return View(self.start, self.span, LABEL_WIDTH, max(self.width() - LABEL_WIDTH, 1.0))

    def zoom(self, factor: float, anchor_x: float | None = None) -> None:
        """Zoom by ``factor`` (> 1 zooms out) keeping the instant under ``anchor_x`` still."""
        view = self.view()
        x = view.left + view.width / 2 if anchor_x is None else anchor_x
        anchor = view.instant(x)
        span = min(max(self.span * factor, MIN_SPAN), MAX_SPAN)
        self.set_view(anchor - (x - view.left) / view.width * span, span)

    def zoom_at_now(self, factor: float) -> None:
        """Zoom keeping now where it is (the keys and the buttons; the wheel keeps the
        pointer's instant instead); the view's middle when now is out of view."""
        view = self.view()
        if self.now is not None and view.start <= self.now <= view.end:
            self.zoom(factor, view.x(self.now))
        else:
            self.zoom(factor)

    def pan(self, seconds: float) -> None:
        self.set_view(self.start + seconds, self.span)

    def centre_on_now(self) -> None:
        if self.now is not None:
            self.set_view(self.now - self.span / 2, self.span)

    # -- painting -------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        try:
            self.paint(painter)
        finally:
            painter.end()

    def paint(self, painter: QPainter) -> None:
        view = self.view()
        painter.fillRect(self.rect(), self.palette().base())
        painter.setFont(self._font)
        self._paint_bands(painter, view)
        step = _axis_step(view.scale)
        self._paint_grid(painter, view, step)
        for row, lane in enumerate(self.lanes):
            self._paint_lane(painter, view, lane, AXIS_HEIGHT + row * LANE_HEIGHT)
        self._paint_axis(painter, view, step)
        self._paint_now(painter, view)

    def _paint_bands(self, painter: QPainter, view: View) -> None:
        height = self.height() - AXIS_HEIGHT
        for first, last, kind in self.bands:
            rect = span_rect(first, last, view, AXIS_HEIGHT, height)
            if rect is not None:
                painter.fillRect(rect, self.colours.bands[kind])

    def _paint_lane(self, painter: QPainter, view: View, lane: LaneGeometry, top: float) -> None:
        painter.fillRect(QRect(0, int(top + LANE_HEIGHT), self.width(), 1), self.colours.grid)
        self._paint_label(painter, lane, QRectF(6, top, LABEL_WIDTH - 12, LANE_HEIGHT))
        mark_top = top + (LANE_HEIGHT - MARK_HEIGHT) / 2
        painter.setClipRect(QRectF(view.left, top, view.width, LANE_HEIGHT))
        if lane.lane.trial:  # hatched: nothing in this row starts a command
            painter.fillRect(QRectF(view.left, top + 1, view.width, LANE_HEIGHT - 1),
                             self._pens.trial)  # fmt: skip
        self._paint_windows(painter, view, lane, mark_top)
        self._paint_marks(painter, view, lane, mark_top)
        self._paint_transitions(painter, view, lane, top)
        painter.setClipping(False)

    def _paint_label(self, painter: QPainter, lane: LaneGeometry, room: QRectF) -> None:
        """The routine's name, elided; a trial's carries a Trial chip at its right."""
        metrics = painter.fontMetrics()
        if lane.lane.trial:
            word = _("Trial")
            chip = QRectF(0, 0, metrics.horizontalAdvance(word) + 8, metrics.height() + 2)
            chip.moveCenter(QPointF(room.right() - chip.width() / 2, room.center().y()))
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(self._pens.trial_chip)
            painter.drawRoundedRect(chip, 4, 4)
            painter.setPen(self._pens.on_trial)
            painter.drawText(chip, Qt.AlignmentFlag.AlignCenter, word)
            room = room.adjusted(0, 0, -chip.width() - 4, 0)
        painter.setPen(self._pens.text)
        name = metrics.elidedText(lane.lane.name, Qt.TextElideMode.ElideRight, int(room.width()))
        painter.drawText(room, Qt.AlignmentFlag.AlignVCenter, name)

    def _paint_marks(self, painter: QPainter, view: View, lane: LaneGeometry, top: float) -> None:
        """The row's marks: one blit from its strip (rendered per zoom, reused while panning)."""
        if lane.marks:
            strip = lane.strip_for(view, self._pens.palette)
            target = QRectF(view.left, top, view.width, MARK_HEIGHT)
            painter.drawImage(target, strip.image, strip.source(view))

    def _paint_windows(self, painter: QPainter, view: View, lane: LaneGeometry, top: float) -> None:
        painter.setPen(self._pens.text)
        for first, last, window in lane.windows:
            rect = span_rect(first, last, view, top, MARK_HEIGHT)
            if rect is None:
                continue
            painter.fillRect(rect, self._pens.window)
            if rect.width() > 24:
                painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, f"×{window.count}")

    def _paint_transitions(
        self, painter: QPainter, view: View, lane: LaneGeometry, top: float
    ) -> None:
        for instant, _change in lane.transitions:
            if view.start <= instant <= view.end:
                x = int(view.x(instant))
                for dash in range(int(top) + 2, int(top + LANE_HEIGHT) - 2, 6):  # a dashed line
                    painter.fillRect(QRect(x - 1, dash, 2, 4), self.colours.transition)

    def _paint_grid(self, painter: QPainter, view: View, step: int) -> None:
        for tick in _ticks(view, step):
            painter.fillRect(QRect(int(view.x(tick)), 0, 1, self.height()), self.colours.grid)

    def _paint_axis(self, painter: QPainter, view: View, step: int) -> None:
        painter.fillRect(QRectF(0, 0, self.width(), AXIS_HEIGHT), self.palette().window())
        painter.setPen(self._pens.text)
        for tick in _ticks(view, step):
            x = view.x(tick)
            painter.fillRect(QRect(int(x), int(AXIS_HEIGHT) - 5, 1, 5), self.colours.grid)
            painter.drawText(QPointF(x + 3, AXIS_HEIGHT - 8), self._label(tick, step))

    def _label(self, tick: float, step: int) -> str:
        key = (tick, step)
        text = self._labels.get(key)
        if text is None:
            if len(self._labels) > 2048:
                self._labels.clear()
            text = axis_label(tick, step, self.zone, self.locale_name)
            self._labels[key] = text
        return text

    def _paint_now(self, painter: QPainter, view: View) -> None:
        if self.now is not None and view.start <= self.now <= view.end:
            x = int(view.x(self.now))
            painter.fillRect(QRect(x - 1, 0, 2, self.height()), self.colours.now)

    # -- hit testing ------------------------------------------------------------------------
    def item_at(self, pos: QPointF) -> tuple[LaneGeometry, Activated] | None:
        row = int((pos.y() - AXIS_HEIGHT) // LANE_HEIGHT)
        view = self.view()
        if pos.y() < AXIS_HEIGHT or not 0 <= row < len(self.lanes) or pos.x() < view.left:
            return None
        lane = self.lanes[row]
        instant = view.instant(pos.x())
        tolerance = (MARK_WIDTH + 2) / view.scale
        item: Activated | None = lane.nearest(instant, tolerance)
        if item is None:
            item = lane.window_at(instant, tolerance)
        return None if item is None else (lane, item)

    def tooltip_at(self, pos: QPointF) -> str | None:
        """An occurrence or window under the pointer, else a DST change, else a band."""
        hit = self.item_at(pos)
        if hit is not None:
            routine = hit[0].lane
            zone = queries.zone(routine.zone)
            return tooltip_text(routine.name, hit[1], zone, self.locale_name, routine.trial)
        view = self.view()
        if pos.y() < AXIS_HEIGHT or pos.x() < view.left:
            return None
        instant, row = view.instant(pos.x()), int((pos.y() - AXIS_HEIGHT) // LANE_HEIGHT)
        if 0 <= row < len(self.lanes):
            row_geometry = self.lanes[row]
            change = row_geometry.transition_at(instant, 3 / view.scale)
            if change is not None:
                return change_sentence(row_geometry.lane.zone, change, self.locale_name)
        return self._band_text(instant)

    def _band_text(self, instant: float) -> str | None:
        for first, last, kind in self.bands:
            if first <= instant <= last:
                text = _("Computer asleep") if kind == BAND_ASLEEP else _(
                    "Coven not running")  # fmt: skip
                span = (datetime.fromtimestamp(t, UTC) for t in (first, last))
                start, end = (_when(t, self.zone, self.locale_name) for t in span)
                return _("{what} from {start} to {end}").format(
                    what=text, start=start, end=end)  # fmt: skip
        return None

    # -- input ------------------------------------------------------------------------------
    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            assert isinstance(event, QHelpEvent)
            text = self.tooltip_at(QPointF(event.pos()))
            if text:
                QToolTip.showText(event.globalPos(), text, self)
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().event(event)

    def wheelEvent(self, event: QWheelEvent) -> None:
        delta = event.angleDelta()
        horizontal = delta.x() if delta.x() else 0
        if horizontal or event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            steps = (horizontal or delta.y()) / 120
            self.pan(-steps * PAN_FRACTION * self.span)
        elif delta.y():
            self.zoom(ZOOM_STEP ** (-delta.y() / 120), event.position().x())
        event.accept()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._press, self._press_start, self._dragged = event.position(), self.start, False
        self.setFocus()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._press is None:
            return
        dx = event.position().x() - self._press.x()
        if abs(dx) >= DRAG_THRESHOLD:
            self._dragged = True
        if self._dragged:
            self.set_view(self._press_start - dx / self.view().scale, self.span)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        pressed, self._press = self._press, None
        if pressed is None or self._dragged or event.button() != Qt.MouseButton.LeftButton:
            return
        hit = self.item_at(event.position())
        if hit is not None:
            lane, item = hit
            oid = getattr(item, "id", None)
            self.activated.emit(lane.lane.name, oid)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        action = self._keys().get(event.key())
        if action is None:
            super().keyPressEvent(event)
            return
        action()
        event.accept()

    def _keys(self) -> dict[int, Callable[[], None]]:
        key = Qt.Key
        zoom_in = lambda: self.zoom_at_now(1 / ZOOM_STEP)  # noqa: E731
        zoom_out = lambda: self.zoom_at_now(ZOOM_STEP)  # noqa: E731
        return {
            key.Key_Plus: zoom_in, key.Key_Equal: zoom_in, key.Key_Minus: zoom_out,
            key.Key_Left: lambda: self.pan(-PAN_FRACTION * self.span),
            key.Key_Right: lambda: self.pan(PAN_FRACTION * self.span),
            key.Key_Home: self.centre_on_now,
        }  # fmt: skip


class _Pens:
    """Pens and brushes built once (not per paint). Lines are drawn as 1–2 px filled
    rectangles on whole pixels: the raster engine strokes a pen (above all a dashed one)
    many times slower."""

    def __init__(self, text: QColor, colours: TimelineColours) -> None:
        self.text = QPen(text)  # the palette's: legible under a dark one too
        marks = (colours.marks[key] for key in CATEGORIES)
        self.palette = Palette([(c.red(), c.green(), c.blue()) for c in marks])
        self.window = QColor(colours.window)
        self.window.setAlpha(150)  # a window over marks lets them show through
        self.trial = QBrush(colours.trial, Qt.BrushStyle.BDiagPattern)
        self.trial_chip = chip_colour("trial")  # as on the Routines page
        self.on_trial = QPen(text_on(self.trial_chip))


def _ticks(view: View, step: int) -> list[float]:
    first = (view.start // step + 1) * step
    return [first + n * step for n in range(int((view.end - first) // step) + 1)]


def _axis_step(scale: float) -> int:
    for step in _STEPS:
        if step * scale >= _MIN_TICK_PIXELS:
            return step
    return _STEPS[-1]


@lru_cache(maxsize=16)
def hours_and_minutes(locale: str) -> str:
    """The skeleton for a time of day as ``locale`` writes it: 2:30 PM, or 14:30."""
    return "hm" if "h" in get_time_format("short", locale=locale).pattern else "Hm"


def axis_label(tick: float, step: int, zone: tzinfo, locale: str) -> str:
    moment = datetime.fromtimestamp(tick, UTC)
    skeleton = hours_and_minutes(locale) if step < 86400 else "MMMEd"
    if step < 86400 and moment.astimezone(zone).hour == 0 and moment.astimezone(zone).minute == 0:
        skeleton = "MMMEd"
    return str(format_skeleton(skeleton, moment, tzinfo=zone, locale=locale))


def tooltip_text(
    routine: str, item: Activated, zone: tzinfo, locale: str, trial: bool = False
) -> str:
    """The tooltip: the routine, when (in its own zone), and what became of it — in the
    engine's words (:mod:`coven_core.views.explain`), so the timeline and explain agree."""
    if isinstance(item, CoalescedWindow):
        first, last = (_when(i, zone, locale) for i in (item.first, item.last))
        text = _("{routine}: {count} runs from {first} to {last} did not run: {cause}")
        cause = cause_text(item.cause or item.reason, locale)
        return text.format(routine=routine, count=item.count, first=first, last=last, cause=cause)
    when = _wall(item.local, locale) if item.local is not None else _when(item.utc, zone, locale)
    if isinstance(item, PlannedMoment):
        if item.skipped:
            planned = _("Will be skipped: the time does not exist.")
        elif trial:
            planned = _("Planned as a trial: it will be decided, the command will not start.")
        else:
            planned = _("Planned.")
        return f"{routine} · {when} · {planned}"
    outcome = outcome_sentence(item.disposition, item.reason, item.state, locale)
    return f"{routine} · {when} · {outcome}"


def _wall(wall: datetime, locale: str) -> str:
    """A stored wall time as it was planned: formatted naive, since a wall time in a DST gap
    read through its zone would show as the hour after it."""
    return str(format_datetime(wall, "medium", locale=locale))


def _when(instant: datetime, zone: tzinfo, locale: str) -> str:
    return str(format_datetime(instant.astimezone(zone), "medium", tzinfo=zone, locale=locale))


def default_view(now: datetime) -> tuple[float, float]:
    """A day around now: the last 16 hours and the next 8."""
    return (now - timedelta(hours=16)).timestamp(), DAY
