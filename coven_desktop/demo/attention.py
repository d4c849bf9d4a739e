"""The Needs attention page with a command that still runs, and the Quarantine page after a
failed probe, drawn at 1000×700 in a light and a dark palette (issues #21, #22):
``python -m coven_desktop.demo.attention --out DIR [--locale de_DE]``.

The demo store runs nothing, so this scene makes its own: a fresh store and a real runner,
killed while its command (``sleep``) runs on — a run that awaits a decision while its
command lives, as a crash leaves it. It draws the page in amber, stops the command through
the page, and draws the page and the confirmation again; then a quarantined routine whose
probe fails. :func:`leave_awaiting` is how the tests make that run too.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from coven_core.clock import VirtualClock
from coven_core.events import Event, EventKind
from coven_core.model import RevisionSpec
from coven_core.operator import Outcome
from coven_core.queries import _
from coven_core.runner.journal import read_journal
from coven_core.views.inspection import inspect
from coven_desktop.demo.render import _save, _settle
from coven_desktop.desktop import Desktop

SIZE = (1000, 700)
#: The scene's backup: it says what it copies, then runs on as ``sleep``.
BACKUP = ("/bin/sh", "-c", 'echo "copying 1 of 3: /home/ada/Photos -> /mnt/backup"; '
          "exec sleep 300")  # fmt: skip
#: A probe that fails the way the routine kept failing.
FETCH_MAIL = ("/bin/sh", "-c", 'echo "fetchmail: Authorization failure on ada@mail.example.org" '
              ">&2; exit 1")  # fmt: skip


def dark_palette() -> QPalette:
    """A dark palette as a desktop's dark theme sets it (for Fusion): hard-coded colours in
    a page show up at once."""
    palette, role = QPalette(), QPalette.ColorRole
    colours = {
        role.Window: "#2b2b2b", role.WindowText: "#e6e6e6", role.Base: "#1e1e1e",
        role.AlternateBase: "#262626", role.Text: "#e6e6e6", role.Button: "#353535",
        role.ButtonText: "#e6e6e6", role.ToolTipBase: "#353535", role.ToolTipText: "#e6e6e6",
        role.Highlight: "#3d7ab8", role.HighlightedText: "#ffffff",
        role.PlaceholderText: "#8a8a8a", role.Light: "#4a4a4a", role.Mid: "#3a3a3a",
        role.Dark: "#1a1a1a", role.Link: "#7fb3ff",
    }  # fmt: skip
    for which, name in colours.items():
        palette.setColor(which, QColor(name))
    for which in (role.WindowText, role.Text, role.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, which, QColor("#7a7a7a"))
    return palette


# -- a run that awaits a decision while its command lives ------------------------------------
async def leave_awaiting(desktop: Desktop, routine: str, argv: Sequence[str]) -> str:
    """Add ``routine``, run it, and kill its runner once the command has written its first
    line: the run awaits a decision while the command runs on. Its run id."""
    spec = RevisionSpec(schedule="@yearly", timezone="UTC", argv=tuple(argv))
    await desktop.service.call(lambda e: e.operator.add_routine(routine, spec))
    started = next_event(desktop, lambda e: e.kind is EventKind.STARTED)  # listen first
    ref = await desktop.service.call(lambda e: e.operator.run_now(routine))
    await started
    attempt = (await desktop.service.call(lambda e: inspect(e.store, ref.run_id)))["attempts"][0]
    directory = Path(attempt["attempt_dir"])
    await journaled(directory / "journal.jsonl", '"event":"spawned"')
    # and its first line captured, the evidence the page shows: the runner copies output in
    # its waits, and one killed the moment it journaled the spawn may not have copied any yet
    await journaled(directory / "stdout", "\n")
    settled = next_event(desktop, lambda e: e.kind is EventKind.SETTLED)
    os.kill(attempt["runner_pid"], signal.SIGKILL)  # the runner dies; its command does not
    event = await settled
    assert event.data["disposition"] == "recovery_required", event.data
    await desktop.refresh()
    return str(ref.run_id)


def next_event(
    desktop: Desktop, matches: Callable[[Event], bool], timeout: float = 20.0
) -> asyncio.Future[Event]:
    """The next engine event that ``matches``, from the bridge's signal (never a fixed wait);
    listening from now."""
    found: asyncio.Future[Event] = asyncio.get_running_loop().create_future()

    def look(events: list[Event]) -> None:
        for event in events:
            if matches(event) and not found.done():
                found.set_result(event)
                desktop.service.eventsArrived.disconnect(look)

    desktop.service.eventsArrived.connect(look)
    return asyncio.ensure_future(asyncio.wait_for(found, timeout))


async def journaled(path: Path, text: str, timeout: float = 20.0) -> None:
    """Until the runner has written ``text`` to ``path``: its files are the only news of the
    spawn and the output."""
    deadline = time.monotonic() + timeout
    while not path.exists() or text not in path.read_text(encoding="utf-8"):
        assert time.monotonic() < deadline, f"no {text!r} in {path}"
        await asyncio.sleep(0.02)  # real time: a real runner process writes these files


# -- the scene --------------------------------------------------------------------------------
async def render_attention(data_dir: Path, out: Path, locale: str) -> list[Path]:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setStyle("Fusion")  # the style that draws any palette as given
    palettes = {"light": app.style().standardPalette(), "dark": dark_palette()}
    clock = VirtualClock(datetime.now(UTC).replace(microsecond=0), autojump=False)
    desktop = Desktop(data_dir, clock)
    desktop.locale = locale
    await desktop.start()
    out.mkdir(parents=True, exist_ok=True)
    try:
        await leave_awaiting(desktop, "backup", BACKUP)
        return await _draw(desktop, palettes, out)
    finally:
        await desktop.close(5)
        desktop.deleteLater()
        app.setPalette(palettes["light"])


async def _draw(desktop: Desktop, palettes: dict[str, QPalette], out: Path) -> list[Path]:
    window = desktop.window
    window.resize(*SIZE)
    window.show()
    page = window.show_page("reconciliation")
    tabs = page.evidence  # type: ignore[union-attr]
    written = await _in_palettes(desktop, page, palettes, out, "attention-live", window)
    tabs.setCurrentIndex(1)
    written += await _in_palettes(desktop, page, palettes, out, "attention-processes", window)
    page.stop()  # type: ignore[union-attr]  # it asks first, as a person answers it:
    _confirm(page.confirmation)  # type: ignore[union-attr]
    await _settle(desktop, page)
    tabs.setCurrentIndex(0)
    written += await _in_palettes(desktop, page, palettes, out, "attention-stopped", window)
    tabs.setCurrentIndex(4)
    written += await _in_palettes(desktop, page, palettes, out, "attention-tried", window)
    page.reason.setText(_("the log ends at 1 of 3; the disk holds a partial copy"))  # type: ignore[union-attr]
    page.failed_button.click()  # type: ignore[union-attr]
    written += await _in_palettes(desktop, page, palettes, out, "attention-confirm",
                                  page.confirmation)  # type: ignore[union-attr]  # fmt: skip
    page.confirmation.reject()  # type: ignore[union-attr]
    await decided(page, page.reason.text())  # type: ignore[union-attr]
    written += await _in_palettes(desktop, page, palettes, out, "attention-decided", window)
    return written + await _failed_probe(desktop, palettes, out)


async def decided(page: Any, reason: str | None = None) -> QWidget:
    """The Needs attention page right after a decision (confirmed as a person confirms it):
    the receipt, its audit entry, and Resume. For the demo's extra pictures too."""
    page.reason.setText(reason or _("the digest was not sent: no mail in the outbox since 09:00"))
    page.decide(Outcome.FAILED)
    _confirm(page.confirmation)
    await page.settle()
    return page.window()  # type: ignore[no-any-return]


def _confirm(box: QMessageBox) -> None:
    """Answer an open question with its own verb, as a person clicks it."""
    yes = next(b for b in box.buttons() if box.buttonRole(b) is QMessageBox.ButtonRole.AcceptRole)
    yes.click()


async def _failed_probe(desktop: Desktop, palettes: dict[str, QPalette], out: Path) -> list[Path]:
    spec = RevisionSpec(schedule="*/15 * * * *", timezone="UTC", argv=FETCH_MAIL)
    await desktop.service.call(lambda e: e.operator.add_routine("fetch-mail", spec))
    await desktop.service.call(
        lambda e: e.operator.quarantine("fetch-mail", "3 consecutive failed occurrences")
    )
    page = desktop.window.show_page("quarantine")
    await _settle(desktop, page)
    settled = next_event(desktop, lambda e: e.kind is EventKind.SETTLED)
    page.probe()  # type: ignore[union-attr]
    await settled
    await _settle(desktop, page)
    await _settle(desktop, page)  # the news, then the page's look at it
    return await _in_palettes(desktop, page, palettes, out, "quarantine-probed", desktop.window)


async def _in_palettes(
    desktop: Desktop,
    page: QWidget | None,
    palettes: dict[str, QPalette],
    out: Path,
    name: str,
    widget: QWidget | None,
) -> list[Path]:
    assert widget is not None
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    written = []
    for look, palette in palettes.items():
        app.setPalette(palette)
        # Only the palette's own news (a full processEvents() here would run the loop's
        # callbacks re-entrantly: see coven_desktop.demo.render._settle).
        QCoreApplication.sendPostedEvents(None, QEvent.Type.ApplicationPaletteChange)
        await _settle(desktop, page)
        written.append(_save(widget, out / f"{name}-{look}.png"))
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coven_desktop.demo.attention")
    parser.add_argument("--out", required=True, type=Path, help="where the PNG files go")
    parser.add_argument("--locale", default="en_US", help="the locale dates are written in")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    import qasync
    from PySide6.QtCore import QLocale

    app = QApplication.instance() or QApplication(sys.argv[:1])
    QLocale.setDefault(QLocale(args.locale))
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    scratch = Path(tempfile.mkdtemp(prefix="coven-attention-"))
    try:
        with loop:
            written = loop.run_until_complete(
                render_attention(scratch / "data", args.out, args.locale)
            )
    finally:
        _stop_leftovers(scratch)
        shutil.rmtree(scratch, ignore_errors=True)
    for path in written:
        print(path)
    return 0


def _stop_leftovers(scratch: Path) -> None:
    """A scene that failed half way may leave its ``sleep`` running: end its group."""
    for journal in scratch.glob("data/**/journal.jsonl"):
        pid = read_journal(journal).command_pid
        if pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(main())
