"""The desktop app starts offscreen and shows its main window."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import apsw
import pytest
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from coven_core.engine import open_engine
from coven_desktop import APP_NAME, app
from coven_desktop.app import _arguments
from coven_desktop.app_window import MainWindow
from tests.system.conftest import wait_for


def test_main_window_names_the_engine_and_tz_database(qtbot: QtBot) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.windowTitle() == APP_NAME
    assert "tz database" in window.engine_info.text()


@pytest.mark.parametrize("tz", [None, "/etc/passwd"], ids=["own-tz", "odd-tz"])
def test_quit_after_ready_starts_fully_reports_and_quits(tmp_path: Path, tz: str | None) -> None:
    """The smoke test installed bundles get (tests/packaging runs it on the frozen app); an
    odd TZ, which Babel cannot read, does not stop the app (issue 19)."""
    data = tmp_path / "data"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", **({"TZ": tz} if tz else {})}
    started = subprocess.run(
        [sys.executable, "-m", "coven_desktop.app", "--data-dir", str(data), "--quit-after-ready"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    report = json.loads(started.stdout.strip().splitlines()[-1])
    assert report == {
        "ready": True, "state": "idle", "window_shown": True, "tray_icon_renders": True,
        "window_icon_renders": True, "data_dir": str(data),
    }  # fmt: skip
    assert "Traceback" not in started.stderr


def _sockets(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*") if path.is_socket()]


def _shutdowns_recorded(data: Path) -> int:
    engine = open_engine(data)
    try:
        (count,) = engine.store.conn.execute(
            "SELECT count(*) FROM events WHERE kind = 'shutdown'"
        ).fetchone()
    finally:
        engine.close()
    return int(count)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_stop_signal_quits_like_quit(tmp_path: Path, stop: signal.Signals) -> None:
    """A logout sends SIGTERM (or SIGHUP): drain, remove the sockets, close the store, exit 0."""
    data = tmp_path / "data"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    env.pop("XDG_RUNTIME_DIR", None)  # the instance socket then lives in the data directory
    app = subprocess.Popen(
        [sys.executable, "-m", "coven_desktop.app", "--data-dir", str(data)], env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        # Ready: the instance socket and the scheduler's wake socket are both listening.
        assert wait_for(lambda: len(_sockets(data)) == 2), app.stderr
        app.send_signal(stop)
        assert app.wait(timeout=60) == 0, app.stderr.read() if app.stderr else ""
    finally:
        app.kill()
        app.wait()
    assert _sockets(data) == []
    assert f"{stop.name} received: quitting" in (data / "logs" / "coven.log").read_text()
    assert _shutdowns_recorded(data) == 1


@pytest.mark.parametrize(
    ("language", "said", "not_said"),
    [("de_DE.UTF-8", ["Optionen:", "wo der Datenspeicher liegt", "die niedrigste Stufe"],
      ["options:", "where the store lives", "the least severe records"]),
     ("C.UTF-8", ["options:", "where the store lives", "the least severe records"],
      ["Optionen:", "wo der Datenspeicher liegt", "die niedrigste Stufe"])],
)  # fmt: skip
def test_its_help_is_one_language(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    language: str,
    said: list[str],
    not_said: list[str],
) -> None:
    """``coven-desktop -h`` as ``coven -h``: argparse's words and ours in the reader's language."""
    monkeypatch.setenv("LC_ALL", language)
    with pytest.raises(SystemExit):
        _arguments(["--help"])
    words = " ".join(capsys.readouterr().out.split())
    assert [text for text in said if text not in words] == [], words
    assert [text for text in not_said if text in words] == [], words


#: ``coven-desktop`` whose start ends with a click on the tray's Quit.
_QUIT_FROM_THE_TRAY = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtGui import QAction
from coven_desktop.app import main
from coven_desktop.desktop import Desktop

start = Desktop.start

async def start_then_quit_from_the_tray(desktop):
    await start(desktop)
    QTimer.singleShot(0, desktop.tray.menu.findChild(QAction, "quit").trigger)

Desktop.start = start_then_quit_from_the_tray
sys.exit(main(sys.argv[1:]))
"""


def test_quit_from_the_tray_drains_closes_and_ends_the_app(tmp_path: Path) -> None:
    """Exit 0, the sockets gone, the shutdown recorded: on a real display the tray's Quit
    once ended in "Event loop stopped before Future completed", its socket left behind."""
    data = tmp_path / "data"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    env.pop("XDG_RUNTIME_DIR", None)  # the instance socket then lives in the data directory
    ended = subprocess.run(
        [sys.executable, "-c", _QUIT_FROM_THE_TRAY, "--data-dir", str(data)],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert ended.returncode == 0, ended.stderr
    assert "Traceback" not in ended.stderr
    assert _sockets(data) == []
    assert _shutdowns_recorded(data) == 1


def test_a_store_it_cannot_open_is_named_on_stderr_and_left_as_it_was(tmp_path: Path) -> None:
    """A store of a newer Coven: the engine's one-line refusal, exit 2, no traceback, and the
    store untouched (its version as it was)."""
    data = tmp_path / "data"
    open_engine(data).close()
    store = apsw.Connection(str(data / "coven.db"))
    newer = (99 << 16) | 0  # a major version this Coven does not know
    store.execute(f"PRAGMA user_version = {newer}")
    store.close()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    ended = subprocess.run(
        [sys.executable, "-m", "coven_desktop.app", "--data-dir", str(data)],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert ended.returncode == 2, ended.stderr
    assert ended.stderr.startswith("coven-desktop: ") and "newer Coven" in ended.stderr
    assert "Traceback" not in ended.stderr
    store = apsw.Connection(str(data / "coven.db"))
    assert store.execute("PRAGMA user_version").fetchone() == (newer,)
    store.close()


def test_a_refused_start_is_said_in_a_window_where_there_is_a_screen(
    monkeypatch: pytest.MonkeyPatch, qtbot: QtBot, capsys: pytest.CaptureFixture[str]
) -> None:
    """Started from the menu or at login, a refusal on stderr alone meant an app that was
    simply not there. Offscreen has no screen, so the test lets it count as one."""
    monkeypatch.setattr(app, "_NO_SCREEN", ())
    told = "/home/me/data has permissions 0755; … Run: chmod 700 /home/me/data"
    box = app.refuse(told)
    assert box is not None
    qtbot.addWidget(box)
    assert box.isVisible() and box.text() == "Coven could not start."
    assert box.informativeText() == told
    assert capsys.readouterr().err == f"coven-desktop: {told}\n"  # stderr still says it
    exits: list[int] = []
    monkeypatch.setattr(app.QApplication, "exit", staticmethod(exits.append))
    app._exit_when_read(box, 2)
    assert exits == []  # not before it is read
    box.button(QMessageBox.StandardButton.Close).click()
    assert exits == [2] and not box.isVisible()


def test_with_no_screen_a_refusal_is_only_said_on_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert app.refuse("the store is locked") is None  # offscreen: nobody could read a window
    assert capsys.readouterr().err == "coven-desktop: the store is locked\n"
