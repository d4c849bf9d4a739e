"""The tray: an icon and tooltip for the state, and a menu for one-click control (§12).

The menu is rebuilt from an :class:`~coven_core.views.overview.Overview` whenever the engine says
something changed. Every action goes through the operator API (and so is audited); the tray
itself decides nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from PySide6.QtCore import QObject, Signal, SignalInstance
from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from coven_core.model import RoutineState
from coven_core.queries import Overview, RoutineLine, TrayState
from coven_desktop import texts
from coven_desktop.resources import icon

#: Routines listed in the menu itself (the next due); the rest are one submenu away.
DIRECT_ROUTINES = 10


def _due_order(line: RoutineLine) -> tuple[bool, datetime | None, str]:
    """Soonest first; routines with nothing due (paused, finished) last, by name."""
    return (line.next_due is None, line.next_due, line.name)


class Tray(QObject):
    """Signals carry what the person asked for; the app turns them into operator calls."""

    pauseRequested = Signal(str)
    resumeRequested = Signal(str)
    runNowRequested = Signal(str)
    cancelRequested = Signal(str)  # a run id
    pauseAllRequested = Signal()
    resumeAllRequested = Signal()
    attentionRequested = Signal()
    windowRequested = Signal()
    quitRequested = Signal()
    autostartToggled = Signal(bool)  # "Start at login" switched on (True) or off

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.icon = QSystemTrayIcon(self)
        self.menu = QMenu()
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._activated)
        self.state: TrayState | None = None
        self.autostart: bool | None = False  # start at login: on, off, None = not offered

    def show(self) -> None:
        self.icon.show()

    def dispose(self) -> None:
        """Hide and free the icon and its parentless menu while the QApplication lives
        (freed later, during interpreter shutdown, they would outlive it)."""
        self.icon.hide()
        self.icon.setContextMenu(None)  # type: ignore[arg-type]
        self.menu.deleteLater()

    def update(self, overview: Overview, now: datetime, locale: str) -> None:
        self.state = overview.state
        self.icon.setIcon(QIcon(str(icon(f"tray-{overview.state.value}"))))
        self.icon.setToolTip(texts.tooltip(overview, now, locale))
        self._rebuild(overview, now, locale)

    def show_autostart(self, on: bool) -> None:
        """Show start at login as it really is (after a change that could not be made)."""
        self.autostart = on
        for action in self.menu.actions():
            if action.objectName() == "autostart":
                action.setChecked(on)

    def notify(self, title: str, message: str) -> None:
        self.icon.showMessage(title, message, QSystemTrayIcon.MessageIcon.Information, 8000)

    # -- the menu ---------------------------------------------------------------------------
    def _rebuild(self, overview: Overview, now: datetime, locale: str) -> None:
        # A new menu each time: QMenu.clear() keeps the submenus made by addMenu (they are
        # children of the menu), which leaked one QMenu per routine per rebuild.
        old, self.menu = self.menu, QMenu()
        self.icon.setContextMenu(self.menu)
        old.deleteLater()
        self._info(texts.next_run_line(overview, now, locale))
        if overview.standby:
            self._info(self.tr("Standby: another Coven process is scheduling"))
        self._running(overview)
        self._routines(overview)
        self.menu.addSeparator()
        self._pause_all(overview)
        if overview.attention:
            label = self.tr("Needs attention ({count})…").format(count=overview.attention)
            self._action(label, self.attentionRequested.emit)
        self._start_at_login()
        self._action(self.tr("Open Coven…"), self.windowRequested.emit)
        self._action(self.tr("Quit"), self.quitRequested.emit)

    def _info(self, text: str) -> None:
        self.menu.addAction(text).setEnabled(False)

    def _running(self, overview: Overview) -> None:
        if not overview.running:
            return
        self.menu.addSeparator()
        for run in overview.running:
            label = self.tr("Cancel {routine} (running)").format(routine=run.routine)
            self._routine_action(self.menu, label, self.cancelRequested, run.run_id)

    def _routines(self, overview: Overview) -> None:
        """The routines due soonest, each a submenu; the rest under "All routines (N)".

        Submenus are filled when they are about to show, and "All routines" lists its
        routines only then: a rebuild with 1,000 routines makes a dozen menus, not a
        thousand (each QMenu is a native widget: memory, and time at every change)."""
        lines = overview.routines
        if not lines:
            return
        self.menu.addSeparator()
        soonest = lines if len(lines) <= DIRECT_ROUTINES else sorted(lines, key=_due_order)
        for line in soonest[:DIRECT_ROUTINES]:
            self._routine_menu(self.menu, line)
        if len(lines) > DIRECT_ROUTINES:
            label = self.tr("All routines ({count})").format(count=len(lines))
            everything = self.menu.addMenu(label)
            everything.setObjectName("routines:all")
            everything.aboutToShow.connect(lambda: self._fill_all(everything, lines))

    def _fill_all(self, menu: QMenu, lines: list[RoutineLine]) -> None:
        if not menu.actions():  # once per rebuild
            for line in lines:
                self._routine_menu(menu, line)

    def _routine_menu(self, menu: QMenu, line: RoutineLine) -> None:
        submenu = menu.addMenu(line.name)
        submenu.setObjectName(f"routine:{line.name}")
        submenu.aboutToShow.connect(lambda: self._fill_routine(submenu, line))

    def _fill_routine(self, submenu: QMenu, line: RoutineLine) -> None:
        if submenu.actions():  # once per rebuild
            return
        self._routine_action(submenu, self.tr("Run now"), self.runNowRequested, line.name)
        if line.state is RoutineState.PAUSED:
            self._routine_action(submenu, self.tr("Resume"), self.resumeRequested, line.name)
        elif line.state is RoutineState.ACTIVE:
            self._routine_action(submenu, self.tr("Pause"), self.pauseRequested, line.name)

    def _routine_action(self, menu: QMenu, text: str, signal: SignalInstance, key: str) -> None:
        """An action that emits ``signal(key)``: a routine name, or a run id for Cancel."""
        self._action(text, lambda: signal.emit(key), menu)

    def _pause_all(self, overview: Overview) -> None:
        if overview.paused_all:
            self._action(self.tr("Resume all"), self.resumeAllRequested.emit)
        else:
            self._action(self.tr("Pause all"), self.pauseAllRequested.emit)

    def _start_at_login(self) -> None:
        if self.autostart is None:
            return
        action = self.menu.addAction(self.tr("Start at login"))
        action.setObjectName("autostart")
        action.setCheckable(True)
        action.setChecked(self.autostart)
        action.triggered.connect(self._autostart_triggered)

    def _autostart_triggered(self, checked: bool) -> None:
        self.autostart = checked
        self.autostartToggled.emit(checked)

    def _action(self, text: str, slot: Callable[[], None], menu: QMenu | None = None) -> QAction:
        action = (menu or self.menu).addAction(text)
        action.triggered.connect(slot)  # a slot without the "checked" argument
        return action

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason is QSystemTrayIcon.ActivationReason.Trigger:
            self.windowRequested.emit()
