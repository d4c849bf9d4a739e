"""What in the data directory is not private: every file Coven writes there is 0600 and every
folder 0700, whatever the umask (DESIGN §13); doctor reports what is looser."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

#: Group and other bits: none may be set on anything in the data directory.
OTHERS = 0o077


class LooseEntry(NamedTuple):
    """A file or folder that someone other than its owner may read, write or enter."""

    path: Path
    mode: int
    is_dir: bool

    @property
    def fix(self) -> str:
        return f"chmod {700 if self.is_dir else 600} {self.path}"


def loose_entries(root: Path) -> Iterator[LooseEntry]:
    """Every entry under ``root`` (itself included) with a group or other bit, in walk order.

    Symbolic links are not followed and not judged (their own mode means nothing on Linux);
    what cannot be read is skipped: the store's checks report an unreadable directory."""
    if os.name != "posix":
        return  # mode bits do not describe access on Windows
    yield from _judge(root)
    for folder, folders, files in os.walk(root, onerror=lambda _error: None):
        for name in (*folders, *files):
            yield from _judge(Path(folder) / name)


def _judge(path: Path) -> Iterator[LooseEntry]:
    try:
        info = path.lstat()
    except OSError:
        return  # gone meanwhile (retention, a finished attempt)
    if stat.S_ISLNK(info.st_mode):
        return
    mode = stat.S_IMODE(info.st_mode)
    if mode & OTHERS:
        yield LooseEntry(path, mode, stat.S_ISDIR(info.st_mode))
