"""The one connection factory: every connection to the store gets the same pragmas.

Like ``apsw.bestpractice``, but explicit and checked: WAL (verified), ``synchronous=FULL``,
foreign keys on, untrusted schema, no double-quoted string literals, a 5 s busy timeout, and
the log checkpointed after COMMIT rather than inside it (:mod:`coven_core.store.wal`). A file
that is not a Coven store is refused before anything is written to it, and a new store file and
its ``-wal``/``-shm`` companions are private (0600) from the start.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import apsw

from coven_core.notation.i18n import N_, _
from coven_core.store import wal
from coven_core.store.errors import (
    ForeignFileError,
    StoreBug,
    StoreEnvironmentError,
    classify,
    translate_errors,
)

BUSY_TIMEOUT_MS = 5000
"""How long a statement waits for another connection's lock before raising ``busy``."""

SQLITE_HEADER = b"SQLite format 3\x00"

_FILE_MODE = 0o600
_COMPANION_SUFFIXES = ("-wal", "-shm")
_MOVE_AWAY = N_("nothing was changed. Move it away or choose another --data-dir.")


def open_connection(
    path: Path,
    *,
    readonly: bool = False,
    vfs: str | None = None,
    application_id: int | None = None,
) -> apsw.Connection:
    """Open the store at ``path`` with Coven's pragmas; create it (0600) if missing.

    A non-empty file without the SQLite header raises :class:`ForeignFileError` untouched. With
    ``application_id``, :func:`foreign_database_check` runs *before* the first write (switching
    to WAL rewrites the header), so another application's database is refused unchanged; pass
    it whenever the file may be foreign. ``vfs`` names an apsw VFS (fault-injection tests).
    Call :func:`~coven_core.store.location.check_store_file` first for an existing file.
    """
    _refuse_non_sqlite_file(path)
    with _private_umask(), translate_errors(path=path):
        is_new = not readonly and _create_private_file(path)
        conn = _connect(path, readonly=readonly, vfs=vfs)
        try:
            _configure(conn, path, readonly=readonly, application_id=application_id)
        except BaseException:
            conn.close()
            raise
    if is_new:
        _make_private(path)
    return conn


def foreign_database_check(conn: apsw.Connection, application_id: int) -> None:
    """Refuse a database that belongs to another application; writes nothing.

    ``PRAGMA application_id`` must be ``application_id``, or 0 on a database with no schema yet
    (a new store). Anything else is :class:`ForeignFileError`.
    """
    with translate_errors(path=conn.filename):
        found = int(conn.pragma("application_id"))
        if found == application_id:
            return
        if found == 0 and not _has_schema(conn):
            return
    raise ForeignFileError(
        _("{path} is another application's SQLite database (application_id {id}); {then}").format(
            path=conn.filename, id=f"{found:#x}", then=_(_MOVE_AWAY)
        )
    )


def write_transaction(conn: apsw.Connection) -> AbstractContextManager[apsw.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, or ``ROLLBACK`` if the block raises.

    The write lock is taken at ``BEGIN``, so a busy store fails there (after the busy timeout)
    rather than halfway through. apsw errors come out as :class:`StoreError`; an error means
    the transaction did not commit (the log is checkpointed afterwards, where a failure
    cannot be mistaken for the commit's: :mod:`coven_core.store.wal`). Never hold a write
    transaction across a wait on a process or on the disk of a command (DESIGN §11): every
    other writer, the scheduler included, waits for it.
    """
    return _WriteTransaction(conn)


class _WriteTransaction:
    """:func:`write_transaction`. A class, not a generator: every scheduler pass opens one or
    two, and a generator-based context manager (two of them, with ``translate_errors``) costs
    several times as much to enter and leave."""

    __slots__ = ("_conn",)

    def __init__(self, conn: apsw.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> apsw.Connection:
        conn = self._conn
        if conn.in_transaction:
            raise StoreBug("write_transaction: a transaction is already open on this connection")
        try:
            conn.execute("BEGIN IMMEDIATE")
        except apsw.Error as exc:
            raise classify(exc, path=conn.filename) from exc
        return conn

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, _tb: object
    ) -> None:
        conn = self._conn
        if error is None:
            try:
                conn.execute("COMMIT")
            except BaseException as exc:
                _roll_back(conn, exc)
                raise
            wal.after_commit(conn)  # outside the transaction: its failure cannot unsay it
            return
        _roll_back(conn, error)  # the block's own error goes on, classified if apsw's


def _roll_back(conn: apsw.Connection, error: BaseException) -> None:
    """Roll back after ``error``; if it is apsw's, raise it classified instead."""
    _rollback_keeping(conn, error)
    if isinstance(error, apsw.Error):
        raise classify(error, path=conn.filename) from error


def _refuse_non_sqlite_file(path: Path) -> None:
    """Read the header only: a file that is not SQLite must not be opened by SQLite at all."""
    try:
        with open(path, "rb") as file:
            header = file.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return
    except IsADirectoryError as exc:
        raise ForeignFileError(
            _("{path} is a directory, not a Coven store; {then}").format(
                path=path, then=_(_MOVE_AWAY)
            )
        ) from exc
    except OSError as exc:
        raise StoreEnvironmentError(
            _("{path}: the store file cannot be read ({reason})").format(
                path=path, reason=exc.strerror or exc
            ),
            "cantopen",
        ) from exc
    if header and header != SQLITE_HEADER:
        raise ForeignFileError(
            _("{path} is not a Coven store (not a SQLite database); {then}").format(
                path=path, then=_(_MOVE_AWAY)
            )
        )


@contextlib.contextmanager
def _private_umask() -> Iterator[None]:
    """Files SQLite creates meanwhile (-wal, -shm) start 0600.

    The umask is process-wide: another thread creating a file meanwhile gets it too, which
    only makes that file more private.
    """
    previous = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(previous)


def _create_private_file(path: Path) -> bool:
    """Create an empty store file 0600 (SQLite's default is 0644); False if one exists."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _FILE_MODE)
    except FileExistsError:
        return False
    except OSError as exc:
        raise StoreEnvironmentError(
            _("{path}: the store file cannot be created ({reason}). Choose a writable "
              "directory with --data-dir.").format(path=path, reason=exc.strerror or exc),
            "cantopen",
        ) from exc  # fmt: skip
    os.close(descriptor)
    return True


def _connect(path: Path, *, readonly: bool, vfs: str | None) -> apsw.Connection:
    if readonly:
        flags = apsw.SQLITE_OPEN_READONLY
    else:
        flags = apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    return wal.StoreConnection(str(path), flags=flags, vfs=vfs)


def _configure(
    conn: apsw.Connection, path: Path, *, readonly: bool, application_id: int | None
) -> None:
    """Each pragma is its own statement: one that returns a row would end a batch."""
    conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    _disable_double_quoted_strings(conn)
    _plan_without_bound_values(conn)
    conn.pragma("trusted_schema", "OFF")
    conn.pragma("foreign_keys", "ON")
    if application_id is not None:
        foreign_database_check(conn, application_id)
    if not readonly:
        _enable_wal(conn, path)
    conn.pragma("synchronous", "FULL")
    conn.pragma("user_version")  # a first read: SQLite creates -wal and -shm now


def _disable_double_quoted_strings(conn: apsw.Connection) -> None:
    for option in ("SQLITE_DBCONFIG_DQS_DML", "SQLITE_DBCONFIG_DQS_DDL"):
        code = getattr(apsw, option, None)
        if isinstance(code, int):
            conn.config(code, 0)


def _plan_without_bound_values(conn: apsw.Connection) -> None:
    """The query planner's stability guarantee: a statement's plan never depends on the values
    bound to it, so apsw's cached prepared statements stay prepared.

    Without it SQLite compares bound values against the conditions of partial indexes while
    planning, and a statement whose plan looked at one is re-prepared whenever that parameter
    is bound again — on every execution. Most of the scheduler's joins over ``occurrences``
    were: several times their cost, a third of a pass's CPU (issue #9; bench_bookkeeping's
    row "CPU (user + system) per occurrence"). The price: a partial index is used only where
    its condition is written in the query as a literal (``state = 'planned'``, never
    ``state = ?``), which is how the store's queries are written.
    """
    conn.config(apsw.SQLITE_DBCONFIG_ENABLE_QPSG, 1)


def _enable_wal(conn: apsw.Connection, path: Path) -> None:
    mode = str(conn.pragma("journal_mode", "wal")).lower()
    if mode != "wal":
        raise StoreEnvironmentError(
            _("{path}: the store could not be switched to write-ahead logging (SQLite kept "
              "journal mode {mode}); the filesystem may not support shared memory. Use a "
              "local directory with --data-dir.").format(path=path, mode=repr(mode)),
            "cantopen",
        )  # fmt: skip


def _make_private(path: Path) -> None:
    """Belt and braces after the umask: state 0600 on the store and whichever companions exist."""
    os.chmod(path, _FILE_MODE)
    for suffix in _COMPANION_SUFFIXES:
        with contextlib.suppress(FileNotFoundError):
            os.chmod(path.with_name(path.name + suffix), _FILE_MODE)


def _has_schema(conn: apsw.Connection) -> bool:
    return bool(conn.execute("SELECT count(*) FROM sqlite_schema").get)


def _rollback_keeping(conn: apsw.Connection, original: BaseException) -> None:
    """Roll back; a failing rollback is noted on the original error, which stays the error."""
    if not conn.in_transaction:
        return  # SQLite already rolled back (e.g. after a full disk)
    try:
        conn.execute("ROLLBACK")
    except apsw.Error as exc:
        original.add_note(f"the rollback failed too: {exc!r}")
