"""The running desktop app: the engine service, the tray, the main window and one instance.

Everything a person does goes through :meth:`Desktop.act`, which awaits the operator API on
its thread (qasync) and then refreshes what the tray shows; a refusal is said in the window,
or as a notification while no window is open. Views update from the engine's events (the
service's bridge) and from operator results — nothing polls. An action's own refresh and the
one its events ask for are one read of the overview (see :meth:`refresh`). Quitting drains
off the GUI thread, saying meanwhile what it waits for (:meth:`quit`).
"""

from __future__ import annotations

import asyncio
import linecache
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QObject, QTranslator, Signal
from PySide6.QtDBus import QDBusConnection
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from coven_core import queries
from coven_core.clock import Clock, WakeReason
from coven_core.engine import Engine
from coven_core.errors import CovenError
from coven_core.events import Event
from coven_core.host import HostWatch, PortableHost
from coven_core.queries import NoticeKind, Overview, _, user_locale
from coven_desktop import autostart
from coven_desktop.notifications import NoticeSettings, Notifications, Shown
from coven_desktop.osnotify import Notifier, OsEvent, host_zone, start_notifiers, wake_reason_for
from coven_desktop.osnotify.hoststate import PropertyWatch, logind_inhibitor, watch_host
from coven_desktop.service import EngineService
from coven_desktop.tasks import Tasks
from coven_desktop.tray import Tray
from coven_desktop.zoneprompt import ZonePrompt

if TYPE_CHECKING:
    from coven_core.engine import Limits, Runtime, Store
    from coven_core.operator import ZoneChoice
    from coven_desktop.app_window import MainWindow
    from coven_desktop.osnotify.reachability import Information

log = logging.getLogger(__name__)

#: How long quitting waits for running commands before leaving them to the next start.
DRAIN_SECONDS = 10.0


def forget_module_sources() -> None:
    """Drop the source lines of the modules imported so far.

    PySide6 reads the source of every module named in an import statement once it is loaded
    (its ``__feature__`` check looks for "PySide6" in it) through ``linecache``, which keeps
    every line for good; nothing of ours reads them, and a traceback reads its lines again
    (bench_idle: "idle tray app: RSS").
    """
    linecache.clearcache()


class Desktop(QObject):
    overviewChanged = Signal(object)  # Overview
    failed = Signal(str)  # an operator call refused or failed: the message to show

    def __init__(
        self,
        data_dir: Path,
        clock: Clock,
        *,
        runtime_factory: Callable[[Store], Runtime] | None = None,
        limits: Limits | None = None,
        notifier_factory: Callable[[QObject], Notifier] | None = None,
        system_bus: Callable[[], QDBusConnection] | None = None,
    ) -> None:
        super().__init__()
        self.clock = clock
        self.data_dir = data_dir
        # The power and network state conditions read, and the sleep inhibitors (DESIGN §14):
        # followed on the system bus from start(), read portably for what it does not say.
        self.host = HostWatch(on_change=self._conditions_changed, fallback=PortableHost())
        self._system_bus = system_bus or self._host_bus
        self.host_watches: list[PropertyWatch] = []
        self.reachability: Information | None = None  # Qt's, where no bus says it
        self.service = EngineService(data_dir, clock, runtime_factory=runtime_factory,
                                     limits=limits, host=self.host, parent=self)  # fmt: skip
        self.tray = Tray(self)
        self.tray.autostart = autostart.is_enabled() if autostart.supported() else None
        self._window: MainWindow | None = None  # built when first needed (see window)
        self.notifications = Notifications(self.tray.notify, self.service.call, clock.monotonic,
                                           NoticeSettings(data_dir), parent=self)  # fmt: skip
        self.tray.notices = {kind: self.notifications.settings.is_on(kind) for kind in NoticeKind}
        self._qt_words: QTranslator | None = None
        self.locale = user_locale()
        self.overview: Overview | None = None
        self.notifier: Notifier | None = None
        self.zone_prompts: list[ZonePrompt] = []
        self._notifier_factory = notifier_factory or self._host_notifier
        self._tasks = Tasks()
        self._next_read: asyncio.Future[Overview] | None = None  # asked for, not yet begun
        self._last_read: asyncio.Future[Overview] | None = None  # the read begun last
        self._reads_begun = 0
        self._quitting: asyncio.Future[int | None] | None = None  # once Quit has begun
        self._quit_task = Tasks()  # apart: close() settles self._tasks, and Quit awaits close()
        self._closed = False
        self.left_running: int | None = None
        self._wire()

    @property
    def locale(self) -> str:
        """The locale the app speaks: its texts, dates and numbers (the environment's)."""
        return self._locale

    @locale.setter
    def locale(self, locale: str) -> None:
        # Every _() and ngettext() of the app translates into it from now on (DESIGN §12):
        # texts are translated where they are shown, so what is drawn next follows.
        self._locale = self.notifications.locale = locale
        queries.use_locale(locale)
        self._use_qt_words(locale)

    def _use_qt_words(self, locale: str) -> None:
        """Qt's own words — standard buttons, context menus, file dialogs — from the catalogue
        PySide6 ships (qtbase), in the same language as ours (none needed for English)."""
        app = QCoreApplication.instance()
        if app is None:  # no Qt application (yet): nothing draws Qt's words
            return
        if self._qt_words is not None:
            app.removeTranslator(self._qt_words)
            self._qt_words = None
        words = QTranslator(self)
        folder = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
        if words.load(QLocale(locale), "qtbase", "_", folder):
            app.installTranslator(words)
            self._qt_words = words

    @property
    def window(self) -> MainWindow:
        """The main window, built on first use: a tray-only session never pays for it."""
        if self._window is None:
            # The one way from the tray to the windows' code (pyproject's import contract):
            # imported here, not at the top, the window, its side bar and pages cost a tray
            # start nothing ("launch to tray ready" and "idle tray app: RSS" in bench_idle).
            from coven_desktop.app_window import MainWindow

            self._window = MainWindow(self)
            if self.overview is not None:
                self._window.show_overview(self.overview)  # it missed the ones before
        return self._window

    def _wire(self) -> None:
        self.service.eventsArrived.connect(self._on_events)
        tray = self.tray
        tray.pauseRequested.connect(lambda name: self.act(lambda e: e.operator.pause(name)))
        tray.resumeRequested.connect(lambda name: self.act(lambda e: e.operator.resume(name)))
        tray.runNowRequested.connect(self.run_now)
        tray.probeRequested.connect(lambda name: self.act(lambda e: e.operator.probe(name)))
        tray.releaseRequested.connect(lambda name: self.act(lambda e: e.operator.release(name)))
        tray.cancelRequested.connect(lambda run: self.act(lambda e: e.operator.cancel(run)))
        tray.cancelRoutineRequested.connect(
            lambda name: self.act(lambda e: e.operator.cancel_routine(name))
        )
        tray.pauseAllRequested.connect(lambda: self.act(lambda e: e.operator.pause_all()))
        tray.resumeAllRequested.connect(lambda: self.act(lambda e: e.operator.resume_all()))
        tray.windowRequested.connect(self.show_window)
        tray.pageRequested.connect(self.show_window)
        tray.attentionRequested.connect(lambda: self.show_window("reconciliation"))
        tray.quitRequested.connect(self.quit)
        tray.autostartToggled.connect(self.start_at_login)
        tray.noticeToggled.connect(self.notifications.settings.set_on)
        tray.icon.messageClicked.connect(self.notifications.clicked)
        self.notifications.opened.connect(self._open_notice)

    # -- start and stop ---------------------------------------------------------------------
    async def start(self) -> None:
        self._watch_host()  # before the scheduler starts: it takes its delay inhibitor first
        await self.service.start()
        self.notifier = self._notifier_factory(self)
        self.notifier.occurred.connect(self._on_os_event)
        overview = await self.refresh()
        tray = QSystemTrayIcon.isSystemTrayAvailable()
        if tray or QGuiApplication.platformName() == "xcb":
            # On X the icon is embedded whenever a tray host appears: an app started at login
            # may come up before the panel does (tests/system/test_real_desktop.py).
            self.tray.show()
        if not tray or not overview.routines:
            # No tray here (some desktops, offscreen): the window is the way in. No routines
            # yet: the welcome says what to do first, tray or not (README).
            self.show_window()
        forget_module_sources()

    async def close(self, drain: float = DRAIN_SECONDS) -> int | None:
        """Finish what is in flight, then stop the engine (bounded, off the GUI thread); how
        many commands were left running for the next start to adopt. Closing twice (Quit,
        then a test's teardown) closes once."""
        if self._closed:
            return self.left_running
        self._closed = True
        await self.settle()
        await self.service.settle()
        self.left_running = await self.service.stop(drain)
        if self.notifier is not None:
            self.notifier.stop()
        for watch in self.host_watches:
            watch.stop()
        self.notifications.stop()
        self.tray.dispose()
        if self._window is not None:
            self._window.close()
            self._window.deleteLater()
        return self.left_running

    def _host_notifier(self, parent: QObject) -> Notifier:
        clock = self.clock
        return start_notifiers(parent, now=clock.now_utc, monotonic=clock.monotonic,
                               boot_time=clock.boot_time, local_zone=host_zone)  # fmt: skip

    @staticmethod
    def _host_bus() -> QDBusConnection:
        return QDBusConnection.systemBus()

    def _watch_host(self) -> None:
        if not sys.platform.startswith("linux"):  # inhibitors: the fallback host's (DESIGN §14)
            # Imported here: Linux follows the network on the bus, and never loads QtNetwork
            # (bench_idle: "idle tray app: RSS").
            from coven_desktop.osnotify.reachability import watch_reachability

            self.reachability = watch_reachability(self.host)
            return
        bus = self._system_bus()
        self.host.inhibitor = logind_inhibitor(bus)
        self.host_watches = list(watch_host(self.host, bus, self))

    def _conditions_changed(self) -> None:
        """Power or network changed (any thread): a moment waiting for it is decided now."""
        self.service.scheduler.wake.set(WakeReason.CONDITIONS_CHANGED)

    def _on_os_event(self, event: OsEvent) -> None:
        """Sleep, clock steps and zone changes wake the scheduler at once; a zone change
        also asks, per routine created as ``local``, whether to keep its zone or follow."""
        reason = wake_reason_for(event)
        if reason is not None:
            self.service.scheduler.wake.set(reason)
        if event.kind == "timezone_changed" and event.new_zone:
            self._tasks.spawn(self._ask_about_zones(event.old_zone, event.new_zone))

    async def _ask_about_zones(self, old: str | None, new: str) -> None:
        choices = await self.service.call(lambda e: e.operator.record_zone_change(old, new))
        await self.service.refresh()  # the recorded change is news for every view
        for choice in choices:
            prompt = ZonePrompt(choice, self._follow, self.window)
            self.zone_prompts.append(prompt)
            prompt.open()  # non-modal: the tray keeps working

    def _follow(self, choice: ZoneChoice) -> None:
        self.act(lambda e: e.operator.follow_zone(choice.routine, choice.host_zone))

    def quit(self) -> asyncio.Future[int | None]:
        """Quit without freezing: the tray (and the window, if open) says what Quit waits
        for, the engine drains on its own threads while the event loop runs on, then the
        application quits. Asked again meanwhile, the same Quit goes on."""
        if self._quitting is None:
            self._say_waiting()
            self._quitting = self._quit_task.spawn(self._quit())
        return self._quitting

    async def _quit(self) -> int | None:
        left = await self.close(DRAIN_SECONDS)
        if left:
            log.warning("%s command(s) were still running; the next start adopts them", left)
        app = QApplication.instance()
        if app is not None:
            app.quit()
        return left

    def _say_waiting(self) -> None:
        running = self.overview.counts.running if self.overview is not None else 0
        self.tray.show_quitting(self._waiting_text(running))
        if self._window is not None and self._window.isVisible():
            self._window.statusBar().showMessage(self._waiting_text(running))

    def _waiting_text(self, running: int) -> str:
        seconds = f"{DRAIN_SECONDS:g}"
        if running == 1:
            return _(
                "Quitting: waiting for 1 running command… if it still runs after {seconds} s, "
                "it will be adopted at the next start"
            ).format(seconds=seconds)
        if running:
            return _(
                "Quitting: waiting for {count} running commands… those still running after "
                "{seconds} s will be adopted at the next start"
            ).format(count=running, seconds=seconds)
        return _("Quitting…")

    def start_at_login(self, on: bool) -> None:
        """Write or remove the autostart entry for this app on this store (DESIGN §12)."""
        try:
            if on:
                command = autostart.launch_command(["--data-dir", str(self.data_dir)])
                autostart.enable(command)
            else:
                autostart.disable()
        except (OSError, NotImplementedError) as error:
            self.tray.show_autostart(autostart.is_enabled())
            self._refused(str(error))

    def show_window(self, page: str | None = None) -> None:
        """Show the main window, on ``page`` if given; the first time on the Routines page, or
        a welcome while there are no routines yet. A welcome left open while the first routine
        came (added with ``coven routine add``, say) gives way to the Routines page: its "Add
        your first routine" is no longer true."""
        has_routines = self.overview is not None and bool(self.overview.routines)
        if page is None and not self.window.pages:
            page = "routines" if has_routines else "welcome"
        elif page is None and has_routines and self.window.page_shown == "welcome":
            page = "routines"
        if page is not None:
            self.window.show_page(page)
        self.window.show()
        self.window.raise_()
        self.window.activateWindow()
        forget_module_sources()  # the window's code and its page's were imported just now

    def open_run(self, occurrence_id: str) -> None:
        """Show one run's detail window (on its own: the main window stays as it is); the
        detail marks a failure seen (DESIGN §12)."""
        self.window.open_run(occurrence_id)

    def mark_seen(self, run: str) -> asyncio.Future[Any]:
        """A person looked at ``run`` (a run or occurrence id): its failure no longer counts
        in the tray, which is refreshed at once (marking seen wakes no scheduler, so no
        engine event would)."""
        return self.act(lambda e: e.operator.mark_seen(run))

    def _open_notice(self, shown: Shown) -> None:
        """A click on a notification: its run, else its page, else the window."""
        if shown.occurrence_id is not None:
            self.open_run(shown.occurrence_id)
        else:
            self.show_window(shown.page)

    # -- acting and refreshing --------------------------------------------------------------
    def run_now(self, name: str) -> asyncio.Future[Any]:
        """Run ``name`` once now; clicked again while that run waits (behind a running
        one), the same run: a click makes no second run of the same command."""
        return self.act(lambda e: e.operator.run_now(name, join_waiting=True))

    def act(self, work: Callable[[Engine], object]) -> asyncio.Future[Any]:
        """Run an operator call off the GUI thread; refresh afterwards; report refusals."""
        return self._tasks.spawn(self._act(work))

    async def settle(self) -> None:
        """Wait for every action and refresh in flight (tests, and an orderly quit)."""
        await self._tasks.settle()

    async def _act(self, work: Callable[[Engine], object]) -> object:
        if self._quitting is not None:  # the engine is stopping: start nothing new
            self._refused(_("Coven is quitting: nothing new is started"))
            return None
        try:
            result = await self.service.call(work)
        except CovenError as error:
            self._refused(str(error))
            return None
        begun = self._reads_begun
        await self.service.refresh()  # its events ask for a read of the overview…
        await self._read_since(begun)  # …which shows this action too: no second read
        return result

    def _refused(self, message: str) -> None:
        """Say a refusal where the person is: the window shows ``failed``; with no window
        open (a tray click), a notification says it."""
        self.failed.emit(message)
        if self._window is None or not self._window.isVisible():
            self.notifications.refused(message)

    def _read_since(self, begun: int) -> asyncio.Future[Overview]:
        """A read of the overview begun after ``begun`` reads had: the latest one if it did
        (news of the action, caught up by the scheduler's pass, may have asked for it
        first), else the next."""
        if self._reads_begun > begun and self._last_read is not None:
            return self._last_read
        return self.refresh()

    def refresh(self) -> asyncio.Future[Overview]:
        """Read the overview and show it. Asked for again before that read has begun (an
        action's own refresh, and the one its events ask for), the same read answers both:
        it begins after both asked, so it sees everything either wants shown."""
        if self._next_read is None:
            self._next_read = self._tasks.spawn(self._read_overview())
        return self._next_read

    async def _read_overview(self) -> Overview:
        self._last_read, self._next_read = self._next_read, None  # news now needs a new read
        self._reads_begun += 1
        token = self.service.scheduler.holder.token
        now = self.clock.now_utc()
        current = await self.service.call(lambda e: queries.overview(e.store, now, token))
        self.overview = current
        self.tray.update(current, now, self.locale)
        self.overviewChanged.emit(current)
        return current

    def _on_events(self, new: list[Event]) -> None:
        if new:
            self._tasks.spawn(self.notifications.consider(new))
            self.refresh()
