"""``python -m coven_desktop.demo --out DIR [--locale de_DE] [--zone Europe/Berlin]
[--palette dark] [--scale 2]``.

Builds the demo store in a temporary data directory (on a RAM disk when there is one: the
store fsyncs every commit), renders every page to ``DIR/<page>.png`` offscreen, and removes
the store again (``--keep-store`` keeps it and prints where).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path


def _arguments(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m coven_desktop.demo",
        description="Render Coven Desktop's windows to PNG files.",
    )
    parser.add_argument("--out", required=True, type=Path, help="where the PNG files go")
    parser.add_argument("--locale", default="en_US", help="the locale dates are written in")
    parser.add_argument(
        "--zone", default="Europe/Berlin", help="the machine's time zone in the pictures (IANA key)"
    )
    parser.add_argument("--palette", choices=("light", "dark"), default="light",
                        help="draw under Qt's own (light) palette or a dark one")  # fmt: skip
    parser.add_argument("--scale", type=float, default=1.0,
                        help="device pixel ratio, e.g. 2 for a high-density screen")  # fmt: skip
    parser.add_argument("--keep-store", action="store_true", help="keep the demo store")
    return parser.parse_args(list(argv))


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(sys.argv[1:] if argv is None else argv)
    os.environ["QT_QPA_PLATFORM"] = "offscreen"  # files, never a display
    os.environ["TZ"] = args.zone
    os.environ["QT_SCALE_FACTOR"] = str(args.scale)  # offscreen draws at this pixel ratio
    time.tzset()
    import qasync
    from PySide6.QtCore import qInstallMessageHandler
    from PySide6.QtWidgets import QApplication

    from coven_core.tz import tzdb
    from coven_desktop.demo.history import build
    from coven_desktop.demo.render import render_pages

    tzdb.activate()
    scratch = Path(tempfile.mkdtemp(prefix="coven-demo-", dir=_ram_disk()))
    data_dir = scratch / "data"
    qInstallMessageHandler(_quiet_offscreen)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    if args.palette == "dark":
        from coven_desktop.demo.attention import dark_palette

        QApplication.setStyle("Fusion")  # a dark palette's style on every platform
        QApplication.setPalette(dark_palette())
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        clock = build(data_dir)
        with loop:
            written = loop.run_until_complete(render_pages(data_dir, clock, args.out, args.locale))
    finally:
        if args.keep_store:
            print(f"demo store: {data_dir}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    for path in written:
        print(path)
    return 0


def _quiet_offscreen(_kind: object, _context: object, message: str) -> None:
    """The offscreen platform says what it cannot do (raise a window, size hints): noise
    here. Everything else Qt says is printed."""
    if not message.startswith("This plugin does not support"):
        print(message, file=sys.stderr)


def _ram_disk() -> str | None:
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


if __name__ == "__main__":
    sys.exit(main())
