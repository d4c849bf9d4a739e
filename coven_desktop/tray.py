"""The tray: an icon and tooltip for the state, and a menu for one-click control (DESIGN §12).

The menu is rebuilt from an :class:`~coven_core.views.overview.Overview` whenever the engine says
something changed. Every action goes through the operator API (and so is audited); the tray
itself decides nothing — the state, its counts and the tooltip's sentence come from the engine.

The menu does not move under the cursor: its top level is the same list of items whatever
runs, needs a decision or is paused — an item with nothing to offer is disabled, never
removed — so a click meant for one item cannot land on another when a run starts or ends.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from babel.dates import format_time
from PySide6.QtCore import QObject, Signal, SignalInstance
from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMenu, QMessageBox, QSystemTrayIcon

from coven_core import queries
from coven_core.model import RoutineState
from coven_core.queries import N_, NoticeKind, Overview, RoutineLine, TrayState, _
from coven_desktop.resources import icon

#: Routines listed in the menu itself (the next due); the rest are one submenu away.
DIRECT_ROUTINES = 10

#: What each kind of notification is about, as the Notifications submenu lists them.
NOTICE_LABELS = {
    NoticeKind.FAILED: N_("Failed runs"),
    NoticeKind.TIMED_OUT: N_("Timed-out runs"),
    NoticeKind.NEEDS_DECISION: N_("Runs that need your decision"),
    NoticeKind.OVERRUN: N_("Runs taking much longer than usual"),
    NoticeKind.QUARANTINED: N_("Quarantined routines"),
    NoticeKind.BROKEN: N_("Broken routines"),
    NoticeKind.WAKE: N_("What was missed while asleep or not running"),
    NoticeKind.CANCELLED: N_("Cancelled runs"),
    NoticeKind.STOPPED: N_("Stopped runs"),
}


def _due_order(line: RoutineLine) -> tuple[bool, datetime | None, str]:
    """Soonest first; routines with nothing due (paused, finished) last, by name."""
    return (line.next_due is None, line.next_due, line.name)


class Tray(QObject):
    """Signals carry what the person asked for; the app turns them into operator calls."""

    pauseRequested = Signal(str)
    resumeRequested = Signal(str)
    runNowRequested = Signal(str)
    probeRequested = Signal(str)
    releaseRequested = Signal(str)
    cancelRequested = Signal(str)  # a run id, confirmed
    cancelRoutineRequested = Signal(str)  # every running run of a routine, confirmed
    pauseAllRequested = Signal()
    resumeAllRequested = Signal()
    attentionRequested = Signal()
    windowRequested = Signal()
    pageRequested = Signal(str)  # a page of the main window, by key
    quitRequested = Signal()
    autostartToggled = Signal(bool)  # "Start at login" switched on (True) or off
    noticeToggled = Signal(object, bool)  # a NoticeKind switched on (True) or off

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.icon = QSystemTrayIcon(self)
        self.menu = QMenu()
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._activated)
        self.state: TrayState | None = None
        self.autostart: bool | None = False  # start at login: on, off, None = not offered
        self.notices: dict[NoticeKind, bool] = {}  # each kind of notification: on or off
        self.confirmation: QMessageBox | None = None  # the open "Cancel …?" question
        self.quitting: str | None = None  # what quitting waits for, once it has begun
        self.locale = "en_US"

    def show(self) -> None:
        self.icon.show()

    def dispose(self) -> None:
        """Hide and free the icon and its parentless menu while the QApplication lives
        (freed later, during interpreter shutdown, they would outlive it)."""
        self._close_confirmation()
        self.icon.hide()
        self.icon.setContextMenu(None)  # type: ignore[arg-type]
        self.menu.deleteLater()

    def update(self, overview: Overview, now: datetime, locale: str) -> None:
        if self.quitting is not None:
            return  # the news of the last runs no longer changes what the tray says
        self.state, self.locale = overview.state, locale
        self.icon.setIcon(QIcon(str(icon(f"tray-{overview.state.value}"))))
        self.icon.setToolTip(self._tooltip(overview, now, locale))
        self._rebuild(overview, now, locale)

    def _tooltip(self, overview: Overview, now: datetime, locale: str) -> str:
        """``Coven`` over the engine's sentence ("1 failed · 2 running; next: backup at 2:30
        AM"), and a failing scheduler's error (a broken routine is already counted)."""
        lines = ["Coven", queries.tooltip(overview, now, locale)]
        if overview.error and not overview.broken:
            lines.append(overview.error)
        return "\n".join(lines)

    def show_quitting(self, text: str) -> None:
        """Quit has begun: the icon says what it waits for, and the menu only that."""
        self.quitting = text
        self._close_confirmation()
        self.icon.setToolTip(f"Coven\n{text}")
        old, self.menu = self.menu, QMenu()
        self.icon.setContextMenu(self.menu)
        old.deleteLater()
        self._info(text)

    def show_autostart(self, on: bool) -> None:
        """Show start at login as it really is (after a change that could not be made)."""
        self.autostart = on
        for action in self.menu.actions():
            if action.objectName() == "autostart":
                action.setChecked(on)

    def notify(self, title: str, message: str, warning: bool = False) -> None:
        icon = QSystemTrayIcon.MessageIcon
        self.icon.showMessage(title, message, icon.Warning if warning else icon.Information, 8000)

    # -- the menu ---------------------------------------------------------------------------
    def _rebuild(self, overview: Overview, now: datetime, locale: str) -> None:
        # A new menu each time: QMenu.clear() keeps the submenus made by addMenu (they are
        # children of the menu), which leaked one QMenu per routine per rebuild.
        old, self.menu = self.menu, QMenu()
        self.icon.setContextMenu(self.menu)
        old.deleteLater()
        self._headline(overview, now, locale)
        self.menu.addSeparator()
        self._attention(overview)
        self._running(overview)
        self._routines(overview)
        self.menu.addSeparator()
        self._pause_all(overview)
        self._notifications()
        self._start_at_login()
        self._action(_("Open Coven…"), self.windowRequested.emit).setObjectName("open")
        self._action(_("Quit"), self.quitRequested.emit).setObjectName("quit")

    def _headline(self, overview: Overview, now: datetime, locale: str) -> None:
        """The tooltip's sentence: what needs looking at, then the next run — none while all
        scheduling is paused (the engine's ``next_run`` honours pause-all)."""
        text = queries.tooltip(overview, now, locale)
        if overview.standby:
            text = _("Standby: another Coven process is scheduling · {state}").format(state=text)
        page = _page_of(overview)
        if page is None:
            self._info(text).setObjectName("headline")
            return
        # It names something to look at ("2 failed"): a click goes where that is.
        self._action(text, lambda: self.pageRequested.emit(page)).setObjectName("headline")

    def _info(self, text: str) -> QAction:
        action = self.menu.addAction(text)
        action.setEnabled(False)
        return action

    def _attention(self, overview: Overview) -> None:
        count = overview.attention
        text = _("Needs attention ({count})…").format(count=count)
        action = self._action(text if count else _("Nothing needs attention"),
                              self.attentionRequested.emit)  # fmt: skip
        action.setObjectName("attention")
        action.setEnabled(bool(count))

    def _running(self, overview: Overview) -> None:
        """Every running run in one submenu, always in the same place; disabled when none."""
        title = _("Running ({count})").format(count=len(overview.running))
        running = self.menu.addMenu(title)
        running.setObjectName("running")
        running.setEnabled(bool(overview.running))
        for run in overview.running:
            label = _("Cancel {routine}…").format(routine=run.routine)
            if run.started_at is not None:
                label = _("Cancel {routine} (since {time})…").format(
                    routine=run.routine, time=self._clock_time(run.started_at)
                )
            confirm = self._confirm_cancel(run.routine, self.cancelRequested, run.run_id)
            self._action(label, confirm, running)

    def _clock_time(self, at: datetime) -> str:
        return format_time(at.astimezone(), format="short", locale=self.locale)

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
            self._routine_menu(self.menu, line, overview)
        if len(lines) > DIRECT_ROUTINES:
            label = _("All routines ({count})").format(count=len(lines))
            everything = self.menu.addMenu(label)
            everything.setObjectName("routines:all")
            everything.aboutToShow.connect(lambda: self._fill_all(everything, overview))

    def _fill_all(self, menu: QMenu, overview: Overview) -> None:
        if not menu.actions():  # once per rebuild
            for line in overview.routines:
                self._routine_menu(menu, line, overview)

    def _routine_menu(self, menu: QMenu, line: RoutineLine, overview: Overview) -> None:
        submenu = menu.addMenu(line.name)
        submenu.setObjectName(f"routine:{line.name}")
        submenu.aboutToShow.connect(lambda: self._fill_routine(submenu, line, overview))

    def _fill_routine(self, submenu: QMenu, line: RoutineLine, overview: Overview) -> None:
        """What fits the routine's state; Cancel last, and only while one of its runs runs."""
        if submenu.actions():  # once per rebuild
            return
        name = line.name
        if name in overview.broken:
            text = _("Broken: edit or delete it in Coven…")
            self._action(text, lambda: self.pageRequested.emit("routines"), submenu)
        elif line.state is RoutineState.QUARANTINED:
            self._routine_action(submenu, _("Probe once"), self.probeRequested, name)
            self._routine_action(submenu, _("Release"), self.releaseRequested, name)
        else:
            self._routine_action(submenu, _("Run now"), self.runNowRequested, name)
            paused = line.state is RoutineState.PAUSED
            toggle = (_("Resume"), self.resumeRequested) if paused else (
                _("Pause"), self.pauseRequested)  # fmt: skip
            self._routine_action(submenu, *toggle, name)
        if any(run.routine == name for run in overview.running):
            submenu.addSeparator()
            confirm = self._confirm_cancel(name, self.cancelRoutineRequested, name)
            self._action(_("Cancel…"), confirm, submenu)

    def _routine_action(self, menu: QMenu, text: str, signal: SignalInstance, key: str) -> None:
        """An action that emits ``signal(key)``: a routine name."""
        self._action(text, lambda: signal.emit(key), menu)

    def _pause_all(self, overview: Overview) -> None:
        if overview.paused_all:
            action = self._action(_("Resume all"), self.resumeAllRequested.emit)
        else:
            action = self._action(_("Pause all"), self.pauseAllRequested.emit)
        action.setObjectName("pause-all")

    def _notifications(self) -> None:
        """A switch per kind of notification (kept by the app: see NoticeSettings)."""
        menu = self.menu.addMenu(_("Notifications"))
        menu.setObjectName("notifications")
        for kind, label in NOTICE_LABELS.items():
            action = menu.addAction(_(label))
            action.setObjectName(f"notice:{kind.value}")
            action.setCheckable(True)
            action.setChecked(self.notices.get(kind, True))
            action.toggled.connect(lambda on, kind=kind: self._notice_toggled(kind, on))

    def _notice_toggled(self, kind: NoticeKind, on: bool) -> None:
        self.notices[kind] = on
        self.noticeToggled.emit(kind, on)

    def _start_at_login(self) -> None:
        if self.autostart is None:
            return
        action = self.menu.addAction(_("Start at login"))
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

    # -- cancel asks once -------------------------------------------------------------------
    def _confirm_cancel(self, routine: str, signal: SignalInstance, key: str) -> Callable[[], None]:
        """A slot that asks before it emits ``signal(key)``."""

        def ask() -> None:
            self.ask_to_cancel(routine, lambda: signal.emit(key))

        return ask

    def ask_to_cancel(self, routine: str, cancel: Callable[[], None]) -> QMessageBox:
        """Ask once before cancelling; non-modal (``open``), so the tray keeps working."""
        self._close_confirmation()
        title = _("Cancel {routine}?").format(routine=routine)
        question = _("Cancel the running {routine}?").format(routine=routine)
        box = QMessageBox(QMessageBox.Icon.Question, title, question)
        box.setInformativeText(_(
            "Coven stops its command (SIGTERM, then SIGKILL after the routine's stop grace) "
            "and records the run as cancelled."
        ))  # fmt: skip
        stop = box.addButton(_("Cancel the run"), QMessageBox.ButtonRole.DestructiveRole)
        keep = box.addButton(_("Keep it running"), QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(keep)
        box.setEscapeButton(keep)
        box.buttonClicked.connect(lambda clicked: cancel() if clicked is stop else None)
        box.finished.connect(lambda _result: self._answered(box))
        self.confirmation = box
        box.open()
        return box

    def _answered(self, box: QMessageBox) -> None:
        if self.confirmation is box:
            self.confirmation = None
        box.deleteLater()

    def _close_confirmation(self) -> None:
        """Close the question still open (its run's menu is gone): nothing is cancelled."""
        if self.confirmation is not None:
            self.confirmation.reject()  # finished → _answered


def _page_of(overview: Overview) -> str | None:
    """Where the headline's news is: failures nobody has opened are on the Runs page, a
    quarantined routine on its own page, a broken one among the routines; None when the
    headline only says what comes next (Needs attention has its own item above)."""
    counts = overview.counts
    if counts.failed_unseen:
        return "runs"
    if counts.quarantined:
        return "quarantine"
    return "routines" if counts.broken else None
