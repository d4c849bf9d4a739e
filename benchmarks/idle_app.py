"""The app side of ``bench_idle``: the real :class:`~coven_desktop.desktop.Desktop` on a data
dir, with the real :class:`~coven_core.clock.SystemClock`, on a qasync loop.

It starts as ``coven_desktop.app`` does (the same QApplication settings, the single-instance
server, the engine service, the tray or — without a tray — the main window), then prints the
Python threads as ``threads {native id: name}`` and ``ready`` once ``start()`` has completed
and the loop has been idle once. A line on standard input (or its closing) quits through
:meth:`Desktop.quit`, which drains the engine. The hooks live here, not in the app.

With ``--as-if-tray`` the app is told a system tray exists (``isSystemTrayAvailable``
answers True), so it takes the path it takes on a desktop — the tray icon shown, no window —
as the bare baseline does; offscreen has no tray, and without the flag the app falls back
to its main window. Nothing else changes.

Run: python3 -m benchmarks.idle_app DATA_DIR [--as-if-tray]   (from the repository root)
"""

from __future__ import annotations

# First, as in the app (whose package this is): asyncio, the engine, then Qt (its __init__).
import coven_desktop  # noqa: F401

# isort: split
import asyncio
import json
import sys
import threading
import traceback
from pathlib import Path

import qasync
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from benchmarks.idle_bare import announce_ready, quit_on_stdin, when_idle
from coven_core.clock import SystemClock
from coven_core.store.location import prepare_data_dir
from coven_core.tz import tzdb
from coven_desktop import APP_NAME
from coven_desktop.desktop import Desktop
from coven_desktop.instance import InstanceServer, server_name


def announce_threads_and_ready() -> None:
    # A thread being started at this moment has no native id yet: it is not idle work.
    names = {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}
    print("threads", json.dumps(names), flush=True)
    announce_ready()


async def start(desktop: Desktop) -> None:
    """Start, then announce at the first idle moment. Run as a task inside ``run_forever``:
    qasync 0.28's ``run_until_complete`` processes events once more after clearing the running
    loop, so a task step that lands then (the startup pass's catch-up, say) fails with "no
    running event loop"."""
    try:
        await desktop.start()
    except Exception:
        traceback.print_exc()
        QApplication.exit(1)
        return
    when_idle(announce_threads_and_ready)


def main(argv: list[str]) -> int:
    if "--as-if-tray" in argv:
        QSystemTrayIcon.isSystemTrayAvailable = staticmethod(lambda: True)  # type: ignore[method-assign]
    tzdb.activate()
    data_dir = prepare_data_dir(Path(argv[0]))
    app = QApplication(sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    desktop = Desktop(data_dir, SystemClock())
    instance = InstanceServer(server_name(data_dir), desktop)
    stdin = quit_on_stdin(desktop.quit)
    with loop:
        started = loop.create_task(start(desktop))
        code = loop.run_forever()  # until Desktop.quit() (or a failed start) quits
    stdin.setEnabled(False)
    instance.close()
    return code if started.done() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
