"""``coven-desktop``: start the tray app, or hand over to the one already running."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
from collections.abc import Sequence

import qasync
from PySide6.QtWidgets import QApplication

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
        print(f"coven-desktop: {error}", file=sys.stderr)
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
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    desktop = Desktop(data_dir, default_clock())  # type: ignore[arg-type]
    instance = InstanceServer(name, desktop)
    instance.activated.connect(lambda _arguments: desktop.show_window())
    with loop:
        loop.run_until_complete(_serve(app, desktop, quit_after_ready=quit_after_ready))
    instance.close()
    return 0


async def _serve(app: QApplication, desktop: Desktop, *, quit_after_ready: bool) -> None:
    """Start, then run until quit, in one run of the loop: a task the start left behind
    would otherwise take its next step between two runs, where there is no running loop."""
    stop_requested = _on_stop_signals(asyncio.get_running_loop())
    await desktop.start()
    if quit_after_ready:
        print(json.dumps(readiness(desktop)), flush=True)
        await desktop.close()
        return
    await _until_quit(app, desktop, stop_requested)


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


def _on_stop_signals(loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
    """A future that any of the engine's ``STOP_SIGNALS`` resolves.

    Through the loop's ``add_signal_handler``: a plain ``signal.signal`` handler runs only when
    the interpreter gets control, which an idle Qt event loop may not give it for a long time;
    the loop's handler writes to a wakeup fd that qasync watches, so the loop wakes at once.
    The loop removes the handlers when it closes.
    """
    requested: asyncio.Future[None] = loop.create_future()
    for name in STOP_SIGNALS:  # each acts as Quit
        loop.add_signal_handler(getattr(signal, name), _stop_requested, requested, name)
    return requested


def _stop_requested(requested: asyncio.Future[None], name: str) -> None:
    log.info("%s received: quitting", name)
    if not requested.done():
        requested.set_result(None)


async def _until_quit(
    app: QApplication, desktop: Desktop, stop_requested: asyncio.Future[None]
) -> None:
    """Until Quit (the tray's, or a stop signal's, which does the same)."""
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def finish() -> None:
        if not done.done():
            done.set_result(None)

    app.aboutToQuit.connect(finish)
    await asyncio.wait([done, stop_requested], return_when=asyncio.FIRST_COMPLETED)
    if not done.done():
        # Drains (bounded, off the GUI thread), closes the store; app.quit() ends the wait.
        await desktop.quit()
        await done


if __name__ == "__main__":
    sys.exit(main())
