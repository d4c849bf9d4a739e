"""The real app object on a temp store: tray clicks go through the operator API (issue #7)."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QByteArray, QSize, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox, QSystemTrayIcon
from pytestqt.qtbot import QtBot

from coven_core import queries
from coven_core.clock import VirtualClock
from coven_core.engine import open_engine
from coven_core.events import EventKind
from coven_core.integrity import audit
from coven_core.model import RevisionSpec
from coven_core.scheduling.scheduler import Limits
from coven_core.views.overview import TrayState
from coven_desktop.app_window import PLACE, MainWindow, default_size
from coven_desktop.desktop import Desktop
from coven_desktop.instance import InstanceServer, server_name
from coven_desktop.preferences import Preferences
from tests.desktop.conftest import T0
from tests.desktop.helpers import add, wait_for_event


def submenu(desktop: Desktop, title: str):  # type: ignore[no-untyped-def]
    menu = next(a.menu() for a in desktop.tray.menu.actions() if a.menu() and a.text() == title)
    menu.aboutToShow.emit()  # submenus are filled when they open
    return menu


def menu_action(desktop: Desktop, text: str, submenu: str | None = None):  # type: ignore[no-untyped-def]
    menu = desktop.tray.menu if submenu is None else globals()["submenu"](desktop, submenu)
    return next(a for a in menu.actions() if a.text() == text)


def test_no_tray_offscreen_so_the_window_opens(desktop: Desktop) -> None:
    assert desktop.window.isVisible()
    assert desktop.overview is not None and desktop.overview.state.value == "idle"


def test_the_window_opens_as_large_as_a_person_left_it(desktop: Desktop) -> None:
    window = desktop.window
    first = default_size(window.screen().availableGeometry().size())
    assert window.size() == first  # nothing saved yet: the default
    window.resize(720, 520)
    window.close()  # closed by the person; the app goes on in the tray
    assert stat.S_IMODE(os.stat(desktop.data_dir / "desktop.ini").st_mode) == 0o600
    again = MainWindow(desktop)  # as the next time builds it
    try:
        assert (again.width(), again.height()) == (720, 520)
    finally:
        again.deleteLater()


@pytest.mark.parametrize("saved", ["a place", QByteArray(b"not Qt's geometry")])
def test_a_saved_place_that_cannot_be_read_leaves_the_default_size(
    desktop: Desktop, saved: object
) -> None:
    desktop.window.close()
    Preferences(desktop.data_dir).set(PLACE, saved)
    again = MainWindow(desktop)
    try:
        assert again.size() == default_size(again.screen().availableGeometry().size())
    finally:
        again.deleteLater()


@pytest.mark.parametrize(
    ("screen", "first"),
    [
        ((1600, 1000), (1200, 800)),  # roomy where there is room
        ((1920, 1050), (1280, 840)),  # and no bigger than that on a larger screen
        ((1366, 740), (1024, 680)),  # a laptop: never below the size it always had
        ((800, 600), (800, 600)),  # a small screen: never past it
    ],
)
def test_the_first_opening_fits_the_screen(screen: tuple[int, int], first: tuple[int, int]) -> None:
    assert default_size(QSize(*screen)) == QSize(*first)


def test_a_welcome_left_open_gives_way_to_the_routines_once_there_is_one(
    desktop: Desktop, loop: qasync.QEventLoop
) -> None:
    window = desktop.window
    assert window.page_shown == "welcome"  # no routine yet
    window.close()
    add(desktop, loop, "backup")  # as `coven routine add` would, while the window is closed
    desktop.show_window()  # from the tray, or a second launch
    loop.run_until_complete(window.settle())
    assert window.page_shown == "routines"
    assert window.stack.currentWidget() is window.pages["routines"]
    desktop.show_window("welcome")  # asked for by name, it is still there
    assert window.page_shown == "welcome"


def test_pause_from_the_tray_menu_is_done_and_audited(desktop: Desktop, loop) -> None:  # type: ignore[no-untyped-def]
    add(desktop, loop, "backup")
    menu_action(desktop, "Pause", submenu="backup").trigger()
    loop.run_until_complete(desktop.settle())

    def check(engine):  # type: ignore[no-untyped-def]
        state = engine.store.conn.execute("SELECT state FROM routines").fetchone()[0]
        with engine.store.read() as conn:
            latest = audit.entries(conn, limit=1)[0]
        return state, latest.action, latest.target, latest.result

    assert loop.run_until_complete(desktop.service.call(check)) == (
        "paused",
        "pause",
        "backup",
        "ok",
    )
    assert menu_action(desktop, "Resume", submenu="backup") is not None


def test_cancel_from_the_tray_asks_then_stops_a_real_command(desktop: Desktop, loop) -> None:  # type: ignore[no-untyped-def]
    add(desktop, loop, "slow", "/bin/sleep", "30")
    menu_action(desktop, "Run now", submenu="slow").trigger()
    wait_for_event(desktop, loop, lambda e: e.kind is EventKind.STARTED)
    loop.run_until_complete(desktop.refresh())
    running = next(a.menu() for a in desktop.tray.menu.actions() if a.text() == "Running (1)")
    (cancel,) = running.actions()
    assert cancel.text().startswith("Cancel slow (since ")
    cancel.trigger()
    box = desktop.tray.confirmation
    assert box is not None
    next(b for b in box.buttons() if b.text() == "Cancel the run").click()
    settled = wait_for_event(desktop, loop, lambda e: e.kind is EventKind.SETTLED)
    assert settled.data["disposition"] == "cancelled", settled.data


def test_a_second_launch_hands_over_and_exits(
    qtbot: QtBot, loop: qasync.QEventLoop, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    server = InstanceServer(server_name(data))
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    with qtbot.waitSignal(server.activated, timeout=20000) as activated:
        second = subprocess.Popen(
            [sys.executable, "-m", "coven_desktop.app", "--data-dir", str(data)], env=env
        )
    assert second.wait(20) == 0
    assert activated.args == [["--data-dir", str(data)]]
    server.close()


def test_needs_attention_in_the_tray_opens_that_window(desktop: Desktop, loop) -> None:  # type: ignore[no-untyped-def]
    desktop.tray.attentionRequested.emit()
    loop.run_until_complete(desktop.window.settle())
    window = desktop.window
    assert window.stack.currentWidget() is window.pages["reconciliation"]
    assert window.isVisible()


def test_one_click_reads_the_overview_once(desktop: Desktop, loop, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A click's news (its events) and its own refresh share one read of the overview."""
    add(desktop, loop, "backup")
    loop.run_until_complete(desktop.service.refresh())  # the addition's news, delivered now
    loop.run_until_complete(desktop.settle())
    reads, shown = [], []
    read = queries.overview

    def counted(*args: object) -> object:
        reads.append(args)
        return read(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(queries, "overview", counted)
    desktop.overviewChanged.connect(shown.append)
    menu_action(desktop, "Pause", submenu="backup").trigger()
    loop.run_until_complete(desktop.settle())
    assert (len(reads), len(shown)) == (1, 1)
    assert shown[0].routines[0].state.value == "paused"


def top_level(desktop: Desktop) -> list[str]:
    """The menu's top-level items by role (object names), in order."""
    return [
        (a.menu() or a).objectName() for a in desktop.tray.menu.actions() if not a.isSeparator()
    ]


def test_the_menu_keeps_its_order_while_a_real_command_runs(desktop: Desktop, loop) -> None:  # type: ignore[no-untyped-def]
    add(desktop, loop, "slow", "/bin/sleep", "30")
    add(desktop, loop, "backup")
    calm = top_level(desktop)
    menu_action(desktop, "Run now", submenu="slow").trigger()
    wait_for_event(desktop, loop, lambda e: e.kind is EventKind.STARTED)
    loop.run_until_complete(desktop.refresh())
    assert desktop.tray.state is TrayState.RUNNING
    assert top_level(desktop) == calm
    assert menu_action(desktop, "Running (1)").isEnabled()
    run_id = desktop.overview.running[0].run_id  # type: ignore[union-attr]
    cancel = desktop.act(lambda e: e.operator.cancel(run_id))
    wait_for_event(desktop, loop, lambda e: e.kind is EventKind.SETTLED, doing=cancel)
    loop.run_until_complete(desktop.refresh())
    assert top_level(desktop) == calm
    assert not menu_action(desktop, "Running (0)").isEnabled()


FAILING = ("/bin/sh", "-c", "echo sending files; echo 'rsync: connection refused' >&2; exit 1")


@pytest.fixture
def shown(desktop: Desktop, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """The notifications the app shows: (title, body)."""
    told: list[tuple[str, str]] = []
    monkeypatch.setattr(desktop.notifications, "_show",
                        lambda title, body, _warning: told.append((title, body)))  # fmt: skip
    return told


def test_a_failed_run_turns_the_tray_to_error_and_its_notification_opens_it(
    desktop: Desktop, loop: qasync.QEventLoop, shown: list[tuple[str, str]]
) -> None:
    add(desktop, loop, "backup", *FAILING)
    menu_action(desktop, "Run now", submenu="backup").trigger()
    settled = wait_for_event(desktop, loop, lambda e: e.kind is EventKind.SETTLED)
    loop.run_until_complete(desktop.settle())
    assert desktop.tray.state is TrayState.ERROR
    assert desktop.tray.icon.toolTip().splitlines()[1].startswith("1 failed; next: ")
    assert shown == [("backup failed", "exit 1: rsync: connection refused")]
    desktop.tray.icon.messageClicked.emit()
    detail = desktop.window.run_windows[settled.occurrence_id]  # the real detail window
    loop.run_until_complete(detail.settle())
    loop.run_until_complete(desktop.settle())
    assert (
        detail.isVisible()
        and "rsync: connection refused" in detail.output.stderr.text.toPlainText()
    )
    assert desktop.tray.state is TrayState.IDLE  # opening it marked it seen
    assert desktop.overview is not None and desktop.overview.counts.failed_unseen == 0


def test_a_refused_tray_action_is_a_notification_while_no_window_is_open(
    desktop: Desktop, loop: qasync.QEventLoop, shown: list[tuple[str, str]]
) -> None:
    refusals: list[str] = []
    desktop.failed.connect(refusals.append)
    add(desktop, loop, "sync")
    loop.run_until_complete(desktop.act(lambda e: e.operator.quarantine("sync", "by hand")))
    assert "Run now" not in [a.text() for a in submenu(desktop, "sync").actions()]
    desktop.window.hide()
    stale = desktop.tray.runNowRequested  # a menu opened before the quarantine: Run now
    stale.emit("sync")
    loop.run_until_complete(desktop.settle())
    assert len(refusals) == 1 and "quarantined" in refusals[0]
    assert shown == [("sync quarantined", "by hand"), ("Coven could not do that", refusals[0])]
    desktop.show_window()  # with the window open, the window says it (and no notification)
    stale.emit("sync")
    loop.run_until_complete(desktop.settle())
    assert len(refusals) == 2 and len(shown) == 2


def test_quit_with_a_running_command_leaves_the_event_loop_running(
    tmp_path: Path, loop: qasync.QEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    quits: list[bool] = []
    monkeypatch.setattr(QApplication, "quit", staticmethod(lambda: quits.append(True)))
    desktop = Desktop(tmp_path / "data", VirtualClock(T0, autojump=False),
                      limits=Limits(drain_timeout=1.5))  # fmt: skip
    loop.run_until_complete(desktop.start())
    try:
        add(desktop, loop, "slow", "/bin/sleep", "4")
        menu_action(desktop, "Run now", submenu="slow").trigger()
        wait_for_event(desktop, loop, lambda e: e.kind is EventKind.STARTED)
        loop.run_until_complete(desktop.refresh())
        ticks: list[float] = []
        timer = QTimer()
        timer.timeout.connect(lambda: ticks.append(time.monotonic()))
        timer.start(20)
        began = time.monotonic()
        quitting = desktop.quit()
        assert desktop.quit() is quitting  # asked twice: one Quit
        waiting = desktop.tray.icon.toolTip()
        assert "waiting for 1 running command" in waiting and "next start" in waiting
        assert desktop.window.statusBar().currentMessage() == waiting.splitlines()[1]
        left = loop.run_until_complete(quitting)
        timer.stop()
        assert time.monotonic() - began >= 1.4  # it did wait for the command…
        assert len(ticks) >= 5  # …and the event loop ran meanwhile (blocked: one tick at most)
        assert left == 1 and quits == [True]
    finally:
        loop.run_until_complete(desktop.close(5))
        desktop.deleteLater()
        loop.run_until_complete(asyncio.sleep(0))


# The offscreen platform has no tray to embed into: Qt says so when the icon is shown.
@pytest.mark.qt_log_ignore("No such signal QPlatformNativeInterface::systemTrayWindowChanged")
def test_a_first_start_with_a_tray_opens_the_welcome(
    tmp_path: Path, loop: qasync.QEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(QSystemTrayIcon, "isSystemTrayAvailable", staticmethod(lambda: True))
    desktop = Desktop(tmp_path / "data", VirtualClock(T0, autojump=False))
    loop.run_until_complete(desktop.start())
    try:
        assert desktop.tray.icon.isVisible()
        assert desktop.window.isVisible()
        assert desktop.window.stack.currentWidget() is desktop.window.pages["welcome"]
        add(desktop, loop, "backup")
    finally:
        loop.run_until_complete(desktop.close(5))
    again = Desktop(tmp_path / "data", VirtualClock(T0, autojump=False))
    loop.run_until_complete(again.start())
    try:  # with a routine, the tray alone: the window waits to be asked for
        assert again.tray.icon.isVisible() and again._window is None
    finally:
        loop.run_until_complete(again.close(5))
    for built in (desktop, again):
        built.deleteLater()
    loop.run_until_complete(asyncio.sleep(0))


def test_qt_speaks_the_apps_language(desktop: Desktop) -> None:
    """Qt's own words (a standard button) follow Desktop.locale, like ours (gettext)."""
    desktop.locale = "de_DE"
    box = QMessageBox()
    try:
        assert box.addButton(QMessageBox.StandardButton.Cancel).text() == "Abbrechen"
        assert queries._("Needs attention") == "Handlungsbedarf"
        desktop.locale = "en_US"
        assert box.addButton(QMessageBox.StandardButton.Close).text() == "Close"
        assert queries._("Needs attention") == "Needs attention"
    finally:
        box.deleteLater()


#: A tray start in a fresh process (the tray shown, as on a desktop): what it has loaded once
#: start() is done, and which source files linecache still holds.
_TRAY_READY = """
import coven_desktop  # first, as the app's entry point loads its package
import asyncio, json, linecache, sys
from pathlib import Path
import qasync
from PySide6.QtWidgets import QApplication, QSystemTrayIcon
from coven_core.clock import SystemClock
from coven_desktop.desktop import Desktop
QSystemTrayIcon.isSystemTrayAvailable = staticmethod(lambda: True)
app = QApplication(sys.argv[:1])
loop = qasync.QEventLoop(app)
asyncio.set_event_loop(loop)
desktop = Desktop(Path(sys.argv[1]), SystemClock())
async def start() -> None:
    await desktop.start()
    loaded = {"modules": sorted(sys.modules), "sources": sorted(linecache.cache)}
    await desktop.close(5)
    print(json.dumps(loaded), flush=True)
with loop:
    loop.run_until_complete(start())
"""


def test_the_app_loads_the_engine_before_qt() -> None:
    """Once PySide6 is loaded, its import hook reads the source of every module an import
    names; what the app loads before it is not read (bench_idle: "launch to tray ready")."""
    code = "import json, sys; import coven_desktop.app; print(json.dumps(list(sys.modules)))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True)  # fmt: skip
    order = json.loads(run.stdout)
    before_qt = ("asyncio", "coven_core.engine", "coven_core.queries",
                 "coven_core.scheduling.scheduler", "coven_core.runtime.runner")  # fmt: skip
    assert [name for name in before_qt if order.index(name) > order.index("PySide6")] == []


def test_the_app_reads_no_modules_source_on_import(tmp_path: Path) -> None:
    """Where PySide6's import hook has the shape ``quiet_feature_hook`` knows, a module
    imported after the app is not read for its source (bench_idle: "launch to tray ready")."""
    (tmp_path / "late_module.py").write_text("VALUE = 1\n")
    code = ("import linecache, sys; import coven_desktop.app, coven_desktop as app; "
            "import late_module; "
            "print(app.quiet_feature_hook(), late_module.__file__ in linecache.cache)")  # fmt: skip
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True, env=env)  # fmt: skip
    quieted, read = run.stdout.split()
    if quieted == "False":
        pytest.skip("this PySide6 has no feature hook of the shape the app quiets")
    assert read == "False"


def test_asyncio_is_imported_without_openssl_which_stays_importable() -> None:
    """The app never opens a TLS stream, so asyncio loads without ``ssl`` (bench_idle: "launch
    to tray ready", "idle tray app: RSS"); a loop still runs, and ``ssl`` still imports for
    whatever needs it later."""
    code = ("import sys, coven_desktop, asyncio; loaded = 'ssl' in sys.modules; "
            "print(loaded, asyncio.run(asyncio.sleep(0, 'ran'))); "
            "import ssl; print(ssl.create_default_context() is not None)")  # fmt: skip
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True)  # fmt: skip
    assert run.stdout.split() == ["False", "ran", "True"]


def test_quieting_the_feature_hook_leaves_another_shape_of_it_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from coven_desktop import quiet_feature_hook

    monkeypatch.delitem(sys.modules, "PySide6.support.feature")
    assert quiet_feature_hook() is False  # no hook at all
    stand_in = types.ModuleType("PySide6.support.feature")
    monkeypatch.setitem(sys.modules, "PySide6.support.feature", stand_in)
    assert quiet_feature_hook() is False  # a hook without the check it replaces
    stand_in._mod_uses_pyside = lambda module: True  # type: ignore[attr-defined]
    assert quiet_feature_hook() is True
    assert stand_in._mod_uses_pyside(sys) is False  # type: ignore[attr-defined]


#: What a tray start must not load (bench_idle: "launch to tray ready", "idle tray app: RSS"):
#: each is loaded when first used.
NOT_AT_TRAY_READY = (
    "coven_desktop.app_window",  # the windows: when first shown
    "coven_desktop.windows",
    "coven_core.operator",  # the operator API: at the first action
    "psutil",  # only a stop waits on a process with it (operations.stopping)
    "coven_core.views.attention",  # a run's evidence: when a person looks, or a notice tells
    "coven_core.views.runs",
    "coven_core.views.preview",  # a schedule's next moments: the editor's, explain's
    "ssl",  # OpenSSL: asyncio is imported without it (coven_desktop.import_asyncio_without_tls)
)


def test_a_tray_start_loads_only_what_the_tray_needs(tmp_path: Path) -> None:
    data = tmp_path / "data"
    engine = open_engine(data)
    try:  # a routine: the tray alone, no welcome window
        engine.operator.add_routine("backup", RevisionSpec("0 3 * * *", "UTC", ("/bin/true",)))
    finally:
        engine.close()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    started = subprocess.run([sys.executable, "-c", _TRAY_READY, str(data)], env=env,
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert started.returncode == 0, started.stderr
    loaded = json.loads(started.stdout.strip().splitlines()[-1])
    assert [name for name in NOT_AT_TRAY_READY if name in loaded["modules"]] == []
    # The sources PySide6 read while the tray's modules were imported are not kept.
    assert not [path for path in loaded["sources"] if path.endswith("desktop.py")]
