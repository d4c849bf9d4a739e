"""The baseline of ``bench_idle``: a bare PySide6 app with a tray icon shown and nothing else.

It prints ``ready`` once its event loop is about to block for the first time, and quits when a
line arrives on its standard input or it closes. The two helpers that do this are shared with
``idle_app`` so that both sides announce and stop the same way.

With ``--with-engine`` it first imports what the contract puts in the app's process and
the app cannot do without before it is ready — qasync (and asyncio) and the engine's
scheduler and runner runtime — does nothing with them, and runs its loop through qasync with one
callback, as any app on qasync does: the floor the real app is measured against. (qasync's
first callback is not free: its timer's ``killTimer`` makes PySide 6.8+ build the whole ``Qt``
namespace, ~100 enums, to resolve the overload that takes a ``Qt.TimerId``.) The operator
API is not in it: the engine builds it on first use (``Engine.operator``), the tray's start
never does (``test_a_tray_start_loads_only_what_the_tray_needs``), and importing it brought
its views along (about 2 MiB and 20 modules), a floor above what the app pays.

``idle_floor`` runs it so, with the engine loaded before Qt, as the app loads it.

Run: python3 -m benchmarks.idle_bare   (from the repository root)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QAbstractEventDispatcher, QSocketNotifier
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

#: The app's own idle tray icon, so both sides load the same image (and the SVG plugin).
ICON = Path(__file__).resolve().parents[1] / "icons" / "tray-idle.svg"


def when_idle(callback: Callable[[], None]) -> None:
    """Call ``callback`` once, the first time the event loop is about to block."""
    dispatcher = QAbstractEventDispatcher.instance()
    assert dispatcher is not None, "create the QApplication first"

    def once() -> None:
        dispatcher.aboutToBlock.disconnect(once)
        callback()

    dispatcher.aboutToBlock.connect(once)


def quit_on_stdin(quit_: Callable[[], None]) -> QSocketNotifier:
    """Call ``quit_`` when standard input becomes readable (a line, or closed): no polling.
    Keep the returned notifier alive."""
    notifier = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Type.Read)

    def read() -> None:
        notifier.setEnabled(False)
        quit_()

    notifier.activated.connect(read)
    return notifier


def announce_ready() -> None:
    print("ready", flush=True)


#: What ``--with-engine`` imports (see the module's docstring).
ENGINE_MODULES = ("qasync", "coven_core.engine", "coven_core.scheduling.scheduler",
                  "coven_core.runtime.runner")  # fmt: skip


def main(argv: list[str]) -> int:
    app = QApplication(sys.argv[:1])
    with_engine = "--with-engine" in argv
    for module in ENGINE_MODULES if with_engine else ():
        importlib.import_module(module)
    app.setQuitOnLastWindowClosed(False)
    tray = QSystemTrayIcon(QIcon(str(ICON)), app)
    tray.show()
    stdin = quit_on_stdin(app.quit)
    when_idle(announce_ready)
    code = _run_on_qasync(app) if with_engine else app.exec()
    stdin.setEnabled(False)
    return code


def _run_on_qasync(app: QApplication) -> int:
    import asyncio  # here: the bare app imports no more than PySide6

    qasync = importlib.import_module("qasync")
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    loop.call_soon(lambda: None)  # the first callback, as the app's start is
    with loop:
        return int(loop.run_forever())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
