"""Where warnings go: a rotating log file in the data directory (DESIGN §12, §13).

A tray app started at login has no terminal, so without a file every warning (``pass failed,
retrying``) would be lost. ``coven daemon`` and ``coven-desktop`` each call :func:`start`
once: ``<data dir>/logs/coven.log``, at most :data:`MAX_BYTES` per file and
:data:`BACKUPS` older files, folder 0700 and files 0600 whatever the umask; the daemon also
logs to stderr. What is logged is the engine's own news (passes, warnings, start and stop),
never a routine's environment, arguments or output: those can hold secrets.
"""

from __future__ import annotations

import argparse
import io
import logging
import logging.handlers
import os
import sys
from pathlib import Path

#: The log folder inside the data directory, and the file in it.
FOLDER = "logs"
FILE = "coven.log"
MAX_BYTES = 1024 * 1024
BACKUPS = 3
LEVELS = ("debug", "info", "warning", "error")
DEFAULT_LEVEL = "info"
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def add_level_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``--log-level``, the same on ``coven daemon`` and ``coven-desktop``; ``help_text`` in
    the reader's language (:func:`coven_core.engine.add_log_level_option`: this low layer has
    no catalogue)."""
    parser.add_argument("--log-level", choices=LEVELS, default=DEFAULT_LEVEL, help=help_text)


def log_path(data_dir: Path) -> Path:
    return data_dir / FOLDER / FILE


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating file created 0600: the umask must not make a log readable by others."""

    def _open(self) -> io.TextIOWrapper:
        def private(path: str, flags: int) -> int:
            return os.open(path, flags, 0o600)

        return open(
            self.baseFilename, "a", encoding=self.encoding, errors=self.errors,
            opener=private,
        )  # fmt: skip


def start(data_dir: Path, level: str = DEFAULT_LEVEL, *, stderr: bool = False) -> Path:
    """Send every log record at ``level`` and above to the data directory's log file (and to
    stderr when asked); returns the file. Replaces handlers a previous call installed."""
    folder = data_dir / FOLDER
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)  # mkdir's mode is filtered by the umask
    path = folder / FILE
    handlers: list[logging.Handler] = [
        PrivateRotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8")
    ]
    if stderr:
        handlers.append(logging.StreamHandler(sys.stderr))
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, "_coven", False)]:
        root.removeHandler(handler)
        handler.close()
    for handler in handlers:
        handler.setFormatter(logging.Formatter(_FORMAT))
        handler._coven = True  # type: ignore[attr-defined]  # ours to replace
        root.addHandler(handler)
    root.setLevel(level.upper())
    return path


def recent_lines(data_dir: Path, count: int = 200) -> list[str]:
    """The last ``count`` lines of the current log file (none if there is no file yet)."""
    try:
        with open(log_path(data_dir), "rb") as file:
            file.seek(0, os.SEEK_END)
            start = max(0, file.tell() - count * 400)
            file.seek(start)
            lines = file.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return []
    return lines[1 if start else 0 :][-count:]  # a read from the middle starts mid-line
