"""The Timeline window (DESIGN §12, issue #8): one row per routine, past occurrences coloured
by disposition, coalesced windows as one band with their count, planned future moments, DST
transitions, sleep and downtime bands and a now line; zoom and pan; hover for a tooltip; click
an occurrence (or a missed window) to open its run detail (:meth:`MainWindow.open_run`, whose
Time zone tab explains it), or a planned moment not yet in the store to open the routine's DST
explanation (:func:`.explanation.open_explanation`).

The page loads a range wider than the view (one view's width on either side), so panning and
zooming paint from memory; it reads again when the view leaves what it has, and when the
engine has news (``desktop.overviewChanged``). The rows' geometry is built with the read, on
the operator thread; the GUI thread only paints.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, tzinfo
from typing import TYPE_CHECKING

from babel.dates import format_datetime
from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from coven_core import queries
from coven_core.engine import Engine
from coven_core.errors import CovenError
from coven_core.queries import MAX_RANGE, Timeline, _, timeline
from coven_desktop.tasks import Tasks
from coven_desktop.windows.explanation import open_explanation
from coven_desktop.windows.timeline_canvas import ZOOM_STEP, TimelineCanvas, default_view
from coven_desktop.windows.timeline_geometry import LaneGeometry
from coven_desktop.windows.timeline_legend import Legend

if TYPE_CHECKING:
    from coven_desktop.desktop import Desktop


def display_zone() -> tzinfo:
    """The host's zone for the axis; UTC when it cannot be proven (DESIGN §3)."""
    from coven_desktop.osnotify import host_zone  # the platform layer, imported when shown

    try:
        return queries.zone(host_zone())
    except CovenError:
        return UTC


#: How often the now line and running runs' bars move on while the page is shown: a pixel
#: of the default day-wide view is about two minutes, so this is finer than the eye sees.
TICK_MS = 30_000


class Page(QWidget):
    loaded = Signal()  # new data is on the canvas
    inspectorOpened = Signal(object)  # the window a click opened: a run's detail, or an explanation

    def __init__(self, desktop: Desktop, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.desktop = desktop
        self.canvas = TimelineCanvas(desktop.locale, display_zone(), self)
        self.canvas.set_view(*default_view(desktop.clock.now_utc()))
        self.range_label = QLabel(self)
        self.data: Timeline | None = None
        self._loaded: tuple[float, float] | None = None
        self._reloading: asyncio.Future[None] | None = None
        self._tasks = Tasks()
        self._again = False
        self._build()
        self.canvas.viewChanged.connect(self._on_view)
        self.canvas.activated.connect(self.inspect)
        desktop.overviewChanged.connect(self._on_overview)  # a slot: dropped with the page
        self._on_view(self.canvas.start, self.canvas.start + self.canvas.span)
        self.ticker = QTimer(self)  # while shown: the clock moves the now line and running bars
        self.ticker.setInterval(TICK_MS)
        self.ticker.timeout.connect(self.tick)

    def showEvent(self, event: QShowEvent) -> None:
        self.ticker.start()
        super().showEvent(event)

    def hideEvent(self, event: QHideEvent) -> None:
        self.ticker.stop()
        super().hideEvent(event)

    def tick(self) -> None:
        self.canvas.advance_now(self.desktop.clock.now_utc().timestamp())

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        bar = QHBoxLayout()
        for text, action in ((_("Zoom in"), lambda: self.canvas.zoom_at_now(1 / ZOOM_STEP)),
                             (_("Zoom out"), lambda: self.canvas.zoom_at_now(ZOOM_STEP)),
                             (_("Now"), self.canvas.centre_on_now)):  # fmt: skip
            button = QPushButton(text, self)
            button.clicked.connect(action)
            bar.addWidget(button)
        bar.addStretch(1)
        bar.addWidget(self.range_label)
        layout.addLayout(bar)
        rows = QScrollArea(self)  # with many routines the rows scroll
        rows.setWidgetResizable(True)
        rows.setWidget(self.canvas)
        layout.addWidget(rows, 1)
        layout.addWidget(Legend(self))

    # -- loading --------------------------------------------------------------------------
    async def reload(self) -> None:
        """Read the view and one view's width on either side (bounded by MAX_RANGE)."""
        view_start, span = self.canvas.start, self.canvas.span
        margin = min(span, (MAX_RANGE.total_seconds() - span) / 2)
        start = datetime.fromtimestamp(view_start - margin, UTC)
        end = datetime.fromtimestamp(view_start + span + margin, UTC)
        now = self.desktop.clock.now_utc()

        def read(engine: Engine) -> tuple[Timeline, list[LaneGeometry]]:
            found = timeline(engine.store, start, end, now)
            at = now.timestamp()
            return found, [LaneGeometry.of(lane, at) for lane in found.lanes]  # plain Python

        data, rows = await self.desktop.service.call(read)
        self.data, self._loaded = data, (start.timestamp(), end.timestamp())
        self.canvas.set_timeline(data, rows)
        self.loaded.emit()

    def _on_overview(self, _overview: object) -> None:
        self.request_reload()

    def request_reload(self) -> None:
        """Reload once now, and once more afterwards if asked again meanwhile."""
        if self._reloading is not None and not self._reloading.done():
            self._again = True
            return
        self._reloading = self._tasks.spawn(self.reload())
        self._reloading.add_done_callback(self._reloaded)

    def _reloaded(self, task: asyncio.Future[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self.desktop.failed.emit(str(task.exception()))
        if self._again:
            self._again = False
            self.request_reload()

    async def settle(self) -> None:
        """Wait for reloads in flight (tests)."""
        await self._tasks.settle()  # a follow-up reload starts as the one before ends

    def _on_view(self, start: float, end: float) -> None:
        self.range_label.setText(_("{start} – {end}").format(
            start=self._when(start), end=self._when(end)))  # fmt: skip
        loaded = self._loaded
        if loaded is not None and not (loaded[0] <= start and end <= loaded[1]):
            self.request_reload()

    def _when(self, instant: float) -> str:
        moment = datetime.fromtimestamp(instant, UTC)
        zone = self.canvas.zone
        return str(format_datetime(moment, "short", tzinfo=zone, locale=self.desktop.locale))

    # -- inspecting -----------------------------------------------------------------------
    def inspect(self, routine: str, occurrence_id: str | None) -> QWidget:
        """Open what a click on the timeline asks for: the occurrence's run detail; for a
        planned moment not yet in the store, the routine's explanation."""
        if occurrence_id is None:
            window = open_explanation(self.desktop, routine, parent=self)
        else:
            main = self.desktop.window
            main.open_run(occurrence_id)
            window = main.run_windows[occurrence_id]
        self.inspectorOpened.emit(window)
        return window
