"""Render every page of the main window, over the demo store, to PNG files (offscreen).

Every page in :data:`coven_desktop.windows.PAGES` becomes ``<key>.png``; then the extra
states in :data:`coven_desktop.demo.windows.EXTRA_WINDOWS`, as ``<name>.png``; then the tray
(:data:`coven_desktop.demo.tray.TRAY_PICTURES`).
"""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, QLocale
from PySide6.QtWidgets import QWidget

from coven_core.clock import VirtualClock
from coven_desktop.demo.runtime import PictureRuntime, private_root
from coven_desktop.demo.tray import render_tray
from coven_desktop.demo.windows import EXTRA_WINDOWS
from coven_desktop.desktop import Desktop
from coven_desktop.windows import PAGES

WINDOW_SIZE = (1000, 700)  # the size every page must fit (issue #22)


async def render_pages(
    data_dir: Path, now_clock: VirtualClock, out: Path, locale: str
) -> list[Path]:
    """Start the app on ``data_dir`` at the demo's instant, draw each page, stop the app."""
    clock = VirtualClock(now_clock.now_utc(), autojump=False)
    QLocale.setDefault(QLocale(locale))
    root = private_root(data_dir)
    desktop = Desktop(data_dir, clock, runtime_factory=lambda _store: PictureRuntime(clock, root))
    desktop.locale = locale
    first_pass = _first_pass(desktop)
    await desktop.start()
    await asyncio.wait_for(first_pass, 60)  # the app leads (not standby) before it is drawn
    await desktop.refresh()
    desktop.window.resize(*WINDOW_SIZE)
    desktop.window.show()
    out.mkdir(parents=True, exist_ok=True)
    try:
        written, extras = [], []
        for info in PAGES:
            page = desktop.window.show_page(info.key)
            await _settle(desktop, page)
            written.append(_save(desktop.window, out / f"{info.key}.png"))
            extras += [(page, name, make) for name, make in EXTRA_WINDOWS.get(info.key, ())]
        for page, name, make in extras:
            desktop.window.show_page(_key_of(desktop, page))
            widget = make(page)
            widget = await widget if inspect.isawaitable(widget) else widget
            await _settle(desktop, page)
            written.append(_save(widget, out / f"{name}.png"))
        return written + render_tray(desktop, out)
    finally:
        await desktop.close(5)
        desktop.deleteLater()


def _first_pass(desktop: Desktop) -> asyncio.Future[object]:
    """Resolved by the app's scheduler's first pass (connected before it can happen)."""
    done: asyncio.Future[object] = asyncio.get_running_loop().create_future()

    def seen(report: object) -> None:
        if not done.done():
            done.set_result(report)

    desktop.service.passFinished.connect(seen)
    return done


def _key_of(desktop: Desktop, page: QWidget | None) -> str:
    return next(key for key, built in desktop.window.pages.items() if built is page)


async def _settle(desktop: Desktop, page: QWidget | None) -> None:
    await desktop.window.settle()
    await desktop.settle()  # first: its refreshes can start a page's reload…
    settle = getattr(page, "settle", None)
    if settle is not None:
        await settle()  # …which must be done before the layouts below
    # Layouts and geometry before the grab. Only layout requests: a full processEvents()
    # inside this coroutine would also run the loop's callbacks re-entrantly, and a task
    # woken there ("Cannot enter into task …") — news that arrived meanwhile — never ends.
    QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)


def _save(widget: QWidget, path: Path) -> Path:
    image = widget.grab()
    if image.isNull() or not image.save(str(path), "PNG"):
        raise OSError(f"could not write {path}")
    return path
