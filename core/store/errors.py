"""Store errors: the environment's fault versus our bug, mapped from apsw's exceptions.

The split follows qutebrowser's ``misc/sql.py``: a full disk, an I/O error or a busy store is the
environment's fault (:class:`StoreEnvironmentError`: shown to the user, retried where
``transient``, and the engine keeps going); a constraint violation or bad SQL is our bug
(:class:`StoreBug`: a crash report).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Literal, get_args

import apsw

from coven_core.errors import CovenError

StoreErrorKind = Literal[
    "busy", "locked", "full", "io", "readonly", "cantopen", "corrupt", "notadb", "nomem"
]
"""What kind of environmental failure a :class:`StoreEnvironmentError` is."""

STORE_ERROR_KINDS: frozenset[str] = frozenset(get_args(StoreErrorKind))

TRANSIENT_KINDS: frozenset[StoreErrorKind] = frozenset({"busy", "locked", "io"})
"""Kinds worth retrying: the same statement may succeed a moment later."""


class StoreError(CovenError):
    """Base class for every error the store raises."""


class StoreEnvironmentError(StoreError):
    """The environment's fault (disk full, I/O error, busy store): report it, keep going.

    ``transient`` is true where retrying the same work soon is safe and may succeed.
    """

    def __init__(self, message: str, kind: StoreErrorKind) -> None:
        super().__init__(message)
        self.kind: StoreErrorKind = kind
        self.transient: bool = kind in TRANSIENT_KINDS


class StoreBug(StoreError):
    """Our bug: a constraint violation, bad SQL or API misuse. Worth a crash report."""


class StoreLocationError(StoreError):
    """The data directory or store file is unsafe or unusable (link, permissions, network fs)."""


class ForeignFileError(StoreError):
    """The file at the store's path is not a Coven store; it was left untouched."""


class NoStoreError(StoreError):
    """A command that only reads found no store: it says so and creates nothing."""


class SchemaTooNewError(StoreError):
    """The store was written by a newer Coven whose schema this version cannot use."""


# Environmental apsw errors: the kind and what the user reads. Order matters only for
# subclasses, and apsw's error classes are all direct children of apsw.Error.
_ENVIRONMENT: tuple[tuple[type[apsw.Error], StoreErrorKind, str], ...] = (
    (apsw.BusyError, "busy", "the store is busy: another Coven process holds the write lock"),
    (
        apsw.ProtocolError,
        "busy",
        "the store's file locking failed under contention (is it on a network filesystem?)",
    ),
    (apsw.LockedError, "locked", "the store is locked by another connection in this process"),
    (apsw.FullError, "full", "the disk is full; free some space and Coven will carry on"),
    (apsw.IOError, "io", "a disk input/output error occurred while using the store"),
    (
        apsw.ReadOnlyError,
        "readonly",
        "the store cannot be written (read-only file, directory or filesystem)",
    ),
    (
        apsw.CantOpenError,
        "cantopen",
        "the store file cannot be opened (missing directory or no permission)",
    ),
    (
        apsw.PermissionsError,
        "cantopen",
        "the store file cannot be opened with the access it needs (permission denied)",
    ),
    (apsw.CorruptError, "corrupt", "the store file is damaged; run `coven doctor`"),
    (apsw.NotADBError, "notadb", "the store file is not a SQLite database (or is encrypted)"),
    (apsw.NoMemError, "nomem", "SQLite ran out of memory"),
)

# Extended result codes that say more than their primary code's message.
_EXTENDED: dict[int, str] = {
    apsw.SQLITE_BUSY_RECOVERY: "the store is busy: another process is recovering its journal",
    apsw.SQLITE_BUSY_SNAPSHOT: "the store changed under a read transaction that tried to write",
    apsw.SQLITE_READONLY_DBMOVED: "the store file was moved or deleted while Coven had it open",
    apsw.SQLITE_READONLY_DIRECTORY: "the store's directory is not writable",
    apsw.SQLITE_CANTOPEN_ISDIR: "the store path is a directory, not a file",
    apsw.SQLITE_IOERR_NOMEM: "SQLite ran out of memory",
}

# Extended codes whose primary code names another kind: SQLite cannot size the shared-memory
# file (``-shm``) that even a read needs when the disk is full, and says "disk I/O error".
_EXTENDED_KIND: dict[int, tuple[StoreErrorKind, str]] = {
    apsw.SQLITE_IOERR_SHMSIZE: (
        "full",
        "the disk is full (no room for the store's shared-memory file); free some space "
        "and Coven will carry on",
    ),
}


def classify(exc: BaseException, *, path: Path | str | None = None) -> StoreError:
    """Map ``exc`` (usually an apsw error) to a :class:`StoreError` with a human message.

    A :class:`StoreError` is returned unchanged. Anything else becomes :class:`StoreBug`. The
    original is kept as ``__cause__``; ``path``, when given, names the store in the message.
    """
    if isinstance(exc, StoreError):
        return exc
    error = _classify_new(exc, path)
    error.__cause__ = exc
    return error


def _classify_new(exc: BaseException, path: Path | str | None) -> StoreError:
    if _extended_code(exc) in _EXTENDED_KIND:
        kind, problem = _EXTENDED_KIND[_extended_code(exc)]
        return StoreEnvironmentError(_message(problem, exc, path), kind)
    for cls, kind, problem in _ENVIRONMENT:
        if isinstance(exc, cls):
            problem = _EXTENDED.get(_extended_code(exc), problem)
            return StoreEnvironmentError(_message(problem, exc, path), kind)
    problem = "internal store error (a bug in Coven, please report it)"
    return StoreBug(_message(problem, exc, path, name_class=True))


def _extended_code(exc: BaseException) -> int:
    code = getattr(exc, "extendedresult", None)
    return code if isinstance(code, int) else -1


def _message(
    problem: str, exc: BaseException, path: Path | str | None, *, name_class: bool = False
) -> str:
    detail = str(exc)
    if name_class:
        detail = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    text = f"{path}: {problem}" if path is not None else problem
    return f"{text} (SQLite: {detail})" if detail else text


@contextlib.contextmanager
def translate_errors(*, path: Path | str | None = None) -> Iterator[None]:
    """Re-raise apsw errors raised inside the block as their classified :class:`StoreError`.

    Errors that are not apsw's (a :class:`StoreError` included) pass through untouched.
    """
    try:
        yield
    except apsw.Error as exc:
        raise classify(exc, path=path) from exc
