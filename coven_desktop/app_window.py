"""The main window: a side bar of pages (Routines, Runs, Timeline, …) over one status line,
and the runs' detail windows it opens (:meth:`MainWindow.open_run`).

Pages are listed in :data:`coven_desktop.windows.PAGES` and built the first time they are
shown (a launch builds none of them but the first one asked for); see that module for what a
page may rely on.
"""

from __future__ import annotations

import asyncio
import importlib
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSize, Qt, Signal
from PySide6.QtGui import QHideEvent, QIcon, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QSizePolicy,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

import coven_core
from coven_core import queries
from coven_core.queries import Overview, _, ngettext
from coven_desktop import APP_NAME
from coven_desktop.preferences import Preferences
from coven_desktop.resources import icon
from coven_desktop.tasks import Tasks
from coven_desktop.windows import PAGES, page_info
from coven_desktop.windows.sidebar import SideBar

if TYPE_CHECKING:
    from coven_desktop.desktop import Desktop

#: Where the window was left, as Qt saves it (place, size, maximised, screen).
PLACE = "window/main"


class MainWindow(QMainWindow):
    runOpened = Signal(object)  # the RunDetailWindow open_run showed

    def __init__(self, desktop: Desktop | None = None) -> None:
        super().__init__()
        self.desktop = desktop
        self.pages: dict[str, QWidget] = {}
        self.run_windows: dict[str, QWidget] = {}  # by the id they were opened with
        self._reloads = Tasks()
        self.setWindowTitle(APP_NAME)
        self.setWindowIcon(QIcon(str(icon("coven"))))
        self.setCentralWidget(self._body())
        self._shortcuts()
        self.resize(default_size(self.screen().availableGeometry().size()))
        self._preferences = None if desktop is None else Preferences(desktop.data_dir)
        self._restore_place()
        if desktop is not None:
            desktop.overviewChanged.connect(self.show_overview)

    def _restore_place(self) -> None:
        """Open as it was left: a person who widened it to read the runs finds it so. With
        nothing saved, or a value Qt cannot read, it keeps its default size; a place no
        screen shows any more, Qt brings back onto one."""
        saved = None if self._preferences is None else self._preferences.value(PLACE)
        if isinstance(saved, QByteArray):
            self.restoreGeometry(saved)

    def hideEvent(self, event: QHideEvent) -> None:
        """Closed, or hidden as the app quits: its place is kept for the next time."""
        if self._preferences is not None:
            self._preferences.set(PLACE, self.saveGeometry())
        super().hideEvent(event)

    def _body(self) -> QWidget:
        body = QWidget(self)
        outer = QVBoxLayout(body)
        row = QHBoxLayout()
        self.sidebar = SideBar(body)
        self.stack = QStackedWidget(body)
        self._placeholders = [QWidget(self.stack) for _ in PAGES]
        for placeholder in self._placeholders:
            self.stack.addWidget(placeholder)
        self.sidebar.currentRowChanged.connect(lambda row: self.show_page(PAGES[row].key))
        row.addWidget(self.sidebar)
        row.addWidget(self.stack, 1)
        outer.addLayout(row, 1)
        outer.addLayout(self._status_line(body))
        return body

    def _status_line(self, body: QWidget) -> QHBoxLayout:
        line = QHBoxLayout()
        self.headline = QLabel(_("Coven keeps your routines running on time."), body)
        self.summary = QLabel("", body)
        self.engine_info = QLabel(
            _("Engine {version} · tz database {tzdb}").format(
                version=coven_core.__version__, tzdb=queries.tz_database().version
            ),
            body,
        )
        self.engine_info.setAlignment(Qt.AlignmentFlag.AlignRight)
        for label in (self.headline, self.summary, self.engine_info):
            # a long state ("standby — another Coven process…") must not widen the window
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            label.setMinimumWidth(label.fontMetrics().averageCharWidth() * 12)
            line.addWidget(label, 1)
        return line

    def _shortcuts(self) -> None:
        """Ctrl+1… for the side bar's pages as it shows them (once Welcome is gone, Ctrl+1 is
        Routines: the number a person counts down the bar); Ctrl+N adds a routine."""
        for number in range(1, len(PAGES) + 1):
            shortcut = QShortcut(QKeySequence(f"Ctrl+{number}"), self)
            shortcut.activated.connect(lambda nth=number: self._show_nth(nth))
        QShortcut(QKeySequence.StandardKey.New, self).activated.connect(self.new_routine)

    def _show_nth(self, number: int) -> None:
        shown = [info for row, info in enumerate(PAGES) if not self.sidebar.isRowHidden(row)]
        if number <= len(shown):
            self.show_page(shown[number - 1].key)

    def new_routine(self) -> None:
        """The Routines page with its editor open on a new routine."""
        page = self.show_page("routines")
        open_editor = getattr(page, "open_editor", None)
        if open_editor is not None:
            open_editor()

    # -- pages ------------------------------------------------------------------------------
    @property
    def page_shown(self) -> str | None:
        """The key of the page the side bar has chosen; None before the first."""
        row = self.sidebar.currentRow()
        return PAGES[row].key if row >= 0 else None

    def show_page(self, key: str) -> QWidget | None:
        """Show the page ``key`` (building it the first time); None without an engine."""
        info = page_info(key)
        index = PAGES.index(info)
        if self.sidebar.currentRow() != index:
            self.sidebar.setCurrentRow(index)  # re-enters through currentRowChanged
            return self.pages.get(key)
        if self.desktop is None:
            return None
        page = self.pages.get(key)
        if page is None:
            page = self._build(index)
        self.stack.setCurrentWidget(page)
        self._reload(page)
        self.sidebar.follow_welcome()  # left the welcome: it goes once there are routines
        return page

    def _build(self, index: int) -> QWidget:
        info = PAGES[index]
        page: QWidget = importlib.import_module(info.module).Page(self.desktop)
        placeholder = self._placeholders[index]
        self.stack.insertWidget(index, page)
        self.stack.removeWidget(placeholder)
        placeholder.deleteLater()
        self.pages[info.key] = page
        return page

    def _reload(self, page: QWidget) -> None:
        reload = getattr(page, "reload", None)
        if reload is None:
            return
        try:
            asyncio.get_event_loop()
        except RuntimeError:
            return  # no event loop (a bare window in a test): the page loads when asked
        self._reloads.spawn(reload())

    async def settle(self) -> None:
        """Wait for the page loads in flight (tests)."""
        await self._reloads.settle()

    def show_runs(self, routine: str | None = None) -> None:
        """The Runs page, showing ``routine``'s runs (every routine's when None)."""
        page = self.show_page("runs")
        if page is not None:
            page.show_routine(routine)  # type: ignore[attr-defined]

    # -- a run's detail ---------------------------------------------------------------------
    def open_run(self, occurrence_id: str) -> None:
        """Show the detail of a run (an occurrence id, or a run id), in its own window: the
        one already open for it, raised, else a new one. The window need not be shown for
        this (a notification or the tray opens a run on its own)."""
        if self.desktop is None:
            return
        from coven_desktop.windows.run_detail import RunDetailWindow

        window = self.run_windows.get(occurrence_id)
        if window is None:
            window = RunDetailWindow(self.desktop, occurrence_id, self)
            self.run_windows[occurrence_id] = window
            window.destroyed.connect(lambda _gone=None: self.run_windows.pop(occurrence_id, None))
            window.start_loading()
        window.show()
        window.raise_()
        window.activateWindow()
        self.runOpened.emit(window)

    # -- the status line --------------------------------------------------------------------
    def show_overview(self, overview: Overview) -> None:
        state = queries.state_word(overview.state)
        parts = [_("State: {state}").format(state=state)]
        if overview.standby:
            parts.append(_("standby — another Coven process is scheduling"))
        count = len(overview.routines)
        parts.append(ngettext("{count} routine", "{count} routines", count).format(count=count))
        self.summary.setText(" · ".join(parts))
        self.sidebar.show_counts(overview)
        self.summary.setToolTip(self.summary.text())  # the line may be too narrow for it


def default_size(available: QSize) -> QSize:
    """The first opening's size, before a person chose one: roomy on a large screen (the
    routine editor's fields and its preview beside the list need the height), at least
    1000 × 680 where the screen allows it, never past the screen."""
    width = min(available.width(), max(1000, min(1280, available.width() * 3 // 4)))
    height = min(available.height(), max(680, min(860, available.height() * 4 // 5)))
    return QSize(width, height)
