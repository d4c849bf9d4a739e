"""``coven-desktop``: start the tray app, or hand over to the one already running."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
import traceback
from collections.abc import Sequence

import qasync
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QMessageBox

from coven_core.cli.argparse_words import in_our_words
from coven_core.engine import (
    STOP_SIGNALS,
    activate_tzdb,
    add_log_level_option,
    default_clock,
    prepare_data_dir,
    resolve_data_dir,
    start_logging,
)
from coven_core.errors import CovenError
from coven_core.queries import _
from coven_desktop import APP_NAME
from coven_desktop.desktop import Desktop
from coven_desktop.instance import InstanceServer, hand_over, server_name

__all__ = ["APP_NAME", "main"]

log = logging.getLogger(__name__)

#: Qt platforms with no screen: nobody could read a window there (tests, smoke tests).
_NO_SCREEN = ("offscreen", "minimal")
_REFUSALS: list[QMessageBox] = []


def _arguments(argv: Sequence[str]) -> argparse.Namespace:
    with in_our_words():  # its help and refusals in the reader's language, as `coven`'s
        parser = argparse.ArgumentParser(prog="coven-desktop", description=APP_NAME)
        parser.add_argument("--data-dir", metavar="DIR", help=_("where the store lives"))
        parser.add_argument(
            "--quit-after-ready", action="store_true",
            help=_("start fully, print what is running as one JSON line, then quit (a smoke "
                   "test for installed bundles)"),
        )  # fmt: skip
        add_log_level_option(parser)
        return parser.parse_args(list(argv))


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(sys.argv[1:] if argv is None else argv)
    activate_tzdb()
    try:
        data_dir = prepare_data_dir(resolve_data_dir(args.data_dir))
    except CovenError as error:
        if (box := refuse(str(error))) is not None:
            box.exec()  # before any loop runs: a plain modal one
        return 2
    app = QApplication(sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setQuitOnLastWindowClosed(False)  # the tray keeps running
    name = server_name(data_dir)
    if hand_over(name, list(sys.argv[1:])):
        return 0  # the running instance shows its window
    start_logging(data_dir, args.log_level)
    log.info("coven-desktop %s: starting on the store in %s", os.getpid(), data_dir)
    return _run(app, data_dir, name, quit_after_ready=args.quit_after_ready)


def _run(app: QApplication, data_dir: object, name: str, *, quit_after_ready: bool) -> int:
    """Run the loop until :meth:`Desktop.quit` quits the application (the tray's Quit, a stop
    signal, ``--quit-after-ready``); its code. One run of the loop for the app's whole life:
    Quit ends it, so nothing has to finish after the application has quit."""
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    desktop = Desktop(data_dir, default_clock())  # type: ignore[arg-type]
    instance = InstanceServer(name, desktop)
    instance.activated.connect(lambda _arguments: desktop.show_window())
    with loop:
        _quit_on_stop_signals(loop, desktop)
        started = loop.create_task(_start(desktop, quit_after_ready=quit_after_ready))
        code = loop.run_forever()
    instance.close()
    return code if started.done() else 1


async def _start(desktop: Desktop, *, quit_after_ready: bool) -> None:
    """Start; a start that fails says why on stderr (and in the log) and exits: 2 for what
    Coven refuses (a store of a newer version, say), 1 for anything else."""
    try:
        await desktop.start()
    except CovenError as error:
        log.error("coven-desktop could not start: %s", error)
        _exit_when_read(refuse(str(error)), 2)
        return
    except Exception:
        log.exception("coven-desktop could not start")
        traceback.print_exc()
        QApplication.exit(1)
        return
    if quit_after_ready:
        print(json.dumps(readiness(desktop)), flush=True)
        desktop.quit()


def refuse(message: str) -> QMessageBox | None:
    """Say why the app cannot start: on stderr, and in a window where there is a screen to
    show one on (returned, open) — started from a menu or at login, nobody reads stderr,
    and the app would just not be there."""
    print(f"coven-desktop: {message}", file=sys.stderr, flush=True)  # first: Qt may need a display
    QApplication.instance() or QApplication(sys.argv[:1])
    if QGuiApplication.platformName() in _NO_SCREEN:
        return None
    box = refusal_box(message)
    box.open()
    return box


def _exit_when_read(box: QMessageBox | None, code: int) -> None:
    """Quit with ``code`` once the refusal is closed (at once without one). Not ``exec()``:
    a nested loop inside a qasync task would run other tasks re-entrantly."""
    if box is None:
        QApplication.exit(code)
        return
    _REFUSALS.append(box)  # kept alive until the app quits
    box.finished.connect(lambda _result: QApplication.exit(code))


def refusal_box(message: str) -> QMessageBox:
    box = QMessageBox(QMessageBox.Icon.Critical, APP_NAME, _("Coven could not start."),
                      QMessageBox.StandardButton.Close)  # fmt: skip
    box.setInformativeText(message)
    box.button(QMessageBox.StandardButton.Close).setText(_("Close"))  # Qt's words come later
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)  # a command to copy
    return box


def readiness(desktop: Desktop) -> dict[str, object]:
    """What a started app shows: its state, its window, and whether its icons render (an
    installation without the SVG plugin or the icon files shows blank icons)."""
    state = desktop.overview.state.value if desktop.overview is not None else None
    return {
        "ready": True,
        "state": state,
        "window_shown": desktop.window.isVisible(),
        "tray_icon_renders": not desktop.tray.icon.icon().pixmap(22, 22).isNull(),
        "window_icon_renders": not desktop.window.windowIcon().pixmap(64, 64).isNull(),
        "data_dir": str(desktop.data_dir),
    }


def _quit_on_stop_signals(loop: asyncio.AbstractEventLoop, desktop: Desktop) -> None:
    """Each of the engine's ``STOP_SIGNALS`` acts as Quit.

    Through the loop's ``add_signal_handler``: a plain ``signal.signal`` handler runs only when
    the interpreter gets control, which an idle Qt event loop may not give it for a long time;
    the loop's handler writes to a wakeup fd that qasync watches, so the loop wakes at once.
    The loop removes the handlers when it closes.
    """
    for name in STOP_SIGNALS:
        loop.add_signal_handler(getattr(signal, name), _stop_requested, desktop, name)


def _stop_requested(desktop: Desktop, name: str) -> None:
    log.info("%s received: quitting", name)
    desktop.quit()  # drains (bounded, off the GUI thread), closes the store, quits the app


if __name__ == "__main__":
    sys.exit(main())
