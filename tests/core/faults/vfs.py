"""A SQLite VFS whose writes fail on demand (issue #6, "Store faults").

:class:`FaultVFS` inherits every operation from the default VFS; its files count their writes
and, once armed, raise ``SQLITE_IOERR_WRITE`` or ``SQLITE_FULL`` from ``xWrite`` on the Nth
write to the chosen file (the main database, its write-ahead log, or either), and — when
``sticky`` — on every write after that until :meth:`FaultVFS.clear`. apsw surfaces these as
``apsw.IOError`` / ``apsw.FullError`` and the connection stays usable (PLATFORM_NOTES).

WAL locks live in shared memory, which a Python VFS cannot fake: a busy store is tested with a
real second connection instead.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

import apsw

FaultKind = Literal["io", "full"]
Target = Literal["db", "wal", "any"]

CODES: dict[FaultKind, int] = {"io": apsw.SQLITE_IOERR_WRITE, "full": apsw.SQLITE_FULL}


@dataclass
class Fault:
    kind: FaultKind
    target: Target
    nth: int  # the first failing write, counted from arming (1: the very next one)
    sticky: bool  # keep failing every later write to the target until cleared
    seen: int = 0  # matching writes since arming
    raised: int = 0


def file_role(filename: str | None) -> str:
    """Which of a store's files this is: ``db``, ``wal``, ``journal`` or ``other``."""
    if not filename:
        return "other"  # a temporary file SQLite opened without a name
    for suffix, role in (("-wal", "wal"), ("-journal", "journal"), ("-shm", "shm")):
        if filename.endswith(suffix):
            return role
    return "db"


class FaultVFS(apsw.VFS):
    """Register under ``name``; open a connection with ``vfs=name``; arm, then clear."""

    def __init__(self, name: str) -> None:
        self.vfs_name = name
        self.fault: Fault | None = None
        self.writes: Counter[str] = Counter()  # every write, by file role
        self.raised = 0  # faults raised since registration
        self._lock = threading.Lock()
        super().__init__(name, "")

    def arm(
        self, kind: FaultKind, *, target: Target = "wal", nth: int = 1, sticky: bool = True
    ) -> None:
        if nth < 1:
            raise ValueError("nth counts from 1")
        with self._lock:
            self.fault = Fault(kind, target, nth, sticky)

    def clear(self) -> None:
        with self._lock:
            self.fault = None

    def xOpen(self, name: object, flags: list[int]) -> FaultFile:
        return FaultFile(self, name, flags)

    def on_write(self, role: str) -> None:
        """Count a write; raise the armed fault if this is the one."""
        with self._lock:
            self.writes[role] += 1
            code = self._due(role)
        if code is not None:
            raise apsw.exception_for(code)

    def _due(self, role: str) -> int | None:
        fault = self.fault
        if fault is None or (fault.target != "any" and fault.target != role):
            return None
        fault.seen += 1
        if fault.seen < fault.nth or (fault.seen > fault.nth and not fault.sticky):
            return None
        fault.raised += 1
        self.raised += 1
        return CODES[fault.kind]


class FaultFile(apsw.VFSFile):
    def __init__(self, vfs: FaultVFS, name: object, flags: list[int]) -> None:
        self._vfs = vfs
        filename = name.filename() if hasattr(name, "filename") else name
        self.role = file_role(filename if isinstance(filename, str) else None)
        super().__init__("", name, flags)

    def xWrite(self, data: bytes, offset: int) -> None:
        if self.role in ("db", "wal"):
            self._vfs.on_write(self.role)
        super().xWrite(data, offset)


_names = itertools.count()


@contextmanager
def registered_vfs() -> Iterator[FaultVFS]:
    """A fault VFS under a name of its own (unarmed), unregistered afterwards: a fixture body."""
    built = FaultVFS(f"coven-faults-{os.getpid()}-{next(_names)}")
    try:
        yield built
    finally:
        built.clear()
        built.unregister()
